"""What every router under evaluation is reduced to: per task, a distribution over its choices.

A deterministic router puts all weight on one model; a sampled one (several `vf-eval` rollouts per
task) spreads its weight evenly over its samples; the random baseline's expected value is the uniform
distribution. Every metric is then a function of these distributions, so one code path serves all.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

from router_oracle.table import TaskRecord

UNPARSEABLE = "<unparseable>"
"""The label of a decision that named no valid pool model (the env's parser returned None)."""

SourceKind = Literal["baseline", "local", "checkpoint", "traces"]
"""Built-in baseline, local GRPO router trained by evaluate itself, local checkpoint, vf-eval traces."""


class EvaluateError(ValueError):
    """Bad input to an evaluation (a traces file, a checkpoint, an argument): names the file and problem."""


class Decisions(BaseModel):
    """One router's decisions on a set of tasks."""

    model_config = ConfigDict(frozen=True)

    name: str
    """Row label in every output (e.g. `always:kimi-k2.5-high`, `tfidf-logreg`, a vf-eval run name)."""
    kind: SourceKind
    """Where the decisions came from."""
    source: str = ""
    """The file behind them (checkpoint or traces file name), empty for built-in baselines."""
    choices: dict[str, dict[str, float]]
    """instance_id -> {model id or `<unparseable>`: weight}; each task's weights sum to 1."""
    samples: dict[str, int]
    """instance_id -> how many decisions (samples) stand behind the task's distribution."""
    recorded: dict[str, float] = {}
    """Means of the rewards and metrics the source recorded itself (vf-eval traces), for cross-checks."""
    served_splits: list[str] = []
    """The env splits the source's tasks were served from, as its traces record them (`RouteData.split`);
    empty when unknown. A `train` entry means it was run on training tasks."""


def from_routes(name: str, kind: SourceKind, tasks: Sequence[TaskRecord], routes: Sequence[str]) -> Decisions:
    """Decisions of a greedy router: `routes[i]` for `tasks[i]`, one pick per task."""
    return from_labels(name, kind, {t.instance_id: [r] for t, r in zip(tasks, routes, strict=True)})


def from_labels(
    name: str,
    kind: SourceKind,
    labels: Mapping[str, Sequence[str | None]],
    *,
    source: str = "",
) -> Decisions:
    """Decisions from raw picks: each task's picks count equally; None means unparseable."""
    choices: dict[str, dict[str, float]] = {}
    samples: dict[str, int] = {}
    for instance_id, picks in labels.items():
        if not picks:
            continue
        counts: dict[str, int] = {}
        for pick in picks:
            key = UNPARSEABLE if pick is None else pick
            counts[key] = counts.get(key, 0) + 1
        n = len(picks)
        choices[instance_id] = {k: counts[k] / n for k in sorted(counts)}
        samples[instance_id] = n
    return Decisions(name=name, kind=kind, source=source, choices=choices, samples=samples)


def from_distributions(
    name: str, kind: SourceKind, dists: Mapping[str, Mapping[str, float]], *, source: str = ""
) -> Decisions:
    """Decisions from exact per-task distributions (e.g. the random router's expectation)."""
    choices: dict[str, dict[str, float]] = {}
    for instance_id, dist in dists.items():
        total = sum(dist.values())
        if total <= 0:
            raise EvaluateError(f"{name}: task {instance_id} has an empty choice distribution")
        choices[instance_id] = {k: dist[k] / total for k in sorted(dist) if dist[k] > 0}
    return Decisions(name=name, kind=kind, source=source, choices=choices, samples=dict.fromkeys(choices, 1))
