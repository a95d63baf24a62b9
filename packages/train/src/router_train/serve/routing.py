"""Routing: a chat request's body checked, its task identified, and its model found — the stored one of a
decided task (from memory), or a new decision claimed first-wins in the store."""

from __future__ import annotations

import asyncio
import json
import re
import time
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio.to_thread  # pants: no-infer-dep (installed with starlette, which depends on it)
from starlette.datastructures import Headers

from router_train.route import Decision, EndpointError, Router, TaskInput
from router_train.route.task import REPO_PATTERN, served_task
from router_train.serve.config import ROUTER_MODEL, ServeConfig
from router_train.serve.explore import serve_choice
from router_train.serve.floor_choice import FloorAssigner, FloorChoice
from router_train.serve.http_body import now
from router_train.serve.identity import (
    REPO_HEADER,
    TASK_ID_HEADER,
    RequestError,
    first_user_message,
    issue_text,
    kept_text,
    task_key,
)
from router_train.serve.json_body import parse_json_body
from router_train.serve.records import DecisionRecord, RouterErrorRecord
from router_train.serve.store import DecisionLog
from router_train.serve.store_async import AsyncStore


@dataclass(frozen=True)
class Serving:
    """What new tasks are routed with: one immutable object, swapped whole by a hot refit; a request reads
    it once, so a decision's model and checkpoint_sha256 always come from one router."""

    router: Router
    checkpoint_sha256: str | None
    """sha256 hex of the checkpoint file the router was loaded from (None: an LLM router)."""
    checkpoint: Path | None
    """That file (None: an LLM router)."""


@dataclass(frozen=True)
class Routed:
    """Where one request goes: what metering and the response headers use (never read back from them)."""

    model: str
    task: str | None
    """The task key; None for a request that asked for a pool model directly."""
    decided: DecisionRecord | None = None
    """The decision this request made and stored (None: the task was decided before, or not routed)."""


class NoRoute(Exception):
    """The router named no pool model for the task (its reason is the message)."""


def decision_record(decision: Decision) -> dict[str, Any]:
    """The decision exactly as `router-train route --explain` prints it (its JSON line)."""
    record: dict[str, Any] = json.loads(decision.json_line())
    return record


def parse_chat(raw: bytes, config: ServeConfig, pool: list[str]) -> dict[str, Any]:
    """A chat completion request's body: a JSON object with `messages` and a model this proxy serves."""
    body = parse_json_body(raw, "the request body")
    if not isinstance(body, dict):
        raise RequestError("the request body must be a JSON object")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise RequestError("`messages` is missing or not a non-empty list")
    model = body.get("model")
    if not isinstance(model, str):
        raise RequestError("`model` is missing or not a string")
    if model != ROUTER_MODEL and model not in config.upstreams:
        known = ", ".join([ROUTER_MODEL, *pool])
        raise RequestError(f"unknown model {model!r}; this proxy serves: {known}")
    return body


class TaskRouter:
    """Finds each request's model: a decided task's from memory (no thread, no database), a new task's
    by the serving router, claimed in the store (a store that cannot be reached: `StoreUnavailable`)."""

    def __init__(
        self,
        config: ServeConfig,
        pool: list[str],
        store: AsyncStore,
        log: DecisionLog,
        floor: FloorAssigner | None = None,
    ) -> None:
        self.config = config
        self.floor = floor
        """Assigns a floor decision's task by the floor learned from the store's outcomes (None: the
        table's mix, as `route` deploys it)."""
        self.pool = pool
        """The pool in the router's order (exploration draws index it)."""
        self.store = store
        self.log = log
        # One routing per task at a time: a second first-request of the same task waits for the first's
        # decision instead of routing again (and perhaps differently, for a sampling router).
        self._locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()

    async def route(self, body: dict[str, Any], headers: Headers, serving: Serving) -> Routed:
        model = body["model"]
        if model != ROUTER_MODEL:
            return Routed(model, None)
        first = first_user_message(body["messages"])
        task_id = headers.get(TASK_ID_HEADER) or None
        repo = headers.get(REPO_HEADER) or None
        if repo is not None and not re.fullmatch(REPO_PATTERN, repo):
            raise RequestError(f"header {REPO_HEADER}: expected a GitHub owner/name, got {repo!r}")
        key = task_key(first, task_id)
        known = self.store.known_model(key)
        if known in self.config.upstreams:
            return Routed(known, key)
        lock = self._locks.setdefault(key, asyncio.Lock())
        async with lock:
            stored = await self._stored(key)
            if stored in self.config.upstreams:
                return Routed(stored, key)
            task = served_task(issue_text(first), repo, task_id, key)
            record = await self._decide(key, task, serving)
            if stored is None:  # first wins across replicas: another one may have claimed it meanwhile
                kept = await self.store.call(self.store.backend.claim, record)
            else:  # the stored model left the pool: routed again
                await self.store.call(self.store.backend.put, record)
                kept = record
            assert kept.model is not None
            self.store.remember(key, kept.model)
            if kept is not record:
                return Routed(kept.model, key)
            self.log.write(record)  # after the commit: a logged decision is the stored one
            return Routed(kept.model, key, record)

    async def _stored(self, key: str) -> str | None:
        """The task's stored model (another replica's decision, or one from before a restart)."""
        model = self.store.known_model(key)
        if model is None:
            model = await self.store.call(self.store.backend.get, key)
            if model is not None:
                self.store.remember(key, model)
        return model

    async def _decide(self, key: str, task: TaskInput, serving: Serving) -> DecisionRecord:
        started = time.perf_counter()
        try:
            # In a worker thread: a local router computes for a few ms, an endpoint router waits on an
            # LLM for seconds; neither may stall the requests of other tasks.
            decision = await anyio.to_thread.run_sync(serving.router.route, task)
        except Exception as exc:  # an endpoint's EndpointError, or any router bug: JSON 502, keep serving
            error = str(exc) if isinstance(exc, EndpointError) else f"{type(exc).__name__}: {exc}"
            self.log.write(RouterErrorRecord(time=now(), task=key, error=error))
            raise NoRoute(f"the router failed: {error}") from None
        choice = None
        if decision.chooser == "floor" and self.floor is not None:
            choice = await self.floor(key, serving)
        latency_ms = (time.perf_counter() - started) * 1000
        record = self._record(key, decision, latency_ms, task, serving.checkpoint_sha256, choice)
        if record.model is None:
            self.log.write(record)
            raise NoRoute(f"the router gave no route for this task: {decision.reason or decision.model!r}")
        return record

    def _record(
        self,
        key: str,
        decision: Decision,
        latency_ms: float,
        task: TaskInput,
        checkpoint_sha256: str | None,
        choice: FloorChoice | None = None,
    ) -> DecisionRecord:
        """The record of a new task's decision: the router's (or the learned floor's `choice`), or an
        exploration draw's (`[explore]`, on top), with the text routed on as `[feedback]` keeps it
        (`identity.kept_text`) and the checkpoint it came from."""
        proposed = choice.model if choice is not None else decision.model
        pick = proposed if proposed in self.config.upstreams else None
        text, digest = kept_text(task.problem_statement, self.config.feedback)
        explore = self.config.explore
        served = serve_choice(
            key,
            pick,
            self.pool,
            explore.rate if explore else 0.0,
            explore.seed if explore else 0,
            choice.propensity if choice is not None else 1.0,
        )
        reason = decision.reason if choice is None else f"{decision.reason}; {choice.reason}"
        return DecisionRecord(
            **{**decision.model_dump(), "model": served.model, "reason": reason},
            time=now(),
            task=key,
            latency_ms=round(latency_ms, 3),
            router_model=pick,
            explored=served.explored,
            propensity=served.propensity,
            checkpoint_sha256=checkpoint_sha256,
            repo=task.repo or None,
            issue_text=text,
            issue_sha256=digest,
            posterior=choice.posterior if choice is not None else None,
        )
