"""`router-train serve`, fourth bad-input round (issue 33): bodies over the limit, the wrong content
type, a slow client, path traversal, one task in two conversations at once, the upstream key never in a
log line or a response, and Ctrl-C with requests in flight. Real `openai`/httpx clients against stub
upstreams on 127.0.0.1 (serve_stubs)."""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from serve_stubs import (
    ServerThread,
    StubUpstream,
    bundled_issues,
    free_port,
    log_lines,
    proxy_app,
    running_upstreams,
    serving,
    wait_until_serving,
    write_config,
)

from router_train.commands.serve import SHUTDOWN_GRACE_S
from router_train.route import Router
from router_train.serve import MODEL_HEADER
from router_train.serve import http_body as serve_app

Stubs = dict[str, tuple[StubUpstream, ServerThread]]


@pytest.fixture(scope="module")
def checkpoint(serve_checkpoint: Path) -> Path:
    return serve_checkpoint  # trained once per test process (train_fixtures)


@pytest.fixture(scope="module")
def router(serve_router: Router) -> Router:
    return serve_router


@pytest.fixture
def stubs(router: Router) -> Iterator[Stubs]:
    with running_upstreams(router.pool) as running:
        yield running


def _chat(text: str, turns: int = 0) -> dict[str, Any]:
    msgs = [{"role": "user", "content": text}]
    for i in range(turns):
        msgs += [{"role": "assistant", "content": f"step {i}"}, {"role": "user", "content": f"out {i}"}]
    return {"model": "router", "messages": msgs}


def _raw(server: ServerThread, request: bytes, timeout: float = 10) -> tuple[int, bytes]:
    """Send raw bytes (a path no client would normalise away) and read the status and body."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=timeout) as s:
        s.sendall(request)
        response = http.client.HTTPResponse(s)
        response.begin()
        return response.status, response.read()


def test_body_limit_content_type_and_malformed_bodies(tmp_path: Path, checkpoint: Path, stubs: Stubs) -> None:
    cfg = write_config(tmp_path / "serve.toml", checkpoint, stubs)
    url_path = "/v1/chat/completions"
    with serving(proxy_app(cfg)) as server:
        url = f"{server.url}{url_path}"
        json_type = {"content-type": "application/json"}
        for body, needle in (
            (b"\xff\xfe not utf-8", "not valid JSON"),
            (b"null", "must be a JSON object"),
            (json.dumps({"model": "router", "messages": []}).encode(), "`messages` is missing"),
            (json.dumps({"model": "router", "messages": "hi"}).encode(), "`messages` is missing"),
        ):
            r = httpx.post(url, content=body, headers=json_type)
            assert r.status_code == 400 and needle in r.json()["error"]["message"], (body, r.text)
        good = json.dumps(_chat("a fine issue")).encode()
        for kind in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"):
            r = httpx.post(url, content=good, headers={"content-type": kind})
            assert r.status_code == 415 and "application/json" in r.json()["error"]["message"]
        # Declared too large: refused before a byte of it is read.
        status, body = _raw(
            server,
            f"POST {url_path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"Content-Length: {serve_app.MAX_BODY_BYTES + 1}\r\nConnection: close\r\n\r\n".encode(),
        )
        assert status == 413 and b"over the limit" in body
        # Sent too large without a length (chunked): refused as it crosses the limit.
        limit = serve_app.MAX_BODY_BYTES

        def chunks() -> Iterator[bytes]:
            yield b'{"model": "router", "messages": [{"role": "user", "content": "'
            for _ in range(limit // (1 << 20) + 1):
                yield b"x" * (1 << 20)
            yield b'"}]}'

        r = httpx.post(url, content=chunks(), headers=json_type, timeout=60)
        assert r.status_code == 413
        # A 4 MB issue is well under the limit and is routed.
        r = httpx.post(url, json=_chat("QuerySet crashes on save. " * 160_000), timeout=60)
        assert r.status_code == 200 and r.headers[MODEL_HEADER] in stubs
        assert httpx.get(f"{server.url}/health").status_code == 200
    assert len(log_lines(cfg)) == 1  # only the routed one


def test_a_slow_client_is_cut_off(
    tmp_path: Path, checkpoint: Path, stubs: Stubs, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(serve_app, "BODY_READ_TIMEOUT_S", 0.5)
    cfg = write_config(tmp_path / "serve.toml", checkpoint, stubs)
    with serving(proxy_app(cfg)) as server:
        started = time.monotonic()
        # Promises 1000 bytes, sends 10, then waits.
        status, body = _raw(
            server,
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b'Content-Length: 1000\r\n\r\n{"model": ',
        )
        assert status == 408 and b"not sent within 0.5 s" in body
        assert time.monotonic() - started < 5
        assert httpx.get(f"{server.url}/health").status_code == 200
    assert log_lines(cfg) == []


def test_path_traversal_in_the_url_is_404(tmp_path: Path, checkpoint: Path, stubs: Stubs) -> None:
    cfg = write_config(tmp_path / "serve.toml", checkpoint, stubs)
    (tmp_path / "secret.txt").write_text("do-not-serve")
    with serving(proxy_app(cfg)) as server:
        for method, path in (
            ("GET", "/v1/../../../../etc/passwd"),
            ("GET", "/%2e%2e/%2e%2e/etc/passwd"),
            ("GET", "/v1/..%2f..%2f" + str(tmp_path / "secret.txt")),
            ("POST", "/v1/chat/completions/../../../etc/passwd"),
            ("GET", "/v1/models/../../state/decisions.jsonl"),
        ):
            status, body = _raw(
                server, f"{method} {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode()
            )
            assert status == 404, (path, status)
            assert b"root:" not in body and b"do-not-serve" not in body
    assert all(not s.seen for s, _ in stubs.values())


def test_one_task_in_two_conversations_at_once_is_routed_once(
    tmp_path: Path, checkpoint: Path, stubs: Stubs
) -> None:
    for stub, _ in stubs.values():
        stub.delay_s = 0.2  # requests overlap at the upstream too
    cfg = write_config(tmp_path / "serve.toml", checkpoint, stubs)
    issue = bundled_issues()[7][2]
    with serving(proxy_app(cfg)) as server:
        c = openai.OpenAI(base_url=f"{server.url}/v1", api_key="unused", max_retries=0, timeout=30)

        def one(turns: int) -> str:
            raw = c.chat.completions.with_raw_response.create(**_chat(issue, turns))
            return raw.headers[MODEL_HEADER]

        with ThreadPoolExecutor(12) as pool:
            models = list(pool.map(one, [i % 3 for i in range(12)]))
    assert len(set(models)) == 1
    (line,) = log_lines(cfg)  # one routing decision, however many conversations raced to make it
    assert line["model"] == models[0]


def test_the_upstream_key_is_never_in_a_log_line_or_a_response(
    tmp_path: Path, checkpoint: Path, stubs: Stubs, router: Router, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-test-round4-c0ffee"
    monkeypatch.setenv("SERVE_TEST_KEY", secret)
    keyed = {m: {"api_key_env": "SERVE_TEST_KEY"} for m in router.pool}
    down = router.pool[-1]
    keyed[down] = {**keyed[down], "base_url": f"http://127.0.0.1:{free_port()}/v1"}
    cfg = write_config(tmp_path / "serve.toml", checkpoint, stubs, **keyed)
    failing = router.pool[0]
    stubs[failing][0].fail_status = 500
    seen: list[str] = []
    with serving(proxy_app(cfg)) as server:
        url = f"{server.url}/v1/chat/completions"
        for model in ("router", *router.pool):
            r = httpx.post(url, json={**_chat(f"issue for {model}"), "model": model}, timeout=30)
            seen.append(r.text + json.dumps(dict(r.headers)))
        r = httpx.post(url, json={"model": "gpt-4o", "messages": [{"role": "user", "content": "x"}]})
        seen.append(r.text + json.dumps(dict(r.headers)))
    assert any("is failing" in s for s in seen)  # the upstream's error did reach the client
    assert stubs[failing][0].seen[-1].authorization == f"Bearer {secret}"
    assert all(secret not in s for s in seen)
    for path in [cfg, *(tmp_path / "state").iterdir()]:
        assert secret.encode() not in path.read_bytes(), path


@pytest.mark.e2e
def test_ctrl_c_with_requests_in_flight_stops_within_the_grace(
    tmp_path: Path, checkpoint: Path, stubs: Stubs
) -> None:
    for stub, _ in stubs.values():
        stub.delay_s = 120  # an upstream slower than any shutdown should wait for
    cfg = write_config(tmp_path / "serve.toml", checkpoint, stubs)
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "router_train.cli", "serve", str(cfg), "--port", str(port)],
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        stderr=subprocess.PIPE,
        text=True,
    )
    results: list[Any] = []
    try:
        url = f"http://127.0.0.1:{port}"
        wait_until_serving(proc, url)

        def ask(i: int) -> None:
            try:
                results.append(httpx.post(f"{url}/v1/chat/completions", json=_chat(f"issue {i}"), timeout=60))
            except httpx.HTTPError as exc:
                results.append(exc)

        threads = [threading.Thread(target=ask, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        started_wait = time.monotonic()
        while sum(len(s.seen) for s, _ in stubs.values()) < 4:  # all four are waiting on an upstream
            assert time.monotonic() < started_wait + 60
            time.sleep(0.05)
        started = time.monotonic()
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=SHUTDOWN_GRACE_S + 20) == 130
        assert time.monotonic() - started < SHUTDOWN_GRACE_S + 10  # bounded, not the upstream's 120 s
        for t in threads:
            t.join(timeout=10)
            assert not t.is_alive()  # every in-flight client got an answer or a closed connection
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert len(results) == 4
    assert proc.stderr is not None
    err = proc.stderr.read()
    assert "Traceback" not in err
