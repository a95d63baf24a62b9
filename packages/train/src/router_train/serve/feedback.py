"""`POST /v1/feedback`: the request a harness sends with a task's outcome, and who may send it."""

from __future__ import annotations

import hmac
from collections.abc import Mapping

from pydantic import Field, StrictBool, ValidationError, field_validator

from router_oracle.infra.frozen_model import FrozenModel
from router_oracle.infra.validation_message import one_line
from router_train.serve.identity import RequestError
from router_train.serve.json_body import parse_json_body
from router_train.serve.store_api import check_text

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
    """The task's cost in USD as the harness counts it; overrides the proxy's own (optional). At most
    `[feedback] max_cost`."""
    correction: StrictBool = False
    """True: this report replaces the task's outcome (a new revision), allowed only to a token of
    `[feedback] correctors`; False: a first report (the same one again is idempotent, another is 409)."""

    @field_validator("task")
    @classmethod
    def _storable(cls, v: str) -> str:
        check_text(v, "text the store cannot hold")  # a NUL or lone surrogate: 400 on both backends
        return v


def parse_feedback(raw: bytes, max_cost: float) -> FeedbackRequest:
    """The feedback request in `raw` (a `cost` over `max_cost` USD refused); anything else is a
    `RequestError` of one line (answered 400)."""
    obj = parse_json_body(raw, "the feedback body")
    if not isinstance(obj, dict):
        raise RequestError('the feedback body must be a JSON object {"task": ..., "resolved": true|false}')
    try:
        report = FeedbackRequest.model_validate(obj)
    except ValidationError as exc:
        raise RequestError(f"feedback: {one_line(exc)}") from None
    if report.cost is not None and report.cost > max_cost:
        raise RequestError(
            f"feedback: cost: {report.cost:g} USD is over [feedback] max_cost ({max_cost:g} USD per task)"
        )
    return report


def authorized(header: str | None, token: str) -> bool:
    """Whether an `Authorization` header carries `Bearer <token>` (compared in constant time)."""
    if header is None:
        return False
    scheme, _, given = header.partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), token.encode())


def token_source(header: str | None, tokens: Mapping[str, str]) -> str | None:
    """The source name (`[feedback] tokens`' key, or "feedback" for `token_env`) whose token the
    `Authorization` header carries; None: none. Every token is compared (constant time each), so the
    time taken does not tell which one came close."""
    found = None
    for source, token in tokens.items():
        if authorized(header, token) and found is None:
            found = source
    return found
