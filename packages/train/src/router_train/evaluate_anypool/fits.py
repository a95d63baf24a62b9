"""Every fit of the protocol, in forked workers: one any-pool router per (task partition, held-out
group), one set of fixed-pool routers per (task partition, distinct evaluation pool).

- The any-pool router (`anypool.train_any_pool`) trains on the partition's train tasks with pools drawn
  from every candidate outside the group; it routes each of the group's evaluation pools on the
  partition's test tasks, seeing each pool through its capability summary on the train tasks
  (`PoolView.build`). It never trains on a test task nor with a held-out model.
- The fixed-pool references are trained on the pool alone, on the same train tasks: the local GRPO
  trainer with its default settings (`evaluate.fitted.LocalFitter`, row `local-grpo`) and the balanced
  TF-IDF logistic regression (`evaluate.baselines.tfidf_logreg`). They know the pool's models by id:
  they are what retraining for that pool buys.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from router_oracle.derive import CandidateIndex
from router_oracle.table import TaskRecord
from router_train.anypool import AnyPoolTrainConfig, PoolView, train_any_pool
from router_train.anypool.heldout import ROUTER_NAME as ANYPOOL_NAME
from router_train.evaluate.design import Partition
from router_train.evaluate.dial import RouterScores
from router_train.evaluate.fitted import LOCAL_ROUTER_NAME, LocalFitter
from router_train.evaluate.forked import fork_map
from router_train.evaluate_anypool.design import EvalPool, HeldOutGroup
from router_train.local import LocalTrainConfig
from router_train.scoring import baselines
from router_train.scoring.decisions import Decisions, EvaluateError

LOGREG_NAME = "tfidf-logreg(balanced)"
"""Row name of the fixed-pool TF-IDF baseline (as `baselines.tfidf_logreg(balanced=True)` names it)."""

FIXED_NAMES = (LOCAL_ROUTER_NAME, LOGREG_NAME)
"""The fixed-pool reference routers, in report order."""

Picks = list[dict[str, str]]
"""Per repeat (fold seed): task id -> the model a router routed it to."""


@dataclass
class Routed:
    """What every fit routed, gathered over all partitions."""

    anypool: dict[tuple[int, int], Picks] = field(default_factory=dict)
    """(group index, pool index within the group) -> the any-pool router's picks."""
    fixed: dict[tuple[str, ...], dict[str, Picks]] = field(default_factory=dict)
    """Pool ids -> fixed-pool router name -> its picks."""
    train_models: dict[int, list[str]] = field(default_factory=dict)
    """Group index -> the models the any-pool router's training pools were drawn from."""
    anypool_scores: dict[tuple[int, int], dict[int, RouterScores]] = field(default_factory=dict)
    """(group index, pool index) -> partition index -> the any-pool router's per-model scores on the
    pool's train and test tasks: its cost dial's curve (`evaluate.curves`)."""
    fixed_scores: dict[tuple[str, ...], dict[int, list[RouterScores]]] = field(default_factory=dict)
    """Pool ids -> partition index -> `local-grpo`'s per-model scores (its curve)."""


def _ids(tasks: Sequence[TaskRecord]) -> list[str]:
    return [t.instance_id for t in tasks]


def _put(picks: Picks, repeat: int, task_ids: Sequence[str], routes: Sequence[str], what: str) -> None:
    for tid, route in zip(task_ids, routes, strict=True):
        if tid in picks[repeat]:
            raise EvaluateError(f"{what} routed {tid} twice in one fold seed")
        picks[repeat][tid] = route


def fit_all(
    index: CandidateIndex,
    partitions: Sequence[Partition],
    groups: Sequence[HeldOutGroup],
    pools: Sequence[Sequence[EvalPool]],
    *,
    anypool_config: AnyPoolTrainConfig,
    fixed_config: LocalTrainConfig,
    seed: int,
    jobs: int = 1,
    progress: bool = False,
) -> Routed:
    """Run every fit (`jobs` forked workers) and gather the routes; `pools[g]` are group g's pools.

    Checks what the report rests on: no partition routes a task it trains on, no any-pool training
    pool holds a held-out model, every router routes every task exactly once per fold seed."""
    for p in partitions:
        if set(_ids(p.train)) & set(_ids(p.test)):
            raise EvaluateError(f"{p.label}: test tasks are also train tasks")
    distinct: list[tuple[str, ...]] = []
    for group_pools in pools:
        for pool in group_pools:
            if tuple(pool.ids) not in distinct:
                distinct.append(tuple(pool.ids))
    # Any-pool fits take several times longer than fixed-pool ones: first, so the workers end together.
    # A group without evaluation pools has nothing to route: no router is trained for it.
    units = [("anypool", pi, gi) for pi in range(len(partitions)) for gi in range(len(groups)) if pools[gi]]
    units += [("fixed", pi, qi) for pi in range(len(partitions)) for qi in range(len(distinct))]

    def fit_unit(
        u: int,
    ) -> tuple[list[str], list[list[str]], list[RouterScores]] | tuple[list[Decisions], list[RouterScores]]:
        kind, pi, target = units[u]
        p = partitions[pi]
        train_ids, test_ids = _ids(p.train), _ids(p.test)
        if kind == "anypool":
            held = set(groups[target].models)
            models = [m for m in index.model_ids if m not in held]
            result = train_any_pool(index, train_ids, models, anypool_config)
            routes, scores = [], []
            for pool in pools[target]:
                view = PoolView.build(index, pool.ids, train_ids)
                pool_model = index.pool(pool.ids)
                test = index.records(pool_model, test_ids)
                routes.append(result.policy.route(test, view))
                train = index.records(pool_model, train_ids)
                logits = getattr(result.policy, "logits", None)  # a policy without scores has no dial
                if logits is not None:
                    scores.append(
                        RouterScores(ANYPOOL_NAME, list(view.ids), logits(train, view), logits(test, view))
                    )
            return list(result.model_ids), routes, scores
        ids = list(distinct[target])
        pool_model = index.pool(ids)
        train, test = index.records(pool_model, train_ids), index.records(pool_model, test_ids)
        local, local_scores = LocalFitter(LOCAL_ROUTER_NAME, fixed_config, ids).fit_scored(train, test, seed)
        return [*local, baselines.tfidf_logreg(train, test, seed, balanced=True)], local_scores

    results = fork_map(fit_unit, len(units), jobs=jobs, desc="fitting routers", unit="fit", progress=progress)

    repeats = max(p.repeat for p in partitions) + 1
    out = Routed()
    for (kind, pi, target), result in zip(units, results, strict=True):
        p = partitions[pi]
        test_ids = _ids(p.test)
        if kind == "anypool":
            assert len(result) == 3
            models, routes, scores = result
            for k, sc in enumerate(scores):
                out.anypool_scores.setdefault((target, k), {})[pi] = sc
            leaked = sorted(set(models) & set(groups[target].models))
            if leaked:
                raise EvaluateError(
                    f"the any-pool router of group {groups[target].name} trained with {leaked}"
                )
            out.train_models[target] = models
            for k, pool_routes in enumerate(routes):
                picks = out.anypool.setdefault((target, k), [{} for _ in range(repeats)])
                _put(picks, p.repeat, test_ids, pool_routes, f"{ANYPOOL_NAME} on {pools[target][k].name}")
        else:
            assert len(result) == 2
            decisions, fixed_scores = result
            out.fixed_scores.setdefault(distinct[target], {})[pi] = fixed_scores
            for d in decisions:
                if set(d.choices) != set(test_ids):
                    raise EvaluateError(f"{d.name} did not route exactly the test tasks of {p.label}")
                picks = out.fixed.setdefault(distinct[target], {}).setdefault(
                    d.name, [{} for _ in range(repeats)]
                )
                labels = []
                for tid in test_ids:
                    (label,) = d.choices[tid]  # one single-choice decision per task
                    labels.append(label)
                _put(picks, p.repeat, test_ids, labels, f"{d.name} on pool {list(distinct[target])}")
    return out
