"""What a store holds, read without changing it (`router-train feedback STORE`, `export.read_records`):
every decision record and every outcome revision, through a read-only connection (a running serve may
hold the store). Its tables must be serve's (`store_schema.check_tables`, any version up to this one's);
nothing is migrated.
"""

from __future__ import annotations

from typing import Any

from router_train.serve.records import DecisionRecord, OutcomeRecord
from router_train.serve.store_api import StoreSchemaError, StoreUnavailable
from router_train.serve.store_config import DEFAULT_TIMEOUT_S
from router_train.serve.store_dialect import dialect_of
from router_train.serve.store_link import first_line
from router_train.serve.store_schema import check_tables, found_tables, stored_version
from router_train.serve.store_url import StoreLocation


def read_rows(
    location: StoreLocation, timeout: float = DEFAULT_TIMEOUT_S
) -> tuple[list[DecisionRecord], list[OutcomeRecord]]:
    """The decisions (those with a record, by task) and outcome revisions (by task, revision) of the
    store at `location`; one `StoreUnavailable` or `StoreSchemaError` line naming it on failure. The
    records are returned as stored JSON parsed (a `ValidationError` for a record that is not serve's)."""
    dialect = dialect_of(location)
    where = location.shown()
    try:
        conn = dialect.read_only(location, timeout)
        try:
            decisions, outcomes = _rows(dialect, conn, where)
        finally:
            conn.close()
    except dialect.errors as exc:
        why = location.scrub(first_line(exc))
        raise StoreUnavailable(f"{where}: cannot read the {dialect.name} store: {why}") from None
    return (
        [DecisionRecord.model_validate_json(r[0]) for r in decisions],
        [OutcomeRecord.model_validate_json(r[0]) for r in outcomes],
    )


def _rows(dialect: Any, conn: Any, where: str) -> tuple[list[Any], list[Any]]:
    try:
        found = found_tables(dialect, conn)
        check_tables(found, stored_version(dialect, conn))
    except StoreSchemaError as exc:
        raise StoreSchemaError(f"{where}: {exc}") from None
    if found["decisions"] is None or found["outcomes"] is None:
        raise StoreSchemaError(f"{where}: not a serve store with outcomes (no decisions and outcomes tables)")
    order = "task, revision" if "revision" in found["outcomes"] else "task"
    decisions = conn.execute("SELECT record FROM decisions WHERE record IS NOT NULL ORDER BY task").fetchall()
    outcomes = conn.execute(f"SELECT record FROM outcomes ORDER BY {order}").fetchall()
    return decisions, outcomes
