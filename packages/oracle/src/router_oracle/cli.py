"""`router-oracle`: build an oracle table, or summarise one.

    router-oracle build --pool default|PATH [--leaderboard F|bundled ...]
        [--harness-report F --run RUN ...] [--trajectories DIR --run RUN ...] [--long-table F ...]
        [--tasks F] [--tie-cost measured|price] -o table.json
    router-oracle stats table.json [--json]

Exit status: 0 ok, 2 bad input (message on stderr, no output file written).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from router_oracle.build import BUNDLED, build_table
from router_oracle.errors import OracleInputError
from router_oracle.noise import METHOD
from router_oracle.stats import compute_stats, format_stats, stats_json
from router_oracle.table import TableError, load_table


class _RunSource(argparse.Action):
    """`--harness-report F` / `--trajectories DIR`: remembered in order, to be paired with `--run`."""

    def __call__(
        self, parser: argparse.ArgumentParser, ns: argparse.Namespace, value: Any, opt: Any = None
    ) -> None:
        pending = getattr(ns, "run_sources", None) or []
        if pending and pending[-1][2] is None:
            parser.error(f"{pending[-1][0]} {pending[-1][1]} needs a --run RUN before {opt}")
        ns.run_sources = [*pending, [opt, value, None]]


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
    b.add_argument("--harness-report", action=_RunSource, metavar="F", help="SWE-bench harness run report")
    b.add_argument("--trajectories", action=_RunSource, metavar="DIR", help="mini-SWE-agent *.traj.json dir")
    b.add_argument("--run", action=_Run, metavar="RUN", help="run id of the preceding report/trajectories")
    b.add_argument("--long-table", action="append", default=[], metavar="F", help="CSV/JSONL long table")
    b.add_argument("--tasks", default=None, metavar="F", help="task JSONL[.gz] (default: bundled)")
    b.add_argument("--tie-cost", choices=["measured", "price"], default="measured")
    b.add_argument("--no-progress", dest="progress", action="store_false", help="no progress bars on stderr")
    b.add_argument("-o", "--output", required=True, help="table JSON to write")
    b.set_defaults(run_sources=[])
    s = sub.add_parser(
        "stats",
        help="summarise an oracle table, with the part of its headroom rollout noise alone would give",
        description="Per model: resolved tasks, total cost, oracle picks; the oracle's resolve rate, cost "
        "and headroom above the best random mix of single models at its cost; tie counts; and an estimate "
        "of how much of that headroom rollout noise alone would produce.",
        epilog=METHOD,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    s.add_argument("table")
    s.add_argument("--json", action="store_true", help="stable JSON instead of a readable table")
    return parser


def _build(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    for opt, path, run in args.run_sources:
        if run is None:
            parser.error(f"{opt} {path} needs a --run RUN")
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
        return _build(args, parser) if args.command == "build" else _stats(args)
    except (OracleInputError, TableError) as exc:
        print(f"router-oracle: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # e.g. an output directory that cannot be written
        print(f"router-oracle: error: {exc.filename or ''}: {exc.strerror or exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
