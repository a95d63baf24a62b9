"""Per-task numeric features from a pre-pass (`--task-features FILE`): the file format, its strict reader
and writer, and their standardisation on train tasks only.

The format, one row per task keyed by `instance_id`, every other column a number:
- CSV (`.csv`, `.csv.gz`): a header line `instance_id,COLUMN,...`, then one line per task;
- JSONL (`.jsonl`, `.jsonl.gz`): one object per line, `{"instance_id": "...", "COLUMN": number, ...}`,
  every line with the first line's keys.
An empty CSV cell or a JSON `null` is a missing value (a pre-pass that got no valid answer,
`router-train analyze`): the file reads, but a router asking for that task's column refuses it. A
non-numeric value, `nan` or `inf`, a duplicate or missing `instance_id` is a bad row: one line naming the
file and the row. The names `bundled-issue`, `bundled-repo` and `bundled` select the bundled judged
features (`router_train/data/README.md`): the 15 issue-only columns, the 8 repository columns, all 23.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from router_oracle.infra.atomic_file import write_bytes_atomic
from router_oracle.infra.frozen_model import FrozenModel

DATA_DIR = Path(__file__).parent / "data"
"""The package's data directory."""
BUNDLED_FILE = DATA_DIR / "swebench-verified-judged-features.csv.gz"
"""The bundled judged features of the 500 SWE-bench Verified tasks (MIT, Agent Psychometrics)."""

ID_COLUMN = "instance_id"
"""The key column."""

ISSUE_COLUMNS: tuple[str, ...] = (
    "solution_hint",
    "problem_clarity",
    "domain_knowledge_required",
    "logical_reasoning_required",
    "atypicality",
    "verification_difficulty",
    "standard_pattern_available",
    "error_specificity",
    "reproduction_clarity",
    "expected_behavior_clarity",
    "debugging_complexity",
    "codebase_scope",
    "information_completeness",
    "similar_issue_likelihood",
    "side_effect_risk",
)
"""The 15 features judged from the issue alone (what `router-train analyze` writes)."""
REPO_COLUMNS: tuple[str, ...] = (
    "fix_localization",
    "entry_point_clarity",
    "change_blast_radius",
    "environment_setup_complexity",
    "implementation_language_complexity",
    "testing_infrastructure_quality",
    "dependency_complexity",
    "codebase_scale",
)
"""The 8 features an agent judged after exploring the task's repository."""

BUNDLED: dict[str, tuple[str, ...]] = {
    "bundled-issue": ISSUE_COLUMNS,
    "bundled-repo": REPO_COLUMNS,
    "bundled": ISSUE_COLUMNS + REPO_COLUMNS,
}
"""`--task-features NAME`: the bundled file's columns each name selects."""

_SUFFIXES = (".csv", ".csv.gz", ".jsonl", ".jsonl.gz")


class TaskFeaturesError(ValueError):
    """A task-features file or name that cannot be used (one line naming the file and row)."""


@dataclass(frozen=True)
class TaskFeatureTable:
    """A task-features file once read: each task's value of each column (NaN where missing)."""

    source: str
    """The file or bundled name as given (messages name it)."""
    columns: tuple[str, ...]
    """The numeric columns, in file order."""
    values: Mapping[str, tuple[float, ...]]
    """Per instance id, one value per column (NaN: missing)."""

    def matrix(self, task_ids: Sequence[str], columns: Sequence[str] | None = None) -> np.ndarray:
        """(tasks, columns) float64 of `columns` (default: all) for `task_ids`, in order; a task without
        a row, or with a missing value in one of `columns`, is refused (one line)."""
        names = list(self.columns if columns is None else columns)
        absent = [c for c in names if c not in self.columns]
        if absent:
            raise TaskFeaturesError(
                f"task features {self.source}: no column {absent[0]!r} (it has: {', '.join(self.columns)})"
            )
        index = [self.columns.index(c) for c in names]
        out = np.empty((len(task_ids), len(names)), dtype=np.float64)
        for r, task_id in enumerate(task_ids):
            row = self.values.get(task_id)
            if row is None:
                raise TaskFeaturesError(f"task features {self.source}: no row for task {task_id!r}")
            picked = [row[i] for i in index]
            missing = [c for c, v in zip(names, picked, strict=True) if math.isnan(v)]
            if missing:
                raise TaskFeaturesError(
                    f"task features {self.source}: task {task_id!r} has no value for {missing[0]!r}"
                )
            out[r] = picked
        return out

    def check_covers(self, task_ids: Sequence[str], columns: Sequence[str] | None = None) -> None:
        """Refuse (one line) unless every task has every column: before any fit starts."""
        self.matrix(task_ids, columns)


def _open_text(path: Path) -> str:
    data = path.read_bytes()
    if path.name.endswith(".gz"):
        data = gzip.decompress(data)
    return data.decode("utf-8")


def _number(value: object, where: str, column: str) -> float:
    """A cell's value: a finite number, NaN for a missing one (empty cell, null)."""
    if value is None or value == "":
        return math.nan
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise TaskFeaturesError(f"{where}: {column} is {value!r}, not a number")
    try:
        number = float(value)
    except ValueError:
        raise TaskFeaturesError(f"{where}: {column} is {value!r}, not a number") from None
    if not math.isfinite(number):
        raise TaskFeaturesError(f"{where}: {column} is {value!r}, not a finite number")
    return number


def _check_columns(names: Sequence[str], where: str) -> tuple[str, ...]:
    if ID_COLUMN not in names:
        raise TaskFeaturesError(f"{where}: no {ID_COLUMN!r} column")
    columns = [c for c in names if c != ID_COLUMN]
    dup = sorted({c for c in names if names.count(c) > 1})
    if dup:
        raise TaskFeaturesError(f"{where}: column {dup[0]!r} appears twice")
    if not columns or any(not c.strip() for c in columns):
        raise TaskFeaturesError(f"{where}: needs named numeric columns beside {ID_COLUMN!r}")
    return tuple(columns)


def _rows_csv(text: str, shown: str) -> tuple[tuple[str, ...], list[tuple[int, dict[str, object]]]]:
    reader = csv.reader(io.StringIO(text))
    header = next(reader, None)
    if header is None:
        raise TaskFeaturesError(f"{shown}: empty file")
    columns = _check_columns(header, f"{shown}, header")
    rows: list[tuple[int, dict[str, object]]] = []
    for line, cells in enumerate(reader, start=2):
        if len(cells) != len(header):
            raise TaskFeaturesError(f"{shown}, row {line}: {len(cells)} cells, the header has {len(header)}")
        rows.append((line, dict(zip(header, cells, strict=True))))
    return columns, rows


def _rows_jsonl(text: str, shown: str) -> tuple[tuple[str, ...], list[tuple[int, dict[str, object]]]]:
    columns: tuple[str, ...] | None = None
    keys: set[str] = set()
    rows = []
    for line, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise TaskFeaturesError(f"{shown}, row {line}: not JSON ({exc.msg})") from None
        if not isinstance(obj, dict):
            raise TaskFeaturesError(f"{shown}, row {line}: not a JSON object")
        if columns is None:
            columns = _check_columns(list(obj), f"{shown}, row {line}")
            keys = set(obj)
        elif set(obj) != keys:
            odd = sorted(set(obj) ^ keys)
            raise TaskFeaturesError(f"{shown}, row {line}: keys differ from the first row's ({odd[0]!r})")
        rows.append((line, obj))
    if columns is None:
        raise TaskFeaturesError(f"{shown}: empty file")
    return columns, rows


def _check_suffix(path: Path, shown: str) -> None:
    if not path.name.endswith(_SUFFIXES):
        raise TaskFeaturesError(
            f"task features {shown}: expected a .csv or .jsonl file (optionally .gz), or one of: "
            f"{', '.join(BUNDLED)}"
        )


def read_task_features(path: str | os.PathLike[str], shown: str | None = None) -> TaskFeatureTable:
    """Read a task-features file (the module's format); any bad row is one line naming file and row."""
    p = Path(path)
    shown = shown or str(path)
    _check_suffix(p, shown)
    try:
        text = _open_text(p)
    except (OSError, EOFError, gzip.BadGzipFile, UnicodeDecodeError) as exc:
        raise TaskFeaturesError(f"task features {shown}: cannot read: {exc}") from None
    parse = _rows_jsonl if ".jsonl" in p.name else _rows_csv
    columns, rows = parse(text, shown)
    values: dict[str, tuple[float, ...]] = {}
    for line, row in rows:
        where = f"{shown}, row {line}"
        task_id = row.get(ID_COLUMN)
        if not isinstance(task_id, str) or not task_id.strip():
            raise TaskFeaturesError(f"{where}: no {ID_COLUMN}")
        if task_id in values:
            raise TaskFeaturesError(f"{where}: task {task_id!r} appears twice")
        values[task_id] = tuple(_number(row[c], where, c) for c in columns)
    return TaskFeatureTable(shown, columns, values)


@lru_cache(maxsize=16)
def _cached(path: str, shown: str, stamp: tuple[int, int]) -> TaskFeatureTable:
    # Keyed on the file's size and mtime too: cross-validation featurises from the same file many times.
    return read_task_features(path, shown)


def load_task_features(spec: str) -> TaskFeatureTable:
    """A file path or a bundled name (`BUNDLED`), read once per process."""
    if spec in BUNDLED:
        table = _cached(str(BUNDLED_FILE), spec, _stamp(BUNDLED_FILE, spec))
        columns = BUNDLED[spec]
        index = [table.columns.index(c) for c in columns]
        values = {k: tuple(v[i] for i in index) for k, v in table.values.items()}
        return TaskFeatureTable(spec, columns, values)
    path = Path(spec)
    _check_suffix(path, spec)
    return _cached(str(path.resolve()), spec, _stamp(path, spec))


def _stamp(path: Path, shown: str) -> tuple[int, int]:
    try:
        st = path.stat()
    except OSError as exc:
        raise TaskFeaturesError(f"task features {shown}: cannot read: {exc.strerror or exc}") from None
    return st.st_size, st.st_mtime_ns


def dumps_task_features(
    columns: Sequence[str], rows: Mapping[str, Sequence[float | None]], *, jsonl: bool
) -> str:
    """The format's text, rows sorted by instance id (None: a missing value): what `read_task_features`
    reads back."""
    out = io.StringIO()
    ids = sorted(rows)
    if jsonl:
        for task_id in ids:
            obj = {ID_COLUMN: task_id, **dict(zip(columns, rows[task_id], strict=True))}
            out.write(json.dumps(obj) + "\n")
        return out.getvalue()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([ID_COLUMN, *columns])
    for task_id in ids:
        writer.writerow([task_id, *("" if v is None else _cell(v) for v in rows[task_id])])
    return out.getvalue()


def _cell(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def write_task_features(
    path: str | os.PathLike[str], columns: Sequence[str], rows: Mapping[str, Sequence[float | None]]
) -> None:
    """Write the rows atomically in the format the path's suffix names (`.csv`/`.jsonl`, optionally
    `.gz`; gzip without a timestamp, so the same rows give the same bytes)."""
    name = Path(path).name
    if not name.endswith(_SUFFIXES):
        raise TaskFeaturesError(f"{path}: expected a .csv or .jsonl output file (optionally .gz)")
    data = dumps_task_features(columns, rows, jsonl=".jsonl" in name).encode("utf-8")
    if name.endswith(".gz"):
        data = gzip.compress(data, mtime=0)
    write_bytes_atomic(path, data)


class FeatureScaling(FrozenModel):
    """Task features standardised on train tasks only: what a checkpoint stores so that routing
    featurises a new task exactly as training did (and refuses one without the features)."""

    source: str
    """The file or bundled name the router was fitted with (shown in messages; routing may read another
    file with the same columns)."""
    columns: list[str]
    """The feature columns, in the router's column order."""
    mean: list[float]
    """Each column's mean over the train tasks."""
    scale: list[float]
    """Each column's standard deviation over the train tasks (1.0 for a column constant there)."""

    @classmethod
    def fit(cls, table: TaskFeatureTable, train_ids: Sequence[str]) -> FeatureScaling:
        """Mean and standard deviation of every column over `train_ids` (each task once)."""
        ids = sorted(set(train_ids))
        x = table.matrix(ids)
        std = x.std(axis=0)
        return cls(
            source=table.source,
            columns=list(table.columns),
            mean=[float(v) for v in x.mean(axis=0)],
            scale=[float(v) if v > 0 else 1.0 for v in std],
        )

    @classmethod
    def fit_source(cls, source: str, train_ids: Sequence[str]) -> FeatureScaling:
        """`fit` on the file or bundled name `source` (`load_task_features`)."""
        return cls.fit(load_task_features(source), train_ids)

    def read(self, task_ids: Sequence[str], source: str | None = None) -> np.ndarray:
        """The standardised (tasks, columns) matrix of `task_ids`, read from `source` (None: the file or
        bundled name they were fitted on); a task without them is refused (`TaskFeatureTable.matrix`)."""
        return self.transform(load_task_features(source or self.source), task_ids)

    def transform(self, table: TaskFeatureTable, task_ids: Sequence[str]) -> np.ndarray:
        """The standardised (tasks, columns) matrix of `task_ids` from `table`."""
        x = table.matrix(task_ids, self.columns)
        out: np.ndarray = (x - np.asarray(self.mean)) / np.asarray(self.scale)
        return out
