"""`router-train evaluate-anypool`: the any-pool router on held-out tasks and held-out models.

Exit codes: 0 the report was written; 2 bad input (unreadable candidates or table, unknown model or
group, impossible pool sizes, bad fold arguments), with one line on stderr and no report file written.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, model_validator

from router_oracle.build import build_table
from router_oracle.candidates import BUNDLED_CANDIDATES
from router_oracle.derive import CandidateIndex
from router_oracle.infra.atomic_file import check_output_directory
from router_oracle.infra.file_hash import sha256_bytes
from router_oracle.infra.numeric_option import Count, Seed
from router_oracle.table import OracleTable, dumps_table
from router_train.anypool.config import AnyPoolTrainConfig
from router_train.cli_args import (
    OutputOptions,
    add_output_arguments,
    default_jobs,
    field_flag,
    int_list,
    options_of,
    print_report,
)
from router_train.commands import summary
from router_train.evaluate import read_table
from router_train.evaluate.report import TableInfo
from router_train.evaluate_anypool import (
    NamedPool,
    evaluate_any_pool,
    explicit_groups,
    held_out_groups,
    quick_configs,
    render_terminal,
    write_report,
)
from router_train.evaluate_anypool.config import AnyPoolEvalConfig
from router_train.evaluate_anypool.design import HeldOutBy, HeldOutDesign
from router_train.evaluate_anypool.report import PLOT_PNG
from router_train.evaluate_anypool.run import REPORT_JSON, REPORT_MD
from router_train.local.config import FeatureConfig, LocalTrainConfig


def _ids(text: str) -> list[str]:
    ids = [i.strip() for i in text.split(",") if i.strip()]
    if not ids:
        raise argparse.ArgumentTypeError(f"expected comma-separated model ids, got {text!r}")
    return ids


def _named_pool(text: str) -> tuple[str, list[str]]:
    name, sep, ids = text.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"expected NAME=ID,ID,... got {text!r}")
    return name.strip(), _ids(ids)


class Options(OutputOptions):
    """What `router-train evaluate-anypool`'s flags fill: the candidates and reference table, the folds,
    the held-out groups, the evaluation pools, the routers and where the report goes. Options that
    contradict each other are refused here, before any work."""

    candidates: str | None = None
    """candidates table (default: bundled)"""
    table: Path | None = None
    """reference oracle table: its tasks, and its oracle labels stratify the folds (default: the bundled
    `bash-only` pool's table, whose models are candidates of the bundled candidates table)"""
    folds: Count = 5
    """task folds"""
    fold_seeds: list[Seed] = Field(default_factory=lambda: [0])
    """one complete K-fold pass per seed; each seed costs a full protocol run"""
    held_out_by: Literal["provider", "base_model", "model"] | None = None
    """hold out one family at a time (default provider: every model of one maker)"""
    groups: list[str] | None = None
    """with --held-out-by: only these families (e.g. `minimax,googledeepmind`; default: all)"""
    held_out: list[list[str]] = Field(default_factory=list)
    """an explicit held-out group of candidate models (repeatable; instead of --held-out-by)"""
    pools: Count = 3
    """drawn evaluation pools per group"""
    pool_size: Count = 3
    """models per drawn pool"""
    pool_seed: Seed = 0
    """seed of the pool draws"""
    pool: list[tuple[str, list[str]]] = Field(default_factory=list)
    """a named pool, evaluated in every group holding one of its models (repeatable; default: the
    reference table's pool)"""
    irt: bool = False
    """also the IRT router (row `irt`): one fit per fold on its train tasks' results of every candidate
    run (held-out models' included: their cold start), shared by every pool; adds a few seconds per fold"""
    anypool_irt: bool = False
    """train the any-pool router with IRT inputs (`local-anypool --irt`: each pool model's predicted
    resolve probability as model features; one IRT fit per fold, shared by the groups)"""
    quick: bool = False
    """few-step trainers (20 GRPO steps each): a smoke run of the plumbing, not a result"""
    seed: Seed = 0
    """seed of the classifier and the bootstrap"""
    jobs: Count | None = None
    """processes running fits in parallel (default: the CPU count, at most 4)"""

    @model_validator(mode="after")
    def _consistent(self) -> Options:
        if self.held_out and (self.held_out_by or self.groups):
            raise ValueError("--held-out gives the groups itself: not with --held-out-by or --groups")
        return self


REFERENCE_POOL = "bash-only"
"""The bundled pool whose table is the reference without `--table`: its models are candidates of the
bundled candidates table (the default pool's, on the OpenHands Index, are not)."""


def bundled_reference() -> tuple[OracleTable, TableInfo]:
    """The `bash-only` pool's table, built from the bundled data, and how the report names it."""
    table = build_table(REFERENCE_POOL)
    digest = sha256_bytes(dumps_table(table).encode("utf-8"))
    info = TableInfo(
        file=f"{REFERENCE_POOL} (bundled pool)", sha256=digest, pool=table.pool.ids, n_tasks=len(table.tasks)
    )
    return table, info


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "evaluate-anypool",
        help=summary("evaluate-anypool"),
        description=(
            "Leave-one-group-out over held-out model families (--held-out-by provider, base_model or "
            "model; or --held-out ID,ID groups) x K-fold cross-validation over the reference table's "
            "tasks (the folds of `evaluate --folds K`). Per group and fold, the any-pool router "
            "(`local-anypool`) trains on the other folds with pools drawn from every candidate outside "
            "the group. It is judged on evaluation pools holding one of the group's models (--pools "
            "seeded draws of --pool-size, plus every --pool holding one; by default the reference "
            "table's pool, `bash-only`), next to fixed-pool routers trained on that pool alone on the same "
            "folds (`local-grpo` with its defaults, balanced TF-IDF logistic regression) and the pool's "
            "oracle. Per pool: each router's gap to the best random mix of the pool's single models; "
            "then averaged over pools, with a 95% bootstrap interval over resampled tasks (the same "
            "resampled tasks in every pool; pools, folds and fits are not resampled). Writes "
            "report.json, report.md and anypool_gaps.png into OUTDIR and prints the tables. Exit codes: "
            "0 written, 2 bad input."
        ),
    )
    field_flag(p, Options, "candidates", metavar="F")
    field_flag(p, Options, "table")
    field_flag(p, Options, "folds", metavar="K")
    field_flag(p, Options, "fold_seeds", type=int_list, metavar="S1,S2,...")
    field_flag(p, Options, "held_out_by")
    field_flag(p, Options, "groups", type=_ids, metavar="NAME,NAME")
    field_flag(p, Options, "held_out", type=_ids, action="append", metavar="ID,ID")
    field_flag(p, Options, "pools", metavar="N")
    field_flag(p, Options, "pool_size", metavar="N")
    field_flag(p, Options, "pool_seed", metavar="S")
    field_flag(p, Options, "pool", type=_named_pool, action="append", metavar="NAME=ID,ID,...")
    for name in ("irt", "anypool_irt", "quick"):
        field_flag(p, Options, name, action="store_true")
    field_flag(p, Options, "seed")
    field_flag(p, Options, "jobs")
    add_output_arguments(p)
    p.set_defaults(func=run, error_prefix="error: ")  # EvaluateError, CandidatesError, AnyPoolError: 2


def run(args: argparse.Namespace) -> int:
    options = options_of(Options, args)  # contradicting options: one line, exit 2
    # An unusable -o fails now, not after the evaluation's minute.
    check_output_directory(
        options.output,
        (REPORT_JSON, REPORT_MD, PLOT_PNG),
        [("--table", options.table), ("--candidates", options.candidates)],
    )
    index = CandidateIndex.load(options.candidates or BUNDLED_CANDIDATES)
    table, info = read_table(options.table) if options.table is not None else bundled_reference()
    by: HeldOutDesign
    if options.held_out:
        groups = explicit_groups(index, options.held_out)
        by = "explicit"
    else:
        family: HeldOutBy = options.held_out_by or "provider"  # also with --groups alone
        groups = held_out_groups(index, family, options.groups)
        by = family
    if options.pool:
        named = [NamedPool(name=n, ids=ids) for n, ids in options.pool]
    else:
        # The reference table's pool, when its models are candidates (the bundled `bash-only` is).
        ids = table.pool.ids
        named = [NamedPool(name=table.pool.name, ids=ids)] if set(ids) <= set(index.model_ids) else []
    anypool_cfg, fixed_cfg = quick_configs() if options.quick else (AnyPoolTrainConfig(), LocalTrainConfig())
    if options.anypool_irt:
        anypool_cfg = anypool_cfg.model_copy(update={"features": FeatureConfig(irt=True)})
    config = AnyPoolEvalConfig(
        held_out_by=by,
        drawn_pools=options.pools,
        pool_size=options.pool_size,
        pool_seed=options.pool_seed,
        named_pools=named,
        folds=options.folds,
        fold_seeds=options.fold_seeds,
        anypool_config=anypool_cfg,
        fixed_config=fixed_cfg,
        seed=options.seed,
        irt=options.irt,
        jobs=default_jobs(options.jobs),
    )
    report = evaluate_any_pool(index, table, info, groups, config, progress=True)
    return print_report(
        write_report(report, options.output, plot=not options.no_plot), render_terminal(report)
    )
