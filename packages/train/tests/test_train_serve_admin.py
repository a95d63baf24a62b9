"""serve's admin side and what it reports: the hot refit to a router that routes differently (under load),
checkpoint paths that are not regular files, hostile reload bodies, SIGHUP re-reading the config, the
Ctrl-C message, and GET /metrics. Stub upstreams on 127.0.0.1, real checkpoints, real HTTP clients."""

from __future__ import annotations

import concurrent.futures
import json
import os
import shutil
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
import pytest
import tomli_w
from serve_stubs import (
    ServerThread,
    StubUpstream,
    always_checkpoint,
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
from router_train.serve import MODEL_HEADER, TASK_HEADER

ADMIN_ENV = "SERVE_ADMIN_TEST_ADMIN"
ADMIN_TOKEN = "admin-77"
METRICS_ENV = "SERVE_ADMIN_TEST_METRICS"
METRICS_TOKEN = "scrape-5"
ADMIN = {"authorization": f"Bearer {ADMIN_TOKEN}"}
REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def pool(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    return list(native_router(trained_checkpoint(tmp_path_factory.getbasetemp())).pool)


@pytest.fixture(scope="module")
def stubs(pool: list[str]) -> Iterator[dict[str, tuple[StubUpstream, ServerThread]]]:
    with running_upstreams(pool) as running:
        yield running


@pytest.fixture(autouse=True)
def _tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ADMIN_ENV, ADMIN_TOKEN)
    monkeypatch.setenv(METRICS_ENV, METRICS_TOKEN)


def admin_config(path: Path, checkpoint: Path, stubs: Any, **tables: Any) -> Path:
    """A serve config routing with `checkpoint`, with [admin] and its own state beside `path`."""
    cfg = write_config(path, checkpoint, stubs)
    doc = tomllib.loads(cfg.read_text(encoding="utf-8"))
    doc.update(
        store=str(path.with_suffix(".sqlite")),
        decision_log=str(path.with_suffix(".jsonl")),
        admin={"token_env": ADMIN_ENV},
        **tables,
    )
    cfg.write_text(tomli_w.dumps(doc), encoding="utf-8")
    return cfg




def test_a_reload_to_a_router_that_routes_otherwise_takes_new_tasks_and_keeps_decided_ones(
    tmp_path: Path, pool: list[str], stubs: Any
) -> None:
    first, second = pool[0], pool[1]
    old = always_checkpoint(tmp_path / "always-first.json", pool, first)
    new = always_checkpoint(tmp_path / "always-second.json", pool, second)
    app = proxy_app(admin_config(tmp_path / "serve.toml", old, stubs))
    issues = [text for _, _, text in bundled_issues()[:400]]  # new tasks still arriving after the swap
    results: list[tuple[int, str, str, int]] = []  # (status, task, model, turn)
    stop = threading.Event()
    with serving(app) as server, httpx.Client(limits=httpx.Limits(max_connections=64)) as client:
        early = {ask(client, server.url, t).headers[TASK_HEADER]: t for t in issues[:10]}

        def load(n: int) -> None:
            i = n
            while not stop.is_set():
                r = ask(client, server.url, issues[i % len(issues)], turn=i % 3)
                results.append(
                    (r.status_code, r.headers.get(TASK_HEADER, ""), r.headers.get(MODEL_HEADER, ""), i)
                )
                i += 8

        with concurrent.futures.ThreadPoolExecutor(8) as workers:
            running = [workers.submit(load, n) for n in range(8)]
            time.sleep(0.5)
            swapped = client.post(f"{server.url}/admin/reload", json={"checkpoint": str(new)}, headers=ADMIN)
            assert swapped.status_code == 200, swapped.text
            assert swapped.json()["checkpoint_sha256"] == sha256_file(new)
            time.sleep(0.5)
            stop.set()
            for w in running:
                w.result()
        assert results and {s for s, *_ in results} == {200}, "a request failed during the swap"
        # Every turn of a task went to one model: the swap moved no decided task.
        seen: dict[str, str] = {}
        for _, task, model, _ in results:
            assert seen.setdefault(task, model) == model, task
        assert {seen.get(t, first) for t in early} == {first}
        for text in early.values():
            assert ask(client, server.url, text, turn=2).headers[MODEL_HEADER] == first
        # New tasks follow the new router.
        fresh = [text for _, _, text in bundled_issues()[450:455]]
        assert {ask(client, server.url, t).headers[MODEL_HEADER] for t in fresh} == {second}
        store = app.state.proxy.store.backend
        task = ask(client, server.url, fresh[0]).headers[TASK_HEADER]
        assert store.decision(task).checkpoint_sha256 == sha256_file(new)
        assert {store.decision(t).checkpoint_sha256 for t in early} == {sha256_file(old)}
        assert set(seen.values()) == {first, second}  # both routers decided tasks under load


def test_a_reload_refuses_a_fifo_and_a_device_at_once_and_the_next_reload_works(
    tmp_path: Path, pool: list[str], stubs: Any
) -> None:
    old = always_checkpoint(tmp_path / "a.json", pool, pool[0])
    new = always_checkpoint(tmp_path / "b.json", pool, pool[1])
    fifo = tmp_path / "checkpoint.fifo"
    os.mkfifo(fifo)
    big = tmp_path / "big.json"
    with big.open("wb") as fh:  # sparse: over the size limit without taking the disk
        fh.truncate(300 * 1024 * 1024)
    app = proxy_app(admin_config(tmp_path / "serve.toml", old, stubs))
    with serving(app) as server, httpx.Client(timeout=15) as client:
        for path, says in (
            (fifo, "not a regular file"),
            ("/dev/zero", "not a regular file"),
            (big, "over the limit"),
        ):
            started = time.monotonic()
            r = client.post(f"{server.url}/admin/reload", json={"checkpoint": str(path)}, headers=ADMIN)
            assert r.status_code == 422 and says in r.json()["error"]["message"], r.text
            assert time.monotonic() - started < 5
        r = client.post(f"{server.url}/admin/reload", json={"checkpoint": str(new)}, headers=ADMIN)
        assert r.status_code == 200 and r.json()["checkpoint_sha256"] == sha256_file(new)


@pytest.mark.parametrize(
    ("body", "says"),
    [
        (b"[" * 100_000 + b"]" * 100_000, "nests deeper"),
        (b'{"checkpoint": "\\ud800.json"}', "surrogate"),
        (b'{"checkpoint": "a\\u0000b"}', "not a path"),
        (b'{"checkpoint": 5}', '{"checkpoint": "PATH"}'),
    ],
)
def test_hostile_reload_bodies_are_400_in_one_line(
    tmp_path: Path, pool: list[str], stubs: Any, body: bytes, says: str
) -> None:
    old = always_checkpoint(tmp_path / "a.json", pool, pool[0])
    with serving(proxy_app(admin_config(tmp_path / "serve.toml", old, stubs))) as server:
        headers = {**ADMIN, "content-type": "application/json"}
        r = httpx.post(f"{server.url}/admin/reload", content=body, headers=headers, timeout=30)
        assert r.status_code == 400 and says in r.json()["error"]["message"], r.text
        assert "\n" not in r.json()["error"]["message"]


def test_metrics_count_requests_decisions_and_the_checkpoint_behind_their_own_token(
    tmp_path: Path, pool: list[str], stubs: Any
) -> None:
    old = always_checkpoint(tmp_path / "a.json", pool, pool[0])
    cfg = admin_config(tmp_path / "serve.toml", old, stubs, metrics={"token_env": METRICS_ENV})
    with serving(proxy_app(cfg)) as server, httpx.Client(timeout=30) as client:
        for text in [t for _, _, t in bundled_issues()[:3]]:
            assert ask(client, server.url, text).status_code == 200
            assert ask(client, server.url, text, turn=1).status_code == 200
        client.post(f"{server.url}/v1/chat/completions", json={"model": "router"})  # 400
        assert client.get(f"{server.url}/metrics").status_code == 401
        assert client.get(f"{server.url}/metrics", headers=ADMIN).status_code == 401
        r = client.get(f"{server.url}/metrics", headers={"authorization": f"Bearer {METRICS_TOKEN}"})
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
        text = r.text
    assert 'router_serve_requests_total{route="/v1/chat/completions",status="200"} 6.0' in text
    assert 'router_serve_errors_total{route="/v1/chat/completions",status="400"} 1.0' in text
    assert f'router_serve_decisions_total{{chooser="router",model="{pool[0]}"}} 3.0' in text
    assert f'router_serve_upstream_latency_seconds_count{{model="{pool[0]}",status="200"}} 6.0' in text
    assert f'sha256="{sha256_file(old)}"' in text and "router_serve_checkpoint_info" in text
    assert "router_serve_store_available 1.0" in text


def test_sighup_rereads_the_config_and_replaces_what_a_post_swapped_in_and_ctrl_c_says_what_it_wrote(
    tmp_path: Path, pool: list[str], stubs: Any
) -> None:
    a, b, c = (always_checkpoint(tmp_path / f"{m}.json", pool, m) for m in pool[:3])
    cfg = admin_config(tmp_path / "serve.toml", a, stubs)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "router_train.cli", "serve", str(cfg), "--port", str(port)],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    issues = iter(t for _, _, t in bundled_issues()[300:])

    def new_task_model() -> str:
        return str(ask(httpx.Client(), url, next(issues)).headers[MODEL_HEADER])

    def wait_for(sha: str) -> None:
        deadline = time.monotonic() + 60
        while httpx.get(f"{url}/health").json()["checkpoint_sha256"] != sha:
            assert time.monotonic() < deadline, "the reload did not happen"
            time.sleep(0.2)

    try:
        wait_until_serving(proc, url)
        assert new_task_model() == pool[0]
        r = httpx.post(f"{url}/admin/reload", json={"checkpoint": str(b)}, headers=ADMIN, timeout=30)
        assert r.status_code == 200 and new_task_model() == pool[1]
        doc = tomllib.loads(cfg.read_text(encoding="utf-8"))
        doc["router"]["checkpoint"] = str(c)  # the file now names a third router
        cfg.write_text(tomli_w.dumps(doc), encoding="utf-8")
        proc.send_signal(signal.SIGHUP)
        wait_for(sha256_file(c))
        assert new_task_model() == pool[2]
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    lines = err.splitlines()
    assert any(f"SIGHUP: read {cfg}: router checkpoint {c}" in line for line in lines), err
    assert any(
        f"reloaded {c}" in line and f"it replaces {b}, which POST /admin/reload" in line for line in lines
    ), err
    assert "no output written" not in err and "Traceback" not in err
    assert (
        lines[-1].startswith("router-train serve: stopped by Ctrl-C; the store ") and "written" in lines[-1]
    )


def hot_refit_curl_lines() -> list[tuple[str, str]]:
    """(command, the output docs/serve.md shows for it) of each `$ curl ... /admin/reload` line of the
    Hot refit example."""
    lines = (REPO / "docs" / "serve.md").read_text(encoding="utf-8").splitlines()
    found = []
    for i, line in enumerate(lines):
        if line.startswith("$ curl") and "/admin/reload" in line:
            found.append((line.removeprefix("$ "), lines[i + 1]))
    return found


@pytest.mark.skipif(shutil.which("curl") is None, reason="needs curl: sudo apt-get install -y curl")
def test_the_docs_reload_curl_lines_run_as_written_against_a_live_serve(
    tmp_path: Path, pool: list[str], stubs: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    commands = hot_refit_curl_lines()
    assert len(commands) == 2 and all("content-type: application/json" in c for c, _ in commands)
    (tmp_path / "D").mkdir()
    served = always_checkpoint(tmp_path / "D" / "checkpoint.json", pool, pool[0])
    cfg = admin_config(tmp_path / "serve.toml", served, stubs)
    monkeypatch.chdir(tmp_path)  # serve runs where D/ is, as in the docs
    with serving(proxy_app(cfg)) as server:
        env = {**os.environ, "ADMIN_TOKEN": ADMIN_TOKEN}
        for command, shown in commands:
            # As written, but for the address: this test's serve listens on a free port, not 8001.
            line = command.replace("localhost:8001", server.url.removeprefix("http://"))
            done = subprocess.run(["bash", "-c", line], cwd=tmp_path, env=env, capture_output=True, text=True)
            got, expected = json.loads(done.stdout), json.loads(shown)
            if "error" in expected:
                assert got == expected
            else:  # the docs' router was an IRT checkpoint; this test's is another file
                assert got["checkpoint"] == expected["checkpoint"] == "D/checkpoint.json"
                assert got["checkpoint_sha256"] == sha256_file(served)
