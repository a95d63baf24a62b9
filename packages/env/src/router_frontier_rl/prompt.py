"""The router's prompts. A task contributes its repo and problem statement only: never its outcomes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from router_frontier_rl.capabilities import CapabilitySummary
from router_frontier_rl.route_parser import format_route
from router_oracle.table import TaskRecord
from router_oracle.task_input import TaskInput

if TYPE_CHECKING:
    import verifiers.v1 as vf

MAX_EXAMPLE_CHARS = 2_000
"""Few-shot problem statements are cut to this length: they show the format, not the task."""


def system_prompt(summary: CapabilitySummary) -> str:
    """The pool's capability summary, the valid ids and the one accepted answer format."""
    ids = ", ".join(m.id for m in summary.models)
    return (
        "You route software-engineering tasks to AI coding agents. Each task is a GitHub issue that an "
        "agent must fix in its repository. Pick the one model from the pool that is most likely to "
        "resolve the task; when several are equally likely, pick the cheapest.\n\n"
        f"{summary.render()}\n\n"
        f"Valid model ids: {ids}\n\n"
        f"Answer with `{format_route('MODEL_ID')}`, where MODEL_ID is one valid id written exactly as "
        "above. Write the route tag once in your whole reply, reasoning included: a reply with two route "
        "tags, or anything but one valid id inside the tag, routes nowhere."
    )


def agentic_system_prompt(summary: CapabilitySummary, turn_budget: int) -> str:
    """`system_prompt` plus what the agent may do with the task's repository (the `repo_access` mode)."""
    return (
        f"{system_prompt(summary)}\n\n"
        "Before you answer you may read the task's repository, checked out in your working directory at "
        "the commit the issue was filed against: how much code the issue touches, how many modules it "
        "spans, what its tests look like. Use the bash tool for read-only commands only (ls, find, grep, "
        "cat, head, sed -n, wc, git log, git show, git grep). Do not modify the repository or anything "
        "else: no edits, no new files, no installs, no builds, no commits or checkouts, no network. Keep "
        "each command's output short (pipe it through head).\n\n"
        f"You have at most {turn_budget} turns, your answer included; reply without a tool call to "
        "answer. Your final reply must contain the route tag: running out of turns without it routes "
        "nowhere."
    )


def user_prompt(task: TaskInput, max_chars: int | None = None) -> str:
    """The task as the router sees it: repository and issue text."""
    statement = task.problem_statement
    if max_chars is not None and len(statement) > max_chars:
        statement = statement[:max_chars] + "\n[…]"
    return f"Repository: {task.repo}\n\nIssue:\n{statement}"


def messages(task: TaskInput, examples: Sequence[TaskRecord] = ()) -> str | list[vf.Message]:
    """The user turn, preceded by one solved exchange per example (train tasks, answered by their
    oracle) when `examples` is non-empty."""
    if not examples:
        return user_prompt(task)
    # Imported here: verifiers takes ~3 s to import, and `route`/`serve` with a local checkpoint import
    # this module without ever building few-shot messages.
    import verifiers.v1 as vf

    shots: list[vf.Message] = []
    for ex in examples:
        shots += [
            vf.UserMessage(content=user_prompt(ex, MAX_EXAMPLE_CHARS)),
            vf.AssistantMessage(content=format_route(ex.oracle)),
        ]
    return [*shots, vf.UserMessage(content=user_prompt(task))]
