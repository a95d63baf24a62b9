"""What a router may read about one task: its id, repository, issue text and difficulty, nothing else.

`table.TaskRecord` extends it with the measured outcomes and the oracle pick; featurisers, policies and
routers are typed against `TaskInput`, so none of them can read an outcome, and a new issue to route is
a `TaskInput` with no fake oracle row behind it.
"""

from __future__ import annotations

from pydantic import Field

from router_oracle.infra.frozen_model import FrozenModel


class TaskInput(FrozenModel):
    """One task as a router sees it (a SWE-bench task, or a new issue)."""

    instance_id: str = Field(min_length=1)
    """The task's id: SWE-bench `instance_id` (e.g. `astropy__astropy-12907`), or one derived from a
    new issue."""
    repo: str = ""
    """GitHub `owner/name` of the task's repository; empty when unknown (routers read it: give it)."""
    difficulty: str | None = None
    """SWE-bench Verified human difficulty annotation (e.g. `15 min - 1 hour`), if known (read only by
    local checkpoints trained with the difficulty feature)."""
    problem_statement: str
    """The issue text, verbatim. Never the gold patch."""
