"""The dashboard's tables: per model, the off-policy estimates, the checkpoints. Figures the CLI prints are
written as it prints them, with the exact value in `data-value` (and `data-low` / `data-high`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape

from router_train.dashboard import svg
from router_train.dashboard.data import Checkpoint
from router_train.offpolicy.estimators import Interval, PolicyEstimate
from router_train.offpolicy.from_log import DIGITS, interval_cell
from router_train.offpolicy.summary import ModelSummary

TIME = "%Y-%m-%d %H:%M:%S"
"""How a time is written (UTC)."""


def _num(field: str, value: float | int | None, text: str) -> str:
    raw = "" if value is None else repr(value)
    return f'<td data-field="{field}" data-value="{raw}">{escape(text)}</td>'


def models_table(rows: Sequence[ModelSummary], colour: Mapping[str, str]) -> str:
    """`router-train feedback`'s per-model table."""
    out = [
        '<table id="models"><tr><th>model</th><th>tasks</th><th>explored</th><th>outcomes</th>'
        "<th>resolved</th><th>mean cost (USD)</th></tr>"
    ]
    r_digits, c_digits = DIGITS["resolved"], DIGITS["cost"]
    for r in rows:
        key = svg.swatch(colour.get(r.model, "#555"))
        rate = "-" if r.resolved is None else f"{r.resolved:.{r_digits}f}"
        cost = "-" if r.mean_cost is None else f"{r.mean_cost:.{c_digits}f}"
        out.append(
            f'<tr data-model="{escape(r.model)}"><td>{key} {escape(r.model)}</td>'
            + _num("tasks", r.tasks, str(r.tasks))
            + _num("explored", r.explored, str(r.explored))
            + _num("outcomes", r.outcomes, str(r.outcomes))
            + _num("resolved", r.resolved, rate)
            + _num("mean_cost", r.mean_cost, cost)
            + "</tr>"
        )
    if not rows:
        out.append('<tr><td colspan="6" class="txt">No task decided yet.</td></tr>')
    return "".join(out) + "</table>"


def _interval(estimator: str, iv: Interval, digits: int) -> str:
    return (
        f'<td data-estimator="{estimator}" data-value="{iv.value!r}" data-low="{iv.low!r}" '
        f'data-high="{iv.high!r}">{escape(interval_cell(iv, digits))}</td>'
    )


def estimates_table(estimates: Sequence[PolicyEstimate]) -> str:
    """`router-train feedback`'s estimates table: per policy, matched tasks, ESS, and per metric the
    IPS, SNIPS and DR estimates with their 95% intervals (or why there are none)."""
    out = [
        '<table id="estimates"><tr><th>policy</th><th>matched</th><th>ESS</th><th class="txt">metric</th>'
        "<th>IPS [95%]</th><th>SNIPS [95%]</th><th>DR [95%]</th></tr>"
    ]
    for e in estimates:
        lead = (
            f"<td>{escape(e.policy)}</td>"
            + _num("matched", e.matched, str(e.matched))
            + _num("ess", e.ess, f"{e.ess:.1f}")
        )
        policy = escape(e.policy)
        if e.warning is not None or e.resolved is None:
            out.append(
                f'<tr data-policy="{policy}" data-metric="warning">{lead}'
                f'<td class="txt warn" colspan="4">warning: {escape(str(e.warning))}</td></tr>'
            )
            continue
        for metric, est in (("resolved", e.resolved), ("cost", e.cost)):
            if est is None:
                cells = '<td class="txt" colspan="3">no priced outcomes</td>'
            else:
                digits = DIGITS[metric]
                cells = "".join(
                    _interval(n, iv, digits)
                    for n, iv in (("ips", est.ips), ("snips", est.snips), ("dr", est.dr))
                )
            row = f'<tr data-policy="{policy}" data-metric="{metric}">'
            out.append(f'{row}{lead}<td class="txt">{metric}</td>{cells}</tr>')
            lead = "<td></td><td></td><td></td>"
    if not estimates:
        out.append(
            '<tr><td colspan="7" class="txt">No logged outcome with a propensity yet: no estimates.</td></tr>'
        )
    return "".join(out) + "</table>"


def checkpoints_table(rows: Sequence[Checkpoint]) -> str:
    """The checkpoints the decisions came from: sha256, tasks decided, first and last decision."""
    out = [
        '<table id="checkpoints"><tr><th class="txt">checkpoint sha256</th><th>tasks</th>'
        "<th>first decision (UTC)</th><th>last decision (UTC)</th><th></th></tr>"
    ]
    for c in rows:
        sha = escape(c.sha256) if c.sha256 is not None else "none (an LLM router, or an older serve)"
        out.append(
            f'<tr data-sha256="{escape(c.sha256 or "")}"><td class="txt mono">{sha}</td>'
            + _num("tasks", c.tasks, str(c.tasks))
            + "".join(f"<td>{'-' if t is None else t.strftime(TIME)}</td>" for t in (c.first, c.last))
            + f"<td>{'serving now' if c.serving else ''}</td></tr>"
        )
    if not rows:
        out.append('<tr><td colspan="5" class="txt">No decision yet.</td></tr>')
    return "".join(out) + "</table>"
