"""Env load time and scoring throughput: 500 tasks x 8 completions, scored by the tasks' own rewards.

Run from the repo root:
  PYTHONPATH=packages/oracle/src:packages/env/src python packages/env/benchmarks/bench_env.py
"""

from __future__ import annotations

import asyncio
import importlib
import time

T0 = time.perf_counter()
importlib.import_module("router_frontier_rl")  # timed: importing (with verifiers) is part of loading
IMPORT_S = time.perf_counter() - T0

from router_frontier_rl import RouterConfig, RouterTaskset, format_route, score_completion  # noqa: E402
from router_frontier_rl.offline import reply_trace  # noqa: E402

COMPLETIONS = 8


def replies(valid_ids: list[str]) -> list[str]:
    """8 completions per task: each model, reasoning + route, a hedge, a display name, garbage, a long one."""
    a, b, c = valid_ids[:3]
    return [
        format_route(a),
        format_route(b),
        f"<think>{'weighing the pool. ' * 20}</think>\n{format_route(c)}",
        format_route(a) + format_route(b),
        "<route>Claude Opus 4.6</route>",
        "I would not route this.",
        "x" * 20_000 + format_route(c),
        f"  <route> {b} </route>  ",
    ]


async def main() -> None:
    start = time.perf_counter()
    tasks = list(RouterTaskset(RouterConfig(split="all")))
    load_s = time.perf_counter() - start
    pairs = [(t, r) for t in tasks for r in replies(t.data.valid_ids)]
    assert len(tasks) == 500 and len(pairs) == 500 * COMPLETIONS

    start = time.perf_counter()
    traces = [reply_trace(t, r) for t, r in pairs]
    build_s = time.perf_counter() - start
    start = time.perf_counter()
    await asyncio.gather(*(t.score(tr) for (t, _), tr in zip(pairs, traces, strict=True)))
    score_s = time.perf_counter() - start
    start = time.perf_counter()
    plain = [score_completion(t.data.record, r, t.data.valid_ids) for t, r in pairs]
    plain_s = time.perf_counter() - start
    assert [tr.rewards["routed_reward"].score for tr in traces] == [s.routed_reward for s in plain]

    n = len(pairs)
    print(f"import router_frontier_rl (incl. verifiers): {IMPORT_S:.2f} s")
    print(f"load 500 tasks (bundled table, split=all):   {load_s:.2f} s")
    print(f"build {n} offline traces:                  {build_s:.2f} s ({n / build_s:,.0f}/s)")
    print(f"score {n} traces via vf Task.score:        {score_s:.2f} s ({n / score_s:,.0f} rollouts/s)")
    print(f"score {n} completions via score_completion: {plain_s:.3f} s ({n / plain_s:,.0f} rollouts/s)")


if __name__ == "__main__":
    asyncio.run(main())
