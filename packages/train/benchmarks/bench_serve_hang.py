"""`router-train serve` on 3 replicas while their PostgreSQL hangs (every process SIGSTOPped, connections
left open, as in a partition or a failover) under load, then SIGCONTed: are decided tasks served as
before, does `/health` answer at once, are new tasks and feedback refused (503) within `[store] timeout`,
how soon is everything served again, and is every acknowledged decision and outcome stored once?

Run from the repository root (prints figures and each goal's verdict; exits 1 if a check fails; not a test):
  PYTHONPATH=packages/oracle/src:packages/env/src:packages/train/src:packages/train/tests \
    python packages/train/benchmarks/bench_serve_hang.py [--hang 10] [--baseline 10] [--timeout 2] \
      [--decided 100] [--concurrency 4] [--rate 20] [--checkpoint D/checkpoint.json]

Setup (bench_serve_team.py's): a stub upstream process, a throwaway PostgreSQL cluster, 3 replicas
(`router-train serve` child processes). `--decided` conversations are started and given 3 turns each,
turn t on replica (i + t) mod 3, so every replica has served (and holds in memory) every decided task.
Then, for the whole run: `--concurrency` clients send further turns of decided conversations (`--rate`
turns/s in all, at most); one sends a
new conversation's first turn every 0.1 s (round robin over the replicas); one posts a decided task's
outcome every 0.2 s; each replica's /health is polled every 50 ms. Phases: A (baseline, `--baseline`
s), hang (`--hang` s of SIGSTOP), recovery (from SIGCONT until every replica has served a new task, then
3 s more). Feedback refused during the hang is posted again after recovery (as a client retrying would).
A request is counted in the phase it was sent in. At the end every acknowledged decision (a 200 on a new
task) and outcome (a 200 on feedback) is looked for in the database, once, with bench_serve_team's check.

Latency figures come from a 2-core machine shared with other work (its load is printed): noisy.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import signal
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from bench_serve import _pct, _request
from bench_serve_team import AUTH, Seen, base_config, check_records, replica_configs, stub_upstream
from postgres_server import PostgresServer, cluster
from serve_harness import Serve, free_port

from router_train.serve.forwarding import MODEL_HEADER, TASK_HEADER, UPSTREAM_KEEPALIVE_S

PHASES = ("A", "hang", "recovery")
EPSILON_S = 0.25
"""How far past `[store] timeout` a refusal may come (the 503's own round trip on a loaded machine)."""
TURN_GOAL_MS = 20.0
"""Decided-turn p99 during the hang may exceed phase A's by at most this (issue 54's goal)."""
HEALTH_GOAL_MS = 100.0
"""/health p99 during the hang (issue 54's goal)."""
REPLICAS = 3
SAYS_S = 1.0
"""/health can only know once a store call has timed out: within the timeout of SIGSTOP, plus the wait for
a call to start (new tasks arrive every 0.3 s per replica) and the 50 ms poll."""


@dataclass
class Sample:
    """One answered (or failed) request: when it was sent, how long it took, what came back."""

    phase: str
    at: float  # time.monotonic() when sent
    ms: float
    status: int  # 0: no HTTP answer (the exception is counted in `Run.errors`)
    body: str = ""
    replica: int = -1  # /health's replica


@dataclass
class Run:
    """What the load saw, by kind of request."""

    phase: str = "warm-up"
    turns: list[Sample] = field(default_factory=list)
    new: list[Sample] = field(default_factory=list)
    feedback: list[Sample] = field(default_factory=list)
    health: list[Sample] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    seen: Seen = field(default_factory=Seen)
    refused: list[int] = field(default_factory=list)  # conversations whose outcome was refused (503)
    back_s: dict[int, float] = field(default_factory=dict)  # replica -> s from SIGCONT to a served new task
    stopped_at: float = 0.0  # time.monotonic() at SIGSTOP
    stop: bool = False


async def _timed(run: Run, into: list[Sample], call: Any, replica: int = -1) -> httpx.Response | None:
    phase, at, began = run.phase, time.monotonic(), time.perf_counter()
    try:
        r: httpx.Response = await call
    except httpx.TransportError as exc:
        run.errors[f"{phase}: {type(exc).__name__}"] += 1
        into.append(Sample(phase, at, (time.perf_counter() - began) * 1000, 0, replica=replica))
        return None
    ms = (time.perf_counter() - began) * 1000
    into.append(Sample(phase, at, ms, r.status_code, r.text, replica))
    return r


def _chat(client: httpx.AsyncClient, url: str, turn: int, conversation: int) -> Any:
    return client.post(f"{url}/v1/chat/completions", json=_request(turn, conversation))


async def _new_task(run: Run, client: httpx.AsyncClient, url: str, conversation: int) -> bool:
    """A new conversation's first turn; an acknowledged decision is kept in `run.seen`."""
    r = await _timed(run, run.new, _chat(client, url, 1, conversation))
    if r is None or r.status_code != 200:
        return False
    run.seen.tasks[conversation] = r.headers[TASK_HEADER]
    run.seen.models[conversation] = [r.headers[MODEL_HEADER]]
    return True


async def _warm_up(run: Run, client: httpx.AsyncClient, urls: list[str], decided: int) -> None:
    """Decide `decided` conversations, each with a turn on every replica (so each holds it in memory)."""

    async def one(i: int) -> None:
        assert await _new_task(run, client, urls[i % REPLICAS], i), f"conversation {i} was not decided"
        for t in range(1, REPLICAS):
            r = await _chat(client, urls[(i + t) % REPLICAS], t + 1, i)
            assert r.status_code == 200, f"warm-up turn: HTTP {r.status_code} {r.text}"
            run.seen.models[i].append(r.headers[MODEL_HEADER])

    await asyncio.gather(*(one(i) for i in range(decided)))
    run.new.clear()


async def _turns(
    run: Run, client: httpx.AsyncClient, urls: list[str], picks: Any, every_s: float
) -> None:
    """Further turns of decided conversations, one every `every_s` (or back to back when slower), until
    the run stops."""
    while not run.stop:
        began = time.monotonic()
        i, t = next(picks)
        r = await _timed(run, run.turns, _chat(client, urls[(i + t) % REPLICAS], 1 + t % 4, i))
        if r is not None and r.status_code == 200:
            run.seen.models[i].append(r.headers[MODEL_HEADER])
        await asyncio.sleep(max(0.0, every_s - (time.monotonic() - began)))


async def _feedback(run: Run, client: httpx.AsyncClient, url: str, i: int) -> int:
    """Post conversation i's outcome; its status (0: no answer). A 200 is an acknowledged outcome."""
    task = run.seen.tasks[i]
    report = {"task": task, "resolved": i % 3 != 0, "cost": round(0.01 + (i % 50) / 1000, 3)}
    r = await _timed(run, run.feedback, client.post(f"{url}/v1/feedback", json=report, headers=AUTH))
    if r is None:
        return 0
    if r.status_code == 200:
        run.seen.outcomes[task] = r.json()
    return r.status_code


async def _outcomes(run: Run, client: httpx.AsyncClient, urls: list[str], decided: int) -> None:
    for i in itertools.cycle(range(decided)):
        if run.stop:
            return
        pending = run.seen.tasks[i] not in run.seen.outcomes and i not in run.refused
        if pending and await _feedback(run, client, urls[i % REPLICAS], i) != 200:
            run.refused.append(i)
        await asyncio.sleep(0.2)


async def _arrivals(run: Run, client: httpx.AsyncClient, urls: list[str], first: int) -> None:
    sent = []
    for n in itertools.count():
        if run.stop:
            break
        sent.append(asyncio.ensure_future(_new_task(run, client, urls[n % REPLICAS], first + n)))
        await asyncio.sleep(0.1)
    await asyncio.gather(*sent)


async def _health(run: Run, client: httpx.AsyncClient, urls: list[str], r: int) -> None:
    while not run.stop:
        await _timed(run, run.health, client.get(f"{urls[r]}/health"), r)
        await asyncio.sleep(0.05)


async def _recovered(run: Run, client: httpx.AsyncClient, urls: list[str], first: int) -> None:
    """Per replica: seconds from SIGCONT until it serves a new task (a probe every 50 ms, up to 60 s)."""
    began = time.monotonic()
    probe = itertools.count(first)

    async def one(r: int) -> None:
        while time.monotonic() - began < 60:
            if await _new_task(run, client, urls[r], next(probe)):
                run.back_s[r] = time.monotonic() - began
                return
            await asyncio.sleep(0.05)

    await asyncio.gather(*(one(r) for r in range(REPLICAS)))


async def _load(urls: list[str], db: PostgresServer, args: argparse.Namespace) -> Run:
    run = Run()
    limits = httpx.Limits(max_connections=4 * args.concurrency + 50, keepalive_expiry=UPSTREAM_KEEPALIVE_S)
    async with httpx.AsyncClient(timeout=30, limits=limits) as client:
        await _warm_up(run, client, urls, args.decided)
        every_s = args.concurrency / args.rate
        picks = iter((i, t) for t in itertools.count(REPLICAS) for i in range(args.decided))
        load = [
            *(_turns(run, client, urls, picks, every_s) for _ in range(args.concurrency)),
            _outcomes(run, client, urls, args.decided),
            _arrivals(run, client, urls, 1_000_000),
            *(_health(run, client, urls, r) for r in range(REPLICAS)),
        ]
        tasks = [asyncio.ensure_future(x) for x in load]
        run.phase = "A"
        await asyncio.sleep(args.baseline)
        await asyncio.to_thread(db.signal, signal.SIGSTOP)
        run.phase, run.stopped_at = "hang", time.monotonic()
        print(f"  SIGSTOP: {len(db.processes())} PostgreSQL processes, for {args.hang:g} s", flush=True)
        try:
            await asyncio.sleep(args.hang)
        finally:
            await asyncio.to_thread(db.signal, signal.SIGCONT)
        run.phase = "recovery"
        await _recovered(run, client, urls, 2_000_000)
        await asyncio.sleep(3)
        run.stop = True
        await asyncio.gather(*tasks)
        for i in run.refused:  # refused while down: the client sends it again
            for _ in range(50):
                if await _feedback(run, client, urls[(i + 1) % REPLICAS], i) == 200:
                    break
                await asyncio.sleep(0.2)
    return run


def _ms(samples: list[Sample]) -> str:
    if not samples:
        return "-"
    ms = [s.ms for s in samples]
    return f"{_pct(ms, 0.5):.1f} / {_pct(ms, 0.99):.1f} / {max(ms):.1f}"


def _statuses(samples: list[Sample]) -> str:
    return ", ".join(f"{k}: {n}" for k, n in sorted(Counter(s.status for s in samples).items())) or "-"


def _table(run: Run) -> None:
    by: dict[tuple[str, str], list[Sample]] = defaultdict(list)
    for kind in ("turns", "health", "new", "feedback"):
        for s in getattr(run, kind):
            by[kind, s.phase].append(s)
    print(f"{'requests':<32}{'phase':<10}{'n':>6}  {'p50 / p99 / max ms':<26}statuses")
    names = {
        "turns": "turns of decided tasks",
        "health": "/health (3 replicas)",
        "new": "new tasks (first turn)",
        "feedback": "feedback posts",
    }
    for kind, name in names.items():
        for phase in PHASES:
            got = by[kind, phase]
            print(f"{name:<32}{phase:<10}{len(got):>6}  {_ms(got):<26}{_statuses(got)}")
    for kind in ("new", "feedback"):
        for phase in PHASES:
            said = Counter(_message(s.body) for s in by[kind, phase] if s.status == 503)
            for message, n in said.most_common():
                print(f"  {names[kind]}, {phase}, 503 x{n}: {message}")
        early = [s for s in by[kind, "A"] if s.status != 200]  # nothing is down yet: when, how long
        if early:
            print(f"  {names[kind]}, A, not 200 x{len(early)}: sent "
                  + ", ".join(f"{run.stopped_at - s.at:.2f} s before SIGSTOP ({s.ms:.0f} ms)" for s in early))
        served = [s.at - run.stopped_at for s in by[kind, "hang"] if s.status == 200]
        if served:
            sent = ", ".join(f"{t:.3f}" for t in served)
            print(f"  {names[kind]}, hang, 200 x{len(served)}: sent {sent} s after the SIGSTOPs were sent")


def _message(body: str) -> str:
    try:
        return str(json.loads(body)["error"]["message"])
    except (ValueError, KeyError, TypeError):
        return body[:100]


def _says_unavailable(run: Run) -> dict[int, tuple[float, bool]]:
    """Per replica: seconds from SIGSTOP until its /health first answered "store unavailable", and
    whether every later /health of the hang said so too."""
    out = {}
    for r in range(REPLICAS):
        got = sorted((s for s in run.health if s.phase == "hang" and s.replica == r), key=lambda s: s.at)
        down = ['"store unavailable"' in s.body for s in got]
        if True in down:
            first = down.index(True)
            out[r] = (got[first].at + got[first].ms / 1000 - run.stopped_at, all(down[first:]))
    return out


def _goals(run: Run, timeout_s: float) -> list[tuple[str, bool]]:
    phase: dict[tuple[str, str], list[Sample]] = defaultdict(list)
    for kind in ("turns", "health", "new", "feedback"):
        for s in getattr(run, kind):
            phase[kind, s.phase].append(s)
    a = [s.ms for s in phase["turns", "A"]]
    hang = [s.ms for s in phase["turns", "hang"]]
    turns_ok = all(s.status == 200 for s in phase["turns", "hang"]) and bool(hang)
    delta = _pct(hang, 0.99) - _pct(a, 0.99) if a and hang else float("inf")
    health = phase["health", "hang"]
    limit_ms = (timeout_s + EPSILON_S) * 1000
    says = _says_unavailable(run)

    def refused(kind: str) -> bool:
        got = phase[kind, "hang"]
        return bool(got) and all(s.status == 503 and s.ms <= limit_ms for s in got)

    return [
        (f"decided turns during the hang all 200, p99 within {TURN_GOAL_MS:g} ms of phase A's "
         f"({delta:+.1f} ms)", turns_ok and delta <= TURN_GOAL_MS),
        (f"/health during the hang p99 < {HEALTH_GOAL_MS:g} ms "
         f"({_pct([s.ms for s in health], 0.99) if health else float('nan'):.1f} ms; phase A's "
         f"{_pct([s.ms for s in phase['health', 'A']], 0.99):.1f} ms), all 200",
         bool(health) and _pct([s.ms for s in health], 0.99) < HEALTH_GOAL_MS
         and all(s.status == 200 for s in health)),
        (f"/health says \"store unavailable\" within timeout + {SAYS_S:g} s of SIGSTOP, and then until "
         f"SIGCONT (s: {', '.join(f'{says[r][0]:.2f}' for r in sorted(says))})",
         len(says) == REPLICAS and all(t <= timeout_s + SAYS_S and kept for t, kept in says.values())),
        (f"new tasks during the hang all 503 within timeout + {EPSILON_S:g} s ({limit_ms:.0f} ms)",
         refused("new")),
        (f"feedback during the hang all 503 within {limit_ms:.0f} ms", refused("feedback")),
        (f"every replica serves new tasks again after SIGCONT (s: "
         f"{', '.join(f'{run.back_s[r]:.2f}' for r in sorted(run.back_s))})", len(run.back_s) == REPLICAS),
        ("no request failed without an HTTP answer", not run.errors),
    ]


def _load_average() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f}, {five:.2f}, {fifteen:.2f} on {os.cpu_count()} cores"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--baseline", type=float, default=10.0, help="seconds of phase A")
    parser.add_argument("--hang", type=float, default=10.0, help="seconds PostgreSQL is SIGSTOPped")
    parser.add_argument("--timeout", type=float, default=2.0, help="the replicas' [store] timeout, s")
    parser.add_argument("--decided", type=int, default=100, help="conversations decided before phase A")
    parser.add_argument("--concurrency", type=int, default=4, help="clients sending decided turns")
    parser.add_argument("--rate", type=float, default=20.0, help="decided turns per second, at most")
    parser.add_argument("--checkpoint", type=Path, default=None, help="default: fit irt --split train")
    args = parser.parse_args()
    print(f"before: {_load_average()} (shared machine: latency figures are noisy)", flush=True)
    with stub_upstream() as upstream, tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        base = base_config(work, args.checkpoint, upstream)
        with cluster() as db:
            pg = work / "pg"
            pg.mkdir()
            configs = replica_configs(pg, base, db.url, REPLICAS, args.timeout)
            replicas = [Serve(c, free_port(), pg / f"replica{r}.log") for r, c in enumerate(configs)]
            print(f"3 replicas on PostgreSQL, [store] timeout {args.timeout:g} s; load starts", flush=True)
            try:
                run = asyncio.run(_load([r.url for r in replicas], db, args))
            finally:
                for r in replicas:
                    r.stop()
            _table(run)
            if run.errors:
                print(f"no HTTP answer: {dict(run.errors)}")
            goals = _goals(run, args.timeout)
            failures = check_records(
                "PostgreSQL", run.seen, db.url, [pg / f"replica{r}.jsonl" for r in range(REPLICAS)],
                argparse.Namespace(turns="1 or more"),
            )
    print(f"after: {_load_average()}")
    for name, ok in goals:
        print(f"  {'met' if ok else 'NOT MET'}: {name}")
    failures += [name for name, ok in goals if not ok]
    if failures:
        print("FAILED:\n  " + "\n  ".join(failures))
        sys.exit(1)
    print("ok: every goal met; no acknowledged decision or outcome lost or duplicated")


if __name__ == "__main__":
    main()
