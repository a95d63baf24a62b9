"""Run independent fits in forked worker processes: `fork_map(fn, n)` is `[fn(i) for i in range(n)]`.

Workers are forked, so they inherit the loaded modules and `fn` with everything it closes over (tables,
candidates, fitters): nothing is pickled to them and nothing is re-imported; only results come back.
Results are returned in index order whatever order the workers finish in, so outputs stay deterministic.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Any, TypeVar

from tqdm import tqdm

T = TypeVar("T")

_FN: Callable[[int], Any] | None = None
"""The function of the running `fork_map`, where forked workers find it."""


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
        with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
            futures = [pool.submit(_call, i) for i in range(n)]
            for fut in futures:
                fut.result()
                bar.update()
            return [fut.result() for fut in futures]
    finally:
        _FN = None
        bar.close()
