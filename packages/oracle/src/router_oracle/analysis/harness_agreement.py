"""How often the same model under two harnesses agrees, task by task: a second measure of rollout noise.

A pool of single runs (e.g. `reference`: one OpenHands run per model) has no re-run of its own models
to measure rollout noise on, but the bundled data often ran the same model under another harness too:
OpenHands against mini-SWE-agent (the bash-only leaderboard), Claude Code or Codex CLI (the OpenHands
Index). The rule, one place:

1. A pool run qualifies when the table was built from the bundled source holding it (by content, so
   its flags in the table are the source's).
2. It is paired with every bundled run of the same base model (`leaderboard_models.base_model` of the
   two runs' entries) under another harness, whatever the effort or agent version. Only resolved flags
   are compared, so runs that recorded no cost (Codex CLI) count.
3. A pair is compared on the table's tasks that both runs have a flag for (a task missing in either run
   is left out of that pair) with `run_agreement.compare_runs`.
4. A pool model's figures are the means over its pairs (each on its own tasks). Two harnesses differ in
   more than the dice (prompts, tools, step limits), so much of a pair's disagreement can be a level
   shift; `noise_disagreement` leaves `|rate A - rate B|` out, as for same-harness re-runs.

`noise.estimate_noise` uses these pairs only for a table with no same-harness re-runs to draw on.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Literal

from router_oracle.analysis.run_agreement import RunPair, compare_runs
from router_oracle.infra.file_hash import sha256_file
from router_oracle.infra.frozen_model import FrozenModel
from router_oracle.infra.report_numbers import rounded
from router_oracle.leaderboard_models import base_model
from router_oracle.sources.leaderboard import read_leaderboard
from router_oracle.sources.openhands import read_openhands_resolved
from router_oracle.sources.registry import KINDS_BY_NAME
from router_oracle.sources.run_entry import RunEntry
from router_oracle.table import OracleTable

CROSS_HARNESS = "cross_harness"
"""`source` of a cross-harness measure (beside `table` and `bundled` of `run_agreement`)."""


class HarnessPair(FrozenModel):
    """A pool run (A) and a run of the same base model under another harness (B), compared task by task."""

    base_model: str
    """The base model both runs share (`leaderboard_models.base_model`)."""
    harness_a: str
    """Harness of the pool run."""
    harness_b: str
    """Harness of the other run."""
    tasks: int
    """The table's tasks both runs have a resolved flag for: the tasks compared."""
    pair: RunPair
    """The comparison (`run_a`: the pool run)."""


class CrossHarnessModel(FrozenModel):
    """A pool model measured against itself under other harnesses."""

    id: str
    """Pool model id."""
    name: str
    """Display name."""
    source: Literal["cross_harness"] = "cross_harness"
    """Always `cross_harness` (what a pool model measured this way names as its source)."""
    runs: list[str]
    """The pool model's runs, in pool order (run A of each pair is one of them)."""
    resolve_rate: float
    """Mean over pairs of the two runs' mean resolve rate (what `closest resolve rate` matches on)."""
    pairs: list[HarnessPair]
    """Every pair: its runs in pool order, each with the other runs sorted by (harness, run id)."""
    disagreement: float
    """Mean over pairs of the share of compared tasks where the two runs disagree."""
    level_shift: float
    """Mean over pairs of `|resolved_a - resolved_b|`."""
    noise_disagreement: float
    """`disagreement - level_shift`: the disagreement left once the harnesses' level shift is taken out."""


def pair_harnesses(
    table: OracleTable,
    entries: Sequence[RunEntry],
    flags: Mapping[str, Mapping[str, bool]],
    known: Collection[str],
) -> list[CrossHarnessModel]:
    """Rules 2-4 for the pool models of `table`, in pool order (models without a pair left out).
    `entries`: the runs to pair with (and the pool runs' own entries); `flags`: their resolved flags by
    task; `known`: the pool runs whose flags in the table are their source's (rule 1)."""
    by_run = {e.run: e for e in entries}
    bases = {e.run: base_model(e) for e in entries}
    others = sorted((e for e in entries if e.run in flags), key=lambda e: (e.harness, e.run))
    measured = []
    for m in table.pool.models:
        pairs: list[HarnessPair] = []
        seen: set[frozenset[str]] = set()
        for k, run in enumerate(m.runs):
            entry = by_run.get(run)
            if entry is None or run not in known:
                continue
            for other in others:
                key = frozenset((run, other.run))
                if other.harness == entry.harness or bases[other.run] != bases[run] or key in seen:
                    continue
                b_flags = flags[other.run]
                tasks = [t for t in table.tasks if t.instance_id in b_flags]
                if not tasks:
                    continue
                seen.add(key)
                a = [t.per_model[m.id].runs[k].resolved for t in tasks]
                b = [b_flags[t.instance_id] for t in tasks]
                pairs.append(
                    HarnessPair(
                        base_model=bases[run],
                        harness_a=entry.harness,
                        harness_b=other.harness,
                        tasks=len(tasks),
                        pair=compare_runs(run, other.run, a, b),
                    )
                )
        if not pairs:
            continue
        n = len(pairs)
        disagreement = math.fsum((p.pair.a_only + p.pair.b_only) / p.tasks for p in pairs) / n
        shift = math.fsum(abs(p.pair.a_only - p.pair.b_only) / p.tasks for p in pairs) / n
        measured.append(
            CrossHarnessModel(
                id=m.id,
                name=m.name,
                runs=list(m.runs),
                resolve_rate=rounded(
                    math.fsum(p.pair.resolved_a + p.pair.resolved_b for p in pairs) / (2 * n)
                ),
                pairs=pairs,
                disagreement=rounded(disagreement),
                level_shift=rounded(shift),
                noise_disagreement=rounded(disagreement - shift),
            )
        )
    return measured


def _leaderboard_flags(path: Path) -> dict[str, dict[str, bool]]:
    flags: dict[str, dict[str, bool]] = {}
    for row in read_leaderboard(path).rows:
        if row.resolved is not None:
            flags.setdefault(row.run, {})[row.task_id] = row.resolved
    return flags


_FLAGS = {"leaderboard": _leaderboard_flags, "openhands": read_openhands_resolved}
"""Source kind -> reader of every run's resolved flags, for the bundled sources that publish many runs."""


def _bundled_path(kind: str) -> Path:
    bundled = KINDS_BY_NAME[kind].bundled
    assert bundled is not None, kind
    return bundled()


@functools.cache
def _bundled_shas() -> dict[str, str]:
    """sha256 of each bundled multi-run source, by kind: how a table is known to be built from it."""
    return {kind: sha256_file(_bundled_path(kind)) for kind in _FLAGS}


@functools.cache
def _bundled() -> tuple[tuple[RunEntry, ...], dict[str, str], dict[str, dict[str, bool]]]:
    """(every entry, source kind by run, resolved flags by run) of the bundled multi-run sources."""
    entries: list[RunEntry] = []
    kinds: dict[str, str] = {}
    flags: dict[str, dict[str, bool]] = {}
    for kind, read_flags in _FLAGS.items():
        read_entries = KINDS_BY_NAME[kind].entries
        assert read_entries is not None, kind
        path = _bundled_path(kind)
        for e in read_entries(path):
            entries.append(e)
            kinds[e.run] = kind
        flags.update(read_flags(path))
    return tuple(entries), kinds, flags


def measure_cross_harness(table: OracleTable) -> list[CrossHarnessModel]:
    """The cross-harness pairs of `table`'s pool models in the bundled data (empty, without reading the
    bundled data, for a table built from none of the bundled sources that publish many runs)."""
    shas = _bundled_shas()
    used = {s.kind for s in table.sources if s.kind in shas and s.sha256 == shas[s.kind]}
    if not used:
        return []
    entries, kinds, flags = _bundled()
    return pair_harnesses(table, entries, flags, {run for run, kind in kinds.items() if kind in used})
