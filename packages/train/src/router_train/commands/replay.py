"""`router-train replay PRIOR TRAFFIC`: deployment simulated on real outcomes
(`router_train.offpolicy.replay`): a prior IRT checkpoint serves another table's tasks in seeded orders,
exploring and refitting as
`serve` and `feedback --refit` would, against the static prior, the best fixed model in hindsight and the
oracle; the off-policy estimates at the end are checked against the truth.

Exit codes: 0 done, 2 bad input (one line on stderr, nothing written), 130 interrupted.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Annotated, Any

import numpy as np
from pydantic import Field

from router_oracle.infra.atomic_file import refuse_inputs_as_outputs, write_bytes_atomic, write_text_atomic
from router_oracle.infra.frozen_model import FrozenModel
from router_oracle.infra.numeric_option import Count, Seed, option_type
from router_oracle.table import OracleTable
from router_oracle.table_check import load_table
from router_train.cli_args import field_flag, options_of
from router_train.commands import summary
from router_train.irt.checkpoint import read_irt
from router_train.offpolicy.estimators import MIN_TRIED
from router_train.offpolicy.floor_learner import DEFAULT_STRENGTH
from router_train.offpolicy.floor_replay import (
    ArmPoint,
    budget_at,
    regret_lines,
    replay_objective,
    table_points,
    traffic_of,
)
from router_train.offpolicy.replay import ReplayError, SeedResult, coverage, replay_seed, setup
from router_train.offpolicy.replay_plot import render_png
from router_train.scoring.floor import Objective

Rate = Annotated[float, Field(ge=0, lt=1, allow_inf_nan=False)]
"""An exploration rate in [0, 1)."""


FloorShare = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]
"""`--floor-share`: a share of the way from the cheapest to the dearest model's cost, in [0, 1]."""


class Options(FrozenModel):
    """What `router-train replay`'s flags fill."""

    prior: Path
    """the prior: an IRT checkpoint (`router-train fit irt --table T`) over the traffic's models"""
    traffic: Path
    """the traffic: an oracle table of the same models under another harness (every model's outcome on
    every task)"""
    seeds: Count = 10
    """stream seeds (task order and exploration draws)"""
    first_seed: Seed = 0
    """the first stream seed (seeds first_seed, first_seed + 1, ...)"""
    explore: Rate = 0.05
    """exploration rate: the share of tasks served by a uniform draw over the pool (serve's [explore])"""
    refit_every: Count = 25
    """refit the router on everything logged every this many tasks"""
    horizon: Count = 200
    """compare the policies after this many tasks"""
    bootstrap: Count = 500
    """bootstrap resamples of the off-policy intervals"""
    min_tried: Count = MIN_TRIED
    """a policy picking a model with fewer logged outcomes than this gets a warning, not an estimate"""
    plot: Path | None = None
    """write the cumulative resolved and cost curves (PNG)"""
    report: Path | None = None
    """write every seed's results (JSON)"""
    prior_table: Path | None = None
    """the table the prior's harness measured (the same models): its per-model mean cost and resolve rate
    start the floor's posteriors; with it, replay also serves the traffic with the static floor (that
    table's mix) and the learning floor (offpolicy.floor_learner, as serve drives it) at each
    --floor-share, and prints their regret against the best mix in hindsight at the budget after
    100 / 200 / 500 tasks"""
    floor_share: list[FloorShare] = Field(
        default_factory=lambda: [0.25, 0.5, 0.75]
    )
    """with --prior-table, a budget this share of the way from the cheapest to the dearest model's cost on
    that table (repeat the flag for several)"""
    prior_strength: Annotated[float, Field(ge=0, le=1e6, allow_inf_nan=False)] = DEFAULT_STRENGTH
    """with --prior-table, the floor's resolve-rate prior strength in pseudo-tasks (the default is
    measured from the shipped twins' cross-harness disagreement)"""


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "replay",
        help=summary("replay"),
        description=(
            "Replay a deployment on real outcomes: the PRIOR IRT checkpoint serves the TRAFFIC table's tasks "
            "in a seeded order, exploring at --explore, learning each outcome and refitting every "
            "--refit-every tasks (feedback --refit's refit), over --seeds stream seeds; prints the learning "
            "router against the static prior, the best fixed model in hindsight and the oracle after "
            "--horizon tasks, and how often the off-policy intervals cover the true values. See "
            "docs/feedback.md. Exit codes: 0 done, 2 bad input (one line on stderr), 130 interrupted."
        ),
    )
    field_flag(p, Options, "prior", "prior", metavar="PRIOR")
    field_flag(p, Options, "traffic", "traffic", metavar="TRAFFIC")
    for name in ("seeds", "first_seed", "explore", "refit_every", "horizon", "bootstrap", "min_tried"):
        field_flag(p, Options, name)
    field_flag(p, Options, "plot", metavar="OUT.png")
    field_flag(p, Options, "report", metavar="OUT.json")
    field_flag(p, Options, "prior_table", metavar="TABLE")
    field_flag(p, Options, "floor_share", action="append", type=option_type(FloorShare, "share"), metavar="S")
    field_flag(p, Options, "prior_strength")
    p.set_defaults(func=run)


class ReplayReport(FrozenModel):
    """`--json`: the options and every seed's results."""

    options: Options
    """The run's options."""
    seeds: list[SeedResult]
    """Per stream seed."""
    floor: dict[str, dict[str, list[list[ArmPoint]]]] | None = None
    """`--prior-table`: per budget (`--budget X`), per arm (`static floor`, `learning floor`), per stream
    seed its regret and spend after 100 / 200 / 500 tasks."""


def _spread(values: list[float], digits: int) -> str:
    v = np.asarray(values, dtype=float)
    lo, hi = np.percentile(v, [2.5, 97.5])
    return f"{v.mean():.{digits}f} [{lo:.{digits}f}, {hi:.{digits}f}]"


def report_text(results: list[SeedResult], horizon: int) -> str:
    """The summary: the policies after the horizon, the goals, the off-policy coverage."""
    lines = [f"after {horizon} tasks (mean over {len(results)} seeds [2.5%, 97.5%] across seeds):"]
    lines.append(f"{'policy':<14} {'resolved':<24} {'cost/task (USD)':<24} {'vs mix (points)':<24}")
    for name in ("learning", "static prior", "best fixed", "oracle"):
        pts = [r.at_horizon[name] for r in results]
        gaps = [100 * p.gap_vs_mix for p in pts if p.gap_vs_mix is not None]
        gap = _spread(gaps, 2) if len(gaps) == len(pts) else "-"
        resolved, cost = _spread([p.resolved for p in pts], 3), _spread([p.cost for p in pts], 4)
        lines.append(f"{name:<14} {resolved:<24} {cost:<24} {gap:<24}".rstrip())
    ahead = [
        100 * (r.at_horizon["learning"].gap_vs_mix or 0)
        - 100 * (r.at_horizon["static prior"].gap_vs_mix or 0)
        for r in results
    ]
    vs_best = [
        100 * (r.at_horizon["learning"].resolved - r.at_horizon["best fixed"].resolved) for r in results
    ]
    lines.append(
        f"learning - static prior, vs mix: {_spread(ahead, 2)} points; ahead in "
        f"{sum(a > 0 for a in ahead)}/{len(results)} seeds"
    )
    lines.append(
        f"learning - best fixed (hindsight), resolved: {_spread(vs_best, 2)} points; not below in "
        f"{sum(d >= 0 for d in vs_best)}/{len(results)} seeds"
    )
    warned = sum(e.estimate.warning is not None for r in results for e in r.estimates)
    total = sum(len(r.estimates) for r in results)
    lines.append(
        f"off-policy estimates at the end of each stream: {total - warned} of {total} policy x seed got "
        f"numbers ({warned} warned: too little explored); 95% intervals covering the true value:"
    )
    cov = coverage(results)
    for metric in ("resolved", "cost"):
        cells = []
        for name in ("ips", "snips", "dr"):
            hit, n = cov.get(f"{name} {metric}", (0, 0))
            cells.append(f"{name.upper()} {hit}/{n} ({100 * hit / n:.0f}%)" if n else f"{name.upper()} -")
        lines.append(f"  {metric:<9}" + "   ".join(cells))
    return "\n".join(lines) + "\n"


def floor_arms(
    options: Options, traffic: OracleTable, models: list[str], seeds: list[int]
) -> dict[str, dict[str, list[list[ArmPoint]]]]:
    """Per `--floor-share` budget on the prior table, the static and the learning floor on the traffic."""
    assert options.prior_table is not None
    prior_table = load_table(options.prior_table)
    if sorted(prior_table.pool.ids) != sorted(models):
        raise ReplayError(
            f"{options.prior_table}: its pool {sorted(prior_table.pool.ids)} is not the prior's {models}"
        )
    prior = table_points(prior_table, models)
    tr = traffic_of(traffic, models)
    out = {}
    for share in options.floor_share:
        objective = Objective(budget=round(budget_at(prior, share), 6))
        out[objective.describe()] = replay_objective(
            tr, prior, objective, seeds, strength=options.prior_strength
        )
    return out


def floor_text(floor: dict[str, dict[str, list[list[ArmPoint]]]]) -> str:
    """The floor arms' regret lines (mean [min, max] over seeds, points) and spend over the budget."""
    lines = [
        "the floor at each budget: regret vs the best mix in hindsight at the budget, points, "
        "mean [min, max] over seeds; spend / budget"
    ]
    for flag, arms in floor.items():
        lines += regret_lines("", Objective(budget=float(flag.split()[1])), arms)
    return "\n".join(line.strip() for line in lines)


def run(args: argparse.Namespace) -> int:
    options = options_of(Options, args)
    outputs = [p for p in (options.plot, options.report) if p is not None]
    refuse_inputs_as_outputs(outputs, [("PRIOR", options.prior), ("TRAFFIC", options.traffic)])
    prior = read_irt(options.prior)
    traffic = load_table(options.traffic)
    s = setup(prior, traffic, f"{options.traffic} (prior {options.prior})")
    seeds = list(range(options.first_seed, options.first_seed + options.seeds))
    results = [
        replay_seed(
            s,
            seed,
            options.explore,
            options.refit_every,
            options.horizon,
            options.bootstrap,
            options.min_tried,
        )
        for seed in seeds
    ]
    print(
        f"replay: prior {options.prior} on {options.traffic} ({len(s.instance_ids)} tasks, pool "
        f"{', '.join(s.models)}), explore {options.explore}, refit every {options.refit_every} tasks, "
        f"{options.seeds} stream seeds from {options.first_seed}"
    )
    print(report_text(results, options.horizon), end="")
    floor = None
    if options.prior_table is not None:
        floor = floor_arms(options, traffic, s.models, seeds)
        print(floor_text(floor))
    if options.plot is not None:
        title = (
            f"replay: {options.prior.name} on {options.traffic.name}, explore {options.explore}, "
            f"{options.seeds} seeds"
        )
        write_bytes_atomic(options.plot, render_png(results, title))
        print(f"wrote {options.plot}")
    if options.report is not None:
        write_text_atomic(
            options.report, ReplayReport(options=options, seeds=results, floor=floor).model_dump_json() + "\n"
        )
        print(f"wrote {options.report}")
    return 0
