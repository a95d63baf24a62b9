"""Reading an input text file with the one-line errors every command gives: the file and the problem."""

from __future__ import annotations

import os
from pathlib import Path


def read_text_file(
    path: str | os.PathLike[str], what: str, error: type[Exception], *, name: object = None
) -> str:
    """The UTF-8 text of `path`; a missing or unreadable file or one that is not UTF-8 raises `error`
    with one line naming it (`name`, else the path) and `what` it should have been."""
    shown = path if name is None else name
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise error(f"{shown}: cannot read {what}: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise error(f"{shown}: not a UTF-8 {what} (byte {exc.start}: {exc.reason})") from exc
