"""The store on a hung PostgreSQL: how long a call takes to give up, what the next calls cost, and how
long the store takes to come back after the database does, with nothing acknowledged lost.

Run from the repository root (prints figures; exits 1 if a check fails; not a test):
  PYTHONPATH=packages/oracle/src:packages/env/src:packages/train/src:packages/train/tests \
    python packages/train/benchmarks/bench_store_hung.py [--timeout 2] [--rounds 3]

A throwaway PostgreSQL cluster (packages/train/tests/postgres_server.py). Each round: decisions, outcomes
and usage are written (acknowledged), every process of the cluster is sent SIGSTOP (its connections stay
open and the kernel acks: no server-side timeout fires), a new task's claim is timed (the first call: the
store's watchdog gives up at the timeout), then a second claim, an outcome and a held task's `get`; usage
is added while it is down (kept in memory); then SIGCONT, and the time until the store is available again.
At the end every acknowledged decision, outcome and usage record is looked for in the database.
"""

from __future__ import annotations

import argparse
import signal
import sys
import time

from postgres_server import cluster, fresh_database

from router_train.serve.records import DecisionRecord, OutcomeRecord, UsageRecord
from router_train.serve.store_api import StoreUnavailable
from router_train.serve.store_config import StoreConfig
from router_train.serve.store_open import open_store


def _decision(task: str) -> DecisionRecord:
    return DecisionRecord(
        router="r",
        instance_id=f"i-{task}",
        model="m1",
        time="2026-01-01T00:00:00.000Z",
        task=task,
        latency_ms=1.0,
        router_model="m1",
        propensity=1.0,
    )


def _outcome(task: str) -> OutcomeRecord:
    return OutcomeRecord(
        time="2026-01-01T00:00:01.000Z", task=task, instance_id=f"i-{task}", model="m1", resolved=True
    )


def _usage(task: str) -> UsageRecord:
    return UsageRecord(
        time="2026-01-01T00:00:02.000Z", task=task, model="m1", prompt_tokens=1, completion_tokens=1
    )


def _timed_refusal(call: object) -> float:
    began = time.monotonic()
    try:
        call()  # type: ignore[operator]
    except StoreUnavailable:
        return time.monotonic() - began
    raise AssertionError("the call on a hung database did not raise StoreUnavailable")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--timeout", type=float, default=2.0, help="the store's [store] timeout, seconds")
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()
    ok = True
    with cluster() as server:
        store = open_store(
            StoreConfig.model_validate({"location": fresh_database(server, "hung"), "timeout": args.timeout})
        )
        acked: list[str] = []
        usage_acked = 0
        try:
            for r in range(args.rounds):
                for n in range(20):
                    task = f"r{r}-t{n}"
                    store.claim(_decision(task))
                    store.record_outcome(_outcome(task))
                    store.add_usage(_usage(task))
                    acked.append(task)
                    usage_acked += 1
                server.signal(signal.SIGSTOP)
                try:
                    first = _timed_refusal(lambda r=r: store.claim(_decision(f"r{r}-new")))
                    second = _timed_refusal(lambda r=r: store.claim(_decision(f"r{r}-new2")))
                    third = _timed_refusal(lambda r=r: store.record_outcome(_outcome(f"r{r}-t0")))
                    began = time.monotonic()
                    held = store.get(f"r{r}-t0")
                    get_ms = (time.monotonic() - began) * 1000
                    store.add_usages([_usage(f"r{r}-t1"), _usage(f"r{r}-t2")])  # kept in memory
                    usage_acked += 2
                finally:
                    server.signal(signal.SIGCONT)
                began = time.monotonic()
                while not store.available:
                    if time.monotonic() - began > 60:
                        raise AssertionError("the store did not come back within 60 s of SIGCONT")
                    time.sleep(0.01)
                back = time.monotonic() - began
                print(
                    f"round {r + 1}: timeout {args.timeout:g} s; first call gave up after {first:.3f} s, "
                    f"the next ones after {second * 1000:.2f} / {third * 1000:.2f} ms; a held task's get "
                    f"{get_ms:.3f} ms ({held}); available again {back:.2f} s after SIGCONT"
                )
                ok &= first <= args.timeout + 0.25 and max(second, third) < 0.05 and held == "m1"
            decided = {d.task for d in store.decisions()}
            outcomes = {o.task for o in store.outcomes()}
            counted = sum(store.usage(t).requests for t in acked)
        finally:
            store.close()
    lost_d = len(set(acked) - decided)
    lost_o = len(set(acked) - outcomes)
    print(
        f"acknowledged: {len(acked)} decisions, {len(acked)} outcomes, {usage_acked} usage records; lost: "
        f"{lost_d} decisions, {lost_o} outcomes, {usage_acked - counted} usage records"
    )
    ok &= lost_d == lost_o == 0 and counted == usage_acked
    print("checks: " + ("passed" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
