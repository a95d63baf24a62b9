"""The PostgreSQL store (psycopg 3): one database behind any number of `serve` replicas.

Every write is one autocommitted statement, committed before the proxy answers for it. A task's decision
is claimed first-wins by its primary key (INSERT ... ON CONFLICT DO NOTHING, then the stored row), so two
replicas routing the same new task at once serve it by one model; outcomes are keyed by (task, revision)
(contract A), so a report retried on another replica is idempotent.

A lost connection (the database restarted, or unreachable) makes every call raise `StoreUnavailable` at
once, without waiting on the network, while a background thread reconnects every `RECONNECT_S`; usage
counted meanwhile is kept in memory and added when it is back (at least once: an answer whose write was
cut mid-statement may be counted twice). Decided tasks' models are cached in memory, so a replica keeps
serving them through the outage.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import psycopg

from router_train.serve.records import DecisionRecord, OutcomeRecord, UsageRecord
from router_train.serve.store import USAGE_COLUMNS, TaskUsage
from router_train.serve.store_api import StoreUnavailable, masked

T = TypeVar("T")

SCHEMA_VERSION = 1
"""The schema this code writes; a database at an older version is migrated at start (`_MIGRATIONS`)."""
CONNECT_TIMEOUT_S = 3
"""Seconds to wait for the database when connecting (at start, and each reconnection try)."""
RECONNECT_S = 0.5
"""Seconds between reconnection tries after the connection is lost."""
MAX_PENDING_USAGE = 100_000
"""Usage records kept in memory while the database is away; past this the oldest are dropped (counted)."""
_LOCK_KEY = 0x726F75746572  # pg_advisory_xact_lock key: replicas starting together migrate one at a time

_MIGRATIONS: dict[int, tuple[str, ...]] = {
    1: (
        """CREATE TABLE IF NOT EXISTS decisions (
            task TEXT PRIMARY KEY,          -- sha256 hex of the task's identity (identity.task_key)
            model TEXT NOT NULL,            -- the pool model id it is served by
            router TEXT NOT NULL,           -- the router that decided
            time TEXT NOT NULL,             -- when (UTC, ISO 8601)
            instance_id TEXT,               -- feedback may name a task by it
            explored BOOLEAN NOT NULL,      -- served by an exploration draw
            checkpoint_sha256 TEXT,         -- the router checkpoint it came from (hot refits change it)
            record TEXT NOT NULL            -- records.DecisionRecord, JSON
        )""",
        "CREATE INDEX IF NOT EXISTS decisions_instance ON decisions (instance_id)",
        """CREATE TABLE IF NOT EXISTS usage (
            task TEXT PRIMARY KEY,
            requests BIGINT NOT NULL,
            unreported BIGINT NOT NULL,
            prompt_tokens BIGINT NOT NULL,
            completion_tokens BIGINT NOT NULL,
            priced BIGINT NOT NULL,
            cost DOUBLE PRECISION NOT NULL
        )""",
        """CREATE TABLE IF NOT EXISTS outcomes (
            task TEXT NOT NULL,
            revision INTEGER NOT NULL,      -- 0 the first outcome, +1 per correction
            source TEXT NOT NULL,           -- the feedback token's name
            record TEXT NOT NULL,           -- records.OutcomeRecord, JSON
            PRIMARY KEY (task, revision)
        )""",
    ),
}
_CONNECTION_LOST = (psycopg.OperationalError, psycopg.InterfaceError)


def _connect(url: str) -> psycopg.Connection[Any]:
    return psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S)


def _first_line(exc: BaseException) -> str:
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return lines[0] if lines else type(exc).__name__


def migrate(conn: psycopg.Connection[Any]) -> None:
    """Create the schema, or bring an older one to `SCHEMA_VERSION`, in one transaction under an advisory
    lock (replicas starting together do it one at a time)."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
        conn.execute("CREATE TABLE IF NOT EXISTS serve_schema (version INTEGER NOT NULL)")
        row = conn.execute("SELECT max(version) FROM serve_schema").fetchone()
        have = row[0] if row is not None and row[0] is not None else 0
        if have > SCHEMA_VERSION:
            raise StoreUnavailable(f"schema version {have} is newer than this serve's ({SCHEMA_VERSION})")
        for version in range(have + 1, SCHEMA_VERSION + 1):
            for statement in _MIGRATIONS[version]:
                conn.execute(statement)  # type: ignore[arg-type]  # our own literal SQL
            conn.execute("INSERT INTO serve_schema (version) VALUES (%s)", (version,))


class PostgresStore:
    """The `Store` on a PostgreSQL database (`store = "postgresql://..."`)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.where = masked(url)
        """The URL as messages name it (password masked)."""
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._models: dict[str, str] = {}
        self._pending: list[UsageRecord] = []
        self.dropped_usage = 0
        """Usage records dropped because more than `MAX_PENDING_USAGE` waited for the database."""
        self._reconnecting: threading.Thread | None = None
        try:
            conn = _connect(url)
            migrate(conn)
        except (psycopg.Error, StoreUnavailable) as exc:
            raise StoreUnavailable(
                f"{self.where}: cannot use the PostgreSQL store: {_first_line(exc)}"
            ) from None
        self._conn: psycopg.Connection[Any] | None = conn
        self._down = ""

    # --- the connection ----------------------------------------------------------------------------

    @property
    def available(self) -> bool:
        """Whether the database is connected now."""
        return self._conn is not None

    def _run(self, work: Callable[[psycopg.Connection[Any]], T]) -> T:
        with self._lock:
            conn = self._conn
            if conn is None:
                raise StoreUnavailable(self._down)
            try:
                return work(conn)
            except _CONNECTION_LOST as exc:
                self._lost(exc)
                raise StoreUnavailable(self._down) from None

    def _lost(self, exc: BaseException) -> None:
        """Drop the broken connection and start reconnecting (under `_lock`)."""
        if self._conn is not None:
            with contextlib.suppress(psycopg.Error):
                self._conn.close()
        self._conn = None
        self._down = f"the store {self.where} cannot be reached: {_first_line(exc)}"
        if not self._closed.is_set() and (self._reconnecting is None or not self._reconnecting.is_alive()):
            self._reconnecting = threading.Thread(target=self._reconnect, name="store-reconnect", daemon=True)
            self._reconnecting.start()

    def _reconnect(self) -> None:
        while not self._closed.wait(RECONNECT_S):
            try:
                conn = _connect(self.url)
            except psycopg.Error as exc:
                with self._lock:
                    self._down = f"the store {self.where} cannot be reached: {_first_line(exc)}"
                continue
            with self._lock:
                pending, self._pending = self._pending, []
                try:
                    for record in pending:
                        _add_usage(conn, record)
                except _CONNECTION_LOST:
                    self._pending = pending + self._pending
                    conn.close()
                    continue
                self._conn = conn
            return

    # --- decisions ---------------------------------------------------------------------------------

    def get(self, task: str) -> str | None:
        model = self._models.get(task)
        if model is not None:
            return model
        row = self._run(
            lambda c: c.execute("SELECT model FROM decisions WHERE task = %s", (task,)).fetchone()
        )
        if row is None:
            return None
        self._models[task] = row[0]
        return str(row[0])

    def claim(self, record: DecisionRecord) -> DecisionRecord:
        assert record.model is not None, "only a decision with a model is stored"

        def work(c: psycopg.Connection[Any]) -> DecisionRecord:
            written = c.execute(
                "INSERT INTO decisions (task, model, router, time, instance_id, explored, checkpoint_sha256, "
                "record) VALUES (%s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (task) DO NOTHING",
                _decision_row(record),
            ).rowcount
            if written == 1:
                return record
            row = c.execute("SELECT record FROM decisions WHERE task = %s", (record.task,)).fetchone()
            assert row is not None, "a conflicting decision row exists"
            return DecisionRecord.model_validate_json(row[0])

        stored = self._run(work)
        assert stored.model is not None
        self._models[stored.task] = stored.model
        return stored

    def put(self, record: DecisionRecord) -> None:
        assert record.model is not None, "only a decision with a model is stored"
        self._run(
            lambda c: c.execute(
                "INSERT INTO decisions (task, model, router, time, instance_id, explored, checkpoint_sha256, "
                "record) VALUES (%s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (task) DO UPDATE SET "
                "model = excluded.model, router = excluded.router, time = excluded.time, "
                "instance_id = excluded.instance_id, explored = excluded.explored, "
                "checkpoint_sha256 = excluded.checkpoint_sha256, record = excluded.record",
                _decision_row(record),
            )
        )
        self._models[record.task] = record.model

    def decision(self, task: str) -> DecisionRecord | None:
        row = self._run(
            lambda c: c.execute("SELECT record FROM decisions WHERE task = %s", (task,)).fetchone()
        )
        return None if row is None else DecisionRecord.model_validate_json(row[0])

    def tasks_named(self, name: str) -> list[str]:
        rows = self._run(
            lambda c: c.execute(
                "SELECT task FROM decisions WHERE task = %s UNION "
                "SELECT task FROM decisions WHERE instance_id = %s ORDER BY task",
                (name, name),
            ).fetchall()
        )
        tasks = [str(r[0]) for r in rows]
        return [name] if name in tasks else tasks

    def decisions(self) -> list[DecisionRecord]:
        rows = self._run(lambda c: c.execute("SELECT record FROM decisions ORDER BY task").fetchall())
        return [DecisionRecord.model_validate_json(r[0]) for r in rows]

    # --- usage -------------------------------------------------------------------------------------

    def add_usage(self, record: UsageRecord) -> None:
        """Add one answer's usage; while the database is away it waits in memory (see the module)."""
        try:
            self._run(lambda c: _add_usage(c, record))
        except StoreUnavailable:
            with self._lock:
                self._pending.append(record)
                if len(self._pending) > MAX_PENDING_USAGE:
                    del self._pending[0]
                    self.dropped_usage += 1

    def add_usages(self, records: Sequence[UsageRecord]) -> None:
        """Add several answers' usage in one transaction; while the database is away they wait in memory."""

        def work(c: psycopg.Connection[Any]) -> None:
            with c.transaction():
                for record in records:
                    _add_usage(c, record)

        try:
            self._run(work)
        except StoreUnavailable:
            with self._lock:
                self._pending.extend(records)
                excess = len(self._pending) - MAX_PENDING_USAGE
                if excess > 0:
                    del self._pending[:excess]
                    self.dropped_usage += excess

    def usage(self, task: str) -> TaskUsage:
        row = self._run(
            lambda c: c.execute(
                f"SELECT {', '.join(USAGE_COLUMNS)} FROM usage WHERE task = %s", (task,)
            ).fetchone()
        )
        return TaskUsage.of_row(row)

    # --- outcomes (contract A) ---------------------------------------------------------------------

    def record_outcome(self, record: OutcomeRecord) -> OutcomeRecord | None:
        """Commit the outcome at its (task, revision) unless that revision exists: then the row stored
        there is returned, and nothing written (a race between replicas: one wins)."""

        def work(c: psycopg.Connection[Any]) -> OutcomeRecord | None:
            written = c.execute(
                "INSERT INTO outcomes (task, revision, source, record) VALUES (%s, %s, %s, %s) "
                "ON CONFLICT (task, revision) DO NOTHING",
                (record.task, record.revision, record.source, record.model_dump_json()),
            ).rowcount
            if written == 1:
                return None
            row = c.execute(
                "SELECT record FROM outcomes WHERE task = %s AND revision = %s",
                (record.task, record.revision),
            ).fetchone()
            assert row is not None, "a conflicting outcome row exists"
            return OutcomeRecord.model_validate_json(row[0])

        return self._run(work)

    def outcome(self, task: str) -> OutcomeRecord | None:
        row = self._run(
            lambda c: c.execute(
                "SELECT record FROM outcomes WHERE task = %s ORDER BY revision DESC LIMIT 1", (task,)
            ).fetchone()
        )
        return None if row is None else OutcomeRecord.model_validate_json(row[0])

    def outcomes(self) -> list[OutcomeRecord]:
        rows = self._run(
            lambda c: c.execute(
                "SELECT DISTINCT ON (task) record FROM outcomes ORDER BY task, revision DESC"
            ).fetchall()
        )
        return [OutcomeRecord.model_validate_json(r[0]) for r in rows]

    def outcome_history(self) -> list[OutcomeRecord]:
        rows = self._run(
            lambda c: c.execute("SELECT record FROM outcomes ORDER BY task, revision").fetchall()
        )
        return [OutcomeRecord.model_validate_json(r[0]) for r in rows]

    def __len__(self) -> int:
        """Tasks whose model this replica holds in memory (decided or served here since it started)."""
        return len(self._models)

    def close(self) -> None:
        self._closed.set()
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


def _decision_row(record: DecisionRecord) -> tuple[Any, ...]:
    return (
        record.task,
        record.model,
        record.router,
        record.time,
        record.instance_id,
        record.explored,
        record.checkpoint_sha256,
        record.model_dump_json(),
    )


def _add_usage(c: psycopg.Connection[Any], record: UsageRecord) -> None:
    reported = record.prompt_tokens is not None and record.completion_tokens is not None
    c.execute(
        "INSERT INTO usage (task, requests, unreported, prompt_tokens, completion_tokens, priced, cost) "
        "VALUES (%s, 1, %s, %s, %s, %s, %s) ON CONFLICT (task) DO UPDATE SET "
        "requests = usage.requests + 1, unreported = usage.unreported + excluded.unreported, "
        "prompt_tokens = usage.prompt_tokens + excluded.prompt_tokens, "
        "completion_tokens = usage.completion_tokens + excluded.completion_tokens, "
        "priced = usage.priced + excluded.priced, cost = usage.cost + excluded.cost",
        (
            record.task,
            0 if reported else 1,
            record.prompt_tokens or 0,
            record.completion_tokens or 0,
            0 if record.cost is None else 1,
            record.cost or 0.0,
        ),
    )


def read_rows(url: str) -> tuple[list[DecisionRecord], list[OutcomeRecord]]:
    """Every decision and every outcome revision (by task, revision) of the store at `url`, for the
    readers of what serve recorded (`export.read_records`); one `StoreUnavailable` line on failure."""
    where = masked(url)
    try:
        with _connect(url) as conn:
            tables = {r[0] for r in conn.execute("SELECT tablename FROM pg_tables").fetchall()}
            if not {"decisions", "outcomes"} <= tables:
                raise StoreUnavailable(f"{where}: not a serve store (no decisions and outcomes tables)")
            decisions = conn.execute("SELECT record FROM decisions ORDER BY task").fetchall()
            outcomes = conn.execute("SELECT record FROM outcomes ORDER BY task, revision").fetchall()
    except psycopg.Error as exc:
        raise StoreUnavailable(f"{where}: cannot read the PostgreSQL store: {_first_line(exc)}") from None
    return (
        [DecisionRecord.model_validate_json(r[0]) for r in decisions],
        [OutcomeRecord.model_validate_json(r[0]) for r in outcomes],
    )
