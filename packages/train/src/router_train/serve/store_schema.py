"""The store's schema, written once for both databases, how it is recognised, and its one migration path.

A store's version is kept in its `serve_schema` table (the marker of serve's own tables). A database
whose tables are serve's at an older version (SQLite stores written before the version table existed
included: outcomes without `revision`, decisions without `record` / `instance_id`) is brought to
`SCHEMA_VERSION` in one transaction: each table's rows are read, the table is created anew and the rows
written back with the fields they lacked taken from their record's JSON. A table of the same name that is
not serve's (another column set) is refused, in one line naming it, and nothing is changed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from router_train.serve.store_api import StoreSchemaError
from router_train.serve.store_dialect import Dialect

SCHEMA_VERSION = 2
"""The schema this code writes. 1: PostgreSQL's first (decisions' `record` NOT NULL); 2: both backends
on one schema (`record` may be NULL: a SQLite store's decisions from before records were kept)."""
VERSION_TABLE = "serve_schema"
"""The table holding the version: its presence marks a database as serve's."""

Columns = tuple[tuple[str, str], ...]
"""(name, type and constraint) per column, in order."""

TABLES: dict[str, Columns] = {
    "decisions": (
        ("task", "TEXT PRIMARY KEY"),  # sha256 hex of the task's identity (identity.task_key)
        ("model", "TEXT NOT NULL"),  # the pool model id it is served by
        ("router", "TEXT NOT NULL"),  # the router that decided
        ("time", "TEXT NOT NULL"),  # when (UTC, ISO 8601)
        ("instance_id", "TEXT"),  # feedback may name a task by it
        ("explored", "BOOLEAN NOT NULL"),  # served by an exploration draw
        ("checkpoint_sha256", "TEXT"),  # the router checkpoint it came from (hot refits change it)
        ("record", "TEXT"),  # records.DecisionRecord, JSON (NULL: decided before records were kept)
    ),
    "usage": (
        ("task", "TEXT PRIMARY KEY"),
        ("requests", "BIGINT NOT NULL"),  # upstream answers to the task's routed requests
        ("unreported", "BIGINT NOT NULL"),  # of which reported no usage
        ("prompt_tokens", "BIGINT NOT NULL"),
        ("completion_tokens", "BIGINT NOT NULL"),
        ("priced", "BIGINT NOT NULL"),  # answers priced (usage reported, model with prices)
        ("cost", "DOUBLE PRECISION NOT NULL"),  # USD, summed over the priced answers
    ),
    "outcomes": (
        ("task", "TEXT NOT NULL"),
        ("revision", "INTEGER NOT NULL"),  # 0 the first outcome, +1 per correction
        ("source", "TEXT NOT NULL"),  # the feedback token's name
        ("record", "TEXT NOT NULL"),  # records.OutcomeRecord, JSON
    ),
}
"""serve's tables at `SCHEMA_VERSION`."""
_KEYS = {"outcomes": ", PRIMARY KEY (task, revision)"}
_INDEXES = ("CREATE INDEX IF NOT EXISTS decisions_instance ON decisions (instance_id)",)
LEGACY_REQUIRED: dict[str, set[str]] = {
    "decisions": {"task", "model", "router", "time"},
    "usage": {name for name, _ in TABLES["usage"]},
    "outcomes": {"task", "record"},
}
"""The columns every older version of each table had (the others were added since): an older table must
have these and no column the current one lacks."""


def create_statements(table: str) -> list[str]:
    """`CREATE TABLE` of one of serve's tables (and its indexes)."""
    columns = ", ".join(f"{name} {kind}" for name, kind in TABLES[table])
    made = [f"CREATE TABLE {table} ({columns}{_KEYS.get(table, '')})"]
    return made + [s for s in _INDEXES if f" ON {table} " in s]


def _refusal(table: str, found: Sequence[str], expected: str) -> StoreSchemaError:
    return StoreSchemaError(
        f"table {table} is not serve's (columns {', '.join(found)}; {expected}): "
        "use another database or file for the store"
    )


def check_tables(found: Mapping[str, list[str] | None], version: int) -> None:
    """Refuse, naming the table, any table of serve's names whose columns are not serve's: exactly
    `TABLES`' at `SCHEMA_VERSION`, or an older version's (`LEGACY_REQUIRED` up to `TABLES`) below it."""
    for table, columns in found.items():
        if columns is None:
            continue
        have, current = set(columns), {name for name, _ in TABLES[table]}
        if version == SCHEMA_VERSION and have != current:
            raise _refusal(table, columns, f"serve's are {', '.join(sorted(current))}")
        if not LEGACY_REQUIRED[table] <= have <= current:
            raise _refusal(table, columns, f"serve's have {', '.join(sorted(LEGACY_REQUIRED[table]))}")


def stored_version(dialect: Dialect, conn: Any) -> int:
    """The version `serve_schema` records (0: no such table: a new database, or an unversioned SQLite
    store); a table of that name that is not serve's, or a newer version, is refused."""
    columns = dialect.columns(conn, VERSION_TABLE)
    if columns is None:
        return 0
    if columns != ["version"]:
        raise _refusal(VERSION_TABLE, columns, "serve's has one column, version")
    row = conn.execute(f"SELECT max(version) FROM {VERSION_TABLE}").fetchone()
    have = int(row[0]) if row is not None and row[0] is not None else 0
    if have > SCHEMA_VERSION:
        raise StoreSchemaError(f"schema version {have} is newer than this serve's ({SCHEMA_VERSION})")
    return have


def found_tables(dialect: Dialect, conn: Any) -> dict[str, list[str] | None]:
    """Each of serve's tables' columns as the database has them (None: absent)."""
    return {table: dialect.columns(conn, table) for table in TABLES}


def migrate(dialect: Dialect, conn: Any) -> None:
    """Check the database's tables and bring them to `SCHEMA_VERSION` (or create them), in one
    transaction, exclusive of other processes doing the same."""
    with dialect.transaction(conn, migrating=True):
        version = stored_version(dialect, conn)
        found = found_tables(dialect, conn)
        check_tables(found, version)
        if version == SCHEMA_VERSION:
            return
        if version == 0 and dialect.columns(conn, VERSION_TABLE) is None:
            conn.execute(f"CREATE TABLE {VERSION_TABLE} (version INTEGER NOT NULL)")
        for table, columns in found.items():
            rows = _read_all(conn, table) if columns is not None else []
            if columns is not None:
                conn.execute(f"DROP TABLE {table}")
            for statement in create_statements(table):
                conn.execute(statement)
            _write_all(dialect, conn, table, [_upgraded(table, row) for row in rows])
        conn.execute(dialect.sql(f"INSERT INTO {VERSION_TABLE} (version) VALUES (?)"), (SCHEMA_VERSION,))


def _read_all(conn: Any, table: str) -> list[dict[str, Any]]:
    cursor = conn.execute(f"SELECT * FROM {table}")
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def _write_all(dialect: Dialect, conn: Any, table: str, rows: list[tuple[Any, ...]]) -> None:
    if not rows:
        return
    names = [name for name, _ in TABLES[table]]
    query = f"INSERT INTO {table} ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})"
    conn.cursor().executemany(dialect.sql(query), rows)


def _upgraded(table: str, row: dict[str, Any]) -> tuple[Any, ...]:
    """An older row in the current column order; a column it lacks is taken from its record's JSON
    (`explored`, `checkpoint_sha256`, `instance_id`, `source`) or is the older meaning (`revision` 0)."""
    record = row.get("record")
    parsed: dict[str, Any] = json.loads(record) if record else {}
    if table == "decisions":
        filled = {
            "instance_id": parsed.get("instance_id"),
            "explored": bool(parsed.get("explored", False)),
            "checkpoint_sha256": parsed.get("checkpoint_sha256"),
            "record": None,
        }
    elif table == "outcomes":
        filled = {"revision": 0, "source": parsed.get("source", "feedback")}
    else:
        filled = {}
    merged = {**filled, **row}
    return tuple(merged[name] for name, _ in TABLES[table])
