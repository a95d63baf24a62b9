"""`router-train launch PRESET --prime-rl DIR` against a minimal fake prime-rl checkout: a uv project
named `prime-rl` whose `rl` script records its arguments and the config it received, and loads the
env from that config the way prime-rl resolves a taskset id (verifiers' loader)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import tomllib
from datetime import UTC, datetime
from pathlib import Path

import pytest

from router_train.cli import main
from router_train.commands.launch import exit_status
from router_train.hosted import self_hosted
from router_train.hosted.config_files import load_config, render_multi_node, shipped_path
from router_train.hosted.errors import BadLaunchInput, ToolNotFound, TrainRejected
from router_train.hosted.launch import sources_from_imports
from router_train.hosted.presets import ENV_ID
from router_train.hosted.runs import load_record

uv = pytest.importorskip("uv")

SOURCES, _ = sources_from_imports(version="0.0.0")  # the importable sources, as `launch --from-source`
FIRST_PARTY = ("router_frontier_rl", "router_oracle", "router_train")
STARTED = datetime(2026, 12, 1, 12, 0, 0, tzinfo=UTC)
STEM = "20261201T120000Z-smoke"

PYPROJECT = """\
[project]
name = "prime-rl"
version = "0.0.0"
requires-python = ">=3.11"
dependencies = []

[project.scripts]
rl = "prime_rl:main"

[build-system]
requires = ["uv_build>=0.9.0,<1"]
build-backend = "uv_build"
"""

FAKE_RL = textwrap.dedent(
    """
    import json, os, sys, tomllib

    def main():
        args = sys.argv[1:]
        text = open(args[1], encoding="utf-8").read() if args[:1] == ["@"] and len(args) == 2 else None
        record = {"args": args, "config": text, "cwd": os.getcwd()}
        if text is not None:
            import router_frontier_rl
            import verifiers.v1 as vf
            block = tomllib.loads(text)["orchestrator"]["train"]["source"][0]["env"]
            cfg = vf.resolve_env_config(block)
            record["env_module"] = router_frontier_rl.__file__
            record["taskset_config"] = type(cfg.taskset).__name__
            record["tasks"] = len(list(vf.load_taskset(cfg.taskset).load()))
        with open(os.environ["FAKE_RL_LOG"], "w") as f:
            json.dump(record, f)
        sys.exit(int(os.environ.get("FAKE_RL_EXIT", "0")))
    """
)


def _third_party_paths() -> list[str]:
    keep = []
    for entry in sys.path:
        p = Path(entry or ".").resolve()
        if p.is_dir() and not any((p / pkg).exists() for pkg in FIRST_PARTY):
            keep.append(str(p))
    return keep


@pytest.fixture
def checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake prime-rl checkout whose .venv sees this interpreter's third-party packages (a .pth; the
    real one has verifiers, pydantic, numpy from prime-rl's lock), and uv offline on PATH."""
    root = tmp_path / "prime-rl"
    (root / "src" / "prime_rl").mkdir(parents=True)
    (root / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    (root / "src" / "prime_rl" / "__init__.py").write_text(FAKE_RL, encoding="utf-8")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "uv").symlink_to(uv.find_uv_bin())
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}/usr/bin{os.pathsep}/bin")
    monkeypatch.setenv("UV_OFFLINE", "1")
    monkeypatch.setenv("UV_NO_CONFIG", "1")
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "uv-cache"))
    monkeypatch.setenv("UV_PYTHON", sys.executable)
    monkeypatch.setenv("FAKE_RL_LOG", str(tmp_path / "rl-call.json"))
    monkeypatch.delenv("PYTHONPATH", raising=False)  # nothing of the repo leaks into prime-rl's env
    subprocess.run([str(bindir / "uv"), "venv", "--quiet", str(root / ".venv")], check=True, cwd=root)
    (site,) = (root / ".venv" / "lib").glob("python3*/site-packages")
    (site / "_third_party.pth").write_text("\n".join(_third_party_paths()) + "\n", encoding="utf-8")
    return root


def _run(tmp_path: Path, checkout: Path, preset: str = "smoke", **kw: object) -> int:
    args: dict[str, object] = {
        "stage_dir": tmp_path / "stage" / ENV_ID,
        "runs_dir": tmp_path / "runs",
        "sources": SOURCES,
        "version": "0.1.0",
        "now": lambda: STARTED,
        "timeout": 300.0,
    }
    return exit_status("launch", lambda: self_hosted.launch_self_hosted(preset, checkout, **(args | kw)))  # type: ignore[arg-type]


@pytest.mark.e2e
def test_self_hosted_runs_rl_with_the_env_installed(
    checkout: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = _run(tmp_path, checkout)
    out, err = capsys.readouterr()
    assert code == 0, err + out[-3000:]
    config_file = (tmp_path / "runs" / f"{STEM}.toml").resolve()
    call = json.loads((tmp_path / "rl-call.json").read_text(encoding="utf-8"))
    assert call["args"] == ["@", str(config_file)]
    assert Path(call["cwd"]).resolve() == checkout.resolve()
    # rl got the shipped config, taskset id un-prefixed, and found the env installed in prime-rl's .venv
    sent = tomllib.loads(call["config"])
    assert sent["orchestrator"]["train"]["source"][0]["env"]["taskset"]["id"] == ENV_ID
    assert load_config(config_file) == load_config(shipped_path("smoke"))
    assert call["env_module"].startswith(str((checkout / ".venv").resolve()))
    assert call["taskset_config"] == "RouterConfig" and call["tasks"] > 100
    record = load_record(tmp_path / "runs" / f"{STEM}.json")
    assert record.status == "launched" and record.submitted_config == str(config_file)
    assert [c.argv[1:3] for c in record.commands] == [
        ["sync"],
        ["pip", "install"],
        ["run", "--no-sync"],
        ["run", "rl"],
    ]


def test_dry_run_prints_the_plan_and_runs_nothing(
    checkout: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(tmp_path, checkout, dry_run=True) == 0
    out = capsys.readouterr().out
    assert "$ uv run rl @ " in out and "uv pip install --python .venv/bin/python --no-deps" in out
    assert out.rstrip().endswith("# dry run: a launch would exit 0")
    assert not (tmp_path / "runs").exists() and not (tmp_path / "rl-call.json").exists()


@pytest.mark.e2e
def test_rl_failing_exits_8_with_a_record(
    checkout: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("FAKE_RL_EXIT", "3")
    assert _run(tmp_path, checkout) == TrainRejected.exit_code
    assert "exited 3" in capsys.readouterr().err
    assert load_record(tmp_path / "runs" / f"{STEM}.json").status == "train_failed"


def test_not_a_checkout_and_no_uv(
    checkout: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    other = tmp_path / "not-prime-rl"
    other.mkdir()
    (other / "pyproject.toml").write_text('[project]\nname = "something"\n', encoding="utf-8")
    for directory in (other, tmp_path / "missing"):
        for dry in (True, False):
            assert _run(tmp_path, directory, dry_run=dry) == BadLaunchInput.exit_code
            err = capsys.readouterr().err
            assert "not a prime-rl checkout" in err or "not a directory" in err
    assert not (tmp_path / "runs").exists() and not (tmp_path / "stage").exists()

    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setattr(self_hosted, "find_uv", lambda: None)
    assert _run(tmp_path, checkout) == ToolNotFound.exit_code
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "`uv` is not on PATH" in line
    assert not (tmp_path / "runs").exists()


def test_nodes_that_do_not_fit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["config", "full", "--nodes", "1"]) == 2
    assert "--nodes 1" in capsys.readouterr().err
    assert main(["config", "smoke", "--nodes", "2"]) == 2
    assert "preset smoke uses 2 GPUs" in capsys.readouterr().err
    assert main(["launch", "full", "--nodes", "2", "--dry-run"]) == 2
    assert "--nodes needs --prime-rl" in capsys.readouterr().err


def test_multi_node_rendering() -> None:
    text = render_multi_node("full", 3)
    data = tomllib.loads(text)
    assert data["deployment"] == {
        "type": "multi_node",
        "gpus_per_node": 8,
        "num_train_nodes": 1,
        "num_infer_nodes": 2,
    }
    assert data["slurm"] == {"job_name": "router-frontier-rl-full"}
    single = tomllib.loads(shipped_path("full").read_text(encoding="utf-8"))
    assert {k: v for k, v in data.items() if k not in ("deployment", "slurm")} == {
        k: v for k, v in single.items() if k != "deployment"
    }


def test_cli_dry_run_many_nodes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "prime-rl"
    root.mkdir()
    (root / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    argv = ["launch", "full", "--prime-rl", str(root), "--nodes", "2", "--dry-run", "--from-source"]
    argv += ["--version", "0.1.0", "--runs-dir", str(tmp_path / "runs")]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "multi-node: 2 nodes (SLURM)" in out and 'type = "multi_node"' in out
    assert "\n$ uv run rl @ " in out and out.rstrip().endswith("# dry run: a launch would exit 0")
    assert not (tmp_path / "runs").exists()
