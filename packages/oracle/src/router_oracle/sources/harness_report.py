"""SWE-bench harness run report: resolved flags only, for one run.

Format: the JSON that `swebench.harness.reporting.make_run_report` writes
(`<model>.<run_id>.json`): counts (`total_instances`, `submitted_instances`, `completed_instances`,
`resolved_instances`, ...) and sorted id lists `completed_ids`, `incomplete_ids`, `empty_patch_ids`,
`submitted_ids`, `resolved_ids`, `unresolved_ids`, `error_ids`, plus `schema_version`.

As in SWE-bench's own scoring, a task is resolved iff it is in `resolved_ids`; `unresolved_ids`,
`error_ids` and `empty_patch_ids` count as not resolved. `incomplete_ids` (never attempted) give no
row, so a pool run that needs them fails loudly as a model missing tasks.
"""

from __future__ import annotations

import os

from router_oracle.data_files import display_path
from router_oracle.infra.errors import OracleInputError
from router_oracle.sources.rows import LoadedSource, LongRow, check_id, parse_json, read_source
from router_oracle.table import SourceFile

OUTCOME_KEYS: dict[str, bool] = {
    "resolved_ids": True,
    "unresolved_ids": False,
    "error_ids": False,
    "empty_patch_ids": False,
}
"""Which id list means which resolved flag (`resolved_ids` and `unresolved_ids` are required)."""


def read_harness_report(path: str | os.PathLike[str], *, run: str) -> LoadedSource:
    """Rows `(task, run, resolved, cost=None)` for every task the report judged."""
    name = str(path)
    text, digest = read_source(path)
    doc = parse_json(text, name)
    if not isinstance(doc, dict) or "resolved_ids" not in doc or "unresolved_ids" not in doc:
        raise OracleInputError(
            f"{name}: not a SWE-bench harness run report (needs `resolved_ids` and `unresolved_ids`)"
        )
    rows: list[LongRow] = []
    first: dict[str, str] = {}
    for key, resolved in OUTCOME_KEYS.items():
        ids = doc.get(key, [])
        if not isinstance(ids, list):
            raise OracleInputError(f"{name}: `{key}` must be a list of instance ids")
        for i, task_id in enumerate(ids):
            where = f"{name}: {key}[{i}]"
            check_id(task_id, where)
            if task_id in first:
                raise OracleInputError(f"{where}: duplicate row: {task_id!r} is also in {first[task_id]}")
            first[task_id] = f"{key}[{i}]"
            rows.append(LongRow(task_id=task_id, run=run, resolved=resolved, cost=None, where=where))
    return LoadedSource(SourceFile(path=display_path(path), kind="harness_report", sha256=digest), rows, name)
