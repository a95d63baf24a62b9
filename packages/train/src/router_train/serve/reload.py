"""Hot refit: a new router checkpoint swapped in for new tasks (decided tasks keep their model).

The checkpoint is read before any lock is taken: it must be a regular file (a FIFO or a device is refused
without being read) of at most `MAX_CHECKPOINT_BYTES`, read within `CHECKPOINT_READ_TIMEOUT_S`, then loaded
from a private copy of those bytes (so its sha256 is the sha256 of what was loaded). Only the swap holds
the lock; the reload asked last wins (an earlier one finishing later is refused, not swapped in)."""

from __future__ import annotations

import asyncio
import hashlib
import os
import stat
import tempfile
from pathlib import Path

import anyio  # pants: no-infer-dep (installed with starlette, which depends on it)
import anyio.to_thread  # pants: no-infer-dep

from router_train.route import CheckpointSpec, Router, load_router
from router_train.route.spec import RouterSpec
from router_train.serve.routing import Serving

MAX_CHECKPOINT_BYTES = 256 * 1024 * 1024
"""A checkpoint over this many bytes is refused (the project's checkpoints are kilobytes to a few MB)."""
CHECKPOINT_READ_TIMEOUT_S = 10.0
"""Seconds a checkpoint's bytes may take to read (a stalled network file system is refused, not waited on)."""
CHECKPOINT_LOAD_TIMEOUT_S = 120.0
"""Seconds loading the read bytes into a router may take."""


class ReloadRefused(ValueError):
    """A checkpoint a hot refit will not swap in (one line); the serving router is kept."""


def shown(path: os.PathLike[str] | str) -> str:
    """A path as a message may print it whatever it holds: undecodable bytes and control characters
    escaped, on one line."""
    text = os.fspath(path)
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


def read_checkpoint(path: Path) -> bytes:
    """The bytes of a regular file of at most `MAX_CHECKPOINT_BYTES` (blocking: run it in a thread);
    anything else is `ReloadRefused`. Opened non-blocking, then checked on the open file: a FIFO put in
    its place after a check by name would otherwise block the open."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise ReloadRefused(f"{shown(path)}: cannot be opened: {exc.strerror}") from None
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ReloadRefused(f"{shown(path)}: not a regular file")
        if info.st_size > MAX_CHECKPOINT_BYTES:
            raise ReloadRefused(
                f"{shown(path)}: {info.st_size} bytes, over the limit of {MAX_CHECKPOINT_BYTES}"
            )
        data = fh.read(MAX_CHECKPOINT_BYTES + 1)
    if len(data) > MAX_CHECKPOINT_BYTES:
        raise ReloadRefused(f"{shown(path)}: over the limit of {MAX_CHECKPOINT_BYTES} bytes")
    return data


def load_copy(spec: CheckpointSpec, data: bytes) -> Router:
    """The router of `spec` loaded from `data` (the checkpoint's bytes, written to a private copy);
    messages name the checkpoint's own path (blocking: run it in a thread)."""
    with tempfile.TemporaryDirectory(prefix="serve-reload-") as tmp:
        copy = Path(tmp) / (spec.checkpoint.name or "checkpoint")
        copy.write_bytes(data)
        try:
            return load_router(spec.model_copy(update={"checkpoint": copy}))
        except Exception as exc:
            raise ReloadRefused(str(exc).replace(str(copy), shown(spec.checkpoint))) from None


class Reloader:
    """The serving router (`serving`) and the reloads that replace it."""

    def __init__(self, spec: RouterSpec, serving: Serving) -> None:
        self.spec = spec
        """The router spec reloads start from (the config's; SIGHUP replaces it with the re-read file's)."""
        self.serving = serving
        self._swap = asyncio.Lock()
        self._asked = 0
        self._swapped = 0

    async def reload(self, checkpoint: Path | None = None, spec: RouterSpec | None = None) -> Serving:
        """Load `spec`'s (default: the current spec's) checkpoint, or `checkpoint`, and swap it in;
        `ReloadRefused` (one line) keeps the serving router."""
        spec = self.spec if spec is None else spec
        if not isinstance(spec, CheckpointSpec):
            raise ReloadRefused("the router is an LLM behind an endpoint, not a checkpoint: nothing to load")
        if checkpoint is not None:
            spec = spec.model_copy(update={"checkpoint": checkpoint})
        self._asked += 1
        ticket = self._asked
        where = shown(spec.checkpoint)
        try:
            with anyio.fail_after(CHECKPOINT_READ_TIMEOUT_S):
                data = await anyio.to_thread.run_sync(
                    read_checkpoint, spec.checkpoint, abandon_on_cancel=True
                )
        except TimeoutError:
            raise ReloadRefused(f"{where}: not read within {CHECKPOINT_READ_TIMEOUT_S:g} s") from None
        try:
            with anyio.fail_after(CHECKPOINT_LOAD_TIMEOUT_S):
                router = await anyio.to_thread.run_sync(load_copy, spec, data, abandon_on_cancel=True)
        except TimeoutError:
            raise ReloadRefused(f"{where}: not loaded within {CHECKPOINT_LOAD_TIMEOUT_S:g} s") from None
        except ReloadRefused as exc:
            raise ReloadRefused(f"{where}: not loaded, the old router serves on: {exc}") from None
        served = self.serving.router.pool
        if sorted(router.pool) != sorted(served):
            raise ReloadRefused(
                f"{where}: routes the pool {sorted(router.pool)}, not the served {sorted(served)}; "
                "the serving router is kept"
            )
        async with self._swap:
            if ticket < self._swapped:
                raise ReloadRefused(
                    f"{where}: a reload asked later was swapped in first; this one is dropped"
                )
            self._swapped = ticket
            self.serving = Serving(router, hashlib.sha256(data).hexdigest(), spec.checkpoint)
        return self.serving
