"""The any-pool evaluation report: one pydantic model, rendered as JSON, Markdown and a terminal table.

Contract of `report.json` for scripts (version 1): `averages` (one row per router: the floored gap to
the random mix averaged over every pool evaluation, in points, with `gap: {mean, low, high, by_fold_seed,
sd}`), `differences` (the any-pool router minus each fixed-pool router, same shape), `by_group` (the
same per held-out group) and `pools` (each pool evaluation with its full `evaluate` Evaluation: every
metric of every router, the single models, the frontier).
"""

from __future__ import annotations

import json
from typing import Literal

from pydantic import Field

from router_oracle.infra.frozen_model import FrozenModel
from router_train.anypool.config import AnyPoolTrainConfig
from router_train.evaluate.curves import CurveMetrics
from router_train.evaluate.report import Evaluation, TableInfo
from router_train.evaluate_anypool.design import EvalPool, HeldOutDesign, HeldOutGroup, NamedPool
from router_train.evaluate_anypool.pool_average import AverageGap, GapDifference
from router_train.local.config import LocalTrainConfig
from router_train.scoring.vs_mix import Gap, verdict

PLOT_PNG = "anypool_gaps.png"
"""File name of the plot, beside report.md (which links it)."""


class CandidatesInfo(FrozenModel):
    """The candidates table every pool's outcomes come from."""

    label: str
    """`bundled` or the file's path as given."""
    sha256: str
    """sha256 of the table's canonical text."""
    n_models: int
    """Candidate models."""
    n_tasks: int
    """Tasks in the candidates table."""


class AnyPoolDesign(FrozenModel):
    """How the routers were kept off the tasks and the models they are judged on."""

    folds: int
    """Task folds per fold seed, stratified by the reference table's oracle label (as `evaluate
    --folds`): each task is routed once per fold seed by routers fitted on the other folds."""
    fold_seeds: list[int]
    """One complete K-fold pass per seed."""
    held_out_by: HeldOutDesign
    """How models were grouped into held-out families (`explicit`: groups given by id)."""
    groups: list[HeldOutGroup]
    """Leave-one-group-out: per group, an any-pool router trained without any of its models."""
    pool_size: int
    """Models per drawn evaluation pool."""
    drawn_pools: int
    """Drawn evaluation pools per group (each holds at least one of the group's models)."""
    pool_seed: int
    """Seed of the pool draws."""
    named_pools: list[NamedPool]
    """Pools also evaluated in every group one of whose models they hold."""
    anypool: AnyPoolTrainConfig
    """The any-pool router's training (`router-train local-anypool`'s trainer)."""
    fixed: LocalTrainConfig
    """The fixed-pool GRPO router's training (`router-train local`; table and output fields unused)."""
    resamples: int
    """Bootstrap resamples of the tasks."""


class PoolResult(FrozenModel):
    """One pool evaluation: a pool, the held-out group it is judged for, and every router on it."""

    group: str
    """The held-out group (the any-pool router judged here never trained with its models)."""
    pool: EvalPool
    """The pool."""
    floored_gaps: dict[str, Gap]
    """Router -> its floored gap to the mix in points, [95% CI] over resampled tasks, per fold seed:
    `evaluate`'s `gap_vs_mix`, except for a router cheaper than every single model (`floored`), compared
    with the cheapest one (`pool_average`). What the averages average."""
    floored: list[str]
    """Routers cheaper than every single model of the pool on all tasks."""
    held_out_oracle_share: float
    """Share of tasks whose oracle (in this pool) is a held-out model."""
    held_out_pick_share: dict[str, float]
    """Router -> share of its decisions on a held-out model of the pool."""
    evaluation: Evaluation
    """Every router on every task, in this pool's table (the `evaluate` report's evaluation; its
    `gap_vs_mix` is None for a router cheaper than every single model)."""
    curves: dict[str, CurveMetrics] = Field(default_factory=dict)
    """Router with a cost dial (the any-pool router, `local-grpo`) -> its curve's APGR, CPT50/80 and area
    vs mix on this pool (`router_train.evaluate.curves`; dials chosen on each fit's train tasks)."""


class ApgrAverage(FrozenModel):
    """A router's APGR averaged over pool evaluations (each pool weighs 1)."""

    router: str
    """Router name."""
    pool_size: int | None
    """Pools of this many models; None: every pool evaluation (held-out pools of all sizes)."""
    n_pools: int
    """Pool evaluations averaged (those where the APGR is defined)."""
    mean: float
    """Mean APGR over them (0.5: the straight line from the pool's cheapest to its strongest model)."""
    by_pool: list[float]
    """Each pool's APGR, in report order."""


class GroupAverage(FrozenModel):
    """The averages and differences over one held-out group's pools."""

    group: str
    """The held-out group."""
    n_pools: int
    """Its pool evaluations in the averages (those where every learned router's gap is defined)."""
    train_models: int
    """Candidate models its any-pool router's training pools were drawn from."""
    averages: list[AverageGap]
    """Per router, averaged over the group's pools."""
    differences: list[GapDifference]
    """The any-pool router minus each fixed-pool router."""


class AnyPoolEvalReport(FrozenModel):
    """A whole any-pool evaluation."""

    version: Literal[1] = 1
    """report.json format version."""
    candidates: CandidatesInfo
    """Where every pool's outcomes come from."""
    table: TableInfo
    """The reference table: its tasks and its oracle labels define the task folds."""
    design: AnyPoolDesign
    """Folds, held-out groups, pools, trainers."""
    seed: int
    """Seed of the classifier and the bootstrap."""
    averages: list[AverageGap]
    """Per router, over every pool evaluation: the headline."""
    differences: list[GapDifference]
    """The any-pool router minus each fixed-pool router, over every pool evaluation."""
    by_group: list[GroupAverage]
    """The same per held-out group."""
    pools: list[PoolResult]
    """Every pool evaluation, group by group."""
    notes: list[str]
    """What a reader must know (how many fits, pools left out of averages)."""
    apgr: list[ApgrAverage] = Field(default_factory=list)
    """Per router with a cost dial: mean APGR per pool size, then over every held-out pool."""


def dumps_report(report: AnyPoolEvalReport) -> str:
    """Canonical JSON text of a report (byte-stable for the same inputs and seeds)."""
    return json.dumps(report.model_dump(mode="json"), indent=1, ensure_ascii=False) + "\n"


def _ci(gap: Gap) -> str:
    if gap.mean is None:
        return "n/a"
    ci = "" if gap.low is None or gap.high is None else f" [{gap.low:+.2f}, {gap.high:+.2f}]"
    return f"{gap.mean:+.2f}{ci}"


def _sd(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.2f}"


def design_text(report: AnyPoolEvalReport) -> str:
    """One paragraph: the data, the folds, the held-out groups, the pools."""
    d, c, t = report.design, report.candidates, report.table
    seeds = ",".join(map(str, d.fold_seeds))
    named = ", ".join(p.name for p in d.named_pools) or "none"
    return (
        f"candidates {c.label} (sha256 {c.sha256[:12]}, {c.n_models} models); tasks and folds of table "
        f"{t.file} ({t.n_tasks} tasks): {d.folds}-fold cross-validation x fold seeds {seeds}; held out by "
        f"{d.held_out_by}: {len(d.groups)} groups, one any-pool router per group and fold trained without "
        f"the group's models; per group {d.drawn_pools} drawn pools of {d.pool_size} (pool seed "
        f"{d.pool_seed}) holding one of its models, plus named pools holding one ({named}): "
        f"{len(report.pools)} pool evaluations; seed {report.seed}"
    )


def _average_rows(averages: list[AverageGap]) -> list[list[str]]:
    rows = [
        [
            "router",
            "pools",
            "floored gap vs mix, pts [95% CI]",
            "sd seeds",
            "sd pools",
            "resolved",
            "$/task",
            "->held-out",
            "one-model pools",
        ]
    ]
    for a in averages:
        rows.append(
            [
                a.router,
                str(a.n_pools),
                _ci(a.gap),
                _sd(a.gap.sd),
                _sd(a.sd_over_pools),
                f"{100 * a.resolved_rate:.1f}%",
                f"{a.mean_cost:.3f}",
                f"{100 * a.held_out_pick_share:.1f}%",
                str(a.one_model_pools),
            ]
        )
    return rows


def _difference_rows(differences: list[GapDifference]) -> list[list[str]]:
    rows = [["difference", "pools", "pts [95% CI]", "sd seeds", "at least as far above the mix"]]
    for d in differences:
        rows.append(
            [
                f"{d.router} - {d.reference}",
                str(d.n_pools),
                _ci(d.gap),
                _sd(d.gap.sd),
                f"{d.pools_at_least} of {d.n_pools} pools",
            ]
        )
    return rows


def _pool_rows(report: AnyPoolEvalReport, routers: list[str]) -> list[list[str]]:
    rows = [["group", "pool", "models (held out *)", *routers]]
    for p in report.pools:
        models = ", ".join(m + ("*" if m in p.pool.held_out else "") for m in p.pool.ids)
        cells = [_ci(p.floored_gaps[r]) + (" c" if r in p.floored else "") for r in routers]
        rows.append([p.group, p.pool.name, models, *cells])
    return rows


def _fixed(rows: list[list[str]], right: set[int]) -> list[str]:
    widths = [max(len(r[j]) for r in rows) for j in range(len(rows[0]))]
    out = []
    for k, r in enumerate(rows):
        out.append(
            "  ".join(
                c.rjust(w) if j in right else c.ljust(w)
                for j, (c, w) in enumerate(zip(r, widths, strict=True))
            ).rstrip()
        )
        if k == 0:
            out.append("  ".join("-" * w for w in widths))
    return out


def _markdown(rows: list[list[str]], right: set[int]) -> list[str]:
    align = ["---:" if j in right else "---" for j in range(len(rows[0]))]
    return ["| " + " | ".join(rows[0]) + " |", "|" + "|".join(align) + "|"] + [
        "| " + " | ".join(r) + " |" for r in rows[1:]
    ]


def router_names(report: AnyPoolEvalReport) -> list[str]:
    """The routers of every pool evaluation, in row order."""
    return list(report.pools[0].floored_gaps) if report.pools else []


def render_terminal(report: AnyPoolEvalReport) -> str:
    """The averages, the differences and the per-pool gaps as fixed-width tables."""
    out = [design_text(report), "", f"averaged over the {len(report.pools)} pool evaluations:"]
    out += _fixed(_average_rows(report.averages), {1, 2, 3, 4, 5, 6, 7, 8})
    out += ["", *_fixed(_difference_rows(report.differences), {1, 2, 3})]
    out += ["", "per held-out group (mean floored gap vs mix, points):"]
    names = [a.router for a in report.averages]
    rows = [["group", "pools", *names]]
    for g in report.by_group:
        gaps = {a.router: a.gap for a in g.averages}
        rows.append([g.group, str(g.n_pools), *(_ci(gaps[n]) if n in gaps else "n/a" for n in names)])
    out += _fixed(rows, set(range(1, len(rows[0]))))
    out += [
        "",
        "per pool (floored gap vs mix, points [95% CI]; c: cheaper than every model, compared with the "
        "cheapest):",
    ]
    out += _fixed(_pool_rows(report, router_names(report)), set(range(3, 3 + len(router_names(report)))))
    out += [
        "",
        "floored gap vs mix: resolved-rate points above the best random mix of the pool's single models at "
        "equal cost; [95% bootstrap over resampled tasks, the same resamples in every pool]",
    ]
    out += apgr_lines(report)
    out += [f"note: {n}" for n in report.notes]
    return "\n".join(out) + "\n"


def apgr_lines(report: AnyPoolEvalReport) -> list[str]:
    """One line per router with a cost dial: its mean APGR per pool size and over every pool."""
    lines = []
    for name in dict.fromkeys(a.router for a in report.apgr):
        cells = [
            f"{'all' if a.pool_size is None else f'{a.pool_size} models'} {a.mean:.2f} ({a.n_pools} pools)"
            for a in report.apgr
            if a.router == name
        ]
        lines.append(f"APGR of {name}'s cost dial curve: " + ", ".join(cells))
    return lines


def render_markdown(report: AnyPoolEvalReport, plot_file: str | None = PLOT_PNG) -> str:
    """report.md: the averages, the differences, per group, per pool, definitions."""
    md = ["# Any-pool router on held-out tasks and held-out models", "", design_text(report) + ".", ""]
    if plot_file:
        md += [f"![gap per pool]({plot_file})", ""]
    md += [f"## Averaged over the {len(report.pools)} pool evaluations", ""]
    md += [*_markdown(_average_rows(report.averages), {1, 2, 3, 4, 5, 6, 7, 8}), ""]
    md += [*_markdown(_difference_rows(report.differences), {1, 2, 3}), ""]
    if report.apgr:
        md += [f"- {line}" for line in apgr_lines(report)]
        md += [
            "",
            "APGR: mean over pools of each pool's cost dial curve APGR (0.5: the straight line from the",
            "pool's cheapest to its strongest model; docs/evaluate-curves.md).",
            "",
        ]
    md += ["## Per held-out group", ""]
    for g in report.by_group:
        held = next(x.models for x in report.design.groups if x.name == g.group)
        md += [
            f"### {g.group}: {g.n_pools} pools; held out {', '.join(held)}; "
            f"trained with {g.train_models} models",
            "",
        ]
        md += [*_markdown(_average_rows(g.averages), {1, 2, 3, 4, 5, 6, 7, 8}), ""]
        md += [*_markdown(_difference_rows(g.differences), {1, 2, 3}), ""]
    names = router_names(report)
    md += [
        "## Per pool",
        "",
        "Floored gap vs mix in points [95% CI]; held-out models marked *; c: the router costs less than",
        "every single model of the pool, and is compared with the cheapest one.",
        "",
    ]
    md += [*_markdown(_pool_rows(report, names), set(range(3, 3 + len(names)))), ""]
    md += [
        "| group | pool | oracle is held out | "
        + " | ".join(f"{n} ->held-out" for n in names)
        + " | verdicts |"
    ]
    md += ["|---|---|---:|" + "---:|" * len(names) + "---|"]
    for p in report.pools:
        verdicts = "; ".join(f"{n}: {verdict(g)}" for n, g in p.floored_gaps.items())
        md.append(
            f"| {p.group} | {p.pool.name} | {100 * p.held_out_oracle_share:.1f}% | "
            + " | ".join(f"{100 * p.held_out_pick_share[n]:.1f}%" for n in names)
            + f" | {verdicts} |"
        )
    if report.notes:
        md += ["", "## Notes", ""] + [f"- {n}" for n in report.notes]
    md += [
        "",
        "## Definitions",
        "",
        "floored gap vs mix: a router's resolved rate minus that of the best random mix of the pool's single",
        "models costing no more (`evaluate`'s gap vs mix), in points, on every task of the pool's table;",
        "each task is routed once per fold seed by routers that never trained on it, and the any-pool",
        "router never trained with the group's models (it knows them only by their capability rows on the",
        "train folds). A router costing less than every single model of a pool is compared with the",
        "cheapest one (no credit for the saving; `evaluate` leaves that gap undefined).",
        "Fixed-pool routers are trained on that pool alone, on the same train folds. Averages weigh",
        "every pool evaluation equally. 95% CI: percentile bootstrap over the tasks "
        f"({report.design.resamples} resamples, the",
        "same resampled tasks in every pool and for every router, each pool's frontier rebuilt per",
        "resample); pools, folds and fitted routers are not resampled. sd seeds: standard deviation over",
        "fold seeds; sd pools: over pool evaluations. ->held-out: share of decisions on a held-out model.",
        "",
    ]
    return "\n".join(md)
