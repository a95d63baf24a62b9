"""`router-train serve` against stub upstreams on 127.0.0.1, through the real `openai` client.

The router is a real `router-train local` checkpoint (a few GRPO steps), loaded by the route API.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
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
from router_train.cli import main
from router_train.route import Router, TaskInput
from router_train.serve import MODEL_HEADER, REPO_HEADER, TASK_ID_HEADER, task_key
from router_train.serve.routing import decision_record

SWEBENCH_TEMPLATE = """<pr_description>
Consider the following PR description:
{task}
</pr_description>

<instructions>
# Task Instructions
(mini-SWE-agent's boilerplate follows here in the real template)
</instructions>"""


@pytest.fixture(scope="module")
def checkpoint(serve_checkpoint: Path) -> Path:
    return serve_checkpoint  # trained once per test process (train_fixtures)


@pytest.fixture(scope="module")
def router(serve_router: Router) -> Router:
    return serve_router


def expected(router: Router, issue: str, instance_id: str = "t") -> str:
    model = router.route(TaskInput(instance_id=instance_id, problem_statement=issue)).model
    assert model is not None
    return model


@pytest.fixture(scope="module")
def issues_by_model(router: Router) -> dict[str, list[str]]:
    """Bundled issues grouped by the model the router sends them to (every pool model gets some)."""
    out: dict[str, list[str]] = {m: [] for m in router.pool}
    texts = [text for _, _, text in bundled_issues()]
    # `route_many` is `route` task by task (route_many's own tests), in one batch of 500.
    decisions = router.route_many(
        [TaskInput(instance_id="t", problem_statement=text) for text in texts], explain=False
    )
    for text, decision in zip(texts, decisions, strict=True):
        assert decision.model is not None
        out[decision.model].append(text)
    assert all(out.values()), {m: len(v) for m, v in out.items()}
    return out


@pytest.fixture(scope="module")
def stubs(router: Router) -> Iterator[dict[str, tuple[StubUpstream, ServerThread]]]:
    with running_upstreams(router.pool) as running:
        yield running


@pytest.fixture(autouse=True)
def _reset_stubs(stubs: dict[str, tuple[StubUpstream, ServerThread]]) -> None:
    for stub, _ in stubs.values():
        stub.fail_status, stub.delay_s, stub.reply = None, 0.0, None
        stub.seen.clear()


def client(server: ServerThread) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{server.url}/v1", api_key="unused", max_retries=0, timeout=30)


def ask(c: openai.OpenAI, messages: list[Any], **kw: Any) -> tuple[str, str]:
    """(reply text, x-router-model) of one chat completion through the proxy."""
    raw = c.chat.completions.with_raw_response.create(
        model=kw.pop("model", "router"), messages=messages, **kw
    )
    return raw.parse().choices[0].message.content or "", raw.headers[MODEL_HEADER]


def conversation(first_user: str, turns: int) -> list[Any]:
    msgs = [{"role": "system", "content": "You are an agent."}, {"role": "user", "content": first_user}]
    for i in range(turns):
        msgs += [{"role": "assistant", "content": f"step {i}"}, {"role": "user", "content": f"output {i}"}]
    return msgs


def test_first_request_is_routed_then_every_turn_sticks(
    tmp_path: Path, checkpoint: Path, router: Router, stubs: Any, issues_by_model: dict[str, list[str]]
) -> None:
    cfg = write_config(tmp_path / "serve.toml", checkpoint, stubs)
    with serving(proxy_app(cfg)) as server:
        c = client(server)
        for model_id, issues in issues_by_model.items():
            first = SWEBENCH_TEMPLATE.format(task=issues[0])
            for turns in range(3):
                text, header = ask(c, conversation(first, turns))
                assert (text, header) == (f"I am up-{model_id}", model_id)
            stub = stubs[model_id][0]
            assert [s.n_messages for s in stub.seen] == [2, 4, 6]
            assert {s.model for s in stub.seen} == {f"served-{model_id}"}  # the upstream's own name
    lines = log_lines(cfg)
    assert len(lines) == len(router.pool)  # one decision per task, none for later turns
    for line, (model_id, issues) in zip(lines, issues_by_model.items(), strict=True):
        first = SWEBENCH_TEMPLATE.format(task=issues[0])
        assert line["task"] == task_key(first, None) and line["model"] == model_id
        # The router read the issue inside the template, and the log holds what `route` decides for it.
        again = router.route(TaskInput(instance_id=line["instance_id"], problem_statement=issues[0]))
        assert {k: line[k] for k in decision_record(again)} == decision_record(again)
        assert line["latency_ms"] >= 0 and line["time"].endswith("Z")


def test_sticky_over_a_restart_and_task_id_header(
    tmp_path: Path, checkpoint: Path, stubs: Any, issues_by_model: dict[str, list[str]]
) -> None:
    cfg = write_config(tmp_path / "serve.toml", checkpoint, stubs)
    (a, a_issue), (b, b_issue) = [(m, v[0]) for m, v in list(issues_by_model.items())[:2]]
    with serving(proxy_app(cfg)) as server:
        assert ask(client(server), conversation(a_issue, 0))[1] == a
        # The header names the task, bound to its conversation (issue 44, item 9).
        raw = client(server).chat.completions.with_raw_response.create(
            model="router", messages=conversation(a_issue, 0), extra_headers={TASK_ID_HEADER: "job-7"}
        )
        assert raw.headers[MODEL_HEADER] == a
    with serving(proxy_app(cfg)) as server:  # a new server process state, the same store
        c = client(server)
        assert ask(c, conversation(a_issue, 4)) == (f"I am up-{a}", a)
        again = c.chat.completions.with_raw_response.create(
            model="router", messages=conversation(a_issue, 2), extra_headers={TASK_ID_HEADER: "job-7"}
        )
        assert (
            again.headers[MODEL_HEADER] == a
            and again.headers["x-router-task"] == raw.headers["x-router-task"]
        )
        # Another conversation claiming "job-7" is a task of its own: it never takes job-7's route.
        claim = c.chat.completions.with_raw_response.create(
            model="router", messages=conversation(b_issue, 1), extra_headers={TASK_ID_HEADER: "job-7"}
        )
        assert (
            claim.headers[MODEL_HEADER] == b
            and claim.headers["x-router-task"] != raw.headers["x-router-task"]
        )
        assert ask(c, conversation(b_issue, 0))[1] == b
        assert httpx.get(f"{server.url}/health").json()["tasks"] == 4
    assert [line["model"] for line in log_lines(cfg)] == [a, a, b, b]


def test_repo_header_reaches_the_router(tmp_path: Path, checkpoint: Path, router: Router, stubs: Any) -> None:
    cfg = write_config(tmp_path / "serve.toml", checkpoint, stubs)
    _, repo, issue = bundled_issues()[0]
    with serving(proxy_app(cfg)) as server:
        raw = client(server).chat.completions.with_raw_response.create(
            model="router", messages=conversation(issue, 0), extra_headers={REPO_HEADER: repo}
        )
        with pytest.raises(openai.BadRequestError, match="x-router-repo: expected a GitHub owner/name"):
            client(server).chat.completions.create(
                model="router", messages=conversation(issue, 0), extra_headers={REPO_HEADER: "not a repo"}
            )
    (line,) = log_lines(cfg)
    with_repo = router.route(TaskInput(instance_id=line["instance_id"], repo=repo, problem_statement=issue))
    assert {k: line[k] for k in decision_record(with_repo)} == decision_record(with_repo)
    assert raw.headers[MODEL_HEADER] == with_repo.model


def test_streaming_is_passed_through(
    tmp_path: Path, checkpoint: Path, stubs: Any, issues_by_model: Any
) -> None:
    cfg = write_config(tmp_path / "serve.toml", checkpoint, stubs)
    model_id, issues = list(issues_by_model.items())[-1]
    with serving(proxy_app(cfg)) as server:
        raw = client(server).chat.completions.with_raw_response.create(
            model="router", messages=conversation(issues[0], 0), stream=True
        )
        assert raw.headers[MODEL_HEADER] == model_id
        assert raw.headers["content-type"].startswith("text/event-stream")
        chunks = list(raw.parse())
        assert (
            "".join(ch.choices[0].delta.content or "" for ch in chunks if ch.choices) == f"I am up-{model_id}"
        )
        assert chunks[-1].choices[0].finish_reason == "stop"
    assert stubs[model_id][0].seen[0].stream


def test_models_health_and_direct_pool_models(
    tmp_path: Path, checkpoint: Path, router: Router, stubs: Any
) -> None:
    cfg = write_config(tmp_path / "serve.toml", checkpoint, stubs)
    with serving(proxy_app(cfg)) as server:
        c = client(server)
        assert [m.id for m in c.models.list()] == ["router", *router.pool]
        health = httpx.get(f"{server.url}/health").json()
        assert health == {
            "status": "ok",
            "router": router.name,
            "objective": "the native point (no_safe_point)",  # the config's no_safe_point, no budget
            "checkpoint_sha256": sha256_file(checkpoint),
            "pool": router.pool,
            "tasks": 0,
        }
        for model_id in router.pool:  # asked for by name: served by that upstream, not routed
            assert ask(c, conversation("anything at all", 0), model=model_id) == (
                f"I am up-{model_id}",
                model_id,
            )
    assert log_lines(cfg) == []


def test_bad_requests_get_400_with_a_clear_message(tmp_path: Path, checkpoint: Path, stubs: Any) -> None:
    cfg = write_config(tmp_path / "serve.toml", checkpoint, stubs)
    with serving(proxy_app(cfg)) as server:
        url = f"{server.url}/v1/chat/completions"
        cases = [
            (b"{not json", "not valid JSON"),
            (b"[1, 2]", "must be a JSON object"),
            (json.dumps({"model": "router"}).encode(), "`messages` is missing"),
            (
                json.dumps({"model": "router", "messages": [{"role": "system", "content": "x"}]}).encode(),
                "no user message",
            ),
            (json.dumps({"messages": [{"role": "user", "content": "x"}]}).encode(), "`model` is missing"),
        ]
        for body, needle in cases:
            r = httpx.post(url, content=body, headers={"content-type": "application/json"})
            assert r.status_code == 400 and needle in r.json()["error"]["message"], (body, r.text)
        with pytest.raises(
            openai.BadRequestError, match="unknown model 'gpt-4o'; this proxy serves: router, "
        ):
            client(server).chat.completions.create(
                model="gpt-4o", messages=[{"role": "user", "content": "x"}]
            )
        assert httpx.get(f"{server.url}/health").status_code == 200
    assert log_lines(cfg) == []


def test_upstream_faults_reach_the_client_and_the_server_keeps_serving(
    tmp_path: Path, checkpoint: Path, stubs: Any, router: Router
) -> None:
    failing, slow, down = router.pool
    cfg = write_config(
        tmp_path / "serve.toml",
        checkpoint,
        stubs,
        **{slow: {"read_timeout_s": 0.3}, down: {"base_url": f"http://127.0.0.1:{free_port()}/v1"}},
    )
    stubs[failing][0].fail_status = 503
    stubs[slow][0].delay_s = 1.5
    with serving(proxy_app(cfg)) as server:
        c = client(server)
        msgs = conversation("x", 0)
        with pytest.raises(openai.APIStatusError) as err:
            c.chat.completions.create(model=failing, messages=msgs)
        assert err.value.status_code == 503 and "is failing" in str(err.value)  # the upstream's own body
        assert err.value.response.headers[MODEL_HEADER] == failing
        with pytest.raises(openai.APIStatusError) as err:
            c.chat.completions.create(model=failing, messages=msgs, stream=True)
        assert err.value.status_code == 503
        with pytest.raises(openai.APIStatusError) as err:
            c.chat.completions.create(model=slow, messages=msgs)
        assert err.value.status_code == 504 and "timed out" in str(err.value)
        with pytest.raises(openai.APIStatusError) as err:
            c.chat.completions.create(model=down, messages=msgs)
        assert err.value.status_code == 502 and "cannot be reached" in str(err.value)
        stubs[failing][0].fail_status = None
        assert ask(c, msgs, model=failing) == (f"I am up-{failing}", failing)


def test_fallback_when_configured_is_used_and_logged(
    tmp_path: Path, checkpoint: Path, stubs: Any, issues_by_model: dict[str, list[str]]
) -> None:
    (a, issues), (b, _) = list(issues_by_model.items())[:2]
    cfg = write_config(tmp_path / "serve.toml", checkpoint, stubs, **{a: {"fallback": b}})
    stubs[a][0].fail_status = 500
    with serving(proxy_app(cfg)) as server:
        assert ask(client(server), conversation(issues[0], 0)) == (f"I am up-{b}", b)
    routed, fallback = log_lines(cfg)
    assert routed["model"] == a
    assert fallback["event"] == "fallback" and (fallback["model"], fallback["fallback_model"]) == (a, b)
    assert fallback["status"] == 500 and fallback["task"] == routed["task"]


def test_an_llm_router_behind_an_endpoint(
    tmp_path: Path, checkpoint: Path, stubs: Any, issues_by_model: dict[str, list[str]]
) -> None:
    # The router is itself an OpenAI-compatible endpoint (here a stub that answers a set reply), asked
    # with the env's prompt and parsed with the env's parser by the route API.
    policy = StubUpstream("policy", reply="<route>gpt-5.5</route>")
    cfg = write_config(tmp_path / "serve.toml", checkpoint, stubs)
    with serving(policy.app()) as router_server:
        doc = tomllib.loads(cfg.read_text(encoding="utf-8"))
        doc["router"] = {"endpoint": f"{router_server.url}/v1", "model": "policy", "max_retries": 0}
        cfg.write_text(tomli_w.dumps(doc), encoding="utf-8")
        first, second, third = [issues[0] for issues in issues_by_model.values()]
        with serving(proxy_app(cfg)) as server:
            c = client(server)
            assert ask(c, conversation(first, 0)) == ("I am up-gpt-5.5", "gpt-5.5")
            policy.reply = "I would pick a strong model."  # no <route> tag: no valid route
            with pytest.raises(openai.APIStatusError) as err:
                ask(c, conversation(second, 0))
            assert err.value.status_code == 502 and "the router gave no route" in str(err.value)
            policy.fail_status = 500
            with pytest.raises(openai.APIStatusError) as err:
                ask(c, conversation(third, 0))
            assert err.value.status_code == 502 and "the router failed" in str(err.value)
            # A routed task does not ask the router again: it stays on its model while the router is down.
            assert ask(c, conversation(first, 2)) == ("I am up-gpt-5.5", "gpt-5.5")
    assert len(policy.seen) == 3 and policy.seen[0].first_user != first  # the env's prompt, not the agent's
    lines = log_lines(cfg)
    assert [line.get("model", line.get("event")) for line in lines] == ["gpt-5.5", None, "router_error"]
    assert "HTTP 500" in lines[2]["error"]
    assert (
        lines[1]["reason"].startswith("unparseable reply")
        and lines[1]["reply"] == "I would pick a strong model."
    )


def test_api_key_is_sent_and_never_written(
    tmp_path: Path, checkpoint: Path, stubs: Any, router: Router, monkeypatch: pytest.MonkeyPatch
) -> None:
    model_id = router.pool[0]
    secret = "sk-test-7f3a9c"
    monkeypatch.setenv("SERVE_TEST_KEY", secret)
    cfg = write_config(
        tmp_path / "serve.toml", checkpoint, stubs, **{model_id: {"api_key_env": "SERVE_TEST_KEY"}}
    )
    with serving(proxy_app(cfg)) as server:
        ask(client(server), conversation("please route me", 0))
        ask(client(server), conversation("x", 0), model=model_id)
    assert stubs[model_id][0].seen[-1].authorization == f"Bearer {secret}"
    for path in [cfg, *(tmp_path / "state").iterdir()]:
        assert secret.encode() not in path.read_bytes(), path


def test_fifty_concurrent_conversations_never_mix(
    tmp_path: Path, checkpoint: Path, router: Router, stubs: Any, issues_by_model: dict[str, list[str]]
) -> None:
    cfg = write_config(tmp_path / "serve.toml", checkpoint, stubs)
    tasks = [issue for issues in issues_by_model.values() for issue in issues[:17]][:50]
    want = {t: expected(router, t) for t in tasks}  # each task's route, asked once
    assert len(tasks) == 50 and len(set(want.values())) == len(router.pool)

    async def run_all(url: str) -> list[list[str]]:
        c = openai.AsyncOpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0, timeout=60)

        async def one(issue: str) -> list[str]:
            got = []
            for turns in range(3):
                raw = await c.chat.completions.with_raw_response.create(
                    model="router", messages=conversation(issue, turns)
                )
                reply = raw.parse().choices[0].message.content
                assert reply == f"I am up-{raw.headers[MODEL_HEADER]}"
                got.append(raw.headers[MODEL_HEADER])
            return got

        try:
            return await asyncio.gather(*(one(t) for t in tasks))
        finally:
            await c.close()

    with serving(proxy_app(cfg)) as server:
        results = asyncio.run(run_all(server.url))
    for issue, models in zip(tasks, results, strict=True):
        assert models == [want[issue]] * 3
    for model_id, (stub, _) in stubs.items():  # each upstream saw exactly its own tasks' turns
        assert sorted(s.first_user for s in stub.seen) == sorted(
            t for t in tasks for _ in range(3) if want[t] == model_id
        )
    assert len(log_lines(cfg)) == 50


def test_cli_refuses_an_unserved_pool_model_with_one_line(
    tmp_path: Path, checkpoint: Path, stubs: Any, router: Router, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = write_config(tmp_path / "serve.toml", checkpoint, stubs)
    doc = tomllib.loads(cfg.read_text(encoding="utf-8"))
    missing = router.pool[1]
    del doc["upstreams"][missing]
    partial = tmp_path / "partial.toml"
    partial.write_text(tomli_w.dumps(doc), encoding="utf-8")
    assert main(["serve", str(partial)]) == 2
    err = capsys.readouterr().err
    assert (
        err.count("\n") == 1 and f"pool model {missing!r} has no [upstreams." in err and str(partial) in err
    )

    keyed = write_config(
        tmp_path / "keyed.toml", checkpoint, stubs, **{missing: {"api_key_env": "SERVE_UNSET_VAR_1"}}
    )
    assert main(["serve", str(keyed)]) == 2
    assert "api_key_env: variable SERVE_UNSET_VAR_1 is not set" in capsys.readouterr().err

    with socket.socket() as taken:  # an address in use: one line, before any server starts
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["serve", str(cfg), "--port", str(port)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"--port {port}: Address already in use" in err

    bad = tmp_path / "bad.toml"
    bad.write_text("[router\n")
    assert main(["serve", str(bad)]) == 2
    assert "not valid TOML" in capsys.readouterr().err


@pytest.mark.e2e
def test_the_command_serves_and_stops_on_ctrl_c(
    tmp_path: Path, checkpoint: Path, stubs: Any, issues_by_model: dict[str, list[str]]
) -> None:
    cfg = write_config(tmp_path / "serve.toml", checkpoint, stubs)
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "router_train.cli", "serve", str(cfg), "--port", str(port)],
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},  # this test's modules, also under pex
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        wait_until_serving(proc, url)
        model_id, issues = next(iter(issues_by_model.items()))
        c = openai.OpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0, timeout=30)
        assert ask(c, conversation(issues[0], 0)) == (f"I am up-{model_id}", model_id)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 130  # the project's Ctrl-C status, after a graceful shutdown
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.stderr is not None
    err = proc.stderr.read()
    assert err.startswith(f"router-train serve: router local:{checkpoint} over ") and f":{port}/v1" in err
    assert "(model `router`, serving the native point (no_safe_point); store " in err  # what it serves
    assert [line["model"] for line in log_lines(cfg)] == [model_id]
