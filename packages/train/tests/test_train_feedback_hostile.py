"""The outcome channel under attack and after a crash (issue 44): hostile bodies, absurd numbers, outcome
sources and corrections, a claimed task id, torn and damaged logs, mixed checkpoints, refusals that
come before anything is written. serve runs against stub upstreams on 127.0.0.1 with a real `router-train
local` checkpoint; `router-train feedback` reads logs written as serve writes them (`serve.records`)."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
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
    bundled_issues,
    log_lines,
    native_router,
    proxy_app,
    running_upstreams,
    serving,
    trained_checkpoint,
    write_config,
)

from router_train.cli import main
from router_train.serve import TASK_HEADER, TASK_ID_HEADER
from router_train.serve.json_body import MAX_JSON_DEPTH
from router_train.serve.records import DecisionRecord, OutcomeRecord, record_line
from router_train.serve.store import DecisionLog
from router_train.serve.store_open import open_store

TOKENS = {
    "harness": ("HOSTILE_HARNESS_TOKEN", "tok-harness-1"),
    "review": ("HOSTILE_REVIEW_TOKEN", "tok-rev-2"),
}


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return trained_checkpoint(tmp_path_factory.getbasetemp())


@pytest.fixture(scope="module")
def stubs(checkpoint: Path) -> Iterator[dict[str, tuple[StubUpstream, ServerThread]]]:
    with running_upstreams(native_router(checkpoint).pool) as running:
        yield running


@pytest.fixture(autouse=True)
def _tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    for env, token in TOKENS.values():
        monkeypatch.setenv(env, token)


def _config(tmp_path: Path, checkpoint: Path, stubs: Any, **feedback: Any) -> Path:
    cfg = write_config(tmp_path / "serve.toml", checkpoint, stubs)
    doc = tomllib.loads(cfg.read_text(encoding="utf-8"))
    doc["feedback"] = {
        "tokens": {name: env for name, (env, _) in TOKENS.items()},
        "correctors": ["review"],
        **feedback,
    }
    cfg.write_text(tomli_w.dumps(doc), encoding="utf-8")
    return cfg


def _post(url: str, path: str, raw: bytes, source: str | None = "harness", **headers: str) -> httpx.Response:
    auth = {"authorization": f"Bearer {TOKENS[source][1]}"} if source else {}
    return httpx.post(
        f"{url}{path}",
        content=raw,
        headers={"content-type": "application/json", **auth, **headers},
        timeout=30,
    )


def _chat(url: str, text: str, **headers: str) -> httpx.Response:
    body = {"model": "router", "messages": [{"role": "user", "content": text}]}
    return _post(url, "/v1/chat/completions", json.dumps(body).encode(), None, **headers)


def _refused(r: httpx.Response, status: int, *words: str) -> None:
    assert r.status_code == status, r.text
    message = r.json()["error"]["message"]
    assert "\n" not in message and "Traceback" not in message
    for w in words:
        assert w in message, message


def test_hostile_bodies_corrections_and_claimed_ids(
    tmp_path: Path, checkpoint: Path, stubs: Any, capfd: pytest.CaptureFixture[str]
) -> None:
    cfg = _config(tmp_path, checkpoint, stubs, max_cost=50.0, task_text="keep")
    ((_, _, a),) = bundled_issues()[:1]
    deep = b"[" * 50_000 + b"]" * 50_000
    just_over = json.dumps(
        {"task": "x", "resolved": True, "n": json.loads("[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH)}
    )
    with serving(proxy_app(cfg)) as server:
        url = server.url
        # class 1: a body any route parses is bounded, a one-line 400, never a traceback
        for path in ("/v1/feedback", "/v1/chat/completions"):
            _refused(_post(url, path, deep), 400, "nests deeper than")
            _refused(_post(url, path, b'{"a": ' * 3000 + b"1" + b"}" * 3000), 400, "nests deeper than")
        _refused(_post(url, "/v1/feedback", just_over.encode()), 400, "nests deeper than")
        surrogate = b'{"model": "router", "messages": [{"role": "user", "content": "fix \\ud800 bug"}]}'
        _refused(_post(url, "/v1/chat/completions", surrogate, None), 400, "lone UTF-16 surrogate")
        paired = b'{"model": "router", "messages": [{"role": "user", "content": "fix \\ud83d\\ude00 bug"}]}'
        assert _post(url, "/v1/chat/completions", paired, None).status_code == 200

        # item 9: a client without a token claiming another task's id gets a task of its own
        real = _chat(url, a, **{TASK_ID_HEADER: "job-a"})
        claim = _chat(url, "ignore the issue; say done", **{TASK_ID_HEADER: "job-a"})
        assert real.status_code == claim.status_code == 200
        assert real.headers[TASK_HEADER] != claim.headers[TASK_HEADER]
        key = real.headers[TASK_HEADER]
        _refused(
            _post(url, "/v1/feedback", json.dumps({"task": "job-a", "resolved": True}).encode()),
            409,
            "2 tasks",
        )

        # class 2: a cost no task can have is refused, naming the field and the bound
        absurd = {"task": key, "resolved": True, "cost": 1e308}
        _refused(_post(url, "/v1/feedback", json.dumps(absurd).encode()), 400, "cost", "max_cost (50 USD")
        _refused(_post(url, "/v1/feedback", b'{"task": "k", "resolved": true, "cost": 1e999}'), 400, "cost")

        # contract A/C: sources, idempotence, a correction only by a corrector, kept as history
        first = _post(url, "/v1/feedback", json.dumps({"task": key, "resolved": True, "cost": 1.5}).encode())
        assert (
            first.status_code == 200 and first.json()["source"] == "harness" and first.json()["revision"] == 0
        )
        assert (
            _post(
                url, "/v1/feedback", json.dumps({"task": key, "resolved": True, "cost": 1.5}).encode()
            ).json()
            == first.json()
        )
        changed = json.dumps({"task": key, "resolved": False, "cost": 1.5}).encode()
        _refused(_post(url, "/v1/feedback", changed), 409, "has an outcome already")
        fix = json.dumps({"task": key, "resolved": False, "cost": 1.5, "correction": True}).encode()
        _refused(_post(url, "/v1/feedback", fix), 403, "'harness' may not correct")
        _refused(_post(url, "/v1/feedback", fix, None), 401)
        corrected = _post(url, "/v1/feedback", fix, "review")
        assert corrected.status_code == 200, corrected.text
        assert corrected.json()["revision"] == 1 and corrected.json()["source"] == "review"
        assert _post(url, "/v1/feedback", fix, "review").json() == corrected.json()  # idempotent too
        assert httpx.get(f"{url}/health").status_code == 200
    err = capfd.readouterr().err
    assert "Traceback" not in err and "RecursionError" not in err

    store = open_store(cfg.parent / "state" / "decisions.sqlite")
    try:
        assert [(o.revision, o.resolved) for o in store.outcome_history()] == [(0, True), (1, False)]
        latest = store.outcome(key)
        assert latest is not None and latest.revision == 1 and store.outcomes() == [latest]
        decided = store.decision(key)
        assert decided is not None and decided.issue_text == a and decided.issue_sha256 is not None
    finally:
        store.close()
    outcomes = [x for x in log_lines(cfg) if x["event"] == "outcome"]
    assert [(o["revision"], o["source"]) for o in outcomes] == [(0, "harness"), (1, "review")]
    for source in ("decisions.jsonl", "decisions.sqlite"):
        out = tmp_path / f"lt-{source}.jsonl"
        assert main(["feedback", str(cfg.parent / "state" / source), "--long-table", str(out)]) == 0
        assert [json.loads(x)["resolved"] for x in out.read_text().splitlines()] == [False]  # the latest
        assert "outcome sources: review 1; 1 corrected (of 2 revisions)" in capfd.readouterr().out


def test_task_text_hash_only_keeps_no_text(tmp_path: Path, checkpoint: Path, stubs: Any) -> None:
    cfg = _config(tmp_path, checkpoint, stubs, task_text="hash")
    ((_, _, a),) = bundled_issues()[:1]
    with serving(proxy_app(cfg)) as server:
        assert _chat(server.url, a).status_code == 200
    (d,) = [x for x in log_lines(cfg) if x["event"] == "decision"]
    assert d["issue_text"] is None and len(d["issue_sha256"]) == 64 and a not in json.dumps(d)


def test_a_config_names_its_token_sources(tmp_path: Path, checkpoint: Path, stubs: Any) -> None:
    cfg = _config(tmp_path, checkpoint, stubs, correctors=["nobody"])
    assert main(["serve", str(cfg), "--port", "1"]) == 2


# --- router-train feedback on damaged, mixed and absurd logs ------------------------------------------


def _decision(
    n: int, *, model: str = "a", sha: str | None = "1" * 64, propensity: float = 0.5
) -> DecisionRecord:
    return DecisionRecord(
        instance_id=f"t{n}", model=model, router="x", time="2026-01-01T00:00:00.000Z", task=f"k{n:03d}",
        latency_ms=1.0, router_model="a", propensity=propensity, checkpoint_sha256=sha,
    )  # fmt: skip


def _outcome(n: int, *, model: str = "a", cost: float | None = 0.5, resolved: bool = True) -> OutcomeRecord:
    return OutcomeRecord(
        time="2026-01-01T00:00:01.000Z", task=f"k{n:03d}", instance_id=f"t{n}", model=model,
        resolved=resolved, cost=cost,
    )  # fmt: skip


def _log(path: Path, n: int = 30, **kw: Any) -> list[str]:
    lines = []
    for i in range(n):
        model = "a" if i % 2 else "b"
        lines += [record_line(_decision(i, model=model, **kw)), record_line(_outcome(i, model=model))]
    path.write_text("".join(lines), encoding="utf-8")
    return lines


def _one_line(capsys: pytest.CaptureFixture[str], *words: str) -> str:
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "Traceback" not in err, err
    for w in words:
        assert w in err, err
    return err


def test_one_torn_line_rule(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "decisions.jsonl"
    lines = _log(log)
    with log.open("a", encoding="utf-8") as fh:
        fh.write(lines[1][:25])  # a crash cut the final line
    assert main(["feedback", str(log)]) == 0
    notice = _one_line(capsys, "skipped 1 torn line(s)", f"(line {len(lines) + 1})")
    assert notice.startswith(f"router-train feedback: {log}: ")  # the command's prefix, as its errors
    # serve reopening the log fences the torn tail; what it writes next is readable, the fragment reported
    opened = DecisionLog(log)
    assert opened.fenced == 25
    opened.write(_decision(99))
    opened.close()
    assert main(["feedback", str(log)]) == 0
    _one_line(capsys, "skipped 1 torn line(s)", f"(line {len(lines) + 1})")
    assert DecisionLog(log).fenced == 0  # a clean tail is left alone
    # damage anywhere else is refused, naming file and line
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_text("".join([*lines[:3], lines[3][:20] + "\n", *lines[4:]]), encoding="utf-8")
    assert main(["feedback", str(damaged)]) == 2
    _one_line(capsys, "damaged.jsonl: line 4", "not valid JSON")


def test_refusals_come_before_anything_is_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "decisions.jsonl"
    _log(log)
    good = log.read_text(encoding="utf-8")
    log.write_text(good.replace('"propensity":0.5', '"propensity":0.0'), encoding="utf-8")
    out = tmp_path / "out.jsonl"
    assert main(["feedback", str(log), "--long-table", str(out)]) == 2
    _one_line(capsys, "decisions.jsonl: line 1", "propensity")
    assert not out.exists()
    log.write_text(good.replace('"propensity":0.5', '"propensity":1.5'), encoding="utf-8")
    assert main(["feedback", str(log)]) == 2
    _one_line(capsys, "decisions.jsonl: line 1", "propensity")
    # --refit with no outcome to refit on: exit 2 (after the output path was checked)
    empty = tmp_path / "empty.jsonl"
    empty.write_text(record_line(_decision(0)), encoding="utf-8")
    ckpt = tmp_path / "irt.json"
    ckpt.write_text(json.dumps({"kind": "router-train-irt"}), encoding="utf-8")
    assert main(["feedback", str(empty), "--refit", str(ckpt), "-o", str(tmp_path / "r")]) == 2
    _one_line(capsys, "empty.jsonl", "no logged outcome")
    # the output path is checked first: a directory where checkpoint.json goes, a read-only parent
    (tmp_path / "r" / "checkpoint.json").mkdir(parents=True)
    assert (
        main(["feedback", str(tmp_path / "missing.jsonl"), "--refit", str(ckpt), "-o", str(tmp_path / "r")])
        == 2
    )
    _one_line(capsys, "checkpoint.json", "is a directory")
    if os.geteuid() != 0:  # root writes anywhere
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(stat.S_IRUSR | stat.S_IXUSR)
        assert main(["feedback", str(log), "--long-table", str(ro / "x.jsonl")]) == 2
        _one_line(capsys, "x.jsonl", "not writable")
    # a kind without a refit hook: the registry's one line
    baseline = tmp_path / "baseline.json"
    baseline.write_text(json.dumps({"kind": "router-train-baseline"}), encoding="utf-8")
    _log(log)
    assert main(["feedback", str(log), "--refit", str(baseline), "-o", str(tmp_path / "b")]) == 2
    _one_line(capsys, "baseline.json", "cannot be refitted from traffic", "--refit takes: irt")
    assert not (tmp_path / "b").exists()


def test_the_long_table_of_several_checkpoints_needs_no_checkpoint_sha(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # After a hot refit the log holds two checkpoints' decisions; the export depends on neither (issue 55).
    log = tmp_path / "decisions.jsonl"
    lines = _log(log)
    other = [
        record_line(_decision(100 + i, sha="2" * 64)) + record_line(_outcome(100 + i)) for i in range(12)
    ]
    log.write_text("".join(lines + other), encoding="utf-8")
    out = tmp_path / "long.jsonl"
    assert main(["feedback", str(log), "--long-table", str(out)]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    assert f"42 tasks decided, 42 with an outcome; wrote {out}" in captured.out
    assert (
        "from 2 router checkpoints (sha256 1111111111111111, 2222222222222222): no off-policy estimates;"
        in (captured.out)
    )
    assert "off-policy estimates on" not in captured.out
    rows = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 42 and {r["task_id"] for r in rows} == {
        f"t{i}" for i in [*range(30), *range(100, 112)]
    }
    # the same table as with the checkpoint named
    named = tmp_path / "named.jsonl"
    assert main(["feedback", str(log), "--long-table", str(named), "--checkpoint-sha", "2222"]) == 0
    assert named.read_bytes() == out.read_bytes()
    # what estimates one policy still needs it, and writes nothing
    out.unlink()
    assert main(["feedback", str(log), "--long-table", str(out), "--candidate", str(log)]) == 2
    _one_line(capsys, "2 router checkpoints", "--checkpoint-sha")
    assert not out.exists()


def test_mixed_checkpoints_and_absurd_costs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "decisions.jsonl"
    lines = _log(log)
    other = [
        record_line(_decision(100 + i, sha="2" * 64)) + record_line(_outcome(100 + i)) for i in range(12)
    ]
    log.write_text("".join(lines + other), encoding="utf-8")
    assert main(["feedback", str(log)]) == 2
    _one_line(capsys, "2 router checkpoints", "--checkpoint-sha")
    assert (
        main(["feedback", str(log), "--checkpoint-sha", "2222", "--min-tried", "1", "--bootstrap", "20"]) == 0
    )
    out = capsys.readouterr().out
    assert f"decisions of router checkpoint sha256 {'2' * 64}; 30 outcome(s) of other checkpoints" in out
    assert "off-policy estimates on 12 logged outcomes" in out
    assert main(["feedback", str(log), "--checkpoint-sha", "3"]) == 2
    _one_line(capsys, "--checkpoint-sha 3", "matches none")
    # finite costs whose sums overflow: refused, naming the record; never inf or nan printed
    absurd = [
        *lines[:2],
        record_line(_decision(200, propensity=0.01)),
        record_line(_outcome(200, cost=1e307)),
    ]
    log.write_text("".join(absurd + lines[2:]), encoding="utf-8")
    assert main(["feedback", str(log), "--bootstrap", "20"]) == 2
    _one_line(capsys, "decisions.jsonl: line 4", "cost 1e+307", "overflow")
    inf = record_line(_outcome(1)).replace('"cost":0.5', '"cost":1e999')
    log.write_text("".join([lines[0], inf]), encoding="utf-8")
    assert main(["feedback", str(log)]) == 2
    _one_line(capsys, "decisions.jsonl: line 2", "cost")


def test_a_store_from_before_revisions_is_migrated(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE outcomes (task TEXT PRIMARY KEY, record TEXT NOT NULL)")
        db.execute("INSERT INTO outcomes VALUES (?, ?)", ("k000", _outcome(0).model_dump_json()))
    store = open_store(path)
    try:
        assert [(o.task, o.revision) for o in store.outcome_history()] == [("k000", 0)]
        fix = _outcome(0, resolved=False).model_copy(update={"revision": 1, "source": "review"})
        assert store.record_outcome(fix) is None
        assert store.record_outcome(fix) == fix  # the revision is taken: the stored one, nothing written
        assert store.outcome("k000") == fix
    finally:
        store.close()
