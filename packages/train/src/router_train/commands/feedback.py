"""`router-train feedback LOG`: what `serve` recorded of its traffic (decisions, exploration, outcomes),
read from its decision log or its store; off-policy estimates of the serving policy, the router's own
picks, every always-X and `--candidate` checkpoints (IPS, SNIPS, DR with bootstrap intervals and the
effective sample size; `router_train.offpolicy`); `--long-table OUT.jsonl` exports the outcomes as the
long table `router-oracle build --long-table` reads; `--refit CKPT -o DIR` refits a checkpoint to the
traffic through its kind's `refit` hook (the IRT kind: per-model ability and cost, `irt.refit`), at the
default point its native route earns on the logged traffic (`offpolicy.refit_point`, never the prior's),
and saves it for `route` and `serve`, unless a model's logged resolve rate departs from the checkpoint's
prior beyond chance (`offpolicy.shift`; `--accept-shift` to refit anyway).

Every input and output path is checked, and everything computed, before anything is written.
Exit codes: 0 done, 2 bad input (one line on stderr, nothing written), 130 interrupted.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

from pydantic import model_validator

from router_oracle.infra.atomic_file import (
    OutputPathError,
    check_output_directory,
    output_file,
    publish_directory,
    refuse_inputs_as_outputs,
    write_text_atomic,
)
from router_oracle.infra.frozen_model import FrozenModel
from router_oracle.infra.numeric_option import Count, Seed
from router_oracle.task_input import TaskInput
from router_train.checkpoint_io import dumps_checkpoint
from router_train.cli_args import field_flag, options_of
from router_train.commands import summary
from router_train.fitting import Fit, RefitRequest, Refitted, refit_kind
from router_train.offpolicy.estimators import BOOTSTRAP, MIN_TRIED
from router_train.offpolicy.from_log import (
    LoggedTasks,
    SeveralCheckpoints,
    candidate_picks,
    estimate_all,
    estimates_table,
    logged_tasks,
    task_texts,
)
from router_train.offpolicy.refit_point import TrafficSettings, point_on_traffic
from router_train.offpolicy.shift import shifts
from router_train.offpolicy.summary import model_summaries, sorted_outcomes, summary_table
from router_train.route.task import bundled_tasks, read_task_file
from router_train.serve.export import FeedbackInputError, ServeRecords, long_table_lines, read_records
from router_train.serve.store_url import StoreLocation

CHECKPOINT_NAME = "checkpoint.json"
"""`--refit`'s checkpoint in the output directory (what `route --checkpoint` and serve load)."""
REFIT_NAME = "refit.json"
"""What the refit changed, beside it (the kind's report, e.g. `irt.refit.RefitReport`)."""


class Options(FrozenModel):
    """What `router-train feedback`'s flags fill."""

    log: StoreLocation
    """serve's decision log (JSONL) or store (.sqlite, .sqlite3, .db, or a postgresql:// URL)"""
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
    checkpoint_sha: str | None = None
    """estimate (and refit on) the decisions of the router checkpoint with this sha256 (a unique prefix
    will do); needed when the log holds decisions of several checkpoints"""
    accept_shift: bool = False
    """with --refit: refit even when a model's logged resolve rate departs from the checkpoint's prior
    beyond chance (an outcome source may be poisoned: check `outcome sources` first)"""

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
            "checkpoint's per-model ability and cost to the traffic (refused when a model's logged resolve "
            "rate departs from the checkpoint's prior beyond chance, unless --accept-shift). See "
            "docs/feedback.md. Exit codes: "
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
    field_flag(p, Options, "checkpoint_sha", metavar="SHA")
    field_flag(p, Options, "accept_shift", action="store_true")
    p.set_defaults(func=run)


def sources_line(records: ServeRecords) -> str:
    """How many outcomes (latest revisions) each source posted, and how many were corrections."""
    latest = Counter(o.source for o in records.outcomes.values())
    corrected = sum(1 for o in records.outcomes.values() if o.revision > 0)
    parts = ", ".join(f"{source} {n}" for source, n in sorted(latest.items()))
    return (
        f"outcome sources: {parts or 'none'}; {corrected} corrected (of {len(records.history)} revisions)\n"
    )


def _check_outputs(options: Options) -> None:
    """Every output path, before any input is read: a place a file can be written, not an input."""
    inputs = [("LOG", options.log.path), ("--refit", options.refit), ("--tasks", options.tasks)]
    inputs += [("--candidate", c) for c in options.candidate or []]
    if options.long_table is not None:
        target = output_file(options.long_table)
        refuse_inputs_as_outputs([options.long_table], inputs)
        _writable(target.parent, str(options.long_table))
    if options.output_dir is not None:
        check_output_directory(options.output_dir, [CHECKPOINT_NAME, REFIT_NAME], inputs)


def _writable(directory: Path, shown: str) -> None:
    """The nearest existing directory at or above `directory` must be writable (a read-only parent is
    refused now, not after the work)."""
    d = directory
    while not d.exists() and d != d.parent:
        d = d.parent
    if not os.access(d, os.W_OK | os.X_OK):
        raise OutputPathError(f"{shown}: cannot write here: {d} is not writable")


def _texts(options: Options, data: LoggedTasks) -> list[TaskInput]:
    """The logged tasks' inputs: kept in their decisions, else from --tasks (or the bundled tasks)."""
    if options.tasks is None:
        return task_texts(data, bundled_tasks, "the bundled tasks")
    tasks = options.tasks
    return task_texts(data, lambda: {t.instance_id: t for t in read_task_file(tasks)}, f"--tasks {tasks}")


def _refit(options: Options, kind: Fit, data: LoggedTasks, texts: list[TaskInput]) -> Refitted:
    """`--refit` through its kind's hook, refused when a model's logged rate departs from the prior."""
    assert options.refit is not None and kind.refit is not None
    logged = data.logged
    refitted = kind.refit(
        RefitRequest(
            checkpoint=options.refit,
            tasks=texts,
            served=[logged.models[j] for j in logged.served],
            resolved=logged.resolved,
            cost=logged.cost,
            log=options.log.shown(),
        )
    )
    moved = shifts(refitted.evidence)
    if moved and not options.accept_shift:
        more = f" (and {len(moved) - 1} more)" if len(moved) > 1 else ""
        raise FeedbackInputError(
            f"{options.log}: {moved[0].line()}{more}: an outcome source may be poisoned (see `outcome "
            "sources`); nothing refitted; --accept-shift refits anyway"
        )
    return _at_traffic_point(options, kind, data, refitted)


def _at_traffic_point(options: Options, kind: Fit, data: LoggedTasks, refitted: Refitted) -> Refitted:
    """The refit at the default point its native route earns on the logged traffic (`offpolicy.
    refit_point`), never the prior's; its reason is the table's last line."""
    prior = getattr(refitted.checkpoint, "safe_point", None)
    settings = TrafficSettings(options.bootstrap, options.seed, options.min_tried)
    point = point_on_traffic(
        data.logged, refitted.native, refitted.cheapest, kind.margins, settings, options.log.shown(), prior
    )
    assert point.traffic is not None
    line = "default point (chosen on the logged traffic; route --no-safe-point: native): "
    checkpoint = refitted.checkpoint.model_copy(update={"safe_point": point})
    return replace(refitted, checkpoint=checkpoint, table=f"{refitted.table}{line}{point.traffic.reason}\n")


def _summary(records: ServeRecords, long_table: Path | None) -> list[str]:
    """Per model, the tasks and outcomes, the outcome sources: what needs no checkpoint."""
    outcomes = sorted_outcomes(records)
    out = [summary_table(model_summaries(records))]
    wrote = f"; wrote {long_table}" if long_table is not None else ""
    out.append(f"{len(records.decisions)} tasks decided, {len(outcomes)} with an outcome{wrote}\n")
    out.append(sources_line(records))
    return out


def _report(records: ServeRecords, data: LoggedTasks, long_table: Path | None) -> list[str]:
    """The summary: per model, the outcome sources, what the estimates read."""
    out = _summary(records, long_table)
    which = data.checkpoint_sha256 or "none (an LLM router, or decisions without a checkpoint)"
    out.append(f"decisions of router checkpoint sha256 {which}")
    out.append(
        f"; {data.other_checkpoints} outcome(s) of other checkpoints left out\n"
        if data.other_checkpoints
        else "\n"
    )
    if data.skipped:
        out.append(f"{data.skipped} outcome(s) left out of the estimates: no decision with a propensity\n")
    return out


def _export_alone(options: Options, records: ServeRecords, table: str, several: SeveralCheckpoints) -> int:
    """`--long-table` from the decisions of several checkpoints (after a hot refit) with none named: the
    export and the summary, which depend on no checkpoint; no estimates, said in one line."""
    assert options.long_table is not None
    write_text_atomic(options.long_table, table)
    out = _summary(records, options.long_table)
    out.append(f"{several.detail}: no off-policy estimates; --checkpoint-sha SHA estimates one of them\n")
    print("".join(out), end="")
    return 0


def run(args: argparse.Namespace) -> int:
    options = options_of(Options, args)
    _check_outputs(options)
    kind = refit_kind(options.refit) if options.refit is not None else None
    records = read_records(options.log)
    if records.torn:
        lines = ", ".join(map(str, records.torn))
        print(
            f"router-train feedback: {options.log}: skipped {len(records.torn)} torn line(s) a crash cut "
            f"mid-write (line {lines})",
            file=sys.stderr,
        )
    outcomes = sorted_outcomes(records)
    table = long_table_lines(outcomes, options.log.shown()) if options.long_table is not None else None
    try:
        data = logged_tasks(records, options.log.shown(), options.checkpoint_sha)
    except SeveralCheckpoints as several:
        if table is None or options.candidate or kind is not None:
            raise  # estimates, candidates and refits are of one policy: name it
        return _export_alone(options, records, table, several)
    out = _report(records, data, options.long_table)
    n = len(data.logged.served)
    if n == 0 and kind is not None:
        raise FeedbackInputError(
            f"{options.log}: no logged outcome with a propensity to refit {options.refit} on"
        )
    refitted = None
    if n == 0:
        out.append("no logged outcome with a propensity: no off-policy estimates\n")
    else:
        texts = _texts(options, data) if options.candidate or kind is not None else []
        candidates = []
        for path in options.candidate or []:
            picks, q = candidate_picks(path, texts, data.logged.models)
            candidates.append((f"candidate:{path}", picks, q))
        estimates = estimate_all(
            data, candidates, bootstrap=options.bootstrap, seed=options.seed, min_tried=options.min_tried
        )
        out.append(
            f"\noff-policy estimates on {n} logged outcomes (resolved rate; cost per task, USD; "
            f"95% bootstrap intervals, {options.bootstrap} resamples):\n"
        )
        out.append(estimates_table(estimates))
        if kind is not None:
            refitted = _refit(options, kind, data, texts)
    # Everything is computed and checked: now write.
    if table is not None and options.long_table is not None:
        write_text_atomic(options.long_table, table)
    if refitted is not None and options.output_dir is not None:
        with publish_directory(options.output_dir, owned=[CHECKPOINT_NAME, REFIT_NAME]) as staged:
            (staged / CHECKPOINT_NAME).write_text(dumps_checkpoint(refitted.checkpoint), encoding="utf-8")
            (staged / REFIT_NAME).write_text(
                refitted.report.model_dump_json(indent=1) + "\n", encoding="utf-8"
            )
        out.append("\n" + refitted.table)
        out.append(
            f"wrote {options.output_dir / CHECKPOINT_NAME} (route --checkpoint, serve) and {REFIT_NAME}\n"
        )
    print("".join(out), end="")
    return 0
