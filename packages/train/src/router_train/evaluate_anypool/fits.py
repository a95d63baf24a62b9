"""Every fit of the protocol, in forked workers: one any-pool router per (task partition, held-out
group), one set of fixed-pool routers per (task partition, distinct evaluation pool).

- The any-pool router (`anypool.train_any_pool`) trains on the partition's train tasks with pools drawn
  from every candidate outside the group; it routes each of the group's evaluation pools on the
  partition's test tasks, seeing each pool through its capability summary on the train tasks
  (`PoolView.build`). It never trains on a test task nor with a held-out model.
- With the IRT row (`--irt`): the registry's partition-shared rows (`fitting.partition_fits`, the
  `irt` kind's): one IRT router per task partition, fitted on the train tasks' rows of every run and
  shared by every evaluation pool (each routed with its own near-tie tolerance).
- With the any-pool router's IRT inputs (`FeatureConfig.irt`): one fit of them per task partition
  (`anypool.irt_inputs.fit_anypool_irt`, train tasks' rows of every run), shared by every group's router.
- The fixed-pool references are trained on the pool alone, on the same train tasks: the registry's
  (`fitting.references_for`): the local GRPO trainer with its default settings (`local` kind,
  `local.fitter.LocalFitter`, row `local-grpo`) and the balanced TF-IDF logistic regression (`baseline`
  kind, `scoring.baseline_fitter.BalancedLogregFitter`). They know the pool's models by id: they are what
  retraining for that pool buys. The any-pool router's trainer is the `local-anypool` kind's
  (`fitting.anypool_training`).

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
from router_train.anypool.heldout import ROUTER_NAME as ANYPOOL_NAME
from router_train.anypool.irt_inputs import AnyPoolIrtState
from router_train.anypool.policy import PoolView
from router_train.anypool.trainer import ScoreCache
from router_train.evaluate.design import Partition
from router_train.evaluate.dial import RouterScores
from router_train.evaluate.forked import fork_map
from router_train.evaluate_anypool.config import AnyPoolEvalConfig
from router_train.evaluate_anypool.design import EvalPool, HeldOutGroup
from router_train.fitting import (
    PartitionFit,
    PartitionRequest,
    PoolRoutes,
    ReferenceRequest,
    anypool_training,
    partition_fits,
    reference_rows,
    references_for,
)
from router_train.route.kinds import irt as irt_kind
from router_train.route.kinds import local as local_kind
from router_train.scoring.decisions import Decisions, EvaluateError

FIXED_NAMES = reference_rows()
"""The fixed-pool reference routers' rows, in report order: the registry's references
(`fitting.references_for`, each kind's `Fit.reference_rows`), which `fit_all` checks they give."""

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


@dataclass(frozen=True)
class FitPlan:
    """Every fit unit of one protocol run, in the order the workers take them (`plan_fits`)."""

    partitions: Sequence[Partition]
    """The task partitions (every fold of every fold seed)."""
    groups: Sequence[HeldOutGroup]
    """The held-out groups."""
    pools: Sequence[Sequence[EvalPool]]
    """`pools[g]`: group g's evaluation pools."""
    distinct: list[tuple[str, ...]]
    """Every distinct evaluation pool's model ids, in first-seen order."""
    shared_units: list[tuple[PartitionFit, int]]
    """(partition-shared row, partition index) of each shared unit (`--irt`)."""
    units: list[tuple[str, int]]
    """(`anypool` | `shared` | `fixed`, its target: group, shared unit or distinct pool index)."""


def plan_fits(
    partitions: Sequence[Partition],
    groups: Sequence[HeldOutGroup],
    pools: Sequence[Sequence[EvalPool]],
    irt: bool,
) -> FitPlan:
    """The fit units: one per group (every partition), per partition-shared row and partition (every
    distinct pool) and per distinct pool (every partition): see the module docstring. Any-pool units take
    several times longer: first, so the workers end together. A group without evaluation pools has nothing
    to route: no router is trained for it."""
    for p in partitions:
        if set(_ids(p.train)) & set(_ids(p.test)):
            raise EvaluateError(f"{p.label}: test tasks are also train tasks")
    distinct: list[tuple[str, ...]] = []
    for group_pools in pools:
        for pool in group_pools:
            if tuple(pool.ids) not in distinct:
                distinct.append(tuple(pool.ids))
    fits = partition_fits() if irt and distinct else []
    shared_units = [(f, pi) for f in fits for pi in range(len(partitions))]
    units = [("anypool", gi) for gi in range(len(groups)) if pools[gi]]
    units += [("shared", si) for si in range(len(shared_units))]
    units += [("fixed", qi) for qi in range(len(distinct))]
    return FitPlan(partitions, groups, pools, distinct, shared_units, units)


@dataclass
class _Fitting:
    """What every fit unit reads: the plan, the candidates, the configuration and the IRT inputs."""

    plan: FitPlan
    index: CandidateIndex
    config: AnyPoolEvalConfig
    irt_inputs: list[AnyPoolIrtState | None]
    """Per partition: the any-pool router's IRT inputs (None without `FeatureConfig.irt`)."""

    def unit(self, u: int) -> list[AnyPoolFit] | list[FixedFit] | list[PoolRoutes]:
        kind, target = self.plan.units[u]
        shared = SharedRows(self.index)  # rows live as long as the unit: one group's, pool's or partition's
        if kind == "shared":
            return self.shared_unit(target, shared)
        return self.anypool_unit(target, shared) if kind == "anypool" else self.fixed_unit(target, shared)

    def anypool_unit(self, gi: int, shared: SharedRows) -> list[AnyPoolFit]:
        held = set(self.plan.groups[gi].models)
        models = [m for m in self.index.model_ids if m not in held]
        training = anypool_training()
        out = []
        for pi, p in enumerate(self.plan.partitions):
            train_ids, test_ids = _ids(p.train), _ids(p.test)
            result = training.train(
                shared,
                train_ids,
                models,
                self.config.anypool_config,
                score_cache=shared.route_scores,
                irt=self.irt_inputs[pi],
            )
            routes, scores = [], []
            for pool in self.plan.pools[gi]:
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

    def fixed_unit(self, qi: int, shared: SharedRows) -> list[FixedFit]:
        ids = list(self.plan.distinct[qi])
        pool_model = shared.pool(ids)
        folds = [
            (shared.records(pool_model, _ids(p.train)), shared.records(pool_model, _ids(p.test)))
            for p in self.plan.partitions
        ]
        out: list[FixedFit] = [([], []) for _ in folds]
        request = ReferenceRequest(ids, {local_kind.KIND_NAME: self.config.fixed_config})
        for fitter in references_for(request):
            many = getattr(fitter, "fit_scored_many", None)
            if many is not None:
                # Every partition's trainings in lockstep (`local-grpo`: the policies `fit_scored` gives,
                # bitwise), with its scores: its curve.
                for (decisions, scores), (fold_decisions, fold_scores) in zip(many(folds), out, strict=True):
                    fold_decisions.extend(decisions)
                    fold_scores.extend(scores)
            else:
                for (train, test), (fold_decisions, _) in zip(folds, out, strict=True):
                    fold_decisions.extend(fitter(train, test, self.config.seed))
        return out

    def shared_unit(self, si: int, shared: SharedRows) -> list[PoolRoutes]:
        fit, pi = self.plan.shared_units[si]
        p = self.plan.partitions[pi]
        request = PartitionRequest(
            shared,
            _ids(p.train),
            _ids(p.test),
            self.plan.distinct,
            {irt_kind.KIND_NAME: self.config.irt_config},
            self.config.seed,
            p.label,
        )
        return fit.fit(request)


def fit_all(
    index: CandidateIndex,
    partitions: Sequence[Partition],
    groups: Sequence[HeldOutGroup],
    pools: Sequence[Sequence[EvalPool]],
    config: AnyPoolEvalConfig,
    *,
    progress: bool = False,
) -> Routed:
    """Run every fit (`config.jobs` forked workers) and gather the routes; `pools[g]` are group g's pools.
    With `config.irt`, the partition-shared rows too (`irt`: its settings searched over `irt_config`'s
    grids).

    Checks what the report rests on: no partition routes a task it trains on, no any-pool training
    pool holds a held-out model, every router routes every task exactly once per fold seed."""
    plan = plan_fits(partitions, groups, pools, config.irt)
    irt_inputs: list[AnyPoolIrtState | None] = [None] * len(partitions)
    if config.anypool_config.features.irt:
        # Every run's rows on the train tasks, so one fit per partition serves every group's router.
        training = anypool_training()
        irt_inputs = list(
            fork_map(
                lambda pi: training.irt_inputs(index, _ids(partitions[pi].train)),
                len(partitions),
                jobs=config.jobs,
                desc="fitting IRT inputs",
                unit="fit",
                progress=progress,
            )
        )
    fitting = _Fitting(plan, index, config, irt_inputs)
    per_unit = fork_map(
        fitting.unit, len(plan.units), jobs=config.jobs, desc="fitting routers", unit="fit", progress=progress
    )
    return gather(plan, per_unit)


def gather(plan: FitPlan, per_unit: Sequence[Sequence[object]]) -> Routed:
    """Every unit's results (`plan.units` order) gathered into one `Routed`, checked."""
    repeats = max(p.repeat for p in plan.partitions) + 1
    out = Routed()
    for (kind, target), unit_results in zip(plan.units, per_unit, strict=True):
        if kind == "shared":  # one row in one partition, every distinct pool
            _gather_shared(plan, out, target, cast(list[PoolRoutes], unit_results), repeats)
    for (kind, target), unit_results in zip(plan.units, per_unit, strict=True):
        for pi in range(len(plan.partitions)):
            if kind == "anypool":
                _gather_anypool(plan, out, pi, target, cast(AnyPoolFit, unit_results[pi]), repeats)
            elif kind == "fixed":
                _gather_fixed(plan, out, pi, target, cast(FixedFit, unit_results[pi]), repeats)
    return out


def _gather_shared(plan: FitPlan, out: Routed, si: int, per_pool: list[PoolRoutes], repeats: int) -> None:
    fit, pi = plan.shared_units[si]
    p, row, distinct = plan.partitions[pi], fit.row, plan.distinct
    if len(per_pool) != len(distinct):
        raise EvaluateError(f"{row} routed {len(per_pool)} pools of {p.label}, not {len(distinct)}")
    for qi, (row_routes, row_scores) in enumerate(per_pool):
        out.shared_scores.setdefault(row, {}).setdefault(distinct[qi], {})[pi] = row_scores
        picks = out.shared.setdefault(row, {}).setdefault(distinct[qi], [{} for _ in range(repeats)])
        _put(picks, p.repeat, _ids(p.test), row_routes, f"{row} on pool {list(distinct[qi])}")


def _gather_anypool(plan: FitPlan, out: Routed, pi: int, gi: int, result: AnyPoolFit, repeats: int) -> None:
    p = plan.partitions[pi]
    assert len(result) == 3
    models, routes, scores = result
    for k, sc in enumerate(scores):
        out.anypool_scores.setdefault((gi, k), {})[pi] = sc
    leaked = sorted(set(models) & set(plan.groups[gi].models))
    if leaked:
        raise EvaluateError(f"the any-pool router of group {plan.groups[gi].name} trained with {leaked}")
    out.train_models[gi] = models
    for k, pool_routes in enumerate(routes):
        picks = out.anypool.setdefault((gi, k), [{} for _ in range(repeats)])
        _put(picks, p.repeat, _ids(p.test), pool_routes, f"{ANYPOOL_NAME} on {plan.pools[gi][k].name}")


def _gather_fixed(plan: FitPlan, out: Routed, pi: int, qi: int, result: FixedFit, repeats: int) -> None:
    p = plan.partitions[pi]
    test_ids = _ids(p.test)
    assert len(result) == 2
    decisions, fixed_scores = result
    names = tuple(d.name for d in decisions)
    if names != FIXED_NAMES:
        raise EvaluateError(f"the fixed-pool references are {names}, the report's rows {FIXED_NAMES}")
    pool = plan.distinct[qi]
    out.fixed_scores.setdefault(pool, {})[pi] = fixed_scores
    for d in decisions:
        if set(d.choices) != set(test_ids):
            raise EvaluateError(f"{d.name} did not route exactly the test tasks of {p.label}")
        picks = out.fixed.setdefault(pool, {}).setdefault(d.name, [{} for _ in range(repeats)])
        labels = []
        for tid in test_ids:
            (label,) = d.choices[tid]  # one single-choice decision per task
            labels.append(label)
        _put(picks, p.repeat, test_ids, labels, f"{d.name} on pool {list(pool)}")
