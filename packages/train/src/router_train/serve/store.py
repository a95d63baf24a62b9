"""Where each task's routed model, usage and outcome are kept: SQLite, so a task stays on its model across
restarts and a committed outcome is never lost nor recorded twice.

Every write is its own transaction, committed before the proxy answers for it (a decision before the
task's first request is forwarded, an outcome before feedback gets its 200). The database is in WAL mode
with `synchronous=NORMAL`: a commit survives the proxy being killed (SIGKILL included); only a power loss
or OS crash may roll back the last transactions, which keeps a commit per answered request cheap.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from pydantic import Field

from router_oracle.infra.frozen_model import FrozenModel
from router_train.serve.records import (
    DecisionRecord,
    FenceRecord,
    LogRecord,
    OutcomeRecord,
    UsageRecord,
    record_line,
)

_SCHEMA = (
    """
CREATE TABLE IF NOT EXISTS decisions (
    task TEXT PRIMARY KEY,   -- sha256 hex of the task's identity (identity.task_key)
    model TEXT NOT NULL,     -- the pool model id it is served by
    router TEXT NOT NULL,    -- the router that decided
    time TEXT NOT NULL       -- when (UTC, ISO 8601)
)""",
    """
CREATE TABLE IF NOT EXISTS usage (
    task TEXT PRIMARY KEY,                  -- the task key
    requests INTEGER NOT NULL,              -- upstream answers to the task's routed requests
    unreported INTEGER NOT NULL,            -- of which reported no usage
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    priced INTEGER NOT NULL,                -- answers priced (usage reported, model with prices)
    cost REAL NOT NULL                      -- USD, summed over the priced answers
)""",
    """
CREATE TABLE IF NOT EXISTS outcomes (
    task TEXT NOT NULL,      -- the task key
    revision INTEGER NOT NULL,  -- 0 the first outcome, +1 per correction (OutcomeRecord.revision)
    record TEXT NOT NULL,    -- records.OutcomeRecord, JSON
    PRIMARY KEY (task, revision)
)""",
)
# A store written before outcomes had revisions kept one row per task (task PRIMARY KEY, record): its rows
# move into the new table as revision 0, in one transaction.
_MIGRATE_OUTCOMES = (
    "ALTER TABLE outcomes RENAME TO outcomes_unrevised",
    _SCHEMA[2],
    "INSERT INTO outcomes (task, revision, record) SELECT task, 0, record FROM outcomes_unrevised",
    "DROP TABLE outcomes_unrevised",
)
# Columns added to `decisions` since its first version (a store written before them is migrated in place;
# its rows keep NULL: decided before records were kept).
_ADDED_COLUMNS = (
    ("record", "TEXT"),  # records.DecisionRecord, JSON
    ("instance_id", "TEXT"),  # the decision's instance_id (feedback may name a task by it)
)


LATEST_OUTCOMES = (
    "SELECT record FROM outcomes AS o WHERE revision = "
    "(SELECT MAX(revision) FROM outcomes WHERE task = o.task) ORDER BY task"
)
"""The query of every task's latest outcome revision (the store's and `export.read_store`'s)."""


_ADD_USAGE = (
    "INSERT INTO usage (task, requests, unreported, prompt_tokens, completion_tokens, priced, cost) "
    "VALUES (?, 1, ?, ?, ?, ?, ?) ON CONFLICT (task) DO UPDATE SET "
    "requests = requests + 1, unreported = unreported + excluded.unreported, "
    "prompt_tokens = prompt_tokens + excluded.prompt_tokens, "
    "completion_tokens = completion_tokens + excluded.completion_tokens, "
    "priced = priced + excluded.priced, cost = cost + excluded.cost"
)


def _usage_row(record: UsageRecord) -> tuple[Any, ...]:
    reported = record.prompt_tokens is not None and record.completion_tokens is not None
    return (
        record.task,
        0 if reported else 1,
        record.prompt_tokens or 0,
        record.completion_tokens or 0,
        0 if record.cost is None else 1,
        record.cost or 0.0,
    )


class StoredError(ValueError):
    """A store file that is not serve's (one line naming it)."""


USAGE_COLUMNS = ("requests", "unreported", "prompt_tokens", "completion_tokens", "priced", "cost")
"""The usage table's summed columns, in `TaskUsage`'s order (both stores select them so)."""


class TaskUsage(FrozenModel):
    """A task's routed requests' usage, summed (the store's `usage` row)."""

    requests: int = 0
    """Upstream answers to the task's routed requests (successful ones)."""
    unreported: int = 0
    """Of those, answers that reported no `usage` (their tokens are unknown)."""
    prompt_tokens: int = 0
    """Prompt tokens, summed over the answers that reported usage."""
    completion_tokens: int = 0
    """Completion tokens, summed likewise."""
    priced: int = 0
    """Answers priced: usage reported by a model with prices."""
    cost: float = Field(default=0.0, ge=0)
    """USD, summed over the priced answers."""

    @classmethod
    def of_row(cls, row: Sequence[Any] | None) -> TaskUsage:
        """The usage of a store's `SELECT {USAGE_COLUMNS}` row (all zero for a task without one)."""
        return cls() if row is None else cls(**dict(zip(USAGE_COLUMNS, row, strict=True)))

    @property
    def proxy_cost(self) -> float | None:
        """The task's cost as the proxy priced it; None when no answer of it was priced."""
        return self.cost if self.priced else None


class StickyStore:
    """task key -> routed model (in memory and in one SQLite file), and each task's decision record, usage
    and outcome (in the file). Reads of the model hit the in-memory copy."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()
        try:
            self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._migrate_outcomes()
            for statement in _SCHEMA:
                self._db.execute(statement)
            have = {row[1] for row in self._db.execute("PRAGMA table_info(decisions)")}
            for name, kind in _ADDED_COLUMNS:
                if name not in have:
                    self._db.execute(f"ALTER TABLE decisions ADD COLUMN {name} {kind}")
            self._db.execute("CREATE INDEX IF NOT EXISTS decisions_instance ON decisions (instance_id)")
            rows = self._db.execute("SELECT task, model FROM decisions").fetchall()
        except sqlite3.DatabaseError as exc:
            raise StoredError(f"{path}: not a serve store: {exc}") from None
        self._models: dict[str, str] = dict(rows)

    def _migrate_outcomes(self) -> None:
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(outcomes)")}
        if not columns or "revision" in columns:
            return
        self._db.execute("BEGIN IMMEDIATE")
        try:
            for statement in _MIGRATE_OUTCOMES:
                self._db.execute(statement)
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def get(self, task: str) -> str | None:
        return self._models.get(task)

    def claim(self, record: DecisionRecord) -> DecisionRecord:
        """Keep the task's decision unless one is stored: first wins (INSERT ... ON CONFLICT DO NOTHING),
        and the stored decision is returned (`record` itself when it was written)."""
        assert record.model is not None, "only a decision with a model is stored"
        with self._lock:
            cursor = self._db.execute(
                "INSERT INTO decisions (task, model, router, time, record, instance_id) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (task) DO NOTHING",
                (
                    record.task,
                    record.model,
                    record.router,
                    record.time,
                    record.model_dump_json(),
                    record.instance_id,
                ),
            )
            if cursor.rowcount == 1:
                self._models[record.task] = record.model
                return record
            row = self._db.execute("SELECT record FROM decisions WHERE task = ?", (record.task,)).fetchone()
        stored = DecisionRecord.model_validate_json(row[0])
        if stored.model is not None:
            self._models[stored.task] = stored.model
        return stored

    def put(self, record: DecisionRecord) -> None:
        """Keep (or replace: a stored model no longer in the pool is routed again) the task's decision."""
        assert record.model is not None, "only a decision with a model is stored"
        with self._lock:
            # Autocommit (isolation_level=None): the statement is its own transaction.
            self._db.execute(
                "INSERT OR REPLACE INTO decisions (task, model, router, time, record, instance_id) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (
                    record.task,
                    record.model,
                    record.router,
                    record.time,
                    record.model_dump_json(),
                    record.instance_id,
                ),
            )
            self._models[record.task] = record.model

    def decision(self, task: str) -> DecisionRecord | None:
        """The task's decision record; None when the task is unknown or was decided before records were
        kept (a store from an older serve)."""
        with self._lock:
            row = self._db.execute("SELECT record FROM decisions WHERE task = ?", (task,)).fetchone()
        return None if row is None or row[0] is None else DecisionRecord.model_validate_json(row[0])

    def tasks_named(self, name: str) -> list[str]:
        """The task keys `name` names: itself when it is a stored task key, else the tasks whose decision
        has that `instance_id` (sorted)."""
        if name in self._models:
            return [name]
        with self._lock:
            rows = self._db.execute(
                "SELECT task FROM decisions WHERE instance_id = ? ORDER BY task", (name,)
            ).fetchall()
        return [r[0] for r in rows]

    def add_usage(self, record: UsageRecord) -> None:
        """Add one answer's usage to its task's sums (one transaction)."""
        with self._lock:
            self._db.execute(_ADD_USAGE, _usage_row(record))

    def add_usages(self, records: Sequence[UsageRecord]) -> None:
        """Add several answers' usage in one transaction (serve's batched usage writes)."""
        with self._lock:
            self._db.execute("BEGIN")
            try:
                for record in records:
                    self._db.execute(_ADD_USAGE, _usage_row(record))
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    @property
    def available(self) -> bool:
        """A local file: always reachable."""
        return True

    def usage(self, task: str) -> TaskUsage:
        """The task's usage sums (all zero for a task without answers)."""
        with self._lock:
            row = self._db.execute(
                f"SELECT {', '.join(USAGE_COLUMNS)} FROM usage WHERE task = ?", (task,)
            ).fetchone()
        return TaskUsage.of_row(row)

    def record_outcome(self, record: OutcomeRecord) -> OutcomeRecord | None:
        """Commit the outcome at its (task, revision) unless that revision exists: then the row stored
        there is returned, and nothing written (INSERT ... ON CONFLICT DO NOTHING: two writers racing
        for a revision, one wins, no read-then-write window). A correction is the caller's record with
        revision = the latest + 1 (`outcome`)."""
        with self._lock:
            cursor = self._db.execute(
                "INSERT INTO outcomes (task, revision, record) VALUES (?, ?, ?) "
                "ON CONFLICT (task, revision) DO NOTHING",
                (record.task, record.revision, record.model_dump_json()),
            )
            if cursor.rowcount == 1:
                return None
            row = self._db.execute(
                "SELECT record FROM outcomes WHERE task = ? AND revision = ?", (record.task, record.revision)
            ).fetchone()
        return OutcomeRecord.model_validate_json(row[0])

    def outcome(self, task: str) -> OutcomeRecord | None:
        """The task's latest outcome revision; None: no outcome."""
        with self._lock:
            row = self._db.execute(
                "SELECT record FROM outcomes WHERE task = ? ORDER BY revision DESC LIMIT 1", (task,)
            ).fetchone()
        return None if row is None else OutcomeRecord.model_validate_json(row[0])

    def decisions(self) -> list[DecisionRecord]:
        """Every decision record kept, by task key."""
        with self._lock:
            rows = self._db.execute(
                "SELECT record FROM decisions WHERE record IS NOT NULL ORDER BY task"
            ).fetchall()
        return [DecisionRecord.model_validate_json(r[0]) for r in rows]

    def outcomes(self) -> list[OutcomeRecord]:
        """The latest outcome revision of every task, by task key (what estimates use)."""
        with self._lock:
            rows = self._db.execute(LATEST_OUTCOMES).fetchall()
        return [OutcomeRecord.model_validate_json(r[0]) for r in rows]

    def outcome_history(self) -> list[OutcomeRecord]:
        """Every outcome revision, by (task, revision)."""
        with self._lock:
            rows = self._db.execute("SELECT record FROM outcomes ORDER BY task, revision").fetchall()
        return [OutcomeRecord.model_validate_json(r[0]) for r in rows]

    def __len__(self) -> int:
        return len(self._models)

    def close(self) -> None:
        with self._lock:
            self._db.close()


class DecisionLog:
    """Appends one record per line, flushed per line: a crash loses no logged line. A kill in the middle
    of a write may leave the last line cut; opening the log fences it (`fence_torn_tail`) so the records
    written after a restart each start on a line of their own (`export.read_log`'s torn-line rule)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self.fenced = fence_torn_tail(path)
        """Bytes of the torn last line fenced on opening (0: the log ended cleanly)."""
        self._file: TextIO = path.open("a", encoding="utf-8")

    def write(self, record: LogRecord) -> None:
        line = record_line(record)
        with self._lock:
            self._file.write(line)
            self._file.flush()

    def close(self) -> None:
        with self._lock:
            self._file.close()


def _torn_tail_bytes(path: Path) -> int:
    """Bytes after the log's last newline (0: empty, or ends with one)."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return 0
    if size == 0:
        return 0
    with path.open("rb") as fh:
        step, end = 1 << 16, size
        while end > 0:
            start = max(0, end - step)
            fh.seek(start)
            chunk = fh.read(end - start)
            at = chunk.rfind(b"\n")
            if at >= 0:
                return size - (start + at + 1)
            end = start
    return size


def fence_torn_tail(path: Path) -> int:
    """End a decision log's torn last line (a crash mid-write) with a newline and a `FenceRecord` naming
    it torn; the number of bytes it had (0: nothing to fence). Nothing is removed: the fragment stays,
    visible, and readers skip and report it (`export.read_log`)."""
    torn = _torn_tail_bytes(path)
    if torn:
        fence = FenceRecord(
            time=datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"), torn_bytes=torn
        )
        with path.open("ab") as fh:
            fh.write(b"\n" + record_line(fence).encode("utf-8"))
            fh.flush()
    return torn
