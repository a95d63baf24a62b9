"""`router-train launch`: stage the env, push it, submit the config to Prime Hosted Training.

Steps of a launch (each printed by `--dry-run`, which runs and writes nothing):
1. load the config (the shipped preset file, or --config) and check it against our schema;
2. check `prime` is on PATH and logged in (`prime config view`, then `prime whoami` against the API);
3. stage ONE self-contained package (router_frontier_rl + router_oracle) from the built wheels;
4. `prime env push -p STAGE` (output streamed), read the pushed hub id `owner/router-frontier-rl`;
5. write runs/<stamp>-<preset>.toml: the config with its taskset id set to that hub id;
6. `prime train runs/<stamp>-<preset>.toml -y` (output streamed), read the run id;
7. write runs/<stamp>-<preset>.json (RunRecord), whatever the outcome after staging.

Failures raise `router_train.hosted.errors.LaunchError` subclasses, each with its documented exit status.
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import TextIO

import router_frontier_rl
import router_oracle
from router_frontier_rl.swebench_image import swebench_image
from router_oracle.infra.atomic_file import file_in_the_way, write_text_atomic
from router_train.hosted.config_files import (
    ConfigFileError,
    dumps_config,
    load_config,
    shipped_path,
)
from router_train.hosted.errors import (
    BadLaunchInput,
    LaunchError,
    NoRunId,
    PushRejected,
    ToolNotFound,
    TrainRejected,
    exit_codes_help,
)
from router_train.hosted.presets import ENV_ID, PresetName
from router_train.hosted.prime_tool import (
    DEFAULT_TIMEOUT_S,
    NOT_FOUND,
    check_login,
    failure,
    find_prime,
    parse_pushed_slug,
    parse_run_id,
    require_prime,
    stream,
)
from router_train.hosted.rl_config import RLConfig
from router_train.hosted.runs import (
    CommandRecord,
    RunRecord,
    RunStatus,
    SourceRecord,
    run_stem,
    write_record,
)
from router_train.hosted.staging import (
    ENV_DIST,
    ORACLE_DIST,
    PackageSource,
    StagedEnv,
    StagingError,
    check_version,
    dir_source,
    find_built_sources,
    stage_dir_problem,
    stage_env,
    staged_requirements,
)

EXIT_CODES_HELP = exit_codes_help()

DEFAULT_DIST_DIR = Path("dist")
DEFAULT_STAGE_DIR = Path("dist/hosted-stage/router-frontier-rl")
DEFAULT_RUNS_DIR = Path("runs")


def sources_from_imports(version: str | None = None) -> tuple[tuple[PackageSource, PackageSource], str]:
    """The importable router_frontier_rl / router_oracle source roots as staging inputs, and a version.

    The version is the installed distribution's unless given; a bare checkout has none.
    """
    env_root = Path(router_frontier_rl.__file__).resolve().parent.parent
    oracle_root = Path(router_oracle.__file__).resolve().parent.parent
    if version is None:
        try:
            version = metadata.version(ENV_DIST)
        except metadata.PackageNotFoundError:
            raise BadLaunchInput(
                f"{env_root}: {ENV_DIST} is not installed, so its version is unknown; pass --version"
            ) from None
    return (dir_source(env_root, ENV_DIST), dir_source(oracle_root, ORACLE_DIST)), version


class _Out:
    def __init__(self, out: TextIO | None, err: TextIO | None) -> None:
        self.out = out or sys.stdout
        self.err = err or sys.stderr

    def line(self, text: str = "") -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def error(self, text: str) -> None:
        self.err.write(f"router-train launch: {text}\n")
        self.err.flush()


def _source_record(s: PackageSource) -> SourceRecord:
    return SourceRecord(
        distribution=s.distribution, kind=s.kind, path=str(s.path), version=s.version, sha256=s.sha256
    )


def _describe(s: PackageSource) -> str:
    if s.kind == "dir":
        return f"{s.path} (source root of {s.distribution})"
    return f"{s.path} ({s.kind} of {s.distribution} {s.version}, sha256 {(s.sha256 or '')[:16]}...)"


def launch(
    preset: PresetName,
    *,
    dry_run: bool = False,
    config_path: Path | None = None,
    dist_dir: Path = DEFAULT_DIST_DIR,
    stage_dir: Path = DEFAULT_STAGE_DIR,
    runs_dir: Path = DEFAULT_RUNS_DIR,
    sources: tuple[PackageSource, PackageSource] | None = None,
    version: str | None = None,
    now: Callable[[], datetime] | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
) -> RunRecord | None:
    """Launch `preset` on Prime Hosted Training (see the module docstring); returns the run's record
    (None for a dry run). Raises a LaunchError subclass (its exit status documented) when it cannot.

    `sources` (env, oracle) replaces the builds found in `dist_dir` (e.g. source directories,
    then `version` is needed). `config_path` replaces the shipped preset file. `timeout` bounds each
    `prime` command's wall time in seconds.
    """
    io = _Out(out, err)
    started = (now or (lambda: datetime.now(UTC)))()
    stem = run_stem(preset, started)
    config, label = _preset_config(preset, config_path)
    submitted_path = runs_dir / f"{stem}.toml"
    record_path = runs_dir / f"{stem}.json"

    if dry_run:
        _print_plan(
            io, preset, config, label, dist_dir, stage_dir, sources, version, submitted_path, record_path
        )
        return None

    prime = require_prime()
    check_login(prime, timeout=timeout)

    staged = _stage(io, runs_dir, sources, dist_dir, stage_dir, version)

    commands: list[CommandRecord] = []

    def finish(status: RunStatus, **fields: str | None) -> RunRecord:
        record = RunRecord(
            preset=preset,
            created_at=started.isoformat(),
            status=status,
            run_id=fields.get("run_id"),
            dashboard_url=fields.get("dashboard_url"),
            env_id=fields.get("env_id"),
            env_version=staged.version,
            config_source=label,
            submitted_config=fields.get("submitted_config"),
            stage_dir=str(stage_dir),
            sources=[_source_record(s) for s in staged.sources],
            commands=commands,
        )
        write_record(record, record_path)
        io.line(f"record: {record_path}")
        return record

    env_id = _push(io, prime, stage_dir, timeout, commands, finish)

    submitted = _submitted_config(config, env_id, label)
    write_text_atomic(submitted_path, submitted)
    train_argv = [prime, "train", str(submitted_path), "-y"]
    io.line(f"$ {shlex.join(['prime', *train_argv[1:]])}")
    trained = stream(train_argv, echo=io.line, timeout=timeout)
    commands.append(CommandRecord(argv=train_argv, returncode=trained.returncode))
    common = {"env_id": env_id, "submitted_config": str(submitted_path)}
    if trained.returncode != 0:
        finish("train_failed", **common)
        raise failure(trained, "prime train", otherwise=TrainRejected)
    run_id, url = parse_run_id(trained.lines)
    if run_id is None:
        finish("no_run_id", **common)
        raise NoRunId(f"`prime train` succeeded but printed no run id; see its output and {record_path}")
    io.line(f"run id: {run_id}")
    return finish("launched", run_id=run_id, dashboard_url=url, **common)


def _preset_config(preset: PresetName, config_path: Path | None) -> tuple[RLConfig, str]:
    """The config launched (`config_path`, else the shipped preset) and how the record names it."""
    config_file = config_path or shipped_path(preset)
    # The shipped file lives wherever the package is installed; name it by its package path.
    label = str(config_path) if config_path else f"router_train/configs/{preset}.toml (shipped preset)"
    try:
        return load_config(config_file), label
    except ConfigFileError as e:
        raise BadLaunchInput(str(e)) from None


def _stage(
    io: _Out,
    runs_dir: Path,
    sources: tuple[PackageSource, PackageSource] | None,
    dist_dir: Path,
    stage_dir: Path,
    version: str | None,
) -> StagedEnv:
    """The runs directory checked (now, not after the push) and the env staged; bad input: one line."""
    try:
        problem = runs_dir_problem(runs_dir)
        if problem:
            raise StagingError(problem)
        env_src, oracle_src = sources or find_built_sources(dist_dir)
        staged = stage_env(env_src, oracle_src, stage_dir, version=version)
    except StagingError as e:
        raise BadLaunchInput(str(e)) from None
    io.line(f"staged {ENV_DIST} {staged.version} ({staged.files} files, self-contained) in {stage_dir}")
    return staged


def _push(
    io: _Out,
    prime: str,
    stage_dir: Path,
    timeout: float,
    commands: list[CommandRecord],
    finish: Callable[..., RunRecord],
) -> str:
    """`prime env push` of the staged env; the pushed hub id (or the taskset id when none is printed)."""
    push_argv = [prime, "env", "push", "-p", str(stage_dir)]
    io.line(f"$ {shlex.join(['prime', *push_argv[1:]])}")
    pushed = stream(push_argv, echo=io.line, timeout=timeout)
    commands.append(CommandRecord(argv=push_argv, returncode=pushed.returncode))
    if pushed.returncode != 0:
        finish("push_failed")
        error: LaunchError = failure(pushed, "prime env push", otherwise=PushRejected)
        raise type(error)(f"{error}; nothing was submitted")
    env_id = parse_pushed_slug(pushed.lines)
    if env_id is None:
        io.error(f"could not read the pushed hub id from `prime env push`; submitting taskset id {ENV_ID}")
        env_id = ENV_ID
    return env_id


def runs_dir_problem(runs_dir: Path) -> str | None:
    """Why launch records cannot go into `runs_dir` (it or a parent is a file, or it cannot be written),
    or None. Checked before the push: the record is written after it."""
    blocker = file_in_the_way(runs_dir)
    if blocker is not None:
        where = "is a file" if blocker == runs_dir else f"is under {blocker}, a file"
        return f"{runs_dir}: the runs directory {where}, not a directory"
    existing = next(p for p in (runs_dir, *runs_dir.parents) if p.exists())
    if not os.access(existing, os.W_OK | os.X_OK):
        return f"{runs_dir}: the runs directory cannot be written ({existing} is not writable)"
    return None


def _submitted_config(config: RLConfig, env_id: str, source: str) -> str:
    return dumps_config(
        config.with_taskset_id(ENV_ID, env_id),
        header=f"Submitted by `router-train launch`: {source} with taskset id {ENV_ID} -> {env_id}.",
    )


def _print_plan(
    io: _Out,
    preset: str,
    config: RLConfig,
    label: str,
    dist_dir: Path,
    stage_dir: Path,
    sources: tuple[PackageSource, PackageSource] | None,
    version: str | None,
    submitted_path: Path,
    record_path: Path,
) -> None:
    """Print the plan; raise what a launch would raise, as far as it is known without running `prime`
    (login, exit 4, is checked only by the launch itself)."""
    io.line(f"# router-train launch {preset} --dry-run: the plan; nothing is run or written.")
    io.line(f"# config: {label}, valid")
    errors: list[LaunchError] = []
    prime = find_prime()
    if prime is None:
        errors.append(ToolNotFound(NOT_FOUND))
        io.line(f"# prime: not found; a launch would exit {ToolNotFound.exit_code}: {NOT_FOUND}")
    else:
        io.line(f"# prime: {prime} (login is checked with `prime config view` and `prime whoami` at launch)")
    problems = [p for p in (stage_dir_problem(stage_dir), runs_dir_problem(record_path.parent)) if p]
    try:
        env_src, oracle_src = sources or find_built_sources(dist_dir)
        resolved = version or env_src.version
        io.line(f"# 1. stage {ENV_DIST} {resolved} with router_oracle inside (no router-oracle dependency)")
        io.line(f"#    into {stage_dir}, from:")
        io.line(f"#      {_describe(env_src)}")
        io.line(f"#      {_describe(oracle_src)}")
        io.line(f"#    requirements: {', '.join(staged_requirements(env_src, oracle_src))}")
        if not resolved:
            raise StagingError(f"{env_src.path}: a source directory has no version; pass --version")
        check_version(resolved)
    except StagingError as e:
        problems.append(str(e))
    for problem in problems:
        io.line(f"# 1. stage: not possible now, a launch would exit {BadLaunchInput.exit_code}: {problem}")
    if problems:
        errors.append(BadLaunchInput(problems[0]))
    io.line(f"$ {shlex.join(['prime', 'env', 'push', '-p', str(stage_dir)])}")
    io.line(
        f"# 2. write {submitted_path}: the config below, taskset id {ENV_ID} -> the pushed OWNER/{ENV_ID}"
    )
    io.line(f"$ {shlex.join(['prime', 'train', str(submitted_path), '-y'])}")
    io.line(f"# 3. record the run id in {record_path}")
    for source in config.env_sources():
        args, agent = source.env.taskset, source.env.agent
        if args.repo_access:
            edit = "on" if agent.harness.edit else "off"
            io.line(
                f"# agentic source {source.name}: up to {args.turn_budget} turns of verifiers' "
                f"{agent.harness.id} agent (edit tool {edit}) per rollout, each in a {agent.runtime.type} "
                f"runtime started from its task's SWE-bench image (e.g. "
                f"{swebench_image('django__django-11099')}), its network blocked"
            )
    io.line("# --- config ---")
    for text_line in dumps_config(config).rstrip("\n").split("\n"):
        io.line(text_line)
    io.line("# --- end of config ---")
    # The launch stops at its first problem: `prime` is looked for before anything is staged.
    if errors:
        io.line(f"# dry run: a launch would exit {errors[0].exit_code}")
        raise errors[0]
    io.line("# dry run: a launch would exit 0 (or 4 if prime is not logged in)")


__all__ = [
    "EXIT_CODES_HELP",
    "launch",
    "sources_from_imports",
]
