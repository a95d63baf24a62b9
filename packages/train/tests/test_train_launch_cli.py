"""`router-train launch` against a fake `prime` on PATH that records its arguments."""

from __future__ import annotations

import json
import sys
import textwrap
from datetime import UTC, datetime
from pathlib import Path

import pytest
from installed_prime import no_installed_prime  # noqa: F401  (autouse: tests see only their fake prime)

from router_train.cli import main
from router_train.commands.launch import launch_status
from router_train.hosted import prime_ready
from router_train.hosted.config_files import load_config, render_preset, shipped_path
from router_train.hosted.errors import BadLaunchInput, NoRunId, NotLoggedIn, ToolNotFound
from router_train.hosted.launch import sources_from_imports
from router_train.hosted.prime_tool import parse_pushed_slug, parse_run_id
from router_train.hosted.runs import load_record

EXIT_BAD_INPUT = BadLaunchInput.exit_code
EXIT_NO_PRIME = ToolNotFound.exit_code
EXIT_NO_RUN_ID = NoRunId.exit_code
EXIT_NOT_LOGGED_IN = NotLoggedIn.exit_code
RUN_ID = "cmi8x2k4p0007l3ab9c2d1efg"
SOURCES, _ = sources_from_imports(version="0.0.0")  # the importable sources, as `launch --from-source`
STARTED = datetime(2026, 11, 29, 19, 30, 0, tzinfo=UTC)
STEM = "20261129T193000Z-smoke"

# Output lines modelled on prime 0.18.0 (prime_cli/commands/{config,env,rl}.py).
FAKE_PRIME = textwrap.dedent(
    """
    import json, os, sys
    args = sys.argv[1:]
    with open(os.environ["FAKE_PRIME_LOG"], "a") as f:
        f.write(json.dumps(args) + "\\n")
    mode = os.environ.get("FAKE_PRIME_MODE", "ok")
    if args[:2] == ["config", "view"]:
        key = "Not set" if mode == "logged_out" else "pit_ab...wxyz"
        print("                    Prime CLI Configuration")
        print("│ Current Environment       │ production                       │")
        print(f"│ API Key                   │ {key:<32} │")
        print("│ Team                      │ Personal Account                 │")
        sys.exit(0)
    if args == ["whoami"]:
        print("│ User ID  │ user_123 │")
        sys.exit(0)
    if args[:2] == ["env", "push"]:
        stage = args[args.index("-p") + 1]
        assert os.path.isfile(os.path.join(stage, "pyproject.toml")), stage
        print("Environment name: router-frontier-rl")
        print("Building wheel distribution...")
        if mode == "push_fails":
            print("Build failed!")
            sys.exit(1)
        print("✓ Built router_frontier_rl-0.1.0-py3-none-any.whl (412,345 bytes)")
        print("✓ Successfully pushed alice/router-frontier-rl")
        sys.exit(0)
    if args[:1] == ["train"]:
        if mode == "train_fails":
            print("Error: Config validation failed:", file=sys.stderr)
            sys.exit(7)
        print("✓ Run config validation succeeded")
        if mode == "no_run_id":
            sys.exit(0)
        print("Dispatched hosted run RUN_ID")
        print()
        print("Monitor run at:")
        print("  https://app.primeintellect.ai/dashboard/training/RUN_ID")
        sys.exit(0)
    sys.exit(64)
    """
).replace("RUN_ID", RUN_ID)


@pytest.fixture
def fake_prime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Puts a fake `prime` first on PATH; returns the log of its calls (one JSON argv per line)."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    script = tmp_path / "fake_prime.py"
    script.write_text(FAKE_PRIME, encoding="utf-8")
    prime = bindir / "prime"
    # A shell wrapper, not a `#!python` line: interpreter paths in sandboxes can exceed the shebang limit.
    prime.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{script}" "$@"\n', encoding="utf-8")
    prime.chmod(0o755)
    log = tmp_path / "prime-calls.jsonl"
    monkeypatch.setenv("PATH", str(bindir))
    monkeypatch.setenv("FAKE_PRIME_LOG", str(log))
    monkeypatch.setenv("FAKE_PRIME_MODE", "ok")
    return log


def _calls(log: Path) -> list[list[str]]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


def _launch(tmp_path: Path, **kw: object) -> int:
    defaults: dict[str, object] = {
        "stage_dir": tmp_path / "stage",
        "runs_dir": tmp_path / "runs",
        "dist_dir": tmp_path / "dist",
        "sources": SOURCES,
        "version": "0.1.0",
        "now": lambda: STARTED,
    }
    return launch_status("smoke", **(defaults | kw))


def test_successful_launch_records_the_run_id(
    fake_prime: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _launch(tmp_path) == 0
    out = capsys.readouterr().out
    assert f"Dispatched hosted run {RUN_ID}" in out  # prime's output is streamed through
    assert f"run id: {RUN_ID}" in out

    calls = _calls(fake_prime)
    submitted = tmp_path / "runs" / f"{STEM}.toml"
    assert calls == [
        ["config", "view"],
        ["whoami"],
        ["env", "push", "-p", str(tmp_path / "stage")],
        ["train", str(submitted), "-y"],
    ]
    # The submitted config is the shipped one with the pushed hub id.
    config = load_config(submitted)
    assert config.orchestrator.train.source[0].env.taskset.id == "alice/router-frontier-rl"
    assert config.with_taskset_id("alice/router-frontier-rl", "router-frontier-rl") == load_config(
        shipped_path("smoke")
    )

    record = load_record(tmp_path / "runs" / f"{STEM}.json")
    assert (record.status, record.run_id, record.preset) == ("launched", RUN_ID, "smoke")
    assert record.dashboard_url == f"https://app.primeintellect.ai/dashboard/training/{RUN_ID}"
    assert record.env_id == "alice/router-frontier-rl"
    assert record.env_version == "0.1.0"
    assert record.created_at == "2026-11-29T19:30:00+00:00"
    assert [c.returncode for c in record.commands] == [0, 0]
    assert {s.distribution for s in record.sources} == {"router-frontier-rl", "router-oracle"}
    assert (tmp_path / "stage" / "router_oracle" / "__init__.py").is_file()


def test_dry_run_prints_everything_and_runs_nothing(
    fake_prime: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _launch(tmp_path, dry_run=True) == 0
    out = capsys.readouterr().out
    assert _calls(fake_prime) == []
    assert not (tmp_path / "stage").exists() and not (tmp_path / "runs").exists()
    assert f"$ prime env push -p {tmp_path / 'stage'}" in out
    assert f"$ prime train {tmp_path / 'runs' / STEM}.toml -y" in out
    assert str(tmp_path / "runs" / f"{STEM}.json") in out
    body = render_preset("smoke").split("\n\n", 1)[1]  # the config, without its comment header
    assert body in out


def test_dry_run_without_prime_or_builds_still_shows_the_plan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    code = launch_status("full", dry_run=True, dist_dir=tmp_path / "dist", runs_dir=tmp_path / "runs")
    out = capsys.readouterr().out
    assert code == EXIT_NO_PRIME  # what the launch would exit with: it looks for prime first
    assert f"a launch would exit {EXIT_NO_PRIME}" in out
    assert f"a launch would exit {EXIT_BAD_INPUT}" in out and "pants package" in out
    assert 'name = "Qwen/Qwen3.6-35B-A3B"' in out


def test_agentic_dry_run_shows_the_sandbox_plan(
    fake_prime: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["launch", "agentic-smoke", "--dry-run", "--dist-dir", str(tmp_path / "none")])
    out = capsys.readouterr().out
    # No wheels built: the plan is shown and the dry run exits as the launch would (bad input).
    assert code == EXIT_BAD_INPUT and _calls(fake_prime) == []
    assert (
        "# agentic source router-frontier-rl: up to 6 turns of verifiers' bash agent (edit tool off)" in out
    )
    assert "swebench/sweb.eval.x86_64.django_1776_django-11099:latest" in out
    assert render_preset("agentic-smoke").split("\n\n", 1)[1] in out
    assert "repo_access = true" in out and 'type = "prime"' in out


def test_missing_prime_says_how_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    assert _launch(tmp_path) == EXIT_NO_PRIME
    assert "pip install prime" in capsys.readouterr().err
    assert not (tmp_path / "stage").exists()
    ready, why = prime_ready()
    assert not ready and "not on PATH" in why


def test_not_logged_in_says_how_to_log_in(
    fake_prime: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("FAKE_PRIME_MODE", "logged_out")
    assert _launch(tmp_path) == EXIT_NOT_LOGGED_IN
    assert "prime login" in capsys.readouterr().err
    assert _calls(fake_prime) == [["config", "view"]]
    ready, why = prime_ready()
    assert not ready and "prime login" in why


def test_prime_ready_when_logged_in(fake_prime: Path) -> None:
    ready, why = prime_ready()
    assert ready, why


@pytest.mark.parametrize(
    ("mode", "code", "status", "calls"),
    [("push_fails", 7, "push_failed", 3), ("train_fails", 8, "train_failed", 4)],
)
def test_failing_prime_exits_with_the_failed_steps_status(
    fake_prime: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    mode: str,
    code: int,
    status: str,
    calls: int,
) -> None:
    monkeypatch.setenv("FAKE_PRIME_MODE", mode)
    assert _launch(tmp_path) == code
    assert "failed" in capsys.readouterr().err
    assert len(_calls(fake_prime)) == calls
    record = load_record(tmp_path / "runs" / f"{STEM}.json")
    assert (record.status, record.run_id) == (status, None)
    assert record.commands[-1].returncode == {7: 1, 8: 7}[code]  # prime's own status, recorded


def test_no_run_id_in_output_is_its_own_exit_status(
    fake_prime: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_PRIME_MODE", "no_run_id")
    assert _launch(tmp_path) == EXIT_NO_RUN_ID
    assert load_record(tmp_path / "runs" / f"{STEM}.json").status == "no_run_id"


def test_bad_config_exits_2_before_running_prime(
    fake_prime: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("max_steps = 3\n", encoding="utf-8")
    assert _launch(tmp_path, config_path=bad) == EXIT_BAD_INPUT
    assert "bad.toml" in capsys.readouterr().err
    assert _calls(fake_prime) == []


def test_missing_build_exits_2(fake_prime: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = launch_status(
        "smoke", dist_dir=tmp_path / "dist", stage_dir=tmp_path / "s", runs_dir=tmp_path / "r"
    )
    assert code == EXIT_BAD_INPUT
    assert "pants package" in capsys.readouterr().err


def test_cli_launch_uses_dist_wheels_and_documents_exit_codes(
    fake_prime: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main(["launch", "--help"])
    assert "4 `prime` not logged in" in capsys.readouterr().out
    code = main(["launch", "smoke", "--dry-run", "--dist-dir", str(tmp_path / "none")])
    assert code == EXIT_BAD_INPUT  # no env build: the launch would stop there with 2
    assert _calls(fake_prime) == []


def test_cli_dry_run_from_source(fake_prime: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["launch", "full", "--dry-run", "--from-source", "--version", "0.1.0"]) == 0
    out = capsys.readouterr().out
    assert "source root of router-frontier-rl" in out and "stage router-frontier-rl 0.1.0" in out
    assert _calls(fake_prime) == []


def test_output_parsers() -> None:
    assert parse_pushed_slug(["x", "✓ Successfully pushed team-a/router-frontier-rl"]) == (
        "team-a/router-frontier-rl"
    )
    assert parse_pushed_slug(["Build failed!"]) is None
    url = "https://app.primeintellect.ai/dashboard/training/abc123"
    assert parse_run_id(["Monitor run at:", f"  {url}"]) == ("abc123", url)
    assert parse_run_id(["nothing"]) == (None, None)


# --- --dry-run exits with the launch's status; problems found before anything is pushed ----------


@pytest.mark.parametrize(
    ("problem", "message"),
    [
        ("stage_file", "the staging directory is a file, not a directory"),
        ("runs_file", "the runs directory is a file, not a directory"),
        ("runs_under_file", "is under"),
        ("version", "version 'not a version!' is not a PEP 440 version"),
    ],
)
def test_dry_run_and_launch_agree_on_bad_dirs_and_versions(
    fake_prime: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], problem: str, message: str
) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("a file")
    cases: dict[str, dict[str, object]] = {
        "stage_file": {"stage_dir": blocker},
        "runs_file": {"runs_dir": blocker},
        "runs_under_file": {"runs_dir": blocker / "runs"},
        "version": {"version": "not a version!"},
    }
    kw = cases[problem]
    assert _launch(tmp_path, dry_run=True, **kw) == EXIT_BAD_INPUT
    out = capsys.readouterr().out
    assert f"a launch would exit {EXIT_BAD_INPUT}: " in out and message in out
    assert out.rstrip().endswith(f"# dry run: a launch would exit {EXIT_BAD_INPUT}")
    assert _calls(fake_prime) == []
    # the launch itself stops with the same status, after the login check and before any push
    assert _launch(tmp_path, **kw) == EXIT_BAD_INPUT
    assert message in capsys.readouterr().err
    assert _calls(fake_prime) == [["config", "view"], ["whoami"]]
    assert blocker.read_text() == "a file"


def test_dry_run_exit_status_is_the_launchs(
    fake_prime: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _launch(tmp_path, dry_run=True) == 0
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    assert _launch(tmp_path, dry_run=True) == EXIT_NO_PRIME == _launch(tmp_path)


def test_cli_dry_run_refuses_an_invalid_version(fake_prime: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["launch", "smoke", "--dry-run", "--from-source", "--version", "not a version!"])
    assert code == EXIT_BAD_INPUT
    assert "version 'not a version!' is not a PEP 440 version" in capsys.readouterr().out
    assert _calls(fake_prime) == []
