"""The dashboard's frontier section as HTML: a headline on the regret so far (a difference claimed only
when its interval excludes zero), a chart of the frontier measured on this traffic (each model's rate and
cost with intervals, the mix line, the objective, where serving lands, the learner's belief) and a table."""

from __future__ import annotations

import math
from collections.abc import Mapping
from html import escape

from router_train.dashboard.frontier import Band, Frontier
from router_train.dashboard.svg import nice_ticks

WIDTH, HEIGHT = 640, 300
LEFT, RIGHT, TOP, BOTTOM = 56, 16, 12, 40
SERVED_COLOUR = "#1d2430"


def _f(x: float) -> str:
    return f"{x:.1f}"


def _points(b: Band) -> str:
    return f"{100 * b.value:+.1f} points [{100 * b.low:+.1f}, {100 * b.high:+.1f}]"


def headline(f: Frontier) -> str:
    """One sentence on the regret so far; it claims a difference only when the interval excludes zero."""
    if f.regret is None or f.served is None:
        return (
            '<p class="savings none" id="frontier-headline" data-claim="false">No outcome with a known '
            "cost yet: the frontier on this traffic is not measured.</p>"
        )
    r, (spend, rate) = f.regret, f.served
    attrs = (
        f'id="frontier-headline" data-claim="{str(r.excludes_zero).lower()}" data-regret="{r.value!r}" '
        f'data-low="{r.low!r}" data-high="{r.high!r}" data-tasks="{f.tasks}"'
    )
    where = f"${spend:.3f}/task, {100 * rate:.1f}% resolved over {f.tasks} tasks"
    if not r.excludes_zero:
        return (
            f'<p class="savings none" {attrs}><b>Serving is not told apart from the best mix at its spend '
            f"yet</b>: regret {_points(r)}, the interval includes zero ({where}).</p>"
        )
    word = "fewer" if r.value > 0 else "more"
    return (
        f'<p class="savings{" cost" if r.value > 0 else ""}" {attrs}><b>Serving resolved '
        f"{abs(100 * r.value):.1f} points {word} than the best mix of single models at its spend</b>: "
        f"regret {_points(r)}, 95% bootstrap ({where}).</p>"
    )


def _scale(f: Frontier) -> tuple[list[float], float, float]:
    """(x ticks, y low, y high) covering every interval, the objective and the belief."""
    xs = [m.cost.high for m in f.models] + [c for _, c, _ in f.belief or []]
    if f.objective is not None and f.objective.budget is not None:
        xs.append(f.objective.budget)
    ys = [m.resolved.low for m in f.models] + [m.resolved.high for m in f.models]
    ys += [r for _, _, r in f.belief or []] + ([f.quality_rate] if f.quality_rate is not None else [])
    low = max(0.0, math.floor((min(ys, default=0.0) - 0.02) * 10) / 10)
    high = min(1.0, math.ceil((max(ys, default=1.0) + 0.02) * 10) / 10)
    return nice_ticks(max(xs, default=1.0) * 1.05), low, max(high, low + 0.1)


def chart(f: Frontier, colour: Mapping[str, str]) -> str:
    """The frontier on this traffic: cost per task (x) against resolved rate (y)."""
    xt, ylo, yhi = _scale(f)

    def x(v: float) -> float:
        return LEFT + (WIDTH - LEFT - RIGHT) * v / xt[-1]

    def y(v: float) -> float:
        return HEIGHT - BOTTOM - (HEIGHT - TOP - BOTTOM) * (v - ylo) / (yhi - ylo)

    body = []
    for t in xt:
        body.append(f'<line x1="{_f(x(t))}" x2="{_f(x(t))}" y1="{TOP}" y2="{HEIGHT - BOTTOM}" class="grid"/>')
        body.append(f'<text x="{_f(x(t))}" y="{HEIGHT - BOTTOM + 14}" class="xtick">${t:.4g}</text>')
    steps = round((yhi - ylo) / 0.1)
    for k in range(steps + 1):
        v = ylo + k * (yhi - ylo) / steps
        body.append(f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{_f(y(v))}" y2="{_f(y(v))}" class="grid"/>')
        body.append(f'<text x="{LEFT - 6}" y="{_f(y(v))}" class="ytick">{v:.1f}</text>')
    body.append(f'<text x="{_f((LEFT + WIDTH) / 2)}" y="{HEIGHT - 6}" class="xtick">USD per task</text>')
    mid = _f((TOP + HEIGHT - BOTTOM) / 2)
    body.append(f'<text x="12" y="{mid}" class="ytitle" transform="rotate(-90 12 {mid})">resolved</text>')
    if f.objective is not None and f.objective.budget is not None:
        bx = _f(x(f.objective.budget))
        body.append(
            f'<line x1="{bx}" x2="{bx}" y1="{TOP}" y2="{HEIGHT - BOTTOM}" stroke="#8a6d00" '
            f'stroke-dasharray="5 4" id="frontier-objective"><title>{escape(f.objective.describe())}'
            "</title></line>"
        )
        body.append(f'<text x="{_f(x(f.objective.budget) + 4)}" y="{TOP + 10}" class="note">budget</text>')
    if f.quality_rate is not None:
        qy = _f(y(f.quality_rate))
        body.append(
            f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{qy}" y2="{qy}" stroke="#8a6d00" '
            f'stroke-dasharray="5 4" id="frontier-objective"><title>quality target</title></line>'
        )
    if f.line:
        pts = [*f.line, (xt[-1], f.line[-1][1])]  # flat past the best model: more spend buys nothing
        line = " ".join(f"{_f(x(c))},{_f(y(r))}" for c, r in pts)
        body.append(
            f'<polyline points="{line}" fill="none" stroke="#7a828e" stroke-width="1.5" id="frontier-line"/>'
        )
    for m in f.models:
        c = colour.get(m.model, "#555")
        tip = (
            f"{m.model} ({m.tasks} tasks): resolved {m.resolved.value:.3f} [{m.resolved.low:.3f}, "
            f"{m.resolved.high:.3f}], ${m.cost.value:.4f} [{m.cost.low:.4f}, {m.cost.high:.4f}]"
        )
        cx, cy = _f(x(m.cost.value)), _f(y(m.resolved.value))
        body.append(
            f'<g data-model="{escape(m.model)}"><title>{escape(tip)}</title>'
            f'<line x1="{_f(x(m.cost.low))}" x2="{_f(x(m.cost.high))}" y1="{cy}" y2="{cy}" stroke="{c}" '
            f'class="whisker"/><line x1="{cx}" x2="{cx}" y1="{_f(y(m.resolved.low))}" '
            f'y2="{_f(y(m.resolved.high))}" stroke="{c}" class="whisker"/>'
            f'<circle cx="{cx}" cy="{cy}" r="5" fill="{c}"/></g>'
        )
    for model, cost, rate in f.belief or []:
        body.append(
            f'<circle cx="{_f(x(cost))}" cy="{_f(y(rate))}" r="6" fill="none" '
            f'stroke="{colour.get(model, "#555")}" stroke-dasharray="2 2"><title>{escape(model)}: '
            f"the learner believes ${cost:.4f}, {rate:.3f}</title></circle>"
        )
    if f.served is not None:
        sx, sy = x(f.served[0]), y(f.served[1])
        body.append(
            f'<path d="M{_f(sx)},{_f(sy - 7)} L{_f(sx + 7)},{_f(sy)} L{_f(sx)},{_f(sy + 7)} L{_f(sx - 7)},'
            f'{_f(sy)} Z" fill="{SERVED_COLOUR}" id="frontier-served"><title>serving: '
            f"${f.served[0]:.4f}, {f.served[1]:.3f}</title></path>"
        )
    label = "the frontier measured on this traffic"
    return (
        f'<svg viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" role="img" '
        f'aria-label="{label}" id="frontier-chart"><title>{label}</title>{"".join(body)}</svg>'
    )


def table(f: Frontier) -> str:
    """Per model: tasks, measured rate and cost with intervals, and the learner's belief."""
    belief = {m: (c, r) for m, c, r in f.belief or []}
    out = [
        '<table id="frontier-models"><tr><th>model</th><th>tasks</th><th>resolved [95%]</th>'
        "<th>USD per task [95%]</th><th>learner: resolved</th><th>learner: USD</th></tr>"
    ]
    for m in f.models:
        b = belief.get(m.model)
        out.append(
            f'<tr data-model="{escape(m.model)}"><td>{escape(m.model)}</td><td>{m.tasks}</td>'
            f"<td>{m.resolved.value:.3f} [{m.resolved.low:.3f}, {m.resolved.high:.3f}]</td>"
            f"<td>{m.cost.value:.4f} [{m.cost.low:.4f}, {m.cost.high:.4f}]</td>"
            f"<td>{'-' if b is None else f'{b[1]:.3f}'}</td>"
            f"<td>{'-' if b is None else f'{b[0]:.4f}'}</td></tr>"
        )
    if not f.models:
        out.append('<tr><td colspan="6" class="txt">No outcome with a known cost yet.</td></tr>')
    return "".join(out) + "</table>"


def section(f: Frontier, colour: Mapping[str, str]) -> str:
    """The whole section: heading, headline, what it serves, chart, table."""
    serves = (
        f"<code>{escape(f.objective.describe())}</code>"
        if f.objective is not None
        else "the safe default point (no objective)"
    )
    foot = (
        f'<p class="foot">Serving {serves}. Measured on {f.tasks} served tasks with an outcome and a known '
        "cost (tasks without one are left out), the same store every replica reads: dots are each model's "
        "resolved rate and cost with 95% bootstrap intervals, the grey line the best mix of single models "
        "(the frontier), the diamond where serving lands, dashed circles what the learned floor believed at "
        "its latest decision. Regret: the best mix at the realised spend minus the served resolved rate.</p>"
    )
    figure = f"<figure>{chart(f, colour)}</figure>"
    return "\n".join(["<h2>Frontier on this traffic</h2>", headline(f), foot, figure, table(f)])
