"""The cross-harness section of `evaluate`'s terminal output and report.md (`--test-table`, `--calibrate`)."""

from __future__ import annotations

from router_train.evaluate.cross_harness_model import CalibrationStep, CrossHarness
from router_train.scoring.vs_mix import Gap, verdict

CALIBRATION_PNG = "calibration.png"
"""File name of the `--calibrate` curve plot, beside report.md."""

GAP_COLUMNS = (
    "router",
    "in-harness (TRAIN on TRAIN)",
    "cross-harness (TRAIN on TEST)",
    "TEST resolved",
    "TEST $/task",
)


def _pts(gap: Gap) -> str:
    """A gap in points with its interval (`verdict`'s numbers, without the words)."""
    if gap.mean is None:
        return "cheaper than every model"
    ci = "" if gap.low is None or gap.high is None else f" [{gap.low:+.1f}, {gap.high:+.1f}]"
    return f"{gap.mean:+.1f}{ci}"


def head(x: CrossHarness) -> list[str]:
    """The sentences above the tables."""
    return [
        f"cross-harness: fitted on the table's outcomes of each fold's train tasks, judged on {x.test_table} "
        f"(sha256 {x.test_sha256[:12]}) outcomes of the held-out tasks; {x.n_tasks} tasks, oracle labels "
        f"agree on {100 * x.label_agreement:.1f}% of them",
        f"TEST's oracle: {verdict(x.oracle_gap)}; TEST's mix frontier: "
        + " -> ".join(f"{p.model} (${p.cost:.3f}, {100 * p.resolved:.1f}%)" for p in x.frontier),
    ]


def gap_rows(x: CrossHarness) -> list[list[str]]:
    """Per fitted router: in-harness and cross-harness gap vs the mix, points [95% paired bootstrap]."""
    return [
        [
            r.name,
            _pts(r.in_harness),
            _pts(r.cross_harness),
            f"{100 * r.cross_resolved:.1f}%",
            f"{r.cross_cost:.3f}",
        ]
        for r in x.routers
    ]


def calibration_columns(x: CrossHarness) -> list[str]:
    return ["router", *(f"N={s.n} ({s.n_scored} scored)" for s in x.calibration)]


def calibration_rows(x: CrossHarness) -> list[list[str]]:
    """Per router, per N: calibrated gap (uncalibrated on the same tasks)."""
    if not x.calibration:
        return []
    names = [r.name for r in x.calibration[0].routers]

    def cell(step: CalibrationStep, name: str) -> str:
        r = next(r for r in step.routers if r.name == name)
        return f"{_pts(r.gap_vs_mix)} (uncal. {_pts(r.uncalibrated)})"

    rows = [[n, *(cell(s, n) for s in x.calibration)] for n in names]
    rows.append(["(oracle)", *(_pts(s.oracle_gap) for s in x.calibration)])
    return rows


CALIBRATION_NOTE = (
    "calibrate N: per fit, the router re-estimates each model's mean cost, resolve rate and oracle-label "
    "share (IRT: abilities) on TEST's outcomes of the first N held-out tasks (the fold seed's seeded-hash "
    "order), then routes the rest; those N tasks are not scored (each task pooled over the fold seeds where "
    "it is scored); uncal.: the same router without re-estimation on the same tasks"
)


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[j]) for r in rows) for j in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    return [lines[0], "  ".join("-" * w for w in widths), *lines[1:]]


def cross_harness_terminal(x: CrossHarness) -> list[str]:
    """The terminal's section: the two gaps side by side, then the calibration curve."""
    out = [*head(x), *_table([list(GAP_COLUMNS), *gap_rows(x)])]
    if x.calibration:
        out += ["", CALIBRATION_NOTE, *_table([calibration_columns(x), *calibration_rows(x)])]
    return out


def cross_harness_markdown(x: CrossHarness, plot_file: str | None) -> list[str]:
    """report.md's section."""
    md = ["## Cross-harness", "", *(h + "." for h in head(x)), ""]
    md += ["| " + " | ".join(GAP_COLUMNS) + " |", "|---|---|---|---:|---:|"]
    md += ["| " + " | ".join(r) + " |" for r in gap_rows(x)]
    md += [
        "",
        "Gaps vs the mix in points [95% paired bootstrap over tasks], each on its own harness's "
        "single models and frontier.",
        "",
    ]
    md += ["Single models on TEST:", "", "| model | $/task | resolved |", "|---|---:|---:|"]
    md += [f"| {p.model} | {p.cost:.4f} | {100 * p.resolved:.1f}% |" for p in x.single_models]
    md.append("")
    if x.calibration:
        md += ["### Calibration on the user's harness (`--calibrate`)", "", CALIBRATION_NOTE + ".", ""]
        if plot_file:
            md += [f"![calibration curve]({plot_file})", ""]
        cols = calibration_columns(x)
        md += ["| " + " | ".join(cols) + " |", "|---|" + "---|" * (len(cols) - 1)]
        md += ["| " + " | ".join(r) + " |" for r in calibration_rows(x)]
        md.append("")
    return md
