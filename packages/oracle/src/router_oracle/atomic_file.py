"""The one atomic file write of the project: a crash or an error never leaves a half-written output."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_bytes_atomic(path: str | os.PathLike[str], data: bytes) -> None:
    """Write `data` to a temp file beside `path`, then rename it over `path` (same file system)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        # mkstemp makes the file owner-only; outputs are ordinary files, readable as the umask allows.
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_text_atomic(path: str | os.PathLike[str], text: str) -> None:
    """`write_bytes_atomic` of UTF-8 text, newlines written as given."""
    write_bytes_atomic(path, text.encode("utf-8"))
