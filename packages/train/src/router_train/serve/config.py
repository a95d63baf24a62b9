"""The `router-train serve` configuration file: one router and one upstream per pool model (TOML)."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError, field_validator, model_validator

from router_oracle.infra.frozen_model import FrozenModel
from router_oracle.infra.text_file import read_text_file
from router_oracle.infra.validation_message import one_line
from router_train.route import RouterSpec
from router_train.serve.store_config import StoreConfig

ROUTER_MODEL = "router"
"""The model name a client asks for to be routed (any pool model id is served directly instead)."""


class ServeConfigError(ValueError):
    """A config file that cannot be used, or a pool it cannot serve (one line, names the file)."""


class UpstreamConfig(FrozenModel):
    """One OpenAI-compatible chat API serving one pool model."""

    base_url: str
    """The API's base URL, up to and including `/v1` (requests go to `{base_url}/chat/completions`)."""
    model: str
    """The upstream's own name for the model, sent as the request's `model` field."""
    api_key_env: str | None = None
    """Environment variable holding the upstream's API key, sent as `Authorization: Bearer ...`; None: no
    key. The key itself is never in the file and never logged; an unset variable is refused at start."""
    connect_timeout_s: float = Field(default=10.0, gt=0)
    """Seconds to open a connection to the upstream; past it the client gets 504."""
    read_timeout_s: float = Field(default=600.0, gt=0)
    """Seconds to wait for the upstream's response (for a stream: between two chunks); past it 504."""
    fallback: str | None = None
    """Another pool model id to send the request to when this upstream fails (connection error, timeout,
    429 or 5xx). Off by default: a task then changes model mid-trajectory; every use is logged."""
    input_price: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    """USD per million prompt tokens: with `output_price`, each answer's `usage` is priced and summed per
    task (the task's proxy cost). None (with `output_price`): the model's answers are not priced."""
    output_price: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    """USD per million completion tokens (see `input_price`; give both or neither)."""

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, v: str) -> str:
        if not v.startswith(("http://", "https://")):
            raise ValueError(f"must start with http:// or https://, got {v!r}")
        return v.rstrip("/")

    @model_validator(mode="after")
    def _both_prices(self) -> UpstreamConfig:
        if (self.input_price is None) != (self.output_price is None):
            raise ValueError("give both input_price and output_price, or neither")
        return self

    def price(self, prompt_tokens: int, completion_tokens: int) -> float | None:
        """USD for one answer's tokens at this upstream's prices; None when it has none."""
        if self.input_price is None or self.output_price is None:
            return None
        return (prompt_tokens * self.input_price + completion_tokens * self.output_price) / 1e6


FEEDBACK_SOURCE = "feedback"
"""The source name of the outcomes posted with `[feedback] token_env`'s token (`OutcomeRecord.source`)."""
MAX_COST = 100.0
"""`[feedback] max_cost`'s default, USD per task: above what any agent run on SWE-bench-sized tasks spends
(a long run of the dearest model is a few dollars), far below a number that overflows a sum."""
MAX_TASK_TEXT_BYTES = 256 * 1024
"""`[feedback] max_task_text_bytes`'s default: a long issue is tens of KB."""


class FeedbackConfig(FrozenModel):
    """`[feedback]`: the `POST /v1/feedback` route, where a harness reports each task's outcome."""

    token_env: str | None = Field(default=None, min_length=1)
    """Environment variable holding the bearer token a feedback request must carry (`Authorization:
    Bearer <token>`; without it, 401); its outcomes' source is "feedback". The token is never in the file;
    an unset variable is refused at start. Give it, `tokens`, or both."""
    tokens: dict[str, str] = Field(default_factory=dict)
    """Several named tokens: source name -> environment variable holding that source's token. An outcome
    records the source whose token posted it (`OutcomeRecord.source`); `router-train feedback` counts
    outcomes per source."""
    correctors: list[str] = Field(default_factory=list)
    """The sources allowed to correct an outcome (`"correction": true`: a new revision, kept as history;
    estimates use the latest). Default none: a task's first outcome is final."""
    max_cost: float = Field(default=MAX_COST, gt=0, allow_inf_nan=False)
    """The largest `cost` (USD per task) a report may carry; over it, 400 naming the field."""
    task_text: Literal["keep", "hash"] = "keep"
    """What each decision record keeps of the issue text the router routed on: "keep" the text (up to
    `max_task_text_bytes`; `feedback --refit` then needs no task file), or "hash" only its sha256 (for
    privacy; `--refit` then reads the texts from `--tasks`)."""
    max_task_text_bytes: int = Field(default=MAX_TASK_TEXT_BYTES, ge=0)
    """A routed text longer than this (UTF-8 bytes) is kept as its sha256 only."""

    @model_validator(mode="after")
    def _sources(self) -> FeedbackConfig:
        if self.token_env is None and not self.tokens:
            raise ValueError("give token_env or tokens (the bearer tokens feedback requests carry)")
        if self.token_env is not None and FEEDBACK_SOURCE in self.tokens:
            raise ValueError(f"tokens.{FEEDBACK_SOURCE} is token_env's source name; name it otherwise")
        unknown = [c for c in self.correctors if c not in self.sources()]
        if unknown:
            raise ValueError(f"correctors: {unknown[0]!r} is not a source ({', '.join(self.sources())})")
        return self

    def sources(self) -> dict[str, str]:
        """Source name -> the environment variable of its token."""
        named = {FEEDBACK_SOURCE: self.token_env} if self.token_env is not None else {}
        return {**named, **self.tokens}


class AdminConfig(FrozenModel):
    """`[admin]`: the admin routes (`GET /dashboard`, `POST /admin/reload`), behind their own bearer token."""

    token_env: str = Field(min_length=1)
    """Environment variable holding the bearer token of the admin routes (/admin/*, /dashboard): a request
    without `Authorization: Bearer <token>` gets 401. The token is never in the file; an unset variable is
    refused at start."""


class MetricsConfig(FrozenModel):
    """`[metrics]`: who may read `GET /metrics` (absent: anyone who reaches the port, as Prometheus
    scrapes by default)."""

    token_env: str | None = Field(default=None, min_length=1)
    """Environment variable holding the bearer token a scrape must carry (`Authorization: Bearer
    <token>`; without it, 401); None: no token. Not the admin token: a scraper should not be able to
    reload the router. An unset variable is refused at start."""


class ExploreConfig(FrozenModel):
    """`[explore]`: route a share of new tasks to a uniformly drawn pool model, so that every model's
    outcomes are seen (and the logged propensities let a log judge other routers off-policy)."""

    rate: float = Field(ge=0, le=1, allow_inf_nan=False)
    """The share of new tasks served by a uniform draw over the pool instead of the router's pick
    (e.g. 0.05); the draw may give the router's pick."""
    seed: int = 0
    """Seed of the draws: a task's draw is a function of the seed and its task key alone, so it is the
    same after a restart and whatever the order tasks arrive in."""


class ServeConfig(FrozenModel):
    """`router-train serve CONFIG.toml`: which router decides, and where each pool model is served."""

    router: RouterSpec
    """The router, exactly as `router-train route` takes it (a checkpoint, with a pool for an any-pool
    checkpoint, or an endpoint and model for an LLM router)."""
    upstreams: dict[str, UpstreamConfig]
    """One upstream per pool model id (the TOML table `[upstreams."<pool model id>"]`)."""
    store: StoreConfig = Field(default_factory=StoreConfig)
    """Where each task's decision, usage and outcomes are kept, so a task stays on its model across
    restarts: `store = "<location>"` (a SQLite file, or a `postgresql://` URL that several replicas share),
    or a `[store]` table with `location` and `timeout` (`serve.store_config.StoreConfig`)."""
    decision_log: Path = Path("serve-state/decisions.jsonl")
    """JSON Lines log, appended: one line per routing decision, fallback used, router error, routed
    answer's usage and outcome (`serve.records`)."""
    feedback: FeedbackConfig | None = None
    """`[feedback]`: enables `POST /v1/feedback` (absent: the route does not exist, 404)."""
    explore: ExploreConfig | None = None
    """`[explore]`: exploration of new tasks (absent: every task goes to the router's pick)."""
    admin: AdminConfig | None = None
    """`[admin]`: enables the admin routes, `GET /dashboard` and `POST /admin/reload` (absent: they do not
    exist, 404)."""
    metrics: MetricsConfig = MetricsConfig()
    """`[metrics]`: the bearer token of `GET /metrics` (absent: none; the route always exists)."""

    @model_validator(mode="after")
    def _fallbacks_known(self) -> ServeConfig:
        for model_id, up in self.upstreams.items():
            if up.fallback is not None and up.fallback not in self.upstreams:
                raise ValueError(f"upstreams.{model_id}.fallback {up.fallback!r} has no upstream")
            if up.fallback == model_id:
                raise ValueError(f"upstreams.{model_id}.fallback is the model itself")
        if ROUTER_MODEL in self.upstreams:
            raise ValueError(f"{ROUTER_MODEL!r} is the routed model's name, not a pool model id")
        return self


def read_config(path: str | os.PathLike[str]) -> ServeConfig:
    """Read and validate a serve config; every error is one `ServeConfigError` line naming the file."""
    text = read_text_file(path, "serve config", ServeConfigError)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ServeConfigError(f"{path}: not valid TOML: {exc}") from exc
    try:
        return ServeConfig.model_validate(data)
    except ValidationError as exc:
        raise ServeConfigError(f"{path}: not a valid serve config: {one_line(exc)}") from exc


def check_serves_pool(config: ServeConfig, pool: list[str], path: str | os.PathLike[str]) -> None:
    """Refuse a pool model without an upstream, and an upstream whose key variable is unset."""
    missing = [m for m in pool if m not in config.upstreams]
    if missing:
        raise ServeConfigError(
            f"{path}: pool model {missing[0]!r} has no [upstreams.{missing[0]!r}] table"
            + (f" (nor {', '.join(map(repr, missing[1:]))})" if missing[1:] else "")
        )
    extra = [m for m in config.upstreams if m not in pool]
    if extra:
        raise ServeConfigError(f"{path}: upstream {extra[0]!r} is not a model of the router's pool {pool}")
    for model_id, up in config.upstreams.items():
        if up.api_key_env is not None and not os.environ.get(up.api_key_env):
            raise ServeConfigError(
                f"{path}: upstreams.{model_id!r}.api_key_env: variable {up.api_key_env} is not set"
            )
    if config.feedback is not None:
        for source, env in config.feedback.sources().items():
            field = "token_env" if source == FEEDBACK_SOURCE else f"tokens.{source}"
            if not os.environ.get(env):
                raise ServeConfigError(f"{path}: feedback.{field}: variable {env} is not set")
    if config.admin is not None and not os.environ.get(config.admin.token_env):
        raise ServeConfigError(f"{path}: admin.token_env: variable {config.admin.token_env} is not set")
    metrics_env = config.metrics.token_env
    if metrics_env is not None and not os.environ.get(metrics_env):
        raise ServeConfigError(f"{path}: metrics.token_env: variable {metrics_env} is not set")


def api_key(up: UpstreamConfig) -> str | None:
    return os.environ.get(up.api_key_env) if up.api_key_env else None


def feedback_tokens(config: ServeConfig) -> dict[str, str]:
    """Source name -> the bearer token its feedback requests carry; empty without `[feedback]` (an unset
    variable is refused at start by `check_serves_pool`, and left out here)."""
    if config.feedback is None:
        return {}
    sources = config.feedback.sources().items()
    return {source: os.environ[env] for source, env in sources if os.environ.get(env)}


def admin_token(config: ServeConfig) -> str | None:
    """The bearer token the admin routes' requests must carry; None without `[admin]` (or an unset
    variable, which `check_serves_pool` refuses at start)."""
    if config.admin is None:
        return None
    return os.environ.get(config.admin.token_env) or None


def metrics_token(config: ServeConfig) -> str | None:
    """The bearer token a `GET /metrics` scrape must carry; None: no token asked."""
    env = config.metrics.token_env
    return None if env is None else os.environ.get(env) or None
