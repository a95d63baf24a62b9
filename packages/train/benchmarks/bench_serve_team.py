"""`router-train serve` as a team's service: 3 replicas on one PostgreSQL under load, one replica SIGKILLed
and restarted and PostgreSQL restarted mid-load; then the embedded SQLite store (one replica) on the same
load. Is every acknowledged decision and outcome kept once, is every turn sticky, which requests failed
(and when), and what latency does the proxy add over calling the upstream directly?

Run from the repository root (prints figures; exits 1 if a check fails; not a test):
  PYTHONPATH=packages/oracle/src:packages/env/src:packages/train/src:packages/train/tests \
    python packages/train/benchmarks/bench_serve_team.py [--conversations 2000] [--turns 5] \
      [--concurrency 100] [--checkpoint D/checkpoint.json]

On 127.0.0.1: a stub upstream in its own process (bench_serve's: a fixed answer, no delay) for every pool
model; a throwaway PostgreSQL cluster (Debian's binaries, packages/train/tests/postgres_server.py); the
replicas (`router-train serve` child processes, one config each: the same store URL, their own decision
log); this client (httpx, async, `--concurrency` conversations in flight). Conversation i's turn t goes to
replica (i + t) mod 3; after its last turn its outcome is posted to another replica. A request that fails
(connection refused, 5xx) is counted, with what was down at the time, and sent again to the next replica
after 0.2 s, as a load balancer would. Once a third of the conversations are done, replica 1 is SIGKILLed
and started again; at two thirds, PostgreSQL is restarted (`pg_ctl stop -m fast`, `start`).

Added latency: the p50 / p99 of every successful turn's latency through the proxies, against the same
figures of the same requests sent straight to the stub at the same concurrency just before (one run, one
machine: on a loaded 2-core machine both are noisy).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import sys
import tempfile
import time
import tomllib
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import tomli_w
from bench_serve import _pct, _request, _stub
from postgres_server import PostgresServer, cluster
from serve_harness import TOKEN, Serve, bundled_table, free_port, router_train, write_config

from router_train.serve.export import read_records
from router_train.serve.forwarding import UPSTREAM_KEEPALIVE_S
from router_train.serve.store_open import open_store

AUTH = {"authorization": f"Bearer {TOKEN}"}
RETRY_S = 0.2
MAX_TRIES = 200
"""Tries per request before the conversation is given up (counted as lost, a failed check)."""


@dataclass
class Faults:
    """What is down now, and what failed while it was."""

    dead: set[int] = field(default_factory=set)
    db_down: bool = False
    failed: Counter[str] = field(default_factory=Counter)

    def cause(self, replica: int, what: str) -> str:
        if replica in self.dead:
            return "replica dead"
        return "PostgreSQL down or reconnecting" if self.db_down else f"other ({what})"


@dataclass
class Seen:
    """What the client was acknowledged."""

    models: dict[int, list[str]] = field(default_factory=dict)  # conversation -> served model per turn
    tasks: dict[int, str] = field(default_factory=dict)  # conversation -> task key
    outcomes: dict[str, dict[str, Any]] = field(default_factory=dict)  # task key -> the 200's record
    latency_ms: list[float] = field(default_factory=list)
    given_up: int = 0


async def _send(
    client: httpx.AsyncClient, urls: list[str], first: int, faults: Faults, path: str, **kw: Any
) -> tuple[httpx.Response | None, float]:
    replica = first
    for _ in range(MAX_TRIES):
        started = time.perf_counter()
        try:
            r = await client.post(f"{urls[replica]}{path}", **kw)
            if r.status_code < 500:
                return r, (time.perf_counter() - started) * 1000
            what = f"HTTP {r.status_code}"
        except httpx.TransportError as exc:
            what = type(exc).__name__
        faults.failed[faults.cause(replica, what)] += 1
        replica = (replica + 1) % len(urls)
        await asyncio.sleep(RETRY_S)
    return None, 0.0


async def _conversation(
    i: int, client: httpx.AsyncClient, urls: list[str], turns: int, faults: Faults, seen: Seen
) -> None:
    served: list[str] = []
    for t in range(turns):
        r, ms = await _send(
            client, urls, (i + t) % len(urls), faults, "/v1/chat/completions", json=_request(t, i)
        )
        if r is None or r.status_code != 200:
            seen.given_up += 1
            return
        served.append(r.headers["x-router-model"])
        seen.tasks[i] = r.headers["x-router-task"]
        seen.latency_ms.append(ms)
    seen.models[i] = served
    report = {"task": seen.tasks[i], "resolved": i % 3 != 0, "cost": round(0.01 + (i % 50) / 1000, 3)}
    r, _ = await _send(
        client, urls, (i + turns) % len(urls), faults, "/v1/feedback", json=report, headers=AUTH
    )
    if r is None or r.status_code != 200:
        seen.given_up += 1
        return
    seen.outcomes[seen.tasks[i]] = r.json()


async def _direct(upstream: str, n: int, concurrency: int, turns: int) -> list[float]:
    """Latency (ms) of the same requests sent straight to the stub, `concurrency` at a time."""
    out: list[float] = []
    gate = asyncio.Semaphore(concurrency)
    async with httpx.AsyncClient(timeout=60, limits=httpx.Limits(max_connections=concurrency)) as client:

        async def one(k: int) -> None:
            async with gate:
                started = time.perf_counter()
                r = await client.post(f"{upstream}/chat/completions", json=_request(k % turns, k // turns))
                r.raise_for_status()
                out.append((time.perf_counter() - started) * 1000)

        await asyncio.gather(*(one(k) for k in range(n)))
    return out


async def _load(
    replicas: list[Serve], args: argparse.Namespace, db: PostgresServer | None, faults: Faults
) -> Seen:
    seen = Seen()
    urls = [r.url for r in replicas]
    gate = asyncio.Semaphore(args.concurrency)
    done = [0]
    # Idle connections dropped after 2 s, below uvicorn's 5 s keep-alive: with httpx's default (also 5 s) a
    # connection is now and then reused just as the replica closes it (a ReadError no proxy can prevent;
    # serve's own upstream clients do the same, serve.app.UPSTREAM_KEEPALIVE_S).
    limits = httpx.Limits(max_connections=args.concurrency * 2, keepalive_expiry=UPSTREAM_KEEPALIVE_S)
    async with httpx.AsyncClient(timeout=60, limits=limits) as client:

        async def one(i: int) -> None:
            async with gate:
                await _conversation(i, client, urls, args.turns, faults, seen)
                done[0] += 1

        async def chaos() -> None:
            if len(replicas) < 2:
                return
            while done[0] < args.conversations // 3:
                await asyncio.sleep(0.05)
            faults.dead.add(1)
            replicas[1].kill()
            print(f"  SIGKILL replica 1 after {done[0]} conversations", flush=True)
            replicas[1] = await asyncio.to_thread(
                Serve, replicas[1].config, replicas[1].port, replicas[1].log
            )
            faults.dead.discard(1)
            print(f"  replica 1 serving again after {done[0]} conversations", flush=True)
            if db is None:
                return
            while done[0] < 2 * args.conversations // 3:
                await asyncio.sleep(0.05)
            faults.db_down = True
            await asyncio.to_thread(db.stop, "fast")
            print(f"  PostgreSQL stopped after {done[0]} conversations", flush=True)
            await asyncio.to_thread(db.start)
            # Down for a replica until it has reconnected (it tries every 0.5 s): its /health says so.
            async with httpx.AsyncClient(timeout=10) as probe:
                for url in urls:
                    while (await probe.get(f"{url}/health")).json()["status"] != "ok":
                        await asyncio.sleep(0.05)
            faults.db_down = False
            print(f"  PostgreSQL started again after {done[0]} conversations", flush=True)

        await asyncio.gather(chaos(), *(one(i) for i in range(args.conversations)))
    return seen


def check_records(name: str, seen: Seen, store: str, logs: list[Path], args: argparse.Namespace) -> list[str]:
    """Print the figures of one backend's run; the failed checks."""
    records = read_records(store)
    lost_d = [i for i, task in seen.tasks.items() if task not in records.decisions]
    changed = [
        i
        for i, ms in seen.models.items()
        if seen.tasks[i] in records.decisions and records.decisions[seen.tasks[i]].model != ms[0]
    ]
    lost_o = [t for t, rec in seen.outcomes.items() if records.outcomes.get(t) is None]
    changed_o = [
        t
        for t, rec in seen.outcomes.items()
        if t in records.outcomes and records.outcomes[t].model_dump(mode="json") != rec
    ]
    kept = open_store(store)
    try:
        history = Counter(o.task for o in kept.outcome_history())
    finally:
        kept.close()
    lines = [
        json.loads(x) for log in logs if log.exists() for x in log.read_text(encoding="utf-8").splitlines()
    ]
    dup_d = [
        t
        for t, n in Counter(x["task"] for x in lines if x.get("event", "decision") == "decision").items()
        if n > 1
    ]
    dup_o = [t for t, n in Counter(x["task"] for x in lines if x.get("event") == "outcome").items() if n > 1]
    turns = sum(len(m) for m in seen.models.values())
    sticky = sum(sum(1 for m in ms if m == ms[0]) for ms in seen.models.values())
    print(
        f"{name}: {len(seen.models)} conversations of {args.turns} turns acknowledged, "
        f"{len(seen.outcomes)} outcomes; "
        f"given up {seen.given_up}\n"
        f"  acknowledged decisions lost {len(lost_d)}, changed {len(changed)}, logged twice {len(dup_d)}; "
        f"acknowledged outcomes lost {len(lost_o)}, changed {len(changed_o)}, logged twice {len(dup_o)}"
        + f", stored twice {sum(1 for n in history.values() if n > 1)}"
        + f"\n  sticky turns {sticky}/{turns} = {100 * sticky / max(turns, 1):.2f}%"
    )
    failures = []
    if (
        lost_d
        or changed
        or dup_d
        or lost_o
        or changed_o
        or dup_o
        or seen.given_up
        or max(history.values(), default=1) > 1
    ):
        failures.append(f"{name}: an acknowledged decision or outcome lost, changed or duplicated")
    if sticky != turns:
        failures.append(f"{name}: {turns - sticky} turns not sticky")
    return failures


def replica_configs(
    work: Path, base: Path, store: str, n: int, timeout_s: float | None = None
) -> list[Path]:
    """`n` configs of `base` on one store (`[store] timeout` `timeout_s`, or the default), each with its
    own decision log."""
    doc = tomllib.loads(base.read_text(encoding="utf-8"))
    located: str | dict[str, Any] = store if timeout_s is None else {"location": store, "timeout": timeout_s}
    out = []
    for r in range(n):
        path = work / f"replica{r}.toml"
        path.write_text(
            tomli_w.dumps({**doc, "store": located, "decision_log": str(work / f"replica{r}.jsonl")})
        )
        out.append(path)
    return out


def _run_backend(
    name: str,
    store: str,
    n_replicas: int,
    work: Path,
    base: Path,
    db: PostgresServer | None,
    args: argparse.Namespace,
) -> tuple[list[str], list[float]]:
    work.mkdir()
    configs = replica_configs(work, base, store, n_replicas)
    replicas = [Serve(cfg, free_port(), work / f"replica{r}.log") for r, cfg in enumerate(configs)]
    faults = Faults()
    print(f"{name}: {n_replicas} replica(s) serving; load starts", flush=True)
    started = time.monotonic()
    try:
        seen = asyncio.run(_load(replicas, args, db, faults))
    finally:
        for r in replicas:
            r.stop()
    print(f"  load {time.monotonic() - started:.1f} s; failed requests by cause: {dict(faults.failed) or 0}")
    failures = check_records(name, seen, store, [work / f"replica{r}.jsonl" for r in range(n_replicas)], args)
    other = sum(n for cause, n in faults.failed.items() if cause.startswith("other"))
    if other:
        failures.append(f"{name}: {other} requests failed while nothing was down")
    return failures, seen.latency_ms


def _latency(name: str, proxied: list[float], direct: list[float], goal_ms: float) -> str:
    p50 = _pct(proxied, 0.5) - _pct(direct, 0.5)
    p99 = _pct(proxied, 0.99) - _pct(direct, 0.99)
    verdict = "met" if p99 <= goal_ms else "NOT met here"
    return (
        f"{name}: turn latency p50 {_pct(proxied, 0.5):.1f} ms, p99 {_pct(proxied, 0.99):.1f} ms "
        f"(direct p50 {_pct(direct, 0.5):.1f}, p99 {_pct(direct, 0.99):.1f}); added p50 {p50:.1f} ms, "
        f"p99 {p99:.1f} ms (goal <= {goal_ms:g} ms: {verdict})"
    )


@contextmanager
def stub_upstream() -> Iterator[str]:
    """bench_serve's stub (every pool model, a fixed answer) in its own process, up; its base URL."""
    port = free_port()
    stub = multiprocessing.get_context("spawn").Process(target=_stub, args=(port,), daemon=True)
    stub.start()
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(f"http://127.0.0.1:{port}/", timeout=1)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "the stub did not come up"
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        stub.terminate()
        stub.join(timeout=30)


def base_config(work: Path, checkpoint: Path | None, upstream: str) -> Path:
    """The replicas' common config (every pool model on `upstream`); without a checkpoint, `fit irt
    --split train`'s."""
    if checkpoint is None:
        router_train("fit", "irt", "--split", "train", "--output-dir", str(work / "D"))
        checkpoint = work / "D" / "checkpoint.json"
    pool = [m.id for m in bundled_table().pool.models]
    return write_config(work / "base.toml", checkpoint.resolve(), upstream, pool, work, None)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--conversations", type=int, default=2000)
    parser.add_argument("--turns", type=int, default=5)
    parser.add_argument("--concurrency", type=int, default=100)
    parser.add_argument("--checkpoint", type=Path, default=None, help="default: fit irt --split train")
    args = parser.parse_args()
    failures: list[str] = []
    with stub_upstream() as upstream, tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        base = base_config(work, args.checkpoint, upstream)
        n = args.conversations * args.turns
        direct = asyncio.run(_direct(upstream, n, args.concurrency, args.turns))
        with cluster() as db:
            f, pg_ms = _run_backend("PostgreSQL", db.url, 3, work / "pg", base, db, args)
            failures += f
        f, sqlite_ms = _run_backend(
            "SQLite", str(work / "sqlite" / "store.sqlite"), 1, work / "sqlite", base, None, args
        )
        failures += f
        print(f"direct to the stub: {n} requests at {args.concurrency} concurrent")
        print(_latency("PostgreSQL, 3 replicas", pg_ms, direct, 10))
        print(_latency("SQLite, 1 replica", sqlite_ms, direct, 3))
    if failures:
        print("FAILED:\n  " + "\n  ".join(failures[:20]))
        sys.exit(1)
    print("ok: no acknowledged decision or outcome lost or duplicated; every turn sticky")


if __name__ == "__main__":
    main()
