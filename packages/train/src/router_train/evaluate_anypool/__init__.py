"""The any-pool router judged on held-out tasks AND held-out models (`router-train evaluate-anypool`).

Leave-one-group-out over held-out model families x K-fold cross-validation over tasks: each task of
each evaluation pool (pools holding a held-out model) is routed by an any-pool router that never
trained on it nor with the held-out models, next to fixed-pool routers trained on that pool alone on
the same folds and the pool's oracle. Every metric, frontier and bootstrap is the `evaluate` package's.
"""

from router_train.evaluate_anypool.design import (
    EvalPool,
    HeldOutGroup,
    NamedPool,
    evaluation_pools,
    explicit_groups,
    held_out_groups,
)
from router_train.evaluate_anypool.report import AnyPoolEvalReport, render_markdown, render_terminal
from router_train.evaluate_anypool.run import evaluate_any_pool, quick_configs, write_report

__all__ = [
    "AnyPoolEvalReport",
    "EvalPool",
    "HeldOutGroup",
    "NamedPool",
    "evaluate_any_pool",
    "evaluation_pools",
    "explicit_groups",
    "held_out_groups",
    "quick_configs",
    "render_markdown",
    "render_terminal",
    "write_report",
]
