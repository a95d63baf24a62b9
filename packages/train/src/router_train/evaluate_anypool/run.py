"""`evaluate_any_pool`: the any-pool router on held-out tasks AND held-out models, next to fixed-pool
routers trained on each evaluation pool and the pool's oracle; `write_report` writes the files."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from router_oracle.analysis.noise import estimate_noise
from router_oracle.derive import CandidateIndex
from router_oracle.table import OracleTable
from router_train.anypool.config import AnyPoolTrainConfig
from router_train.evaluate.curves import CurveMetrics, router_curves
from router_train.evaluate.design import Partition, fold_partitions
from router_train.evaluate.fitted import FittedDecisions
from router_train.evaluate.forked import fork_map
from router_train.evaluate.report import Evaluation, TableInfo
from router_train.evaluate.run import build_evaluation
from router_train.evaluate_anypool.config import AnyPoolEvalConfig
from router_train.evaluate_anypool.design import (
    EvalPool,
    HeldOutGroup,
    check_named_pools,
    evaluation_pools,
)
from router_train.evaluate_anypool.fits import ANYPOOL_NAME, FIXED_NAMES, Routed, fit_all
from router_train.evaluate_anypool.plot import render_png
from router_train.evaluate_anypool.pool_average import (
    AverageGap,
    GapDifference,
    PoolGaps,
    average_gaps,
    gap_differences,
    pool_gaps,
)
from router_train.evaluate_anypool.report import (
    PLOT_PNG,
    AnyPoolDesign,
    AnyPoolEvalReport,
    ApgrAverage,
    CandidatesInfo,
    GroupAverage,
    PoolResult,
    dumps_report,
    render_markdown,
)
from router_train.local.config import LocalTrainConfig
from router_train.report_files import publish_files
from router_train.scoring import baselines
from router_train.scoring.bootstrap import RESAMPLES
from router_train.scoring.decisions import Decisions, EvaluateError

REPORT_JSON = "report.json"
REPORT_MD = "report.md"

ORACLE_NAME = "oracle"
"""Row name of the pool's oracle (`evaluate.baselines.oracle`)."""


def quick_configs() -> tuple[AnyPoolTrainConfig, LocalTrainConfig]:
    """Few-step trainers for smoke runs and tests (`--quick`): checks the plumbing, not the result."""
    return (
        AnyPoolTrainConfig(steps=20, pool_bank=16, pool_sizes=[2, 3]),
        LocalTrainConfig(steps=20, tasks_per_step=32),
    )


def _check_inputs(
    index: CandidateIndex, table: OracleTable, groups: Sequence[HeldOutGroup], anypool: AnyPoolTrainConfig
) -> None:
    known = set(index.task_ids)
    missing = [t.instance_id for t in table.tasks if t.instance_id not in known]
    if missing:
        raise EvaluateError(
            f"{index.label}: the candidates table lacks {len(missing)} tasks of the reference table "
            f"(e.g. {missing[0]})"
        )
    if not groups:
        raise EvaluateError("no held-out group to evaluate")
    need = max(anypool.pool_sizes)
    for g in groups:
        left = len(index.model_ids) - len(g.models)
        if left < need:
            raise EvaluateError(
                f"held-out group {g.name}: {left} candidate models remain for training, the any-pool "
                f"trainer's pool sizes {anypool.pool_sizes} need {need}"
            )


def _held_out_share(d: Decisions, held: set[str]) -> float:
    n = max(len(d.choices), 1)
    return round(sum(w for dist in d.choices.values() for m, w in dist.items() if m in held) / n, 6) + 0.0


def evaluate_any_pool(
    index: CandidateIndex,
    table: OracleTable,
    table_info: TableInfo,
    groups: Sequence[HeldOutGroup],
    config: AnyPoolEvalConfig | None = None,
    *,
    progress: bool = False,
) -> AnyPoolEvalReport:
    """Leave-one-group-out over `groups` x K-fold cross-validation over the reference table's tasks.

    Per group and task partition an any-pool router is trained on the train tasks with pools drawn
    from every candidate outside the group; it routes the test tasks of each of the group's evaluation
    pools (`config.drawn_pools` seeded pools of `pool_size` holding a group model, plus the named pools
    holding one). Per evaluation pool and partition, the fixed-pool routers are trained on that pool alone.
    Each pool evaluation scores every router on all tasks of the pool's table; the averages over pools
    carry a bootstrap interval over tasks (`pool_average`). With `config.irt`, the IRT router too (row
    `irt`: one fit per task partition on its train tasks' rows of every run, shared by the pools;
    `irt_config` its grids), with its curve, averages and the any-pool router's difference to it.

    Three steps: plan (the pools and the partitions), fit (`fit_all`), score (`score_pools`, then the
    averages and the report)."""
    config = config or AnyPoolEvalConfig()
    pools, partitions = plan_evaluation(index, table, table_info, groups, config)
    routed = fit_all(index, partitions, groups, pools, config, progress=progress)
    results, gaps, group_of = score_pools(index, table, groups, pools, partitions, routed, config, progress)
    shared = list(routed.shared)  # the partition-shared rows (`irt`), in registry order
    references = [*FIXED_NAMES, *shared]
    names = [ANYPOOL_NAME, *references, ORACLE_NAME]
    evaluations = [r.evaluation for r in results]
    shares = [r.held_out_pick_share for r in results]

    def summarise(keep: list[int]) -> tuple[list[AverageGap], list[GapDifference]]:
        sub = [gaps[i] for i in keep]
        return (
            average_gaps(sub, [evaluations[i] for i in keep], [shares[i] for i in keep], names),
            gap_differences(sub, ANYPOOL_NAME, references),
        )

    averages, differences = summarise(list(range(len(results))))
    by_group = []
    for gi, g in enumerate(groups):
        keep = [i for i, x in enumerate(group_of) if x == gi]
        if not keep:
            continue
        avg, diff = summarise(keep)
        by_group.append(
            GroupAverage(
                group=g.name,
                n_pools=len(keep),
                train_models=len(routed.train_models[gi]),
                averages=avg,
                differences=diff,
            )
        )
    return AnyPoolEvalReport(
        candidates=CandidatesInfo(
            label=index.label,
            sha256=index.digest(),
            n_models=len(index.model_ids),
            n_tasks=len(index.task_ids),
        ),
        table=table_info,
        design=_design(groups, config),
        seed=config.seed,
        averages=averages,
        differences=differences,
        by_group=by_group,
        pools=results,
        notes=_notes(groups, partitions, routed, results, config),
        apgr=apgr_averages(results, [ANYPOOL_NAME, FIXED_NAMES[0], *shared]),
    )


def plan_evaluation(
    index: CandidateIndex,
    table: OracleTable,
    table_info: TableInfo,
    groups: Sequence[HeldOutGroup],
    config: AnyPoolEvalConfig,
) -> tuple[list[list[EvalPool]], list[Partition]]:
    """The inputs checked, each group's evaluation pools and the task partitions."""
    _check_inputs(index, table, groups, config.anypool_config)
    check_named_pools(index, config.named_pools)
    pools = [
        evaluation_pools(
            index,
            g,
            drawn=config.drawn_pools,
            size=config.pool_size,
            seed=config.pool_seed,
            named=config.named_pools,
        )
        for g in groups
    ]
    if not any(pools):
        raise EvaluateError(
            "no evaluation pool: ask for drawn pools (--pools) or name a pool holding a held-out model"
        )
    return pools, fold_partitions(table, table_info.file, config.folds, config.fold_seeds)


def score_pools(
    index: CandidateIndex,
    table: OracleTable,
    groups: Sequence[HeldOutGroup],
    pools: Sequence[Sequence[EvalPool]],
    partitions: Sequence[Partition],
    routed: Routed,
    config: AnyPoolEvalConfig,
    progress: bool,
) -> tuple[list[PoolResult], list[PoolGaps], list[int]]:
    """Every pool evaluation (forked workers, in pool order, as one loop would): its result, its gaps and
    its group's index; checks every router routed every task exactly once per fold seed."""
    shared = list(routed.shared)
    all_ids = sorted(t.instance_id for t in table.tasks)
    keys = [(gi, k) for gi in range(len(groups)) for k in range(len(pools[gi]))]

    def evaluate_pool(u: int) -> tuple[PoolResult, PoolGaps]:
        gi, k = keys[u]
        pool = pools[gi][k]
        result, pg = _pool_evaluation(
            index,
            pool,
            groups[gi],
            all_ids,
            routed.anypool[(gi, k)],
            {**routed.fixed[tuple(pool.ids)], **{row: routed.shared[row][tuple(pool.ids)] for row in shared}},
            len(config.fold_seeds),
            config.seed,
        )
        curves = pool_curves(index, pool, all_ids, partitions, routed, (gi, k), config.seed)
        return result.model_copy(update={"curves": curves}), pg

    # Each pool's evaluation reads only the routes and scores gathered: the pools are scored in forked
    # workers too.
    evaluated = fork_map(
        evaluate_pool, len(keys), jobs=config.jobs, desc="scoring pools", unit="pool", progress=progress
    )
    every = [*routed.anypool.values(), *(p for f in routed.fixed.values() for p in f.values())]
    for picks in [*every, *(p for s in routed.shared.values() for p in s.values())]:
        if any(set(rep) != set(all_ids) for rep in picks):
            raise EvaluateError("a router did not route every task exactly once per fold seed")
    return [r for r, _ in evaluated], [g for _, g in evaluated], [gi for gi, _ in keys]


def _design(groups: Sequence[HeldOutGroup], config: AnyPoolEvalConfig) -> AnyPoolDesign:
    return AnyPoolDesign(
        folds=config.folds,
        fold_seeds=list(config.fold_seeds),
        held_out_by=config.held_out_by,
        groups=list(groups),
        pool_size=config.pool_size,
        drawn_pools=config.drawn_pools,
        pool_seed=config.pool_seed,
        named_pools=list(config.named_pools),
        anypool=config.anypool_config,
        fixed=config.fixed_config,
        resamples=RESAMPLES,
    )


def _notes(
    groups: Sequence[HeldOutGroup],
    partitions: Sequence[Partition],
    routed: Routed,
    results: Sequence[PoolResult],
    config: AnyPoolEvalConfig,
) -> list[str]:
    """The report's notes: how many fits, the IRT row's, the floored pools, unused named pools."""
    notes = [
        f"{len(partitions) * len(routed.train_models)} any-pool routers trained "
        f"({len(routed.train_models)} groups x {config.folds} folds x "
        f"{len(config.fold_seeds)} fold seeds), each on the {min(len(p.train) for p in partitions)}-"
        f"{max(len(p.train) for p in partitions)} tasks outside the fold it routes; "
        f"{len(partitions) * len(routed.fixed)} fits of each fixed-pool router "
        f"({len(routed.fixed)} distinct pools)"
    ]
    if config.irt:
        notes.append(
            f"{len(partitions)} IRT routers fitted (one per fold, on its train tasks' rows of every run, "
            "held-out models' included: their cold start), each shared by every pool with its own near-tie "
            "tolerance"
        )
    floored = [f"{r.group} {r.pool.name} ({', '.join(r.floored)})" for r in results if r.floored]
    if floored:
        notes.append(
            "cheaper than every single model of the pool, so compared with the cheapest one (no credit for "
            f"the saving; `evaluate` leaves this gap undefined): {'; '.join(floored)}"
        )
    groups_models = [set(g.models) for g in groups]
    unused = [p.name for p in config.named_pools if not any(set(p.ids) & m for m in groups_models)]
    if unused:
        notes.append(f"named pools holding no held-out model, not evaluated: {', '.join(unused)}")
    return notes


def pool_curves(
    index: CandidateIndex,
    pool: EvalPool,
    all_ids: list[str],
    partitions: Sequence[Partition],
    routed: Routed,
    key: tuple[int, int],
    seed: int,
) -> dict[str, CurveMetrics]:
    """The any-pool router's and `local-grpo`'s cost dial curves on one pool (`evaluate.curves`: each
    point's dial chosen on the fit's train tasks), summarised: APGR, CPT50/80, area vs mix."""
    tasks = index.records(index.pool(pool.ids), all_ids)
    anyp, fixed = routed.anypool_scores.get(key, {}), routed.fixed_scores.get(tuple(pool.ids), {})
    shared = [s.get(tuple(pool.ids), {}) for s in routed.shared_scores.values()]
    scores = [
        ([anyp[i]] if i in anyp else []) + fixed.get(i, []) + [s[i] for s in shared if i in s]
        for i in range(len(partitions))
    ]
    by_name = router_curves(partitions, scores, tasks, pool.ids, seed)
    return {name: c.metrics for name, c in by_name.items()}


def apgr_averages(results: Sequence[PoolResult], routers: Sequence[str]) -> list[ApgrAverage]:
    """Per router, the mean APGR over the pool evaluations of each pool size, then over all of them."""
    out = []
    sizes = sorted({len(r.pool.ids) for r in results})
    for name in routers:
        for size in [*sizes, None]:
            vals = [
                m.apgr.mean
                for r in results
                if (size is None or len(r.pool.ids) == size)
                and (m := r.curves.get(name)) is not None
                and m.apgr.mean is not None
            ]
            if vals:
                out.append(
                    ApgrAverage(
                        router=name,
                        pool_size=size,
                        n_pools=len(vals),
                        mean=round(sum(vals) / len(vals), 4) + 0.0,
                        by_pool=vals,
                    )
                )
    return out


def _pool_evaluation(
    index: CandidateIndex,
    pool: EvalPool,
    group: HeldOutGroup,
    all_ids: list[str],
    anypool_picks: list[dict[str, str]],
    fixed_picks: dict[str, list[dict[str, str]]],
    repeats: int,
    seed: int,
) -> tuple[PoolResult, PoolGaps]:
    """Every router on every task of one pool's table, and its gaps for the averages."""
    tasks = index.records(index.pool(pool.ids), all_ids)
    learned = [ANYPOOL_NAME, *fixed_picks]
    fitted = FittedDecisions(
        kinds={n: "baseline" if n == baselines.BALANCED_LOGREG_NAME else "local" for n in learned},
        picks={ANYPOOL_NAME: anypool_picks, **{n: fixed_picks[n] for n in learned[1:]}},
    )
    oracle = baselines.oracle(tasks)
    routers = {n: (fitted.pooled(n), fitted.by_repeat(n)) for n in learned}
    routers[ORACLE_NAME] = (oracle, [oracle] * repeats)
    # The part of this pool's oracle lead that rollout noise alone would produce, as `evaluate` shows it.
    noise = estimate_noise(index.table(pool.ids), all_ids)
    evaluation: Evaluation = build_evaluation(
        pool.name, tasks, pool.ids, seed, [(d, reps, False) for d, reps in routers.values()], None, noise
    )
    gaps = pool_gaps(tasks, pool.ids, routers, seed)
    held = set(pool.held_out)
    result = PoolResult(
        group=group.name,
        pool=pool,
        floored_gaps={n: gaps.gap(n) for n in routers},
        floored=gaps.floored,
        held_out_oracle_share=round(sum(t.oracle in held for t in tasks) / len(tasks), 6) + 0.0,
        held_out_pick_share={n: _held_out_share(d, held) for n, (d, _) in routers.items()},
        evaluation=evaluation,
    )
    return result, gaps


def write_report(
    report: AnyPoolEvalReport, outdir: str | os.PathLike[str], *, plot: bool = True
) -> list[Path]:
    """Write report.json, report.md and the PNG into `outdir`, all together or none (`publish_files`)."""
    files: dict[str, bytes] = {
        REPORT_JSON: dumps_report(report).encode("utf-8"),
        REPORT_MD: render_markdown(report, PLOT_PNG if plot else None).encode("utf-8"),
    }
    if plot:
        files[PLOT_PNG] = render_png(report)
    return publish_files(outdir, files, owned=(REPORT_JSON, REPORT_MD, PLOT_PNG))
