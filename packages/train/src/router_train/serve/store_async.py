"""The store as serve's event loop sees it: every call of the synchronous `Store` runs in a bounded pool of
worker threads under a timeout, so a hung database (stopped, partitioned, failing over) stalls no request
that does not need it. A call that times out or finds the database away raises `StoreUnavailable` and
marks the store unavailable until a call succeeds; decided tasks' models are answered from memory."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

import anyio  # pants: no-infer-dep (installed with starlette, which depends on it)
import anyio.to_thread  # pants: no-infer-dep

from router_train.serve.store_api import Store, StoreUnavailable

T = TypeVar("T")

STORE_WORKERS = 8
"""Store calls running at once, in worker threads (more wait for a free one, within their timeout). A call
that timed out leaves its thread hanging on the database; while this many hang, further calls are refused
at once (503) instead of starting more threads that would hang too."""


class StoreTimedOut(StoreUnavailable):
    """A store call that did not answer within the timeout: its worker thread goes on, and may still
    commit what it was given (the caller must not hand the same write to another call)."""


class AsyncStore:
    """`store`'s calls, awaited: each in a worker thread (at most `workers` at once, and at most `workers`
    more left hanging by timed-out calls), each bounded by `timeout_s`; availability tracked from results."""

    def __init__(
        self, store: Store, timeout_s: float, workers: int = STORE_WORKERS
    ) -> None:
        self.backend = store
        """The synchronous store every call runs on."""
        self.timeout_s = timeout_s
        self.workers = workers
        self._limiter = anyio.CapacityLimiter(workers)
        self._abandoned = 0
        self._lock = threading.Lock()
        self._models: dict[str, str] = {}
        self._down: str | None = None
        self.reconnects = 0
        """Times the store came back after being unavailable (a call succeeded again)."""
        self.on_change: Callable[[bool], None] | None = None
        """Called with the new availability whenever it changes (the metrics' gauge)."""

    @property
    def available(self) -> bool:
        """Whether the last store call succeeded and the backend says it is connected; read from memory."""
        return self._down is None and self.backend.available

    def known_model(self, task: str) -> str | None:
        """The model of a task this process has seen decided: from memory, no thread, no database."""
        return self._models.get(task)

    def remember(self, task: str, model: str) -> None:
        """Keep a decided task's model in memory (`known_model`)."""
        self._models[task] = model

    def __len__(self) -> int:
        """Tasks decided, as the backend's memory holds them (no database call)."""
        return len(self.backend)

    async def call(self, work: Callable[..., T], *args: object, timeout_s: float | None = None) -> T:
        """`work(*args)` in a worker thread within `timeout_s` (default the store's; waiting for a free
        worker counts), or `StoreUnavailable`."""
        limit = self.timeout_s if timeout_s is None else timeout_s
        if self._abandoned >= self.workers:
            raise self._unavailable(f"the store is not answering ({self._abandoned} calls still wait on it)")
        state = {"done": False, "abandoned": False}

        def run() -> T:
            try:
                return work(*args)
            finally:
                with self._lock:
                    state["done"] = True
                    if state["abandoned"]:
                        self._abandoned -= 1

        try:
            with anyio.fail_after(limit):
                result = await anyio.to_thread.run_sync(run, limiter=self._limiter, abandon_on_cancel=True)
        except TimeoutError:
            with self._lock:
                if not state["done"]:  # its thread goes on: counted until it ends
                    state["abandoned"] = True
                    self._abandoned += 1
            raise self._unavailable(f"the store did not answer within {limit:g} s", StoreTimedOut) from None
        except StoreUnavailable as exc:
            raise self._unavailable(str(exc)) from None
        self._up()
        return result

    def _unavailable(self, message: str, kind: type[StoreUnavailable] = StoreUnavailable) -> StoreUnavailable:
        """Mark the store unavailable (until a call succeeds); the exception to raise."""
        was = self._down is None
        self._down = message
        if was and self.on_change is not None:
            self.on_change(False)
        return kind(message)

    def _up(self) -> None:
        """A call succeeded: available again, unless the backend says it is not connected (a backend may
        accept a write while away, keeping it for later)."""
        if self._down is not None and self.backend.available:
            self._down = None
            self.reconnects += 1
            if self.on_change is not None:
                self.on_change(True)

    def close(self) -> None:
        self.backend.close()
