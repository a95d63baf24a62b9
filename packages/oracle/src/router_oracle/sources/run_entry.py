"""What a source says about one of its runs, besides the per-task rows: the generic run entry.

Every source that publishes many runs (a leaderboard, the OpenHands Index) yields one `RunEntry` per run,
and candidate models are grouped from these (`router_oracle.leaderboard_models`), whatever the source.
"""

from __future__ import annotations

from dataclasses import dataclass

MINI_SWE_AGENT = "mini-swe-agent"
"""The harness of the swe-bench.com bash-only leaderboard's runs (the project's first source)."""


@dataclass(frozen=True, slots=True)
class RunEntry:
    """One run as its source describes it: model, harness, agent version, price, task coverage."""

    run: str
    """Run id, unique across sources (a leaderboard entry's `folder`; `<harness>-<version>_<dir>` for an
    OpenHands Index run)."""
    name: str
    """Display name as published (e.g. `GPT-5.2 (2025-12-11) (high reasoning)`); the run id when none."""
    tags: tuple[str, ...]
    """`KEY: value` tags (e.g. `Model: gpt-5.2-2025-12-11`, `Org: OpenAI`): `Model:` is the input of the
    base-model rule."""
    harness: str
    """The agent harness that ran the model (`mini-swe-agent`, `openhands`, `claude-code`, ...)."""
    agent_version: str | None
    """The harness version the run used, if given (mini-SWE-agent's version for the leaderboard)."""
    date: str | None
    """The run's date as published, if given."""
    headline_resolved: float | None
    """The published headline resolve rate, percent, if given."""
    resolved_count: int | None
    """How many tasks the per-task flags mark resolved; None without per-task data."""
    task_ids: frozenset[str] | None
    """Tasks the per-task data covers with both a resolved flag and a cost; None without per-task data."""
    input_price: float | None = None
    """USD per million input tokens, if the source states it."""
    output_price: float | None = None
    """USD per million output tokens, if the source states it."""
    cost_measured: bool = True
    """False when the source records no cost for the run (every task's cost 0, e.g. Codex CLI runs)."""

    def tag(self, key: str) -> str | None:
        """The value of the first `KEY: value` tag (e.g. `tag("Model")`), or None."""
        prefix = f"{key}:"
        for t in self.tags:
            if t.startswith(prefix):
                return t[len(prefix) :].strip() or None
        return None
