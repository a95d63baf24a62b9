"""Which leaderboard runs are the same model, and what the model is called: the one grouping rule.

A leaderboard entry names its model twice: a `Model: <tag>` tag (`Model: gpt-5.2-2025-12-11`) and a
display `name` (`GPT-5.2 (2025-12-11) (high reasoning)`). The rule, applied to every entry:

1. **Base model**: the `Model:` tag (without one: the name minus its parentheses), lowercased, blanks as
   dashes; a trailing release date
   dropped (`-20250929`, `-2025-12-11`); a dash between two digits read as a version dot
   (`gpt-5-2` -> `gpt-5.2`, `claude-opus-4-6` -> `claude-opus-4.6`); Anthropic's older word order moved to
   the current one (`claude-4-5-opus` -> `claude-opus-4.5`); any other character outside `[a-z0-9._-]`
   becomes `-`.
2. **Reasoning effort**: the effort word (`minimal`, `low`, `medium`, `high`, `xhigh`) the entry's name
   states as a word (`(high reasoning)`, `Claude 4.5 Opus medium`). None stated: the provider's default,
   which is kept apart from every stated effort (we cannot tell which one it is).
3. Runs with the same base model and effort under the same harness are rollouts of ONE candidate model,
   whatever the harness release (as the bundled `multi_run` pool treats its runs). Its id is the base
   model plus `-<effort>` when one is stated (`gpt-5.2-high`, `claude-opus-4.6`), plus `-<harness>` for
   a harness other than mini-SWE-agent (the leaderboard's runs keep the ids every earlier table and
   checkpoint names; e.g. `claude-opus-4.7-openhands`, `claude-opus-4.7-claude-code`); its display
   name is the earliest run's name with release-date parentheses removed; its runs are ordered by run
   id (run ids start with a date).
4. A run is **excluded**, and recorded with the reason, when it has no per-task data, when it records no
   cost, when its per-task data misses a task of the task file (an OpenHands `null` is a missing result:
   build such a pool with `router-oracle build --drop-missing`), or, for the leaderboard, when its
   per-task resolved count disagrees with its own
   headline resolve rate by more than `MAX_HEADLINE_GAP` points (broken flags: the bundled board's
   `20250720_mini-v0.0.0-claude-3-7-sonnet-20250219` marks 51 tasks resolved against a headline 52.8%).

Consequence on the bundled board: the 2026-02-17 runs of Claude Opus 4.6 and Kimi K2.5 (high) get the ids
of the `default` pool; GPT-5.2 (high) has two runs (v1.17.2 and v2.0.0) under `gpt-5.2-high`, where the
`default` pool uses only the v2.0.0 one; `multi_run` pairs runs whose stated efforts differ (Sonnet 4.5
default + high, GPT-5 mini medium + default), which rule 2 keeps apart.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from router_oracle.infra.errors import OracleInputError
from router_oracle.sources.run_entry import MINI_SWE_AGENT, RunEntry

EFFORTS = ("minimal", "low", "medium", "high", "xhigh")
"""Reasoning-effort words rule 2 recognises in an entry's name."""

MAX_HEADLINE_GAP = 1.0
"""Rule 4: per-task resolved share and headline resolve rate may differ by at most this many points
(rounding on the leaderboard gives gaps of about 0.1)."""

_DATE_SUFFIX = re.compile(r"-(\d{8}|\d{4}-\d{2}-\d{2})$")
_DIGIT_DASH_DIGIT = re.compile(r"(?<=\d)-(?=\d)")
_OLD_CLAUDE = re.compile(r"^claude-(\d+(?:\.\d+)*)-(opus|sonnet|haiku)(.*)$")
_NOT_ID = re.compile(r"[^a-z0-9._-]+")
_DASHES = re.compile(r"-{2,}")
_PARENS = re.compile(r"\([^)]*\)")
_EFFORT_WORD = re.compile(r"\b(" + "|".join(EFFORTS) + r")\b", re.IGNORECASE)
_DATE_PAREN = re.compile(r"\s*\((\d{8}|\d{4}-\d{2}-\d{2})\)")


@dataclass(frozen=True, slots=True)
class ModelGroup:
    """One candidate model: the runs rule 3 groups, and its names."""

    id: str
    """Model id (rule 3), what a router writes in `<route>…</route>`."""
    name: str
    """Display name (rule 3)."""
    base_model: str
    """Base model (rule 1), shared by the model's efforts: e.g. `gpt-5.2`."""
    effort: str | None
    """Stated reasoning effort (rule 2), None for the provider's default."""
    provider: str | None
    """The earliest run's `Org:` tag, lowercased, letters and digits only (`Z-AI`, `Z.ai` -> `zai`)."""
    entries: tuple[RunEntry, ...]
    """The runs' leaderboard entries, ordered by run id."""


@dataclass(frozen=True, slots=True)
class Exclusion:
    """A run rule 4 leaves out, and why."""

    entry: RunEntry
    """The run's leaderboard entry."""
    reason: str
    """Why it is left out, one sentence."""


def base_model(entry: RunEntry) -> str:
    """Rule 1: the entry's base model name."""
    tag = entry.tag("Model")
    # Without a tag, the name minus its parentheses (dates, efforts: rules 2 and 3 read those).
    raw = tag if tag is not None else _PARENS.sub(" ", entry.name)
    name = _DATE_SUFFIX.sub("", "-".join(raw.lower().split()))
    name = _DIGIT_DASH_DIGIT.sub(".", name)
    if m := _OLD_CLAUDE.match(name):
        name = f"claude-{m.group(2)}-{m.group(1)}{m.group(3)}"
    name = _DASHES.sub("-", _NOT_ID.sub("-", name)).strip("-._")
    if not name:
        raise OracleInputError(f"leaderboard run {entry.run!r}: no model name in its tags or name")
    return name


def reasoning_effort(entry: RunEntry) -> str | None:
    """Rule 2: the effort the entry's name states, or None."""
    found = {m.lower() for m in _EFFORT_WORD.findall(entry.name)}
    if len(found) > 1:
        raise OracleInputError(f"leaderboard run {entry.run!r}: name {entry.name!r} states several efforts")
    return found.pop() if found else None


def provider(entry: RunEntry) -> str | None:
    """The entry's `Org:` tag, lowercased, letters and digits only; None without one."""
    org = entry.tag("Org")
    return re.sub(r"[^a-z0-9]", "", org.lower()) or None if org else None


def display_name(entry: RunEntry) -> str:
    """Rule 3: the entry's name without release-date parentheses."""
    return _DATE_PAREN.sub("", entry.name).strip() or entry.run


def exclusion_reason(entry: RunEntry, task_ids: Sequence[str]) -> str | None:
    """Rule 4: why the run cannot be a candidate, or None when it can."""
    if entry.task_ids is None or entry.resolved_count is None:
        return "no per-task data (per_instance_details is null)"
    if not entry.cost_measured:
        return "no cost recorded (every task's cost is 0)"
    missing = [t for t in task_ids if t not in entry.task_ids]
    if missing:
        return f"per-task data misses {len(missing)} of {len(task_ids)} tasks (e.g. {missing[0]})"
    if entry.headline_resolved is not None and entry.harness == MINI_SWE_AGENT:
        # The leaderboard's headline is over its per-task flags; other sources score differently (the
        # OpenHands Index's headline is over a later re-run's archive).
        share = 100.0 * entry.resolved_count / len(entry.task_ids)
        if abs(share - entry.headline_resolved) > MAX_HEADLINE_GAP:
            return (
                f"broken per-task resolved flags: {entry.resolved_count} of {len(entry.task_ids)} tasks "
                f"({share:.1f}%) against a headline {entry.headline_resolved:g}%"
            )
    return None


def group_runs(
    entries: Sequence[RunEntry], task_ids: Sequence[str]
) -> tuple[list[ModelGroup], list[Exclusion]]:
    """Rules 1-4 over a leaderboard's entries: the candidate models (sorted by id) and the exclusions
    (in entry order)."""
    groups: dict[tuple[str, str | None, str], list[RunEntry]] = {}
    excluded: list[Exclusion] = []
    for e in entries:
        reason = exclusion_reason(e, task_ids)
        if reason is not None:
            excluded.append(Exclusion(e, reason))
            continue
        groups.setdefault((base_model(e), reasoning_effort(e), e.harness), []).append(e)
    models = []
    for (base, effort, harness), members in groups.items():
        ordered = tuple(sorted(members, key=lambda e: e.run))
        model = f"{base}-{effort}" if effort else base
        models.append(
            ModelGroup(
                id=model if harness == MINI_SWE_AGENT else f"{model}-{harness}",
                name=display_name(ordered[0]),
                base_model=base,
                effort=effort,
                provider=provider(ordered[0]),
                entries=ordered,
            )
        )
    ids = [m.id for m in models]
    clashes = sorted({i for i in ids if ids.count(i) > 1})
    if clashes:
        # e.g. a base model `x-high` at the default effort next to `x` at high effort.
        raise OracleInputError(f"leaderboard: different models would share the id(s) {clashes}")
    return sorted(models, key=lambda m: m.id), excluded
