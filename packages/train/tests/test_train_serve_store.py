"""serve's store on both backends: one contract (every operation), the same fields kept, the schema check
and migration of older stores, text no database holds, the store-URL type, and a hung PostgreSQL
(SIGSTOP, then SIGCONT).

The SQLite half always runs; the PostgreSQL half needs a throwaway cluster (`postgres_server.py`, marked
`system`: skipped naming the install line where PostgreSQL is absent).
"""

from __future__ import annotations

import signal
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest
from postgres_server import PostgresServer, fresh_database, postgres  # noqa: F401  (the fixture)

from router_train.serve.config import ServeConfigError, read_config
from router_train.serve.export import read_records
from router_train.serve.feedback import parse_feedback
from router_train.serve.identity import RequestError
from router_train.serve.records import DecisionRecord, OutcomeRecord, UsageRecord
from router_train.serve.store_api import InvalidStoreText, StoreSchemaError, StoreUnavailable
from router_train.serve.store_config import StoreConfig
from router_train.serve.store_open import open_store
from router_train.serve.store_read import read_rows
from router_train.serve.store_schema import SCHEMA_VERSION, TABLES
from router_train.serve.store_url import StoreLocation

Fresh = Callable[[str], str]
"""A new, empty store's location (named after the test)."""


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.system)])
def fresh(request: pytest.FixtureRequest, tmp_path: Path) -> Fresh:
    if request.param == "sqlite":
        return lambda name: str(tmp_path / f"{name}.sqlite")
    server: PostgresServer = request.getfixturevalue("postgres")
    return lambda name: fresh_database(server, name)


def decision(task: str, model: str, instance: str | None = None, explored: bool = False) -> DecisionRecord:
    return DecisionRecord(
        router="r",
        instance_id=instance or f"inst-{task}",
        model=model,
        time="2026-01-01T00:00:00.000Z",
        task=task,
        latency_ms=1.0,
        router_model=model,
        explored=explored,
        propensity=0.5 if explored else 1.0,
        checkpoint_sha256="c" * 64,
    )


def outcome(task: str, resolved: bool, revision: int = 0, source: str = "feedback") -> OutcomeRecord:
    return OutcomeRecord(
        time="2026-01-01T00:00:01.000Z",
        task=task,
        instance_id=f"inst-{task}",
        model="m1",
        resolved=resolved,
        revision=revision,
        source=source,
    )


def usage(task: str, tokens: int | None, cost: float | None) -> UsageRecord:
    return UsageRecord(
        time="2026-01-01T00:00:02.000Z",
        task=task,
        model="m1",
        prompt_tokens=tokens,
        completion_tokens=tokens,
        cost=cost,
    )


def raw_rows(location: str, query: str) -> list[tuple[Any, ...]]:
    """Rows as the database holds them (not through the store)."""
    where = StoreLocation.parse(location)
    if where.url is not None:
        with psycopg.connect(where.url) as conn:
            return [tuple(r) for r in conn.execute(query).fetchall()]  # type: ignore[arg-type]
    with sqlite3.connect(where.path) as db:  # type: ignore[arg-type]
        return db.execute(query).fetchall()


# --- the contract, on both backends ----------------------------------------------------------------


def test_first_claim_wins_between_racing_threads_and_replicas(fresh: Fresh) -> None:
    location = fresh("race")
    one, two = open_store(location), open_store(location)
    try:
        assert one.available and two.available
        won: dict[str, set[str]] = {}
        start = threading.Barrier(8)

        def claim(n: int) -> None:
            store = (one, two)[n % 2]
            start.wait()
            for t in range(20):
                kept = store.claim(decision(f"t{t}", f"m{n}"))
                won.setdefault(kept.task, set()).add(str(kept.model))

        threads = [threading.Thread(target=claim, args=(n,)) for n in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert all(len(models) == 1 for models in won.values()) and len(won) == 20
        assert {d.task: d.model for d in one.decisions()} == {t: next(iter(m)) for t, m in won.items()}
        assert two.get("t3") == next(iter(won["t3"])) and one.get("unknown") is None
    finally:
        one.close()
        two.close()


def test_every_operation_of_the_store(fresh: Fresh) -> None:
    location = fresh("contract")
    store = open_store(location)
    try:
        assert store.claim(decision("t1", "m1", instance="shared")).model == "m1"
        assert store.claim(decision("t1", "m2")).model == "m1"  # first wins, and says so
        store.claim(decision("t2", "m2", instance="shared", explored=True))
        store.put(decision("t1", "m3", instance="shared"))  # replaced: the model left the pool
        assert store.get("t1") == "m3" and len(store) == 2
        kept = store.decision("t2")
        assert (
            kept is not None and kept.explored and kept.propensity == 0.5 and store.decision("nope") is None
        )
        assert store.tasks_named("t1") == ["t1"] and store.tasks_named("shared") == ["t1", "t2"]
        assert store.tasks_named("nobody") == []
        # Usage: one answer, then a batch in one transaction; unreported and unpriced answers counted.
        store.add_usage(usage("t1", 10, 0.5))
        store.add_usages([usage("t1", 5, None), usage("t1", None, None), usage("t2", 1, 0.25)])
        u = store.usage("t1")
        assert (u.requests, u.unreported, u.prompt_tokens, u.completion_tokens, u.priced) == (3, 1, 15, 15, 1)
        assert u.cost == pytest.approx(0.5) and u.proxy_cost == pytest.approx(0.5)
        assert store.usage("t2").requests == 1 and store.usage("nope").proxy_cost is None
        store.add_usages([])
        # Outcomes: idempotent by (task, revision); another report at a taken revision gets the stored one.
        assert store.record_outcome(outcome("t1", True)) is None
        again = store.record_outcome(outcome("t1", True))
        assert again is not None and again.resolved is True
        other = store.record_outcome(outcome("t1", False))
        assert other is not None and other.resolved is True
        assert store.record_outcome(outcome("t1", False, revision=1, source="grader")) is None
        latest = store.outcome("t1")
        assert latest is not None and (latest.revision, latest.resolved, latest.source) == (
            1,
            False,
            "grader",
        )
        assert store.record_outcome(outcome("t2", True)) is None
        assert [(o.task, o.revision) for o in store.outcome_history()] == [("t1", 0), ("t1", 1), ("t2", 0)]
        assert [(o.task, o.revision) for o in store.outcomes()] == [("t1", 1), ("t2", 0)]
        assert store.outcome("nope") is None
    finally:
        store.close()
    again_open = open_store(location)
    try:  # a restart: the rows are there, the schema at its version
        assert again_open.get("t1") == "m3" and again_open.usage("t1").requests == 3
    finally:
        again_open.close()
    records = read_records(location)  # as `feedback STORE` reads it: the latest revision per task
    assert records.decisions["t1"].model == "m3" and records.outcomes["t1"].revision == 1
    assert [(o.task, o.revision) for o in records.history] == [("t1", 0), ("t1", 1), ("t2", 0)]


def test_both_backends_keep_the_same_fields(fresh: Fresh) -> None:
    location = fresh("fields")
    store = open_store(location)
    try:
        store.claim(decision("t1", "m1", explored=True))
        store.record_outcome(outcome("t1", True, source="grader"))
    finally:
        store.close()
    columns = "task, model, router, time, instance_id, explored, checkpoint_sha256"
    row = raw_rows(location, f"SELECT {columns} FROM decisions")[0]
    assert row[:5] == ("t1", "m1", "r", "2026-01-01T00:00:00.000Z", "inst-t1")
    assert bool(row[5]) is True and row[6] == "c" * 64
    assert raw_rows(location, "SELECT task, revision, source FROM outcomes") == [("t1", 0, "grader")]
    assert raw_rows(location, "SELECT version FROM serve_schema") == [(SCHEMA_VERSION,)]


def test_text_no_database_holds_is_refused_the_same_on_both(fresh: Fresh) -> None:
    store = open_store(fresh("text"))
    try:
        for bad in ("a\x00b", "a\ud800b"):
            with pytest.raises(InvalidStoreText):
                store.claim(decision(bad, "m1"))
            with pytest.raises(InvalidStoreText):
                store.claim(decision("ok", "m1", instance=bad))
            for lookup in (store.get, store.decision, store.tasks_named, store.usage, store.outcome):
                with pytest.raises(InvalidStoreText):
                    lookup(bad)
            with pytest.raises(InvalidStoreText):
                store.add_usage(usage(bad, 1, None))
        with pytest.raises(InvalidStoreText):  # a lone surrogate inside a record's text
            store.claim(decision("t9", "m1").model_copy(update={"issue_text": "x\udc00"}))
        assert store.decisions() == [] and store.available
    finally:
        store.close()
    with pytest.raises(RequestError, match="NUL"):  # feedback's `task`: 400 before the store
        parse_feedback(b'{"task": "a\\u0000b", "resolved": true}', 100.0)
    with pytest.raises(RequestError, match="surrogate"):
        parse_feedback(b'{"task": "a\\ud800", "resolved": true}', 100.0)


def test_a_foreign_table_is_refused_naming_it(fresh: Fresh) -> None:
    location = fresh("foreign")
    where = StoreLocation.parse(location)
    ddl = "CREATE TABLE decisions (task TEXT PRIMARY KEY, instance_id TEXT, payload TEXT)"
    if where.url is not None:
        with psycopg.connect(where.url, autocommit=True) as conn:
            conn.execute(ddl)  # type: ignore[arg-type]
    else:
        with sqlite3.connect(where.path) as db:  # type: ignore[arg-type]
            db.execute(ddl)
    with pytest.raises(StoreSchemaError) as refused:
        open_store(location)
    message = str(refused.value)
    assert "\n" not in message and "table decisions is not serve's" in message and where.shown() in message
    with pytest.raises(StoreSchemaError, match="table decisions"):  # the readers refuse it too
        read_rows(where)
    assert raw_rows(location, "SELECT count(*) FROM decisions") == [(0,)]  # nothing changed, no marker
    with pytest.raises(Exception, match="serve_schema"):
        raw_rows(location, "SELECT version FROM serve_schema")


# --- older stores ------------------------------------------------------------------------------------


OLD_DECISIONS = (
    "CREATE TABLE decisions (task TEXT PRIMARY KEY, model TEXT NOT NULL, router TEXT NOT NULL, "
    "time TEXT NOT NULL{})"
)
OLD_USAGE = (
    "CREATE TABLE usage (task TEXT PRIMARY KEY, requests INTEGER NOT NULL, unreported INTEGER NOT NULL, "
    "prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL, priced INTEGER NOT NULL, "
    "cost REAL NOT NULL)"
)


def old_sqlite_store(path: Path, *, records: bool, revisions: bool) -> None:
    """A SQLite store as an older serve wrote it (no serve_schema table)."""
    with sqlite3.connect(path) as db:
        db.execute(OLD_DECISIONS.format(", record TEXT, instance_id TEXT" if records else ""))
        db.execute(OLD_USAGE)
        if revisions:
            db.execute(
                "CREATE TABLE outcomes (task TEXT NOT NULL, revision INTEGER NOT NULL, record TEXT NOT NULL, "
                "PRIMARY KEY (task, revision))"
            )
        else:
            db.execute("CREATE TABLE outcomes (task TEXT PRIMARY KEY, record TEXT NOT NULL)")
        if records:
            d = decision("t1", "m1", explored=True)
            db.execute(
                "INSERT INTO decisions VALUES (?, ?, ?, ?, ?, ?)",
                ("t1", "m1", "r", d.time, d.model_dump_json(), d.instance_id),
            )
        else:
            db.execute("INSERT INTO decisions VALUES ('t1', 'm1', 'r', '2025-01-01T00:00:00Z')")
        db.execute("INSERT INTO usage VALUES ('t1', 2, 0, 10, 10, 2, 0.5)")
        o = outcome("t1", True, source="grader").model_dump_json()
        db.execute(
            "INSERT INTO outcomes VALUES (?, 0, ?)" if revisions else "INSERT INTO outcomes VALUES (?, ?)",
            ("t1", o),
        )


@pytest.mark.parametrize("records, revisions", [(True, True), (True, False), (False, False)])
def test_an_older_sqlite_store_migrates_in_place(tmp_path: Path, records: bool, revisions: bool) -> None:
    path = tmp_path / "old.sqlite"
    old_sqlite_store(path, records=records, revisions=revisions)
    store = open_store(path)
    try:
        assert store.get("t1") == "m1" and store.usage("t1").requests == 2
        kept = store.claim(decision("t1", "m2"))
        assert kept.model == "m1"  # still sticky, with or without its record
        latest = store.outcome("t1")
        assert latest is not None and latest.source == "grader" and latest.revision == 0
        assert store.record_outcome(outcome("t1", False, revision=1)) is None
        assert [d.task for d in store.decisions()] == (["t1"] if records else [])
    finally:
        store.close()
    for table, columns in TABLES.items():
        have = [r[1] for r in raw_rows(str(path), f"PRAGMA table_info({table})")]
        assert have == [name for name, _ in columns]
    row = raw_rows(str(path), "SELECT explored, checkpoint_sha256, instance_id FROM decisions")[0]
    assert row == ((1, "c" * 64, "inst-t1") if records else (0, None, None))
    assert raw_rows(str(path), "SELECT version FROM serve_schema") == [(SCHEMA_VERSION,)]


@pytest.mark.system  # a real PostgreSQL
def test_a_version_1_postgres_store_migrates(postgres: PostgresServer) -> None:  # noqa: F811
    url = fresh_database(postgres, "v1")
    d = decision("t1", "m1")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE TABLE serve_schema (version INTEGER NOT NULL)")
        conn.execute("INSERT INTO serve_schema VALUES (1)")
        conn.execute(
            "CREATE TABLE decisions (task TEXT PRIMARY KEY, model TEXT NOT NULL, router TEXT NOT NULL, "
            "time TEXT NOT NULL, instance_id TEXT, explored BOOLEAN NOT NULL, checkpoint_sha256 TEXT, "
            "record TEXT NOT NULL)"
        )
        conn.execute(
            "INSERT INTO decisions VALUES ('t1', 'm1', 'r', 'x', 'inst-t1', false, NULL, %s)",
            (d.model_dump_json(),),
        )
        conn.execute(OLD_USAGE.replace("REAL", "DOUBLE PRECISION"))  # type: ignore[arg-type]
        conn.execute(
            "CREATE TABLE outcomes (task TEXT NOT NULL, revision INTEGER NOT NULL, source TEXT NOT NULL, "
            "record TEXT NOT NULL, PRIMARY KEY (task, revision))"
        )
    store = open_store(url)
    try:
        assert store.get("t1") == "m1" and [x.task for x in store.decisions()] == ["t1"]
    finally:
        store.close()
    assert raw_rows(url, "SELECT max(version) FROM serve_schema") == [(SCHEMA_VERSION,)]
    nullable = raw_rows(
        url,
        "SELECT is_nullable FROM information_schema.columns "
        "WHERE table_name = 'decisions' AND column_name = 'record'",
    )
    assert nullable == [("YES",)]


# --- a hung database ---------------------------------------------------------------------------------


@pytest.mark.system  # a real PostgreSQL, stopped with SIGSTOP
def test_a_hung_postgres_is_given_up_within_the_timeout_and_recovers(postgres: PostgresServer) -> None:  # noqa: F811
    timeout = 1.0
    store = open_store(
        StoreConfig.model_validate({"location": fresh_database(postgres, "hung"), "timeout": timeout})
    )
    try:
        store.claim(decision("held", "m1"))
        store.add_usage(usage("held", 1, 0.1))
        postgres.signal(signal.SIGSTOP)
        try:
            # Eight calls at once: the one on the connection is given up at the timeout, the others,
            # queued behind it, fail with it (none waits a second timeout).
            took: list[float] = []

            def call(n: int) -> None:
                began = time.monotonic()
                with pytest.raises(StoreUnavailable):
                    store.claim(decision(f"new{n}", "m2"))
                took.append(time.monotonic() - began)

            callers = [threading.Thread(target=call, args=(n,)) for n in range(8)]
            for t in callers:
                t.start()
            for t in callers:
                t.join()
            assert len(took) == 8 and max(took) < timeout + 0.5 and not store.available
            began = time.monotonic()
            with pytest.raises(StoreUnavailable, match=r"did not answer within 1 s"):
                store.record_outcome(outcome("held", True))
            assert time.monotonic() - began < 0.05  # at once, not the timeout again
            assert store.get("held") == "m1"  # decided tasks are still answered from memory
            store.add_usages([usage("held", 2, 0.2), usage("held", 3, None)])  # waits in memory
        finally:
            postgres.signal(signal.SIGCONT)
        deadline = time.monotonic() + 30
        while not store.available:
            assert time.monotonic() < deadline, "the store did not reconnect after SIGCONT"
            time.sleep(0.05)
        assert store.claim(decision("new", "m2")).model == "m2"
        assert store.usage("held").requests == 3  # nothing acknowledged was lost
        assert store.record_outcome(outcome("held", True)) is None
    finally:
        store.close()


@pytest.mark.system  # a real PostgreSQL, another replica's transaction holding a row
def test_usage_batches_of_replicas_sharing_tasks_do_not_deadlock(postgres: PostgresServer) -> None:  # noqa: F811
    # Another replica flushes a batch of tasks a and b (in key order): its transaction holds a's row. This
    # store's batch was counted b first; written in that order it would hold b and wait for a, and the
    # other's update of b would close the cycle: PostgreSQL aborts one of them ("deadlock detected"),
    # and this store took that for a lost connection (503s until it reconnected).
    url = fresh_database(postgres, "usage_order")
    store = open_store(StoreConfig.model_validate({"location": url, "timeout": 10.0}))
    try:
        store.add_usages([usage("a", 1, None), usage("b", 1, None)])
        with psycopg.connect(url) as other:
            other.execute("UPDATE usage SET requests = requests + 1 WHERE task = 'a'")
            batch = [usage("b", 1, None), usage("a", 1, None)]
            flush = threading.Thread(target=store.add_usages, args=(batch,))
            flush.start()
            time.sleep(1.5)  # the flush is now waiting on a's row (and, in first-seen order, holds b's)
            other.execute("UPDATE usage SET requests = requests + 1 WHERE task = 'b'")
            other.commit()
        flush.join(timeout=15)
        assert store.available, "the flush failed"
        assert (store.usage("a").requests, store.usage("b").requests) == (3, 3)
    finally:
        store.close()


# --- the store-URL type ------------------------------------------------------------------------------


def test_store_location_scheme_case_and_masking() -> None:
    upper = StoreLocation.parse("POSTGRESQL://serve:PW1@127.0.0.1:1/router")
    assert upper.url == "postgresql://serve:PW1@127.0.0.1:1/router" and upper.path is None
    assert upper.shown() == "postgresql://serve:***@127.0.0.1:1/router" and "PW1" not in repr(upper)
    query = StoreLocation.parse("postgres://serve@h/router?sslmode=disable&Password=hunter2")
    assert query.shown() == "postgresql://serve@h/router?sslmode=disable&Password=***"
    assert StoreLocation.parse(str(Path("postgresql://u:p@h:5/d"))).url == "postgresql://u:p@h:5/d"
    assert StoreLocation.parse("postgresql:///router").url == "postgresql:///router"
    assert StoreLocation.parse("state/decisions.sqlite").path == Path("state/decisions.sqlite")
    assert upper.scrub('password authentication failed: "PW1"') == 'password authentication failed: "***"'
    assert StoreConfig.model_validate("x.sqlite").timeout == 2.0
    table = StoreConfig.model_validate({"location": "POSTGRES://h/d", "timeout": 0.5})
    assert table.location.url == "postgresql://h/d" and table.timeout == 0.5


def test_the_config_takes_a_store_string_or_a_store_table(tmp_path: Path) -> None:
    head = (
        '[router]\ncheckpoint = "c.json"\n[upstreams.m1]\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m"\n'
    )
    cfg = tmp_path / "serve.toml"
    cfg.write_text('store = "POSTGRESQL://serve:pw@db/router"\n' + head, encoding="utf-8")
    store = read_config(cfg).store
    assert store.location.url == "postgresql://serve:pw@db/router" and store.timeout == 2.0
    cfg.write_text(head + '[store]\nlocation = "state/d.sqlite"\ntimeout = 0.25\n', encoding="utf-8")
    store = read_config(cfg).store
    assert store.location.path == Path("state/d.sqlite") and store.timeout == 0.25
    for bad in ("timeout = 0", 'timeout = "soon"', "location = 5"):
        cfg.write_text(head + f"[store]\n{bad}\n", encoding="utf-8")
        with pytest.raises(ServeConfigError, match=r"store\.(timeout|location)") as refused:
            read_config(cfg)
        assert "\n" not in str(refused.value)
    cfg.write_text(head, encoding="utf-8")
    assert read_config(cfg).store.location.path == Path("serve-state/decisions.sqlite")


def test_a_locked_sqlite_store_is_unavailable_within_the_timeout(tmp_path: Path) -> None:
    path = tmp_path / "locked.sqlite"
    store = open_store(StoreConfig.model_validate({"location": str(path), "timeout": 0.2}))
    holder = sqlite3.connect(path, isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")  # another process writing: the file's write lock held
        began = time.monotonic()
        with pytest.raises(StoreUnavailable, match=r"did not answer within 0\.2 s"):
            store.claim(decision("t1", "m1"))
        assert time.monotonic() - began < 1.0 and store.available
        holder.execute("ROLLBACK")
        assert store.claim(decision("t1", "m1")).model == "m1"
    finally:
        holder.close()
        store.close()
