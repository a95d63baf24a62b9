"""`router-train serve` as a team's service: the PostgreSQL store, replicas on one database, a database that
goes away and comes back, and the hot refit (SIGHUP / POST /admin/reload) under load.

A real PostgreSQL (a throwaway cluster from Debian's binaries, `postgres_server.py`; skipped naming the
install line where absent, failing under $ROUTER_REQUIRE_SERVICES), stub upstreams on 127.0.0.1, a real
`router-train local` checkpoint, real httpx clients.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import signal
import subprocess
import sys
import threading
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import postgres_server
import pytest
import required_service
import tomli_w
from postgres_server import PostgresServer, fresh_database, postgres  # noqa: F401  (the fixture)
from serve_stubs import (
    ServerThread,
    StubUpstream,
    ask,
    bundled_issues,
    free_port,
    native_router,
    proxy_app,
    running_upstreams,
    serving,
    trained_checkpoint,
    wait_until_serving,
    write_config,
)

from router_oracle.infra.file_hash import sha256_file
from router_train.cli import main
from router_train.route import Router
from router_train.serve import MODEL_HEADER, TASK_HEADER
from router_train.serve.export import read_records
from router_train.serve.records import DecisionRecord
from router_train.serve.store_api import StoreUnavailable
from router_train.serve.store_open import open_store
from router_train.serve.store_url import StoreLocation

FEEDBACK_ENV = "SERVE_TEAM_TEST_FEEDBACK"
ADMIN_ENV = "SERVE_TEAM_TEST_ADMIN"
FEEDBACK_TOKEN = "fb-team-77"
ADMIN_TOKEN = "admin-team-91"


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return trained_checkpoint(tmp_path_factory.getbasetemp())


@pytest.fixture(scope="module")
def router(checkpoint: Path) -> Router:
    return native_router(checkpoint)


@pytest.fixture(scope="module")
def stubs(router: Router) -> Iterator[dict[str, tuple[StubUpstream, ServerThread]]]:
    with running_upstreams(router.pool) as running:
        yield running


@pytest.fixture(autouse=True)
def _tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(FEEDBACK_ENV, FEEDBACK_TOKEN)
    monkeypatch.setenv(ADMIN_ENV, ADMIN_TOKEN)


def team_config(path: Path, checkpoint: Path, stubs: Any, store: str) -> Path:
    """A serve config on `store` with [feedback] and [admin]; its own decision log beside it."""
    cfg = write_config(path, checkpoint, stubs)
    doc = tomllib.loads(cfg.read_text(encoding="utf-8"))
    doc.update(
        # These tests are about replicas sharing one store, not its timeout (test_train_serve_store_timeout's
        # business): on a loaded 2-core machine, 36 first claims at once can queue past the default 2 s.
        store={"location": store, "timeout": 10.0},
        decision_log=str(path.with_suffix(".jsonl")),
        feedback={"token_env": FEEDBACK_ENV},
        admin={"token_env": ADMIN_ENV},
    )
    cfg.write_text(tomli_w.dumps(doc), encoding="utf-8")
    return cfg




def decision(task: str, model: str, sha: str = "a" * 64) -> DecisionRecord:
    return DecisionRecord(
        router="r",
        instance_id=f"inst-{task}",
        model=model,
        time="2026-01-01T00:00:00.000Z",
        task=task,
        latency_ms=1.0,
        router_model=model,
        propensity=1.0,
        checkpoint_sha256=sha,
    )


# --- without a database server -------------------------------------------------------------------


def test_unreachable_database_is_one_line_with_the_password_masked(
    tmp_path: Path, checkpoint: Path, stubs: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"postgresql://team:s3cret@127.0.0.1:{free_port()}/serve"
    cfg = team_config(tmp_path / "serve.toml", checkpoint, stubs, "unused.sqlite")
    assert main(["serve", str(cfg), "--store", url, "--port", str(free_port())]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert "postgresql://team:***@127.0.0.1" in err and "s3cret" not in err
    assert main(["feedback", url]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "s3cret" not in err and "cannot read the PostgreSQL store" in err


def test_missing_postgres_skips_naming_the_install_line_and_fails_in_ci(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(postgres_server, "_bin_dir", lambda: None)
    monkeypatch.delenv(required_service.REQUIRE_SERVICES_VAR, raising=False)
    with pytest.raises(pytest.skip.Exception, match="apt-get install -y postgresql"):
        postgres_server.require_postgres()
    monkeypatch.setenv(required_service.REQUIRE_SERVICES_VAR, "1")
    with pytest.raises(pytest.fail.Exception, match="ROUTER_REQUIRE_SERVICES is set"):
        postgres_server.require_postgres()


# --- the PostgreSQL store ------------------------------------------------------------------------


# The store's contract (every operation, on both backends): test_train_serve_store.py.


@pytest.mark.system  # a real PostgreSQL
def test_postgres_store_survives_a_database_restart(postgres: PostgresServer) -> None:  # noqa: F811
    url = fresh_database(postgres, "restart")
    store = open_store(url)
    try:
        store.claim(decision("held", "m1"))
        postgres.stop("fast")
        try:
            with pytest.raises(StoreUnavailable, match=r"cannot be reached"):
                store.get("new-task")
            assert store.get("held") == "m1"  # held in memory: still served
            with pytest.raises(StoreUnavailable):
                store.claim(decision("new-task", "m2"))
        finally:
            postgres.start()
        deadline = time.monotonic() + 30
        while True:
            try:
                assert store.claim(decision("new-task", "m2")).model == "m2"
                break
            except StoreUnavailable:
                assert time.monotonic() < deadline, "the store did not reconnect"
                time.sleep(0.2)
    finally:
        store.close()


# --- replicas ------------------------------------------------------------------------------------


@pytest.mark.system  # a real PostgreSQL
def test_replicas_share_decisions_and_outcomes(
    tmp_path: Path,
    checkpoint: Path,
    stubs: Any,
    postgres: PostgresServer,  # noqa: F811
) -> None:
    url = fresh_database(postgres, "replicas")
    apps = [proxy_app(team_config(tmp_path / f"r{i}.toml", checkpoint, stubs, url)) for i in range(3)]
    issues = [text for _, _, text in bundled_issues()[:12]]
    auth = {"authorization": f"Bearer {FEEDBACK_TOKEN}"}
    with serving(apps[0]) as a, serving(apps[1]) as b, serving(apps[2]) as c, httpx.Client() as client:
        urls = [a.url, b.url, c.url]
        # Every task's first request on all three replicas at once: one decision wins.
        with concurrent.futures.ThreadPoolExecutor(len(issues) * 3) as pool:
            firsts = list(
                pool.map(
                    lambda job: ask(client, urls[job[0]], job[1]),
                    [(i % 3, t) for t in issues for i in range(3)],
                )
            )
        failed = [(r.status_code, r.text[:200]) for r in firsts if r.status_code != 200]
        assert not failed
        models: dict[str, str] = {}
        for r in firsts:
            assert (
                models.setdefault(r.headers[TASK_HEADER], r.headers[MODEL_HEADER]) == r.headers[MODEL_HEADER]
            )
        # Later turns, on any replica, stay on it.
        for n, issue in enumerate(issues):
            for turn in range(1, 4):
                r = ask(client, urls[(n + turn) % 3], issue, turn)
                assert r.status_code == 200 and models[r.headers[TASK_HEADER]] == r.headers[MODEL_HEADER]
        # An outcome posted on one replica is idempotent on another; a different one is refused there.
        task = firsts[0].headers[TASK_HEADER]
        body = {"task": task, "resolved": True}
        first = client.post(f"{a.url}/v1/feedback", json=body, headers=auth)
        again = client.post(f"{b.url}/v1/feedback", json=body, headers=auth)
        other = client.post(f"{c.url}/v1/feedback", json={**body, "resolved": False}, headers=auth)
        assert (first.status_code, again.status_code, other.status_code) == (200, 200, 409)
    records = read_records(url)
    assert {t: d.model for t, d in records.decisions.items()} == models
    assert list(records.outcomes) == [task]
    # The logs hold each decision once, on the replica whose claim won.
    logged = [
        json.loads(line)["task"]
        for i in range(3)
        for line in (tmp_path / f"r{i}.jsonl").read_text(encoding="utf-8").splitlines()
        if json.loads(line).get("event", "decision") == "decision"
    ]
    assert sorted(logged) == sorted(models)


@pytest.mark.system  # a real PostgreSQL
def test_a_replica_without_its_database_serves_held_tasks_and_503s_new_ones(
    tmp_path: Path,
    checkpoint: Path,
    stubs: Any,
    postgres: PostgresServer,  # noqa: F811
) -> None:
    url = fresh_database(postgres, "outage")
    app = proxy_app(team_config(tmp_path / "r.toml", checkpoint, stubs, url))
    held, new = (text for _, _, text in bundled_issues()[20:22])
    with serving(app) as server, httpx.Client() as client:
        model = ask(client, server.url, held).headers[MODEL_HEADER]
        postgres.stop("fast")
        try:
            kept = ask(client, server.url, held, turn=1)
            assert kept.status_code == 200 and kept.headers[MODEL_HEADER] == model
            refused = ask(client, server.url, new)
            assert refused.status_code == 503
            message = refused.json()["error"]["message"]
            assert (
                "\n" not in message
                and "cannot be reached" in message
                and StoreLocation.parse(url).shown() in message
            )
            assert client.get(f"{server.url}/health").json()["status"] == "store unavailable"
        finally:
            postgres.start()
        deadline = time.monotonic() + 30
        while (r := ask(client, server.url, new)).status_code == 503:
            assert time.monotonic() < deadline, "the replica did not reconnect"
            time.sleep(0.2)
        assert r.status_code == 200
        # The usage counted while the database was away is added once it is back.
        task = kept.headers[TASK_HEADER]
        deadline = time.monotonic() + 10
        while app.state.proxy.store.backend.usage(task).requests < 2:
            assert time.monotonic() < deadline, "the usage kept in memory was not written"
            time.sleep(0.1)


# --- hot refit -----------------------------------------------------------------------------------


def same_router_other_bytes(checkpoint: Path, out: Path) -> Path:
    """The checkpoint re-serialised (indented): the same router, another sha256."""
    out.write_text(json.dumps(json.loads(checkpoint.read_text(encoding="utf-8")), indent=1), encoding="utf-8")
    return out


def test_hot_refit_under_load_fails_no_request(tmp_path: Path, checkpoint: Path, stubs: Any) -> None:
    cfg = team_config(tmp_path / "serve.toml", checkpoint, stubs, str(tmp_path / "state.sqlite"))
    app = proxy_app(cfg)
    issues = [text for _, _, text in bundled_issues()[:60]]
    refit = same_router_other_bytes(checkpoint, tmp_path / "refit.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"not": "a checkpoint"}', encoding="utf-8")
    admin = {"authorization": f"Bearer {ADMIN_TOKEN}"}
    statuses: list[int] = []
    stop = threading.Event()
    with serving(app) as server, httpx.Client(limits=httpx.Limits(max_connections=64)) as client:
        early = {ask(client, server.url, t).headers[TASK_HEADER]: t for t in issues[:10]}
        before = {t: app.state.proxy.store.backend.get(t) for t in early}

        def load(n: int) -> None:
            i = n
            while not stop.is_set():
                statuses.append(ask(client, server.url, issues[i % len(issues)], turn=i % 3).status_code)
                i += 8

        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            workers = [pool.submit(load, n) for n in range(8)]
            time.sleep(0.5)
            assert client.post(f"{server.url}/admin/reload", json={}, headers={}).status_code == 401
            refused = client.post(f"{server.url}/admin/reload", json={"checkpoint": str(bad)}, headers=admin)
            assert refused.status_code == 422 and "old router serves on" in refused.json()["error"]["message"]
            swapped = client.post(
                f"{server.url}/admin/reload", json={"checkpoint": str(refit)}, headers=admin
            )
            assert swapped.status_code == 200 and swapped.json()["checkpoint_sha256"] == sha256_file(refit)
            time.sleep(0.5)
            stop.set()
            for w in workers:
                w.result()
        assert statuses and set(statuses) == {200}, "a request failed during the swap"
        # Decided tasks keep their model and record; a new task records the new checkpoint.
        assert {t: app.state.proxy.store.backend.get(t) for t in early} == before
        new_task = ask(client, server.url, bundled_issues()[100][2]).headers[TASK_HEADER]
        store = app.state.proxy.store.backend
        assert store.decision(new_task).checkpoint_sha256 == sha256_file(refit)
        assert {store.decision(t).checkpoint_sha256 for t in early} == {sha256_file(checkpoint)}


def test_sighup_reloads_the_configs_checkpoint(tmp_path: Path, checkpoint: Path, stubs: Any) -> None:
    served = tmp_path / "checkpoint.json"
    served.write_bytes(checkpoint.read_bytes())
    cfg = team_config(tmp_path / "serve.toml", served, stubs, str(tmp_path / "state.sqlite"))
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "router_train.cli", "serve", str(cfg), "--port", str(port)],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_until_serving(proc, url)
        assert httpx.get(f"{url}/health").json()["checkpoint_sha256"] == sha256_file(checkpoint)
        same_router_other_bytes(checkpoint, served)  # the refit lands where the config points
        proc.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 60
        while httpx.get(f"{url}/health").json()["checkpoint_sha256"] != sha256_file(served):
            assert time.monotonic() < deadline, "SIGHUP did not reload the checkpoint"
            time.sleep(0.2)
        served.write_text("{ not json", encoding="utf-8")
        proc.send_signal(signal.SIGHUP)
        time.sleep(2)
        assert httpx.get(f"{url}/health").json()["status"] == "ok"  # the old router serves on
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    assert "reloaded" in err and "reload refused" in err and "Traceback" not in err
