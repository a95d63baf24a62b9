"""`router-oracle`: build an oracle table, or summarise one.

    router-oracle build --pool default|PATH [--leaderboard F|bundled ...]
        [--harness-report F [--run RUN] ...] [--trajectories DIR [--run RUN] ...] [--long-table F ...]
        [--tasks F] [--tie-cost measured|price] -o table.json
    router-oracle stats table.json [--json]

Exit status: 0 ok, 2 bad input (one line on stderr naming the file and the problem, no output file
written), 130 interrupted (Ctrl-C; no output file written).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from router_oracle.atomic_file import OutputPathError
from router_oracle.build import BUNDLED, build_table
from router_oracle.errors import OracleInputError
from router_oracle.stats import compute_stats, format_stats, stats_json
from router_oracle.table import TableError, load_table

EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130


class _RunSource(argparse.Action):
    """`--harness-report F` / `--trajectories DIR`: remembered in order, each with the `--run` after it."""

    def __call__(
        self, parser: argparse.ArgumentParser, ns: argparse.Namespace, value: Any, opt: Any = None
    ) -> None:
        ns.run_sources = [*(getattr(ns, "run_sources", None) or []), [opt, value, None]]


class _Run(argparse.Action):
    """`--run RUN`: the run id of the `--harness-report` / `--trajectories` just before it."""

    def __call__(
        self, parser: argparse.ArgumentParser, ns: argparse.Namespace, value: Any, opt: Any = None
    ) -> None:
        pending = getattr(ns, "run_sources", None) or []
        if not pending or pending[-1][2] is not None:
            parser.error("--run must follow a --harness-report or --trajectories")
        pending[-1][2] = value


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="router-oracle", description="Build and inspect oracle tables.")
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="build an oracle table from results")
    b.add_argument("--pool", default="default", help="bundled pool name (default, multi_run) or a TOML path")
    b.add_argument(
        "--leaderboard",
        action="append",
        default=None,
        metavar="F",
        help=f"swe-bench.com leaderboard JSON[.gz] ('{BUNDLED}' = the bundled one; the default when no "
        "other source is given)",
    )
    b.add_argument(
        "--harness-report",
        action=_RunSource,
        metavar="F",
        help="SWE-bench harness run report; named <model>.<run>.json for a pool run, it needs no --run",
    )
    b.add_argument(
        "--trajectories",
        action=_RunSource,
        metavar="DIR",
        help="mini-SWE-agent *.traj.json dir; needs no --run when a --harness-report names its model",
    )
    b.add_argument(
        "--run",
        action=_Run,
        metavar="RUN",
        help="pool run of the preceding report/trajectories (checked against what the file says)",
    )
    b.add_argument("--long-table", action="append", default=[], metavar="F", help="CSV/JSONL long table")
    b.add_argument("--tasks", default=None, metavar="F", help="task JSONL[.gz] (default: bundled)")
    b.add_argument("--tie-cost", choices=["measured", "price"], default="measured")
    b.add_argument("--no-progress", dest="progress", action="store_false", help="no progress bars on stderr")
    b.add_argument("-o", "--output", required=True, help="table JSON to write")
    b.set_defaults(run_sources=[])
    s = sub.add_parser("stats", help="summarise an oracle table")
    s.add_argument("table")
    s.add_argument("--json", action="store_true", help="stable JSON instead of a readable table")
    return parser


def _build(args: argparse.Namespace) -> int:
    table = build_table(
        args.pool,
        leaderboards=args.leaderboard,
        harness_reports=[(p, r) for o, p, r in args.run_sources if o == "--harness-report"],
        trajectories=[(p, r) for o, p, r in args.run_sources if o == "--trajectories"],
        long_tables=args.long_table,
        tasks=args.tasks,
        tie_cost=args.tie_cost,
        output=args.output,
        progress=args.progress,
    )
    print(
        f"wrote {args.output}: {len(table.tasks)} tasks, pool {table.pool.name} ({', '.join(table.pool.ids)})"
    )
    return 0


def _stats(args: argparse.Namespace) -> int:
    stats = compute_stats(load_table(args.table), origin=args.table)
    sys.stdout.write(stats_json(stats) if args.json else format_stats(stats))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        return _build(args) if args.command == "build" else _stats(args)
    except (OracleInputError, TableError, OutputPathError) as exc:
        print(f"router-oracle: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except OSError as exc:  # a file the command was pointed at cannot be used
        reason = exc.strerror or str(exc)
        print(f"router-oracle: error: {f'{exc.filename}: ' if exc.filename else ''}{reason}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("router-oracle: interrupted; no output written", file=sys.stderr)
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
