"""A plain long table, CSV or JSONL (optionally gzipped): one row per (task, run).

Columns (CSV header / JSON keys):
- `task_id` or `instance_id` (exactly one of them): the SWE-bench instance id;
- `run`: the run id a pool model lists; when absent, `model` is used as the run id;
- `model` (optional): the pool model id; if given, it must be the pool model that owns `run`;
- `resolved` (optional, may be empty): JSON `true`/`false`; in CSV `true`/`false` (any case) or `1`/`0`;
- `cost` (optional, may be empty): USD, a finite number >= 0.
At least one of `resolved` / `cost` must be a column. Format by suffix: `.csv`, `.jsonl` / `.ndjson`.
"""

from __future__ import annotations

import csv
import io
import math
import os
from pathlib import Path
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
from router_oracle.table import SourceFile

_CSV_TRUE = {"true", "1"}
_CSV_FALSE = {"false", "0"}


def _format(path: Path) -> str:
    suffixes = [s.lower() for s in path.suffixes if s.lower() != ".gz"]
    last = suffixes[-1] if suffixes else ""
    if last == ".csv":
        return "csv"
    if last in (".jsonl", ".ndjson"):
        return "jsonl"
    raise OracleInputError(f"{path}: unknown long-table format (use .csv, .jsonl or .ndjson, optionally .gz)")


def _csv_resolved(value: str, where: str) -> bool | None:
    v = value.strip().lower()
    if v == "":
        return None
    if v in _CSV_TRUE:
        return True
    if v in _CSV_FALSE:
        return False
    raise OracleInputError(f"{where}: resolved must be true/false (or 1/0), got {value!r}")


def _csv_cost(value: str, where: str) -> float | None:
    v = value.strip()
    if v == "":
        return None
    try:
        cost = float(v)
    except ValueError:
        raise OracleInputError(f"{where}: cost must be a number, got {value!r}") from None
    if not math.isfinite(cost) or cost < 0:
        raise OracleInputError(f"{where}: cost must be finite and >= 0, got {value!r}")
    return cost


def _row(record: dict[str, Any], where: str, *, from_csv: bool) -> LongRow:
    id_keys = [k for k in ("task_id", "instance_id") if k in record]
    if len(id_keys) != 1:
        raise OracleInputError(f"{where}: needs exactly one of `task_id` / `instance_id`")
    task_id = check_id(record[id_keys[0]], where)
    model = record.get("model")
    model = None if model in (None, "") else check_id(model, where, "model")
    run_value = record.get("run")
    run = check_id(model if run_value in (None, "") else run_value, where, "run (or model)")
    if "resolved" not in record and "cost" not in record:
        raise OracleInputError(f"{where}: needs a `resolved` or a `cost` column")
    raw_resolved, raw_cost = record.get("resolved"), record.get("cost")
    if from_csv:
        resolved = _csv_resolved(raw_resolved or "", where)
        cost = _csv_cost(raw_cost or "", where)
    else:
        resolved = None if raw_resolved is None else check_resolved(raw_resolved, where)
        cost = None if raw_cost is None else check_cost(raw_cost, where)
    if resolved is None and cost is None:
        raise OracleInputError(f"{where}: row has neither resolved nor cost")
    return LongRow(task_id=task_id, run=run, resolved=resolved, cost=cost, where=where, model=model)


def read_long_table(path: str | os.PathLike[str]) -> LoadedSource:
    """Rows of a CSV or JSONL long table; errors name the file and line."""
    p = Path(path)
    fmt = _format(p)
    text, digest = read_source(p)
    rows: list[LongRow] = []
    if fmt == "csv":
        try:
            reader = csv.DictReader(io.StringIO(text, newline=""), strict=True)
            if not reader.fieldnames:
                raise OracleInputError(f"{path}: empty CSV (no header)")
            for record in reader:
                where = f"{path}: line {reader.line_num}"
                if None in record or any(v is None for v in record.values()):
                    raise OracleInputError(f"{where}: malformed CSV: wrong number of fields")
                rows.append(_row(record, where, from_csv=True))
        except csv.Error as exc:
            raise OracleInputError(f"{path}: malformed CSV: {exc}") from exc
    else:
        for n, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            where = f"{path}: line {n}"
            record = parse_json(line, where)
            if not isinstance(record, dict):
                raise OracleInputError(f"{where}: expected a JSON object per line")
            rows.append(_row(record, where, from_csv=False))
    return LoadedSource(SourceFile(path=display_path(p), kind="long_table", sha256=digest), rows, str(path))
