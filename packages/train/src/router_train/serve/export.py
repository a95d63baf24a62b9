"""What `serve` recorded, read back from its store or its decision log, and its outcomes as a long table.

The long table is the format `router-oracle build --long-table` reads
(`router_oracle.sources.long_table`): one JSON line per outcome, `task_id` (the task's `instance_id`),
`model` (the pool model that served it, also its run id), `resolved`, `cost` (USD; null when neither the
feedback nor the proxy priced it). Rows sorted by task id and model: the same records give the same bytes.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from router_oracle.infra.validation_message import one_line
from router_train.serve.records import DecisionRecord, OutcomeRecord, RecordError, parse_record
from router_train.serve.store_api import StoreSchemaError, StoreUnavailable
from router_train.serve.store_read import read_rows
from router_train.serve.store_url import StoreLocation

STORE_SUFFIXES = (".sqlite", ".sqlite3", ".db")
"""A file with one of these suffixes is read as serve's store; anything else as its decision log."""


class FeedbackInputError(ValueError):
    """A store or log that cannot be read, or outcomes that do not make one long table (one line)."""


@dataclass(frozen=True)
class ServeRecords:
    """A store's or a log's decisions and outcomes (each task's latest revision), each by task key."""

    decisions: dict[str, DecisionRecord]
    outcomes: dict[str, OutcomeRecord]
    where: dict[str, str] = field(default_factory=dict)
    """Task key -> where its outcome was read (`LOG: line N`, `STORE: task KEY`), for messages."""
    torn: tuple[int, ...] = ()
    """Lines of the log a crash cut mid-write, skipped (`read_log`'s rule); empty for a store."""
    history: tuple[OutcomeRecord, ...] = ()
    """Every outcome revision read, by (task, revision)."""


def _torn_lines(lines: list[bytes], terminated: bool) -> set[int]:
    """The torn-line rule, the one place it is spelt: a line is torn (a crash cut it mid-write) when it is
    the file's last line without its newline, or when the next line is serve's fence (`FenceRecord`,
    written on reopening such a log). Line numbers from 1."""
    torn = set()
    if lines and not terminated:
        torn.add(len(lines))
    for n, line in enumerate(lines[1:], start=2):
        if line.startswith(b'{"event":"fence"'):
            torn.add(n - 1)
    return torn


def _decode(line: bytes, where: str) -> str:
    try:
        return line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FeedbackInputError(f"{where}: not UTF-8 (byte {exc.start}: {exc.reason})") from None


Kept = dict[tuple[str, int], tuple[OutcomeRecord, str]]
"""(task, revision) -> the outcome and where it was first read."""


def _keep_outcome(kept: Kept, o: OutcomeRecord, where: str) -> None:
    """Keep one outcome revision; the same revision twice must be the same report."""
    key = (o.task, o.revision)
    if key in kept:
        first, at = kept[key]
        if first.model_dump(exclude={"time"}) != o.model_dump(exclude={"time"}):
            raise FeedbackInputError(
                f"{where}: a second, different outcome for task {o.task} revision {o.revision} "
                f"(the first at {at})"
            )
        return
    kept[key] = (o, where)


def read_log(path: str | os.PathLike[str]) -> ServeRecords:
    """The decision log's decisions (the last per task: a task routed again replaces its decision) and
    outcomes (per task the highest revision). A torn line (`_torn_lines`) is skipped and listed in
    `torn`; any other line that is not one of serve's records is refused, naming file and line."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise FeedbackInputError(f"{path}: cannot read decision log: {exc.strerror}") from None
    lines = data.split(b"\n")
    terminated = lines[-1] == b""
    if terminated:
        lines.pop()
    torn = _torn_lines(lines, terminated)
    decisions: dict[str, DecisionRecord] = {}
    kept: Kept = {}
    for n, raw in enumerate(lines, start=1):
        if n in torn or not raw.strip():
            continue
        where = f"{path}: line {n}"
        try:
            record = parse_record(_decode(raw, where), where)
        except RecordError as exc:
            raise FeedbackInputError(str(exc)) from None
        if isinstance(record, DecisionRecord) and record.model is not None:
            decisions[record.task] = record
        elif isinstance(record, OutcomeRecord):
            _keep_outcome(kept, record, where)
    history = tuple(o for _, (o, _) in sorted(kept.items()))
    latest = {o.task: (o, at) for o, at in (kept[k] for k in sorted(kept))}
    return ServeRecords(
        decisions,
        {t: o for t, (o, _) in latest.items()},
        {t: at for t, (_, at) in latest.items()},
        tuple(sorted(torn)),
        history,
    )


def read_store(location: StoreLocation) -> ServeRecords:
    """The store's decisions and outcomes (each task's latest revision), read without changing it
    (`store_read`: a running proxy may hold the store)."""
    shown = location.shown()
    if location.path is not None and not location.path.is_file():
        raise FeedbackInputError(f"{shown}: no such store file")
    try:
        decisions, history = read_rows(location)
    except (StoreUnavailable, StoreSchemaError) as exc:
        raise FeedbackInputError(str(exc)) from None
    except ValidationError as exc:
        raise FeedbackInputError(f"{shown}: a stored record is not serve's: {one_line(exc)}") from None
    return _stored_records(decisions, history, shown)


def _stored_records(
    decisions: list[DecisionRecord], history: list[OutcomeRecord], shown: str
) -> ServeRecords:
    """A store's records (SQLite or PostgreSQL): `history` ordered by (task, revision), so each task's
    last one is its latest."""
    latest = {o.task: o for o in history}
    where = {t: f"{shown}: task {t}" for t in latest}
    return ServeRecords({d.task: d for d in decisions}, latest, where, (), tuple(history))


def read_records(source: StoreLocation | str | os.PathLike[str]) -> ServeRecords:
    """A store (a PostgreSQL URL, or a SQLite file: `.sqlite`, `.sqlite3`, `.db`) or a decision log
    (any other file)."""
    location = source if isinstance(source, StoreLocation) else StoreLocation.parse(source)
    if location.path is None or location.path.suffix.lower() in STORE_SUFFIXES:
        return read_store(location)
    return read_log(location.path)


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
