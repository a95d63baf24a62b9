"""Routers that learn, fitted once per partition on its train tasks and routing its test tasks.

A fitter is any callable `(train_tasks, test_tasks, seed) -> [Decisions, ...]` (`scoring.fitter.Fitter`)
returning one single-choice decision per test task for each router it fits. Which ones evaluate fits
comes from the registry of router kinds (`fitting.fitters_for`): the learned baselines
(`scoring.baseline_fitter.BaselineFitter`), the local GRPO trainer (`local.fitter.LocalFitter`), with its
default settings or any others, and the IRT router (`irt.fitter.IrtFitter`). Each partition's fits read
that partition's train tasks only. This module runs them over the partitions (`fit_partitions`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from router_train.evaluate.design import Partition
from router_train.evaluate.dial import RouterScores
from router_train.evaluate.forked import fork_map
from router_train.local.fitter import LOCAL_ROUTER_NAME, LocalFitter
from router_train.scoring.baseline_fitter import BaselineFitter
from router_train.scoring.decisions import UNPARSEABLE, Decisions, EvaluateError, SourceKind, from_labels
from router_train.scoring.fitter import Fitter

__all__ = [
    "LOCAL_ROUTER_NAME",
    "BaselineFitter",
    "FittedDecisions",
    "Fitter",
    "LocalFitter",
    "fit_partitions",
]


@dataclass
class FittedDecisions:
    """What every fitter produced over all partitions, per router."""

    kinds: dict[str, SourceKind] = field(default_factory=dict)
    """Router name -> kind, in first-seen order (the report's row order)."""
    picks: dict[str, list[dict[str, str]]] = field(default_factory=dict)
    """Router name -> per repeat (fold seed): instance id -> the model it routed that task to."""
    chosen: dict[str, set[str]] = field(default_factory=dict)
    """Router name -> every model it chose (notes say e.g. which model `cheapest-on-train` was)."""

    def pooled(self, name: str) -> Decisions:
        """All repeats' decisions as one distribution per task (each repeat weighs 1/R)."""
        labels: dict[str, list[str | None]] = {}
        for repeat in self.picks[name]:
            for tid, label in repeat.items():
                labels.setdefault(tid, []).append(_pick(label))
        return from_labels(name, self.kinds[name], labels)

    def by_repeat(self, name: str) -> list[Decisions]:
        """One Decisions per repeat (fold seed), each covering every task once."""
        return [
            from_labels(name, self.kinds[name], {tid: [_pick(label)] for tid, label in repeat.items()})
            for repeat in self.picks[name]
        ]


def _pick(label: str) -> str | None:
    return None if label == UNPARSEABLE else label


def fit_partitions(
    partitions: Sequence[Partition],
    fitters: Sequence[Fitter],
    seed: int,
    *,
    jobs: int = 1,
    progress: bool = False,
    scores: list[list[RouterScores]] | None = None,
) -> FittedDecisions:
    """Fit every fitter on every partition; `jobs` > 1 fits partitions in forked worker processes.

    Checks the invariants the report rests on: no partition routes a task it trains on, each router
    routes every test task, and within a repeat no task is routed twice. `scores`, when given, receives
    per partition the per-model scores of the fitters that give them (a `fit_scored` method: the curves).
    """
    partitions = list(partitions)
    for p in partitions:
        overlap = {t.instance_id for t in p.train} & {t.instance_id for t in p.test}
        if overlap and not p.in_sample:
            raise EvaluateError(f"{p.label}: {len(overlap)} test tasks are also train tasks")
    out = FittedDecisions()
    if not fitters:
        return out

    def fit_one(index: int) -> tuple[list[Decisions], list[RouterScores]]:
        p = partitions[index]
        out: tuple[list[Decisions], list[RouterScores]] = ([], [])
        for fit in fitters:
            scored = getattr(fit, "fit_scored", None) if scores is not None else None
            if scored is None:
                out[0].extend(fit(p.train, p.test, seed))
            else:
                ds, ss = scored(p.train, p.test, seed)
                out[0].extend(ds)
                out[1].extend(ss)
        return out

    results = fork_map(
        fit_one, len(partitions), jobs=jobs, desc="fitting routers", unit="fit", progress=progress
    )
    repeats = max(p.repeat for p in partitions) + 1
    if scores is not None:
        scores.extend(ss for _, ss in results)
    for p, (decisions, _) in zip(partitions, results, strict=True):
        test_ids = {t.instance_id for t in p.test}
        for d in decisions:
            if set(d.choices) != test_ids:
                raise EvaluateError(f"{d.name} did not route exactly the test tasks of {p.label}")
            out.kinds.setdefault(d.name, d.kind)
            per_repeat = out.picks.setdefault(d.name, [{} for _ in range(repeats)])[p.repeat]
            for tid, dist in d.choices.items():
                if tid in per_repeat:
                    raise EvaluateError(f"{d.name} routed {tid} twice in one repeat ({p.label})")
                (label,) = dist  # one single-choice decision per task
                per_repeat[tid] = label
                out.chosen.setdefault(d.name, set()).add(label)
    return out
