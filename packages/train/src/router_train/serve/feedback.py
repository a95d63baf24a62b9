"""`POST /v1/feedback`: the request a harness sends with a task's outcome, and who may send it."""

from __future__ import annotations

import hmac
import json

from pydantic import Field, StrictBool, ValidationError

from router_oracle.frozen_model import FrozenModel
from router_oracle.validation_message import one_line
from router_train.serve.identity import RequestError

FEEDBACK_PATH = "/v1/feedback"
"""The route (present only with a `[feedback]` table in the config)."""


class FeedbackRequest(FrozenModel):
    """The body of `POST /v1/feedback`."""

    task: str = Field(min_length=1, strict=True)
    """The task: its key (the `x-router-task` response header) or its `instance_id` (the
    `x-router-task-id` header it was sent with, or the id the decision log shows)."""
    resolved: StrictBool
    """Whether the task was resolved (JSON true / false)."""
    cost: float | None = Field(default=None, ge=0, allow_inf_nan=False, strict=True)
    """The task's cost in USD as the harness counts it; overrides the proxy's own (optional)."""


def parse_feedback(raw: bytes) -> FeedbackRequest:
    """The feedback request in `raw`; anything else is a `RequestError` of one line (answered 400)."""
    try:
        obj = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise RequestError(f"the feedback body is not valid JSON: {exc}") from None
    if not isinstance(obj, dict):
        raise RequestError('the feedback body must be a JSON object {"task": ..., "resolved": true|false}')
    try:
        return FeedbackRequest.model_validate(obj)
    except ValidationError as exc:
        raise RequestError(f"feedback: {one_line(exc)}") from None


def authorized(header: str | None, token: str) -> bool:
    """Whether an `Authorization` header carries `Bearer <token>` (compared in constant time)."""
    if header is None:
        return False
    scheme, _, given = header.partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), token.encode())
