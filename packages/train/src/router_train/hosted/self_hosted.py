"""`router-train launch PRESET --prime-rl DIR`: run a preset with prime-rl's own `rl` entry point, on
your own GPUs, from a prime-rl checkout (at the commit the configs were validated against, 559b447,
or newer).

Steps (each printed by `--dry-run`, which runs and writes nothing):
1. check DIR is a prime-rl checkout (its pyproject.toml names project `prime-rl` with an `rl` script)
   and that `uv` is found (PATH, else the `uv` installed with router-train);
2. stage the env as for a hosted launch (one self-contained package, router_oracle inside);
3. `uv sync` in DIR (prime-rl's environment, DIR/.venv), then `uv pip install --no-deps STAGE` into it:
   no dependencies, so prime-rl's pinned verifiers / pydantic / numpy stay as its lock has them;
4. check the env is importable there (`uv run python -c "import router_frontier_rl"`);
5. write runs/<stamp>-<preset>.toml: the config with the taskset id un-prefixed (no hub: the module is
   installed locally) and, for `--nodes N`, prime-rl's multi-node deployment;
6. `uv run rl @ runs/<stamp>-<preset>.toml` in DIR (output streamed);
7. write runs/<stamp>-<preset>.json (RunRecord) once `rl` has run.
"""

from __future__ import annotations

import os
import shlex
import shutil
import tomllib
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

from router_oracle.infra.atomic_file import write_text_atomic
from router_train.hosted.config_files import ConfigFileError, dumps_config, load_config, shipped_path
from router_train.hosted.errors import BadLaunchInput, LaunchError, ToolNotFound, TrainRejected
from router_train.hosted.launch import runs_dir_problem
from router_train.hosted.presets import ENV_ID, PresetName, multi_node_config
from router_train.hosted.prime_tool import DEFAULT_TIMEOUT_S, StreamResult, stream
from router_train.hosted.rl_config import RLConfig
from router_train.hosted.runs import CommandRecord, RunRecord, RunStatus, SourceRecord, run_stem, write_record
from router_train.hosted.staging import (
    ENV_DIST,
    PackageSource,
    StagedEnv,
    StagingError,
    find_built_sources,
    stage_dir_problem,
    stage_env,
)

PRIME_RL_PROJECT = "prime-rl"
UV_HINT = "install uv (https://docs.astral.sh/uv/, or `pip install uv`)"


def find_uv() -> str | None:
    """`uv` on PATH, else the binary of the `uv` package installed with router-train; None if neither."""
    found = shutil.which("uv")
    if found:
        return found
    try:
        import uv

        return str(uv.find_uv_bin())
    except (ImportError, FileNotFoundError):
        return None


def prime_rl_problem(checkout: Path) -> str | None:
    """Why `checkout` is not a prime-rl checkout, or None."""
    pyproject = checkout / "pyproject.toml"
    if not checkout.is_dir():
        return f"--prime-rl {checkout}: not a directory"
    try:
        project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        return f"--prime-rl {checkout}: not a prime-rl checkout ({pyproject}: {e})"
    if project.get("name") != PRIME_RL_PROJECT or "rl" not in project.get("scripts", {}):
        return (
            f"--prime-rl {checkout}: not a prime-rl checkout (its pyproject.toml must name project "
            f"{PRIME_RL_PROJECT!r} with an `rl` script; got {project.get('name')!r})"
        )
    return None


def self_hosted_config(config: RLConfig, preset: str, nodes: int | None) -> RLConfig:
    """The config `rl` gets: as shipped (taskset id un-prefixed), multi-node for `nodes`."""
    if nodes is None:
        return config
    return multi_node_config(config, preset, nodes)


def _load(path: Path, preset: PresetName, nodes: int | None) -> RLConfig:
    """The config file read and made the one `rl` gets; bad input: one line."""
    try:
        return self_hosted_config(load_config(path), preset, nodes)
    except ConfigFileError as e:
        raise BadLaunchInput(str(e)) from None


def _problems(prime_rl: Path, uv: str | None, stage_dir: Path, runs_dir: Path) -> list[LaunchError]:
    """What would stop a launch now: the checkout, `uv`, the stage and runs directories."""
    problems: list[LaunchError] = []
    if problem := prime_rl_problem(prime_rl):
        problems.append(BadLaunchInput(problem))
    if uv is None:
        problems.append(ToolNotFound(f"`uv` is not on PATH nor installed beside this Python: {UV_HINT}"))
    for blocked in (stage_dir_problem(stage_dir), runs_dir_problem(runs_dir)):
        if blocked:
            problems.append(BadLaunchInput(blocked))
    return problems


def _print_plan(
    line: Callable[[str], None],
    preset: PresetName,
    prime_rl: Path,
    label: str,
    nodes: int | None,
    uv: str | None,
    stage_dir: Path,
    checkout: Path,
    setup: list[list[str]],
) -> None:
    """The dry run's plan, up to the set-up commands run in the checkout."""
    line(f"# router-train launch {preset} --prime-rl {prime_rl} --dry-run: the plan; nothing is run.")
    line(f"# config: {label}, valid" + (f"; multi-node: {nodes} nodes (SLURM)" if nodes else ""))
    line(f"# uv: {uv or 'not found'}")
    line(f"# 1. stage {ENV_DIST} (router_oracle inside) into {stage_dir}; in {checkout}:")
    for argv in setup:
        line(f"$ {shlex.join(argv)}")


def _print_plan_end(
    line: Callable[[str], None],
    config_file: Path,
    rl: list[str],
    record_path: Path,
    problems: list[LaunchError],
    config: RLConfig,
) -> None:
    """The dry run's plan from the config written on: the `rl` command, the record, what would stop a
    launch now (raised, as a launch would), the config."""
    line(f"# 2. write {config_file}: the config below (taskset id {ENV_ID}, no hub)")
    line(f"$ {shlex.join(rl)}")
    line(f"# 3. record in {record_path}")
    for p in problems:
        line(f"# not possible now, a launch would exit {p.exit_code}: {p}")
    line("# --- config ---")
    for text_line in dumps_config(config).rstrip("\n").split("\n"):
        line(text_line)
    line("# --- end of config ---")
    if problems:
        line(f"# dry run: a launch would exit {problems[0].exit_code}")
        raise problems[0]
    line("# dry run: a launch would exit 0")


def _record(
    preset: PresetName,
    started: datetime,
    status: RunStatus,
    staged: StagedEnv,
    label: str,
    config_file: Path,
    stage_dir: Path,
    commands: list[CommandRecord],
) -> RunRecord:
    """The run's record (`runs.RunRecord`): no hub run id, the taskset id, the staged sources."""
    return RunRecord(
        preset=preset,
        created_at=started.isoformat(),
        status=status,
        run_id=None,
        dashboard_url=None,
        env_id=ENV_ID,
        env_version=staged.version,
        config_source=label,
        submitted_config=str(config_file),
        stage_dir=str(stage_dir),
        sources=[
            SourceRecord(
                distribution=s.distribution, kind=s.kind, path=str(s.path), version=s.version, sha256=s.sha256
            )
            for s in staged.sources
        ],
        commands=commands,
    )


class _CheckoutRun:
    """Runs `uv` commands in the prime-rl checkout, echoing them and their output, each recorded."""

    def __init__(
        self, uv: str, checkout: Path, prime_rl: Path, timeout: float, line: Callable[[str], None]
    ) -> None:
        self.uv, self.checkout, self.prime_rl, self.timeout, self.line = uv, checkout, prime_rl, timeout, line
        # uv must not inherit a VIRTUAL_ENV of ours: it would install there instead of prime-rl's .venv.
        self.env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
        self.commands: list[CommandRecord] = []

    def __call__(self, argv: list[str], bound: float | None) -> StreamResult:
        real = [self.uv, *argv[1:]]
        self.line(f"$ {shlex.join(argv)}   (in {self.checkout})")
        result = stream(real, echo=self.line, timeout=bound, cwd=self.checkout, env=self.env)
        self.commands.append(CommandRecord(argv=real, returncode=result.returncode))
        if result.timed_out:
            raise BadLaunchInput(
                f"--prime-rl {self.prime_rl}: `{shlex.join(argv)}` ran past --timeout {self.timeout:g} s"
            )
        return result

    def setup(self, argv: list[str]) -> None:
        """A set-up command, bounded by the timeout; its failure is one line."""
        result = self(argv, self.timeout)
        if result.returncode != 0:
            last = next((x for x in reversed(result.lines) if x.strip()), "no output")
            raise BadLaunchInput(
                f"--prime-rl {self.prime_rl}: `{shlex.join(argv)}` failed (exit {result.returncode}): {last}"
            )


def launch_self_hosted(
    preset: PresetName,
    prime_rl: Path,
    *,
    dry_run: bool = False,
    nodes: int | None = None,
    config_path: Path | None = None,
    dist_dir: Path = Path("dist"),
    stage_dir: Path = Path("dist/hosted-stage/router-frontier-rl"),
    runs_dir: Path = Path("runs"),
    sources: tuple[PackageSource, PackageSource] | None = None,
    version: str | None = None,
    now: Callable[[], datetime] | None = None,
    out: TextIO | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
) -> RunRecord | None:
    """Run `preset` with prime-rl's `rl` in the checkout `prime_rl` (module docstring); the record, or
    None for a dry run. Raises LaunchError subclasses."""
    write = out.write if out else lambda s: print(s, end="", flush=True)

    def line(text: str) -> None:
        write(text + "\n")

    started = (now or (lambda: datetime.now(UTC)))()
    stem = run_stem(preset, started)
    label = str(config_path) if config_path else f"router_train/configs/{preset}.toml (shipped preset)"
    config = _load(config_path or shipped_path(preset), preset, nodes)
    checkout = prime_rl.resolve() if prime_rl.exists() else prime_rl
    config_file = (runs_dir / f"{stem}.toml").resolve()
    record_path = runs_dir / f"{stem}.json"
    uv = find_uv()
    sync = ["uv", "sync"]
    install = ["uv", "pip", "install", "--python", ".venv/bin/python", "--no-deps", str(stage_dir.resolve())]
    probe = ["uv", "run", "--no-sync", "python", "-c", f"import {ENV_DIST.replace('-', '_')}, router_oracle"]
    rl = ["uv", "run", "rl", "@", str(config_file)]

    problems = _problems(prime_rl, uv, stage_dir, runs_dir)
    try:
        env_src, oracle_src = sources or find_built_sources(dist_dir)
    except StagingError as e:
        problems.append(BadLaunchInput(str(e)))

    if dry_run:
        _print_plan(line, preset, prime_rl, label, nodes, uv, stage_dir, checkout, [sync, install, probe])
        _print_plan_end(line, config_file, rl, record_path, problems, config)
        return None

    if problems:
        raise problems[0]
    assert uv is not None
    try:
        staged = stage_env(env_src, oracle_src, stage_dir, version=version)
    except StagingError as e:
        raise BadLaunchInput(str(e)) from None
    line(f"staged {ENV_DIST} {staged.version} in {stage_dir}")

    checkout_run = _CheckoutRun(uv, checkout, prime_rl, timeout, line)
    for argv in (sync, install, probe):
        checkout_run.setup(argv)
    write_text_atomic(
        config_file,
        dumps_config(config, header=f"Run by `router-train launch {preset} --prime-rl`: {label}."),
    )
    result = checkout_run(rl, None)  # training runs for hours: `rl` itself is not bounded by --timeout
    status: RunStatus = "launched" if result.returncode == 0 else "train_failed"
    record = _record(preset, started, status, staged, label, config_file, stage_dir, checkout_run.commands)
    write_record(record, record_path)
    line(f"record: {record_path}")
    if result.returncode != 0:
        raise TrainRejected(
            f"`{shlex.join(rl)}` in {checkout} exited {result.returncode}; see its output above"
        )
    return record
