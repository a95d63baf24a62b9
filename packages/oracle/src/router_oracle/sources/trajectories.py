"""mini-SWE-agent trajectory files: cost per task, for one run.

Layout written by `mini-extra swebench` (minisweagent/run/benchmarks/swebench.py):
`<output>/<instance_id>/<instance_id>.traj.json` (older runs and the leaderboard's S3 dumps also use
flat `<instance_id>.traj` / `.traj.json`). Each file is a JSON object
`{"info": {"model_stats": {"instance_cost": float, "api_calls": int}, "exit_status": ..., "submission": ...,
"mini_version": ..., "config": ...}, "messages": [...], "trajectory_format": "mini-swe-agent-1[.1]",
"instance_id": ...}`. The task id is the top-level `instance_id` when present, else the file name.

The directory is one provenance entry; its `sha256` is the sha256 of the `sha256sum`-style listing
(`<hex>  <relative path>\n` per trajectory file, sorted by path), so any changed file changes it.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

from tqdm import tqdm

from router_oracle.data_files import display_path
from router_oracle.errors import OracleInputError
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


def read_trajectories(path: str | os.PathLike[str], *, run: str, progress: bool = True) -> LoadedSource:
    """Rows `(task, run, resolved=None, cost)` from every trajectory file under `path`."""
    files = trajectory_files(path)
    root = Path(path)
    # Listing names are relative to the directory (a single file is listed by its name).
    root_dir = root if root.is_dir() else None
    rows: list[LongRow] = []
    listing = hashlib.sha256()
    bar = tqdm(
        files,
        desc=f"trajectories {run}",
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
        rows.append(LongRow(task_id=task_id, run=run, resolved=None, cost=cost, where=where))
        rel = file.relative_to(root_dir).as_posix() if root_dir is not None else file.name
        listing.update(f"{digest}  {rel}\n".encode())
    return LoadedSource(
        SourceFile(path=display_path(path), kind="trajectories", sha256=listing.hexdigest()), rows, str(path)
    )
