"""The dashboard as one HTML page: figures, tables and inline SVG charts, no script, nothing fetched.

Every figure `router-train feedback` also prints is written as it prints it (`offpolicy.from_log.DIGITS`)
and carries machine-readable `data-*` attributes (the exact value), so a test can hold the two side by side.
"""

from __future__ import annotations

import base64
import hashlib
from html import escape

from router_train.dashboard import svg
from router_train.dashboard.data import ALWAYS, Dashboard, Versus
from router_train.dashboard.frontier_page import section as frontier_section
from router_train.dashboard.sections import checkpoints_table, estimates_table, models_table
from router_train.offpolicy.estimators import BOOTSTRAP, MIN_TRIED, PolicyEstimate

STYLE = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1d2430;margin:0;
background:#f5f6f8}
main{max-width:1040px;margin:0 auto;padding:20px 24px 40px}
h1{font-size:22px;margin:0 0 2px}h2{font-size:16px;margin:26px 0 8px}
.sub{color:#5a6372;margin:0 0 16px}
.savings{background:#fff;border-left:5px solid #0072b2;padding:12px 16px;font-size:16px;margin:0 0 16px}
.savings.cost{border-left-color:#d55e00}.savings.none{border-left-color:#999}
.tiles{display:flex;flex-wrap:wrap;gap:10px}
.tile{background:#fff;border:1px solid #dde1e7;border-radius:6px;padding:8px 14px;min-width:120px}
.tile b{display:block;font-size:22px}.tile span{color:#5a6372;font-size:12px}
table{border-collapse:collapse;background:#fff;width:100%;font-variant-numeric:tabular-nums}
#estimates{font-size:13px}#estimates td,#estimates th{padding:3px 7px}
th,td{padding:4px 10px;border-bottom:1px solid #e6e9ee;text-align:right;white-space:nowrap}
th{background:#eef1f5;font-weight:600}th:first-child,td:first-child{text-align:left}
td.txt,th.txt{text-align:left;white-space:normal}
.mono{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px}
.grid2{display:grid;grid-template-columns:1fr 1fr;gap:14px}
figure{background:#fff;border:1px solid #dde1e7;border-radius:6px;margin:0;padding:8px}
figcaption{font-weight:600;margin:0 0 4px}
.legend{display:flex;gap:14px;flex-wrap:wrap;margin:0 0 8px}
.legend span{display:inline-flex;gap:5px;align-items:center}
.grid{stroke:#e3e6eb}.axis{stroke:#8a93a0}.whisker{stroke-width:2.5}
text{font:11px system-ui,sans-serif;fill:#3c4452}
.ytick{text-anchor:end;dominant-baseline:middle}.xtick{text-anchor:middle}
.ytitle{text-anchor:middle}.ylabel{text-anchor:end;dominant-baseline:middle;font-size:12px}
.note{dominant-baseline:middle;fill:#8a6d00}.warn{color:#8a6d00}.foot{color:#5a6372;font-size:12px}
"""
STYLE_HASH = base64.b64encode(hashlib.sha256(STYLE.encode()).digest()).decode()
"""The style block's sha256 (base64), the one style the page's policy allows."""
CONTENT_SECURITY_POLICY = (
    f"default-src 'none'; style-src 'sha256-{STYLE_HASH}'; "
    "img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
"""The page's policy: its one style block, no script, nothing loaded from anywhere."""


POLICY_COLOUR = {"serving": "#1d2430", "router": "#7a828e"}
"""The estimates chart's colour of a policy that is not an always-X (those take their model's)."""


def usd(v: float) -> str:
    """An amount of USD for a reader (not a figure the CLI prints)."""
    return f"${v:,.2f}" if abs(v) >= 1 else f"${v:.4f}"


def _versus(v: Versus | None) -> str:
    """The one sentence: what routing saved or cost against always-the-strongest."""
    if v is None:
        return (
            '<p class="savings none" id="savings">Not yet known what routing saved against '
            "always-the-strongest: no always-X policy has an estimate (each model needs "
            f"{MIN_TRIED} outcomes; explore more, <code>[explore] rate</code>).</p>"
        )
    assert v.strongest.resolved is not None and v.serving.resolved is not None
    model = escape(v.model)
    dr = v.resolved_delta
    points = f"{abs(dr) * 100:.1f} points {'more' if dr >= 0 else 'fewer'}"
    rates = (
        f"{v.serving.resolved.snips.value:.3f} served vs {v.strongest.resolved.snips.value:.3f} "
        f"[{v.strongest.resolved.snips.low:.3f}, {v.strongest.resolved.snips.high:.3f}] estimated"
    )
    dc = v.cost_delta
    attrs = (
        f'id="savings" data-strongest="{model}" data-resolved-delta="{dr!r}" data-tasks="{v.tasks}" '
        f'data-cost-delta="{"" if dc is None else repr(dc)}"'
    )
    if dc is None:
        head = f"Routing resolved {points} of tasks than always-{model} (no priced outcomes to compare cost)"
        return f'<p class="savings none" {attrs}><b>{head}</b>: {rates}.</p>'
    assert v.strongest.cost is not None
    strong_cost = v.strongest.cost.snips.value
    share = f" ({abs(dc) / strong_cost:.0%})" if strong_cost > 0 else ""
    verb = f"saved {usd(-dc)} per task{share}" if dc <= 0 else f"cost {usd(dc)} more per task{share}"
    total = f"{usd(abs(dc) * v.tasks)} {'saved' if dc <= 0 else 'more'} over the {v.tasks} logged tasks"
    return (
        f'<p class="savings{" cost" if dc > 0 else ""}" {attrs}><b>Routing {verb} against always-{model}'
        f"</b>, the strongest model on this traffic: {total}, resolving {points} ({rates}).</p>"
    )


def _tile(ident: str, value: str, raw: object, label: str) -> str:
    attrs = f'class="tile" id="{ident}" data-value="{escape(str(raw))}"'
    return f"<div {attrs}><b>{value}</b><span>{label}</span></div>"


def _tiles(d: Dashboard) -> str:
    share = d.explored / d.decided if d.decided else 0.0
    serving = next((c for c in d.checkpoints if c.serving), None)
    sha = serving.sha256[:12] if serving and serving.sha256 else "-"
    tiles = [
        _tile("tasks-decided", f"{d.decided}", d.decided, "tasks decided"),
        _tile("tasks-with-outcome", f"{d.with_outcome}", d.with_outcome, "with an outcome"),
        _tile("exploration-share", f"{share:.1%}", share, f"explored ({d.explored} tasks)"),
        _tile("spend", "-" if d.spend is None else usd(d.spend), d.spend, "spend (priced outcomes)"),
        _tile(
            "serving-checkpoint", f'<span class="mono">{escape(sha)}</span>', sha, "checkpoint serving now"
        ),
    ]
    return f'<div class="tiles">{"".join(tiles)}</div>'


def _estimate_rows(estimates: list[PolicyEstimate], colour: dict[str, str], metric: str) -> list[svg.Row]:
    rows = []
    for e in estimates:
        c = (
            colour.get(e.policy.removeprefix(ALWAYS), "#555")
            if e.policy.startswith(ALWAYS)
            else POLICY_COLOUR.get(e.policy, "#555")
        )
        m = e.resolved if metric == "resolved" else e.cost
        if m is None:
            note = "no estimate: too few outcomes" if e.warning else "no priced outcomes"
            rows.append(svg.Row(e.policy, None, None, None, c, note))
        else:
            rows.append(svg.Row(e.policy, m.snips.value, m.snips.low, m.snips.high, c))
    return rows


def _charts(d: Dashboard) -> str:
    colour = svg.colours(d.pool)
    t = d.timeline
    labels = t.labels()
    width = {1: "second", 5: "5 s", 15: "15 s", 60: "minute", 300: "5 min", 900: "15 min", 3600: "hour"}
    per = width.get(t.width_s, f"{t.width_s // 3600} h" if t.width_s < 86400 else f"{t.width_s // 86400} d")
    legend = "".join(f"<span>{svg.swatch(colour[m])}{escape(m)}</span>" for m in d.pool)
    figures = [
        (
            f"Tasks decided per {per}",
            svg.stacked_bars("tasks", labels, t.tasks, colour, svg.count, "tasks", True),
        ),
        (
            f"Spend per {per} (USD, outcomes' cost)",
            svg.stacked_bars("spend", labels, t.spend, colour, svg.money, "USD"),
        ),
        (
            "Resolve rate so far (reported outcomes)",
            svg.lines("resolve rate", labels, t.resolved, colour, svg.rate, "resolved"),
        ),
    ]
    if d.estimates:
        fig = svg.intervals(
            "estimated resolve rate",
            _estimate_rows(d.estimates, colour, "resolved"),
            svg.rate,
            "resolve rate",
        )
        fig += svg.intervals(
            "estimated cost per task", _estimate_rows(d.estimates, colour, "cost"), svg.money, "USD per task"
        )
        figures.append(("Off-policy estimates (SNIPS, 95% interval)", fig))
    cells = "".join(f"<figure><figcaption>{escape(c)}</figcaption>{body}</figure>" for c, body in figures)
    return f'<div class="legend">{legend}</div><div class="grid2">{cells}</div>'


def render(d: Dashboard) -> str:
    """The whole page."""
    colour = svg.colours(d.pool)
    skipped = (
        f'<p class="warn">{d.skipped} outcome(s) left out of the estimates: no decision with a propensity.'
        "</p>"
        if d.skipped
        else ""
    )
    if d.other_checkpoints and d.estimated_sha256 is not None:
        skipped += (
            f'<p class="warn">Estimates of checkpoint {escape(d.estimated_sha256[:12])} alone; '
            f"{d.other_checkpoints} outcome(s) of other checkpoints left out "
            f"(<code>router-train feedback --checkpoint-sha</code>).</p>"
        )
    parts = [
        "<!doctype html><html lang=en><head><meta charset=utf-8>",
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<link rel="icon" href="data:,"><title>router-train serve: dashboard</title>',
        f"<style>{STYLE}</style></head><body><main>",
        "<h1>router-train serve: what routing did</h1>",
        f'<p class="sub">router <b>{escape(d.router)}</b> over {len(d.pool)} models · '
        f"as of {d.now.strftime('%Y-%m-%d %H:%M:%S')} UTC</p>",
        _versus(d.versus),
        _tiles(d),
        frontier_section(d.frontier, colour),
        "<h2>Per model</h2>",
        models_table(d.models, colour),
        "<h2>Over time</h2>",
        _charts(d),
        "<h2>Off-policy estimates</h2>",
        f'<p class="foot">On {len(d.estimates) and d.estimates[0].tasks} logged outcomes: IPS, SNIPS and DR, '
        f"95% bootstrap intervals ({BOOTSTRAP} resamples, seed 0). The same table as "
        "<code>router-train feedback STORE</code>.</p>",
        skipped,
        estimates_table(d.estimates),
        "<h2>Checkpoints in use</h2>",
        checkpoints_table(d.checkpoints),
        "</main></body></html>",
    ]
    return "\n".join(parts) + "\n"
