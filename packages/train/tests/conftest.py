"""The train tests' shared fixtures (`train_fixtures`: each router trained once per test process)."""

from train_fixtures import (  # noqa: F401  (fixtures: pytest finds them by name here)
    anypool_checkpoint,
    balanced_logreg_checkpoint,
    grpo_checkpoint,
    irt_checkpoint,
    serve_checkpoint,
    serve_router,
)
