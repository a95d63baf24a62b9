"""The evaluation report: one pydantic model, rendered as JSON, Markdown and a terminal table.

Contract of `report.json` for scripts (version 2): `evaluations` is a list; the first evaluation covers
every evaluated task (all of them under cross-validation), later ones cover the tasks an external
router (a checkpoint's unseen tasks, a traces file's tasks) could be compared on. Each evaluation's
`routers` entries carry `name`, `n_tasks`, `in_sample` and `gap_vs_mix: {mean, low, high}` in points
(plus `by_fold_seed` and `sd` under cross-validation), next to every metric under `metrics`. Each
evaluation's `oracle_noise` is `router_oracle.analysis.noise.NoiseEstimate` on its own tasks (the schema of
`router-oracle stats --json`'s `noise`): `headroom_points` is the oracle row's `gap_vs_mix.mean` (up
to rounding), `noise.noise_points` the part of it rollout noise alone would produce (`upper`: counting
all run-to-run disagreement as noise); where no model was measured twice, `noise` and `upper` are null
and `unavailable` says why.

Curves (cross-validation only; null otherwise, an addition older readers can ignore): each learned
router that scores models (`local-grpo` and any other local config, `tfidf-logreg`,
`tfidf-logreg(balanced)`, `tfidf-knn(k=10)`) gains `curve`, a list of operating points of its cost
dial, each `{target_share, target_cost, dial, cost_per_task, resolved, gap_vs_mix, pgr}` (the dial of
each point chosen on each fit's train tasks to hit the target cost there; cost and resolved measured
out of sample; `gap_vs_mix` in points; `pgr` a `{mean, low, high}`), and `curve_metrics`: `apgr`,
`cpt50`, `cpt80` (shares of the strongest single model's cost; null mean: not reached) and
`area_vs_mix` (points), each `{mean, low, high}` with a 95% paired bootstrap over tasks. The first
evaluation's `curves` gives the cost range (`cheapest`, `strongest` single model), the target shares
and the reference curves (`oracle`, `mix-frontier`, `random-line`). Definitions:
`router_train.evaluate.curves`; the manual: docs/evaluate-curves.md.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Literal

from pydantic import Field

from router_oracle.analysis.noise import NoiseEstimate, headroom_sentence
from router_oracle.frontier import Mix, ModelPoint
from router_oracle.infra.frozen_model import FrozenModel
from router_oracle.infra.report_numbers import EPS
from router_train.evaluate.cross_harness_model import CrossHarness
from router_train.evaluate.cross_harness_text import (
    CALIBRATION_PNG,
    cross_harness_markdown,
    cross_harness_terminal,
)
from router_train.evaluate.curves import CurveMetrics, CurvePoint, CurveStat, CurveSummary
from router_train.evaluate.objectives import ObjectivePoint, objective_table
from router_train.scoring.calibration import RouterCalibration
from router_train.scoring.decisions import UNPARSEABLE, SourceKind
from router_train.scoring.metrics import RouterMetrics
from router_train.scoring.vs_mix import Gap, verdict

PLOT_PNG = "cost_vs_resolved.png"
"""File name of the plot, beside report.md (which links it)."""

CURVES_PNG = "curves.png"
"""File name of the cost dial curves plot (cross-validation only)."""


class TableInfo(FrozenModel):
    """The oracle table evaluated against."""

    file: str
    """File name of the table (no directory, so reports compare across machines)."""
    sha256: str
    """Hex sha256 of the table file's bytes."""
    pool: list[str]
    """Pool model ids, in pool order."""
    n_tasks: int
    """Tasks in the whole table."""
    path: str | None = Field(default=None, exclude=True)
    """The table's path as the user gave it, for messages (not written: reports compare across
    machines); None: not read from a file."""


class Design(FrozenModel):
    """How routers that learn were kept off the tasks they are scored on."""

    mode: Literal["split", "cross-validation"]
    """`split`: the env's one held-out split; `cross-validation`: K folds over every task, repeated."""
    split: Literal["train", "eval", "all"] | None = None
    """Split mode: the split evaluated (learned routers are fitted on the train split)."""
    eval_fraction: float | None = None
    """Split mode: held-out fraction of the env's split rule."""
    split_seed: int | None = None
    """Split mode: seed of the env's split rule."""
    folds: int | None = None
    """Cross-validation: number of folds, stratified by oracle label (`router_frontier_rl.split`)."""
    fold_seeds: list[int] = Field(default_factory=list)
    """Cross-validation: one complete K-fold pass per seed; each task is routed once per seed."""


class RouterRow(FrozenModel):
    """One router's result on one evaluation's tasks."""

    name: str
    """Row label."""
    kind: SourceKind
    """baseline, local (trained by evaluate itself), checkpoint or traces."""
    source: str
    """File behind the decisions (checkpoint or traces file name), empty otherwise."""
    n_tasks: int
    """Tasks it was scored on (those of its evaluation)."""
    in_sample: bool
    """True when it was scored on tasks it learned from (`--allow-in-sample`, `--split train|all`)."""
    gap_vs_mix: Gap
    """The headline: points above (+) or below (-) the best random mix of single models at equal cost."""
    metrics: RouterMetrics
    """All metrics on the evaluation's tasks (rates as fractions)."""
    recorded: dict[str, float]
    """Means of what the source recorded itself (vf-eval rewards and metrics); empty otherwise."""
    curve: list[CurvePoint] | None = None
    """Cross-validation, routers that score models: its cost dial's operating points, out of sample."""
    curve_metrics: CurveMetrics | None = None
    """Cross-validation, routers that score models: APGR, CPT50/80, area vs mix of `curve`."""


class Evaluation(FrozenModel):
    """Routers compared on one set of tasks, against the single models measured on the same tasks."""

    name: str
    """`all` (the design's tasks) or what an external router's tasks are (e.g. `covered by traces X`)."""
    n_tasks: int
    """Tasks scored."""
    n_train_tasks: int | None
    """Split mode: train-split tasks the learned routers were fitted on; None under cross-validation."""
    oracle_distribution: dict[str, float]
    """Oracle label -> share of the tasks."""
    solvable_tasks: int
    """Tasks some model resolved."""
    single_models: list[ModelPoint]
    """Each pool model as an always-this-model router on these tasks, in pool order."""
    frontier: list[ModelPoint]
    """Corners of the random-mix frontier on these tasks, cheapest first (flat after the last one)."""
    routers: list[RouterRow]
    """Baselines first, then routers trained by evaluate, then checkpoints, then traces."""
    oracle_noise: NoiseEstimate
    """The oracle's headroom above the mix on these tasks and the part rollout noise alone would produce
    (`router_oracle.analysis.noise.estimate_noise`; disagreement measured on all the table's tasks)."""
    curves: CurveSummary | None = None
    """Cross-validation, first evaluation: the curves' cost range and reference curves."""
    objectives: dict[str, list[ObjectivePoint]] | None = None
    """Cross-validation, first evaluation: per scoring router (and `(floor)`, the mix alone) what is
    served at each objective, the router where its inner estimate backs its point else the floor, vs the
    mix there (`evaluate.objectives`)."""
    calibration: list[RouterCalibration] = Field(default_factory=list)
    """First evaluation: each router that predicts resolve probabilities (`irt`), its Brier score and ECE
    per pool model on the tasks it routed (pooled over folds and fold seeds; `scoring.calibration`)."""


class EvalReport(FrozenModel):
    """A whole evaluation: everything report.md, the terminal table and the plot show."""

    version: Literal[2] = 2
    """report.json format version, bumped on any change an older reader would misinterpret (2 added
    cross-validation, `evaluations` and the per-router `gap_vs_mix`)."""
    table: TableInfo
    """The table."""
    design: Design
    """Split or cross-validation, and its parameters."""
    seed: int
    """Seed of the random baseline, the classifiers and the bootstrap."""
    evaluations: list[Evaluation]
    """The first covers every evaluated task; others each cover an external router's tasks."""
    notes: list[str]
    """Caveats a reader must see (in-sample rows, missing tasks, what each fitted router chose)."""
    cross_harness: CrossHarness | None = None
    """`--test-table`: the fitted routers judged on another harness's outcomes (`--calibrate` steps);
    absent from report.json without it."""

    @property
    def main(self) -> Evaluation:
        return self.evaluations[0]


def dumps_report(report: EvalReport) -> str:
    """Canonical JSON text of a report (byte-stable for the same inputs and seed)."""
    # Without --test-table the file is what it was before `cross_harness` existed.
    doc = report.model_dump(mode="json", exclude={"cross_harness"} if report.cross_harness is None else None)
    return json.dumps(doc, indent=1, ensure_ascii=False, sort_keys=False) + "\n"


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def _num(x: float | None, digits: int = 3) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"


def _mix(mix: Mix | None) -> str:
    if mix is None:
        return "n/a"
    return " + ".join(f"{100 * w:.0f}% {m}" for m, w in sorted(mix.weights.items(), key=lambda kv: -kv[1]))


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
    "extra $/task",
    "vs random mix",
)


def row_label(row: RouterRow) -> str:
    """The row name, marked when the router was scored on tasks it learned from."""
    return f"{row.name} (in-sample)" if row.in_sample else row.name


def _cells(row: RouterRow) -> list[str]:
    m = row.metrics
    return [
        row_label(row),
        _pct(m.resolved_rate),
        _num(m.mean_cost, 3),
        _num(m.total_cost, 2),
        _num(m.resolved_per_dollar, 2),
        _pct(m.accuracy),
        _pct(m.opt_sel),
        _num(m.kappa, 3),
        _num(m.tvd, 3),
        _pct(m.unparseable_rate),
        overspend_text(m.frontier.saving_vs_mix if m.frontier else None),
        verdict(row.gap_vs_mix),
    ]


def overspend_text(saving: float | None) -> str:
    """The `extra $/task` cell: what the row pays per task over the cheapest random mix resolving as much
    (`vs_mix.overspend`: minus the saving vs the mix), `0` when nothing, `-` when no mix resolves as much."""
    if saving is None:
        return "-"
    return f"+{-saving:.3f}" if saving < -EPS else "0"


def design_text(report: EvalReport) -> str:
    """One sentence: the tasks and how learned routers were kept off them."""
    d, t = report.design, report.table
    head = f"table {t.file} (sha256 {t.sha256[:12]}, {t.n_tasks} tasks)"
    if d.mode == "cross-validation":
        k = d.folds or 0
        seeds = ",".join(str(s) for s in d.fold_seeds)
        return (
            f"{head}; {k}-fold cross-validation (folds stratified by oracle label) x fold seeds {seeds}: "
            f"each task routed once per fold seed by routers fitted on the other {k - 1} folds; "
            f"seed {report.seed}"
        )
    main = report.main
    return (
        f"{head}; split {d.split} (eval_fraction {d.eval_fraction}, split_seed {d.split_seed}): "
        f"{main.n_tasks} tasks, {main.solvable_tasks} solvable; learned routers fitted on "
        f"{main.n_train_tasks} train tasks; seed {report.seed}"
    )


def noise_line(ev: Evaluation, *, markdown: bool = False) -> str:
    """One line beside the oracle row, e.g. `oracle +11.3 points above the mix (71.3% at the oracle's
    cost), of which about 5.7 (...) expected from rollout noise alone (method: ...)`, or `...; rollout
    noise not measured (no model run twice)`."""
    text = headroom_sentence(ev.oracle_noise, show_mix=True)
    if ev.oracle_noise.noise is None:  # says it is not measured; the reason is in `unavailable`
        return f"{text[0].upper()}{text[1:]}." if markdown else text
    if markdown:
        return f"{text[0].upper()}{text[1:]} (method: `router-oracle stats --help`)."
    return f"{text} (method: router-oracle stats --help)"


def _evaluation_head(ev: Evaluation, first: bool) -> str:
    if first:
        return f"{ev.n_tasks} tasks, {ev.solvable_tasks} solvable"
    return f"{ev.name}: {ev.n_tasks} tasks, {ev.solvable_tasks} solvable (every row scored on these tasks)"


def _frontier_text(ev: Evaluation) -> str:
    return " -> ".join(f"{p.model} (${p.cost:.3f}, {_pct(p.resolved)})" for p in ev.frontier)


def _stat_text(x: CurveStat, *, share: bool = False, points: bool = False) -> str:
    def one(v: float | None) -> str:
        if v is None:
            return "not reached" if share else "n/a"
        if share:
            return f"{100 * v:.0f}%"
        return f"{v:+.1f}" if points else f"{v:.2f}"

    if x.mean is None and not share:
        return "n/a"
    ci = "" if x.low is None and x.high is None else f" [{one(x.low)}, {one(x.high)}]"
    return one(x.mean) + ci


CURVE_COLUMNS = (
    "router",
    "APGR",
    "CPT50 (% of strongest $)",
    "CPT80",
    "area vs mix (pts)",
    "extra $/task (mean of points)",
    "dial points refused (share of cost range)",
)


def curve_rows(ev: Evaluation) -> list[list[str]]:
    """The curve-metrics table of an evaluation: each router with a curve, then the references."""
    rows: list[tuple[str, CurveMetrics, str]] = [
        (row_label(r), r.curve_metrics, refused_text(r.curve or []))
        for r in ev.routers
        if r.curve_metrics is not None
    ]
    if ev.curves is not None:
        rows += [(f"({ref.name})", ref.metrics, "") for ref in ev.curves.references]
    return [
        [
            name,
            _stat_text(m.apgr),
            _stat_text(m.cpt50, share=True),
            _stat_text(m.cpt80, share=True),
            _stat_text(m.area_vs_mix, points=True),
            "n/a" if m.overspend is None else f"{m.overspend:.3f}",
            refused,
        ]
        for name, m, refused in rows
    ]


def _refused_mark(p: CurvePoint) -> str:
    """` (refused k/N)` after a point most fits refuse a budget or dial at, else nothing."""
    if p.fits is None or p.refused_fits is None or 2 * p.refused_fits <= p.fits:
        return ""
    return f" (refused {p.refused_fits}/{p.fits})"


def refused_text(curve: Sequence[CurvePoint]) -> str:
    """The curve's points a budget or dial is refused at in most fits (`CurvePoint.refused_fits`), by
    target share: `none`, `0, 0.1, 1`, or `n/a` without estimates (`--no-safe-point`)."""
    if not curve or any(p.fits is None or p.refused_fits is None for p in curve):
        return "n/a"
    refused = [f"{p.target_share:g}" for p in curve if 2 * (p.refused_fits or 0) > (p.fits or 0)]
    return ", ".join(refused) if refused else "none"


def curve_head(ev: Evaluation) -> str:
    """One sentence: the cost range the curves are judged over."""
    assert ev.curves is not None
    w, s = ev.curves.cheapest, ev.curves.strongest
    return (
        f"cost dial curves, {len(ev.curves.target_shares)} operating points from {w.model} (${w.cost:.3f}, "
        f"{_pct(w.resolved)}) to {s.model} (${s.cost:.3f}, {_pct(s.resolved)}), each dial chosen on the "
        "fit's train tasks; 95% paired bootstrap"
    )


def render_terminal(report: EvalReport) -> str:
    """Fixed-width tables for the terminal, one per evaluation."""
    out = [design_text(report)]
    for i, ev in enumerate(report.evaluations):
        rows = [list(COLUMNS)] + [_cells(r) for r in ev.routers]
        widths = [max(len(r[j]) for r in rows) for j in range(len(COLUMNS))]

        def line(cells: list[str], widths: list[int] = widths) -> str:
            return "  ".join(
                c.ljust(w) if j in (0, len(COLUMNS) - 1) else c.rjust(w)
                for j, (c, w) in enumerate(zip(cells, widths, strict=True))
            ).rstrip()

        out += ["", _evaluation_head(ev, i == 0), line(rows[0]), "  ".join("-" * w for w in widths)]
        out += [line(r) for r in rows[1:]]
        out.append(noise_line(ev))
        out.append("mix frontier (best random mix of single models): " + _frontier_text(ev))
        if ev.curves is not None:
            crows = [list(CURVE_COLUMNS), *curve_rows(ev)]
            cw = [max(len(r[j]) for r in crows) for j in range(len(CURVE_COLUMNS))]
            out += ["", curve_head(ev)]
            out += ["  ".join(c.ljust(w) for c, w in zip(r, cw, strict=True)).rstrip() for r in crows]
        if ev.objectives:
            out += ["", *objective_table(ev.objectives)]
        for rc in ev.calibration:
            out += ["", f"{rc.router}: calibration of its predicted resolve probability (held-out tasks)"]
            out += [
                f"  {m.model}: Brier {m.brier:.4f}, ECE {m.ece:.3f} (mean predicted {m.mean_predicted:.3f}, "
                f"observed {m.observed:.3f}, n {m.n})"
                for m in rc.models
            ]
    if report.cross_harness is not None:
        out += ["", *cross_harness_terminal(report.cross_harness)]
    out.append("")
    out.append(
        "vs random mix: resolved-rate points above the best random mix of single models at equal cost, "
        "[95% paired bootstrap over tasks]"
        + (", sd over fold seeds" if len(report.design.fold_seeds) > 1 else "")
    )
    out += [f"note: {n}" for n in report.notes]
    return "\n".join(out) + "\n"


def _markdown_evaluation(ev: Evaluation, pool: list[str], first: bool) -> list[str]:
    md = [f"## {'All evaluated tasks' if first else ev.name}", "", _evaluation_head(ev, first) + ".", ""]
    # Router name and verdict left-aligned, the numbers between them right-aligned (as in the terminal).
    align = ["---"] + ["---:"] * (len(COLUMNS) - 2) + ["---"]
    md += ["| " + " | ".join(COLUMNS) + " |", "|" + "|".join(align) + "|"]
    md += ["| " + " | ".join(_cells(r)) + " |" for r in ev.routers]
    md += ["", noise_line(ev, markdown=True)]
    md += ["", "Single models on these tasks:", ""]
    md += ["| model | $/task | resolved |", "|---|---:|---:|"]
    md += [f"| {p.model} | {p.cost:.4f} | {_pct(p.resolved)} |" for p in ev.single_models]
    md += ["", f"Frontier corners, cheapest first: {_frontier_text(ev)}.", ""]
    if ev.curves is not None:
        md += ["### Cost dial curves", "", curve_head(ev) + ".", ""]
        md += ["| " + " | ".join(CURVE_COLUMNS) + " |", "|" + "---|" * len(CURVE_COLUMNS)]
        md += ["| " + " | ".join(r) + " |" for r in curve_rows(ev)]
        md += ["", "| router | " + " | ".join(f"{100 * x:.0f}%" for x in ev.curves.target_shares) + " |"]
        md.append("|---|" + "---:|" * len(ev.curves.target_shares))
        for r in ev.routers:
            if r.curve:
                cells = [f"${p.cost_per_task:.3f} {_pct(p.resolved)}{_refused_mark(p)}" for p in r.curve]
                md.append(f"| {row_label(r)} | " + " | ".join(cells) + " |")
        md.append("")
    if ev.objectives:
        md += ["### Objectives: router or floor", "", "```", *objective_table(ev.objectives), "```", ""]
    md += [
        "| router | reward | best-rate pick | mix at same cost | its resolved | cheapest mix as good "
        "| its $/task |"
    ]
    md += ["|---|---:|---:|---|---:|---|---:|"]
    for r in ev.routers:
        m, f = r.metrics, r.metrics.frontier
        if f is None:
            continue
        md.append(
            f"| {row_label(r)} | {m.mean_reward:+.3f} | {_pct(m.in_best_rate)} | "
            f"{_mix(f.mix_at_same_cost)} | "
            f"{_pct(f.mix_at_same_cost.resolved if f.mix_at_same_cost else None)} | "
            f"{_mix(f.mix_at_same_resolved) if f.mix_at_same_resolved else 'no mix resolves as much'} | "
            f"{_num(f.mix_at_same_resolved.cost if f.mix_at_same_resolved else None, 4)} |"
        )
    md += calibration_lines(ev)
    if not first:
        return [*md, ""]
    md += ["", "### Confusion matrices (rows: oracle label, columns: router label; tasks)", ""]
    labels = [*pool, UNPARSEABLE]
    for r in ev.routers:
        if r.kind == "baseline" and r.name.startswith(("always:", "oracle")):
            continue  # trivially one column
        # `<unparseable>` would vanish as an HTML tag in rendered Markdown.
        heads = [lab.strip("<>") for lab in labels]
        md += [f"#### {row_label(r)}", "", "| oracle \\ router | " + " | ".join(heads) + " |"]
        md.append("|---|" + "---:|" * len(labels))
        for o in pool:
            row = r.metrics.confusion.get(o, {})
            md.append(f"| {o} | " + " | ".join(f"{row.get(lab, 0.0):.4g}" for lab in labels) + " |")
        if r.recorded:
            md += ["", "Recorded by the source: " + ", ".join(f"{k} {v:g}" for k, v in r.recorded.items())]
        md.append("")
    return md


def calibration_lines(ev: Evaluation) -> list[str]:
    """report.md's calibration table (none when no router predicts probabilities)."""
    if not ev.calibration:
        return []
    md = ["", "### Calibration of the predicted resolve probability (held-out tasks)", ""]
    md += [
        "| router | model | n | mean predicted | observed | Brier | ECE |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for rc in ev.calibration:
        md += [
            f"| {rc.router} | {m.model} | {m.n} | {m.mean_predicted:.3f} | {m.observed:.3f} | {m.brier:.4f} "
            f"| {m.ece:.3f} |"
            for m in rc.models
        ]
    return md


def render_markdown(report: EvalReport, plot_file: str | None = PLOT_PNG) -> str:
    """report.md: a table per evaluation, the frontier, each router's position and confusion matrix."""
    md = ["# Router evaluation", "", design_text(report) + ".", ""]
    if plot_file:
        md += [f"![cost vs resolved]({plot_file})", ""]
        if report.main.curves is not None:
            md += [f"![cost dial curves]({CURVES_PNG})", ""]
    for i, ev in enumerate(report.evaluations):
        md += _markdown_evaluation(ev, report.table.pool, i == 0)
    if report.cross_harness is not None:
        md += cross_harness_markdown(report.cross_harness, CALIBRATION_PNG if plot_file else None)
    if report.notes:
        md += ["## Notes", ""] + [f"- {n}" for n in report.notes] + [""]
    cv = report.design.mode == "cross-validation"
    md += [
        "## Definitions",
        "",
        "Tasks weigh equally; with several decisions per task (samples, fold seeds) each counts 1/k.",
        "resolved: the chosen model's measured resolve rate on the task. $/task: its mean measured cost.",
        "Unparseable (or missing) decisions resolve nothing and cost nothing; `unparse` shows their share.",
        "acc: share of decisions equal to the oracle (best resolve rate, then cheapest).",
        "Opt.Sel: the same on tasks some model resolved, i.e. picked the cheapest model that resolved it.",
        "kappa: Cohen's kappa of router vs oracle labels. TVD: total variation distance of their label",
        "distributions. vs random mix: resolved rate minus that of the best random mix of single models",
        "costing no more (a mix picks model i with fixed probability, ignoring the task), in points, with",
        "a 95% paired-bootstrap interval over resampled tasks. `beats mix` / `dominated`: the interval is",
        "above / below 0; `~ mix`: it contains 0, so these tasks cannot tell the router from a random mix.",
        "Rollout noise: agent runs are draws, and the oracle takes each task's best recorded rollout, so",
        "part of its headroom is luck no router can win (it sees the task, not the dice). The estimate is",
        "the headroom of a pool whose models differ only by run-to-run noise, measured on models run",
        "twice; in brackets, counting all their disagreement (scaffold changes too) as noise.",
    ]
    if report.main.calibration:
        md += [
            "Calibration: a router's predicted resolve probability of each model against the model's",
            "measured resolve rate on the routed tasks; Brier: their mean squared difference; ECE: over 10",
            "equal-width probability bins, the bin-weighted |mean predicted - mean observed|.",
        ]
    if report.main.curves is not None:
        md += [
            "Curves: each scoring router routes argmax(score - dial x model's mean train cost); each",
            "point's dial is chosen on the fit's train tasks to hit a target cost there. PGR: share of the",
            "cheapest-to-strongest gap recovered; APGR: its mean over that cost range (0.5: the straight",
            "line between them); CPT50/80: lowest cost reaching PGR 0.5/0.8 as a share of the strongest",
            "model's cost; area vs mix: mean points above the mix frontier over the range",
            "(docs/evaluate-curves.md). The references: oracle (dial on the measured outcomes, in-sample),",
            "the mix frontier and the straight line.",
        ]
    if cv:
        md += [
            "Cross-validation: in each fold every learned router (and any statistic it uses) is fitted on",
            "the other folds only, so each task is routed once per fold seed by a router that never saw it;",
            "`sd` is the standard deviation of the gap over fold seeds.",
        ]
    md.append("")
    return "\n".join(md)
