"""`router-train evaluate`: judge routers against the oracle, the baselines and the single models' frontier.

Exit codes: 0 the report was written; 2 bad input (unreadable or invalid table, traces file or
checkpoint, bad arguments, a router that would be scored on its own training tasks, an unusable output
directory), with one line on stderr; 130 interrupted. The report's files are published together or not
at all (`router_oracle.infra.atomic_file.publish_directory`).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, model_validator

from router_frontier_rl.bundled import bundled_table_path
from router_oracle.infra.atomic_file import check_output_directory
from router_oracle.infra.numeric_option import Count, Seed
from router_train.cli_args import (
    OutputOptions,
    TableOptions,
    add_output_arguments,
    add_table_arguments,
    default_jobs,
    field_flag,
    int_list,
    options_of,
    print_report,
)
from router_train.commands import summary
from router_train.evaluate import Source, evaluate, read_table, render_terminal, write_report
from router_train.evaluate.config import EvaluateConfig
from router_train.evaluate.cross_harness_text import CALIBRATION_PNG
from router_train.evaluate.report import PLOT_PNG
from router_train.evaluate.run import REPORT_JSON, REPORT_MD, default_local_routers
from router_train.evaluate.traces import traces_name
from router_train.local.config import LocalTrainConfig
from router_train.local_options import config_from_options


def _named(value: str) -> tuple[str | None, Path]:
    """`NAME=PATH` or `PATH`."""
    name, sep, path = value.partition("=")
    if sep and name and path and "/" not in name:
        return name, Path(path)
    return None, Path(value)


def _local(text: str) -> tuple[str, str]:
    name, sep, options = text.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"expected NAME=OPTIONS (e.g. 'up=--upsample'), got {text!r}")
    return name.strip(), options


DEFAULT_FOLD_SEEDS = (0, 1, 2, 3, 4)
"""`--fold-seeds` unset: five complete K-fold passes."""


class Options(TableOptions, OutputOptions):
    """What `router-train evaluate`'s flags fill: the table and its split or folds, the routers to judge,
    and where the report goes. Options that contradict each other are refused here, before any work."""

    folds: Count | None = None
    """cross-validate over every task with K folds (K default 5); without it: the env's split"""
    fold_seeds: list[Seed] = Field(default_factory=lambda: list(DEFAULT_FOLD_SEEDS))
    """with --folds: one complete K-fold pass per seed"""
    split: Literal["eval", "train", "all"] | None = None
    """without --folds: the env split to evaluate on (default eval; train/all are in-sample)"""
    local: list[tuple[str, str]] = Field(default_factory=list)
    """also train the local GRPO router with these `router-train local` options in every fold and report
    it as NAME, e.g. --local 'up-wd3=--upsample --weight-decay 3' (repeatable)"""
    checkpoint: list[str] = Field(default_factory=list)
    """checkpoint of any kind `router-train route` reads (`local`; `local-anypool`, on the table's pool;
    `fit`) to evaluate on tasks it never trained on (repeatable)"""
    traces: list[str] = Field(default_factory=list)
    """vf-eval traces.jsonl, scored on the tasks it covers (repeatable; default name: its run dir)"""
    name: list[str] = Field(default_factory=list)
    """name of the --traces file in the same position (alternative to NAME=FILE)"""
    only_covered: bool = False
    """without --folds: evaluate only the split tasks every --traces file covers (a vf-eval -n N run)"""
    allow_in_sample: bool = False
    """score checkpoints/traces on tasks they trained on anyway; their rows are marked in-sample"""
    no_baselines: bool = False
    """evaluate only the given routers"""
    irt: bool = False
    """also fit the IRT router per fold (row `irt`, on the bundled runs' train-task results; slower) and
    report its calibration"""
    task_features: str | None = None
    """per-task numeric features from a pre-pass, inputs of the TF-IDF logistic regressions, every local
    GRPO router and (with --irt) the IRT task regressor beside the text, standardised on each fold's train
    tasks only: a CSV or JSONL file (optionally .gz) keyed by instance_id (format:
    `router_train.task_features`), or bundled-issue / bundled-repo / bundled (the bundled judged features:
    15 issue-only, 8 repository, all 23 columns)"""
    no_safe_point: bool = False
    """route every learned router at its native point, as before issue 39; without it each fit routes at the
    default point its inner cross-validation on the fit's train tasks chose: its own route when estimated
    above the mix there by its kind's default margin (0.5 points for the text classifiers, 2 for
    local-grpo, 1 for irt: scoring.safe_point.Margins), else always the cheapest model (docs/evaluate.md,
    "Do no harm"); at a budget or quality (the objectives table) its dial point where backed by its kind's
    dial margin, else the floor, the mix of single models there"""
    seed: Seed = 0
    """seed of the random baseline, classifiers and bootstrap"""
    jobs: Count | None = None
    """processes fitting folds in parallel (default: the CPU count, at most 4)"""
    # Cross-harness (issue 39): judged in evaluate(), which refuses them without --folds / --test-table.
    test_table: Path | None = None
    """with --folds: an oracle table of the same pool and tasks from other runs (another harness); every
    fitted router is also judged on its outcomes of the held-out tasks, beside the in-harness gap"""
    calibrate: list[Seed] = Field(default_factory=list)
    """with --test-table: N,N,... calibration sizes; per fold the router re-estimates costs, resolve rates
    and label shares (IRT: abilities) on the test table's outcomes of the first N held-out tasks, which
    are then not scored, and routes the rest (e.g. 0,25,50)"""

    @model_validator(mode="after")
    def _consistent(self) -> Options:
        if len(self.name) > len(self.traces):
            raise ValueError(f"{len(self.name)} --name given for {len(self.traces)} --traces")
        if self.folds is not None:
            split_options = [
                o
                for o, v in (
                    ("--split", self.split),
                    ("--eval-fraction", self.eval_fraction),
                    ("--split-seed", self.split_seed),
                    ("--only-covered", self.only_covered or None),
                )
                if v is not None
            ]
            if split_options:
                raise ValueError(f"{', '.join(split_options)} select the env's split: not with --folds")
        elif "fold_seeds" in self.model_fields_set:
            raise ValueError("--fold-seeds needs --folds")
        if self.no_baselines and not (self.checkpoint or self.traces or self.local or self.irt):
            raise ValueError(
                "--no-baselines leaves nothing to evaluate: give --checkpoint, --traces or --local"
            )
        return self

    def checkpoint_sources(self) -> list[Source]:
        """The `--checkpoint [NAME=]CKPT` routers (default name `ckpt:STEM`)."""
        sources = []
        for value in self.checkpoint:
            name, path = _named(value)
            sources.append(Source(name=name or f"ckpt:{path.stem}", path=path))
        return sources

    def traces_sources(self) -> list[Source]:
        """The `--traces [NAME=]FILE` routers, named by `--name` in the same position, else by NAME=, else
        by their run dir."""
        sources = []
        for i, value in enumerate(self.traces):
            name, path = _named(value)
            if i < len(self.name):
                name = self.name[i]
            sources.append(Source(name=name or traces_name(path), path=path))
        return sources

    def local_routers(self) -> list[tuple[str, LocalTrainConfig]]:
        """The `--local NAME=OPTIONS` routers, each options string read as `router-train local` reads
        its flags, after `local-grpo` (the defaults) unless `--no-baselines`."""
        local = [] if self.no_baselines else default_local_routers()
        for name, options in self.local:
            try:
                local.append((name, config_from_options(options)))
            except ValueError as exc:
                raise ValueError(f"--local {name}={options}: {exc}") from None
        return local

    def config(self) -> EvaluateConfig:
        """The evaluation these flags ask for, carried whole into `evaluate`; unset split options keep the
        env split's defaults."""
        split: dict[str, Any] = {"eval_fraction": self.eval_fraction, "split_seed": self.split_seed}
        return EvaluateConfig(
            folds=self.folds,
            fold_seeds=self.fold_seeds,
            split=self.split or "eval",
            seed=self.seed,
            checkpoints=self.checkpoint_sources(),
            traces=self.traces_sources(),
            local_routers=self.local_routers(),
            include_baselines=not self.no_baselines,
            irt=self.irt,
            task_features=self.task_features,
            safe_point=not self.no_safe_point,
            only_covered=self.only_covered,
            allow_in_sample=self.allow_in_sample,
            jobs=default_jobs(self.jobs),
            calibrate=self.calibrate,
            **{k: v for k, v in split.items() if v is not None},
        )


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "evaluate",
        help=summary("evaluate"),
        description=(
            "Evaluate routing decisions on tasks no learned router trained on. With --folds K: K-fold "
            "cross-validation over every task of the table (folds stratified by oracle label, once per "
            "fold seed); in each fold the learned baselines (cheapest on train, TF-IDF classifiers) and "
            "the local GRPO router (`local-grpo`, plus any --local) are fitted on the other folds only. "
            "Without --folds: the env's one held-out split (--split). Fixed routers (always each model, "
            "uniform random, the oracle), checkpoints and vf-eval traces are scored on the same tasks; "
            "a checkpoint or traces are never scored on tasks they trained on (refused, exit 2, unless "
            "--allow-in-sample). The headline is each router's resolved rate against the best random "
            "mix of single models at the same cost, with a 95% paired-bootstrap interval; beside the "
            "oracle's, the part of its headroom rollout noise alone would produce (method: "
            "`router-oracle stats --help`; not measured for tables with no model run twice). With --folds, "
            "every learned router that scores models is also a cost dial: its out-of-sample curve from the "
            "cheapest to the strongest model's cost (each dial chosen on the fit's train tasks), APGR, "
            "CPT50/80 and area vs the mix (docs/evaluate-curves.md; curves.png). Writes "
            "report.json, report.md and cost_vs_resolved.png into OUTDIR, all three at once (other files "
            "there are kept), and prints the tables. Exit codes: 0 written, 2 bad input (one line on "
            "stderr, nothing written), 130 interrupted."
        ),
    )
    add_table_arguments(p)
    field_flag(p, Options, "folds", nargs="?", const=5, metavar="K")
    field_flag(p, Options, "fold_seeds", type=int_list, metavar="S1,S2,...")
    field_flag(p, Options, "split")
    field_flag(p, Options, "local", type=_local, action="append", metavar="NAME=OPTIONS")
    field_flag(p, Options, "checkpoint", action="append", metavar="[NAME=]CKPT")
    field_flag(p, Options, "traces", action="append", metavar="[NAME=]FILE")
    field_flag(p, Options, "name", action="append", metavar="NAME")
    for name in ("only_covered", "allow_in_sample", "no_baselines", "irt", "no_safe_point"):
        field_flag(p, Options, name, action="store_true")
    field_flag(p, Options, "task_features", metavar="FILE")
    field_flag(p, Options, "seed")
    field_flag(p, Options, "jobs")
    field_flag(p, Options, "test_table", type=Path, metavar="TEST.json")
    field_flag(p, Options, "calibrate", type=int_list, metavar="N1,N2,...")
    add_output_arguments(p)
    p.set_defaults(func=run, error_prefix="error: ")  # EvaluateError, TableError, split errors: exit 2


def run(args: argparse.Namespace) -> int:
    options = options_of(Options, args)  # contradicting options: one line, exit 2
    # An unusable -o, or one whose report files would replace an input, fails now, before the evaluation.
    check_output_directory(
        options.output,
        (REPORT_JSON, REPORT_MD, PLOT_PNG, CALIBRATION_PNG),
        [
            ("--table", options.table),
            ("--test-table", options.test_table),
            *(("--traces", _named(v)[1]) for v in options.traces),
            *(("--checkpoint", _named(v)[1]) for v in options.checkpoint),
        ],
    )
    table, info = read_table(options.table or bundled_table_path())
    test_table = read_table(options.test_table) if options.test_table is not None else None
    report = evaluate(table, info, options.config(), test_table=test_table, progress=True)
    return print_report(
        write_report(report, options.output, plot=not options.no_plot), render_terminal(report)
    )
