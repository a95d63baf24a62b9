"""Every fit of the protocol, in forked workers: one any-pool router per (task partition, held-out
group), one set of fixed-pool routers per (task partition, distinct evaluation pool).

- The any-pool router (`anypool.train_any_pool`) trains on the partition's train tasks with pools drawn
  from every candidate outside the group; it routes each of the group's evaluation pools on the
  partition's test tasks, seeing each pool through its capability summary on the train tasks
  (`PoolView.build`). It never trains on a test task nor with a held-out model.
- With the IRT row (`--irt`): the registry's partition-shared rows (`route.kinds.partition_fits`, the
  `irt` kind's): one IRT router per task partition, fitted on the train tasks' rows of every run and
  shared by every evaluation pool (each routed with its own near-tie tolerance).
- With the any-pool router's IRT inputs (`FeatureConfig.irt`): one fit of them per task partition
  (`anypool.irt_inputs.fit_anypool_irt`, train tasks' rows of every run), shared by every group's router.
- The fixed-pool references are trained on the pool alone, on the same train tasks: the registry's
  (`route.kinds.references_for`): the local GRPO trainer with its default settings (`local` kind,
  `local.fitter.LocalFitter`, row `local-grpo`) and the balanced TF-IDF logistic regression (`baseline`
  kind, `scoring.baseline_fitter.BalancedLogregFitter`). They know the pool's models by id: they are what
  retraining for that pool buys. The any-pool router's trainer is the `local-anypool` kind's
  (`route.kinds.anypool_training`).

Work is shared where the results cannot differ: a fit unit is one held-out group (its any-pool routers
of every partition) or one distinct pool (its fixed-pool routers of every partition), and each unit reads
table rows through `SharedRows`, which keeps every row it builds for the unit. A group's training bank is
drawn from the same models in every partition, so its pools' rows (the tie-rule pick of every task) are
built once per group instead of once per fold; a fixed pool's rows once instead of once per partition.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import cast

from router_oracle.derive import CandidateIndex
from router_oracle.table import TaskRecord
from router_train.anypool import AnyPoolTrainConfig, PoolView
from router_train.anypool.heldout import ROUTER_NAME as ANYPOOL_NAME
from router_train.anypool.irt_inputs import AnyPoolIrtState
from router_train.anypool.trainer import ScoreCache
from router_train.evaluate.design import Partition
from router_train.evaluate.dial import RouterScores
from router_train.evaluate.forked import fork_map
from router_train.evaluate_anypool.design import EvalPool, HeldOutGroup
from router_train.irt.router import IrtConfig
from router_train.local import LocalTrainConfig
from router_train.route.kinds import (
    PartitionRequest,
    PoolRoutes,
    ReferenceRequest,
    anypool_training,
    partition_fits,
    reference_rows,
    references_for,
)
from router_train.scoring.decisions import Decisions, EvaluateError

FIXED_NAMES = reference_rows()
"""The fixed-pool reference routers' rows, in report order: the registry's references
(`route.kinds.references_for`, each kind's `Fit.reference_rows`), which `fit_all` checks they give."""

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
    shared: dict[str, dict[tuple[str, ...], Picks]] = field(default_factory=dict)
    """Partition-shared row (`irt`) -> pool ids -> its picks (empty without `--irt`)."""
    shared_scores: dict[str, dict[tuple[str, ...], dict[int, RouterScores]]] = field(default_factory=dict)
    """Partition-shared row -> pool ids -> partition index -> its per-model scores (its curve)."""


class SharedRows(CandidateIndex):
    """The candidates index `index` for one fit unit: its `records` keeps the rows of every pool the unit
    asks for (not only the index's most recent ones), so a group's bank of training pools, drawn alike in
    every partition, is turned into rows once per group."""

    def __init__(self, index: CandidateIndex) -> None:
        self.__dict__.update(index.__dict__)  # the same candidates and per-model outcomes: nothing reloaded
        self._row_cache = {}  # its own rows, not the index's
        self.row_cache_pools = None
        self.route_scores: ScoreCache = {}
        """The any-pool trainer's route scores per (pool, task) (`train_any_pool` keeps them here): every
        partition of a group draws the same bank of pools, so each is scored once per group."""


AnyPoolFit = tuple[list[str], list[list[str]], list[RouterScores]]
"""One any-pool fit: the models it trained with, its routes on each evaluation pool of its group, and its
per-model scores there (its cost dial)."""
FixedFit = tuple[list[Decisions], list[RouterScores]]
"""One partition's fixed-pool fits on one pool: every reference's decisions (`local-grpo`'s and the
balanced classifier's), and the scores of those that give them (`local-grpo`'s)."""


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
    irt_config: IrtConfig | None = None,
    jobs: int = 1,
    progress: bool = False,
) -> Routed:
    """Run every fit (`jobs` forked workers) and gather the routes; `pools[g]` are group g's pools. With
    `irt_config`, the partition-shared rows too (`irt`: its settings searched over that config's grids).

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
    # One unit per group (every partition), per partition-shared row and partition (every distinct pool;
    # `shared_units`) and per distinct pool (every partition): see the module docstring. Any-pool units
    # take several times longer: first, so the workers end together. A group without evaluation pools has
    # nothing to route: no router is trained for it.
    fits = partition_fits() if irt_config is not None and distinct else []
    shared_units = [(f, pi) for f in fits for pi in range(len(partitions))]
    units = [("anypool", gi) for gi in range(len(groups)) if pools[gi]]
    units += [("shared", si) for si in range(len(shared_units))]
    units += [("fixed", qi) for qi in range(len(distinct))]
    training = anypool_training()
    irt_inputs: list[AnyPoolIrtState | None] = [None] * len(partitions)
    if anypool_config.features.irt:
        # Every run's rows on the train tasks, so one fit per partition serves every group's router.
        irt_inputs = list(
            fork_map(
                lambda pi: training.irt_inputs(index, _ids(partitions[pi].train)),
                len(partitions),
                jobs=jobs,
                desc="fitting IRT inputs",
                unit="fit",
                progress=progress,
            )
        )

    def anypool_unit(gi: int, shared: SharedRows) -> list[AnyPoolFit]:
        held = set(groups[gi].models)
        models = [m for m in index.model_ids if m not in held]
        out = []
        for pi, p in enumerate(partitions):
            train_ids, test_ids = _ids(p.train), _ids(p.test)
            result = training.train(
                shared,
                train_ids,
                models,
                anypool_config,
                score_cache=shared.route_scores,
                irt=irt_inputs[pi],
            )
            routes, scores = [], []
            for pool in pools[gi]:
                view = PoolView.build(shared, pool.ids, train_ids)
                pool_model = shared.pool(pool.ids)
                test = shared.records(pool_model, test_ids)
                routes.append(result.policy.route(test, view))
                train = shared.records(pool_model, train_ids)
                logits = getattr(result.policy, "logits", None)  # a policy without scores has no dial
                if logits is not None:
                    scores.append(
                        RouterScores(ANYPOOL_NAME, list(view.ids), logits(train, view), logits(test, view))
                    )
            out.append((list(result.model_ids), routes, scores))
        return out

    def fixed_unit(qi: int, shared: SharedRows) -> list[FixedFit]:
        ids = list(distinct[qi])
        pool_model = shared.pool(ids)
        folds = [
            (shared.records(pool_model, _ids(p.train)), shared.records(pool_model, _ids(p.test)))
            for p in partitions
        ]
        out: list[FixedFit] = [([], []) for _ in folds]
        for fitter in references_for(ReferenceRequest(ids, fixed_config)):
            many = getattr(fitter, "fit_scored_many", None)
            if many is not None:
                # Every partition's trainings in lockstep (`local-grpo`: the policies `fit_scored` gives,
                # bitwise), with its scores: its curve.
                for (decisions, scores), (fold_decisions, fold_scores) in zip(many(folds), out, strict=True):
                    fold_decisions.extend(decisions)
                    fold_scores.extend(scores)
            else:
                for (train, test), (fold_decisions, _) in zip(folds, out, strict=True):
                    fold_decisions.extend(fitter(train, test, seed))
        return out

    def shared_unit(si: int, shared: SharedRows) -> list[PoolRoutes]:
        assert irt_config is not None
        fit, pi = shared_units[si]
        p = partitions[pi]
        return fit.fit(
            PartitionRequest(shared, _ids(p.train), _ids(p.test), distinct, irt_config, seed, p.label)
        )

    def fit_unit(u: int) -> list[AnyPoolFit] | list[FixedFit] | list[PoolRoutes]:
        kind, target = units[u]
        shared = SharedRows(index)  # rows live as long as the unit: one group's, one pool's or partition's
        if kind == "shared":
            return shared_unit(target, shared)
        return anypool_unit(target, shared) if kind == "anypool" else fixed_unit(target, shared)

    per_unit = fork_map(
        fit_unit, len(units), jobs=jobs, desc="fitting routers", unit="fit", progress=progress
    )
    repeats = max(p.repeat for p in partitions) + 1
    out = Routed()
    results: list[tuple[str, int, int, AnyPoolFit | FixedFit]] = []
    for (kind, target), unit_results in zip(units, per_unit, strict=True):
        if kind == "shared":  # one row in one partition, every distinct pool
            fit, pi = shared_units[target]
            p, row = partitions[pi], fit.row
            per_pool = cast(list[PoolRoutes], unit_results)
            if len(per_pool) != len(distinct):
                raise EvaluateError(f"{row} routed {len(per_pool)} pools of {p.label}, not {len(distinct)}")
            for qi, (row_routes, row_scores) in enumerate(per_pool):
                out.shared_scores.setdefault(row, {}).setdefault(distinct[qi], {})[pi] = row_scores
                picks = out.shared.setdefault(row, {}).setdefault(distinct[qi], [{} for _ in range(repeats)])
                _put(picks, p.repeat, _ids(p.test), row_routes, f"{row} on pool {list(distinct[qi])}")
            continue
        for pi in range(len(partitions)):
            results.append((kind, pi, target, cast(AnyPoolFit | FixedFit, unit_results[pi])))

    for kind, pi, target, result in results:
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
            names = tuple(d.name for d in decisions)
            if names != FIXED_NAMES:
                raise EvaluateError(f"the fixed-pool references are {names}, the report's rows {FIXED_NAMES}")
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
