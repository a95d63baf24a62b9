"""`router-train route --endpoint`: the real openai client against a scripted server on 127.0.0.1.

The request carries the env's system prompt and user turn byte for byte (as `RouterTaskset` serves
them); the reply is parsed by the env's parser; HTTP errors and timeouts are retried a bounded number
of times, then end the command with one line and exit 1, nothing written.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from route_stub import Answer, stub_server

from router_frontier_rl import RouterConfig, RouterTaskset
from router_frontier_rl.route_parser import MAX_REPLY_CHARS
from router_train.cli import main
from router_train.route import EndpointError, EndpointSpec, TaskInput, bundled_tasks, load_router

VALID = "Looks like a hard one.\n<route>gpt-5.5</route>"


@pytest.fixture(scope="module")
def served() -> list:
    """The env's eval-split tasks as `vf-eval` serves them (bundled table, default split)."""
    return list(RouterTaskset(RouterConfig(split="eval", max_tasks=3)))


def _route(capsys, url: str, *argv: str) -> tuple[int, list[dict], str]:
    capsys.readouterr()
    rc = main(["route", "--quiet", "--endpoint", url, "--model", "my-router", *argv])
    cap = capsys.readouterr()
    return rc, [json.loads(line) for line in cap.out.splitlines()], cap.err


def _instances(served: list) -> list[str]:
    return [arg for t in served for arg in ("--instance", t.data.record.instance_id)]


def test_request_is_the_envs_prompt_byte_for_byte_and_reply_is_parsed(served, capsys):
    with stub_server(lambda body, n: Answer(VALID)) as server:
        rc, out, _ = _route(capsys, server.base_url, *_instances(served), "--explain")
        requests = sorted(server.requests, key=lambda b: b["messages"][1]["content"])
    assert rc == 0
    assert [d["model"] for d in out] == ["gpt-5.5"] * len(served)
    assert all(d["reply"] == VALID and d["router"] == "endpoint:my-router" for d in out)
    want = sorted(
        [
            [{"role": "system", "content": t.data.system_prompt}, {"role": "user", "content": t.data.prompt}]
            for t in served
        ],
        key=lambda m: m[1]["content"],
    )
    assert [b["messages"] for b in requests] == want
    assert all(b["model"] == "my-router" and b["temperature"] == 0 for b in requests)


def test_any_pool_prompt_is_the_envs_for_that_pool(tmp_path, capsys):
    (task,) = RouterTaskset(RouterConfig(split="eval", pool_size=3, max_tasks=1))
    ids = task.data.valid_ids
    pool = tmp_path / "pool.toml"
    rows = "".join(f'[[models]]\nid = "{m}"\nname = "{m}"\nruns = ["r-{m}"]\n' for m in ids)
    pool.write_text(f'name = "drawn"\n{rows}', encoding="utf-8")
    reply = f"<route>{ids[-1]}</route>"
    with stub_server(lambda body, n: Answer(reply)) as server:
        rc, out, _ = _route(
            capsys, server.base_url, "--pool", str(pool), "--instance", task.data.record.instance_id
        )
    assert rc == 0 and out[0]["model"] == ids[-1]
    assert server.requests[0]["messages"][0]["content"] == task.data.system_prompt
    assert server.requests[0]["messages"][1]["content"] == task.data.prompt


def test_hedge_routes_nowhere_or_to_the_fallback(served, capsys):
    hedge = "<route>gpt-5.5</route> or maybe <route>nemotron-3-super</route>"
    with stub_server(lambda body, n: Answer(hedge)) as server:
        rc, out, _ = _route(capsys, server.base_url, *_instances(served[:1]))
        assert rc == 0 and out[0]["model"] is None and "unparseable" in out[0]["reason"]
        assert not out[0]["fallback"] and "reply" not in out[0]
        rc, out, _ = _route(
            capsys, server.base_url, *_instances(served[:1]), "--fallback", "nemotron-3-super"
        )
        assert rc == 0 and out[0]["model"] == "nemotron-3-super" and out[0]["fallback"] is True
        assert "unparseable" in out[0]["reason"]


def test_reply_over_the_parsers_limit_is_no_route(served, capsys):
    long = "x" * MAX_REPLY_CHARS + "<route>gpt-5.5</route>"
    with stub_server(lambda body, n: Answer(long)) as server:
        rc, out, _ = _route(capsys, server.base_url, *_instances(served[:1]))
    assert rc == 0 and out[0]["model"] is None and "limit" in out[0]["reason"]


def test_http_500_is_retried_then_succeeds(served, capsys):
    with stub_server(lambda body, n: Answer(status=500) if n == 0 else Answer(VALID)) as server:
        rc, out, _ = _route(capsys, server.base_url, *_instances(served[:1]))
    assert rc == 0 and out[0]["model"] == "gpt-5.5" and len(server.requests) == 2


def test_failures_after_retries_are_one_line_exit_1_nothing_written(served, tmp_path, capsys):
    out_file = tmp_path / "routes.jsonl"
    common = ["-o", str(out_file), "--max-retries", "1", *_instances(served[:1])]
    with stub_server(lambda body, n: Answer(VALID, delay_s=3.0)) as server:
        rc, _, err = _route(capsys, server.base_url, *common, "--timeout", "0.5")
        assert len(server.requests) == 2  # the first try and one retry
    assert rc == 1 and "timed out after 0.5s" in err and len(err.strip().splitlines()) == 1
    with stub_server(lambda body, n: Answer(status=503)) as server:
        rc, _, err = _route(capsys, server.base_url, *common)
    assert rc == 1 and "HTTP 503" in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    rc, _, err = _route(capsys, "http://127.0.0.1:9/v1", *common)
    assert rc == 1 and "cannot connect" in err
    assert not out_file.exists()


def test_python_api_same_code(served):
    task = TaskInput(instance_id="new-1", repo="django/django", problem_statement="Admin crashes on save.")
    with stub_server(lambda body, n: Answer("<route>claude-opus-4.7</route>")) as server:
        router = load_router(EndpointSpec(endpoint=server.base_url, model="m", max_retries=0))
        assert router.scores([task]) is None and router.pool == served[0].data.valid_ids
        d = router.route(task)
        assert (d.model, d.reply, d.reason) == ("claude-opus-4.7", "<route>claude-opus-4.7</route>", None)
        assert (
            server.requests[0]["messages"][1]["content"]
            == "Repository: django/django\n\nIssue:\nAdmin crashes on save."
        )
        assert [x.model for x in router.route_many(list(bundled_tasks().values())[:6])] == [
            "claude-opus-4.7"
        ] * 6
    with pytest.raises(EndpointError):
        load_router(EndpointSpec(endpoint="http://127.0.0.1:9/v1", model="m", max_retries=0)).route(task)


def test_bad_endpoint_options_exit_2(tmp_path, capsys):
    capsys.readouterr()
    assert main(["route", "--endpoint", "http://127.0.0.1:9/v1", "--instance", "astropy__astropy-12907"]) == 2
    assert "needs model" in capsys.readouterr().err
    assert (
        main(
            [
                "route",
                "--endpoint",
                "http://x/v1",
                "--model",
                "m",
                "--fallback",
                "nope",
                "--instance",
                "astropy__astropy-12907",
            ]
        )
        == 2
    )
    assert "not a pool model" in capsys.readouterr().err
    assert (
        main(["route", "--checkpoint", str(Path(tmp_path / "c.json")), "--model", "m", "--instance", "x"])
        == 2
    )
    assert "only with endpoint" in capsys.readouterr().err
