"""Benchmark of serve's dashboard on a long log: its render time (first and cached) and what fetching it in
a loop does to chat latency.

Run from the repository root (prints figures; not a test):
  PYTHONPATH=packages/oracle/src:packages/env/src:packages/train/src \
    python packages/train/benchmarks/bench_serve_dashboard.py [--decisions 50000] [--chat 400]

A SQLite store is filled with `--decisions` decision records (a third of them explored, propensities as
`[explore]` draws them, the serving checkpoint's sha256) and outcomes for `--outcome-share` of them, spread
over 30 days. Then, as bench_serve.py does, a stub upstream and `router-train serve` (with `[admin]`) run
as child processes on 127.0.0.1, and this client measures: the first GET /dashboard, the next ones
(nothing changed in between), and `--chat` sequential chat turns of one decided task without, then with,
another process fetching /health (the control), then /dashboard, in a loop.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import multiprocessing
import os
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import bench_serve

ADMIN_ENV = "BENCH_DASHBOARD_ADMIN"
ADMIN_TOKEN = "bench-admin"


def fill_store(path: Path, decisions: int, outcome_share: float, pool: list[str], sha: str) -> float:
    """Write the synthetic log into a SQLite store at `path`; seconds it took."""
    from router_train.serve.explore import serve_choice
    from router_train.serve.records import DecisionRecord, OutcomeRecord
    from router_train.serve.store_open import open_store

    started = time.perf_counter()
    store = open_store(path)
    t0 = datetime(2026, 11, 1, tzinfo=UTC)
    try:
        for i in range(decisions):
            key = hashlib.sha256(f"bench-task-{i}".encode()).hexdigest()
            pick = pool[i % len(pool)]
            served = serve_choice(key, pick, pool, 0.3, 0)
            assert served.model is not None  # the router always picks here
            when = (t0 + timedelta(seconds=i * 30 * 86400 / decisions)).isoformat(timespec="milliseconds")
            when = when.replace("+00:00", "Z")
            record = DecisionRecord(
                instance_id=f"bench__task-{i}",
                model=served.model,
                router="bench",
                time=when,
                task=key,
                latency_ms=1.0,
                router_model=pick,
                explored=served.explored,
                propensity=served.propensity,
                checkpoint_sha256=sha,
            )
            store.claim(record)
            if (i * 7919) % 1000 < outcome_share * 1000:
                cost = 0.05 + (i % 13) / 10
                outcome = OutcomeRecord(
                    time=when,
                    task=key,
                    instance_id=record.instance_id,
                    model=served.model,
                    resolved=(i * 31) % 7 < 4,
                    reported_cost=None,
                    proxy_cost=cost,
                    cost=cost,
                    source="feedback",
                    revision=0,
                )
                store.record_outcome(outcome)
    finally:
        store.close()
    return time.perf_counter() - started


def _fetch_loop(url: str, headers: dict[str, str], stop: Any, fetched: Any) -> None:
    """GET `url` back to back until `stop` is set, counting the answers in `fetched` (a child process)."""
    import httpx

    with httpx.Client(timeout=600) as client:
        while not stop.is_set():
            client.get(url, headers=headers).raise_for_status()
            with fetched.get_lock():
                fetched.value += 1


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--decisions", type=int, default=50_000, help="decision records in the store")
    parser.add_argument("--outcome-share", type=float, default=0.6, help="share of the tasks with an outcome")
    parser.add_argument("--chat", type=int, default=400, help="sequential chat turns per measurement")
    parser.add_argument("--fetches", type=int, default=3, help="dashboard fetches after the first")
    args = parser.parse_args()

    import httpx
    import tomli_w

    from router_oracle.infra.file_hash import sha256_file

    os.environ[ADMIN_ENV] = ADMIN_TOKEN  # the spawned serve inherits it
    admin = {"authorization": f"Bearer {ADMIN_TOKEN}"}
    with tempfile.TemporaryDirectory() as tmp:
        from router_train.local.config import LocalTrainConfig
        from router_train.local.trainer import train_local
        from router_train.route import CheckpointSpec, load_router

        cfg = LocalTrainConfig(output_dir=Path(tmp) / "router", steps=5, tasks_per_step=16, shift_folds=0)
        checkpoint = train_local(cfg, progress=False).checkpoint_path
        pool = list(load_router(CheckpointSpec(checkpoint=checkpoint)).pool)
        store = Path(tmp) / "state" / "decisions.sqlite"
        took = fill_store(store, args.decisions, args.outcome_share, pool, sha256_file(checkpoint))
        print(
            f"store: {args.decisions} decisions, ~{args.outcome_share:.0%} with an outcome, "
            f"written in {took:.1f} s"
        )
        stub_port, proxy_port = bench_serve._free_port(), bench_serve._free_port()
        stub_url = f"http://127.0.0.1:{stub_port}/v1"
        config = Path(tmp) / "serve.toml"
        doc = {
            "router": {"checkpoint": str(checkpoint)},
            "upstreams": {m: {"base_url": stub_url, "model": m} for m in pool},
            "store": str(store),
            "decision_log": str(Path(tmp) / "state" / "decisions.jsonl"),
            "admin": {"token_env": ADMIN_ENV},
        }
        config.write_text(tomli_w.dumps(doc))
        ctx = multiprocessing.get_context("spawn")
        procs = [
            ctx.Process(target=bench_serve._stub, args=(stub_port,)),
            ctx.Process(target=bench_serve._proxy, args=(str(config), proxy_port)),
        ]
        for p in procs:
            p.start()
        try:
            bench_serve._wait(f"{stub_url}/chat/completions")
            proxy_url = f"http://127.0.0.1:{proxy_port}"
            bench_serve._wait(f"{proxy_url}/health")
            proxy_pid = procs[1].pid
            with httpx.Client(timeout=600) as client:
                cpu0, t = bench_serve._cpu_s(proxy_pid), time.perf_counter()
                first = client.get(f"{proxy_url}/dashboard", headers=admin)
                first.raise_for_status()
                wall, cpu = time.perf_counter() - t, bench_serve._cpu_s(proxy_pid) - cpu0
                print(
                    f"dashboard, first render: {wall:.2f} s ({cpu:.1f} CPU-s in serve), "
                    f"{len(first.content)} bytes"
                )
                again = []
                for _ in range(args.fetches):
                    t = time.perf_counter()
                    client.get(f"{proxy_url}/dashboard", headers=admin).raise_for_status()
                    again.append(time.perf_counter() - t)
                print(f"dashboard, nothing changed since: {', '.join(f'{s:.3f}' for s in again)} s")

                payload = json.dumps(bench_serve._request(turn=3)).encode()
                headers = {"content-type": "application/json"}

                def chat_ms(n: int) -> list[float]:
                    out = []
                    for _ in range(n):
                        t = time.perf_counter()
                        r = client.post(f"{proxy_url}/v1/chat/completions", content=payload, headers=headers)
                        r.raise_for_status()
                        out.append((time.perf_counter() - t) * 1000)
                    return out

                chat_ms(50)  # warm-up; the task is decided here (a new decision: the page changes once)
                client.get(f"{proxy_url}/dashboard", headers=admin).raise_for_status()
                quiet = chat_ms(args.chat)

                def with_loop(path: str) -> tuple[list[float], int]:
                    """Chat turns while another process fetches `path` back to back (a process, not a thread
                    of this client: reading 25 kB pages would take this process's interpreter lock from the
                    chat turns it times)."""
                    stop, fetched = ctx.Event(), ctx.Value("i", 0)
                    looping = ctx.Process(
                        target=_fetch_loop, args=(f"{proxy_url}{path}", admin, stop, fetched)
                    )
                    looping.start()
                    try:
                        while fetched.value == 0:  # the loop is running
                            time.sleep(0.05)
                        return chat_ms(args.chat), int(fetched.value)
                    finally:
                        stop.set()
                        looping.join()

                # The control: a loop on /health (answered from memory) costs the same client and socket
                # work; what the dashboard loop adds beyond it is the dashboard's.
                health, health_n = with_loop("/health")
                busy, busy_n = with_loop("/dashboard")
            rows = (
                ("chat, alone:              ", quiet, None),
                ("chat, /health in a loop:  ", health, health_n),
                ("chat, /dashboard in a loop:", busy, busy_n),
            )
            for label, values, fetches in rows:
                p99 = bench_serve._pct(values, 0.99)
                extra = (
                    ""
                    if fetches is None
                    else f" ({fetches} fetches; p99 {p99 / bench_serve._pct(quiet, 0.99) - 1:+.0%})"
                )
                print(f"{label} median {statistics.median(values):.2f} ms, p99 {p99:.2f} ms{extra}")
            print(f"load average during the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        finally:
            for p in procs:
                p.terminate()
            for p in procs:
                p.join(timeout=10)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
