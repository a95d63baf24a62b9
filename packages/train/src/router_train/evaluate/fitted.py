"""Routers that learn, fitted once per partition on its train tasks and routing its test tasks.

A fitter is any callable `(train_tasks, test_tasks, seed) -> [Decisions, ...]` returning one
single-choice decision per test task for each router it fits. The built-in ones are the learned
baselines (`baselines.fitted_baselines`) and the local GRPO trainer (`LocalFitter`), with its default
settings or any others. Each partition's fits read that partition's train tasks only: features, idf,
vocabularies, the cheapest model and every other statistic come from them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from router_oracle.table import TaskRecord
from router_train.evaluate.design import Partition
from router_train.evaluate.dial import RouterScores
from router_train.evaluate.forked import fork_map
from router_train.local import LocalTrainConfig
from router_train.local.lockstep import fit_policies
from router_train.local.policy import RouterPolicy
from router_train.local.trainer import fit_policy
from router_train.scoring import baselines
from router_train.scoring.baseline_scores import fitted_baselines_scored
from router_train.scoring.decisions import UNPARSEABLE, Decisions, EvaluateError, SourceKind, from_labels

Fitter = Callable[[Sequence[TaskRecord], Sequence[TaskRecord], int], list[Decisions]]
"""(train tasks, test tasks, seed) -> one Decisions per router it fits, covering every test task."""

LOCAL_ROUTER_NAME = "local-grpo"
"""Row name of the local GRPO trainer with its default settings."""


@dataclass(frozen=True)
class BaselineFitter:
    """The learned baselines (cheapest on train, TF-IDF logistic regressions, TF-IDF kNN)."""

    pool: list[str]
    """Pool model ids."""

    def __call__(self, train: Sequence[TaskRecord], test: Sequence[TaskRecord], seed: int) -> list[Decisions]:
        return baselines.fitted_baselines(train, test, self.pool, seed)

    def fit_scored(
        self, train: Sequence[TaskRecord], test: Sequence[TaskRecord], seed: int
    ) -> tuple[list[Decisions], list[RouterScores]]:
        """The same decisions, and the text classifiers' per-model scores (their cost dial)."""
        return fitted_baselines_scored(train, test, self.pool, seed)


@dataclass(frozen=True)
class LocalFitter:
    """The local GRPO trainer (`router-train local`) with one configuration, trained per partition."""

    name: str
    """Row name (`local-grpo` for the defaults)."""
    config: LocalTrainConfig
    """Its configuration (table, split and output options are ignored: the partition decides)."""
    pool: list[str]
    """Pool model ids."""

    def __call__(self, train: Sequence[TaskRecord], test: Sequence[TaskRecord], seed: int) -> list[Decisions]:
        return self.fit_scored(train, test, seed)[0]

    def fit_scored(
        self, train: Sequence[TaskRecord], test: Sequence[TaskRecord], seed: int
    ) -> tuple[list[Decisions], list[RouterScores]]:
        """Its decisions, and the policy's logits on the train and test tasks (its cost dial)."""
        return self._decide(fit_policy(self.config, train, self.pool).policy, train, test)

    def fit_scored_many(
        self, folds: Sequence[tuple[Sequence[TaskRecord], Sequence[TaskRecord]]]
    ) -> list[tuple[list[Decisions], list[RouterScores]]]:
        """`fit_scored(train, test, seed)` of each (train, test), with the trainings of all folds run in
        lockstep (`local.lockstep.fit_policies`: the same policies, bitwise)."""
        policies = fit_policies(self.config, [train for train, _ in folds], self.pool)
        return [self._decide(p, train, test) for p, (train, test) in zip(policies, folds, strict=True)]

    def _decide(
        self, policy: RouterPolicy, train: Sequence[TaskRecord], test: Sequence[TaskRecord]
    ) -> tuple[list[Decisions], list[RouterScores]]:
        routes = policy.route(list(test))
        picks: dict[str, list[str | None]] = {t.instance_id: [r] for t, r in zip(test, routes, strict=True)}
        scores = RouterScores(
            self.name, list(self.pool), policy.logits(list(train)), policy.logits(list(test))
        )
        return [from_labels(self.name, "local", picks)], [scores]


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
