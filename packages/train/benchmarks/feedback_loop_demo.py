"""The feedback loop, live: serve -> POST /v1/feedback -> feedback --refit -> a restarted serve.

Run from the repository root (prints the transcript docs/feedback.md shows; not a test):
  PYTHONPATH=packages/oracle/src:packages/env/src:packages/train/src \
    python packages/train/benchmarks/feedback_loop_demo.py [--tasks 60] [--explore 0.1] [--dir DIR]

On 127.0.0.1: a stub OpenAI-compatible upstream answers for every pool model of the bundled table
(Claude Opus 4.7, GPT-5.5, Nemotron 3 Super). `router-train fit irt --split train` fits the router;
`router-train serve` routes `--tasks` conversations (two turns each, the openai client, the tasks of the
table's eval split, `x-router-task-id` = the SWE-bench instance id) with `[explore] rate`; each task's
outcome is posted to /v1/feedback: the table's real outcome and cost of the model that served it (the
agent runs themselves are not re-run). Then serve is stopped, `router-train feedback` reads the store and
refits the checkpoint, and serve is restarted on the refit and its /health read.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import openai
from openai.types.chat import ChatCompletionMessageParam
from serve_harness import (
    TOKEN,
    Serve,
    StubUpstream,
    bundled_table,
    eval_tasks,
    free_port,
    router_train,
    write_config,
)

from router_oracle.table import TaskRecord


def _show(command: str, output: str) -> None:
    print(f"$ {command}")
    if output:
        print(output)


def _converse(client: openai.OpenAI, task: TaskRecord) -> str:
    """Two turns of one task's conversation through the proxy; the pool model that served it."""
    headers = {"x-router-task-id": task.instance_id, "x-router-repo": task.repo}
    messages: list[ChatCompletionMessageParam] = [{"role": "user", "content": task.problem_statement}]
    served = ""
    for turn in range(2):
        raw = client.chat.completions.with_raw_response.create(
            model="router",
            messages=messages,
            extra_headers=headers,
        )
        served = raw.headers["x-router-model"]
        reply = raw.parse().choices[0].message.content or ""
        messages += [{"role": "assistant", "content": reply}, {"role": "user", "content": f"turn {turn + 2}"}]
    return served


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tasks", type=int, default=60, help="conversations (eval-split tasks) to route")
    parser.add_argument("--explore", type=float, default=0.1, help="serve's [explore] rate")
    parser.add_argument("--dir", type=Path, default=None, help="work directory (default: a temporary one)")
    args = parser.parse_args()
    start = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        work = (args.dir or Path(tmp)).resolve()
        work.mkdir(parents=True, exist_ok=True)
        table = bundled_table()
        pool = [m.id for m in table.pool.models]
        tasks = eval_tasks(table)[: args.tasks]
        d, d2, state = work / "D", work / "D2", work / "serve-state"
        with StubUpstream() as upstream:
            _show(
                f"router-train fit irt --split train --output-dir {d}",
                router_train("fit", "irt", "--split", "train", "--output-dir", str(d)),
            )
            cfg = write_config(
                work / "serve.toml", d / "checkpoint.json", upstream.url, pool, state, args.explore
            )
            _show(f"cat {cfg}", cfg.read_text(encoding="utf-8").strip())
            port = free_port()
            serve = Serve(cfg, port, work / "serve.log")
            try:
                _show(f"FEEDBACK_TOKEN=s3cret router-train serve {cfg} --port {port} &", serve.banner())
                client = openai.OpenAI(base_url=f"{serve.url}/v1", api_key="unused", max_retries=0)
                with ThreadPoolExecutor(8) as pool_x:
                    served = list(pool_x.map(lambda t: _converse(client, t), tasks))
                posted: dict[int, int] = {}
                with httpx.Client(base_url=serve.url, headers={"authorization": f"Bearer {TOKEN}"}) as http:
                    for task, model in zip(tasks, served, strict=True):
                        outcome = task.per_model[model]
                        body = {
                            "task": task.instance_id,
                            "resolved": outcome.resolve_rate >= 0.5,
                            "cost": outcome.cost,
                        }
                        r = http.post("/v1/feedback", json=body)
                        posted[r.status_code] = posted.get(r.status_code, 0) + 1
                    example = http.post(
                        "/v1/feedback", json=body
                    ).text  # the last one again: the stored record
                by_model = {m: served.count(m) for m in pool}
                print(
                    f"# {len(tasks)} eval-split conversations, 2 turns each, openai client, 8 at a time: "
                    f"served by {json.dumps(by_model)}"
                )
                print(
                    "# POST /v1/feedback (the table's outcome and cost of the served model): "
                    f"status {json.dumps(posted)}"
                )
                print(f"# e.g. {json.dumps(body)} -> {example}")
            finally:
                status = serve.stop()
            print(f"# serve stopped (Ctrl-C), exit {status}")
        store = state / "decisions.sqlite"
        with sqlite3.connect(store) as db:
            explored = sum(json.loads(r[0])["explored"] for r in db.execute("SELECT record FROM decisions"))
        print(f"# {explored} of {len(tasks)} decisions explored")
        _show(f"router-train feedback {store}", router_train("feedback", str(store)))
        ckpt = d / "checkpoint.json"
        _show(
            f"router-train feedback {store} --candidate {ckpt} --refit {ckpt} -o {d2}",
            router_train(
                "feedback", str(store), "--candidate", str(ckpt), "--refit", str(ckpt), "-o", str(d2)
            ),
        )
        with StubUpstream() as upstream:
            cfg2 = write_config(
                work / "serve2.toml", d2 / "checkpoint.json", upstream.url, pool, state, args.explore
            )
            port = free_port()
            serve = Serve(cfg2, port, work / "serve2.log")
            try:
                _show(f"FEEDBACK_TOKEN=s3cret router-train serve {cfg2} --port {port} &", serve.banner())
                _show(f"curl -s {serve.url}/health", httpx.get(f"{serve.url}/health").text)
            finally:
                serve.stop()
    print(f"# {time.monotonic() - start:.1f} s wall")


if __name__ == "__main__":
    main()
