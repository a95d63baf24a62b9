"""What differs between the store's two databases, and nothing else: how to connect (and bound the
connection), the placeholder, how a transaction starts, how to list a table's columns, and which errors
mean the connection is gone. The schema, the migration and every operation are written once, on top
(`store_schema`, `store_sql`), in SQL both accept (`?` placeholders, `ON CONFLICT`, standard types).
"""

from __future__ import annotations

import contextlib
import math
import sqlite3
from collections.abc import Iterator
from typing import Any, Protocol

import psycopg

from router_train.serve.store_url import StoreLocation

_MIGRATION_LOCK = 0x726F75746572  # pg_advisory_xact_lock key: replicas starting together migrate in turn


class Dialect(Protocol):
    """One database's way of doing what the store needs."""

    name: str
    """How messages name the backend ("SQLite", "PostgreSQL")."""
    lost: tuple[type[BaseException], ...]
    """Errors after which the connection is dropped and a new one sought."""
    errors: tuple[type[BaseException], ...]
    """Every error of the database's driver."""
    preload: bool
    """Whether this process alone writes the database (a SQLite file), so its decided tasks are read into
    memory at open and a task not in memory is not asked for."""

    def connect(self, location: StoreLocation, timeout: float) -> Any:
        """A new autocommitting connection, bounded by `timeout` seconds (connect and statements)."""

    def read_only(self, location: StoreLocation, timeout: float) -> Any:
        """A connection for reading only (a running serve may hold the store)."""

    def sql(self, query: str) -> str:
        """`query` (written with `?` placeholders) as this driver takes it."""

    def transaction(self, conn: Any, migrating: bool = False) -> contextlib.AbstractContextManager[None]:
        """One transaction (`migrating`: also exclusive of other processes migrating)."""

    def columns(self, conn: Any, table: str) -> list[str] | None:
        """The table's column names; None when there is no such table."""

    def socket(self, conn: Any) -> int | None:
        """The connection's socket (the watchdog shuts it down past the timeout); None: no socket."""

    def busy(self, exc: BaseException) -> bool:
        """Whether `exc` says the database is there but did not answer in time (locked, statement
        timeout): the call fails as unavailable, the connection is kept."""


class SQLiteDialect:
    """A SQLite file: WAL mode, `synchronous=NORMAL`, the busy timeout the store's timeout."""

    name = "SQLite"
    lost: tuple[type[BaseException], ...] = ()
    errors: tuple[type[BaseException], ...] = (sqlite3.Error,)
    preload = True

    def connect(self, location: StoreLocation, timeout: float) -> sqlite3.Connection:
        assert location.path is not None
        location.path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(location.path, check_same_thread=False, isolation_level=None, timeout=timeout)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        return db

    def read_only(self, location: StoreLocation, timeout: float) -> sqlite3.Connection:
        assert location.path is not None
        return sqlite3.connect(f"{location.path.resolve().as_uri()}?mode=ro", uri=True, timeout=timeout)

    def sql(self, query: str) -> str:
        return query

    @contextlib.contextmanager
    def transaction(self, conn: sqlite3.Connection, migrating: bool = False) -> Iterator[None]:
        conn.execute("BEGIN IMMEDIATE")  # the write lock now: two processes migrating take turns
        try:
            yield
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def columns(self, conn: sqlite3.Connection, table: str) -> list[str] | None:
        rows = conn.execute(f"PRAGMA table_info({table})").fetchall()  # our own table names
        return [str(r[1]) for r in rows] or None

    def socket(self, conn: sqlite3.Connection) -> int | None:
        return None

    def busy(self, exc: BaseException) -> bool:
        return isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc)  # past the busy timeout


class PostgresDialect:
    """PostgreSQL through psycopg 3: `connect_timeout` and a server-side `statement_timeout` of the store's
    timeout (a hung server is left to the store's watchdog, `store_link`)."""

    name = "PostgreSQL"
    lost: tuple[type[BaseException], ...] = (psycopg.OperationalError, psycopg.InterfaceError)
    errors: tuple[type[BaseException], ...] = (psycopg.Error,)
    preload = False

    def connect(self, location: StoreLocation, timeout: float) -> psycopg.Connection[Any]:
        assert location.url is not None
        return psycopg.connect(
            location.url,
            autocommit=True,
            connect_timeout=max(1, math.ceil(timeout)),  # whole seconds (libpq: at least 2)
            options=f"-c statement_timeout={math.ceil(timeout * 1000)}",
        )

    def read_only(self, location: StoreLocation, timeout: float) -> psycopg.Connection[Any]:
        return self.connect(location, timeout)

    def sql(self, query: str) -> str:
        return query.replace("?", "%s")

    @contextlib.contextmanager
    def transaction(self, conn: psycopg.Connection[Any], migrating: bool = False) -> Iterator[None]:
        with conn.transaction():
            if migrating:
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
            yield

    def columns(self, conn: psycopg.Connection[Any], table: str) -> list[str] | None:
        rows = conn.execute(
            "SELECT column_name FROM information_schema.columns "
            "WHERE table_schema = current_schema() AND table_name = %s ORDER BY ordinal_position",
            (table,),
        ).fetchall()
        return [str(r[0]) for r in rows] or None

    def socket(self, conn: psycopg.Connection[Any]) -> int | None:
        try:
            return int(conn.pgconn.socket)
        except psycopg.OperationalError:
            return None

    def busy(self, exc: BaseException) -> bool:
        return isinstance(exc, psycopg.errors.QueryCanceled | psycopg.errors.LockNotAvailable)


def dialect_of(location: StoreLocation) -> Dialect:
    """The dialect of the database `location` names."""
    return PostgresDialect() if location.is_postgres else SQLiteDialect()
