"""The pool-agnostic local router: routes among models it never trained with, from their capability entries.

For cross-validation, everything works in memory:
- `trainer.train_any_pool(index, train_task_ids, model_ids, cfg) -> AnyPoolTrainResult` (`.policy`);
- `policy.PoolView.build(index, model_ids, train_task_ids)`: any pool, summarised on the train tasks;
- `policy.AnyPoolPolicy.route(tasks, view) / .probabilities(tasks, view)`;
- `checkpoint.TrainedAnyPoolRouter(policy, index, train_task_ids).route(tasks, model_ids)`.

`run.run_any_pool(AnyPoolRunConfig)` is `router-train local-anypool` (files: checkpoint, metrics, summary).
This package's `__init__` re-exports nothing: every module importing any part of the package runs it,
`route` and `serve` (which read a checkpoint, never train) included.
"""
