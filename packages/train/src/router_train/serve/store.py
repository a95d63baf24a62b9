"""serve's decision log (`DecisionLog`: one record per line, a torn last line fenced on reopening). The
store itself is `store_sql.SqlStore`, opened by `store_open.open_store`.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

from router_train.serve.records import FenceRecord, LogRecord, record_line


class DecisionLog:
    """Appends one record per line, flushed per line: a crash loses no logged line. A kill in the middle
    of a write may leave the last line cut; opening the log fences it (`fence_torn_tail`) so the records
    written after a restart each start on a line of their own (`export.read_log`'s torn-line rule)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self.fenced = fence_torn_tail(path)
        """Bytes of the torn last line fenced on opening (0: the log ended cleanly)."""
        self._file: TextIO = path.open("a", encoding="utf-8")

    def write(self, record: LogRecord) -> None:
        line = record_line(record)
        with self._lock:
            self._file.write(line)
            self._file.flush()

    def close(self) -> None:
        with self._lock:
            self._file.close()


def _torn_tail_bytes(path: Path) -> int:
    """Bytes after the log's last newline (0: empty, or ends with one)."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return 0
    if size == 0:
        return 0
    with path.open("rb") as fh:
        step, end = 1 << 16, size
        while end > 0:
            start = max(0, end - step)
            fh.seek(start)
            chunk = fh.read(end - start)
            at = chunk.rfind(b"\n")
            if at >= 0:
                return size - (start + at + 1)
            end = start
    return size


def fence_torn_tail(path: Path) -> int:
    """End a decision log's torn last line (a crash mid-write) with a newline and a `FenceRecord` naming
    it torn; the number of bytes it had (0: nothing to fence). Nothing is removed: the fragment stays,
    visible, and readers skip and report it (`export.read_log`)."""
    torn = _torn_tail_bytes(path)
    if torn:
        fence = FenceRecord(
            time=datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"), torn_bytes=torn
        )
        with path.open("ab") as fh:
            fh.write(b"\n" + record_line(fence).encode("utf-8"))
            fh.flush()
    return torn
