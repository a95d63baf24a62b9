"""`router-train launch` through the real, locked `prime` 0.18.0 CLI against a strict Prime API double.

prime runs as a subprocess with HOME set to a temporary directory whose ~/.prime/config.json holds
the API key, `base_url` (prime's own setting, prime_cli/core/config.py) pointing at the double on
127.0.0.1, and `frontend_url` for the dashboard links. `prime env push` builds the staged package with
`uv build --wheel` (offline: the uv_build backend is built into uv) and uploads it to the double.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import tomllib
import venv
import zipfile
from datetime import UTC, datetime
from pathlib import Path

import pytest
from installed_prime import no_installed_prime  # noqa: F401  (autouse: only the prime put on PATH runs)
from prime_api_double import API_KEY, OWNER, RUN_ID, PrimeApiDouble, prime_api_double

from router_train.commands.launch import launch_status
from router_train.hosted.config_files import load_config, shipped_path
from router_train.hosted.errors import ApiUnreachable, NotLoggedIn, PushRejected, TrainRejected
from router_train.hosted.launch import sources_from_imports
from router_train.hosted.presets import ENV_ID
from router_train.hosted.runs import load_record

pytestmark = pytest.mark.e2e  # the real prime CLI in subprocesses

uv = pytest.importorskip("uv")

SOURCES, _ = sources_from_imports(version="0.0.0")  # the importable sources, as `launch --from-source`
FIRST_PARTY = ("router_frontier_rl", "router_oracle", "router_train")
STARTED = datetime(2026, 12, 1, 12, 0, 0, tzinfo=UTC)
HUB_ID = f"{OWNER}/{ENV_ID}"


def _prime_home(tmp_path: Path, base_url: str, *, api_key: str | None = API_KEY) -> Path:
    home = tmp_path / "home"
    (home / ".prime").mkdir(parents=True, exist_ok=True)
    config = {"base_url": base_url, "frontend_url": base_url, "current_environment": "production"}
    if api_key:
        config["api_key"] = api_key
    (home / ".prime" / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return home


@pytest.fixture
def real_prime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """PATH holds only the locked prime (run by this interpreter) and uv; returns that bin dir."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    prime = bindir / "prime"
    # prime's console script, written out: the sandbox's interpreter path can exceed the shebang limit.
    prime.write_text(
        f'#!/bin/sh\nexec "{sys.executable}" -c "from prime_cli.main import run; run()" "$@"\n',
        encoding="utf-8",
    )
    prime.chmod(0o755)
    (bindir / "uv").symlink_to(uv.find_uv_bin())
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}/usr/bin{os.pathsep}/bin")
    for var in ("PRIME_API_KEY", "PRIME_API_BASE_URL", "PRIME_BASE_URL", "PRIME_TEAM_ID", "PRIME_CONTEXT"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.delenv("PRIME_FRONTEND_URL", raising=False)
    # `uv build` inside `prime env push`: offline, no user config, a private cache.
    monkeypatch.setenv("UV_OFFLINE", "1")
    monkeypatch.setenv("UV_NO_CONFIG", "1")
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "uv-cache"))
    monkeypatch.setenv("UV_PYTHON", sys.executable)
    return bindir


def _launch(tmp_path: Path, preset: str, home: Path, monkeypatch: pytest.MonkeyPatch, **kw: object) -> int:
    monkeypatch.setenv("HOME", str(home))
    args: dict[str, object] = {
        "stage_dir": tmp_path / "stage" / ENV_ID,
        "runs_dir": tmp_path / "runs",
        "sources": SOURCES,
        "version": "0.1.0",
        "now": lambda: STARTED,
        "timeout": 120.0,
    }
    return launch_status(preset, **(args | kw))  # type: ignore[arg-type]


PROBE = r"""
import asyncio, json, sys, tomllib
import router_frontier_rl as env, router_oracle
import verifiers.v1 as vf
from router_frontier_rl.offline import score_reply

prefix = sys.argv[1]
for module in (env, router_oracle):
    assert module.__file__.startswith(prefix), module.__file__
block = tomllib.load(open(sys.argv[2], "rb"))["orchestrator"]["train"]["source"][0]["env"]
cfg = vf.resolve_env_config(block)
task = next(iter(vf.load_taskset(cfg.taskset).load()))
trace = asyncio.run(score_reply(task, env.format_route(task.data.record.oracle)))
print(json.dumps({"config": type(cfg.taskset).__name__, "reward": trace.reward,
                  "repo_access": bool(getattr(cfg.taskset, "repo_access", False))}))
"""


def _third_party_paths() -> list[str]:
    keep = []
    for entry in sys.path:
        p = Path(entry or ".").resolve()
        if p.is_dir() and not any((p / pkg).exists() for pkg in FIRST_PARTY):
            keep.append(str(p))
    return keep


def _install_and_score(wheel: Path, submitted: Path, tmp_path: Path) -> dict[str, object]:
    """Install the uploaded wheel alone into a fresh venv (offline, no deps: the third-party packages
    come from this interpreter's site-packages via a .pth, no repo source), load the env from the
    submitted config's env block and score the oracle's reply."""
    target = tmp_path / "fresh-venv"
    venv.EnvBuilder(with_pip=False, symlinks=True).create(target)
    python = target / "bin" / "python"
    env = dict(os.environ, UV_CACHE_DIR=str(tmp_path / "uv-cache"), UV_NO_CONFIG="1")
    env.pop("PYTHONPATH", None)
    subprocess.run(
        [uv.find_uv_bin(), "pip", "install", "--python", str(python), "--no-deps", "--offline", str(wheel)],
        env=env,
        check=True,
        capture_output=True,
    )
    (site,) = (target / "lib").glob("python3*/site-packages")
    (site / "_third_party.pth").write_text("\n".join(_third_party_paths()) + "\n", encoding="utf-8")
    proc = subprocess.run(
        [str(python), "-I", "-c", PROBE, str(target.resolve()), str(submitted)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    result: dict[str, object] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def _routes(double: PrimeApiDouble) -> list[str]:
    return [f"{method} {path.split('?')[0]}" for method, path in double.requests]


PUSH_ROUTES = [
    "POST /api/v1/environmentshub/resolve",
    "POST /api/v1/environmentshub/envhub_router_1/wheels",
    "PUT /upload/wheel",
    "POST /api/v1/environmentshub/envhub_router_1/wheels/w1/finalize",
    "POST /api/v1/environmentshub/envhub_router_1/versions",
    "PUT /upload/source",
    "POST /api/v1/environmentshub/envhub_router_1/versions/v1/finalize",
]


@pytest.mark.parametrize("preset", ["smoke", "agentic-smoke"])
def test_launch_through_the_real_prime_cli(
    preset: str,
    real_prime: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    with prime_api_double() as double:
        home = _prime_home(tmp_path, double.base_url)
        code = _launch(tmp_path, preset, home, monkeypatch)
    out, err = capsys.readouterr()
    assert code == 0, err + out[-3000:]
    assert double.errors == []
    assert _routes(double) == [
        "GET /api/v1/user/whoami",
        *PUSH_ROUTES,
        "POST /api/v1/training/runs/prepare",
        "POST /api/v1/training/runs",
    ]

    # The uploaded wheel is the staged package: router_oracle inside, no router-oracle requirement.
    wheel = tmp_path / "uploaded" / double.wheel_meta["filename"]
    wheel.parent.mkdir()
    wheel.write_bytes(double.uploads["wheel"])
    assert wheel.name.startswith("router_frontier_rl-0.1.0-")
    names = zipfile.ZipFile(wheel).namelist()
    assert "router_oracle/table.py" in names and "router_frontier_rl/data/oracle_table.json" in names
    assert not any(
        r.lower().startswith("router-oracle") for r in double.wheel_meta["metadata"]["requires_dist"]
    )

    stem = f"20261201T120000Z-{preset}"
    submitted = tmp_path / "runs" / f"{stem}.toml"
    result = _install_and_score(wheel, submitted, tmp_path)
    assert result["config"] == "RouterConfig" and result["reward"] == 1.0
    assert result["repo_access"] is (preset == "agentic-smoke")

    # The training request carries the submitted config: the shipped preset with the pushed hub id.
    assert double.train_request is not None
    sent = double.train_request["config"]
    assert sent == tomllib.loads(submitted.read_text(encoding="utf-8"))
    sources = sent["orchestrator"]["train"]["source"] + sent["orchestrator"].get("eval", {}).get("source", [])
    assert {s["env"]["taskset"]["id"] for s in sources} == {HUB_ID}
    assert load_config(submitted).with_taskset_id(HUB_ID, ENV_ID) == load_config(shipped_path(preset))  # type: ignore[arg-type]

    record = load_record(tmp_path / "runs" / f"{stem}.json")
    assert (record.status, record.run_id, record.env_id) == ("launched", RUN_ID, HUB_ID)
    assert record.dashboard_url == f"{double.base_url}/dashboard/training/{RUN_ID}"
    assert f"run id: {RUN_ID}" in out


@pytest.mark.parametrize(
    ("mode", "error", "status"),
    [("push_rejected", PushRejected, "push_failed"), ("train_rejected", TrainRejected, "train_failed")],
)
def test_rejections_exit_with_their_status(
    mode: str,
    error: type[Exception],
    status: str,
    real_prime: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    with prime_api_double(mode) as double:  # type: ignore[arg-type]
        code = _launch(tmp_path, "smoke", _prime_home(tmp_path, double.base_url), monkeypatch)
    err = capsys.readouterr().err
    assert code == error.exit_code  # type: ignore[attr-defined]
    assert double.errors == []
    (line,) = [ln for ln in err.splitlines() if ln.startswith("router-train launch: ")]
    assert ("403" in line) if mode == "push_rejected" else ("Config validation failed" in line)
    record = load_record(tmp_path / "runs" / "20261201T120000Z-smoke.json")
    assert (record.status, record.run_id) == (status, None)
    submitted = tmp_path / "runs" / "20261201T120000Z-smoke.toml"
    assert submitted.exists() is (mode == "train_rejected")
    assert sorted(p.name for p in (tmp_path / "runs").iterdir() if p.name.startswith(".")) == []


def test_refused_key_is_not_logged_in(
    real_prime: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with prime_api_double("unauthorized") as double:
        code = _launch(tmp_path, "smoke", _prime_home(tmp_path, double.base_url), monkeypatch)
    assert code == NotLoggedIn.exit_code
    assert "prime login" in capsys.readouterr().err
    assert _routes(double) == ["GET /api/v1/user/whoami"] and double.errors == []
    assert not (tmp_path / "runs").exists() and not (tmp_path / "stage").exists()


def test_no_api_key_is_not_logged_in_and_calls_nothing(
    real_prime: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with prime_api_double() as double:
        code = _launch(tmp_path, "smoke", _prime_home(tmp_path, double.base_url, api_key=None), monkeypatch)
    assert code == NotLoggedIn.exit_code
    assert "prime login" in capsys.readouterr().err
    assert double.requests == []
    assert not (tmp_path / "runs").exists()


def test_unreachable_api(
    real_prime: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with prime_api_double() as double:
        closed = double.base_url  # nothing listens there once the double is gone
    code = _launch(tmp_path, "smoke", _prime_home(tmp_path, closed), monkeypatch)
    err = capsys.readouterr().err
    assert code == ApiUnreachable.exit_code
    assert "could not reach the Prime API" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "runs").exists()


def test_hanging_api_is_bounded_by_the_timeout(
    real_prime: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with prime_api_double("hang") as double:
        t0 = time.monotonic()
        code = _launch(tmp_path, "smoke", _prime_home(tmp_path, double.base_url), monkeypatch, timeout=10.0)
        elapsed = time.monotonic() - t0
    err = capsys.readouterr().err
    assert code == ApiUnreachable.exit_code
    # our bound fired (prime's own read timeout, 30 s, would say "could not reach")
    assert "within 10 s (--timeout)" in err and len(err.strip().splitlines()) == 1
    assert elapsed < 60
    assert not (tmp_path / "runs").exists()
