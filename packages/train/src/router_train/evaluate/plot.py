"""The cost-vs-resolved plot: single models, the random-mix frontier, the oracle (and the oracle less the
part of its headroom rollout noise alone would give), baselines, routers."""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

from router_oracle.frontier import ModelPoint
from router_train.evaluate.report import EvalReport, Evaluation, row_label
from router_train.scoring.vs_mix import verdict

_SKIP_PREFIXES = ("always:",)
"""Rows drawn as single-model points already."""


def png_bytes(draw: Callable[[Any], None], figsize: tuple[float, float]) -> bytes:
    """PNG bytes of one axes drawn by `draw`; no timestamp or software tag, so the same drawing gives the
    same bytes (every plot of the project goes through here)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with plt.rc_context({"font.size": 9, "svg.hashsalt": "router-train"}):
        fig, ax = plt.subplots(figsize=figsize, dpi=110)
        try:
            draw(ax)
            buf = io.BytesIO()
            fig.savefig(buf, format="png", metadata={"Software": None}, bbox_inches="tight")
        finally:
            plt.close(fig)
    return buf.getvalue()


def render_png(report: EvalReport) -> bytes:
    """PNG bytes of the cost-vs-resolved plot of the report's first evaluation."""
    return png_bytes(lambda ax: _draw(ax, report), (8.0, 5.5))


def draw_mix_frontier(ax, ev: Evaluation, xmax: float) -> tuple[list[float], list[float]]:  # type: ignore[no-untyped-def]
    """Draw the mix frontier dashed: the hull corners, then flat to `xmax` (spending more buys nothing
    past the best model). Returns the line drawn, (USD per task, resolved %); empty when there is none."""
    if not ev.frontier:
        return [], []
    fx = [p.cost for p in ev.frontier] + [xmax]
    fy = [100 * p.resolved for p in ev.frontier] + [100 * ev.frontier[-1].resolved]
    ax.plot(fx, fy, "--", color="0.45", lw=1.2, zorder=1, label="best random mix of single models")
    return fx, fy


def _noise_mark(ev: Evaluation) -> tuple[float, float] | None:
    """Resolved % of the oracle less the noise estimate, and less the upper figure (None: not measured)."""
    est = ev.oracle_noise
    if est.noise is None or est.upper is None:
        return None
    top = 100 * est.oracle_resolve_rate
    return top - est.noise.noise_points, top - est.upper.noise_points


def _ylim(ev: Evaluation) -> tuple[float, float]:
    """Zoom on the data: the differences that matter are a few points, invisible on a 0-100 axis."""
    ys = [100 * p.resolved for p in ev.single_models] + [100 * r.metrics.resolved_rate for r in ev.routers]
    mark = _noise_mark(ev)
    if mark and any(r.name == "oracle" for r in ev.routers):
        ys += list(mark)
    lo, hi = min(ys), max(ys)
    pad = max(3.0, 0.15 * (hi - lo))
    return max(0.0, lo - pad), min(100.0, hi + pad)


def _draw(ax, report: EvalReport) -> None:  # type: ignore[no-untyped-def]
    ev = report.main  # the evaluation of every task; external routers' own task sets are in report.md
    singles = ev.single_models
    costs = [p.cost for p in singles] + [r.metrics.mean_cost for r in ev.routers]
    # Room right of the dearest point for its label, which would otherwise run into the legend.
    xmax = max([*costs, 1e-6]) * 1.25
    ylo, yhi = _ylim(ev)
    fx, fy = draw_mix_frontier(ax, ev, xmax)
    if fx:
        ax.fill_between(fx, fy, ylo, color="0.9", zorder=0)
        ax.text(
            xmax * 0.98,
            ylo + 0.6,
            "dominated by a random mix of single models",
            ha="right",
            va="bottom",
            color="0.45",
            fontsize=8,
        )
    span = max(xmax, 1e-9)
    _draw_singles(ax, singles, span)
    _draw_routers(ax, ev, span)
    ax.set_xlim(0, xmax)
    ax.set_ylim(ylo, yhi)
    ax.set_xlabel("mean cost per task (USD)")
    ax.set_ylabel("resolved (%)")
    d = report.design
    where = (
        f"{d.folds}-fold cross-validation over all {ev.n_tasks} tasks"
        if d.mode == "cross-validation"
        else f"the {d.split} split ({ev.n_tasks} tasks)"
    )
    ax.set_title(f"Cost vs resolved, {where}.\nAbove the dashed line: better than any random mix.")
    ax.grid(True, color="0.85", lw=0.6)
    ax.legend(
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
        fontsize=8,
        title="vs best random mix at equal cost:\npoints [95% bootstrap interval]",
        title_fontsize=8,
        alignment="left",
        frameon=False,
    )


def _draw_singles(ax, singles: list[ModelPoint], span: float) -> None:  # type: ignore[no-untyped-def]
    """The single models' points, each labelled."""
    ax.scatter(
        [p.cost for p in singles],
        [100 * p.resolved for p in singles],
        s=60,
        color="tab:blue",
        zorder=3,
        label="single models",
    )
    for p in singles:
        # Label above when a close neighbour sits lower, so labels of near-identical models do not collide.
        above = any(
            q is not p and abs(q.cost - p.cost) < 0.08 * span and q.resolved < p.resolved for q in singles
        )
        ax.annotate(
            p.model,
            (p.cost, 100 * p.resolved),
            textcoords="offset points",
            xytext=(6, 5) if above else (6, -12),
            color="tab:blue",
        )


def _draw_routers(ax, ev: Evaluation, span: float) -> None:  # type: ignore[no-untyped-def]
    """Every router's point: the oracle's star (with its noise mark), the baselines', the routers' (bold,
    labelled)."""
    markers = iter(["s", "D", "^", "v", "P", "X", "h", "<", ">", "p", "8", "d"])
    placed: list[tuple[float, float]] = []
    for row in ev.routers:
        if row.name.startswith(_SKIP_PREFIXES):
            continue
        m = row.metrics
        x, y = m.mean_cost, 100 * m.resolved_rate
        if row.name == "oracle":
            gap = row.gap_vs_mix.mean
            ax.scatter(
                [x],
                [y],
                marker="*",
                s=220,
                color="gold",
                edgecolor="k",
                zorder=4,
                label=f"oracle: {'' if gap is None else f'{gap:+.1f} pts '}({y:.1f}%, ${x:.3f}/task)",
            )
            _draw_noise_mark(ax, ev, x, y)
            continue
        is_router = row.kind != "baseline"
        ax.scatter(
            [x],
            [y],
            marker=next(markers, "o"),
            s=90 if is_router else 45,
            color="tab:red" if is_router else "0.35",
            edgecolor="k" if is_router else "none",
            zorder=5 if is_router else 4,
            label=f"{row_label(row)}: {verdict(row.gap_vs_mix)}",
        )
        if is_router:
            # Stack the labels of routers that land on (nearly) the same point instead of overprinting.
            near = sum(1 for px, py in placed if abs(px - x) < 0.06 * span and abs(py - y) < 1.5)
            placed.append((x, y))
            ax.annotate(
                row_label(row),
                (x, y),
                textcoords="offset points",
                xytext=(6, 5 + 11 * near),
                color="tab:red",
                fontweight="bold",
            )


def _draw_noise_mark(ax, ev: Evaluation, x: float, y: float) -> None:  # type: ignore[no-untyped-def]
    """Below the oracle's star at (x, y): where it lands without the successes rollout noise alone would
    give it (hollow star), a bar down to the figure counting all run-to-run disagreement, a dotted drop."""
    est = ev.oracle_noise
    mark = _noise_mark(ev)
    if mark is None or est.noise is None:
        return
    low, upper = mark
    ax.plot([x, x], [y, low], ":", color="darkgoldenrod", lw=1.2, zorder=3)
    ax.errorbar(
        [x],
        [low],
        yerr=[[low - upper], [0.0]],
        fmt="none",
        ecolor="darkgoldenrod",
        elinewidth=1.2,
        capsize=4,
        zorder=3,
    )
    head = "" if est.headroom_points is None else f" of its {est.headroom_points:+.1f}"
    ax.scatter(
        [x],
        [low],
        marker="*",
        s=220,
        facecolors="white",
        edgecolors="darkgoldenrod",
        linewidths=1.4,
        zorder=4,
        label=(
            f"oracle less rollout noise: {low:.1f}% (about {est.noise.noise_points:.1f}{head} pts\n"
            f"expected from noise alone; bar to {upper:.1f}%:\nall run-to-run disagreement counted)"
        ),
    )
