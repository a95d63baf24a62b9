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

from router_oracle.analysis.noise import METHOD
from router_oracle.analysis.stats import compute_stats, format_models, format_stats, stats_json
from router_oracle.build import build_table
from router_oracle.candidates import BUNDLED_CANDIDATES, candidates_path, load_candidates
from router_oracle.candidates_build import build_candidates
from router_oracle.data_files import tasks_path
from router_oracle.derive import DEFAULT_POOL_NAME, CandidateIndex
from router_oracle.infra.atomic_file import refuse_inputs_as_outputs
from router_oracle.infra.cli_runner import run_cli
from router_oracle.infra.config_flag import field_flag
from router_oracle.pool_file import resolve_pool_spec
from router_oracle.sources.registry import BUNDLED, KINDS_BY_FLAG, KINDS_BY_NAME, SOURCE_KINDS, SourceSpec
from router_oracle.table import OracleRule, OracleTable, license_summary, write_table
from router_oracle.table_check import load_table


class _Source(argparse.Action):
    """A source flag (`SOURCE_KINDS`): remembered in order as `[kind, path, run]`, the run filled by a
    `--run` right after it."""

    def __call__(
        self, parser: argparse.ArgumentParser, ns: argparse.Namespace, value: Any, opt: Any = None
    ) -> None:
        ns.sources = [*(getattr(ns, "sources", None) or []), [KINDS_BY_FLAG[str(opt)].kind, value, None]]


_RUN_FLAGS = " or ".join(k.flag for k in SOURCE_KINDS if k.takes_run)


class _Run(argparse.Action):
    """`--run RUN`: the run id of the one-run source (`SourceKind.takes_run`) just before it."""

    def __call__(
        self, parser: argparse.ArgumentParser, ns: argparse.Namespace, value: Any, opt: Any = None
    ) -> None:
        pending = getattr(ns, "sources", None) or []
        if not pending or not KINDS_BY_NAME[pending[-1][0]].takes_run or pending[-1][2] is not None:
            parser.error(f"--run must follow a {_RUN_FLAGS}")
        pending[-1][2] = value


def _add_source_flags(parser: argparse.ArgumentParser, *, runs: bool) -> None:
    """One flag per source kind (`--run` after a one-run kind's, when `runs`)."""
    for kind in SOURCE_KINDS:
        if kind.takes_run and not runs:
            continue
        parser.add_argument(kind.flag, action=_Source, metavar=kind.metavar, help=kind.help)
    if runs:
        parser.add_argument(
            "--run",
            action=_Run,
            metavar="RUN",
            help="pool run of the preceding report/trajectories (checked against what the file says)",
        )
    parser.set_defaults(sources=[])


def _specs(args: argparse.Namespace) -> list[SourceSpec]:
    return [SourceSpec(kind, path, run) for kind, path, run in args.sources]


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
        help="bundled pool name (default, bash-only, multi_run, ...) or a TOML path (default: default); with "
        "no source flag, the bundled sources that hold its runs are read",
    )
    _add_source_flags(b, runs=True)
    b.add_argument("--tasks", default=None, metavar="F", help="task JSONL[.gz] (default: bundled)")
    field_flag(b, OracleRule, "tie_cost", default=OracleRule.model_fields["tie_cost"].default)
    b.add_argument(
        "--drop-missing",
        action="store_true",
        help="leave out the tasks where a pool run has no result (the OpenHands Index has a few nulls), "
        "instead of refusing the build; the printed line counts them",
    )
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
    c = sub.add_parser(
        "candidates",
        help="build a candidates table: every usable leaderboard run per task, grouped into models",
        description="Group a leaderboard's runs into candidate models (same base model and reasoning "
        "effort; see router_oracle/leaderboard_models.py), leave out runs without full or with broken "
        "per-task data (recorded with the reason), and write every run's outcome on every task. "
        "`router-oracle build --from-candidates F --models ...` derives any subset pool's oracle table.",
    )
    _add_source_flags(c, runs=False)
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
    out: list[tuple[str, str | None]] = [("--tasks", args.tasks or str(tasks_path()))]
    for name in ("pool", "from_candidates"):
        value = getattr(args, name, None)
        if value is not None:
            path = resolve_pool_spec(value) if name == "pool" else candidates_path(value)
            out.append((f"--{name.replace('_', '-')}", str(path)))
    for spec in _specs(args) or _default_sources(args):
        out.append((spec.source_kind.flag, str(spec.source_kind.path(spec.path))))
    return out


def _default_sources(args: argparse.Namespace) -> list[SourceSpec]:
    """What `candidates` reads when given no source flag (`build` reads the bundled sources holding its
    pool's runs)."""
    if args.command == "candidates":
        return [SourceSpec("leaderboard", BUNDLED)]
    # A build without source flags reads bundled files: none of them may be its output.
    return [SourceSpec(k.kind, BUNDLED) for k in SOURCE_KINDS if k.bundled is not None]


def _derive(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    given = [
        flag
        for flag, value in (
            ("--pool", args.pool),
            ("source flags", args.sources),
            ("--drop-missing", args.drop_missing),
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
    _wrote(args.output, table)
    return 0


def _build(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    if args.from_candidates is not None:
        return _derive(args, parser)
    if args.models is not None or args.pool_name is not None:
        parser.error("--models and --pool-name go with --from-candidates")
    table = build_table(
        args.pool or "default",
        sources=_specs(args),
        tasks=args.tasks,
        tie_cost=args.tie_cost,
        output=args.output,
        progress=args.progress,
        drop_missing=args.drop_missing,
    )
    _wrote(args.output, table)
    return 0


def _wrote(output: str, table: OracleTable) -> None:
    """The closing lines of a build: what was written and the licences it inherits."""
    print(f"wrote {output}: {len(table.tasks)} tasks, pool {table.pool.name} ({', '.join(table.pool.ids)})")
    print(f"  licence: {license_summary(table.sources)}")


def _stats(args: argparse.Namespace) -> int:
    stats = compute_stats(load_table(args.table), origin=args.table)
    sys.stdout.write(stats_json(stats) if args.json else format_stats(stats))
    return 0


def _candidates(args: argparse.Namespace) -> int:
    table = build_candidates(_specs(args) or _default_sources(args), tasks=args.tasks, output=args.output)
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
