"""The one atomic write of the project: a crash, an error or Ctrl-C never leaves a half-written output.

- `write_bytes_atomic` / `write_text_atomic`: one file, written beside its place and renamed over it.
  `output_file` is the one rule for special paths: a symlink is written through (atomically, at its
  target); a FIFO, device, socket or directory is refused and left alone.
- `refuse_inputs_as_outputs`: the one check that no output of a command is one of its inputs.
- `check_output_directory`: what every command checks of its output directory before any work (the
  directory, `output_file`'s rule for each file it will hold, and no input among those files).
- `publish_directory`: a command's whole set of files, written into a fresh sibling directory and
  swapped in as one (`router-train local`, `router-train evaluate`): a reader sees the previous set or
  the new one, never a mix. On Linux the swap is one `renameat2(RENAME_EXCHANGE)`; elsewhere, or on a
  file system without it, two renames (old aside, new in), the old set restored if the second fails.

Entries of an existing directory that the command does not own (files a user put there) are carried
into the new directory (hard links where possible), so publishing never deletes them; the command's
own names (`owned`) are dropped from the old set, so a file the new run no longer writes (e.g. a plot
turned off) does not linger beside the new ones.

Every problem with an output path is an `OutputPathError` naming the path as the user gave it, never
a temp file.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import os
import shutil
import stat
import tempfile
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import Any


class OutputPathError(ValueError):
    """An output path that cannot be written: the message names the path as given and the problem."""


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


def file_in_the_way(path: str | os.PathLike[str]) -> Path | None:
    """The first of `path`'s parents, then `path` itself, that exists and is not a directory (or None)."""
    p = Path(path)
    for candidate in (*reversed(p.parents), p):
        if candidate.exists() and not candidate.is_dir():
            return candidate
    return None


def _check_parent(path: Path, shown: str) -> None:
    """Create `path`'s parent directories; a component that is a file is named in the error."""
    blocker = file_in_the_way(path.parent)
    if blocker is not None:
        raise OutputPathError(f"{shown}: cannot write here: {blocker} is not a directory")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputPathError(f"{shown}: cannot create its directory {path.parent}: {_reason(exc)}") from exc


_SPECIAL_KINDS = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def output_file(path: str | os.PathLike[str]) -> Path:
    """`path` checked as a place for an output file; returns where the file is actually written.

    The one rule for special output paths (every command that writes a file goes through here):
    a symlink is written through, atomically at its final target (the link stays a link); a FIFO,
    a device, a socket or a directory (at `path` or at the link's target) is refused with an
    `OutputPathError` and left alone, so `-o /dev/full` never replaces the system's device."""
    shown = os.fspath(path)
    if not shown:
        raise OutputPathError("empty output path: give a file name")
    p = Path(path)
    if p.is_symlink():
        p = Path(os.path.realpath(p))  # a dangling link's target is created
    try:
        mode = os.stat(p).st_mode
    except OSError:
        return p  # nothing there yet (or an unreadable parent: the write names it)
    if stat.S_ISDIR(mode):
        raise OutputPathError(f"{shown}: is a directory; give a file name")
    for is_kind, kind in _SPECIAL_KINDS:
        if is_kind(mode):
            where = "" if p == Path(path) else f" (the target of the link, {p})"
            raise OutputPathError(f"{shown}: is {kind}{where}, not a regular file; give a file name")
    return p


def _identity(path: str | os.PathLike[str]) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st.st_dev, st.st_ino


def refuse_inputs_as_outputs(
    outputs: Collection[str | os.PathLike[str]], inputs: Collection[tuple[str, str | os.PathLike[str] | None]]
) -> None:
    """Refuse a command whose output would replace one of its own inputs: `inputs` are (what, path)
    pairs (`what` is the flag or argument, e.g. `--tasks`), None paths skipped. The same file by any
    name (a relative or absolute path, a symlink, a hard link) counts. Checked before any work."""
    for out in outputs:
        target = _identity(out)
        if target is None:
            continue
        for what, given in inputs:
            if given is not None and _identity(given) == target:
                raise OutputPathError(
                    f"{os.fspath(out)}: is also an input ({what} {os.fspath(given)}); "
                    "write the output somewhere else"
                )


def write_bytes_atomic(path: str | os.PathLike[str], data: bytes) -> None:
    """Write `data` to a temp file beside `path`, then rename it over `path` (same file system)."""
    p = output_file(path)
    shown = os.fspath(path)
    _check_parent(p, shown)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent)
    except OSError as exc:
        raise OutputPathError(f"{shown}: cannot write in {p.parent}: {_reason(exc)}") from exc
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        # mkstemp makes the file owner-only; outputs are ordinary files, readable as the umask allows.
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, p)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise OutputPathError(f"{shown}: cannot write: {_reason(exc)}") from exc
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_text_atomic(path: str | os.PathLike[str], text: str) -> None:
    """`write_bytes_atomic` of UTF-8 text, newlines written as given."""
    write_bytes_atomic(path, text.encode("utf-8"))


def output_directory(path: str | os.PathLike[str], *, owned: Collection[str] = ()) -> Path:
    """`path` checked as a place for a command's output directory (see `publish_directory`), and each
    of its files (`owned`) by `output_file`'s rule: a directory, FIFO, device or socket where the
    command would write a file is refused and left alone, never replaced with what it held."""
    shown = os.fspath(path)
    if not shown:
        raise OutputPathError("empty output directory: give a directory name")
    p = Path(path)
    blocker = file_in_the_way(p)
    if blocker == p:
        raise OutputPathError(f"{shown}: exists and is not a directory")
    if blocker is not None:
        raise OutputPathError(f"{shown}: cannot write here: {blocker} is not a directory")
    real = Path(os.path.realpath(p))
    cwd = Path.cwd().resolve()
    if real == cwd or real in cwd.parents or real.parent == real:
        # The whole directory is swapped out: it cannot be the working directory or one holding it.
        raise OutputPathError(f"{shown}: is the working directory or above it; give a subdirectory")
    _check_parent(real, shown)
    # The directory is published by a rename in its parent: a parent the user cannot write is refused
    # now, before the work, not after it (issue 44, item 10).
    if not os.access(real.parent, os.W_OK | os.X_OK):
        raise OutputPathError(f"{shown}: cannot write in {real.parent}: permission denied")
    for name in owned:
        output_file(p / name)
    return real


def check_output_directory(
    path: str | os.PathLike[str],
    owned: Collection[str],
    inputs: Collection[tuple[str, str | os.PathLike[str] | None]] = (),
) -> Path:
    """The check every command makes of its output directory before any work: `output_directory` with
    its files `owned`, and none of those files one of the command's `inputs` (`refuse_inputs_as_outputs`)."""
    real = output_directory(path, owned=owned)
    refuse_inputs_as_outputs([Path(path) / name for name in owned], inputs)
    return real


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


@functools.cache
def _renameat2() -> Any:
    """libc's `renameat2`, or None (not Linux, or a libc older than glibc 2.28)."""
    try:
        func = ctypes.CDLL(None, use_errno=True).renameat2  # the process's own symbols: libc's
    except (OSError, AttributeError, TypeError):
        return None
    func.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    return func


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two paths with Linux `renameat2(RENAME_EXCHANGE)`; False where unsupported."""
    renameat2 = _renameat2()
    if renameat2 is None:
        return False
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), str(b))


def _carry_over(old: Path, new: Path, owned: Collection[str]) -> None:
    """Hard-link (or copy) every entry of `old` not in `owned` and not already in `new` into `new`."""
    for entry in sorted(old.iterdir()):
        if entry.name in owned or (new / entry.name).exists():
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.copytree(entry, new / entry.name, symlinks=True, copy_function=_link_or_copy)
        else:
            _link_or_copy(entry, new / entry.name)


def _link_or_copy(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
    if os.path.islink(src):
        os.symlink(os.readlink(src), dst)
        return
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def _write_through_links(old: Path, new: Path, owned: Collection[str]) -> None:
    """`output_file`'s rule for a symlink among a directory's files: each of the command's files that
    `old` holds as a link is written at the link's target (atomically), and the link stays a link."""
    for name in owned:
        if (old / name).is_symlink() and (new / name).is_file():
            write_bytes_atomic(old / name, (new / name).read_bytes())
            (new / name).unlink()
            _link_or_copy(old / name, new / name)


def _swap_in(staged: Path, target: Path) -> None:
    """Make `staged` appear at `target` in one step; the previous `target` is removed afterwards."""
    if not target.exists():
        staged.rename(target)
        return
    if _exchange(staged, target):
        shutil.rmtree(staged, ignore_errors=True)  # `staged` now holds the previous set
        return
    aside = Path(tempfile.mkdtemp(prefix=f".{target.name}.old.", dir=target.parent))
    os.rmdir(aside)
    target.rename(aside)
    try:
        staged.rename(target)
    except BaseException:
        aside.rename(target)
        raise
    shutil.rmtree(aside, ignore_errors=True)


def _own_path_error(exc: OSError, staged: Path, shown: str) -> OutputPathError | None:
    """An OSError about a file inside the staging directory, renamed to the user's path (or None)."""
    names = [n for n in (exc.filename, exc.filename2) if n is not None]
    if any(os.fspath(n).startswith(os.fspath(staged)) for n in names):
        return OutputPathError(f"{shown}: cannot write: {_reason(exc)}")
    return None


@contextlib.contextmanager
def publish_directory(path: str | os.PathLike[str], *, owned: Collection[str]) -> Iterator[Path]:
    """Yield a fresh directory beside `path`; on a clean exit it replaces `path` as a whole.

    Write every output file into the yielded directory. If the block raises (or is interrupted),
    the fresh directory is removed and `path` is left exactly as it was. `owned` names the files this
    command writes: other entries of an existing `path` are carried over (see the module docstring).
    Errors about the path, and the block's OSErrors about files in the fresh directory, are
    `OutputPathError`s naming `path` as given.
    """
    shown = os.fspath(path)
    target = output_directory(path, owned=owned)
    try:
        staged = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
    except OSError as exc:
        raise OutputPathError(f"{shown}: cannot write in {target.parent}: {_reason(exc)}") from exc
    try:
        os.chmod(staged, target.stat().st_mode & 0o7777 if target.is_dir() else 0o777 & ~_umask())
        try:
            yield staged
        except OSError as exc:
            renamed = _own_path_error(exc, staged, shown)
            if renamed is None:
                raise
            raise renamed from exc
        try:
            if target.is_dir():
                _write_through_links(target, staged, owned)
                _carry_over(target, staged, owned)
            _swap_in(staged, target)
        except OSError as exc:
            raise OutputPathError(f"{shown}: cannot write: {_reason(exc)}") from exc
    finally:
        # After a swap `staged` is gone (renamed) or holds the previous set; either way it goes.
        shutil.rmtree(staged, ignore_errors=True)
