"""Where each task's routed model is kept: SQLite, so a task stays on its model across restarts."""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path
from typing import Any, TextIO

_SCHEMA = """
CREATE TABLE IF NOT EXISTS decisions (
    task TEXT PRIMARY KEY,   -- sha256 hex of the task's identity (identity.task_key)
    model TEXT NOT NULL,     -- the pool model id it was routed to
    router TEXT NOT NULL,    -- the router that decided
    time TEXT NOT NULL       -- when (UTC, ISO 8601)
)
"""


class StickyStore:
    """task key -> routed model, in memory and in one SQLite file (each decision its own transaction).

    Reads hit the in-memory copy; a decision is committed before its first request is forwarded, so a
    restart finds every task that any upstream has seen.
    """

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(_SCHEMA)
        self._models: dict[str, str] = dict(self._db.execute("SELECT task, model FROM decisions").fetchall())

    def get(self, task: str) -> str | None:
        return self._models.get(task)

    def put(self, task: str, model: str, router: str, time: str) -> None:
        """Keep (or replace: a stored model no longer in the pool is routed again) the task's model."""
        with self._lock:
            # Autocommit (isolation_level=None): the statement is its own transaction.
            self._db.execute(
                "INSERT OR REPLACE INTO decisions (task, model, router, time) VALUES (?, ?, ?, ?)",
                (task, model, router, time),
            )
            self._models[task] = model

    def __len__(self) -> int:
        return len(self._models)

    def close(self) -> None:
        with self._lock:
            self._db.close()


class DecisionLog:
    """Appends one JSON object per line, flushed per line (a crash loses no logged decision)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._file: TextIO = path.open("a", encoding="utf-8")

    def write(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, separators=(",", ":"), ensure_ascii=False) + "\n"
        with self._lock:
            self._file.write(line)
            self._file.flush()

    def close(self) -> None:
        with self._lock:
            self._file.close()
