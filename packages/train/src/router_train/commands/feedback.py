"""`router-train feedback LOG`: what `serve` recorded of its traffic (decisions, exploration, outcomes),
read from its decision log or its store; `--long-table OUT.jsonl` exports the outcomes as the long table
`router-oracle build --long-table` reads.

Exit codes: 0 done, 2 bad input (one line on stderr, nothing written), 130 interrupted.
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path
from typing import Any

from router_oracle.atomic_file import refuse_inputs_as_outputs, write_text_atomic
from router_oracle.frozen_model import FrozenModel
from router_train.cli_args import field_flag, options_of
from router_train.commands import summary
from router_train.serve.export import long_table_lines, read_records


class Options(FrozenModel):
    """What `router-train feedback`'s flags fill."""

    log: Path
    """serve's decision log (JSONL) or store (.sqlite)"""
    long_table: Path | None = None
    """write the outcomes as a long table (JSONL: task_id, model, resolved, cost) for router-oracle build"""


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "feedback",
        help=summary("feedback"),
        description=(
            "Read what `router-train serve` recorded (its decision log or its store): per pool model, the "
            "tasks served, explored and with an outcome, and their resolved rate and cost. --long-table "
            "exports the outcomes for `router-oracle build --long-table`. See docs/serve.md. Exit codes: "
            "0 done, 2 bad input (one line on stderr), 130 interrupted."
        ),
    )
    field_flag(p, Options, "log", "log", metavar="LOG")
    field_flag(p, Options, "long_table", metavar="OUT.jsonl")
    p.set_defaults(func=run)


def summary_table(served: Counter[str], explored: Counter[str], outcomes: list[Any]) -> str:
    """Per model: tasks served, of them explored, outcomes, resolved rate, mean cost (of priced ones)."""
    head = f"{'model':<28} {'tasks':>6} {'explored':>8} {'outcomes':>8} {'resolved':>8} {'mean cost':>10}"
    lines = [head]
    for model in sorted(set(served) | {o.model for o in outcomes}):
        mine = [o for o in outcomes if o.model == model]
        rate = f"{sum(o.resolved for o in mine) / len(mine):.3f}" if mine else "-"
        costs = [o.cost for o in mine if o.cost is not None]
        cost = f"{sum(costs) / len(costs):.4f}" if costs else "-"
        lines.append(
            f"{model:<28} {served[model]:>6} {explored[model]:>8} {len(mine):>8} {rate:>8} {cost:>10}"
        )
    return "\n".join(lines) + "\n"


def run(args: argparse.Namespace) -> int:
    options = options_of(Options, args)
    if options.long_table is not None:
        refuse_inputs_as_outputs([options.long_table], [("LOG", options.log)])
    records = read_records(options.log)
    outcomes = sorted(records.outcomes.values(), key=lambda o: o.task)
    served = Counter(d.model for d in records.decisions.values() if d.model is not None)
    explored = Counter(d.model for d in records.decisions.values() if d.model is not None and d.explored)
    if options.long_table is not None:
        write_text_atomic(options.long_table, long_table_lines(outcomes, str(options.log)))
    print(summary_table(served, explored, outcomes), end="")
    print(f"{len(records.decisions)} tasks decided, {len(outcomes)} with an outcome", end="")
    print(f"; wrote {options.long_table}" if options.long_table is not None else "")
    return 0
