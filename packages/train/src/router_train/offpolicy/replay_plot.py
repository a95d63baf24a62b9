"""The replay's plot: cumulative resolved tasks and cumulative cost against tasks served, per policy, the
mean over stream seeds and the 2.5-97.5% band across them."""

from __future__ import annotations

import io
from collections.abc import Sequence

import numpy as np

from router_train.offpolicy.replay import SeedResult

POLICIES = ("learning", "static prior", "best fixed", "oracle")
"""The curves drawn (`SeedResult.curves`' policies)."""
COLOURS = {"learning": "tab:red", "static prior": "tab:blue", "best fixed": "tab:green", "oracle": "tab:gray"}


def render_png(results: Sequence[SeedResult], title: str) -> bytes:
    """PNG bytes (no timestamp or software tag: the same results give the same bytes)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with plt.rc_context({"font.size": 9}):
        fig, axes = plt.subplots(1, 2, figsize=(10.0, 4.0), dpi=110)
        try:
            for ax, metric, label in (
                (axes[0], "resolved", "resolved minus static prior (tasks)"),
                (axes[1], "cost", "cost minus static prior (USD)"),
            ):
                base = np.asarray([r.curves[f"static prior {metric}"] for r in results])
                for name in POLICIES:
                    y = np.asarray([r.curves[f"{name} {metric}"] for r in results]) - base
                    x = np.arange(1, y.shape[1] + 1)
                    lo, hi = np.percentile(y, [2.5, 97.5], axis=0)
                    ax.plot(x, y.mean(axis=0), color=COLOURS[name], label=name, linewidth=1.2)
                    ax.fill_between(x, lo, hi, color=COLOURS[name], alpha=0.15, linewidth=0)
                ax.set_xlabel("tasks served")
                ax.set_ylabel(label)
                ax.axvline(200, color="black", linewidth=0.5, linestyle=":")
                ax.grid(alpha=0.3)
            axes[0].legend(loc="upper left")
            fig.suptitle(title)
            buf = io.BytesIO()
            fig.savefig(buf, format="png", metadata={"Software": None}, bbox_inches="tight")
        finally:
            plt.close(fig)
    return buf.getvalue()
