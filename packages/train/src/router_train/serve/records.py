"""The typed records `serve` keeps: one model per kind of line of the decision log, also what the store holds.

Every line of the decision log is one of these, told apart by `event` (a decision line written before
the field existed has none: it reads as `decision`). The store keeps each task's `DecisionRecord` and
`OutcomeRecord` as the same JSON, so the log and the store never disagree on a field's meaning.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import Field, ValidationError

from router_oracle.infra.frozen_model import FrozenModel
from router_oracle.infra.validation_message import one_line
from router_train.route import Decision
from router_train.route.decision import OPTIONAL_FIELDS


class DecisionRecord(Decision):
    """A task's routing decision: `router-train route --explain`'s line for it, and what serve made of it.

    `model` is the pool model the task is served by (stored, sticky): the router's pick, or the model an
    exploration draw gave (`explored`), or None when the task got no route (nothing stored)."""

    event: Literal["decision"] = "decision"
    """The kind of record."""
    time: str
    """When it was decided (UTC, ISO 8601, milliseconds, `Z`)."""
    task: str
    """The task key (sha256 hex of the task's identity, `identity.task_key`)."""
    latency_ms: float
    """Milliseconds the router took to decide."""
    router_model: str | None = None
    """The router's own pick (None: it gave no valid route). Equal to `model` unless `explored`."""
    explored: bool = False
    """True when the task was served by an exploration draw (`[explore]`) instead of the router's pick."""
    propensity: float | None = Field(default=None, gt=0, le=1, allow_inf_nan=False)
    """The probability the serving policy gave the served `model`: (1 - rate) x [model is the router's
    pick] + rate / pool size, with rate the exploration rate (0 without `[explore]`). None: no model."""
    checkpoint_sha256: str | None = None
    """sha256 hex of the router's checkpoint file; None for an LLM router behind an endpoint."""
    repo: str | None = None
    """The task's repository as the request gave it (`x-router-repo`); None: not given."""
    issue_text: str | None = None
    """The issue text the router routed on (what `feedback --refit` refits on); None: not kept
    (`[feedback] task_text = "hash"`, a text over `max_task_text_bytes`, or an older serve)."""
    issue_sha256: str | None = None
    """sha256 hex of that text (UTF-8), kept whether or not the text is; None: an older serve."""
    posterior: dict[str, Any] | None = None
    """A floor decision assigned by the floor learned from the store's outcomes (`serve_floor`): what
    the learner believed when it assigned (`offpolicy.floor_learner.PosteriorSummary` as JSON: per-model
    posterior rate and cost, the shared cost scale, outcomes seen, the paced budget and the mix); the
    `propensity` is then the learner's. None: not a learned-floor decision (the line omits it)."""

    def json_line(self) -> str:
        """The log line (as `Decision.json_line`: `OPTIONAL_FIELDS` and `posterior` only when set)."""
        unset = {k for k in (*OPTIONAL_FIELDS, "posterior") if getattr(self, k) is None}
        return self.model_dump_json(exclude=unset) + "\n"


class FallbackRecord(FrozenModel):
    """A request an upstream failed, sent once to the upstream's `fallback` model."""

    event: Literal["fallback"] = "fallback"
    """The kind of record."""
    time: str
    """When (UTC, ISO 8601)."""
    task: str | None
    """The task key; None for a request that asked for a pool model by name."""
    model: str
    """The pool model whose upstream failed."""
    fallback_model: str
    """The pool model the request was sent to instead."""
    status: int
    """The HTTP status the failing upstream's answer had (502 / 504 when it gave none)."""


class RouterErrorRecord(FrozenModel):
    """A router that failed on a new task (an LLM router's endpoint, or a router bug): answered 502."""

    event: Literal["router_error"] = "router_error"
    """The kind of record."""
    time: str
    """When (UTC, ISO 8601)."""
    task: str
    """The task key."""
    error: str
    """What failed, one line."""


class UsageRecord(FrozenModel):
    """One upstream answer to a routed request: the tokens its `usage` reported, and what they cost."""

    event: Literal["usage"] = "usage"
    """The kind of record."""
    time: str
    """When the answer ended (UTC, ISO 8601)."""
    task: str
    """The task key."""
    model: str
    """The pool model that answered (the fallback model when one was used)."""
    prompt_tokens: int | None = Field(default=None, ge=0)
    """`usage.prompt_tokens`; None when the answer reported no usage (a stream without
    `stream_options.include_usage`)."""
    completion_tokens: int | None = Field(default=None, ge=0)
    """`usage.completion_tokens`; None as `prompt_tokens`."""
    cost: float | None = Field(default=None, ge=0)
    """USD: prompt_tokens x input_price + completion_tokens x output_price, prices per million tokens
    from the model's upstream table; None when the answer reported no usage or the model has no prices."""


class OutcomeRecord(FrozenModel):
    """A task's outcome, as `POST /v1/feedback` reported it (a first report, or a correction)."""

    event: Literal["outcome"] = "outcome"
    """The kind of record."""
    time: str
    """When the outcome was recorded (UTC, ISO 8601)."""
    task: str
    """The task key."""
    instance_id: str
    """The task's id (its decision's `instance_id`): the row key of the exported long table."""
    model: str
    """The pool model the task was served by (its decision's `model`)."""
    resolved: bool
    """Whether the task was resolved."""
    reported_cost: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    """The feedback's own `cost` (USD), if it gave one."""
    proxy_cost: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    """USD the proxy priced the task's requests at when the outcome came (`UsageRecord.cost` summed);
    None when none of them was priced."""
    cost: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    """The task's cost: `reported_cost` when given, else `proxy_cost`."""
    source: str = "feedback"
    """The name of the token that posted it (`[feedback] tokens`; "feedback" for `token_env`'s)."""
    revision: int = Field(default=0, ge=0)
    """0 for the task's first outcome, +1 per authorised correction; estimates use the latest."""


class FenceRecord(FrozenModel):
    """Written by serve when it opens a decision log whose last line a crash cut mid-write: it ends that
    line, and marks it as torn for the log's readers (`export.read_log`), so the log stays one record
    per line after the restart."""

    event: Literal["fence"] = "fence"
    """The kind of record."""
    time: str
    """When serve reopened the log (UTC, ISO 8601)."""
    torn_bytes: int = Field(ge=0)
    """Bytes of the torn line before this one."""


LogRecord = DecisionRecord | FallbackRecord | RouterErrorRecord | UsageRecord | OutcomeRecord | FenceRecord
"""Any line of the decision log."""

_BY_EVENT: dict[str, type[LogRecord]] = {
    "decision": DecisionRecord,
    "fallback": FallbackRecord,
    "router_error": RouterErrorRecord,
    "usage": UsageRecord,
    "outcome": OutcomeRecord,
    "fence": FenceRecord,
}


class RecordError(ValueError):
    """A log line or stored record that is not one of serve's records (one line, names where)."""


def record_line(record: LogRecord) -> str:
    """The record's JSON line (compact, keys in field order, newline-terminated)."""
    if isinstance(record, DecisionRecord):
        return record.json_line()
    return record.model_dump_json() + "\n"


def parse_record(line: str, where: str) -> LogRecord:
    """One log line back into its record; any problem is a `RecordError` naming `where`."""
    try:
        obj: Any = json.loads(line)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise RecordError(f"{where}: not valid JSON: {exc}") from None
    if not isinstance(obj, dict):
        raise RecordError(f"{where}: expected a JSON object")
    event = obj.get("event", "decision")
    kind = _BY_EVENT.get(event) if isinstance(event, str) else None
    if kind is None:
        raise RecordError(f"{where}: unknown event {event!r} (one of {', '.join(_BY_EVENT)})")
    try:
        return kind.model_validate(obj)
    except ValidationError as exc:
        raise RecordError(f"{where}: not a serve {event} record: {one_line(exc)}") from None
