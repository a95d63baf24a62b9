"""`router-train analyze` against a scripted OpenAI-compatible server on 127.0.0.1, through the real
`openai` client: strict parsing (a malformed or out-of-scale answer is a missing feature, counted), a 500
retried, a persistent failure writing nothing, and the output read back by the `--task-features` reader."""

from __future__ import annotations

import json
import math
import threading
from pathlib import Path
from typing import Any

import pytest
from route_stub import Answer, stub_server

from router_train.analyze.rubric import RUBRIC, parse_answer
from router_train.cli import main
from router_train.task_features import ISSUE_COLUMNS, TaskFeaturesError, load_task_features

GOOD = {f.name: f.low + (i % (f.high - f.low + 1)) for i, f in enumerate(RUBRIC)}
"""A complete in-scale answer (the stub's for tasks A and D)."""

TASKS = {
    "o__r-1": "Issue A: the parser crashes on empty input.",
    "o__r-2": "Issue B: something is off.",
    "o__r-3": "Issue C: the printer drops the last line.",
    "o__r-4": "Issue D: the model saves twice.",
}


def _tasks_file(tmp_path: Path) -> Path:
    path = tmp_path / "tasks.jsonl"
    lines = [json.dumps({"instance_id": k, "repo": "o/r", "problem_statement": v}) for k, v in TASKS.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


def _partly_bad() -> str:
    answer: dict[str, Any] = dict(GOOD)
    answer["problem_clarity"] = 9  # out of its 1-5 scale
    answer["atypicality"] = "3"  # a string, not an integer
    answer["standard_pattern_available"] = True  # a boolean, not 0 or 1
    answer["side_effect_risk"] = 2.5  # not an integer
    del answer["codebase_scope"]  # absent
    return "```json\n" + json.dumps(answer) + "\n```"


class Script:
    """Per task (found by its issue text): A good, B not JSON, C partly bad, D a 500 first then good."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.d_requests = 0

    def __call__(self, body: dict[str, Any], n: int) -> Answer:
        user = body["messages"][-1]["content"]
        if "Issue B" in user:
            return Answer("I would rate this issue as fairly clear, maybe a 4.")
        if "Issue C" in user:
            return Answer(_partly_bad())
        if "Issue D" in user:
            with self.lock:
                self.d_requests += 1
                first = self.d_requests == 1
            if first:
                return Answer(status=500)
        return Answer(json.dumps(GOOD))


def test_analyze_parses_strictly_retries_and_writes_the_features_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = Script()
    out = tmp_path / "features.csv"
    with stub_server(script) as server:
        argv = [
            "analyze",
            "--tasks",
            str(_tasks_file(tmp_path)),
            "-o",
            str(out),
            "--base-url",
            server.base_url,
        ]
        argv += ["--model", "judge-1", "--concurrency", "2", "--max-retries", "2"]
        assert main(argv) == 0
        bodies = list(server.requests)
    assert script.d_requests == 2  # the 500 was retried by the client
    assert len(bodies) == 5
    body = next(b for b in bodies if "Issue A" in b["messages"][-1]["content"])
    assert body["model"] == "judge-1" and body["temperature"] == 0.0
    user = body["messages"][-1]["content"]
    assert "Repository: o/r" in user and all(f.name in user for f in RUBRIC)
    assert "o__r-1" not in user  # the judge sees the repository and the issue, nothing else

    err = capsys.readouterr().err
    assert "2 of 4 tasks with all 15 features; 1 replies not one JSON object" in err
    # B misses everything; C misses its five bad values
    assert "problem_clarity 2" in err and "codebase_scope 2" in err and "solution_hint 1" in err

    table = load_task_features(str(out))
    assert table.columns == ISSUE_COLUMNS
    assert table.matrix(["o__r-1", "o__r-4"]).tolist() == [[float(GOOD[c]) for c in ISSUE_COLUMNS]] * 2
    assert all(math.isnan(v) for v in table.values["o__r-2"])
    c_row = dict(zip(ISSUE_COLUMNS, table.values["o__r-3"], strict=True))
    bad = {
        "problem_clarity",
        "atypicality",
        "standard_pattern_available",
        "side_effect_risk",
        "codebase_scope",
    }
    assert {k for k, v in c_row.items() if math.isnan(v)} == bad
    assert all(c_row[k] == GOOD[k] for k in ISSUE_COLUMNS if k not in bad)
    with pytest.raises(TaskFeaturesError, match="task 'o__r-3' has no value for 'problem_clarity'"):
        table.matrix(["o__r-3"])  # a router refuses the task, never guesses

    again = tmp_path / "again.csv"
    with stub_server(Script()) as server:
        argv = ["analyze", "--tasks", str(_tasks_file(tmp_path)), "-o", str(again)]
        assert main([*argv, "--base-url", server.base_url, "--model", "judge-1"]) == 0
    assert again.read_bytes() == out.read_bytes()  # same answers, same bytes


def test_a_request_failing_after_its_retries_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "features.jsonl"
    with stub_server(lambda body, n: Answer(status=503)) as server:
        argv = [
            "analyze",
            "--tasks",
            str(_tasks_file(tmp_path)),
            "-o",
            str(out),
            "--base-url",
            server.base_url,
        ]
        assert main([*argv, "--model", "m", "--max-retries", "1", "--concurrency", "1"]) == 1
        assert len(server.requests) == 2  # one request and its one retry, then the pass stops
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "HTTP 503 after 1 retries" in err and "o__r-1" in err, err
    assert not out.exists()


def test_bad_options_are_one_line_before_any_request(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NO_SUCH_KEY_VAR", raising=False)
    tasks = str(_tasks_file(tmp_path))
    base = ["analyze", "--tasks", tasks, "--base-url", "http://127.0.0.1:9/v1", "--model", "m"]
    cases = [
        ([*base, "-o", str(tmp_path / "f.txt")], "expected a .csv or .jsonl file"),
        ([*base, "-o", str(tmp_path / "f.csv"), "--api-key-env", "NO_SUCH_KEY_VAR"], "is not set"),
        ([*base, "-o", str(tmp_path / "f.csv"), "--concurrency", "65"], "at most 64"),
        (
            [*base, "-o", tasks.replace(".jsonl", ".csv"), "--tasks", str(tmp_path / "none.jsonl")],
            "none.jsonl",
        ),
    ]
    for argv, message in cases:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err.strip()
        assert err.count("\n") == 0 and message in err, err
    assert not list(tmp_path.glob("f.*"))


@pytest.mark.parametrize(
    ("reply", "parsed"),
    [
        ("", False),
        ("[1, 2]", False),
        ('{"solution_hint": 3}', True),
        ('```\n{"solution_hint": 4}\n```', True),  # 4 is out of 0-3
        ('{"solution_hint": -0}', True),
    ],
)
def test_parse_answer_is_strict(reply: str, parsed: bool) -> None:
    values, ok = parse_answer(reply)
    assert ok == parsed and len(values) == len(RUBRIC)
    expected = {'{"solution_hint": 3}': 3, '{"solution_hint": -0}': 0}.get(reply)
    assert values[0] == expected and values[1:] == [None] * (len(RUBRIC) - 1)
