"""The OpenHands Index results (MIT): resolved flag and cost per task for every SWE-bench Verified run.

Layout, as published in the repository OpenHands/openhands-index-results (a directory, or its archive
`.tar.gz` as released, holding that directory):

    results/<Model>/metadata.json                      agent_name, agent_version, model, release_date,
                                                       input_price, output_price (USD per million tokens)
    results/<Model>/scores.json                        per benchmark: score, cost_per_instance, agent_version
    results/<Model>/instance_results/swe-bench.json    {instance_id: {"cost": float|null,
                                                                     "resolved": bool|null}}
    alternative_agents/<harness>/<Model>/...           the same, under another harness

One run per (harness, agent version, model directory), id `<harness>-<agent version>_<directory>` (e.g.
`openhands-v1.24.0_claude-opus-4-7`, `claude-code-v1.18.0_claude-opus-4-7`): `results/` is the `openhands`
harness, `alternative_agents/<dir>` the harness `HARNESSES` names. The agent version is the one
`scores.json` gives for `swe-bench` (the version that produced these results; `metadata.json`'s may be
older), else `metadata.json`'s. Quirks handled: `resolved: null` (or `cost: null`) is a missing result,
not a failure (the row leaves that field out); a model directory without `swe-bench.json` has no Verified
results (no run); a run whose costs are all 0 (the Codex CLI runs) recorded no cost, so it cannot be a
pool member (`read_openhands` refuses it by name).
"""

from __future__ import annotations

import functools
import hashlib
import io
import os
import tarfile
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from router_oracle.data_files import display_path
from router_oracle.infra.errors import OracleInputError
from router_oracle.infra.file_hash import sha256_bytes
from router_oracle.sources.rows import LoadedSource, LongRow, check_cost, check_id, check_resolved, parse_json
from router_oracle.sources.run_entry import RunEntry
from router_oracle.table import SourceFile

BENCHMARK = "swe-bench"
"""The instance-results file read: SWE-bench Verified (`instance_results/swe-bench.json`)."""

HOME_HARNESS = "openhands"
"""The harness of the runs under `results/`."""

HARNESSES: dict[str, str] = {
    "acp-claude": "claude-code",
    "acp-codex": "codex-cli",
    "acp-gemini": "gemini-cli",
    "openhands_subagents": "openhands-subagents",
}
"""`alternative_agents/<dir>` -> harness name; another directory's name is used lowercased, `_` as `-`."""


@dataclass(frozen=True, slots=True)
class OpenHandsRun:
    """One model directory's Verified run: its entry and its per-task results."""

    entry: RunEntry
    """What the metadata says about the run."""
    results: dict[str, tuple[bool | None, float | None]]
    """instance id -> (resolved, cost) as published (None: missing)."""
    where: str
    """The instance-results file, for error messages."""


def _harness(parts: tuple[str, ...]) -> str | None:
    """The harness of a model directory `results/<M>` or `alternative_agents/<h>/<M>`, else None."""
    if len(parts) == 2 and parts[0] == "results":
        return HOME_HARNESS
    if len(parts) == 3 and parts[0] == "alternative_agents":
        return HARNESSES.get(parts[1], parts[1].lower().replace("_", "-"))
    return None


_READ = ("metadata.json", "scores.json", f"{BENCHMARK}.json")
"""The only files of the layout read (the other benchmarks' results are not)."""


class _Files:
    """The layout's files, from a directory or a `.tar.gz`, by path relative to the layout's root."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.files: dict[PurePosixPath, bytes] = {}
        if path.is_dir():
            for f in sorted(path.rglob("*.json")):
                if f.name in _READ:
                    self.files[PurePosixPath(f.relative_to(path).as_posix())] = f.read_bytes()
        elif path.is_file():
            try:
                with tarfile.open(path, "r:*") as tar:
                    for m in tar.getmembers():
                        if m.isfile() and PurePosixPath(m.name).name in _READ:
                            data = tar.extractfile(m)
                            if data is not None:
                                self.files[PurePosixPath(m.name)] = data.read()
            except (tarfile.TarError, OSError, EOFError) as exc:
                raise OracleInputError(f"{path}: cannot read the archive: {exc}") from exc
        else:
            raise OracleInputError(f"{path}: no such OpenHands Index directory or archive")
        # The archive as released holds one top directory (`openhands-index-results/`).
        tops = {p.parts[0] for p in self.files if len(p.parts) > 1}
        if not any(p.parts[0] in ("results", "alternative_agents") for p in self.files) and len(tops) == 1:
            top = tops.pop()
            self.files = {PurePosixPath(*p.parts[1:]): b for p, b in self.files.items() if p.parts[0] == top}

    def digest(self) -> str:
        """sha256 of the file's bytes (archive), or of a `sha256sum`-style listing of the files read."""
        if self.path.is_file():
            return sha256_bytes(self.path.read_bytes())
        listing = hashlib.sha256()
        for rel, data in sorted(self.files.items()):
            listing.update(f"{sha256_bytes(data)}  {rel}\n".encode())
        return listing.hexdigest()

    def json(self, rel: PurePosixPath) -> Any:
        where = f"{self.path}: {rel}"
        try:
            text = io.TextIOWrapper(io.BytesIO(self.files[rel]), encoding="utf-8").read()
        except UnicodeDecodeError as exc:
            raise OracleInputError(f"{where}: cannot read: {exc}") from exc
        return parse_json(text, where)

    def model_dirs(self) -> Iterator[tuple[PurePosixPath, str]]:
        """Every model directory holding a `metadata.json`, sorted, with its harness."""
        for rel in sorted(self.files):
            if rel.name == "metadata.json" and (harness := _harness(rel.parent.parts)) is not None:
                yield rel.parent, harness


def _number(doc: dict[str, Any], key: str, where: str) -> float | None:
    value = doc.get(key)
    if value is None:
        return None
    return check_cost(value, f"{where}: {key}")


def _string(doc: dict[str, Any], key: str, where: str, *, required: bool = False) -> str | None:
    value = doc.get(key)
    if value is None and not required:
        return None
    return check_id(value, where, f"`{key}`")


def _run(files: _Files, model_dir: PurePosixPath, harness: str) -> OpenHandsRun | None:
    meta_where = f"{files.path}: {model_dir / 'metadata.json'}"
    meta = files.json(model_dir / "metadata.json")
    if not isinstance(meta, dict):
        raise OracleInputError(f"{meta_where}: expected an object")
    results_rel = model_dir / "instance_results" / f"{BENCHMARK}.json"
    if results_rel not in files.files:
        return None
    version = _string(meta, "agent_version", meta_where)
    scores_rel = model_dir / "scores.json"
    headline = None
    if scores_rel in files.files:
        scores = files.json(scores_rel)
        if not isinstance(scores, list):
            raise OracleInputError(f"{files.path}: {scores_rel}: expected a list of benchmark scores")
        for i, s in enumerate(scores):
            if isinstance(s, dict) and s.get("benchmark") == BENCHMARK:
                w = f"{files.path}: {scores_rel}[{i}]"
                version = _string(s, "agent_version", w) or version
                score = s.get("score")
                headline = None if score is None else check_cost(score, f"{w}: score")
    model = _string(meta, "model", meta_where, required=True)
    assert model is not None
    where = f"{files.path}: {results_rel}"
    doc = files.json(results_rel)
    if not isinstance(doc, dict):
        raise OracleInputError(f"{where}: expected an object of instance results")
    results: dict[str, tuple[bool | None, float | None]] = {}
    for task_id, d in doc.items():
        w = f"{where}: [{task_id!r}]"
        check_id(task_id, w)
        if not isinstance(d, dict):
            raise OracleInputError(f"{w}: expected an object, got {d!r}")
        r, c = d.get("resolved"), d.get("cost")
        results[task_id] = (
            None if r is None else check_resolved(r, f"{w}.resolved"),
            None if c is None else check_cost(c, f"{w}.cost"),
        )
    run = f"{harness}-{version or 'unversioned'}_{model_dir.name}"
    full = frozenset(t for t, (r, c) in results.items() if r is not None and c is not None)
    entry = RunEntry(
        run=run,
        name=model,
        tags=(f"Model: {model}",),
        harness=harness,
        agent_version=version,
        date=_string(meta, "release_date", meta_where),
        headline_resolved=headline,
        resolved_count=sum(r is True for r, _ in results.values()),
        task_ids=full,
        input_price=_number(meta, "input_price", meta_where),
        output_price=_number(meta, "output_price", meta_where),
        cost_measured=any(c for _, c in results.values()),
    )
    return OpenHandsRun(entry=entry, results=results, where=where)


@functools.lru_cache(maxsize=4)
def _load(path: Path, stamp: tuple[int, int]) -> tuple[_Files, list[OpenHandsRun]]:
    files = _Files(path)
    return files, _runs(files)


def _read(path: str | os.PathLike[str]) -> tuple[_Files, list[OpenHandsRun]]:
    """The layout at `path`, read once per process while the file is unchanged (a build asks for its
    entries, then its rows)."""
    p = Path(path).resolve()
    try:
        st = p.stat()
    except OSError as exc:
        raise OracleInputError(f"{path}: no such OpenHands Index directory or archive") from exc
    return _load(p, (st.st_mtime_ns, st.st_size))


def _runs(files: _Files) -> list[OpenHandsRun]:
    runs = [r for d, h in files.model_dirs() if (r := _run(files, d, h)) is not None]
    if not runs:
        raise OracleInputError(
            f"{files.path}: not an OpenHands Index layout: "
            f"no results/<Model>/instance_results/{BENCHMARK}.json"
        )
    seen: dict[str, str] = {}
    for r in runs:
        if r.entry.run in seen:
            raise OracleInputError(f"{r.where}: duplicate run {r.entry.run!r} (also {seen[r.entry.run]})")
        seen[r.entry.run] = r.where
    return runs


def read_openhands_entries(path: str | os.PathLike[str]) -> list[RunEntry]:
    """Every Verified run's entry, sorted by model directory."""
    return [r.entry for r in _read(path)[1]]


def read_openhands_resolved(path: str | os.PathLike[str]) -> dict[str, dict[str, bool]]:
    """Every Verified run's published resolved flags, run id -> {instance id: resolved}; a `null` flag
    is left out. Runs without costs (Codex CLI) are included: comparing runs needs the flags alone."""
    return {
        r.entry.run: {t: resolved for t, (resolved, _) in r.results.items() if resolved is not None}
        for r in _read(path)[1]
    }


def read_openhands(path: str | os.PathLike[str], *, runs: Collection[str] | None = None) -> LoadedSource:
    """Rows of every Verified run (only those in `runs`, when given); a field published as null is left
    out of its row, and a task with neither gives no row. A requested run without costs is refused."""
    files, all_runs = _read(path)
    rows: list[LongRow] = []
    for r in all_runs:
        run = r.entry.run
        if runs is not None and run not in runs:
            continue
        if not r.entry.cost_measured:
            raise OracleInputError(
                f"{r.where}: run {run!r} ({r.entry.harness}) records no cost (every task's cost is 0), "
                "so it cannot be a pool member"
            )
        for task_id, (resolved, cost) in r.results.items():
            if resolved is not None or cost is not None:
                rows.append(
                    LongRow(
                        task_id=task_id,
                        run=run,
                        resolved=resolved,
                        cost=cost,
                        where=f"{r.where}: [{task_id!r}]",
                    )
                )
    return LoadedSource(
        SourceFile(path=display_path(path), kind="openhands", sha256=files.digest()), rows, str(path)
    )
