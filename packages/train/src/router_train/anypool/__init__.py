"""The pool-agnostic local router: routes among models it never trained with, from their capability entries.

For cross-validation, everything works in memory:
- `train_any_pool(index, train_task_ids, model_ids, cfg) -> AnyPoolTrainResult` (`.policy`);
- `PoolView.build(index, model_ids, train_task_ids)`: any pool, summarised on the train tasks;
- `AnyPoolPolicy.route(tasks, view) / .probabilities(tasks, view)`;
- `TrainedAnyPoolRouter(policy, index, train_task_ids).route(tasks, model_ids)`.
`run_any_pool(AnyPoolRunConfig)` is `router-train local-anypool` (files: checkpoint, metrics, summary).
"""

from __future__ import annotations

from router_train.anypool.checkpoint import (
    AnyPoolCheckpoint,
    TrainedAnyPoolRouter,
    load_any_pool_router,
    read_checkpoint,
)
from router_train.anypool.config import AnyPoolError, AnyPoolTrainConfig
from router_train.anypool.heldout import AnyPoolSummary, format_anypool_summary
from router_train.anypool.model_features import MODEL_FEATURES
from router_train.anypool.policy import AnyPoolPolicy, PoolView
from router_train.anypool.run import AnyPoolRunConfig, AnyPoolRunResult, run_any_pool
from router_train.anypool.trainer import AnyPoolTrainResult, task_records, train_any_pool

__all__ = [
    "MODEL_FEATURES",
    "AnyPoolCheckpoint",
    "AnyPoolError",
    "AnyPoolPolicy",
    "AnyPoolRunConfig",
    "AnyPoolRunResult",
    "AnyPoolSummary",
    "AnyPoolTrainConfig",
    "AnyPoolTrainResult",
    "PoolView",
    "TrainedAnyPoolRouter",
    "format_anypool_summary",
    "load_any_pool_router",
    "read_checkpoint",
    "run_any_pool",
    "task_records",
    "train_any_pool",
]
