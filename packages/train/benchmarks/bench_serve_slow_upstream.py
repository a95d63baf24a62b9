"""Benchmark of `router-train serve` in front of a slow upstream: many conversations at once, none fails.

Run from the repository root (prints figures; not a test; about 40 s):
  PYTHONPATH=packages/oracle/src:packages/env/src:packages/train/src \
    python packages/train/benchmarks/bench_serve_slow_upstream.py [--conversations 200] [--turns 3] \
      [--delay-s 3] [--think-s 5] [--as-before]

Three processes on 127.0.0.1: a stub OpenAI-compatible upstream (uvicorn with its default 5 s keep-alive,
like vLLM's or SGLang's server, answering each request after `--delay-s`), the proxy (`router-train serve`
with a `router-train local` checkpoint trained for a few steps, the stub for every pool model) and this
client. The client runs `--conversations` conversations at once, started over 5 s, each `--turns` turns in
sequence with a pause of 0 to `--think-s` seconds between turns, so the proxy's pooled connections to the
upstream sit idle for every length up to and past the upstream's keep-alive (`--upstream-cpu-ms` keeps the
upstream's event loop busy that long per request, as a loaded server's is, so its timers run late). It
prints how many requests got 2xx and 5xx (and the 5xx messages) and the latency percentiles.

`--as-before` runs the proxy as it was before issue 41, item 9: httpx's default 5 s keep-alive expiry (the
upstream's own) and no second send of a request whose connection closed unanswered. Then a request now and
then meets a connection the upstream is closing and gets 502 `cannot be reached (ReadError)`.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import multiprocessing
import random
import socket
import tempfile
import time
from pathlib import Path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _stub(port: int, delay_s: float, cpu_ms: float) -> None:
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
        await asyncio.sleep(delay_s)
        busy = time.perf_counter()
        while time.perf_counter() - busy < cpu_ms / 1000:  # a loaded server's event loop: timers run late
            pass
        return Response(body, media_type="application/json")

    app = Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])
    # uvicorn's default keep-alive (5 s), said here so that the benchmark does not move with it.
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False, timeout_keep_alive=5)


def _proxy(config_path: str, port: int, as_before: bool) -> None:
    if as_before:
        from router_train.serve import forwarding as app

        app.UPSTREAM_KEEPALIVE_S = 5.0  # type: ignore[misc]  # httpx's default
        app.STALE_CONNECTION_ERRORS = ()  # type: ignore[misc,assignment]  # nothing is sent twice
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


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def _load(url: str, conversations: int, turns: int, think_s: float) -> list[tuple[int, float, str]]:
    """(status, latency s, error message or "") of every request of every conversation."""
    import httpx

    rng = random.Random(0)
    starts = [rng.uniform(0, 5) for _ in range(conversations)]
    pauses = [[rng.uniform(0, think_s) for _ in range(turns)] for _ in range(conversations)]
    results: list[tuple[int, float, str]] = []
    limits = httpx.Limits(max_connections=conversations + 10, max_keepalive_connections=conversations + 10)
    async with httpx.AsyncClient(timeout=120, limits=limits) as client:

        async def conversation(c: int) -> None:
            await asyncio.sleep(starts[c])
            messages = [{"role": "user", "content": f"Conversation {c}: fix the failing test in module {c}."}]
            for turn in range(turns):
                t = time.perf_counter()
                try:
                    r = await client.post(url, json={"model": "router", "messages": messages})
                    status = r.status_code
                    error = "" if status < 400 else r.json().get("error", {}).get("message", r.text[:200])
                except httpx.HTTPError as exc:  # the proxy itself failed to answer
                    status, error = 0, f"client: {type(exc).__name__}"
                results.append((status, time.perf_counter() - t, error))
                messages += [{"role": "assistant", "content": "ls"}, {"role": "user", "content": "a.py"}]
                await asyncio.sleep(pauses[c][turn])

        await asyncio.gather(*(conversation(c) for c in range(conversations)))
    return results


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--conversations", type=int, default=200, help="conversations at once")
    parser.add_argument("--turns", type=int, default=3, help="requests per conversation, in sequence")
    parser.add_argument("--delay-s", type=float, default=3.0, help="the upstream's time to answer")
    parser.add_argument("--think-s", type=float, default=5.0, help="longest pause between turns")
    parser.add_argument(
        "--upstream-cpu-ms",
        type=float,
        default=0.0,
        help="CPU the upstream spends per request (its loop busy)",
    )
    parser.add_argument("--as-before", action="store_true", help="the proxy's upstream client before the fix")
    args = parser.parse_args()

    import tomli_w

    from router_train.local.config import LocalTrainConfig
    from router_train.local.trainer import train_local
    from router_train.route import CheckpointSpec, load_router

    with tempfile.TemporaryDirectory() as tmp:
        cfg = LocalTrainConfig(output_dir=Path(tmp) / "router", steps=5, tasks_per_step=16, shift_folds=0)
        checkpoint = train_local(cfg, progress=False).checkpoint_path
        pool = load_router(CheckpointSpec(checkpoint=checkpoint)).pool
        stub_port, proxy_port = _free_port(), _free_port()
        stub_url = f"http://127.0.0.1:{stub_port}/v1"
        config = Path(tmp) / "serve.toml"
        config.write_text(
            tomli_w.dumps(
                {
                    "router": {"checkpoint": str(checkpoint)},
                    "upstreams": {m: {"base_url": stub_url, "model": m} for m in pool},
                    "store": str(Path(tmp) / "state" / "decisions.sqlite"),
                    "decision_log": str(Path(tmp) / "state" / "decisions.jsonl"),
                }
            )
        )
        ctx = multiprocessing.get_context("spawn")
        procs = [
            ctx.Process(target=_stub, args=(stub_port, args.delay_s, args.upstream_cpu_ms)),
            ctx.Process(target=_proxy, args=(str(config), proxy_port, args.as_before)),
        ]
        for p in procs:
            p.start()
        try:
            proxy_url = f"http://127.0.0.1:{proxy_port}"
            _wait(f"{proxy_url}/health")
            _wait(f"{stub_url}/chat/completions")
            t = time.perf_counter()
            results = asyncio.run(
                _load(f"{proxy_url}/v1/chat/completions", args.conversations, args.turns, args.think_s)
            )
            wall = time.perf_counter() - t
        finally:
            for p in procs:
                p.terminate()
            for p in procs:
                p.join(timeout=10)
    ok = [lat for status, lat, _ in results if 200 <= status < 300]
    failed = [(status, lat, error) for status, lat, error in results if not 200 <= status < 300]
    print(
        f"proxy {'as before the fix' if args.as_before else 'as built'}: {args.conversations} "
        f"conversations x "
        f"{args.turns} turns, upstream answering after {args.delay_s:g} s (keep-alive 5 s), pauses 0-"
        f"{args.think_s:g} s, upstream CPU {args.upstream_cpu_ms:g} ms/request; "
        f"{len(results)} requests in {wall:.1f} s"
    )
    print(
        f"2xx: {len(ok)}  5xx: {sum(1 for s, _, _ in failed if s >= 500)}  other: "
        f"{sum(1 for s, _, _ in failed if s < 500)}"
    )
    if ok:
        print(
            "2xx latency: "
            + ", ".join(f"p{int(q * 100)} {_pct(ok, q):.3f} s" for q in (0.5, 0.9, 0.99))
            + f", max {max(ok):.3f} s"
        )
    for (status, error), n in collections.Counter((s, e) for s, _, e in failed).items():
        latencies = ", ".join(f"{lat:.2f}" for s, lat, e in failed if (s, e) == (status, error))
        print(f"  {n} x {status}: {error} (after {latencies} s)")
    return 0 if not failed else 1


if __name__ == "__main__":
    raise SystemExit(main())
