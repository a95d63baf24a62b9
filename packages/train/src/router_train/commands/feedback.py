"""`router-train feedback LOG`: what `serve` recorded of its traffic (decisions, exploration, outcomes),
read from its decision log or its store; off-policy estimates of the serving policy, the router's own
picks, every always-X and `--candidate` checkpoints (IPS, SNIPS, DR with bootstrap intervals and the
effective sample size; `router_train.offpolicy`); `--long-table OUT.jsonl` exports the outcomes as the
long table `router-oracle build --long-table` reads; `--refit CKPT -o DIR` refits an IRT checkpoint's
per-model ability and cost to the traffic (`offpolicy.refit`) and saves it for `route` and `serve`.

Exit codes: 0 done, 2 bad input (one line on stderr, nothing written), 130 interrupted.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from pydantic import model_validator

from router_oracle.atomic_file import publish_directory, refuse_inputs_as_outputs, write_text_atomic
from router_oracle.file_hash import sha256_file
from router_oracle.frozen_model import FrozenModel
from router_oracle.numeric_option import Count, Seed
from router_train.checkpoint_io import dumps_checkpoint
from router_train.cli_args import field_flag, options_of
from router_train.commands import summary
from router_train.irt.checkpoint import read_irt
from router_train.offpolicy.estimators import BOOTSTRAP, MIN_TRIED, columns
from router_train.offpolicy.from_log import (
    LoggedTasks,
    candidate_picks,
    estimate_all,
    estimates_table,
    logged_tasks,
    task_texts,
)
from router_train.offpolicy.refit import RefitReport, refit_checkpoint
from router_train.offpolicy.summary import model_summaries, sorted_outcomes, summary_table
from router_train.route.task import RouteTask, bundled_tasks, read_task_file
from router_train.serve.export import FeedbackInputError, long_table_lines, read_records

CHECKPOINT_NAME = "checkpoint.json"
"""`--refit`'s checkpoint in the output directory (what `route --checkpoint` and serve load)."""
REFIT_NAME = "refit.json"
"""What the refit changed, beside it (`offpolicy.refit.RefitReport`)."""


class Options(FrozenModel):
    """What `router-train feedback`'s flags fill."""

    log: Path
    """serve's decision log (JSONL) or store (.sqlite)"""
    long_table: Path | None = None
    """write the outcomes as a long table (JSONL: task_id, model, resolved, cost) for router-oracle build"""
    candidate: list[Path] | None = None
    """a router checkpoint (any kind `route` loads) to estimate on the logged tasks' texts (repeatable)"""
    tasks: Path | None = None
    """the logged tasks' texts for --candidate and --refit, by instance_id: a task JSONL or an oracle table
    (default: the bundled SWE-bench Verified tasks)"""
    bootstrap: Count = BOOTSTRAP
    """bootstrap resamples of the logged tasks for the intervals"""
    seed: Seed = 0
    """seed of the bootstrap resamples"""
    min_tried: Count = MIN_TRIED
    """a policy picking a model with fewer logged outcomes than this gets a warning, not an estimate"""
    refit: Path | None = None
    """an IRT checkpoint to refit to the traffic (per-model ability and mean cost); needs --output-dir"""
    output_dir: Path | None = None
    """with --refit: the directory to write checkpoint.json and refit.json to"""

    @model_validator(mode="after")
    def _refit_needs_a_directory(self) -> Options:
        if (self.refit is None) != (self.output_dir is None):
            raise ValueError("--refit CKPT and --output-dir DIR go together")
        return self


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "feedback",
        help=summary("feedback"),
        description=(
            "Read what `router-train serve` recorded (its decision log or its store): per pool model, the "
            "tasks served, explored and with an outcome, and their resolved rate and cost; then off-policy "
            "estimates (IPS, SNIPS, doubly robust; 95%% bootstrap intervals, effective sample size) of the "
            "serving policy, the router's own picks, every always-X and each --candidate. --long-table "
            "exports the outcomes for `router-oracle build --long-table`; --refit CKPT -o DIR refits an IRT "
            "checkpoint's per-model ability and cost to the traffic. See docs/feedback.md. Exit codes: "
            "0 done, 2 bad input (one line on stderr), 130 interrupted."
        ),
    )
    field_flag(p, Options, "log", "log", metavar="LOG")
    field_flag(p, Options, "long_table", metavar="OUT.jsonl")
    field_flag(p, Options, "candidate", action="append", metavar="CKPT")
    field_flag(p, Options, "tasks", metavar="FILE")
    field_flag(p, Options, "bootstrap", metavar="N")
    field_flag(p, Options, "seed")
    field_flag(p, Options, "min_tried", metavar="N")
    field_flag(p, Options, "refit", metavar="CKPT")
    field_flag(p, Options, "output_dir", "-o", "--output-dir", metavar="DIR")
    p.set_defaults(func=run)


def _texts(options: Options, data: LoggedTasks) -> list[RouteTask]:
    if options.tasks is None:
        return task_texts(data.instance_ids, bundled_tasks(), "the bundled tasks")
    by_id = {t.instance_id: t for t in read_task_file(options.tasks)}
    return task_texts(data.instance_ids, by_id, f"--tasks {options.tasks}")


def _refit(options: Options, data: LoggedTasks, texts: list[RouteTask]) -> str:
    """Refit `--refit` to the logged tasks, publish it in `--output-dir`; the lines it prints."""
    assert options.refit is not None and options.output_dir is not None
    ckpt = read_irt(options.refit)
    if ckpt.fit.task_features is not None:  # the served tasks' features are not in the log
        raise FeedbackInputError(
            f"{options.refit}: trained on task features ({ckpt.fit.task_features.source}); --refit takes an "
            "IRT checkpoint fitted on the text alone"
        )
    logged = data.logged
    served = columns(
        ckpt.pool.ids, [logged.models[j] for j in logged.served], f"{options.log} (refitting {options.refit})"
    )
    if not len(served):
        raise FeedbackInputError(f"{options.log}: no logged outcome to refit {options.refit} on")
    refit, models = refit_checkpoint(ckpt, [t.record() for t in texts], served, logged.resolved, logged.cost)
    report = RefitReport(
        prior=str(options.refit),
        prior_sha256=sha256_file(options.refit),
        log=str(options.log),
        tasks=len(served),
        models=models,
    )
    with publish_directory(options.output_dir, owned=[CHECKPOINT_NAME, REFIT_NAME]) as staged:
        (staged / CHECKPOINT_NAME).write_text(dumps_checkpoint(refit), encoding="utf-8")
        (staged / REFIT_NAME).write_text(report.model_dump_json(indent=1) + "\n", encoding="utf-8")
    lines = [
        f"refit of {options.refit} on {len(served)} logged outcomes "
        "(IRT: per-model ability shift, mean cost):"
    ]
    lines.append(
        f"{'model':<28} {'outcomes':>8} {'observed':>8} {'public P':>8} {'refit P':>8} "
        f"{'shift':>7} {'cost':>15}"
    )
    for m in models:
        obs = f"{m.observed_resolved:.3f}" if m.observed_resolved is not None else "-"
        lines.append(
            f"{m.model:<28} {m.outcomes:>8} {obs:>8} {m.public_predicted:>8.3f} {m.refit_predicted:>8.3f} "
            f"{m.shift:>+7.3f} {m.public_cost:>6.4f}->{m.refit_cost:.4f}"
        )
    lines.append(f"wrote {options.output_dir / CHECKPOINT_NAME} (route --checkpoint, serve) and {REFIT_NAME}")
    return "\n".join(lines) + "\n"


def run(args: argparse.Namespace) -> int:
    options = options_of(Options, args)
    if options.long_table is not None:
        refuse_inputs_as_outputs([options.long_table], [("LOG", options.log)])
    if options.output_dir is not None:
        refuse_inputs_as_outputs(
            [options.output_dir / CHECKPOINT_NAME, options.output_dir / REFIT_NAME],
            [("LOG", options.log), ("--refit", options.refit), ("--tasks", options.tasks)],
        )
    records = read_records(options.log)
    outcomes = sorted_outcomes(records)
    if options.long_table is not None:
        write_text_atomic(options.long_table, long_table_lines(outcomes, str(options.log)))
    print(summary_table(model_summaries(records)), end="")
    print(f"{len(records.decisions)} tasks decided, {len(outcomes)} with an outcome", end="")
    print(f"; wrote {options.long_table}" if options.long_table is not None else "")
    data = logged_tasks(records)
    if data.skipped:
        print(f"{data.skipped} outcome(s) left out of the estimates: no decision with a propensity")
    n = len(data.logged.served)
    if n == 0:
        print("no logged outcome with a propensity: no off-policy estimates")
        return 0
    texts = _texts(options, data) if options.candidate or options.refit is not None else []
    candidates = []
    for path in options.candidate or []:
        picks, q = candidate_picks(path, texts, data.logged.models)
        candidates.append((f"candidate:{path}", picks, q))
    estimates = estimate_all(
        data, candidates, bootstrap=options.bootstrap, seed=options.seed, min_tried=options.min_tried
    )
    print(
        f"\noff-policy estimates on {n} logged outcomes (resolved rate; cost per task, USD; "
        f"95% bootstrap intervals, {options.bootstrap} resamples):"
    )
    print(estimates_table(estimates), end="")
    if options.refit is not None:
        print("\n" + _refit(options, data, texts), end="")
    return 0
