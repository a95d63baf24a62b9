"""Put a trained router to work on new tasks: `load_router(CheckpointSpec(...)).route(TaskInput(...))`.

- `RouterSpec = CheckpointSpec | EndpointSpec`: a checkpoint (`router-train local`, `local-anypool` with
  a pool, `fit`) or an OpenAI-compatible endpoint serving an LLM router (`parse_router_spec` picks one);
- `load_router(spec) -> Router`: `.name`, `.pool`, `.route(task)`, `.route_many(tasks)`, `.scores(tasks)`;
  a checkpoint is loaded by its kind's entry of `route.kinds.KINDS` (the registry of router kinds);
- `TaskInput` in, `Decision` out (`router-train route` writes one per line);
- `CheckpointSpec(budget=USD)` or `CheckpointSpec(dial=X)`: route at an operating point of the router's
  cost dial (`route.operating_point`; `router.point.bought` says what it buys on the training tasks).
"""

from router_oracle.task_input import TaskInput
from router_train.route.decision import Decision
from router_train.route.load import load_router
from router_train.route.router import Router
from router_train.route.spec import (
    EXIT_ENDPOINT_FAILED,
    CheckpointSpec,
    EndpointError,
    EndpointSpec,
    RouteError,
    RouterSpec,
    parse_router_spec,
)
from router_train.route.task import bundled_instances, bundled_tasks, issue_task, read_task_file

__all__ = [
    "EXIT_ENDPOINT_FAILED",
    "CheckpointSpec",
    "Decision",
    "EndpointError",
    "EndpointSpec",
    "RouteError",
    "Router",
    "RouterSpec",
    "TaskInput",
    "bundled_instances",
    "bundled_tasks",
    "issue_task",
    "load_router",
    "parse_router_spec",
    "read_task_file",
]
