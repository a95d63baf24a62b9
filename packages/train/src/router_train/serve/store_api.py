"""The store seam: what serve keeps per task (decision, usage, outcome revisions) behind one protocol, and
the errors a store raises; `store_open.open_store` opens one (a SQLite file, the embedded default, or a
PostgreSQL URL that a team's replicas share; `store_url.StoreLocation` tells them apart).

Both backends are one implementation (`store_sql.SqlStore`) over a dialect (`store_dialect`): a task's
decision is claimed first-wins (INSERT ... ON CONFLICT DO NOTHING, then the stored row is the answer) and
outcomes are kept as history keyed by (task, revision).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Protocol

from router_train.serve.identity import RequestError
from router_train.serve.records import DecisionRecord, OutcomeRecord, UsageRecord
from router_train.serve.store_url import StoreLocation, masked
from router_train.serve.store_usage import TaskUsage

__all__ = ["InvalidStoreText", "Store", "StoreSchemaError", "StoreUnavailable", "masked", "store_url"]

URL_SCHEMES = ("postgresql://", "postgres://")
"""The schemes of a PostgreSQL store (any case; `StoreLocation.parse` is the one rule)."""


class StoreUnavailable(ValueError):
    """The store's database cannot be reached now, or did not answer within the store's timeout (one line
    naming it, password masked): a new task is answered 503; the backend reconnects by itself."""


class StoreSchemaError(ValueError):
    """A database or file whose tables are not serve's (one line naming the table): refused at open."""


class InvalidStoreText(RequestError):
    """Text a database cannot hold (a NUL, a lone surrogate) in a task key, an instance_id or a record:
    refused before it reaches the database, the same on both backends. A `RequestError`: the app
    answers it 400, as any request it cannot serve as sent."""


class Store(Protocol):
    """task key -> decision (first one wins), usage sums, outcome revisions. Reads of a decided task's
    model hit an in-memory copy; everything else is the backend's rows. Every call is bounded by the
    store's timeout; a call on a database that cannot be reached raises `StoreUnavailable`."""

    @property
    def available(self) -> bool:
        """Whether the database is connected now (False: calls raise `StoreUnavailable` at once, decided
        tasks' models are still answered from memory, usage waits in memory)."""

    @property
    def reconnects(self) -> int:
        """Connections re-made after one was lost (since the store was opened)."""

    def get(self, task: str) -> str | None:
        """The task's stored model; None when it has no decision."""

    def claim(self, record: DecisionRecord) -> DecisionRecord:
        """Store the task's decision unless one is stored (by another replica, or a request racing this
        one): the stored decision is returned either way (the winner; `record` itself when it won)."""

    def put(self, record: DecisionRecord) -> None:
        """Replace the task's decision (a stored model no longer in the pool is routed again)."""

    def decision(self, task: str) -> DecisionRecord | None:
        """The task's decision record; None when unknown (or decided before records were kept)."""

    def tasks_named(self, name: str) -> list[str]:
        """The task keys `name` names: itself when a stored task key, else the tasks of that instance_id."""

    def add_usage(self, record: UsageRecord) -> None:
        """Add one answer's usage to its task's sums."""

    def add_usages(self, records: Sequence[UsageRecord]) -> None:
        """Add several answers' usage in one transaction (while the database is away they wait in memory,
        and are written with the next write that succeeds, or on reconnecting)."""

    def usage(self, task: str) -> TaskUsage:
        """The task's usage sums."""

    def record_outcome(self, record: OutcomeRecord) -> OutcomeRecord | None:
        """Insert at (task, revision) unless present: None when written, else the row stored there."""

    def outcome(self, task: str) -> OutcomeRecord | None:
        """The task's latest outcome revision."""

    def decisions(self) -> list[DecisionRecord]:
        """Every decision record, by task key."""

    def outcomes(self) -> list[OutcomeRecord]:
        """The latest outcome revision of every task, by task key."""

    def outcome_history(self) -> list[OutcomeRecord]:
        """Every outcome revision, by (task, revision)."""

    def __len__(self) -> int:
        """Tasks decided (as this process knows them)."""

    def close(self) -> None:
        """Release the backend's connection or file (usage still waiting in memory is written first when
        the database answers)."""


def store_url(location: str | os.PathLike[str]) -> str | None:
    """The PostgreSQL URL `location` names, or None for a file path (`StoreLocation.parse`)."""
    return StoreLocation.parse(location).url


def check_text(value: str | None, what: str) -> None:
    """Refuse (`InvalidStoreText`, naming `what`) text neither database can hold: a NUL (PostgreSQL's
    TEXT cannot) or a lone surrogate (not UTF-8)."""
    if value is None:
        return
    if "\x00" in value:
        raise InvalidStoreText(f"{what}: contains a NUL character")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidStoreText(f"{what}: not valid text (a lone surrogate at {exc.start})") from None
