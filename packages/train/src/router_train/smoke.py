"""`./pants run packages/train:smoke`: the project's main job, end to end in minutes on a laptop.

1. build the default oracle table from the bundled data and check it against the env's bundled copy;
2. load the `router-frontier-rl` environment (train split, upsampled, as hosted training uses it);
3. render the `smoke` prime-rl config and check it against the shipped file;
4. launch it on Prime Hosted Training when `prime` is installed and logged in; otherwise train the
   local CPU router, report it on the held-out split, saying so plainly, and place it against the
   best random mix of single models under 5-fold cross-validation (the honest yardstick).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from router_frontier_rl import RouterConfig, RouterTaskset, bundled_table_path
from router_oracle.analysis.stats import compute_stats, format_stats
from router_oracle.build import build_default_table
from router_oracle.infra.cli_runner import run_cli
from router_oracle.table import dumps_table, license_summary
from router_train.commands.launch import launch_status
from router_train.evaluate import evaluate, read_table, render_terminal
from router_train.evaluate.config import EvaluateConfig
from router_train.evaluate.fitted import LOCAL_ROUTER_NAME
from router_train.hosted import is_stale, load_config, prime_ready, shipped_path
from router_train.local.config import LocalTrainConfig
from router_train.local.heldout import format_summary
from router_train.local.trainer import train_local
from router_train.scoring.vs_mix import verdict

DEFAULT_OUTPUT = Path("dist/smoke")
CV_COMMAND = "./pants run packages/train:router-train -- evaluate --folds 5 -o dist/eval"
"""What the last step prints for the full judgement: every fold seed, every baseline."""


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _step(n: int, title: str) -> float:
    print(f"\n[{n}/4] {title}", flush=True)
    return time.perf_counter()


def _done(t0: float) -> None:
    print(f"      ({time.perf_counter() - t0:.1f} s)", flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    return run_cli(lambda: _main(argv), prog="smoke", interrupted="interrupted")


def _check_inputs() -> int:
    """Steps 1-3: the table, the environment, the hosted config; 1 when a shipped file is stale, else 0."""
    t0 = _step(1, "oracle table: default pool, bundled SWE-bench Verified + OpenHands Index data")
    table = build_default_table()
    bundled = bundled_table_path()
    if dumps_table(table) != bundled.read_text(encoding="utf-8"):
        print(f"error: {bundled} is stale; run `python -m router_frontier_rl.regenerate`", file=sys.stderr)
        return 1
    print(format_stats(compute_stats(table, origin="default pool")))
    print(f"      matches the environment's bundled table byte for byte ({bundled.name})")
    print(f"      licence: {license_summary(table.sources)}")
    _done(t0)

    t0 = _step(2, "environment router-frontier-rl (train split, upsampled)")
    tasks = list(RouterTaskset(RouterConfig(split="train", upsample=True)))
    held_out = list(RouterTaskset(RouterConfig(split="eval")))
    labels = Counter(t.data.record.oracle for t in tasks)
    print(f"      {len(tasks)} train tasks after upsampling, {len(held_out)} held out")
    print(f"      oracle labels in train: {dict(sorted(labels.items()))}")
    first = tasks[0].data
    print(f"      first task {first.record.instance_id}; system prompt starts:")
    for line in (first.system_prompt or "").splitlines()[:6]:
        print(f"        | {line}")
    _done(t0)

    t0 = _step(3, "hosted config: prime-rl `smoke` preset")
    shipped = shipped_path("smoke")
    if is_stale("smoke"):
        print(f"error: {shipped} is stale; run `router-train config --write-shipped`", file=sys.stderr)
        return 1
    config = load_config(shipped)
    orch = config.orchestrator
    print(
        f"      {shipped.name}: model {config.model.name}, {config.max_steps} steps, "
        f"{orch.batch_size} rollouts/step in groups of {orch.group_size}, lr {config.trainer.optim.lr}"
    )
    _done(t0)

    return 0


def _main(argv: Sequence[str] | None) -> int:
    parser = argparse.ArgumentParser(
        prog="smoke",
        description=(
            "The main job: table -> environment -> smoke config -> hosted launch when Prime is set up, "
            "else a short local GRPO run. Exit codes: 0 done, 1 a check failed, 2 bad input, 130 "
            "interrupted, others from the launch."
        ),
    )
    parser.add_argument("--output-dir", type=Path, default=DEFAULT_OUTPUT, help="local run outputs")
    parser.add_argument(
        "--steps", type=_positive_int, default=None, help="local GRPO steps (default: the trainer's)"
    )
    parser.add_argument("--local", action="store_true", help="train locally even when Prime is ready")
    args = parser.parse_args(argv)

    failed = _check_inputs()
    if failed:
        return failed
    ready, why = prime_ready()
    if ready and not args.local:
        _step(4, "launch on Prime Hosted Training")
        # Pushes what `./pants package packages/env` built (dist/); launch says how when it is missing.
        return launch_status("smoke")

    t0 = _step(4, "local GRPO training on the CPU")
    print(f"      NOT launching on Prime: {why if not ready else '--local given'}.")
    cfg = LocalTrainConfig(output_dir=args.output_dir, **({"steps": args.steps} if args.steps else {}))
    print(
        f"      Training the local router instead ({cfg.steps} steps, {cfg.tasks_per_step} tasks x "
        f"{cfg.samples_per_task} samples per step)."
    )
    result = train_local(cfg, progress=True)
    print(format_summary(result.summary))
    print(f"      checkpoint {result.checkpoint_path}, per-step metrics {result.metrics_path}")
    if result.warning:
        print(f"      warning: {result.warning}")
    print(
        "\n      Where it stands: 5-fold cross-validation over all 500 tasks (fold seed 0), the local router"
    )
    print("      and every baseline retrained in each fold on the other four:")
    cv_cfg = cfg.model_copy(update={"output_dir": LocalTrainConfig().output_dir})
    cv = EvaluateConfig(
        folds=5, fold_seeds=[0], local_routers=[(LOCAL_ROUTER_NAME, cv_cfg)], jobs=min(os.cpu_count() or 1, 4)
    )
    report = evaluate(*read_table(bundled_table_path()), cv)
    sys.stdout.write(render_terminal(report))
    mine = next(r for r in report.main.routers if r.name == LOCAL_ROUTER_NAME)
    print(f"      {LOCAL_ROUTER_NAME} vs the best random mix of single models: {verdict(mine.gap_vs_mix)}")
    print(f"      All five fold seeds: {CV_COMMAND}")
    _done(t0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
