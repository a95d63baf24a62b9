"""The cost dial curves plot: each scoring router's out-of-sample curve, the mix frontier, the single
models and the oracle's curve, over the cheapest-to-strongest cost range."""

from __future__ import annotations

from router_train.evaluate.plot import draw_mix_frontier, png_bytes
from router_train.evaluate.report import EvalReport, row_label


def render_curves_png(report: EvalReport) -> bytes:
    """PNG bytes of the curves of the report's first evaluation (which must have `curves`)."""
    return png_bytes(lambda ax: _draw(ax, report), (8.0, 5.5))


def _draw(ax, report: EvalReport) -> None:  # type: ignore[no-untyped-def]
    ev = report.main
    assert ev.curves is not None
    singles = ev.single_models
    oracle = next((r for r in ev.curves.references if r.name == "oracle"), None)
    xs = [p.cost for p in singles] + [p.cost_per_task for r in ev.routers for p in r.curve or []]
    xmax = max([*xs, 1e-6]) * 1.15
    draw_mix_frontier(ax, ev, xmax)
    w, s = ev.curves.cheapest, ev.curves.strongest
    ax.plot(
        [w.cost, s.cost],
        [100 * w.resolved, 100 * s.resolved],
        ":",
        color="0.6",
        lw=1,
        label="random line (APGR 0.5)",
    )
    ax.scatter(
        [p.cost for p in singles], [100 * p.resolved for p in singles], s=50, color="tab:blue", zorder=3
    )
    for p in singles:
        ax.annotate(
            p.model, (p.cost, 100 * p.resolved), textcoords="offset points", xytext=(5, -11), color="tab:blue"
        )
    if oracle is not None and oracle.curve:
        last = max(oracle.curve, key=lambda p: p.cost_per_task)  # flat past it: a larger budget is not spent
        ax.plot(
            [p.cost_per_task for p in oracle.curve] + [xmax],
            [100 * p.resolved for p in oracle.curve] + [100 * last.resolved],
            "-",
            color="goldenrod",
            lw=1.2,
            label=f"oracle dial (in-sample): APGR {oracle.metrics.apgr.mean or 0:.2f}",
        )
    markers = iter(["s", "D", "^", "v", "P", "X", "h", "<", ">"])
    for r in ev.routers:
        if not r.curve or r.curve_metrics is None:
            continue
        m = r.curve_metrics.apgr
        ci = "" if m.low is None or m.high is None else f" [{m.low:.2f}, {m.high:.2f}]"
        ax.plot(
            [p.cost_per_task for p in r.curve],
            [100 * p.resolved for p in r.curve],
            marker=next(markers, "o"),
            ms=4,
            lw=1.6 if r.kind != "baseline" else 1.0,
            zorder=5 if r.kind != "baseline" else 4,
            label=f"{row_label(r)}: APGR {m.mean if m.mean is not None else float('nan'):.2f}{ci}",
        )
    lo = min(100 * p.resolved for p in singles)
    hi = max(
        [100 * p.resolved for p in singles] + [100 * p.resolved for p in (oracle.curve if oracle else [])]
    )
    ax.set_ylim(lo - 2, hi + 2)
    ax.set_xlim(0, xmax)
    ax.set_xlabel("mean cost per task (USD)")
    ax.set_ylabel("resolved (%)")
    ax.set_title(
        f"Cost dial curves, out of sample ({report.design.folds}-fold CV, {ev.n_tasks} tasks).\n"
        "Each point's dial chosen on the fit's train tasks to hit a target cost."
    )
    ax.grid(True, color="0.85", lw=0.6)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False, alignment="left")
