"""This project's own rubric for the 15 issue-only task features (`task_features.ISSUE_COLUMNS`), the
prompt that asks for them, and the strict parser of the answer.

Written from the column names and scales of the bundled judged features (`router_train/data/README.md`),
not the source's prompt: the scales match the bundled values' ranges (0-3 for `solution_hint`, 0 or 1
for the two yes/no columns, 1-5 for the rest), so a router fitted on the bundled file reads this pass's
answers on the same scales. The judge sees the repository's name and the issue text only.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from router_oracle.tasks_file import TaskRow
from router_train.task_features import ISSUE_COLUMNS


@dataclass(frozen=True)
class Feature:
    """One rubric item: its column, its integer scale and what the ends of the scale mean."""

    name: str
    low: int
    high: int
    question: str


RUBRIC: tuple[Feature, ...] = (
    Feature(
        "solution_hint",
        0,
        3,
        "How much the issue itself says about the fix: 0 nothing; 1 a vague "
        "direction; 2 names the place or the approach of the fix; 3 gives the code change itself.",
    ),
    Feature(
        "problem_clarity",
        1,
        5,
        "How clearly the problem is stated: 1 confused or ambiguous; 5 precise, one reading only.",
    ),
    Feature(
        "domain_knowledge_required",
        1,
        5,
        "Specialised knowledge needed beyond general programming "
        "(a science, a file format, a protocol, the library's internals): 1 none; 5 expert.",
    ),
    Feature(
        "logical_reasoning_required",
        1,
        5,
        "Depth of reasoning a correct fix needs: 1 mechanical; 5 subtle, many interacting cases.",
    ),
    Feature(
        "atypicality",
        1,
        5,
        "How unusual the issue is among bug reports and feature requests: 1 an everyday kind; 5 rare.",
    ),
    Feature(
        "verification_difficulty",
        1,
        5,
        "How hard it is to confirm a fix is right: 1 an obvious check; 5 hard to test, many edge cases.",
    ),
    Feature(
        "standard_pattern_available",
        0,
        1,
        "1 if a well-known standard fix pattern applies "
        "(e.g. add a missing check, handle a None, pass an argument through); else 0.",
    ),
    Feature(
        "error_specificity",
        1,
        5,
        "How specific the reported failure is: 1 a vague symptom; 5 an exact "
        "error message or traceback pointing at the failing code.",
    ),
    Feature(
        "reproduction_clarity",
        1,
        5,
        "How easily the problem can be reproduced from the issue: 1 no "
        "way given; 5 a minimal runnable example.",
    ),
    Feature(
        "expected_behavior_clarity",
        1,
        5,
        "How clearly the desired behaviour is stated: 1 left to guess; 5 exact expected output.",
    ),
    Feature(
        "debugging_complexity",
        1,
        5,
        "How much investigation finding the cause takes: 1 the cause is "
        "evident; 5 deep debugging across components.",
    ),
    Feature(
        "codebase_scope",
        1,
        5,
        "How much code the fix likely touches: 1 a line or one function; 5 many modules.",
    ),
    Feature(
        "information_completeness",
        1,
        5,
        "Whether the issue holds everything needed to fix it: 1 key facts missing; 5 complete.",
    ),
    Feature(
        "similar_issue_likelihood",
        0,
        1,
        "1 if issues like this one are common (a developer has likely fixed one like it before); else 0.",
    ),
    Feature(
        "side_effect_risk",
        1,
        5,
        "Risk that a fix breaks other behaviour: 1 isolated; 5 touches widely used behaviour.",
    ),
)
"""The 15 issue-only columns, in `task_features.ISSUE_COLUMNS` order."""

assert tuple(f.name for f in RUBRIC) == ISSUE_COLUMNS

SYSTEM = (
    "You rate software issues before anyone attempts them. You see only the repository's name and the "
    "issue text: no code, no tests, no patch. Rate every item of the rubric on its integer scale. Answer "
    "with one JSON object and nothing else: each item's name as a key, an integer on its scale as the "
    "value."
)


def user_prompt(task: TaskRow) -> str:
    """The user turn for `task`: the rubric, then the repository and the issue."""
    items = "\n".join(f"- {f.name} (integer {f.low}-{f.high}): {f.question}" for f in RUBRIC)
    keys = ", ".join(f'"{f.name}": <int>' for f in RUBRIC)
    return (
        f"Rubric:\n{items}\n\nRepository: {task.repo}\n\nIssue:\n{task.problem_statement}\n\n"
        f"Answer with exactly this JSON object, filled in: {{{keys}}}"
    )


def messages(task: TaskRow) -> list[dict[str, str]]:
    """The chat messages sent for `task`."""
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user_prompt(task)}]


_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


def parse_answer(reply: str) -> tuple[list[int | None], bool]:
    """The 15 values of a reply (None: missing), and whether the reply was one JSON object at all.

    Strict: the reply is one JSON object (a ```json fence around it is allowed); a key that is absent,
    a value that is not a JSON integer (a string, a float, a boolean) or is outside its scale is a
    missing feature, never a guess."""
    text = reply.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1)
    try:
        obj = json.loads(text)
    except json.JSONDecodeError:
        return [None] * len(RUBRIC), False
    if not isinstance(obj, dict):
        return [None] * len(RUBRIC), False
    values: list[int | None] = []
    for f in RUBRIC:
        v = obj.get(f.name)
        ok = isinstance(v, int) and not isinstance(v, bool) and f.low <= v <= f.high
        values.append(v if ok else None)  # type: ignore[arg-type]
    return values, True
