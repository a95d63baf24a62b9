"""The floor replay's figure: per prior -> traffic direction, each arm's regret against the best mix in
hindsight (top) and its spend over the budget (bottom) as tasks arrive, the mean over stream seeds and
the band from the lowest to the highest seed."""

from __future__ import annotations

import io
from collections.abc import Sequence

import numpy as np

from router_train.offpolicy.floor_replay import ArmPoint

COLOURS = {"static floor": "tab:blue", "learning floor": "tab:red"}
"""One colour per arm (`floor_replay.replay_objective`'s arm names)."""

Panel = tuple[str, dict[str, list[list[ArmPoint]]]]
"""(title, arm name -> per stream seed its points): one direction at one objective."""


def render_regret_png(panels: Sequence[Panel], title: str) -> bytes:
    """PNG bytes (no timestamp or software tag: the same results give the same bytes)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with plt.rc_context({"font.size": 8}):
        fig, axes = plt.subplots(
            2, len(panels), figsize=(2.6 * len(panels), 5.0), dpi=110, sharex=True, squeeze=False
        )
        try:
            for col, (name, arms) in enumerate(panels):
                for arm, per_seed in arms.items():
                    x = np.asarray([p.tasks for p in per_seed[0]])
                    for row, field in ((0, "regret"), (1, "spend_ratio")):
                        y = np.asarray([[getattr(p, field) for p in s] for s in per_seed], dtype=float)
                        ax = axes[row][col]
                        ax.plot(x, y.mean(axis=0), color=COLOURS[arm], label=arm, linewidth=1.2)
                        ax.fill_between(x, y.min(axis=0), y.max(axis=0), color=COLOURS[arm], alpha=0.15)
                axes[0][col].set_title(name)
                axes[0][col].axhline(0.0, color="black", linewidth=0.6)
                axes[1][col].axhline(1.0, color="black", linewidth=0.6)
                axes[1][col].set_xlabel("tasks served")
                for ax in axes[:, col]:
                    ax.grid(alpha=0.3)
            axes[0][0].set_ylabel("regret vs best mix in hindsight (points)")
            axes[1][0].set_ylabel("spend / budget")
            axes[0][0].legend(loc="upper right")
            fig.suptitle(title)
            buf = io.BytesIO()
            fig.savefig(buf, format="png", metadata={"Software": None}, bbox_inches="tight")
        finally:
            plt.close(fig)
    return buf.getvalue()
