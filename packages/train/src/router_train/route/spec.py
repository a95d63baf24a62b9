"""Which router to load: one typed definition shared by `router-train route` flags and the serve TOML's
`[router]` table: `RouterSpec = CheckpointSpec | EndpointSpec` (`load_router(CheckpointSpec(...))`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BeforeValidator,
    Field,
    TypeAdapter,
    ValidatorFunctionWrapHandler,
    WrapValidator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from router_oracle.infra.frozen_model import FrozenModel
from router_oracle.infra.numeric_option import Count, Retries, Seconds, Seed, Share, Temperature
from router_train.chat_endpoint import EndpointError
from router_train.scoring.floor import Objective, parse_quality


class RouteError(ValueError):
    """Bad input to routing (a task, a checkpoint, a pool, an option): one line naming it (exit 2)."""


EXIT_ENDPOINT_FAILED = EndpointError.exit_code
"""`router-train route`: the endpoint failed after its retries."""


MAX_BUDGET_USD = 1000.0
"""Largest `budget` accepted (USD per task): far above any model's cost, a typo guard."""
MAX_DIAL = 1e6
"""Largest `dial` magnitude accepted (score units per USD): far past both ends of any router's table."""
Budget = Annotated[float, Field(gt=0, le=MAX_BUDGET_USD, allow_inf_nan=False)]
"""`--budget` / `budget`: a finite USD amount per task in (0, MAX_BUDGET_USD]."""
Dial = Annotated[float, Field(ge=-MAX_DIAL, le=MAX_DIAL, allow_inf_nan=False)]
"""`--dial` / `dial`: a finite number in [-MAX_DIAL, MAX_DIAL]."""


def _quality(text: str) -> str:
    parse_quality(text)  # raises ValueError naming the form expected
    return text.strip().replace(" ", "")


def _quality_text(value: Any) -> Any:
    """A TOML number (`quality = 0.78`) as its text, so both spellings read alike."""
    return str(value) if isinstance(value, int | float) and not isinstance(value, bool) else value


Quality = Annotated[str, BeforeValidator(_quality_text), AfterValidator(_quality)]
"""`--quality` / `quality`: a resolve rate in (0, 1] or `best-D` (`scoring.floor.parse_quality`)."""


class RouterSpecBase(FrozenModel):
    """What both kinds of router spec take: the pool, the tables and the fallback."""

    pool: Path | None = None
    """A pool TOML file (router-oracle's format) or bundled pool name: the models an any-pool checkpoint
    or an endpoint routes among (endpoint: their statistics come from `candidates`). For a fixed-pool
    checkpoint it is a check: its ids must be the checkpoint's."""
    table: Path | None = None
    """Oracle table. Endpoint mode: the pool and the train split its capability summary comes from
    (default: the env's bundled table). Checkpoints: a check that they were trained on this table."""
    candidates: Path | None = None
    """Candidates table for `pool` (an any-pool checkpoint: the one it trained on, default: the one it
    names; endpoint with `pool`: default bundled)."""
    fallback: str | None = None
    """A pool model id that takes every task the router gives no valid route (marked `fallback`)."""


class CheckpointSpec(RouterSpecBase):
    """A saved router: a checkpoint file of any kind in `route.kinds` (GRPO, any-pool, saved baseline,
    IRT), optionally at an operating point of its cost dial."""

    checkpoint: Path
    """A checkpoint file: `router-train local`, `router-train local-anypool` (needs `pool`) or
    `router-train fit`; its kind is read from the file."""
    budget: Budget | None = None
    """Mean cost per task in USD to spend: the router's cost dial at the richest point of its calibration
    within it, used where its inner estimate beats the mix by its kind's margin; elsewhere the floor, the
    best mix of single models at that cost (`scoring.floor`; below the cheapest model, the cheapest). Not
    with `quality` or `dial`, not for an endpoint router."""
    quality: Quality | None = None
    """A resolve-rate target to route at, instead of a budget: a rate (`0.78`) or `best-D` (`best-0.02`:
    D below the best single model's rate on the training tasks). The floor is the cheapest mix of single
    models resolving that much (`scoring.floor`); the router's dial point at the cheapest point of its
    calibration reaching it is used where its inner estimate beats the mix by its kind's margin. Not with
    `budget` or `dial`, not for an endpoint router."""
    dial: Dial | None = None
    """The cost dial itself (`evaluate.dial.apply_dial`: argmax of score - dial x mean train cost; 0 = the
    router as trained, higher = cheaper). Not with `budget`, not for an endpoint router."""
    task_features: str | None = None
    """Task-features file (CSV or JSONL keyed by instance_id, or bundled-issue / bundled-repo / bundled)
    for a checkpoint trained on task features (`--task-features` of `local`, `fit`): it needs them for
    every task it routes (a task without them is refused) and takes the columns it was trained on."""
    no_safe_point: bool = False
    """route at the router's native point, not at the safe default point its checkpoint stores (chosen on
    its training tasks by inner cross-validation: its own route, or always the cheapest model when
    routing did not pay there; docs/evaluate.md "Do no harm"). A budget or dial replaces the default
    point anyway."""

    @model_validator(mode="before")
    @classmethod
    def _no_endpoint_fields(cls, data: Any) -> Any:
        if isinstance(data, dict):
            given = [n for n in EndpointSpec.model_fields if n not in cls.model_fields and _set(data, n)]
            if given:
                raise ValueError(f"{', '.join(given)}: only with endpoint")
        return data

    @model_validator(mode="after")
    def _one_dial(self) -> CheckpointSpec:
        given = [n for n in ("budget", "quality", "dial") if getattr(self, n) is not None]
        if len(given) > 1:
            raise ValueError("give at most one of budget (--budget), quality (--quality) and dial (--dial)")
        return self

    def objective(self) -> Objective | None:
        """The user's objective (`--budget` or `--quality`), None without one."""
        if self.budget is None and self.quality is None:
            return None
        return Objective(budget=self.budget, quality=self.quality)


class EndpointSpec(RouterSpecBase):
    """An LLM router served by an OpenAI-compatible chat API, asked with the env's exact prompts."""

    endpoint: str
    """Base URL of an OpenAI-compatible chat API (e.g. `http://127.0.0.1:8000/v1`)."""
    model: str
    """Endpoint mode: the served model name to ask."""
    eval_fraction: Share = 0.2
    """Endpoint mode: held-out share of the env's split (the summary reads the train split only)."""
    split_seed: Seed = 0
    """Endpoint mode: seed of the env's split."""
    api_key_env: str | None = None
    """Endpoint mode: environment variable holding the API key (unset: no key, `EMPTY`)."""
    temperature: Temperature = 0.0
    """Endpoint mode: sampling temperature."""
    max_tokens: Count | None = None
    """Endpoint mode: reply token limit (unset: the server's default)."""
    timeout_s: Seconds = 60.0
    """Endpoint mode: seconds per request before it counts as failed (and is retried)."""
    max_retries: Retries = 2
    """Endpoint mode: retries of a failed request (HTTP 408/409/429/5xx, timeout, connection error),
    with the openai client's exponential backoff; then the route fails (`EndpointError`)."""
    concurrency: Count = 4
    """Endpoint mode: requests in flight at once in `route_many`."""

    @model_validator(mode="before")
    @classmethod
    def _model_and_no_dial(cls, data: Any) -> Any:
        if isinstance(data, dict):
            if not data.get("model"):
                raise ValueError("endpoint needs model (--model: the served model name)")
            for name, flag in (("budget", "--budget"), ("quality", "--quality"), ("dial", "--dial")):
                if _set(data, name):
                    raise ValueError(
                        f"{name} ({flag}): an endpoint (LLM) router gives no per-model log-probabilities "
                        "to put a cost dial on; use a checkpoint"
                    )
            if data.get("no_safe_point"):
                raise ValueError("no_safe_point (--no-safe-point): only with a checkpoint")
        return data


def _set(data: dict[str, Any], name: str) -> bool:
    """`name` is given in `data` (a key whose value is None is unset, as an absent flag)."""
    return data.get(name) is not None


def _one_router(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    """Validate `value` as the spec of the one router it names: `checkpoint` or `endpoint`, never both.

    The member model validates the input itself (not a tagged union), so an error names the field as
    `router.dial`, not `router.checkpoint.dial`."""
    if isinstance(value, CheckpointSpec | EndpointSpec):
        return value
    if isinstance(value, dict):
        checkpoint, endpoint = _set(value, "checkpoint"), _set(value, "endpoint")
        if checkpoint != endpoint:
            given = {k: v for k, v in value.items() if v is not None}  # None: unset, as an absent flag
            return (CheckpointSpec if checkpoint else EndpointSpec).model_validate(given)
    raise PydanticCustomError("one_router", ONE_ROUTER)


ONE_ROUTER = "give exactly one of checkpoint (--checkpoint) and endpoint (--endpoint)"
"""The error of a spec naming no router or two."""

RouterSpec = Annotated[CheckpointSpec | EndpointSpec, WrapValidator(_one_router)]
"""A router to load: a checkpoint file or an endpoint. Each field is a `router-train route` flag too
(help: its docstring); `parse_router_spec` (the flags) and serve's TOML `[router]` table parse into it."""

ROUTER_SPEC_FIELDS: tuple[str, ...] = tuple(
    dict.fromkeys([*CheckpointSpec.model_fields, *EndpointSpec.model_fields])
)
"""Every field of either spec: the `router-train route` flags that fill one."""

_ROUTER_SPEC: TypeAdapter[CheckpointSpec | EndpointSpec] = TypeAdapter(RouterSpec)


def parse_router_spec(fields: dict[str, Any]) -> CheckpointSpec | EndpointSpec:
    """The spec `fields` describe (keys: `ROUTER_SPEC_FIELDS`; None values count as unset); raises
    pydantic's `ValidationError` for bad input."""
    return _ROUTER_SPEC.validate_python(fields)
