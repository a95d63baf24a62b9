"""`router-train evaluate`: judge routers against the oracle, the baselines and the single models' frontier.

Exit codes: 0 the report was written; 2 bad input (unreadable or invalid table, traces file or
checkpoint, bad arguments, an unusable output directory), with one line on stderr; 130 interrupted.
The report's files are published together or not at all (`router_oracle.atomic_file.publish_directory`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from router_train.cli_args import add_table_arguments, bad_input, given, path_arg


def _named(value: str) -> tuple[str | None, Path]:
    """`NAME=PATH` or `PATH`."""
    name, sep, path = value.partition("=")
    if sep and name and path and "/" not in name:
        return name, Path(path)
    return None, Path(value)


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "evaluate",
        help="judge routers (checkpoints, vf-eval traces, baselines) against the oracle and cost",
        description=(
            "Evaluate routing decisions on a split of an oracle table: built-in baselines (always each "
            "model, uniform random, always the cheapest, the oracle, TF-IDF classifiers fitted on the "
            "train split), local-trainer checkpoints and vf-eval traces. Writes report.json, report.md "
            "and cost_vs_resolved.png into OUTDIR, all three at once (other files there are kept), and "
            "prints a table. Exit codes: 0 written, 2 bad input (one line on stderr, nothing written), "
            "130 interrupted."
        ),
    )
    add_table_arguments(p)
    p.add_argument("--split", choices=("eval", "train", "all"), default="eval", help="tasks to evaluate on")
    p.add_argument(
        "--checkpoint",
        action="append",
        default=[],
        metavar="[NAME=]CKPT",
        help="local-trainer checkpoint to evaluate (repeatable)",
    )
    p.add_argument(
        "--traces",
        action="append",
        default=[],
        metavar="[NAME=]FILE",
        help="vf-eval traces.jsonl to evaluate (repeatable; default name: its run directory)",
    )
    p.add_argument(
        "--name",
        action="append",
        default=[],
        metavar="NAME",
        help="name of the --traces file in the same position (alternative to NAME=FILE)",
    )
    p.add_argument(
        "--only-covered",
        action="store_true",
        help="evaluate only the split tasks every --traces file covers (e.g. a vf-eval -n N run)",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the random baseline and the classifiers")
    p.add_argument("--no-baselines", action="store_true", help="evaluate only the given routers")
    p.add_argument("--no-plot", action="store_true", help="skip the PNG")
    p.add_argument("-o", "--output", type=path_arg, required=True, metavar="OUTDIR", help="report directory")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from router_frontier_rl.bundled import bundled_table_path
    from router_oracle.atomic_file import output_directory
    from router_train.evaluate import Source, evaluate, read_table, render_terminal, write_report
    from router_train.evaluate.traces import traces_name

    try:
        output_directory(args.output)  # an unusable -o fails now, before the evaluation runs
        if len(args.name) > len(args.traces):
            raise ValueError(f"{len(args.name)} --name given for {len(args.traces)} --traces")
        checkpoints = []
        for value in args.checkpoint:
            name, path = _named(value)
            checkpoints.append(Source(name=name or f"ckpt:{path.stem}", path=path))
        traces = []
        for i, value in enumerate(args.traces):
            name, path = _named(value)
            if i < len(args.name):
                name = args.name[i]
            traces.append(Source(name=name or traces_name(path), path=path))
        if args.no_baselines and not (checkpoints or traces):
            raise ValueError("--no-baselines leaves nothing to evaluate: give --checkpoint or --traces")
        table, info = read_table(args.table or bundled_table_path())
        report = evaluate(
            table,
            info,
            split=args.split,
            seed=args.seed,
            checkpoints=checkpoints,
            traces=traces,
            include_baselines=not args.no_baselines,
            only_covered=args.only_covered,
            **given(args, "eval_fraction", "split_seed"),
        )
        files = write_report(report, args.output, plot=not args.no_plot)
    except ValueError as exc:  # EvaluateError, TableError and the env's split errors are all ValueErrors
        return bad_input("evaluate", f"error: {exc}")
    sys.stdout.write(render_terminal(report))
    print("wrote " + ", ".join(str(f) for f in files))
    return 0
