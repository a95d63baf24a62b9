"""The evaluation report: one pydantic model, rendered as JSON, Markdown and a terminal table."""

from __future__ import annotations

import json
from typing import Literal

from pydantic import BaseModel, ConfigDict

from router_oracle.frontier import Mix, ModelPoint
from router_train.evaluate.decisions import UNPARSEABLE, SourceKind
from router_train.evaluate.metrics import RouterMetrics

PLOT_PNG = "cost_vs_resolved.png"
"""File name of the plot, beside report.md (which links it)."""


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TableInfo(_Frozen):
    """The oracle table evaluated against."""

    file: str
    """File name of the table (no directory, so reports compare across machines)."""
    sha256: str
    """Hex sha256 of the table file's bytes."""
    pool: list[str]
    """Pool model ids, in pool order."""
    n_tasks: int
    """Tasks in the whole table."""


class SplitInfo(_Frozen):
    """Which tasks were evaluated, by the environment's split rule."""

    name: Literal["train", "eval", "all"]
    """The split evaluated."""
    eval_fraction: float
    """Held-out fraction of the split rule."""
    split_seed: int
    """Seed of the split rule."""
    n_tasks: int
    """Tasks evaluated."""
    n_train_tasks: int
    """Train-split tasks the learned baselines were fitted on (and the cheapest model was measured on)."""
    oracle_distribution: dict[str, float]
    """Oracle label -> share of the evaluated tasks."""
    solvable_tasks: int
    """Evaluated tasks some model resolved."""


class RouterRow(_Frozen):
    """One router's result."""

    name: str
    """Row label."""
    kind: SourceKind
    """baseline, checkpoint or traces."""
    source: str
    """File behind the decisions (checkpoint or traces file name), empty for baselines."""
    metrics: RouterMetrics
    """All metrics on the evaluated tasks."""
    recorded: dict[str, float]
    """Means of what the source recorded itself (vf-eval rewards and metrics); empty otherwise."""


class EvalReport(_Frozen):
    """A whole evaluation: everything report.md, the terminal table and the plot show."""

    version: Literal[1] = 1
    """report.json format version, bumped on any change an older reader would misinterpret."""
    table: TableInfo
    """The table."""
    split: SplitInfo
    """The evaluated tasks."""
    seed: int
    """Seed of the random baseline and the classifiers."""
    single_models: list[ModelPoint]
    """Each pool model as an always-this-model router, in pool order."""
    frontier: list[ModelPoint]
    """Corners of the random-mix frontier, cheapest first (flat after the last one)."""
    rows: list[RouterRow]
    """Every router evaluated: baselines first, then checkpoints, then traces."""
    notes: list[str]
    """Caveats a reader must see (in-sample evaluation, missing tasks)."""


def dumps_report(report: EvalReport) -> str:
    """Canonical JSON text of a report (byte-stable for the same inputs and seed)."""
    return json.dumps(report.model_dump(mode="json"), indent=1, ensure_ascii=False, sort_keys=False) + "\n"


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def _num(x: float | None, digits: int = 3) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"


def _mix(mix: Mix | None) -> str:
    if mix is None:
        return "n/a"
    return " + ".join(f"{100 * w:.0f}% {m}" for m, w in sorted(mix.weights.items(), key=lambda kv: -kv[1]))


def verdict(m: RouterMetrics) -> str:
    """One phrase: does a random mix of single models do as well for the same money?"""
    f = m.frontier
    if f is None:
        return "single model"
    if f.gap_vs_mix is None:
        return "cheaper than every model"
    pts = 100 * f.gap_vs_mix
    if f.gap_ci is None:
        if f.dominated:
            return f"dominated: {pts:+.1f} pts"
        return "on the frontier" if pts < 0.05 else f"beats mix: {pts:+.1f} pts"
    lo, hi = 100 * f.gap_ci[0], 100 * f.gap_ci[1]
    ci = f" [{lo:+.1f}, {hi:+.1f}]"
    # The words follow the interval, so a one-task difference on 100 tasks is not called a win.
    if lo > 0.05:
        return f"beats mix: {pts:+.1f} pts{ci}"
    if hi < -0.05:
        return f"dominated: {pts:+.1f} pts{ci}"
    if abs(pts) < 0.05 and hi - lo < 0.1:
        return "on the frontier"
    return f"~ mix: {pts:+.1f} pts{ci}"


COLUMNS = (
    "router",
    "resolved",
    "$/task",
    "total $",
    "res/$",
    "acc",
    "Opt.Sel",
    "kappa",
    "TVD",
    "unparse",
    "vs random mix",
)


def _cells(row: RouterRow) -> list[str]:
    m = row.metrics
    return [
        row.name,
        _pct(m.resolved_rate),
        _num(m.mean_cost, 3),
        _num(m.total_cost, 2),
        _num(m.resolved_per_dollar, 2),
        _pct(m.accuracy),
        _pct(m.opt_sel),
        _num(m.kappa, 3),
        _num(m.tvd, 3),
        _pct(m.unparseable_rate),
        verdict(m),
    ]


def _header(report: EvalReport) -> str:
    s = report.split
    return (
        f"table {report.table.file} (sha256 {report.table.sha256[:12]}), split {s.name} "
        f"(eval_fraction {s.eval_fraction}, split_seed {s.split_seed}): {s.n_tasks} tasks, "
        f"{s.solvable_tasks} solvable; learned baselines fitted on {s.n_train_tasks} train tasks; "
        f"seed {report.seed}"
    )


def render_terminal(report: EvalReport) -> str:
    """A fixed-width table for the terminal."""
    rows = [list(COLUMNS)] + [_cells(r) for r in report.rows]
    widths = [max(len(r[i]) for r in rows) for i in range(len(COLUMNS))]

    def line(cells: list[str]) -> str:
        return "  ".join(
            c.ljust(w) if i in (0, len(COLUMNS) - 1) else c.rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    out = [_header(report), "", line(rows[0]), "  ".join("-" * w for w in widths)]
    out += [line(r) for r in rows[1:]]
    out.append("")
    out.append("mix frontier (best random mix of single models): " + _frontier_text(report))
    out += [f"note: {n}" for n in report.notes]
    return "\n".join(out) + "\n"


def _frontier_text(report: EvalReport) -> str:
    return " -> ".join(f"{p.model} (${p.cost:.3f}, {_pct(p.resolved)})" for p in report.frontier)


def render_markdown(report: EvalReport, plot_file: str | None = PLOT_PNG) -> str:
    """report.md: the table, the frontier, each router's position and confusion matrix, and definitions."""
    s = report.split
    md = ["# Router evaluation", "", _header(report) + ".", ""]
    if plot_file:
        md += [f"![cost vs resolved]({plot_file})", ""]
    # Router name and verdict left-aligned, the numbers between them right-aligned (as in the terminal).
    align = ["---"] + ["---:"] * (len(COLUMNS) - 2) + ["---"]
    md += ["| " + " | ".join(COLUMNS) + " |", "|" + "|".join(align) + "|"]
    md += ["| " + " | ".join(_cells(r)) + " |" for r in report.rows]
    md += ["", "## Frontier of random mixes of single models", ""]
    md += ["| model | $/task | resolved |", "|---|---:|---:|"]
    md += [f"| {p.model} | {p.cost:.4f} | {_pct(p.resolved)} |" for p in report.single_models]
    md += ["", f"Frontier corners, cheapest first: {_frontier_text(report)}.", ""]
    md += ["## Routers against the frontier", ""]
    md += [
        "| router | reward | best-rate pick | mix at same cost | its resolved | cheapest mix as good "
        "| its $/task |"
    ]
    md += ["|---|---:|---:|---|---:|---|---:|"]
    for r in report.rows:
        m, f = r.metrics, r.metrics.frontier
        if f is None:
            continue
        md.append(
            f"| {r.name} | {m.mean_reward:+.3f} | {_pct(m.in_best_rate)} | {_mix(f.mix_at_same_cost)} | "
            f"{_pct(f.mix_at_same_cost.resolved if f.mix_at_same_cost else None)} | "
            f"{_mix(f.mix_at_same_resolved) if f.mix_at_same_resolved else 'no mix resolves as much'} | "
            f"{_num(f.mix_at_same_resolved.cost if f.mix_at_same_resolved else None, 4)} |"
        )
    md += ["", "## Confusion matrices (rows: oracle label, columns: router label; tasks)", ""]
    labels = [*report.table.pool, UNPARSEABLE]
    for r in report.rows:
        if r.kind == "baseline" and r.name.startswith(("always:", "cheapest:", "oracle")):
            continue  # trivially one column
        # `<unparseable>` would vanish as an HTML tag in rendered Markdown.
        heads = [lab.strip("<>") for lab in labels]
        md += [f"### {r.name}", "", "| oracle \\ router | " + " | ".join(heads) + " |"]
        md.append("|---|" + "---:|" * len(labels))
        for o in report.table.pool:
            row = r.metrics.confusion.get(o, {})
            md.append(f"| {o} | " + " | ".join(f"{row.get(lab, 0.0):.4g}" for lab in labels) + " |")
        if r.recorded:
            md += ["", "Recorded by the source: " + ", ".join(f"{k} {v:g}" for k, v in r.recorded.items())]
        md.append("")
    if report.notes:
        md += ["## Notes", ""] + [f"- {n}" for n in report.notes] + [""]
    md += [
        "## Definitions",
        "",
        f"Tasks weigh equally; with several samples per task each counts 1/k. {s.n_tasks} tasks evaluated.",
        "resolved: the chosen model's measured resolve rate on the task. $/task: its mean measured cost.",
        "Unparseable (or missing) decisions resolve nothing and cost nothing; `unparse` shows their share.",
        "acc: share of decisions equal to the oracle (best resolve rate, then cheapest).",
        "Opt.Sel: the same on tasks some model resolved, i.e. picked the cheapest model that resolved it.",
        "kappa: Cohen's kappa of router vs oracle labels. TVD: total variation distance of their label",
        "distributions. vs random mix: resolved rate minus that of the best random mix of single models",
        "costing no more (a mix picks model i with fixed probability, ignoring the task), in points, with",
        "a 95% paired-bootstrap interval over resampled tasks. `beats mix` / `dominated`: the interval is",
        "above / below 0; `~ mix`: it contains 0, so these tasks cannot tell the router from a random mix.",
        "",
    ]
    return "\n".join(md)
