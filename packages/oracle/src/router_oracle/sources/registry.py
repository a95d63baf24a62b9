"""The one registry of result-source kinds: `router-oracle`'s flags, the build's readers, the canonical
command line and the table's `SourceFile.kind` all come from `SOURCE_KINDS`.

A new source is one module in `router_oracle.sources` (its reader, and its run entries when it publishes
many runs), one `SourceKind` here, and its kind name added to `table.ResultSourceKind`: the table file's
`Literal` of source kinds cannot be derived from this registry, because table.py sits below the readers
registered here (each builds a `table.SourceFile`), so importing the registry there would be a cycle; the
check below fails until the two name the same kinds. The order of `SOURCE_KINDS` is the order in which a
build reads the sources and records them (tasks first, then each kind's files in the order given).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import get_args

from router_oracle.data_files import is_bundled, leaderboard_path, openhands_path
from router_oracle.infra.errors import OracleInputError
from router_oracle.run_labels import ReportLabel, report_label, report_run, trajectories_run
from router_oracle.sources.harness_report import read_harness_report
from router_oracle.sources.leaderboard import read_leaderboard, read_leaderboard_entries
from router_oracle.sources.long_table import read_long_table
from router_oracle.sources.openhands import read_openhands, read_openhands_entries
from router_oracle.sources.rows import LoadedSource
from router_oracle.sources.run_entry import RunEntry
from router_oracle.sources.trajectories import read_trajectories
from router_oracle.table import ResultSourceKind

PathLike = str | os.PathLike[str]

BUNDLED = "bundled"
"""The name that stands for a source kind's bundled file wherever its flag asks for a path."""


@dataclass
class ReadContext:
    """What a build knows while it reads its sources, kind after kind."""

    pool_runs: Collection[str]
    """The runs the pool names: a source's rows of other runs are not needed."""
    progress: bool = False
    """Progress bars on stderr for long reads."""
    report_labels: list[ReportLabel] = field(default_factory=list)
    """What the harness reports read so far say they are (trajectories are matched to them)."""


ReadFn = Callable[[Path, "str | None", ReadContext], tuple[LoadedSource, "str | None"]]
"""`(path, the --run given or None, context) -> (rows, the run they were assigned)`."""


@dataclass(frozen=True)
class SourceKind:
    """One kind of result source: how it is given on the command line and how it is read."""

    kind: ResultSourceKind
    """`SourceFile.kind` of the files it reads (the table's provenance)."""
    flag: str
    """`router-oracle build` / `candidates` flag that gives one file of it (repeatable)."""
    metavar: str
    """The flag's value in `--help`."""
    help: str
    """The flag's help."""
    read: ReadFn
    """The reader."""
    takes_run: bool = False
    """One run per file, named by a following `--run` (or inferred from the file)."""
    bundled: Callable[[], Path] | None = None
    """The bundled file that `bundled` stands for, if the package ships one."""
    bundled_license: str | None = None
    """SPDX id of the bundled file's licence."""
    entries: Callable[[Path], list[RunEntry]] | None = None
    """Run metadata of a file that publishes many runs (what candidates are grouped from)."""

    def path(self, spec: PathLike) -> Path:
        """`bundled` -> the bundled file; anything else is a path."""
        if str(spec) == BUNDLED:
            if self.bundled is None:
                raise OracleInputError(f"{self.flag} {BUNDLED}: there is no bundled {self.kind} file")
            return self.bundled()
        return Path(spec)

    def is_bundled(self, spec: PathLike) -> bool:
        """Whether `spec` names this kind's bundled file (by name or by path)."""
        return self.bundled is not None and (str(spec) == BUNDLED or is_bundled(spec))

    def license_of(self, spec: PathLike) -> str | None:
        """The licence of the file `spec`: known for the bundled file, else not stated (None)."""
        return self.bundled_license if self.is_bundled(spec) else None


def _leaderboard(path: Path, run: str | None, ctx: ReadContext) -> tuple[LoadedSource, str | None]:
    return read_leaderboard(path, runs=ctx.pool_runs), None


def _openhands(path: Path, run: str | None, ctx: ReadContext) -> tuple[LoadedSource, str | None]:
    return read_openhands(path, runs=ctx.pool_runs), None


def _harness_report(path: Path, run: str | None, ctx: ReadContext) -> tuple[LoadedSource, str | None]:
    resolved = report_run(path, run, ctx.pool_runs)
    label = report_label(path, ctx.pool_runs)
    if label is not None:
        ctx.report_labels.append(label)
    return read_harness_report(path, run=resolved), resolved


def _trajectories(path: Path, run: str | None, ctx: ReadContext) -> tuple[LoadedSource, str | None]:
    source = read_trajectories(path, run=run or "", progress=ctx.progress)
    resolved = trajectories_run(path, run, source.model, ctx.report_labels)
    return (source if resolved == run else source.with_run(resolved)), resolved


def _long_table(path: Path, run: str | None, ctx: ReadContext) -> tuple[LoadedSource, str | None]:
    return read_long_table(path), None


SOURCE_KINDS: tuple[SourceKind, ...] = (
    SourceKind(
        kind="leaderboard",
        flag="--leaderboard",
        metavar="F",
        help=f"swe-bench.com leaderboard JSON[.gz] ('{BUNDLED}' = the bundled bash-only board, CC BY-NC 4.0)",
        read=_leaderboard,
        bundled=leaderboard_path,
        bundled_license="CC-BY-NC-4.0",
        entries=read_leaderboard_entries,
    ),
    SourceKind(
        kind="openhands",
        flag="--openhands",
        metavar="PATH",
        help=f"OpenHands Index results, a directory or its .tar.gz ('{BUNDLED}' = the bundled 2026-06-30 "
        "release, MIT): every harness's SWE-bench Verified runs",
        read=_openhands,
        bundled=openhands_path,
        bundled_license="MIT",
        entries=read_openhands_entries,
    ),
    SourceKind(
        kind="harness_report",
        flag="--harness-report",
        metavar="F",
        help="SWE-bench harness run report; named <model>.<run>.json for a pool run, it needs no --run",
        read=_harness_report,
        takes_run=True,
    ),
    SourceKind(
        kind="trajectories",
        flag="--trajectories",
        metavar="DIR",
        help="mini-SWE-agent *.traj.json dir; needs no --run when a --harness-report names its model",
        read=_trajectories,
        takes_run=True,
    ),
    SourceKind(
        kind="long_table",
        flag="--long-table",
        metavar="F",
        help="CSV/JSONL long table",
        read=_long_table,
    ),
)
"""Every source kind, in the order a build reads and records them."""

KINDS_BY_NAME: dict[str, SourceKind] = {k.kind: k for k in SOURCE_KINDS}
"""`SourceFile.kind` -> its source kind."""

KINDS_BY_FLAG: dict[str, SourceKind] = {k.flag: k for k in SOURCE_KINDS}
"""Command-line flag -> its source kind."""

assert set(KINDS_BY_NAME) == set(get_args(ResultSourceKind)), (
    "SOURCE_KINDS and table.ResultSourceKind differ: a new source kind's name goes into both (the table "
    "file's Literal cannot import this registry, whose readers build table.SourceFile)"
)


@dataclass(frozen=True)
class SourceSpec:
    """One source as given: its kind, its path (or `bundled`) and, for a one-run kind, the `--run`."""

    kind: str
    """`SourceKind.kind`."""
    path: str
    """The path as given, or `bundled`."""
    run: str | None = None
    """The run it holds, as given (one-run kinds only; None: inferred from the file)."""

    @property
    def source_kind(self) -> SourceKind:
        return KINDS_BY_NAME[self.kind]
