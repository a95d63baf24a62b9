"""The store, written once for both databases (`store_dialect` says what differs): each task's decision
(first claim wins), usage sums and outcome revisions, on a SQLite file or a PostgreSQL database.

Every write is one transaction, committed before the proxy answers for it (a decision before the task's
first request is forwarded, an outcome before feedback gets its 200). SQLite runs in WAL mode with
`synchronous=NORMAL`: a commit survives the proxy being killed; only a power loss or OS crash may roll back
the last transactions. Decided tasks' models are kept in memory, so they are served while the database is
away; usage counted meanwhile waits in memory (at most `MAX_PENDING_USAGE` records) and is written with the
next write that succeeds or on reconnecting (at least once: an answer whose write was cut mid-statement may
be counted twice). Every call is bounded by the store's timeout (`store_link`).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Sequence
from typing import Any

from router_train.serve.records import DecisionRecord, OutcomeRecord, UsageRecord
from router_train.serve.store_api import InvalidStoreText, StoreUnavailable, check_text
from router_train.serve.store_config import DEFAULT_TIMEOUT_S
from router_train.serve.store_dialect import Dialect, dialect_of
from router_train.serve.store_link import Link, first_line
from router_train.serve.store_schema import migrate
from router_train.serve.store_url import StoreLocation
from router_train.serve.store_usage import USAGE_COLUMNS, TaskUsage, summed

MAX_PENDING_USAGE = 100_000
"""Usage records kept in memory while the database is away; past this the oldest are dropped (counted)."""

_DECISION_COLUMNS = "task, model, router, time, instance_id, explored, checkpoint_sha256, record"
_INSERT_DECISION = f"INSERT INTO decisions ({_DECISION_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
_ADD_USAGE = (
    f"INSERT INTO usage (task, {', '.join(USAGE_COLUMNS)}) VALUES (?, ?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (task) DO UPDATE SET " + ", ".join(f"{c} = usage.{c} + excluded.{c}" for c in USAGE_COLUMNS)
)
LATEST_OUTCOMES = (
    "SELECT record FROM outcomes AS o WHERE revision = "
    "(SELECT MAX(revision) FROM outcomes WHERE task = o.task) ORDER BY task"
)
"""The query of every task's latest outcome revision."""


class SqlStore:
    """The `Store` (`store_api.Store`) on either database."""

    def __init__(self, location: StoreLocation, timeout: float = DEFAULT_TIMEOUT_S) -> None:
        self.location = location
        self.where = location.shown()
        """The location as messages name it (password masked)."""
        self.dialect: Dialect = dialect_of(location)
        self._models: dict[str, str] = {}
        self._pending: list[UsageRecord] = []
        self._pending_lock = threading.Lock()
        self.dropped_usage = 0
        """Usage records dropped because more than `MAX_PENDING_USAGE` waited for the database."""
        self._link = Link(self.dialect, location, timeout, self._open(timeout), self._write_pending)

    def _open(self, timeout: float) -> Any:
        """Connect, check and migrate the schema, read the decided tasks where this process owns the
        database; one line naming the location when it cannot."""
        conn = None
        try:
            conn = self.dialect.connect(self.location, timeout)
            migrate(self.dialect, conn)
            if self.dialect.preload:
                self._models = dict(conn.execute("SELECT task, model FROM decisions").fetchall())
        except self.dialect.errors as exc:
            if conn is not None:
                conn.close()
            why = self.location.scrub(first_line(exc))
            raise StoreUnavailable(f"{self.where}: cannot use the {self.dialect.name} store: {why}") from None
        except ValueError as exc:  # StoreSchemaError: not serve's tables
            if conn is not None:
                conn.close()
            raise type(exc)(f"{self.where}: {exc}") from None
        return conn

    @property
    def available(self) -> bool:
        """Whether the database is connected now."""
        return self._link.available

    @property
    def reconnects(self) -> int:
        """Connections re-made after one was lost."""
        return self._link.reconnects

    def _run(self, query: str, params: Sequence[Any] = ()) -> Any:
        """One statement's cursor (rows fetched by the caller inside `_link.run` only: see `_one`)."""
        sql = self.dialect.sql(query)
        return self._link.run(lambda c: c.execute(sql, params))

    def _one(self, query: str, params: Sequence[Any] = ()) -> Any:
        sql = self.dialect.sql(query)
        return self._link.run(lambda c: c.execute(sql, params).fetchone())

    def _all(self, query: str, params: Sequence[Any] = ()) -> list[Any]:
        sql = self.dialect.sql(query)
        return list(self._link.run(lambda c: c.execute(sql, params).fetchall()))

    # --- decisions ---------------------------------------------------------------------------------

    def get(self, task: str) -> str | None:
        model = self._models.get(task)
        if model is not None:
            return model
        check_text(task, "task")
        if self.dialect.preload:
            return None
        row = self._one("SELECT model FROM decisions WHERE task = ?", (task,))
        if row is None:
            return None
        self._models[task] = str(row[0])
        return str(row[0])

    def claim(self, record: DecisionRecord) -> DecisionRecord:
        """Keep the task's decision unless one is stored: first wins (INSERT ... ON CONFLICT DO NOTHING),
        and the stored decision is returned (`record` itself when it was written)."""
        row = _decision_row(record)
        insert = self.dialect.sql(_INSERT_DECISION + " ON CONFLICT (task) DO NOTHING")
        select = self.dialect.sql("SELECT record, model FROM decisions WHERE task = ?")

        def work(c: Any) -> DecisionRecord:
            if c.execute(insert, row).rowcount == 1:
                return record
            stored = c.execute(select, (record.task,)).fetchone()
            assert stored is not None, "a conflicting decision row exists"
            if stored[0] is None:  # decided before records were kept: its model is what counts
                return record.model_copy(update={"model": stored[1]})
            return DecisionRecord.model_validate_json(stored[0])

        kept = self._link.run(work)
        assert kept.model is not None
        self._models[kept.task] = kept.model
        return kept

    def put(self, record: DecisionRecord) -> None:
        """Keep (or replace: a stored model no longer in the pool is routed again) the task's decision."""
        updates = ", ".join(f"{c} = excluded.{c}" for c in _DECISION_COLUMNS.split(", ")[1:])
        self._run(_INSERT_DECISION + f" ON CONFLICT (task) DO UPDATE SET {updates}", _decision_row(record))
        assert record.model is not None
        self._models[record.task] = record.model

    def decision(self, task: str) -> DecisionRecord | None:
        check_text(task, "task")
        row = self._one("SELECT record FROM decisions WHERE task = ?", (task,))
        return None if row is None or row[0] is None else DecisionRecord.model_validate_json(row[0])

    def tasks_named(self, name: str) -> list[str]:
        """The task keys `name` names: itself when it is a stored task key, else the tasks whose decision
        has that `instance_id` (sorted)."""
        check_text(name, "task")
        rows = self._all(
            "SELECT task FROM decisions WHERE task = ? UNION "
            "SELECT task FROM decisions WHERE instance_id = ? ORDER BY task",
            (name, name),
        )
        tasks = [str(r[0]) for r in rows]
        return [name] if name in tasks else tasks

    def decisions(self) -> list[DecisionRecord]:
        rows = self._all("SELECT record FROM decisions WHERE record IS NOT NULL ORDER BY task")
        return [DecisionRecord.model_validate_json(r[0]) for r in rows]

    # --- usage -------------------------------------------------------------------------------------

    def add_usage(self, record: UsageRecord) -> None:
        """Add one answer's usage to its task's sums (one transaction)."""
        self.add_usages([record])

    def add_usages(self, records: Sequence[UsageRecord]) -> None:
        """Add the answers' usage (and any waiting in memory) in one transaction; while the database is
        away they wait in memory (see the module)."""
        for record in records:
            check_text(record.task, "task")
        with self._pending_lock:
            self._pending.extend(records)
        try:
            self._link.run(self._write_pending)
        except StoreUnavailable:
            with self._pending_lock:
                over = len(self._pending) - MAX_PENDING_USAGE
                if over > 0:
                    del self._pending[:over]
                    self.dropped_usage += over

    def _write_pending(self, conn: Any) -> None:
        """Write the usage waiting in memory on `conn`, one transaction (under the link's lock)."""
        with self._pending_lock:
            batch = list(self._pending)
        if not batch:
            return
        add = self.dialect.sql(_ADD_USAGE)
        # In task order: replicas flushing batches that share tasks then lock their rows in one order,
        # where first-seen order deadlocked them (PostgreSQL aborts one; seen after a hang, when all flush).
        rows = [(task, *sums) for task, sums in sorted(summed(batch).items())]
        if len(rows) == 1:  # one statement is its own transaction
            conn.execute(add, rows[0])
        else:
            with self.dialect.transaction(conn):
                for row in rows:
                    conn.execute(add, row)
        with self._pending_lock:
            del self._pending[: len(batch)]

    def usage(self, task: str) -> TaskUsage:
        """The task's usage sums (all zero for a task without answers)."""
        check_text(task, "task")
        query = f"SELECT {', '.join(USAGE_COLUMNS)} FROM usage WHERE task = ?"
        return TaskUsage.of_row(self._one(query, (task,)))

    # --- outcomes ----------------------------------------------------------------------------------

    def record_outcome(self, record: OutcomeRecord) -> OutcomeRecord | None:
        """Commit the outcome at its (task, revision) unless that revision exists: then the row stored
        there is returned, and nothing written (two writers racing for a revision: one wins)."""
        row = (record.task, record.revision, record.source, _json(record, "outcome"))
        check_text(record.task, "task")
        check_text(record.instance_id, "instance_id")
        check_text(record.source, "source")
        insert = self.dialect.sql(
            "INSERT INTO outcomes (task, revision, source, record) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (task, revision) DO NOTHING"
        )
        select = self.dialect.sql("SELECT record FROM outcomes WHERE task = ? AND revision = ?")

        def work(c: Any) -> OutcomeRecord | None:
            if c.execute(insert, row).rowcount == 1:
                return None
            stored = c.execute(select, (record.task, record.revision)).fetchone()
            assert stored is not None, "a conflicting outcome row exists"
            return OutcomeRecord.model_validate_json(stored[0])

        return self._link.run(work)

    def outcome(self, task: str) -> OutcomeRecord | None:
        """The task's latest outcome revision; None: no outcome."""
        check_text(task, "task")
        row = self._one("SELECT record FROM outcomes WHERE task = ? ORDER BY revision DESC LIMIT 1", (task,))
        return None if row is None else OutcomeRecord.model_validate_json(row[0])

    def outcomes(self) -> list[OutcomeRecord]:
        return [OutcomeRecord.model_validate_json(r[0]) for r in self._all(LATEST_OUTCOMES)]

    def outcome_history(self) -> list[OutcomeRecord]:
        rows = self._all("SELECT record FROM outcomes ORDER BY task, revision")
        return [OutcomeRecord.model_validate_json(r[0]) for r in rows]

    def __len__(self) -> int:
        """Tasks whose model this process holds in memory (a SQLite store: every decided task)."""
        return len(self._models)

    def close(self) -> None:
        """Write the usage still waiting (when the database answers), then release the connection."""
        if self._pending and self._link.available:
            with contextlib.suppress(StoreUnavailable):  # it stays in memory; nothing else can be done
                self._link.run(self._write_pending)
        self._link.close()


def _json(record: DecisionRecord | OutcomeRecord, what: str) -> str:
    """The record's JSON; text no database holds (a lone surrogate) is `InvalidStoreText`."""
    try:
        return record.model_dump_json()
    except ValueError as exc:  # pydantic's serialisation error of a lone surrogate
        raise InvalidStoreText(f"{what} record: not valid text ({first_line(exc)})") from None


def _decision_row(record: DecisionRecord) -> tuple[Any, ...]:
    assert record.model is not None, "only a decision with a model is stored"
    check_text(record.task, "task")
    check_text(record.instance_id, "instance_id")
    return (
        record.task,
        record.model,
        record.router,
        record.time,
        record.instance_id,
        record.explored,
        record.checkpoint_sha256,
        _json(record, "decision"),
    )
