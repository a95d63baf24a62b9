"""Prompts carry the task's repo and issue text, never its outcomes."""

from __future__ import annotations

import verifiers.v1 as vf
from env_tables import IDS, record, table

from router_frontier_rl.capabilities import summarize
from router_frontier_rl.prompt import MAX_EXAMPLE_CHARS, messages, system_prompt, user_prompt
from router_frontier_rl.route_parser import format_route, parse_route

OUTCOMES = [
    {IDS[0]: (1.0, 1.0), IDS[1]: (0.0, 0.5), IDS[2]: (0.0, 0.25)},
    {IDS[0]: (0.0, 1.5), IDS[1]: (1.0, 0.75), IDS[2]: (1.0, 0.125)},
    {IDS[0]: (0.0, 0.0), IDS[1]: (0.5, 0.0), IDS[2]: (0.0, 0.0)},
]


def test_task_prompt_does_not_depend_on_outcomes() -> None:
    variants = [
        record("django__django-1", o, repo="django/django", statement="Fix the ORM.") for o in OUTCOMES
    ]
    assert len({t.oracle for t in variants}) == 3
    prompts = {user_prompt(t) for t in variants}
    assert prompts == {"Repository: django/django\n\nIssue:\nFix the ORM."}
    text = prompts.pop()
    for t in variants:
        assert t.oracle not in text and "resolve" not in text and "0.75" not in text


def test_system_prompt_lists_ids_and_format() -> None:
    tasks = [record(f"a__a-{i}", o) for i, o in enumerate(OUTCOMES)]
    prompt = system_prompt(summarize(tasks, table(tasks).pool))
    assert "<route>MODEL_ID</route>" in prompt
    for i in IDS:
        assert i in prompt
    assert parse_route(prompt, IDS) is None  # the format line itself routes nowhere


def test_few_shot_messages() -> None:
    examples = [record("e__e-1", OUTCOMES[1], statement="x" * (MAX_EXAMPLE_CHARS + 100))]
    task = record("t__t-1", OUTCOMES[0])
    msgs = messages(task, examples)
    assert isinstance(msgs, list) and len(msgs) == 3
    assert isinstance(msgs[1], vf.AssistantMessage) and msgs[1].content == format_route(examples[0].oracle)
    assert len(msgs[0].content) < MAX_EXAMPLE_CHARS + 100
    assert msgs[2].content == user_prompt(task)
    assert messages(task) == user_prompt(task)
