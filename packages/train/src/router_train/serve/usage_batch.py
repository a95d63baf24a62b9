"""Usage counted in memory and written in batches: one `add_usages` transaction at most every
`USAGE_FLUSH_MS` or `USAGE_FLUSH_TURNS` answers, and at shutdown, instead of one database round trip per
answered request. A SIGKILL loses at most the usage of that window (never a decision or an outcome, which
are committed before they are answered); feedback flushes first, so an outcome's proxy_cost counts every
answer before it."""

from __future__ import annotations

import asyncio
import contextlib

from router_train.serve.records import UsageRecord
from router_train.serve.store_api import StoreUnavailable
from router_train.serve.store_async import AsyncStore, StoreTimedOut

USAGE_FLUSH_MS = 200
"""Most milliseconds an answer's usage waits in memory before it is written."""
USAGE_FLUSH_TURNS = 256
"""Answers whose usage waits in memory before a write starts regardless of the time."""


class UsageBatcher:
    """Answers' usage records waiting to be added to the store, and the loop that writes them."""

    def __init__(self, store: AsyncStore, flush_ms: int | None = None, turns: int | None = None) -> None:
        self.store = store
        self.flush_s = (USAGE_FLUSH_MS if flush_ms is None else flush_ms) / 1000
        self.turns = USAGE_FLUSH_TURNS if turns is None else turns
        self._pending: list[UsageRecord] = []
        self._flushing = (
            asyncio.Lock()
        )  # one write at a time: a flush that returns has written what came before it
        self._due = asyncio.Event()
        self._loop: asyncio.Task[None] | None = None

    def add(self, record: UsageRecord) -> None:
        """Count one answer's usage (written within the window)."""
        self._pending.append(record)
        if len(self._pending) >= self.turns:
            self._due.set()

    async def flush(self) -> None:
        """Write every record counted so far (one transaction); raises `StoreUnavailable` when the store
        cannot take them now (they are kept for the next flush)."""
        async with self._flushing:
            batch, self._pending = self._pending, []
            if not batch:
                return
            try:
                await self.store.call(self.store.backend.add_usages, batch)
            except StoreTimedOut:
                raise  # the worker thread still holds the batch: written when it ends, or kept by the backend
            except StoreUnavailable:
                self._pending = batch + self._pending  # never started: kept, in order, for the next try
                raise

    def start(self) -> None:
        """Start the writing loop (in the running event loop)."""
        self._loop = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._due.wait(), self.flush_s)
            self._due.clear()
            with contextlib.suppress(StoreUnavailable):
                await self.flush()

    async def stop(self) -> None:
        """Stop the loop and write what is left (at shutdown)."""
        if self._loop is not None:
            self._loop.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._loop
        with contextlib.suppress(StoreUnavailable):
            await self.flush()
