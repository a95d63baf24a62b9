"""The per-pool plot: the any-pool router's gap to the mix against each fixed-pool router's, one point per
pool evaluation. Above the diagonal the any-pool router, which never trained with the pool's held-out
models, is further above the mix than a router trained on that very pool."""

from __future__ import annotations

from router_train.evaluate.plot import png_bytes
from router_train.evaluate_anypool.fits import ANYPOOL_NAME, FIXED_NAMES
from router_train.evaluate_anypool.report import AnyPoolEvalReport


def render_png(report: AnyPoolEvalReport) -> bytes:
    """PNG bytes of the per-pool gaps plot (byte-stable: `evaluate.plot.png_bytes`)."""
    return png_bytes(lambda ax: _draw(ax, report), (6.5, 6.0))


def _draw(ax, report: AnyPoolEvalReport) -> None:  # type: ignore[no-untyped-def]
    styles = {FIXED_NAMES[0]: ("o", "tab:red"), FIXED_NAMES[1]: ("x", "0.3")}
    values: list[float] = [0.0]
    for ref in FIXED_NAMES:
        xs, ys = [], []
        for p in report.pools:
            gaps = {name: g.mean for name, g in p.floored_gaps.items()}
            x, y = gaps.get(ref), gaps.get(ANYPOOL_NAME)
            if x is not None and y is not None:
                xs.append(x)
                ys.append(y)
        diff = next((d for d in report.differences if d.reference == ref), None)
        label = (
            ref
            if diff is None or diff.gap.mean is None
            else (
                f"vs {ref}: mean difference {diff.gap.mean:+.2f} pts "
                f"[{diff.gap.low if diff.gap.low is not None else float('nan'):+.2f}, "
                f"{diff.gap.high if diff.gap.high is not None else float('nan'):+.2f}]"
            )
        )
        marker, color = styles[ref]
        ax.scatter(xs, ys, marker=marker, color=color, s=36, zorder=3, label=label)
        values += xs + ys
    lo, hi = min(values), max(values)
    pad = max(0.5, 0.08 * (hi - lo))
    lo, hi = lo - pad, hi + pad
    ax.plot([lo, hi], [lo, hi], "--", color="0.5", lw=1.0, zorder=1)
    ax.axhline(0, color="0.75", lw=0.8, zorder=0)
    ax.axvline(0, color="0.75", lw=0.8, zorder=0)
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_xlabel("fixed-pool router trained on the pool: gap to the best random mix (points)")
    ax.set_ylabel(f"{ANYPOOL_NAME} (never trained with the held-out models): gap (points)")
    ax.set_title(
        f"{len(report.pools)} pools holding a held-out model ({report.design.held_out_by} held out)\n"
        "above the dashed line: the any-pool router is further above the mix"
    )
    ax.grid(True, color="0.9", lw=0.6)
    ax.legend(loc="upper left", fontsize=8, frameon=False)
