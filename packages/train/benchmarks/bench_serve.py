"""Benchmark of `router-train serve`: the latency the proxy adds, and requests per second.

Run from the repository root (prints figures; not a test):
  PYTHONPATH=packages/oracle/src:packages/env/src:packages/train/src \
    python packages/train/benchmarks/bench_serve.py [--requests 2000] [--concurrency 32] [--checkpoint PATH]
  (`--store postgresql`: the same against a throwaway PostgreSQL cluster; add packages/train/tests to
  PYTHONPATH)

Three processes on 127.0.0.1: a stub OpenAI-compatible upstream (a fixed chat completion, no delay), the
proxy (uvicorn, one worker, a `router-train local` checkpoint: trained for a few steps unless given)
serving the stub for every pool model, and this client (httpx, keep-alive). The client sends the same
chat request (a system and a user message of a few kB, like an agent's) to the stub directly and through
the proxy, interleaved, and prints the latency of each and their difference: the proxy's added latency
(its first request routes the task, every later one is a sticky lookup). Then requests/s through the
proxy with `--concurrency` requests in flight, each request a turn of one of 50 conversations.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing
import os
import socket
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

ISSUE = "QuerySet.only() after select_related() crashes on proxy models. " * 40  # ~2.5 kB, an issue's size


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _stub(port: int) -> None:
    import uvicorn
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    body = json.dumps(
        {
            "id": "chatcmpl-bench",
            "object": "chat.completion",
            "created": 1,
            "model": "stub",
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
    ).encode()

    async def chat(request: Request) -> Response:
        await request.body()
        return Response(body, media_type="application/json")

    app = Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)


def _proxy(config_path: str, port: int) -> None:
    from router_train.cli import main

    main(["serve", config_path, "--port", str(port)])


def _wait(url: str) -> None:
    import httpx

    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if httpx.get(url, timeout=1).status_code < 500:
                return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise RuntimeError(f"{url} did not come up")


def _cpu_s(pid: int | None) -> float:
    """CPU seconds (user + system) a process has used so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _request(turn: int, task: int = 0) -> dict[str, Any]:
    messages: list[dict[str, str]] = [
        {"role": "system", "content": "You are a helpful assistant that can interact with a shell."},
        {"role": "user", "content": f"Task {task}: {ISSUE}"},
    ]
    for i in range(turn):
        messages += [
            {"role": "assistant", "content": f"ls {i}"},
            {"role": "user", "content": "file.py\n" * 20},
        ]
    return {"model": "router", "messages": messages}


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--requests", type=int, default=2000, help="sequential requests per target")
    parser.add_argument("--concurrency", type=int, default=32, help="requests in flight for requests/s")
    parser.add_argument("--checkpoint", type=Path, default=None, help="a router-train local checkpoint")
    parser.add_argument(
        "--store",
        choices=("sqlite", "postgresql"),
        default="sqlite",
        help="the proxy's store: the embedded SQLite file, or a throwaway PostgreSQL cluster (Debian's "
        "binaries, packages/train/tests/postgres_server.py: put packages/train/tests on PYTHONPATH)",
    )
    args = parser.parse_args()

    import httpx
    import tomli_w

    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as services:
        store = str(Path(tmp) / "state" / "decisions.sqlite")
        if args.store == "postgresql":
            from postgres_server import cluster

            store = services.enter_context(cluster()).url
        checkpoint = args.checkpoint
        if checkpoint is None:
            from router_train.local.config import LocalTrainConfig
            from router_train.local.trainer import train_local

            t0 = time.perf_counter()
            cfg = LocalTrainConfig(output_dir=Path(tmp) / "router", steps=5, tasks_per_step=16, shift_folds=0)
            checkpoint = train_local(cfg, progress=False).checkpoint_path
            print(f"trained a 5-step local router in {time.perf_counter() - t0:.1f} s")
        from router_train.route import CheckpointSpec, load_router

        pool = load_router(CheckpointSpec(checkpoint=checkpoint)).pool
        stub_port, proxy_port = _free_port(), _free_port()
        stub_url = f"http://127.0.0.1:{stub_port}/v1"
        config = Path(tmp) / "serve.toml"
        config.write_text(
            tomli_w.dumps(
                {
                    "router": {"checkpoint": str(checkpoint)},
                    "upstreams": {m: {"base_url": stub_url, "model": m} for m in pool},
                    "store": store,
                    "decision_log": str(Path(tmp) / "state" / "decisions.jsonl"),
                }
            )
        )
        ctx = multiprocessing.get_context("spawn")
        procs = [
            ctx.Process(target=_stub, args=(stub_port,)),
            ctx.Process(target=_proxy, args=(str(config), proxy_port)),
        ]
        for p in procs:
            p.start()
        try:
            _wait(f"{stub_url}/chat/completions")
            proxy_url = f"http://127.0.0.1:{proxy_port}"
            _wait(f"{proxy_url}/health")
            payload = json.dumps(_request(turn=3)).encode()
            headers = {"content-type": "application/json"}
            direct: list[float] = []
            proxied: list[float] = []
            stub_pid, proxy_pid = procs[0].pid, procs[1].pid
            with httpx.Client(timeout=30) as client:
                for _ in range(50):  # warm-up: connections, the first (routed) request, caches
                    client.post(f"{stub_url}/chat/completions", content=payload, headers=headers)
                    client.post(f"{proxy_url}/v1/chat/completions", content=payload, headers=headers)
                cpu0 = _cpu_s(stub_pid), _cpu_s(proxy_pid)
                for _ in range(args.requests):
                    t = time.perf_counter()
                    client.post(
                        f"{stub_url}/chat/completions", content=payload, headers=headers
                    ).raise_for_status()
                    direct.append((time.perf_counter() - t) * 1000)
                    t = time.perf_counter()
                    r = client.post(f"{proxy_url}/v1/chat/completions", content=payload, headers=headers)
                    r.raise_for_status()
                    proxied.append((time.perf_counter() - t) * 1000)
                # Each process's CPU time per request: what the proxy costs, free of the wait for a core
                # that a loaded machine adds to the wall-clock figures.
                stub_cpu = (_cpu_s(stub_pid) - cpu0[0]) * 1000 / (2 * args.requests)
                proxy_cpu = (_cpu_s(proxy_pid) - cpu0[1]) * 1000 / args.requests
            records = [json.loads(line) for line in (Path(tmp) / "state" / "decisions.jsonl").open()]
            route_ms = [r["latency_ms"] for r in records if r.get("event", "decision") == "decision"]
            print(
                f"requests: {args.requests} sequential per target, payload {len(payload)} bytes, "
                f"store: {args.store}"
            )
            for label, values in (("direct to stub:  ", direct), ("through proxy:   ", proxied)):
                print(f"{label} median {statistics.median(values):.2f} ms, p99 {_pct(values, 0.99):.2f} ms")
            print(
                f"added by proxy:   median {statistics.median(proxied) - statistics.median(direct):.2f} ms, "
                f"p99 {_pct(proxied, 0.99) - _pct(direct, 0.99):.2f} ms"
            )
            print(f"CPU per request:  proxy {proxy_cpu:.2f} ms, stub upstream {stub_cpu:.2f} ms")
            print(f"load average during the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
            print(f"first request's routing decision (local router): {route_ms[0]:.2f} ms")

            async def load(url: str, n: int) -> float:
                bodies = [json.dumps(_request(turn=i % 5, task=i % 50)).encode() for i in range(n)]
                sem = asyncio.Semaphore(args.concurrency)
                limits = httpx.Limits(max_connections=args.concurrency)
                async with httpx.AsyncClient(timeout=60, limits=limits) as ac:

                    async def one(body: bytes) -> None:
                        async with sem:
                            (await ac.post(url, content=body, headers=headers)).raise_for_status()

                    t = time.perf_counter()
                    await asyncio.gather(*(one(b) for b in bodies))
                    return n / (time.perf_counter() - t)

            n = args.requests
            rps_direct = asyncio.run(load(f"{stub_url}/chat/completions", n))
            rps_proxy = asyncio.run(load(f"{proxy_url}/v1/chat/completions", n))
            print(
                f"requests/s, {args.concurrency} in flight, 50 conversations: "
                f"through proxy {rps_proxy:.0f}, direct to stub {rps_direct:.0f}"
            )
        finally:
            for p in procs:
                p.terminate()
            for p in procs:
                p.join(timeout=10)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
