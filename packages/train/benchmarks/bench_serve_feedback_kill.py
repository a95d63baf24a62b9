"""`router-train serve` with feedback, SIGKILLed mid-load: is every committed decision and outcome kept, once?

Run from the repository root (prints figures; exits 1 if a check fails; not a test):
  PYTHONPATH=packages/oracle/src:packages/env/src:packages/train/src \
    python packages/train/benchmarks/bench_serve_feedback_kill.py [--conversations 200] [--kill-after 100] \
      [--checkpoint D/checkpoint.json]

On 127.0.0.1: a stub upstream for every pool model of the bundled table, `serve` (a child process,
`[feedback]` and `[explore] rate = 0.1`) on a checkpoint (`router-train fit irt --split train` unless
given). `--conversations` conversations run at once (httpx, async), each a bundled task sent with its
instance id: a routed chat request, then POST /v1/feedback with an outcome. When `--kill-after` outcomes
have had their 200, serve is sent SIGKILL. Committed before the kill: each decision whose chat request got
a 200 (the decision is committed before the request is forwarded), each outcome that got a 200 (committed
before it). Serve is restarted on the same store; then every committed task is checked in the store
(same model, same outcome record), each conversation's next turn is sent (must go to the same model),
every outcome is posted again (committed: 200 with the same record; 404 only for a task never decided),
and the store and the decision log must hold each task's decision and outcome at most once; `router-train
feedback`'s reader (`serve.export.read_records`: its torn-line rule) must read both without an error and
count every acknowledged outcome exactly once in each.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
from serve_harness import TOKEN, Serve, StubUpstream, bundled_table, free_port, router_train, write_config

from router_train.serve.export import read_records

AUTH = {"authorization": f"Bearer {TOKEN}"}


def _report(i: int, instance_id: str) -> dict[str, Any]:
    return {"task": instance_id, "resolved": i % 3 != 0, "cost": round(0.05 + i / 1000, 3)}


async def _load(
    serve: Serve, tasks: list[tuple[str, str]], kill_after: int
) -> tuple[dict[str, tuple[str, str]], dict[str, dict[str, Any]], float]:
    """All conversations at once; SIGKILL after `kill_after` outcome 200s. (decided, outcomes, kill time)."""
    decided: dict[str, tuple[str, str]] = {}  # instance_id -> (task key, model), from a chat 200
    outcomes: dict[str, dict[str, Any]] = {}  # instance_id -> the outcome record its 200 returned
    killed_at = [0.0]
    limits = httpx.Limits(max_connections=len(tasks))
    async with httpx.AsyncClient(base_url=serve.url, timeout=60, limits=limits) as client:

        async def one(i: int, instance_id: str, text: str) -> None:
            try:
                body = {"model": "router", "messages": [{"role": "user", "content": text}]}
                r = await client.post(
                    "/v1/chat/completions", json=body, headers={"x-router-task-id": instance_id}
                )
                if r.status_code != 200:
                    return
                decided[instance_id] = (r.headers["x-router-task"], r.headers["x-router-model"])
                r = await client.post("/v1/feedback", json=_report(i, instance_id), headers=AUTH)
                if r.status_code == 200:
                    outcomes[instance_id] = r.json()
                    if len(outcomes) == kill_after:
                        serve.proc.kill()  # SIGKILL
                        killed_at[0] = time.monotonic()
            except httpx.TransportError:
                pass  # the proxy is gone

        start = time.monotonic()
        await asyncio.gather(*(one(i, iid, text) for i, (iid, text) in enumerate(tasks)))
    return decided, outcomes, killed_at[0] - start


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--conversations", type=int, default=200)
    parser.add_argument("--kill-after", type=int, default=100, help="outcome 200s before the SIGKILL")
    parser.add_argument("--checkpoint", type=Path, default=None, help="default: fit irt --split train")
    args = parser.parse_args()
    table = bundled_table()
    pool = [m.id for m in table.pool.models]
    tasks = [(t.instance_id, t.problem_statement) for t in table.tasks[: args.conversations]]
    failures: list[str] = []
    with tempfile.TemporaryDirectory() as tmp, StubUpstream() as upstream:
        work = Path(tmp)
        ckpt = args.checkpoint
        if ckpt is None:
            router_train("fit", "irt", "--split", "train", "--output-dir", str(work / "D"))
            ckpt = work / "D" / "checkpoint.json"
        state = work / "state"
        cfg = write_config(work / "serve.toml", ckpt.resolve(), upstream.url, pool, state, 0.1)
        port = free_port()
        serve = Serve(cfg, port, work / "serve.log")
        t0 = time.monotonic()
        decided, outcomes, kill_s = asyncio.run(_load(serve, tasks, args.kill_after))
        status = serve.proc.wait(timeout=60)
        load_s = time.monotonic() - t0
        print(
            f"{len(tasks)} concurrent conversations; serve SIGKILLed {kill_s:.2f} s into the load "
            f"(exit {status}), after {len(outcomes)} outcome 200s; {len(decided)} decisions had a chat 200"
        )
        if status != -9:
            failures.append(f"serve exited {status}, not by SIGKILL")
        if not len(outcomes) < len(tasks):
            failures.append("the kill came after every outcome: not mid-load")

        def store_rows() -> tuple[dict[str, str], dict[str, dict[str, Any]]]:
            with sqlite3.connect(state / "decisions.sqlite") as db:
                d = dict(db.execute("SELECT task, model FROM decisions").fetchall())
                o = {k: json.loads(r) for k, r in db.execute("SELECT task, record FROM outcomes")}
            return d, o

        t1 = time.monotonic()
        serve = Serve(cfg, port, work / "serve2.log")
        restart_s = time.monotonic() - t1
        try:
            d_rows, o_rows = store_rows()
            lost_d = [i for i, (key, model) in decided.items() if d_rows.get(key) != model]
            lost_o = [i for i, rec in outcomes.items() if o_rows.get(decided[i][0]) != rec]
            print(
                f"after restart ({restart_s:.1f} s): store holds {len(d_rows)} decisions, "
                f"{len(o_rows)} outcomes; committed decisions missing or changed: {len(lost_d)}, "
                f"committed outcomes missing or changed: {len(lost_o)}"
            )
            failures += [f"decision of {i} lost or changed" for i in lost_d]
            failures += [f"outcome of {i} lost or changed" for i in lost_o]
            moved = 0
            statuses: Counter[int] = Counter()
            with httpx.Client(base_url=serve.url, timeout=60) as http:
                for i, (iid, text) in enumerate(tasks):
                    if iid in decided:  # the next turn is sticky across the kill
                        msgs = [
                            {"role": "user", "content": text},
                            {"role": "assistant", "content": "ok"},
                            {"role": "user", "content": "go on"},
                        ]
                        r = http.post(
                            "/v1/chat/completions",
                            json={"model": "router", "messages": msgs},
                            headers={"x-router-task-id": iid},
                        )
                        moved += r.headers.get("x-router-model") != decided[iid][1]
                    r = http.post("/v1/feedback", json=_report(i, iid), headers=AUTH)
                    statuses[r.status_code] += 1
                    if iid in outcomes and (r.status_code != 200 or r.json() != outcomes[iid]):
                        failures.append(f"{iid}: re-posted outcome answered {r.status_code} {r.text}")
                    if r.status_code == 404 and iid in decided:
                        failures.append(f"{iid}: decided, yet feedback 404")
                    if r.status_code not in (200, 404):
                        failures.append(f"{iid}: feedback {r.status_code} {r.text}")
            print(
                f"next turn of the {len(decided)} committed conversations: {moved} served by another model; "
                f"every outcome posted again: {dict(sorted(statuses.items()))}"
            )
            failures += [f"{moved} conversations changed model"] if moved else []
        finally:
            serve.stop()
        d_rows, o_rows = store_rows()
        # What `router-train feedback` reads (its torn-line rule: a line the kill cut is skipped and
        # reported), from the log and from the store: every acknowledged outcome exactly once.
        raw_log = (state / "decisions.jsonl").read_bytes()
        dup_d = [k for k, n in Counter(_tasks_of(raw_log, "decision")).items() if n > 1]
        dup_o = [k for k, n in Counter(_tasks_of(raw_log, "outcome")).items() if n > 1]
        from_log, from_store = (
            read_records(state / "decisions.jsonl"),
            read_records(state / "decisions.sqlite"),
        )
        unlogged = len(from_store.outcomes) - len(from_log.outcomes)
        for name, got in (("log", from_log), ("store", from_store)):
            ids = Counter(o.instance_id for o in got.outcomes.values())
            missing = [iid for iid in outcomes if ids[iid] != 1]
            failures += [f"{name}: acknowledged outcome of {iid} counted {ids[iid]} times" for iid in missing]
        print(
            f"end: store {len(d_rows)} decisions, {len(o_rows)} outcomes (one row per task); "
            f"decision log: tasks with two decision lines {len(dup_d)}, with two outcome lines {len(dup_o)}, "
            f"torn lines {len(from_log.torn)}; outcomes in the store but not the log (cut between commit "
            f"and log line): {unlogged}; feedback reads log and store: each of the {len(outcomes)} "
            "acknowledged outcomes counted once in each" + ("" if not failures else " (NOT: see below)")
        )
        failures += [f"{k[:12]}: two decision lines" for k in dup_d] + [
            f"{k[:12]}: two outcome lines" for k in dup_o
        ]
        print(f"{time.monotonic() - t0:.1f} s wall from serve's start (load {load_s:.1f} s)")
    if failures:
        print("FAILED:\n  " + "\n  ".join(failures[:20]))
        sys.exit(1)
    print("ok: no committed decision or outcome lost, none duplicated")


def _tasks_of(log: bytes, event: str) -> list[str]:
    """The task key of every whole line of `event` in the log (a torn line has none)."""
    out = []
    for line in log.split(b"\n"):
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if record.get("event", "decision") == event:
            out.append(record["task"])
    return out


if __name__ == "__main__":
    main()
