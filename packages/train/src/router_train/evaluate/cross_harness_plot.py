"""The `--calibrate` plot: each learned router's cross-harness gap vs the mix over the calibration size N,
with its 95% interval, beside the same router without re-estimation on the same tasks and its in-harness
gap (dashed)."""

from __future__ import annotations

from router_train.evaluate.cross_harness_model import CrossHarness
from router_train.evaluate.plot import png_bytes


def render_calibration_png(x: CrossHarness) -> bytes:
    """PNG bytes of the calibration curves (`x.calibration` must hold at least one step)."""
    return png_bytes(lambda ax: _draw(ax, x), (8.0, 5.5))


def _draw(ax, x: CrossHarness) -> None:  # type: ignore[no-untyped-def]
    ns = [s.n for s in x.calibration]
    names = [r.name for r in x.calibration[0].routers]
    in_harness = {r.name: r.in_harness.mean for r in x.routers}
    span = max(ns) - min(ns) or 1
    for i, name in enumerate(names):
        color = f"C{i % 10}"
        dx = (i - (len(names) - 1) / 2) * span * 0.008  # intervals side by side, not on top of each other
        rows = [next(r for r in s.routers if r.name == name) for s in x.calibration]
        ys = [r.gap_vs_mix.mean for r in rows]
        lo = [
            (y - r.gap_vs_mix.low) if y is not None and r.gap_vs_mix.low is not None else 0
            for y, r in zip(ys, rows, strict=True)
        ]
        hi = [
            (r.gap_vs_mix.high - y) if y is not None and r.gap_vs_mix.high is not None else 0
            for y, r in zip(ys, rows, strict=True)
        ]
        xs = [n + dx for n in ns]
        ax.errorbar(
            xs,
            [float("nan") if y is None else y for y in ys],
            yerr=[lo, hi],
            fmt="o-",
            color=color,
            capsize=3,
            label=name,
        )
        unc = [r.uncalibrated.mean for r in rows]
        ax.plot(xs, [float("nan") if y is None else y for y in unc], "x:", color=color, alpha=0.6)
        if in_harness.get(name) is not None:
            ax.axhline(in_harness[name], color=color, ls="--", lw=0.8, alpha=0.6)
    ax.axhline(0.0, color="0.3", lw=0.8)
    ax.set_xlabel("calibration tasks per fold, N (first N held-out tasks; not scored)")
    ax.set_ylabel("gap vs best random mix on TEST, points")
    ax.set_title(
        f"re-estimated on {x.test_table}: o calibrated [95% CI], x uncalibrated (same tasks), "
        "-- in-harness gap",
        fontsize=9,
    )
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
