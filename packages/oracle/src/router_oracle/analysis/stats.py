"""Summary statistics of an oracle table (what `router-oracle stats` prints).

Runs the table check every reader runs (`table_check`: each stored pick against the rule, the pool's
models in every task, ...), so a hand-edited or stale table is caught rather than summarised, and
estimates how much of the oracle's headroom is rollout noise (`noise.estimate_noise`).
"""

from __future__ import annotations

import json
import math

from router_oracle.analysis.noise import NoiseEstimate, estimate_noise, headroom_sentence
from router_oracle.analysis.run_agreement import RunPair
from router_oracle.candidates import CandidatesTable
from router_oracle.derive import CandidateIndex
from router_oracle.infra.frozen_model import FrozenModel
from router_oracle.table import OracleTable
from router_oracle.table_check import check_table


class ModelStats(FrozenModel):
    """One pool model, as if the router always chose it."""

    id: str
    """Pool model id."""
    name: str
    """Display name."""
    resolve_rate: float
    """Mean over tasks of the model's per-task resolve rate."""
    resolved: float
    """Expected number of tasks resolved (sum of per-task resolve rates)."""
    total_cost: float
    """Sum over tasks of the model's mean cost, USD."""
    oracle_count: int
    """Tasks on which this model is the oracle."""


class OracleStats(FrozenModel):
    """The oracle router: always the table's `oracle` model."""

    resolve_rate: float
    """Mean over tasks of the oracle model's resolve rate."""
    resolved: float
    """Expected number of tasks resolved."""
    total_cost: float
    """Sum over tasks of the oracle model's mean cost, USD."""


class TableStats(FrozenModel):
    """Everything `router-oracle stats` reports; its JSON is stable (fixed key order)."""

    pool: str
    """Pool name."""
    tie_cost: str
    """The rule's tie cost option (`measured` or `price`)."""
    tasks: int
    """Number of tasks."""
    models: list[ModelStats]
    """Per model, in pool order."""
    oracle: OracleStats
    """The oracle's numbers."""
    ties: int
    """Picks where more than one model shared the best resolve rate (cost decided)."""
    id_tiebreaks: int
    """Picks where resolve rate and cost both tied (the smallest model id decided)."""
    all_failed: int
    """Tasks no model resolved in any run (the cheapest model is the oracle)."""
    noise: NoiseEstimate
    """The oracle's headroom above the best mix of single models, and the part rollout noise alone would
    produce (`router_oracle.analysis.noise`)."""


def compute_stats(table: OracleTable, *, origin: str = "<table>") -> TableStats:
    """Stats of `table`; raises `TableError` when the table fails `table_check.check_table` (the check
    every table reader runs: a stored pick that disagrees with the rule, a missing model, ...)."""
    id_tiebreaks = sum(p.id_tiebreak for p in check_table(table, origin=origin))
    n = len(table.tasks)
    models = []
    for m in table.pool.models:
        resolved = math.fsum(t.per_model[m.id].resolve_rate for t in table.tasks)
        models.append(
            ModelStats(
                id=m.id,
                name=m.name,
                resolve_rate=resolved / n if n else 0.0,
                resolved=resolved,
                total_cost=math.fsum(t.per_model[m.id].cost for t in table.tasks),
                oracle_count=sum(t.oracle == m.id for t in table.tasks),
            )
        )
    o_resolved = math.fsum(t.per_model[t.oracle].resolve_rate for t in table.tasks)
    return TableStats(
        pool=table.pool.name,
        tie_cost=table.rule.tie_cost,
        tasks=n,
        models=models,
        oracle=OracleStats(
            resolve_rate=o_resolved / n if n else 0.0,
            resolved=o_resolved,
            total_cost=math.fsum(t.per_model[t.oracle].cost for t in table.tasks),
        ),
        ties=sum(len(t.best) > 1 for t in table.tasks),
        id_tiebreaks=id_tiebreaks,
        all_failed=sum(t.all_failed for t in table.tasks),
        noise=estimate_noise(table),
    )


def stats_json(stats: TableStats) -> str:
    """Stable JSON text of the stats."""
    return json.dumps(stats.model_dump(mode="json"), indent=1) + "\n"


def _pct(x: float, n: int) -> str:
    return f"{100 * x / n:5.1f}%" if n else "  n/a"


def format_stats(stats: TableStats) -> str:
    """A readable table for humans."""
    n = stats.tasks
    width = max([len("model"), len("oracle"), *(len(m.id) for m in stats.models)])
    lines = [
        f"pool {stats.pool}: {len(stats.models)} models, {n} tasks, ties broken by {stats.tie_cost} cost",
        "",
        f"{'model':<{width}}  {'resolved':>14}  {'total cost $':>12}  {'oracle picks':>13}",
    ]
    for m in stats.models:
        lines.append(
            f"{m.id:<{width}}  {m.resolved:7.1f} {_pct(m.resolved, n)}  {m.total_cost:12.2f}  "
            f"{m.oracle_count:6d} {_pct(m.oracle_count, n)}"
        )
    o = stats.oracle
    lines.append(f"{'oracle':<{width}}  {o.resolved:7.1f} {_pct(o.resolved, n)}  {o.total_cost:12.2f}")
    lines.append(f"  {headroom_sentence(stats.noise, show_mix=True)}")
    lines += [
        "",
        f"ties on resolve rate (cheapest chosen): {stats.ties} of {n} picks ({_pct(stats.ties, n).strip()})",
        f"  of which also tied on cost (smallest id chosen): {stats.id_tiebreaks}",
        f"all-fail tasks (cheapest chosen): {stats.all_failed} ({_pct(stats.all_failed, n).strip()})",
        "",
        *format_noise(stats.noise),
    ]
    return "\n".join(lines) + "\n"


def _p(x: float) -> str:
    return f"{100 * x:.1f}%"


def format_noise(est: NoiseEstimate) -> list[str]:
    """The rollout-noise lines of `format_stats`: measured pairs, each pool model's source, the estimate."""
    if est.noise is None or est.upper is None:
        return [f"rollout noise: not estimated: {est.unavailable}"]
    width = max(len("pool model"), *(len(m.id) for m in est.measured), *(len(m.id) for m in est.models))
    lines: list[str] = []
    if est.measured:
        lines += [
            "rollout noise: runs of one model compared task by task (A, B: its runs in pool order)",
            f"{'model':<{width}}  source   resolved A / B  disagree  A only / B only  level shift  "
            "either run vs better run",
        ]
        for m in est.measured:
            lines += [f"{m.id:<{width}}  {m.source:<7}  {_pair_columns(pair)}" for pair in m.pairs]
    cross = format_cross_harness(est, width)
    lines += ["", *cross] if lines and cross else cross
    lines += ["", f"{'pool model':<{width}}  disagreement used (all)  measured as"]
    for pm in est.models:
        used = f"{_p(pm.noise_disagreement):>6} ({_p(pm.disagreement)})"
        lines.append(f"{pm.id:<{width}}  {used:<23}  {pm.measured_as} ({pm.measured_source}, {pm.match})")
    lo, hi = est.noise, est.upper
    lines += [
        "noise-only pool (same resolve rates and disagreement, no model better on particular tasks; "
        "method: --help):",
        f"  oracle on rollout labels {_p(lo.oracle_resolve_rate)} ({_p(hi.oracle_resolve_rate)}; "
        f"this table's {_p(est.oracle_resolve_rate)}), routing each task to its likeliest model "
        f"{_p(lo.best_resolve_rate)} ({_p(hi.best_resolve_rate)}): "
        f"{lo.noise_points:.1f} ({hi.noise_points:.1f}) points of luck",
    ]
    return lines


def _pair_columns(pair: RunPair) -> str:
    """`resolved A / B  disagree  A only / B only  level shift  either run vs better run` of a pair."""
    better = max(pair.resolved_a, pair.resolved_b)
    return (
        f"{_p(pair.resolved_a):>6} / {_p(pair.resolved_b):>6}  "
        f"{_p(pair.disagreement):>8}  {pair.a_only:>6} / {pair.b_only:<6}  "
        f"{_p(abs(pair.resolved_a - pair.resolved_b)):>11}  "
        f"{_p(pair.either)} vs {_p(better)} ({100 * (pair.either - better):+.1f})"
    )


def format_cross_harness(est: NoiseEstimate, width: int) -> list[str]:
    """The second measure's lines (none when no pool model has a cross-harness pair): each pool run
    against the same model under another harness, and whether the estimate uses them."""
    if not est.cross_harness:
        return []
    rows = []
    for m in est.cross_harness:
        for hp in m.pairs:
            # A model with several runs names which of them is A (#k: its k-th run in pool order).
            k = f" #{m.runs.index(hp.pair.run_a) + 1}" if len(m.runs) > 1 else ""
            rows.append((m.id, f"{hp.harness_a}{k} / {hp.harness_b}", hp))
    hw = max(len("harness A / B"), *(len(harnesses) for _, harnesses, _ in rows))
    used = (
        "the estimate uses these (no same-harness re-runs to draw on), level shift left out"
        if est.measure == "cross_harness"
        else "shown beside the re-runs above, which the estimate uses"
    )
    kth = ", #k its k-th" if any(len(m.runs) > 1 for m in est.cross_harness) else ""
    lines = [
        "rollout noise, second measure: the same model under two harnesses, compared on the tasks both "
        f"ran (A: the pool's run{kth})",
        f"  {used}",
        f"{'model':<{width}}  {'harness A / B':<{hw}}  tasks  resolved A / B  disagree  A only / B only  "
        "level shift  either run vs better run",
    ]
    for model, harnesses, hp in rows:
        lines.append(f"{model:<{width}}  {harnesses:<{hw}}  {hp.tasks:>5}  {_pair_columns(hp.pair)}")
    return lines


def format_models(candidates: CandidatesTable) -> str:
    """The candidate models of a candidates table, one line each (what `router-oracle models` prints):
    id, harness and agent version, date, runs, resolve rate and total cost over all tasks (as an oracle
    table of that model would say), price per million input/output tokens, provider and name."""
    index = CandidateIndex(candidates)
    n = len(candidates.tasks)
    lines = [
        f"{len(candidates.models)} candidate models from {len(candidates.runs)} runs, {n} tasks "
        f"({len(candidates.excluded)} runs left out)",
        "",
        f"{'model id':36s} {'harness':20s} {'version':9s} {'date':10s} {'runs':>4s} {'resolved':>8s} "
        f"{'total cost $':>12s} {'$/M in/out':>12s}  {'provider':14s} name",
    ]
    for m in candidates.models:
        outcomes = index.outcomes(m.id).values()
        rate = math.fsum(o.resolve_rate for o in outcomes) / n
        cost = math.fsum(o.cost for o in outcomes)
        last = m.runs[-1]
        price = (
            f"{last.input_price:g}/{last.output_price:g}"
            if last.input_price is not None and last.output_price is not None
            else "-"
        )
        lines.append(
            f"{m.id:36s} {last.harness:20s} {last.scaffold or '-':9s} {last.date or '-':10s} "
            f"{len(m.runs):4d} {rate:8.1%} {cost:12.2f} {price:>12s}  {m.provider or '-':14s} {m.name}"
        )
    return "\n".join(lines) + "\n"
