"""The one consistency check of an oracle table, run wherever a table is read or written.

`load_table` / `loads_table` run it, so every consumer (the env, `router-train local` and `evaluate`,
`router-oracle stats`) refuses the same tables with the same message; `build_table` runs it before it
writes. The schema (`router_oracle.table`) checks each value; this checks the table as a whole:

- the pool has at least two models (a router needs a choice);
- there is at least one task, and no task id appears twice;
- every task has an outcome for exactly the pool's models (none missing, none extra), each from
  exactly that model's runs in pool order;
- the stored `oracle`, `best` and `all_failed` are what the tie rule (`router_oracle.tie_rule`, the
  same code that built them) gives for the task's own numbers.

It lives apart from `table` because the rule imports the schema; so does reading a table file
(`load_table` / `loads_table`), which runs the check.
"""

from __future__ import annotations

import os

from pydantic import ValidationError

from router_oracle.infra.errors import OracleInputError
from router_oracle.infra.text_file import read_text_file
from router_oracle.infra.validation_message import one_line
from router_oracle.table import SCHEMA_VERSION, OracleTable, TableError
from router_oracle.tie_rule import OraclePick, pick_for_task

MIN_POOL_MODELS = 2
"""A pool of one model leaves a router nothing to choose."""


def check_table(table: OracleTable, *, origin: str) -> list[OraclePick]:
    """Raise `TableError` (`origin: task ID: problem`) unless `table` is consistent; the picks, in task order.

    `origin` names the file (or whatever the table came from) in the message.
    """
    ids = table.pool.ids
    if len(ids) < MIN_POOL_MODELS:
        raise TableError(
            f"{origin}: pool {table.pool.name!r} has {len(ids)} model ({', '.join(ids)}); "
            f"a router needs at least {MIN_POOL_MODELS} to choose between"
        )
    if not table.tasks:
        raise TableError(f"{origin}: the table has no tasks")
    first: dict[str, int] = {}
    pool = set(ids)
    picks = []
    for i, t in enumerate(table.tasks):
        where = f"{origin}: task {t.instance_id}"
        if t.instance_id in first:
            raise TableError(f"{where}: duplicate task id (tasks[{first[t.instance_id]}] and tasks[{i}])")
        first[t.instance_id] = i
        missing = [m for m in ids if m not in t.per_model]
        extra = sorted(set(t.per_model) - pool)
        if missing:
            raise TableError(f"{where}: per_model lacks pool model(s) {missing}")
        if extra:
            raise TableError(f"{where}: per_model has model(s) {extra} that are not in the pool {ids}")
        for m in table.pool.models:
            runs = [r.run for r in t.per_model[m.id].runs]
            if runs != m.runs:
                raise TableError(f"{where}: model {m.id!r} has runs {runs}, the pool lists {m.runs}")
        try:
            pick = pick_for_task(table.pool, table.rule, t.per_model)
        except (OracleInputError, ValueError) as exc:
            raise TableError(f"{where}: {exc}") from exc
        if (t.oracle, t.best, t.all_failed) != (pick.oracle, pick.best, pick.all_failed):
            raise TableError(
                f"{where}: stored oracle {t.oracle!r} (best {t.best}, all_failed {t.all_failed}) "
                f"disagrees with the tie rule, which picks {pick.oracle!r} (best {pick.best}, "
                f"all_failed {pick.all_failed})"
            )
        picks.append(pick)
    return picks


def loads_table(text: str, *, origin: str = "<string>") -> OracleTable:
    """Parse and check a table (`check_table`); errors name `origin`, task and problem."""
    try:
        table = OracleTable.model_validate_json(text)
    except ValidationError as exc:
        raise TableError(
            f"{origin}: not a valid oracle table (schema v{SCHEMA_VERSION}): {one_line(exc)}"
        ) from exc
    check_table(table, origin=origin)
    return table


def load_table(path: str | os.PathLike[str]) -> OracleTable:
    """Read, validate and check a table file (see `loads_table`); errors name the file."""
    return loads_table(read_text_file(path, "oracle table", TableError), origin=str(path))
