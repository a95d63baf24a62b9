"""Which router to load: one typed definition shared by `router-train route` flags and the serve TOML's
`[router]` table (`load_router(RouterSpec(...))`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import Field, model_validator

from router_oracle.cli_runner import CommandError
from router_oracle.frozen_model import FrozenModel
from router_oracle.numeric_option import Count, Retries, Seconds, Seed, Share, Temperature


class RouteError(ValueError):
    """Bad input to routing (a task, a checkpoint, a pool, an option): one line naming it (exit 2)."""


class EndpointError(CommandError):
    """The router endpoint failed (HTTP error, timeout, unreachable) after its bounded retries: one line,
    nothing written, exit `EXIT_ENDPOINT_FAILED`."""

    exit_code = 1


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


class RouterSpec(FrozenModel):
    """A router to load: a checkpoint file (GRPO, any-pool or saved baseline) or an OpenAI-compatible
    endpoint serving an LLM router. Each field is a `router-train route` flag too (help: its docstring)."""

    checkpoint: Path | None = None
    """A checkpoint file: `router-train local`, `router-train local-anypool` (needs `pool`) or
    `router-train fit`; its kind is read from the file."""
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
    eval_fraction: Share = 0.2
    """Endpoint mode: held-out share of the env's split (the summary reads the train split only)."""
    split_seed: Seed = 0
    """Endpoint mode: seed of the env's split."""
    endpoint: str | None = None
    """Base URL of an OpenAI-compatible chat API (e.g. `http://127.0.0.1:8000/v1`)."""
    model: str | None = None
    """Endpoint mode: the served model name to ask."""
    api_key_env: str | None = None
    """Endpoint mode: environment variable holding the API key (unset: no key, `EMPTY`)."""
    temperature: Temperature = 0.0
    """Endpoint mode: sampling temperature."""
    max_tokens: Count | None = None
    """Endpoint mode: reply token limit (unset: the server's default)."""
    fallback: str | None = None
    """A pool model id that takes every task the router gives no valid route (marked `fallback`)."""
    timeout_s: Seconds = 60.0
    """Endpoint mode: seconds per request before it counts as failed (and is retried)."""
    max_retries: Retries = 2
    """Endpoint mode: retries of a failed request (HTTP 408/409/429/5xx, timeout, connection error),
    with the openai client's exponential backoff; then the route fails (`EndpointError`)."""
    concurrency: Count = 4
    """Endpoint mode: requests in flight at once in `route_many`."""
    budget: Budget | None = None
    """Mean cost per task in USD to route at: turned into the router's cost dial on its training tasks
    (the checkpoint's calibration table; the richest point that does not exceed it, or the cheapest point
    when the budget is below it). Not with `dial`, not for an endpoint router."""
    dial: Dial | None = None
    """The cost dial itself (`evaluate.dial.apply_dial`: argmax of score - dial x mean train cost; 0 = the
    router as trained, higher = cheaper). Not with `budget`, not for an endpoint router."""

    @model_validator(mode="after")
    def _one_router(self) -> RouterSpec:
        if (self.checkpoint is None) == (self.endpoint is None):
            raise ValueError("give exactly one of checkpoint (--checkpoint) and endpoint (--endpoint)")
        if self.endpoint is not None and not self.model:
            raise ValueError("endpoint needs model (--model: the served model name)")
        if self.endpoint is None:
            endpoint_only = [n for n in ("model", "api_key_env") if getattr(self, n) is not None]
            if endpoint_only:
                raise ValueError(f"{', '.join(endpoint_only)}: only with endpoint")
        self._check_dial()
        return self

    def _check_dial(self) -> None:
        if self.budget is not None and self.dial is not None:
            raise ValueError("give at most one of budget (--budget) and dial (--dial)")
        if self.endpoint is not None and (self.budget is not None or self.dial is not None):
            flag = "budget (--budget)" if self.budget is not None else "dial (--dial)"
            raise ValueError(
                f"{flag}: an endpoint (LLM) router gives no per-model log-probabilities to put a cost "
                "dial on; use a checkpoint"
            )
