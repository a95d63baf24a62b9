"""swe-bench.com leaderboard JSON: resolved flag and cost per task for every run that has them.

Format (as published by SWE-bench/swe-bench.github.io, e.g. the bundled bash-only board):
`{"name": ..., "results": [{"folder": RUN_ID, "name": ..., "per_instance_details":
{INSTANCE_ID: {"resolved": bool, "cost": float, "api_calls": int}, ...} | null, ...}, ...]}`.
The file may be gzipped (`.gz`). Entries without `per_instance_details` contribute no rows.
"""

from __future__ import annotations

import os
from collections.abc import Collection
from typing import Any

from router_oracle.data_files import display_path
from router_oracle.infra.errors import OracleInputError
from router_oracle.sources.rows import (
    LoadedSource,
    LongRow,
    check_cost,
    check_id,
    check_resolved,
    parse_json,
    read_source,
)
from router_oracle.sources.run_entry import MINI_SWE_AGENT, RunEntry
from router_oracle.table import SourceFile


def read_leaderboard(path: str | os.PathLike[str], *, runs: Collection[str] | None = None) -> LoadedSource:
    """Rows of every leaderboard entry (only those whose `folder` is in `runs`, when given)."""
    name = str(path)
    text, digest = read_source(path)
    doc = parse_json(text, name)
    results = doc.get("results") if isinstance(doc, dict) else None
    if not isinstance(results, list):
        raise OracleInputError(f"{name}: not a leaderboard: expected an object with a `results` list")
    rows: list[LongRow] = []
    seen: dict[str, int] = {}
    for i, entry in enumerate(results):
        where = f"{name}: results[{i}]"
        if not isinstance(entry, dict):
            raise OracleInputError(f"{where}: expected an object, got {type(entry).__name__}")
        run = check_id(entry.get("folder"), where, "`folder` (run id)")
        if runs is not None and run not in runs:
            continue
        if run in seen:
            raise OracleInputError(f"{where}: duplicate run {run!r} (also results[{seen[run]}])")
        seen[run] = i
        details = entry.get("per_instance_details")
        if details is None:
            continue
        if not isinstance(details, dict):
            raise OracleInputError(f"{where} ({run}): per_instance_details must be an object")
        for task_id, d in details.items():
            w = f"{where} ({run}): per_instance_details[{task_id!r}]"
            if not isinstance(d, dict):
                raise OracleInputError(f"{w}: expected an object, got {d!r}")
            rows.append(
                LongRow(
                    task_id=check_id(task_id, w),
                    run=run,
                    resolved=check_resolved(d.get("resolved"), w),
                    cost=check_cost(d.get("cost"), w),
                    where=w,
                )
            )
    return LoadedSource(SourceFile(path=display_path(path), kind="leaderboard", sha256=digest), rows, name)


def _optional_str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def read_leaderboard_entries(path: str | os.PathLike[str]) -> list[RunEntry]:
    """Every entry's metadata, in file order (values are checked by `read_leaderboard`, not here)."""
    name = str(path)
    text, _ = read_source(path)
    doc = parse_json(text, name)
    results = doc.get("results") if isinstance(doc, dict) else None
    if not isinstance(results, list):
        raise OracleInputError(f"{name}: not a leaderboard: expected an object with a `results` list")
    entries = []
    seen: dict[str, int] = {}
    for i, entry in enumerate(results):
        where = f"{name}: results[{i}]"
        if not isinstance(entry, dict):
            raise OracleInputError(f"{where}: expected an object, got {type(entry).__name__}")
        run = check_id(entry.get("folder"), where, "`folder` (run id)")
        if run in seen:
            raise OracleInputError(f"{where}: duplicate run {run!r} (also results[{seen[run]}])")
        seen[run] = i
        raw = entry.get("per_instance_details")
        details: dict[str, Any] | None = raw if isinstance(raw, dict) else None
        tags = entry.get("tags")
        headline = entry.get("resolved")
        entries.append(
            RunEntry(
                run=run,
                name=_optional_str(entry.get("name")) or run,
                tags=tuple(t for t in tags if isinstance(t, str)) if isinstance(tags, list) else (),
                harness=MINI_SWE_AGENT,
                agent_version=_optional_str(entry.get("mini-swe-agent_version")),
                date=_optional_str(entry.get("date")),
                headline_resolved=float(headline)
                if isinstance(headline, int | float) and not isinstance(headline, bool)
                else None,
                resolved_count=None
                if details is None
                else sum(isinstance(d, dict) and d.get("resolved") is True for d in details.values()),
                task_ids=None if details is None else frozenset(details),
            )
        )
    return entries
