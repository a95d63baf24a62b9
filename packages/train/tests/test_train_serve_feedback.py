"""`router-train serve`'s feedback loop: outcomes (`POST /v1/feedback`), per-task cost, exploration with
propensities, the long-table export, and durability over a SIGKILL.

Stub upstreams on 127.0.0.1 (each answer reports `serve_stubs.STUB_USAGE`), a real `router-train local`
checkpoint, the real `openai` and `httpx` clients.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
import tomli_w
from serve_stubs import (
    STUB_USAGE,
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

from router_oracle.infra.file_hash import sha256_file
from router_oracle.sources.long_table import read_long_table
from router_train.cli import main
from router_train.route import Router, TaskInput
from router_train.serve import MODEL_HEADER, TASK_HEADER, TASK_ID_HEADER
from router_train.serve.usage import StreamMeter, Tokens

TOKEN_ENV = "SERVE_FEEDBACK_TEST_TOKEN"
TOKEN = "fb-token-31c9"
PRICES = {"input_price": 3.0, "output_price": 15.0}
"""USD per million tokens, on every upstream: a stub answer costs 10 x 3 + 5 x 15 = 105e-6 USD."""
ANSWER_COST = (STUB_USAGE["prompt_tokens"] * 3.0 + STUB_USAGE["completion_tokens"] * 15.0) / 1e6


@pytest.fixture(scope="module")
def checkpoint(serve_checkpoint: Path) -> Path:
    return serve_checkpoint  # trained once per test process (train_fixtures)


@pytest.fixture(scope="module")
def router(serve_router: Router) -> Router:
    return serve_router


@pytest.fixture(scope="module")
def stubs(router: Router) -> Iterator[dict[str, tuple[StubUpstream, ServerThread]]]:
    with running_upstreams(router.pool) as running:
        yield running


@pytest.fixture(autouse=True)
def _token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TOKEN_ENV, TOKEN)


def config(tmp_path: Path, checkpoint: Path, stubs: Any, **tables: Any) -> Path:
    """A serve config with prices on every upstream, `[feedback]`, and the given top-level tables."""
    cfg = write_config(tmp_path / "serve.toml", checkpoint, stubs, **{m: PRICES for m in stubs})
    doc = tomllib.loads(cfg.read_text(encoding="utf-8"))
    doc.update({"feedback": {"token_env": TOKEN_ENV}, **tables})
    doc = {k: v for k, v in doc.items() if v is not None}
    cfg.write_text(tomli_w.dumps(doc), encoding="utf-8")
    return cfg


def chat(url: str, issue: str, turns: int = 0, **kw: Any) -> Any:
    c = openai.OpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0, timeout=30)
    msgs: list[Any] = [{"role": "user", "content": issue}]
    for i in range(turns):
        msgs += [{"role": "assistant", "content": f"step {i}"}, {"role": "user", "content": f"output {i}"}]
    return c.chat.completions.with_raw_response.create(model="router", messages=msgs, **kw)


def post_feedback(url: str, body: Any, token: str | None = TOKEN, **kw: Any) -> httpx.Response:
    headers = {"authorization": f"Bearer {token}"} if token is not None else {}
    if isinstance(body, bytes):
        return httpx.post(
            f"{url}/v1/feedback", content=body, headers={**headers, "content-type": "application/json"}, **kw
        )
    return httpx.post(f"{url}/v1/feedback", json=body, headers=headers, **kw)


def test_feedback_records_outcomes_and_the_proxy_cost(tmp_path: Path, checkpoint: Path, stubs: Any) -> None:
    cfg = config(tmp_path, checkpoint, stubs)
    (_, _, a), (_, _, b), (_, _, c) = bundled_issues()[:3]
    with serving(proxy_app(cfg)) as server:
        url = server.url
        for turns in range(3):  # task "job-a": three answers, priced
            chat(url, a, turns, extra_headers={TASK_ID_HEADER: "job-a"})
        raw_b = chat(url, b)  # task b: one JSON answer, one stream with usage, one stream without
        list(chat(url, b, 1, stream=True, stream_options={"include_usage": True}).parse())
        list(chat(url, b, 2, stream=True).parse())
        key_b = raw_b.headers[TASK_HEADER]
        raw_c = chat(url, c)

        # Who may post: the token's bearer only (the chat routes need none).
        assert post_feedback(url, {"task": "job-a", "resolved": True}, token=None).status_code == 401
        wrong = post_feedback(url, {"task": "job-a", "resolved": True}, token="nope")
        assert wrong.status_code == 401 and wrong.headers["www-authenticate"] == "Bearer"

        malformed: list[tuple[Any, str]] = [
            (b"{not json", "not valid JSON"),
            (b"[1]", "must be a JSON object"),
            ({"resolved": True}, "task"),
            ({"task": "job-a"}, "resolved"),
            ({"task": "job-a", "resolved": "yes"}, "resolved"),
            ({"task": "job-a", "resolved": 1}, "resolved"),
            ({"task": "job-a", "resolved": True, "cost": -1}, "cost"),
            ({"task": "job-a", "resolved": True, "cost": "0.1"}, "cost"),
            (b'{"task": "job-a", "resolved": true, "cost": NaN}', "cost"),
            ({"task": "job-a", "resolved": True, "extra": 1}, "extra"),
            ({"task": 7, "resolved": True}, "task"),
        ]
        for body, needle in malformed:
            r = post_feedback(url, body)
            message = r.json()["error"]["message"]
            assert r.status_code == 400 and needle in message and "\n" not in message, (body, r.text)
        unknown = post_feedback(url, {"task": "job-zzz", "resolved": True})
        assert unknown.status_code == 404 and "unknown task 'job-zzz'" in unknown.json()["error"]["message"]

        # By instance_id (the x-router-task-id it was sent with): the proxy's cost, 3 priced answers.
        first = post_feedback(url, {"task": "job-a", "resolved": True})
        assert first.status_code == 200, first.text
        outcome = first.json()
        assert outcome["instance_id"] == "job-a" and outcome["resolved"] is True
        assert outcome["proxy_cost"] == pytest.approx(3 * ANSWER_COST)
        assert outcome["cost"] == outcome["proxy_cost"] and outcome["reported_cost"] is None
        again = post_feedback(url, {"task": "job-a", "resolved": True})  # the same: idempotent
        assert again.status_code == 200 and again.json() == outcome
        for changed in ({"task": "job-a", "resolved": False}, {"task": "job-a", "resolved": True, "cost": 1}):
            conflict = post_feedback(url, changed)
            assert conflict.status_code == 409 and "has an outcome already" in conflict.text

        # By task key, with the harness's own cost (it overrides the proxy's): b had 2 priced answers
        # (a stream without usage reports no tokens).
        fb = post_feedback(url, {"task": key_b, "resolved": False, "cost": 0.25})
        assert fb.status_code == 200
        assert fb.json()["proxy_cost"] == pytest.approx(2 * ANSWER_COST) and fb.json()["cost"] == 0.25

        # Feedback never reaches an upstream, and the proxy keeps serving.
        assert raw_c.headers[MODEL_HEADER] in stubs
        assert httpx.get(f"{url}/health").status_code == 200

    store = cfg.parent / "state" / "decisions.sqlite"
    with sqlite3.connect(store) as db:
        usage = dict(
            (r[0], r[1:]) for r in db.execute("SELECT task, requests, unreported, priced FROM usage")
        )
    assert usage[key_b] == (3, 1, 2)
    lines = log_lines(cfg, usage=True)
    assert [x["event"] for x in lines if x["event"] != "usage"] == ["decision"] * 3 + ["outcome"] * 2
    assert sum(1 for x in lines if x["event"] == "usage") == 3 + 3 + 1
    streamed = [x for x in lines if x["event"] == "usage" and x["task"] == key_b]
    assert [x["cost"] is None for x in streamed] == [False, False, True]

    # The export: the long table `router-oracle build --long-table` reads, from the store or the log.
    for source in (store, cfg.parent / "state" / "decisions.jsonl"):
        out = tmp_path / f"outcomes-{source.suffix[1:]}.jsonl"
        assert main(["feedback", str(source), "--long-table", str(out)]) == 0
        rows = sorted((r.task_id, r.run, r.resolved, r.cost) for r in read_long_table(out).rows)
        decided = {x["task"]: x for x in lines if x["event"] == "decision"}
        assert rows == sorted(
            [
                ("job-a", decided[outcome["task"]]["model"], True, pytest.approx(3 * ANSWER_COST)),
                (decided[key_b]["instance_id"], decided[key_b]["model"], False, 0.25),
            ]
        )
    assert (tmp_path / "outcomes-sqlite.jsonl").read_bytes() == (
        tmp_path / "outcomes-jsonl.jsonl"
    ).read_bytes()


def test_without_a_feedback_table_there_is_no_route(tmp_path: Path, checkpoint: Path, stubs: Any) -> None:
    cfg = config(tmp_path, checkpoint, stubs, feedback=None)
    with serving(proxy_app(cfg)) as server:
        assert post_feedback(server.url, {"task": "x", "resolved": True}).status_code == 404


def test_an_unset_token_variable_is_refused_at_start(
    tmp_path: Path, checkpoint: Path, stubs: Any, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    cfg = config(tmp_path, checkpoint, stubs)
    monkeypatch.delenv(TOKEN_ENV)
    assert main(["serve", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"feedback.token_env: variable {TOKEN_ENV} is not set" in err


def test_exploration_logs_the_propensity_of_the_served_model(
    tmp_path: Path, checkpoint: Path, router: Router, stubs: Any
) -> None:
    rate, n = 0.5, 40
    issues = [text for _, _, text in bundled_issues()[:n]]
    picks = [
        router.route(TaskInput(instance_id="t", problem_statement=t), explain=False).model for t in issues
    ]
    runs: dict[int, list[dict[str, Any]]] = {}
    for seed in (3, 3, 4):
        base = tmp_path / f"seed{seed}-{len(runs)}"
        base.mkdir()
        cfg = config(base, checkpoint, stubs, explore={"rate": rate, "seed": seed})
        with serving(proxy_app(cfg)) as server:
            served = [chat(server.url, t).headers[MODEL_HEADER] for t in issues]
        decisions = log_lines(cfg)
        runs[len(runs)] = decisions
        pool = len(router.pool)
        for d, pick, model in zip(decisions, picks, served, strict=True):
            assert d["router_model"] == pick and d["model"] == model  # the stub that answered
            assert d["explored"] or model == pick
            want = (1 - rate) * (model == pick) + rate / pool
            assert d["propensity"] == pytest.approx(want)
            assert d["checkpoint_sha256"] == sha256_file(checkpoint)
        explored = sum(d["explored"] for d in decisions)
        assert 8 <= explored <= 32  # Binomial(40, 0.5): outside this with probability < 1e-4
        assert len({d["model"] for d in decisions if d["explored"]}) == pool
    same = [d["explored"] for d in runs[0]]
    assert same == [d["explored"] for d in runs[1]]  # the draw is the seed's and the task's alone
    assert same != [d["explored"] for d in runs[2]]

    cfg = config(tmp_path, checkpoint, stubs)  # no [explore]: the router's pick, propensity 1
    with serving(proxy_app(cfg)) as server:
        chat(server.url, issues[0])
    (d,) = log_lines(cfg)
    assert (d["explored"], d["propensity"], d["model"]) == (False, 1.0, picks[0])


def test_the_stream_meter_reads_usage_however_the_stream_is_cut() -> None:
    usage = {"prompt_tokens": 1234, "completion_tokens": 56}
    events = [
        b'data: {"choices": [{"delta": {"content": "hi"}}]}\n\n',
        b'data: {"choices": [], "usage": ' + json.dumps(usage).encode() + b"}\n\n",
        b"data: [DONE]\n\n",
    ]
    stream = b"".join(events)
    for cut in range(len(stream) + 1):
        meter = StreamMeter()
        meter.feed(stream[:cut])
        meter.feed(stream[cut:])
        meter.close()
        assert meter.tokens == Tokens(1234, 56), cut
    meter = StreamMeter()
    meter.feed(events[0] + events[2])
    assert meter.tokens is None


@pytest.mark.e2e
def test_outcomes_survive_a_sigkill_exactly_once(
    tmp_path: Path, checkpoint: Path, stubs: Any, router: Router, capfd: pytest.CaptureFixture[str]
) -> None:
    """40 clients post outcomes while the proxy is killed (SIGKILL); after a restart every outcome
    that got its 200 is there as it was, and posting all of them again leaves exactly one per task."""
    cfg = config(tmp_path, checkpoint, stubs)
    issues = [text for _, _, text in bundled_issues()[:40]]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}

    def report(i: int) -> dict[str, Any]:
        return {"task": f"job-{i}", "resolved": i % 2 == 0, "cost": i / 100}

    def start(port: int) -> subprocess.Popen[str]:
        cmd = [sys.executable, "-m", "router_train.cli", "serve", str(cfg), "--port", str(port)]
        proc = subprocess.Popen(cmd, env=env, stderr=subprocess.DEVNULL, text=True)
        wait_until_serving(proc, f"http://127.0.0.1:{port}")
        return proc

    async def load(url: str, killer: subprocess.Popen[str]) -> tuple[list[int], dict[int, dict[str, Any]]]:
        # 40 clients post conversation after conversation until the proxy is gone, so the kill lands
        # mid-burst however fast the machine answers.
        attempted: list[int] = []
        committed: dict[int, dict[str, Any]] = {}
        async with httpx.AsyncClient(timeout=30) as client:

            async def client_loop() -> None:
                while len(attempted) < 40 * len(issues):
                    i = len(attempted)
                    attempted.append(i)
                    try:
                        text = issues[i % len(issues)]
                        body = {"model": "router", "messages": [{"role": "user", "content": text}]}
                        headers = {TASK_ID_HEADER: f"job-{i}"}
                        await client.post(f"{url}/v1/chat/completions", json=body, headers=headers)
                        r = await client.post(
                            f"{url}/v1/feedback",
                            json=report(i),
                            headers={"authorization": f"Bearer {TOKEN}"},
                        )
                    except httpx.TransportError:
                        return  # the proxy is gone
                    if r.status_code == 200:
                        committed[i] = r.json()
                        if len(committed) == 15:
                            killer.send_signal(signal.SIGKILL)

            await asyncio.gather(*(client_loop() for _ in range(len(issues))))
        return attempted, committed

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc = start(port)
    try:
        attempted, committed = asyncio.run(load(url, proc))
        assert proc.wait(timeout=30) == -signal.SIGKILL
        assert 15 <= len(committed) < len(attempted)  # killed mid-load
        log = cfg.parent / "state" / "decisions.jsonl"
        with log.open("ab") as fh:  # a line cut mid-write, as a kill inside a long write leaves it
            fh.write(b'{"event":"outcome","time":"2026-')
        torn_line = log.read_bytes().count(b"\n") + 1
        proc = start(port)  # reopening the log fences the torn line
        recorded = set()
        for i in attempted:
            r = post_feedback(url, report(i))
            if i in committed:
                assert r.status_code == 200 and r.json() == committed[i]  # kept as it was
            else:  # a task the kill cut before its decision was committed is unknown, else recorded now
                assert r.status_code in (200, 404), r.text
            if r.status_code == 200:
                recorded.add(i)
                assert post_feedback(url, report(i)).json() == r.json()  # and only once
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)
    with sqlite3.connect(cfg.parent / "state" / "decisions.sqlite") as db:
        stored = [json.loads(r[0]) for r in db.execute("SELECT record FROM outcomes")]
    assert sorted(o["instance_id"] for o in stored) == sorted(f"job-{i}" for i in recorded)
    assert set(committed) <= recorded
    # `feedback` reads the log (the torn line skipped and reported) and the store alike: every
    # acknowledged outcome exactly once.
    log = cfg.parent / "state" / "decisions.jsonl"
    rows = {}
    for source in (log, cfg.parent / "state" / "decisions.sqlite"):
        out = tmp_path / f"rows-{source.suffix[1:]}.jsonl"
        assert main(["feedback", str(source), "--long-table", str(out)]) == 0
        rows[source.suffix] = sorted((r.task_id, r.resolved, r.cost) for r in read_long_table(out).rows)
    # (The store may hold one more: an outcome committed, its log line not yet written, when the kill
    # came; it was never acknowledged, and its repost answered from the store.)
    assert set(rows[".jsonl"]) <= set(rows[".sqlite"])
    for got in rows.values():
        ids = [task_id for task_id, _, _ in got]
        assert len(ids) == len(set(ids)) and {f"job-{i}" for i in committed} <= set(ids)
    err = capfd.readouterr().err
    assert (
        f"skipped 1 torn line(s) a crash cut mid-write (line {torn_line})" in err and "Traceback" not in err
    )
