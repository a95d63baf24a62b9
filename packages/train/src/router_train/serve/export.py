"""What `serve` recorded, read back from its store or its decision log, and its outcomes as a long table.

The long table is the format `router-oracle build --long-table` reads
(`router_oracle.sources.long_table`): one JSON line per outcome, `task_id` (the task's `instance_id`),
`model` (the pool model that served it, also its run id), `resolved`, `cost` (USD; null when neither the
feedback nor the proxy priced it). Rows sorted by task id and model: the same records give the same bytes.
"""

from __future__ import annotations

import json
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from router_oracle.text_file import read_text_file
from router_oracle.validation_message import one_line
from router_train.serve.records import DecisionRecord, OutcomeRecord, RecordError, parse_record
from router_train.serve.store_api import StoreUnavailable, store_url
from router_train.serve.store_postgres import read_rows

STORE_SUFFIXES = (".sqlite", ".sqlite3", ".db")
"""A file with one of these suffixes is read as serve's store; anything else as its decision log."""


class FeedbackInputError(ValueError):
    """A store or log that cannot be read, or outcomes that do not make one long table (one line)."""


@dataclass(frozen=True)
class ServeRecords:
    """A store's or a log's decisions and outcomes, each by task key."""

    decisions: dict[str, DecisionRecord]
    outcomes: dict[str, OutcomeRecord]


def read_log(path: str | os.PathLike[str]) -> ServeRecords:
    """The decision log's decisions (the last per task: a task routed again replaces its decision) and
    outcomes. A last line without its newline (the proxy killed mid-write) is skipped."""
    text = read_text_file(path, "decision log", FeedbackInputError)
    lines = text.split("\n")
    lines.pop()  # "" after the last newline, or an unterminated last line
    decisions: dict[str, DecisionRecord] = {}
    outcomes: dict[str, OutcomeRecord] = {}
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = parse_record(line, f"{path}: line {n}")
        except RecordError as exc:
            raise FeedbackInputError(str(exc)) from None
        if isinstance(record, DecisionRecord) and record.model is not None:
            decisions[record.task] = record
        elif isinstance(record, OutcomeRecord):
            if record.task in outcomes:
                raise FeedbackInputError(f"{path}: line {n}: a second outcome for task {record.task}")
            outcomes[record.task] = record
    return ServeRecords(decisions, outcomes)


def read_store(path: str | os.PathLike[str]) -> ServeRecords:
    """The store's decisions and outcomes, read through a read-only connection (a running proxy may
    hold the store; nothing in it changes)."""
    p = Path(path)
    if not p.is_file():
        raise FeedbackInputError(f"{path}: no such store file")
    try:
        db = sqlite3.connect(f"{p.resolve().as_uri()}?mode=ro", uri=True)
        try:
            tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if not {"decisions", "outcomes"} <= tables:
                raise FeedbackInputError(f"{path}: not a serve store with outcomes (no outcomes table)")
            decisions = db.execute("SELECT record FROM decisions WHERE record IS NOT NULL").fetchall()
            outcomes = db.execute("SELECT record FROM outcomes").fetchall()
        finally:
            db.close()
    except sqlite3.DatabaseError as exc:
        raise FeedbackInputError(f"{path}: not a serve store: {exc}") from None
    try:
        ds = [DecisionRecord.model_validate_json(r[0]) for r in decisions]
        os_ = [OutcomeRecord.model_validate_json(r[0]) for r in outcomes]
    except ValidationError as exc:
        raise FeedbackInputError(f"{path}: a stored record is not serve's: {one_line(exc)}") from None
    return ServeRecords({d.task: d for d in ds}, {o.task: o for o in os_})


def read_postgres(url: str) -> ServeRecords:
    """A PostgreSQL store's decisions and outcomes (each task's latest revision)."""
    try:
        decisions, history = read_rows(url)
    except (StoreUnavailable, ValidationError) as exc:
        raise FeedbackInputError(str(exc) if isinstance(exc, StoreUnavailable) else one_line(exc)) from None
    return ServeRecords({d.task: d for d in decisions}, {o.task: o for o in history})


def read_records(path: str | os.PathLike[str]) -> ServeRecords:
    """A PostgreSQL store (`postgresql://...`), a SQLite store (`.sqlite`, `.sqlite3`, `.db`) or a
    decision log (anything else)."""
    url = store_url(path)
    if url is not None:
        return read_postgres(url)
    if Path(path).suffix.lower() in STORE_SUFFIXES:
        return read_store(path)
    return read_log(path)


def long_table_lines(outcomes: list[OutcomeRecord], source: str) -> str:
    """The outcomes as long-table JSON lines; two outcomes of one (task id, model) are refused."""
    rows: dict[tuple[str, str], OutcomeRecord] = {}
    for o in outcomes:
        key = (o.instance_id, o.model)
        if key in rows:
            raise FeedbackInputError(
                f"{source}: tasks {rows[key].task} and {o.task} are both {o.instance_id!r} on {o.model!r}: "
                "a long table holds one outcome per task and model"
            )
        rows[key] = o
    out = []
    for (task_id, model), o in sorted(rows.items()):
        row = {"task_id": task_id, "model": model, "resolved": o.resolved, "cost": o.cost}
        out.append(json.dumps(row, separators=(",", ":"), ensure_ascii=False) + "\n")
    return "".join(out)
