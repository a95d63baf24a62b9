"""The store seam: what serve keeps per task (decision, usage, outcome revisions) behind one protocol, and
how a `store` location is told apart — a SQLite file (the embedded default) or a PostgreSQL URL (a team's
replicas on one database, `store_postgres`); `store_open.open_store` opens either.

Both backends claim a task's decision first-wins (INSERT ... ON CONFLICT DO NOTHING, then the stored row is
the answer) and keep outcomes as history keyed by (task, revision) (contract A in `StickyStore`'s docstrings).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import Protocol

from router_train.serve.records import DecisionRecord, OutcomeRecord, UsageRecord
from router_train.serve.store import TaskUsage

URL_SCHEMES = ("postgresql://", "postgres://")
"""A `store` starting with one of these is a PostgreSQL URL; anything else is a SQLite file's path."""


class StoreUnavailable(ValueError):
    """The store's database cannot be reached now (one line naming it, password masked): a new task is
    answered 503; the backend reconnects by itself."""


class Store(Protocol):
    """task key -> decision (first one wins), usage sums, outcome revisions. Reads of a decided task's
    model hit an in-memory copy; everything else is the backend's rows."""

    def get(self, task: str) -> str | None:
        """The task's stored model; None when it has no decision."""

    def claim(self, record: DecisionRecord) -> DecisionRecord:
        """Store the task's decision unless one is stored (by another replica, or a request racing this
        one): the stored decision is returned either way (the winner; `record` itself when it won)."""

    def put(self, record: DecisionRecord) -> None:
        """Replace the task's decision (a stored model no longer in the pool is routed again)."""

    def decision(self, task: str) -> DecisionRecord | None:
        """The task's decision record; None when unknown."""

    def tasks_named(self, name: str) -> list[str]:
        """The task keys `name` names: itself when a stored task key, else the tasks of that instance_id."""

    def add_usage(self, record: UsageRecord) -> None:
        """Add one answer's usage to its task's sums."""

    def add_usages(self, records: Sequence[UsageRecord]) -> None:
        """Add several answers' usage to their tasks' sums, in one transaction."""

    @property
    def available(self) -> bool:
        """Whether the backend's database can be reached now."""

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
        """Release the backend's connection or file."""


def store_url(location: str | os.PathLike[str]) -> str | None:
    """The PostgreSQL URL `location` names, or None for a file path. A URL that went through `Path` (a CLI
    option typed as a path: `postgresql:/...`, one slash) is given back its second slash."""
    text = os.fspath(location)
    for scheme in URL_SCHEMES:
        collapsed = scheme[:-1]
        if text.startswith(scheme):
            return text
        if text.startswith(collapsed):
            return scheme + text[len(collapsed) :]
    return None


def masked(url: str) -> str:
    """The URL with its password (if any) shown as `***`: what a message may name."""
    return re.sub(r"^([a-z]+://[^:/@]*):[^@/]*@", r"\1:***@", url)
