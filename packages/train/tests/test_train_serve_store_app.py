"""The store seen from outside: text no database holds is a 400 on both backends (refused before the
database), and no output of `serve` or `feedback` shows a store's password, whatever form it is given in
(the URL's userinfo, a `?password=` parameter, $PGPASSWORD), against a database that cannot be reached and
a real one; an upper-case scheme is PostgreSQL, never a file named after the URL.

The real CLIs: `feedback` and a refused `serve` in-process (their stdout and stderr captured), a serving
`serve` as a subprocess (its output and `/health` read).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import tomli_w
from postgres_server import PostgresServer, fresh_database, postgres  # noqa: F401  (the fixture)
from serve_stubs import (
    free_port,
    proxy_app,
    running_upstreams,
    serving,
    trained_checkpoint,
    wait_until_serving,
    write_config,
)

from router_train.cli import main
from router_train.serve.records import DecisionRecord, OutcomeRecord
from router_train.serve.store_open import open_store

SECRET = "hunter2-pw"
ENV_SECRET = "pgpass-env-77"


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return trained_checkpoint(tmp_path_factory.getbasetemp())


@pytest.fixture(scope="module")
def stubs() -> Iterator[Any]:
    with running_upstreams(["nemotron-3-super", "claude-opus-4.7", "gpt-5.5"]) as running:
        yield running


def with_password(url: str) -> list[str]:
    """`url` (no password) with the password in its userinfo, and as a query parameter (upper-case
    scheme)."""
    rest = url.removeprefix("postgresql://")
    user, _, host = rest.partition("@")
    return [f"postgresql://{user}:{SECRET}@{host}", f"POSTGRESQL://{rest}?sslmode=disable&password={SECRET}"]


def feedback_outputs(url: str, capsys: pytest.CaptureFixture[str]) -> list[str]:
    outputs = []
    for extra in ([], ["--checkpoint-sha", "ffff"]):
        main(["feedback", url, *extra])
        got = capsys.readouterr()
        outputs.append(got.out + got.err)
    return outputs


def seed_store(url: str) -> None:
    """A decision and an outcome, so `feedback` prints its checkpoint lines."""
    store = open_store(url)
    try:
        store.claim(
            DecisionRecord(
                router="r",
                instance_id="i1",
                model="gpt-5.5",
                time="2026-01-01T00:00:00.000Z",
                task="t1",
                latency_ms=1.0,
                router_model="gpt-5.5",
                propensity=1.0,
                checkpoint_sha256="a" * 64,
            )
        )
        store.record_outcome(
            OutcomeRecord(
                time="2026-01-01T00:00:01.000Z", task="t1", instance_id="i1", model="gpt-5.5", resolved=True
            )
        )
    finally:
        store.close()


def assert_no_secret(outputs: list[str]) -> None:
    for text in outputs:
        assert SECRET not in text and ENV_SECRET not in text, text
        assert "postgresql:/p" not in text, text  # a URL made a path: `//` collapsed
        assert "Traceback" not in text, text


@pytest.mark.system  # a real PostgreSQL
def test_no_output_of_serve_or_feedback_shows_a_password(
    tmp_path: Path,
    checkpoint: Path,
    stubs: Any,
    postgres: PostgresServer,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PGPASSWORD", ENV_SECRET)  # the test cluster trusts local users: it is ignored
    monkeypatch.chdir(tmp_path)
    real = fresh_database(postgres, "urls")
    seed_store(real)
    dead = f"postgresql://postgres@127.0.0.1:{free_port()}/router"
    cfg = write_config(tmp_path / "serve.toml", checkpoint, stubs)
    outputs: list[str] = []
    for url in with_password(dead):
        assert main(["serve", str(cfg), "--store", url, "--port", str(free_port())]) == 2
        got = capsys.readouterr()
        assert "cannot use the PostgreSQL store" in got.err and len(got.err.strip().splitlines()) == 1
        outputs += [got.out + got.err, *feedback_outputs(url, capsys)]
    for url in with_password(real):
        found = feedback_outputs(url, capsys)
        assert "1 tasks decided, 1 with an outcome" in found[0] and "postgresql://postgres" in found[1]
        outputs += [*found, *serve_outputs(cfg, url)]
    assert_no_secret(outputs)
    assert not any(p.name.lower().startswith("postgres") for p in tmp_path.iterdir())  # no file named so


def serve_outputs(cfg: Path, url: str) -> list[str]:
    """A serving `serve` on `url`: its /health and everything it printed until Ctrl-C."""
    port = free_port()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "router_train.cli", "serve", str(cfg), "--store", url, "--port", str(port)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        wait_until_serving(proc, f"http://127.0.0.1:{port}")
        health = httpx.get(f"http://127.0.0.1:{port}/health").text
    finally:
        proc.send_signal(signal.SIGINT)
        printed, _ = proc.communicate(timeout=60)
    assert "store postgresql://postgres" in printed
    return [health, printed]


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.system)])
def store_location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "state.sqlite")
    return fresh_database(request.getfixturevalue("postgres"), "text")


def test_text_no_database_holds_is_a_400_on_both_backends(
    tmp_path: Path, checkpoint: Path, stubs: Any, store_location: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STORE_APP_TEST_FEEDBACK", "fb")
    cfg = write_config(tmp_path / "serve.toml", checkpoint, stubs)
    doc = tomllib.loads(cfg.read_text(encoding="utf-8"))
    doc.update(store=store_location, feedback={"token_env": "STORE_APP_TEST_FEEDBACK"})
    cfg.write_text(tomli_w.dumps(doc), encoding="utf-8")
    auth = {"authorization": "Bearer fb", "content-type": "application/json"}
    with serving(proxy_app(cfg)) as server, httpx.Client(timeout=30) as client:
        for task in ("a\\u0000b", "a\\ud800b"):
            body = f'{{"task": "{task}", "resolved": true}}'.encode()
            r = client.post(f"{server.url}/v1/feedback", content=body, headers=auth)
            assert r.status_code == 400 and "\n" not in r.json()["error"]["message"]
        chat = b'{"model": "router", "messages": [{"role": "user", "content": "fix it \\ud800"}]}'
        r = client.post(f"{server.url}/v1/chat/completions", content=chat, headers=auth)
        assert r.status_code == 400, r.text
        assert client.get(f"{server.url}/health").json()["status"] == "ok"
