"""`router-oracle`: build an oracle table, or summarise one; build a candidates table, derive any pool.

    router-oracle build --pool default|PATH [--leaderboard F|bundled ...]
        [--harness-report F [--run RUN] ...] [--trajectories DIR [--run RUN] ...] [--long-table F ...]
        [--tasks F] [--tie-cost measured|price] -o table.json
    router-oracle build --from-candidates bundled|F --models ID,ID,... [--pool-name NAME] -o table.json
    router-oracle stats table.json [--json]
    router-oracle candidates [--leaderboard F|bundled ...] [--tasks F] -o candidates.json
    router-oracle models [--candidates bundled|F]

Exit status: 0 ok, 2 bad input (one line on stderr naming the file and the problem, no output file
written), 130 interrupted (Ctrl-C; no output file written).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from router_oracle.atomic_file import refuse_inputs_as_outputs
from router_oracle.build import BUNDLED, build_table
from router_oracle.candidates import BUNDLED_CANDIDATES, candidates_path, load_candidates
from router_oracle.candidates_build import build_candidates
from router_oracle.cli_runner import run_cli
from router_oracle.config_flag import field_flag
from router_oracle.data_files import leaderboard_path, tasks_path
from router_oracle.derive import DEFAULT_POOL_NAME, CandidateIndex
from router_oracle.noise import METHOD
from router_oracle.pool_file import resolve_pool_spec
from router_oracle.stats import compute_stats, format_models, format_stats, stats_json
from router_oracle.table import OracleRule, write_table
from router_oracle.table_check import load_table


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
    b = sub.add_parser(
        "build",
        help="build an oracle table from results, or derive one from a candidates table",
        description="Build an oracle table from result sources for a pool file, or (--from-candidates) "
        "derive the table of any subset pool from a candidates table: the same rule, the same numbers.",
    )
    b.add_argument(
        "--pool",
        default=None,
        help="bundled pool name (default, multi_run) or a TOML path (default: default)",
    )
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
    field_flag(b, OracleRule, "tie_cost", default=OracleRule.model_fields["tie_cost"].default)
    b.add_argument("--no-progress", dest="progress", action="store_false", help="no progress bars on stderr")
    b.add_argument(
        "--from-candidates",
        default=None,
        metavar="F",
        help=f"derive the table from a candidates table ('{BUNDLED_CANDIDATES}' = the bundled one) instead "
        "of result sources; needs --models",
    )
    b.add_argument(
        "--models",
        default=None,
        metavar="ID,ID,...",
        help="with --from-candidates: the pool's candidate model ids, in pool order "
        "(`router-oracle models` lists them)",
    )
    b.add_argument(
        "--pool-name", default=None, help="with --from-candidates: the pool's name (default: subset)"
    )
    b.add_argument("-o", "--output", required=True, help="table JSON to write")
    b.set_defaults(run_sources=[])
    c = sub.add_parser(
        "candidates",
        help="build a candidates table: every usable leaderboard run per task, grouped into models",
        description="Group a leaderboard's runs into candidate models (same base model and reasoning "
        "effort; see router_oracle/leaderboard_models.py), leave out runs without full or with broken "
        "per-task data (recorded with the reason), and write every run's outcome on every task. "
        "`router-oracle build --from-candidates F --models ...` derives any subset pool's oracle table.",
    )
    c.add_argument(
        "--leaderboard",
        action="append",
        default=None,
        metavar="F",
        help=f"swe-bench.com leaderboard JSON[.gz] ('{BUNDLED}' = the bundled one, the default)",
    )
    c.add_argument("--tasks", default=None, metavar="F", help="task JSONL[.gz] (default: bundled)")
    c.add_argument("-o", "--output", required=True, help="candidates JSON to write")
    m = sub.add_parser("models", help="list the candidate models of a candidates table")
    m.add_argument(
        "--candidates",
        default=BUNDLED_CANDIDATES,
        metavar="F",
        help=f"candidates table ('{BUNDLED_CANDIDATES}' = the bundled one, the default)",
    )
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


def _inputs(args: argparse.Namespace) -> list[tuple[str, str | None]]:
    """Every file a `build` or `candidates` run reads, by flag (bundled names as their files)."""

    def board(spec: str) -> str:
        return str(leaderboard_path()) if spec == BUNDLED else spec

    out: list[tuple[str, str | None]] = [("--tasks", args.tasks or str(tasks_path()))]
    out += [("--leaderboard", board(b)) for b in args.leaderboard or [BUNDLED]]
    for name in ("pool", "from_candidates"):
        value = getattr(args, name, None)
        if value is not None:
            path = resolve_pool_spec(value) if name == "pool" else candidates_path(value)
            out.append((f"--{name.replace('_', '-')}", str(path)))
    out += [(flag, path) for flag, path, _ in getattr(args, "run_sources", [])]
    out += [("--long-table", path) for path in getattr(args, "long_table", [])]
    return out


def _derive(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    given = [
        flag
        for flag, value in (
            ("--pool", args.pool),
            ("--leaderboard", args.leaderboard),
            ("--harness-report/--trajectories", args.run_sources),
            ("--long-table", args.long_table),
            ("--tasks", args.tasks),
        )
        if value
    ]
    if given or args.tie_cost != "measured":
        parser.error(
            f"--from-candidates takes its results from the candidates table; drop {given or '--tie-cost'}"
        )
    if not args.models:
        parser.error("--from-candidates needs --models ID,ID,...")
    ids = [i.strip() for i in args.models.split(",") if i.strip()]
    table = CandidateIndex.load(args.from_candidates).table(
        ids, pool_name=args.pool_name or DEFAULT_POOL_NAME, output=args.output
    )
    write_table(table, args.output)
    print(
        f"wrote {args.output}: {len(table.tasks)} tasks, pool {table.pool.name} ({', '.join(table.pool.ids)})"
    )
    return 0


def _build(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    if args.from_candidates is not None:
        return _derive(args, parser)
    if args.models is not None or args.pool_name is not None:
        parser.error("--models and --pool-name go with --from-candidates")
    table = build_table(
        args.pool or "default",
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


def _candidates(args: argparse.Namespace) -> int:
    table = build_candidates(args.leaderboard or [BUNDLED], tasks=args.tasks, output=args.output)
    print(
        f"wrote {args.output}: {len(table.models)} models from {len(table.runs)} runs, "
        f"{len(table.tasks)} tasks; {len(table.excluded)} runs left out"
    )
    for x in table.excluded:
        print(f"  left out {x.run}: {x.reason}")
    return 0


def _models(args: argparse.Namespace) -> int:
    sys.stdout.write(format_models(load_candidates(args.candidates)))
    return 0


def _run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    if args.command in ("build", "candidates"):
        # Before any work: an output that is one of the inputs would silently replace it.
        refuse_inputs_as_outputs([args.output], _inputs(args))
    if args.command == "build":
        return _build(args, parser)
    if args.command == "candidates":
        return _candidates(args)
    if args.command == "models":
        return _models(args)
    return _stats(args)


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    return run_cli(lambda: _run(args, parser), prog="router-oracle", error_prefix="error: ")


if __name__ == "__main__":
    sys.exit(main())
