"""mini-SWE-agent trajectory files: cost per task, for one run.

Layout written by `mini-extra swebench` (minisweagent/run/benchmarks/swebench.py):
`<output>/<instance_id>/<instance_id>.traj.json` (older runs and the leaderboard's S3 dumps also use
flat `<instance_id>.traj` / `.traj.json`). Each file is a JSON object
`{"info": {"model_stats": {"instance_cost": float, "api_calls": int}, "exit_status": ..., "submission": ...,
"mini_version": ..., "config": ...}, "messages": [...], "trajectory_format": "mini-swe-agent-1[.1]",
"instance_id": ...}`. The task id is the top-level `instance_id` when present, else the file name.

Each file also records the model it ran (`info.config.model.model_name`, e.g.
`anthropic/claude-opus-4-6`); one directory must hold one model's runs, and that model is kept
(`LoadedSource.model`) so `router_oracle.run_labels` can match the directory to its harness report.

The directory is one provenance entry; its `sha256` is the sha256 of the `sha256sum`-style listing
(`<hex>  <relative path>\n` per trajectory file, sorted by path), so any changed file changes it.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path
from typing import Any

from tqdm import tqdm

from router_oracle.data_files import display_path
from router_oracle.infra.errors import OracleInputError
from router_oracle.sources.rows import LoadedSource, LongRow, check_cost, check_id, parse_json, read_source
from router_oracle.table import SourceFile

SUFFIXES = (".traj.json", ".traj")
"""File name endings of trajectory files."""


def trajectory_files(path: str | os.PathLike[str]) -> list[Path]:
    """The trajectory files under `path` (or `path` itself if it is one file), sorted."""
    p = Path(path)
    if p.is_file():
        return [p]
    if not p.is_dir():
        raise OracleInputError(f"{path}: no such trajectory directory or file")
    files = sorted(f for f in p.rglob("*") if f.is_file() and f.name.endswith(SUFFIXES))
    if not files:
        raise OracleInputError(f"{path}: no trajectory files (*.traj.json) found")
    return files


def _stem(file: Path) -> str:
    for suffix in SUFFIXES:
        if file.name.endswith(suffix):
            return file.name[: -len(suffix)]
    return file.stem


def recorded_model(doc: dict[str, Any]) -> str | None:
    """The model a trajectory says it ran (`info.config.model.model_name`), or None when it does not say."""
    config = doc["info"].get("config")
    model = config.get("model") if isinstance(config, dict) else None
    name = model.get("model_name") if isinstance(model, dict) else None
    return name if isinstance(name, str) and name else None


def read_trajectories(path: str | os.PathLike[str], *, run: str, progress: bool = True) -> LoadedSource:
    """Rows `(task, run, resolved=None, cost)` from every trajectory file under `path`, and its model."""
    files = trajectory_files(path)
    root = Path(path)
    # Listing names are relative to the directory (a single file is listed by its name).
    root_dir = root if root.is_dir() else None
    rows: list[LongRow] = []
    model: tuple[str, str] | None = None  # (model, the first file that records it)
    listing = hashlib.sha256()
    bar = tqdm(
        files,
        desc=f"trajectories {run or path}",
        unit="file",
        file=sys.stderr,
        leave=False,
        disable=not progress or not sys.stderr.isatty(),
    )
    for file in bar:
        where = str(file)
        text, digest = read_source(file)
        doc = parse_json(text, where)
        if not isinstance(doc, dict) or not isinstance(doc.get("info"), dict):
            raise OracleInputError(f"{where}: not a mini-SWE-agent trajectory (no `info` object)")
        stats = doc["info"].get("model_stats")
        if not isinstance(stats, dict) or "instance_cost" not in stats:
            raise OracleInputError(f"{where}: no `info.model_stats.instance_cost`")
        stem = _stem(file)
        task_id = check_id(doc.get("instance_id", stem), f"{where}: instance_id")
        if "instance_id" in doc and stem != task_id:
            raise OracleInputError(f"{where}: instance_id {task_id!r} does not match the file name")
        cost = check_cost(stats["instance_cost"], f"{where}: info.model_stats.instance_cost")
        said = recorded_model(doc)
        if said is not None and model is None:
            model = (said, where)
        elif said is not None and model is not None and said != model[0]:
            raise OracleInputError(
                f"{where}: records model {said!r}, but {model[1]} records {model[0]!r}: "
                "one trajectory directory must hold one run of one model"
            )
        rows.append(LongRow(task_id=task_id, run=run, resolved=None, cost=cost, where=where))
        rel = file.relative_to(root_dir).as_posix() if root_dir is not None else file.name
        listing.update(f"{digest}  {rel}\n".encode())
    return LoadedSource(
        SourceFile(path=display_path(path), kind="trajectories", sha256=listing.hexdigest()),
        rows,
        str(path),
        model=model[0] if model else None,
    )
