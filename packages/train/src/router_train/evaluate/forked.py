"""Run independent fits in forked worker processes: `fork_map(fn, n)` is `[fn(i) for i in range(n)]`.

Workers are forked, so they inherit the loaded modules and `fn` with everything it closes over (tables,
candidates, fitters): nothing is pickled to them and nothing is re-imported; only results come back.
Results are returned in index order whatever order the workers finish in, so outputs stay deterministic.
Ctrl-C stops everything at once: workers ignore SIGINT (the parent alone turns it into one line), and
the parent kills every worker before re-raising, so no fit keeps running after the command has exited.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Any, TypeVar

from tqdm import tqdm

T = TypeVar("T")

_FN: Callable[[int], Any] | None = None
"""The function of the running `fork_map`, where forked workers find it."""


def _ignore_sigint() -> None:
    # A terminal's Ctrl-C reaches the whole process group; the parent handles it (and kills workers).
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _call(index: int) -> Any:
    assert _FN is not None
    return _FN(index)


def fork_map(
    fn: Callable[[int], T],
    n: int,
    *,
    jobs: int = 1,
    desc: str = "fitting",
    unit: str = "fit",
    progress: bool = False,
) -> list[T]:
    """`[fn(i) for i in range(n)]`, in up to `jobs` forked processes (at most the CPU count; 1: in this
    process). Not re-entrant: `fn` must not call `fork_map` itself."""
    global _FN
    jobs = max(1, min(jobs, n, os.cpu_count() or 1))
    bar = tqdm(total=n, desc=desc, unit=unit, disable=None if progress else True)
    try:
        if jobs == 1:
            results = []
            for i in range(n):
                results.append(fn(i))
                bar.update()
            return results
        import multiprocessing

        _FN = fn
        ctx = multiprocessing.get_context("fork")
        pool = ProcessPoolExecutor(max_workers=jobs, mp_context=ctx, initializer=_ignore_sigint)
        try:
            futures = [pool.submit(_call, i) for i in range(n)]
            for fut in futures:
                fut.result()
                bar.update()
            return [fut.result() for fut in futures]
        except BaseException:
            # Ctrl-C or a failed fit: no worker may go on fitting (shutdown alone waits for running fits).
            _kill_workers(pool)
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
    finally:
        _FN = None
        bar.close()


def _kill_workers(pool: ProcessPoolExecutor) -> None:
    """SIGKILL every worker of `pool` and reap it (the executor keeps no public handle on them)."""
    workers = list((pool._processes or {}).values())
    for worker in workers:
        worker.kill()
    for worker in workers:
        worker.join()
