"""Benchmark of `router-train serve`'s start: process start to its first answered request.

Run from the repository root (prints figures; not a test):
  PYTHONPATH=packages/oracle/src:packages/env/src:packages/train/src:packages/train/benchmarks \
    python packages/train/benchmarks/bench_serve_start.py [--runs 5] [--checkpoint PATH] [--src ROOT ...]

A stub OpenAI-compatible upstream (`serve_harness.StubUpstream`) and a serve config routing every pool
model to it; then, `--runs` times for each `--src` (a repository root whose packages' sources the serve
process imports; default: this one; give another checkout, e.g. the main branch's, to compare), a fresh
`router-train serve` process: the seconds from its start to `/health` answering 200, and to the first
chat request's answer (the task routed, the stub's reply passed back), and the CPU seconds it had used
by then (steadier than wall time on a loaded machine). Also each tree's first-party
module count after `import router_train.commands.serve` in a fresh interpreter. The checkpoint is a
`router-train local` router of 5 steps unless given (trained once, by this process).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from serve_harness import TOKEN, TOKEN_ENV, StubUpstream, free_port, write_config

HERE = Path(__file__).resolve().parents[3]
"""This repository's root."""

SOURCES = ("packages/oracle/src", "packages/env/src", "packages/train/src")
"""Each package's source folder, relative to a repository root."""

COUNT = (
    "import sys, router_train.commands.serve; "
    "first = ('router_train', 'router_oracle', 'router_frontier_rl'); "
    "print(sum(n.split('.')[0] in first for n in sys.modules))"
)
"""Prints the first-party modules `import router_train.commands.serve` loads."""


def _env(root: Path) -> dict[str, str]:
    path = os.pathsep.join(str(root / s) for s in SOURCES)
    return {
        **os.environ,
        "PYTHONPATH": path,
        TOKEN_ENV: TOKEN,
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
    }


def _chat() -> dict[str, object]:
    return {"model": "router", "messages": [{"role": "user", "content": "Fix the crash in QuerySet.only()."}]}


def _cpu_s(pid: int) -> float:
    """CPU seconds (user + system) process `pid` has used so far (Linux /proc): the start's cost, which
    the machine's load moves far less than its wall time."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _one_start(root: Path, config: Path, log: Path) -> tuple[float, float, float]:
    """One serve process from `root`: seconds to /health 200, to the first chat answered, and the CPU
    seconds it had used by then."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    cmd = [sys.executable, "-m", "router_train.cli", "serve", str(config), "--port", str(port)]
    with log.open("w", encoding="utf-8") as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, env=_env(root), stdout=err, stderr=err)
    try:
        with httpx.Client(timeout=30) as client:
            while True:
                if proc.poll() is not None or time.perf_counter() - start > 180:
                    raise SystemExit(f"serve did not come up: {log.read_text(encoding='utf-8').strip()}")
                try:
                    if client.get(f"{url}/health").status_code == 200:
                        break
                except httpx.TransportError:
                    time.sleep(0.02)
            health = time.perf_counter() - start
            answer = client.post(f"{url}/v1/chat/completions", json=_chat())
            first = time.perf_counter() - start
            cpu = _cpu_s(proc.pid)
            if answer.status_code != 200:
                raise SystemExit(f"the first chat request answered {answer.status_code}: {answer.text}")
        return health, first, cpu
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def _train(tmp: Path) -> Path:
    from router_train.local.config import LocalTrainConfig
    from router_train.local.trainer import train_local

    cfg = LocalTrainConfig(output_dir=tmp / "router", steps=5, tasks_per_step=16, shift_folds=0)
    return train_local(cfg, progress=False).checkpoint_path


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=5, help="serve starts per source tree")
    parser.add_argument("--checkpoint", type=Path, default=None, help="a router-train local checkpoint")
    parser.add_argument(
        "--src", type=Path, action="append", default=None, help="a repository root to start serve from"
    )
    args = parser.parse_args()
    roots = [r.resolve() for r in args.src or [HERE]]
    from router_train.route import CheckpointSpec, load_router

    with tempfile.TemporaryDirectory() as tmp_dir, StubUpstream() as stub:
        tmp = Path(tmp_dir)
        checkpoint = args.checkpoint or _train(tmp)
        pool = list(load_router(CheckpointSpec(checkpoint=checkpoint)).pool)
        results: dict[Path, list[tuple[float, float, float]]] = {r: [] for r in roots}
        for run in range(args.runs):  # the trees take turns, so a change of load hits each alike
            for i, root in enumerate(roots):
                state = tmp / f"state-{i}-{run}"
                state.mkdir()
                config = write_config(tmp / f"serve-{i}-{run}.toml", checkpoint, stub.url, pool, state, None)
                results[root].append(_one_start(root, config, tmp / f"serve-{i}-{run}.log"))
        for root, times in results.items():
            count = subprocess.run(
                [sys.executable, "-c", COUNT], env=_env(root), capture_output=True, text=True, check=True
            ).stdout.strip()
            health = [h for h, _, _ in times]
            first = [f for _, f, _ in times]
            cpu = [c for _, _, c in times]
            print(f"{root}: {count} first-party modules on `import router_train.commands.serve`")
            print(
                f"  serve start -> /health 200: median {statistics.median(health):.2f} s "
                f"(min {min(health):.2f}, max {max(health):.2f}); -> first chat answered: median "
                f"{statistics.median(first):.2f} s (min {min(first):.2f}, max {max(first):.2f}); "
                f"{len(times)} runs"
            )
            print(f"  serve's CPU seconds by its first answer: median {statistics.median(cpu):.2f} s")
    print(f"load average (1/5/15 min): {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
