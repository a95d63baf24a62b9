"""The store's one connection: bounded, guarded, and re-made by itself when lost.

Every call runs under one lock with a deadline of the store's timeout. A database that stops answering
but keeps its connections open (a SIGSTOPped server, a partition: the kernel still acks, so no server-side
timeout fires) would block the call for ever; past the deadline the watchdog shuts the connection's
socket down, the blocked call fails at once, the store is marked unavailable and a background thread
reconnects every `RECONNECT_S`. While it is down every call raises `StoreUnavailable` at once, without
waiting on the lock or the network.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from router_train.serve.store_api import StoreUnavailable
from router_train.serve.store_dialect import Dialect
from router_train.serve.store_url import StoreLocation

T = TypeVar("T")

RECONNECT_S = 0.5
"""Seconds between reconnection tries after the connection is lost."""


def first_line(exc: BaseException) -> str:
    """An error's first non-empty line (drivers' messages run over several)."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return lines[0] if lines else type(exc).__name__


class Watchdog:
    """Shuts a socket down when the call using it outlives its deadline (one thread per store)."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self._cond = threading.Condition()
        self._armed: tuple[float, int] | None = None
        self._closed = False
        self.fired = False
        """Whether it shut the last armed socket down (read after the call, under the store's lock)."""
        threading.Thread(target=self._watch, name="store-watchdog", daemon=True).start()

    def arm(self, fd: int) -> None:
        with self._cond:
            self._armed, self.fired = (time.monotonic() + self.timeout, fd), False
            self._cond.notify()

    def disarm(self) -> None:
        with self._cond:  # after this, the socket (soon closed, its number reused) is never touched
            self._armed = None

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify()

    def _watch(self) -> None:
        with self._cond:
            while not self._closed:
                if self._armed is None:
                    self._cond.wait()
                    continue
                deadline, fd = self._armed
                left = deadline - time.monotonic()
                if left > 0:
                    self._cond.wait(left)
                    continue
                self._armed, self.fired = None, True  # before the blocked call wakes and reads it
                with contextlib.suppress(OSError), socket.socket(fileno=os.dup(fd)) as s:
                    s.shutdown(socket.SHUT_RDWR)  # on the connection itself (a dup shares it)


class Link:
    """The connection to one store's database: `run` a call on it, bounded by `timeout` seconds."""

    def __init__(
        self,
        dialect: Dialect,
        location: StoreLocation,
        timeout: float,
        conn: Any,
        on_reconnect: Callable[[Any], None],
    ) -> None:
        self.dialect, self.location, self.timeout = dialect, location, timeout
        self._conn: Any | None = conn
        self._on_reconnect = on_reconnect
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._down = ""
        self._reconnecting: threading.Thread | None = None
        self.reconnects = 0
        """Connections re-made after one was lost."""
        self._watchdog = Watchdog(timeout) if dialect.socket(conn) is not None else None

    @property
    def available(self) -> bool:
        return self._conn is not None

    def run(self, work: Callable[[Any], T]) -> T:
        """`work(conn)` under the lock, bounded; `StoreUnavailable` when the database is away, does not
        answer within the timeout, or is too busy to."""
        if self._conn is None:  # down: say so now, not after queueing on the lock
            raise StoreUnavailable(self._down)
        if not self._lock.acquire(timeout=self.timeout):
            raise StoreUnavailable(self._not_answering())
        try:
            conn = self._conn
            if conn is None:
                raise StoreUnavailable(self._down)
            return self._guarded(conn, work)
        finally:
            self._lock.release()

    def _guarded(self, conn: Any, work: Callable[[Any], T]) -> T:
        """`work(conn)` with the watchdog armed (under the lock)."""
        fd = self.dialect.socket(conn) if self._watchdog is not None else None
        if fd is not None and self._watchdog is not None:
            self._watchdog.arm(fd)
        try:
            return work(conn)
        except self.dialect.errors as exc:
            fired = self._watchdog is not None and self._watchdog.fired
            if fired or isinstance(exc, self.dialect.lost):
                self._lost(conn, self._not_answering() if fired else self._unreachable(exc))
                raise StoreUnavailable(self._down) from None
            if self.dialect.busy(exc):
                raise StoreUnavailable(self._not_answering()) from None
            raise
        finally:
            if fd is not None and self._watchdog is not None:
                self._watchdog.disarm()

    def _not_answering(self) -> str:
        return f"the store {self.location.shown()} did not answer within {self.timeout:g} s"

    def _unreachable(self, exc: BaseException) -> str:
        return f"the store {self.location.shown()} cannot be reached: {self.location.scrub(first_line(exc))}"

    def _lost(self, conn: Any, why: str) -> None:
        """Drop the broken connection and start reconnecting (under the lock)."""
        with contextlib.suppress(*self.dialect.errors, OSError):
            conn.close()
        self._down, self._conn = why, None
        if not self._closed.is_set() and (self._reconnecting is None or not self._reconnecting.is_alive()):
            self._reconnecting = threading.Thread(target=self._reconnect, name="store-reconnect", daemon=True)
            self._reconnecting.start()

    def _reconnect(self) -> None:
        while not self._closed.wait(RECONNECT_S):
            try:
                conn = self.dialect.connect(self.location, self.timeout)
            except self.dialect.errors as exc:
                self._down = self._unreachable(exc)
                continue
            with self._lock:
                if self._closed.is_set():
                    conn.close()
                    return
                try:
                    self._guarded(conn, self._on_reconnect)
                except (StoreUnavailable, *self.dialect.errors) as exc:  # lost again, or refused: try again
                    with contextlib.suppress(*self.dialect.errors, OSError):
                        conn.close()
                    if not isinstance(exc, StoreUnavailable):
                        self._down = self._unreachable(exc)
                    continue
                self._conn = conn
                self.reconnects += 1
            return

    def close(self) -> None:
        self._closed.set()
        with self._lock:
            if self._conn is not None:
                with contextlib.suppress(*self.dialect.errors):
                    self._conn.close()
                self._conn = None
                self._down = f"the store {self.location.shown()} is closed"
        if self._watchdog is not None:
            self._watchdog.close()
