"""Benchmark: `router-train evaluate` on 500 tasks x 8 samples of vf-eval traces.

Writes a traces.jsonl in verifiers 0.4.0's episode format (one episode per sample, built from the real
`vf-eval` episode in tests/data, with each task's full prompt and table row as vf-eval records them),
then times reading it, the metrics, the baselines and the report files, on the bundled table (all 500
tasks), and prints the figures.

    PYTHONPATH=packages/oracle/src:packages/env/src:packages/train/src \
        python packages/train/benchmarks/bench_evaluate.py [--samples 8] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import tempfile
import time
from pathlib import Path

from router_frontier_rl import bundled_table_path, format_route
from router_frontier_rl.prompt import user_prompt
from router_train.evaluate import evaluate, read_table, read_traces, render_terminal, write_report
from router_train.evaluate.config import EvaluateConfig
from router_train.evaluate.run import Source
from router_train.scoring.metrics import compute_metrics, single_model_points

TEMPLATE = Path(__file__).resolve().parents[1] / "tests" / "data" / "evaluate_vf_traces.jsonl"


def write_traces(path: Path, table, samples: int, seed: int = 0) -> int:  # type: ignore[no-untyped-def]
    """One episode per (task, sample): 70% the oracle, 25% another model, 5% an unparseable reply."""
    template = json.loads(TEMPLATE.read_text().splitlines()[0])
    rng = random.Random(seed)
    ids = table.pool.ids
    with path.open("w", encoding="utf-8") as fh:
        for k, task in enumerate(table.tasks):
            record = task.model_dump(mode="json")
            for _ in range(samples):
                u = rng.random()
                if u < 0.70:
                    reply = format_route(task.oracle)
                elif u < 0.95:
                    reply = format_route(rng.choice([i for i in ids if i != task.oracle]))
                else:
                    reply = "I would pick <route>the best one</route>"
                ep = copy.deepcopy(template)
                for data in [ep["task"]["data"], ep["traces"][0]["task"]["data"]]:
                    data.update(idx=k, id=task.instance_id, prompt=user_prompt(task), record=record)
                nodes = ep["traces"][0]["nodes"]
                nodes[1]["message"]["content"] = user_prompt(task)
                nodes[-1]["message"]["content"] = reply
                fh.write(json.dumps(ep, separators=(",", ":")) + "\n")
    return len(table.tasks) * samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=8)
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="bench-evaluate-"))
    work.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    table, info = read_table(bundled_table_path())
    t_table = time.perf_counter() - t0
    traces = work / "bench-router" / "traces.jsonl"
    traces.parent.mkdir(exist_ok=True)
    t0 = time.perf_counter()
    n = write_traces(traces, table, args.samples)
    t_write = time.perf_counter() - t0
    size = traces.stat().st_size
    known = {t.instance_id for t in table.tasks}

    t0 = time.perf_counter()
    decisions = read_traces(traces, table.pool.ids, known)
    t_read = time.perf_counter() - t0
    t0 = time.perf_counter()
    compute_metrics(decisions, table.tasks, single_model_points(table.tasks, table.pool.ids))
    t_metrics = time.perf_counter() - t0

    t0 = time.perf_counter()
    report = evaluate(
        table, info, EvaluateConfig(split="all", traces=[Source(name="bench-router", path=traces)])
    )
    t_eval = time.perf_counter() - t0
    t0 = time.perf_counter()
    write_report(report, work / "report")
    t_write_report = time.perf_counter() - t0

    print(render_terminal(report))
    print(
        f"tasks {len(table.tasks)} x samples {args.samples} = {n} episodes, traces.jsonl {size / 1e6:.1f} MB"
    )
    print(f"load table                         {t_table:7.3f}s")
    print(f"generate traces.jsonl (bench only) {t_write:7.3f}s")
    print(f"read + parse traces                {t_read:7.3f}s  ({n / t_read:,.0f} episodes/s)")
    print(f"metrics for one router             {t_metrics:7.3f}s  ({n / t_metrics:,.0f} decisions/s)")
    print(f"evaluate: traces + all baselines   {t_eval:7.3f}s")
    print(f"write report.json/.md/.png         {t_write_report:7.3f}s")
    print(f"total evaluate + write             {t_eval + t_write_report:7.3f}s   (work dir {work})")


if __name__ == "__main__":
    main()
