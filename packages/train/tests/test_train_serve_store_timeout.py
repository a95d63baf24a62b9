"""serve with a store that stops answering, usage written in batches, and the dashboard's cache: a real
SQLite store (its calls made to hang by a wrapper that blocks them, as a stopped database's would), and a
real PostgreSQL stopped with SIGSTOP (skipped naming its install line where absent); stub upstreams on
127.0.0.1, real HTTP clients."""

from __future__ import annotations

import os
import re
import signal
import threading
import time
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import tomli_w
from postgres_server import PostgresServer, fresh_database, postgres  # noqa: F401  (the fixture)
from serve_stubs import (
    ServerThread,
    StubUpstream,
    always_checkpoint,
    ask,
    bundled_issues,
    native_router,
    proxy_app,
    running_upstreams,
    serving,
    trained_checkpoint,
    write_config,
)

from router_train.serve import MODEL_HEADER, TASK_HEADER, usage_batch
from router_train.serve.store_api import Store
from router_train.serve.store_open import open_store

FEEDBACK_ENV = "SERVE_STORE_TEST_FEEDBACK"
ADMIN_ENV = "SERVE_STORE_TEST_ADMIN"
FEEDBACK = {"authorization": "Bearer fb-1"}
ADMIN = {"authorization": "Bearer adm-2"}


@pytest.fixture(scope="module")
def pool(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    return list(native_router(trained_checkpoint(tmp_path_factory.getbasetemp())).pool)


@pytest.fixture(scope="module")
def stubs(pool: list[str]) -> Iterator[dict[str, tuple[StubUpstream, ServerThread]]]:
    with running_upstreams(pool) as running:
        yield running


@pytest.fixture(autouse=True)
def _tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(FEEDBACK_ENV, "fb-1")
    monkeypatch.setenv(ADMIN_ENV, "adm-2")


def config(tmp_path: Path, pool: list[str], stubs: Any) -> Path:
    """Every task to the pool's first model, priced upstreams, [feedback] and [admin]."""
    checkpoint = always_checkpoint(tmp_path / "always.json", pool, pool[0])
    prices = {m: {"input_price": 1.0, "output_price": 2.0} for m in pool}
    cfg = write_config(tmp_path / "serve.toml", checkpoint, stubs, **prices)
    doc = tomllib.loads(cfg.read_text(encoding="utf-8"))
    doc.update(feedback={"token_env": FEEDBACK_ENV}, admin={"token_env": ADMIN_ENV})
    cfg.write_text(tomli_w.dumps(doc), encoding="utf-8")
    return cfg




def timed(call: Callable[[], httpx.Response]) -> tuple[httpx.Response, float]:
    started = time.monotonic()
    response = call()
    return response, time.monotonic() - started


class HangingStore:
    """A store whose every call blocks while `hung` is set (as on a database stopped with SIGSTOP);
    what the backend keeps in memory (`available`, `len`) still answers."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.hung = threading.Event()
        self.released = threading.Event()

    @property
    def available(self) -> bool:
        return self.store.available

    def __len__(self) -> int:
        return len(self.store)

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.store, name)

        def call(*args: Any) -> Any:
            if self.hung.is_set():
                self.released.wait()
            return method(*args)

        return call


def metric(text: str, name: str) -> float:
    found = re.search(rf"^{re.escape(name)} (\S+)$", text, re.MULTILINE)
    assert found is not None, name
    return float(found.group(1))


def test_a_hung_store_keeps_decided_tasks_served_and_answers_the_rest_503_within_the_timeout(
    tmp_path: Path, pool: list[str], stubs: Any
) -> None:
    app = proxy_app(config(tmp_path, pool, stubs))
    held, new = (text for _, _, text in bundled_issues()[:2])
    with serving(app) as server, httpx.Client(timeout=30) as client:
        url = server.url
        first = ask(client, url, held)
        task = first.headers[TASK_HEADER]
        proxy = app.state.proxy
        hanging = HangingStore(proxy.store.backend)
        proxy.store.backend, proxy.store.timeout_s = hanging, 0.5
        hanging.hung.set()
        try:
            refused, took = timed(lambda: ask(client, url, new))
            assert refused.status_code == 503 and 0.4 < took < 3, (refused.text, took)
            message = refused.json()["error"]["message"]
            assert (
                message == "the store did not answer within 0.5 s" and refused.headers["retry-after"] == "1"
            )
            kept, took = timed(lambda: ask(client, url, held, turn=1))
            assert kept.status_code == 200 and kept.headers[MODEL_HEADER] == first.headers[MODEL_HEADER]
            assert took < 0.4
            health, took = timed(lambda: client.get(f"{url}/health"))
            assert health.json()["status"] == "store unavailable" and took < 0.4
            body = {"task": task, "resolved": True}
            assert client.post(f"{url}/v1/feedback", json=body, headers=FEEDBACK).status_code == 503
            page = client.get(f"{url}/dashboard", headers=ADMIN)
            assert page.status_code == 503 and "\n" not in page.json()["error"]["message"]
        finally:
            hanging.hung.clear()
            hanging.released.set()
        deadline = time.monotonic() + 10
        while (r := ask(client, url, new)).status_code == 503:
            assert time.monotonic() < deadline, "the store did not come back"
            time.sleep(0.1)
        assert r.status_code == 200 and client.get(f"{url}/health").json()["status"] == "ok"
        scraped = client.get(f"{url}/metrics").text
        assert metric(scraped, "router_serve_store_available") == 1.0
        assert metric(scraped, "router_serve_store_reconnects_total") == 1.0
        assert 'router_serve_requests_total{route="/v1/chat/completions",status="503"} 1.0' in scraped


def test_usage_waits_in_memory_the_outcome_counts_it_and_shutdown_writes_it(
    tmp_path: Path, pool: list[str], stubs: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(usage_batch, "USAGE_FLUSH_MS", 600_000)  # no timed write during the test
    monkeypatch.setattr(usage_batch, "USAGE_FLUSH_TURNS", 10_000)
    app = proxy_app(config(tmp_path, pool, stubs))
    text = bundled_issues()[5][2]
    with serving(app) as server, httpx.Client(timeout=30) as client:
        task = ask(client, server.url, text).headers[TASK_HEADER]
        for turn in (1, 2):
            assert ask(client, server.url, text, turn).status_code == 200
        store = app.state.proxy.store.backend
        assert store.usage(task).requests == 0  # counted in memory, not yet written
        outcome = client.post(
            f"{server.url}/v1/feedback", json={"task": task, "resolved": True}, headers=FEEDBACK
        )
        assert outcome.status_code == 200, outcome.text
        written = store.usage(task)
        assert written.requests == 3 and written.priced == 3  # the feedback wrote them first
        assert outcome.json()["proxy_cost"] == pytest.approx(written.cost) and written.cost > 0
        assert ask(client, server.url, text, 3).status_code == 200
    reopened = open_store(tmp_path / "state" / "decisions.sqlite")
    try:
        assert reopened.usage(task).requests == 4  # the last turn's usage, written at shutdown
    finally:
        reopened.close()


def test_the_dashboard_is_computed_again_only_when_decisions_or_outcomes_change(
    tmp_path: Path, pool: list[str], stubs: Any
) -> None:
    app = proxy_app(config(tmp_path, pool, stubs))
    texts = [text for _, _, text in bundled_issues()[10:13]]
    with serving(app) as server, httpx.Client(timeout=60) as client:

        def renders_after_a_fetch() -> float:
            assert client.get(f"{server.url}/dashboard", headers=ADMIN).status_code == 200
            return metric(client.get(f"{server.url}/metrics").text, "router_serve_dashboard_renders_total")

        task = ask(client, server.url, texts[0]).headers[TASK_HEADER]
        assert renders_after_a_fetch() == 1
        assert renders_after_a_fetch() == 1  # nothing changed: the cached page
        assert ask(client, server.url, texts[0], turn=1).status_code == 200
        assert renders_after_a_fetch() == 1  # a sticky turn decides nothing
        ask(client, server.url, texts[1])
        assert renders_after_a_fetch() == 2  # a new decision
        client.post(f"{server.url}/v1/feedback", json={"task": task, "resolved": True}, headers=FEEDBACK)
        assert renders_after_a_fetch() == 3  # a new outcome
        assert renders_after_a_fetch() == 3


def cluster_processes(server: PostgresServer) -> list[int]:
    """The cluster's postmaster and every process it started (its backends and workers)."""
    postmaster = int((server.data / "db" / "postmaster.pid").read_text().split()[0])
    children = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # ended meanwhile
            continue
        if int(fields[1]) == postmaster:
            children.append(int(stat.parent.name))
    return [postmaster, *children]


@pytest.mark.system  # a real PostgreSQL
def test_a_postgresql_stopped_with_sigstop_stalls_no_decided_task_and_everything_recovers_after_sigcont(
    tmp_path: Path,
    pool: list[str],
    stubs: Any,
    postgres: PostgresServer,  # noqa: F811
) -> None:
    cfg = config(tmp_path, pool, stubs)
    doc = tomllib.loads(cfg.read_text(encoding="utf-8"))
    doc["store"] = fresh_database(postgres, "sigstop")
    cfg.write_text(tomli_w.dumps(doc), encoding="utf-8")
    app = proxy_app(cfg)
    texts = [text for _, _, text in bundled_issues()[40:44]]
    with serving(app) as server, httpx.Client(timeout=30) as client:
        url = server.url
        app.state.proxy.store.timeout_s = 1.0
        held = ask(client, url, texts[0])
        task = held.headers[TASK_HEADER]
        stopped = cluster_processes(postgres)
        for pid in stopped:
            os.kill(pid, signal.SIGSTOP)
        try:
            refused, took = timed(lambda: ask(client, url, texts[1]))
            assert refused.status_code == 503 and took < 3, (refused.text, took)
            for turn in (1, 2):
                kept, took = timed(lambda: ask(client, url, texts[0], turn))  # noqa: B023
                assert kept.status_code == 200 and kept.headers[MODEL_HEADER] == held.headers[MODEL_HEADER]
                assert took < 0.5
            health, took = timed(lambda: client.get(f"{url}/health"))
            assert health.json()["status"] == "store unavailable" and took < 0.5
        finally:
            for pid in stopped:
                os.kill(pid, signal.SIGCONT)
        deadline = time.monotonic() + 30
        while (r := ask(client, url, texts[1])).status_code == 503:
            assert time.monotonic() < deadline, "the store did not come back after SIGCONT"
            time.sleep(0.2)
        outcome = client.post(f"{url}/v1/feedback", json={"task": task, "resolved": True}, headers=FEEDBACK)
        assert outcome.status_code == 200, outcome.text
        store = app.state.proxy.store.backend
        assert store.usage(task).requests == 3  # every answered turn's usage, none lost nor doubled
        assert store.decision(r.headers[TASK_HEADER]) is not None
