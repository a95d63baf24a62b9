"""The dashboard computed in a child process of its own: the page takes seconds of CPU on a long log
(13-17 CPU-s on 50,000 decisions), and in a thread of serve it held the interpreter's lock in turn with
the event loop, so chat requests waited while it rendered. The child reads the store itself (a SQLite file
is read concurrently under WAL; PostgreSQL over its own connection) and sends back only the page.

One child per app, started at the first fetch and kept (its imports take seconds); `compute` runs in it."""

from __future__ import annotations

import hashlib
import multiprocessing
import threading
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime

from router_train.dashboard.data import dashboard
from router_train.dashboard.page import render
from router_train.offpolicy.estimators import PolicyEstimate
from router_train.offpolicy.from_log import LoggedTasks
from router_train.offpolicy.summary import default_estimates
from router_train.scoring.floor import Objective
from router_train.serve.export import ServeRecords
from router_train.serve.store_api import Store
from router_train.serve.store_config import StoreConfig
from router_train.serve.store_open import open_store


@dataclass(frozen=True)
class PageInput:
    """What the page is computed from, besides the store's records (sent to the child)."""

    store: StoreConfig
    """The store's location (a SQLite path or a PostgreSQL URL) and its timeout."""
    router: str
    """The serving router's name."""
    sha256: str | None
    """The serving checkpoint's sha256."""
    pool: tuple[str, ...]
    """The served pool, in the router's order."""
    objective: Objective | None = None
    """What serve serves (`[router] budget` / `quality`); None: no objective."""


def store_records(store: Store) -> ServeRecords:
    """Every decision and outcome the store holds, by task key (the records `router-train feedback STORE`
    reads)."""
    return ServeRecords({d.task: d for d in store.decisions()}, {o.task: o for o in store.outcomes()})


def fingerprint(records: ServeRecords, router: str, sha256: str | None) -> str:
    """What the page depends on, hashed: each decision's task, model and checkpoint, each outcome's task
    and revision, and the serving router."""
    h = hashlib.sha256(f"{router}\0{sha256}".encode())
    for d in records.decisions.values():
        h.update(f"\0{d.task}\0{d.model}\0{d.checkpoint_sha256}".encode())
    for o in records.outcomes.values():
        h.update(f"\1{o.task}\0{o.revision}".encode())
    return h.hexdigest()


class EstimateCache:
    """The last estimates, kept while the logged tasks they were computed on are the same (the bootstrap
    takes a moment on a long log; decisions without new outcomes should not redo it)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._key: str | None = None
        self._estimates: list[PolicyEstimate] = []

    @staticmethod
    def key(data: LoggedTasks) -> str:
        h = hashlib.sha256("\0".join(data.logged.models).encode())
        for a in (data.logged.served, data.logged.propensity, data.logged.resolved, data.logged.cost):
            h.update(a.tobytes())
        if data.router_picks is not None:
            h.update(data.router_picks.tobytes())
        return h.hexdigest()

    def estimates(self, data: LoggedTasks) -> list[PolicyEstimate]:
        key = self.key(data)
        with self._lock:
            if key != self._key:
                self._estimates, self._key = default_estimates(data), key
            return self._estimates


_ESTIMATES = EstimateCache()
"""The child's estimates, kept between its pages."""


def page(records: ServeRecords, what: PageInput, cache: EstimateCache) -> str:
    """The dashboard's HTML of `records`, now."""
    d = dashboard(
        records,
        router=what.router,
        pool=what.pool,
        serving_sha256=what.sha256,
        now=datetime.now(UTC),
        estimate=cache.estimates,
        objective=what.objective,
    )
    return render(d)


def compute(what: PageInput, previous: str | None) -> tuple[str, str | None]:
    """(the records' fingerprint, the page; None when the fingerprint is `previous`): runs in the child."""
    store = open_store(what.store)
    try:
        records = store_records(store)
    finally:
        store.close()
    seen = fingerprint(records, f"{what.router}\0{what.objective}", what.sha256)
    return seen, None if seen == previous else page(records, what, _ESTIMATES)


def render_process() -> ProcessPoolExecutor:
    """The child (one worker, started by `spawn`: a fork of a threaded server is not safe)."""
    return ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"))
