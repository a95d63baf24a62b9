"""The Taskset: resolution by id, every config field, offline scoring through verifiers' Trace."""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest
import verifiers.v1 as vf
from pydantic import ValidationError

from router_frontier_rl import RouteData, RouterConfig, RouterTaskset, RouteTask, format_route
from router_frontier_rl.offline import score_reply
from router_frontier_rl.prompt import user_prompt
from router_frontier_rl.rewards import REWARD_NAMES, score_completion
from router_frontier_rl.split import split_ids


@pytest.fixture
def table_path(small_table, tmp_path):
    path = tmp_path / "table.json"
    path.write_text(small_table.model_dump_json())
    return path


def scored_trace(task: RouteTask, reply: str) -> vf.Trace:
    return asyncio.run(score_reply(task, reply))


def test_resolves_by_hub_id() -> None:
    assert vf.taskset_config_type("router-frontier-rl") is RouterConfig
    assert vf.task_type("router-frontier-rl") is RouteTask
    config = RouterConfig(id="router-frontier-rl", max_tasks=2)
    assert isinstance(vf.load_taskset(config), RouterTaskset)
    # With no harness pinned, verifiers uses the package's plain-chat harness, not a bash agent.
    assert vf.default_harness_id("router-frontier-rl") == "router-frontier-rl"


def test_default_loads_the_bundled_table() -> None:
    tasks = list(RouterTaskset(RouterConfig(max_tasks=3)))
    assert len(tasks) == 3 and all(
        t.data.valid_ids == ["claude-opus-4.7", "gpt-5.5", "nemotron-3-super"] for t in tasks
    )


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"split": "eval"},
        {"split": "all", "eval_fraction": 0.5, "split_seed": 3},
        {"upsample": True},
        {"few_shot": 2},
        {"max_tasks": 4},
        {"weights": [0.5, 0.5, 0.1, 1.0, -0.2]},
    ],
)
def test_every_config_loads_and_scores(table_path, small_table, kwargs) -> None:
    config = RouterConfig(table_path=table_path, **kwargs)
    tasks = list(RouterTaskset(config))
    s = split_ids(small_table, config.eval_fraction, config.split_seed)
    expected = {"train": s.train, "eval": s.eval, "all": s.train + s.eval}[config.split]
    assert {t.data.record.instance_id for t in tasks} <= set(expected)
    assert len({t.key for t in tasks}) == len(tasks)
    assert [t.data.idx for t in tasks] == list(range(len(tasks)))
    for task in tasks[:6]:
        for reply in (format_route(task.data.record.oracle), "<route>GPT-5.2 (high)</route>", "no idea"):
            trace = scored_trace(task, reply)
            want = score_completion(task.data.record, reply, task.data.valid_ids)
            assert {n: r.score for n, r in trace.rewards.items() if r} == want.model_dump()
            assert {n: r.weight for n, r in trace.rewards.items() if r} == dict(
                zip(REWARD_NAMES, config.weights, strict=True)
            )
            assert trace.reward == pytest.approx(want.weighted(config.weights))


def test_upsample_and_max_tasks(table_path) -> None:
    tasks = list(RouterTaskset(RouterConfig(table_path=table_path, upsample=True)))
    assert len(set(Counter(t.data.record.oracle for t in tasks).values())) == 1
    assert any(t.data.repeat > 0 for t in tasks)
    assert len(list(RouterTaskset(RouterConfig(table_path=table_path, max_tasks=4)))) == 4


def test_few_shot_uses_train_tasks_only(table_path, small_table) -> None:
    train = set(split_ids(small_table).train)
    for split in ("train", "eval"):
        for task in RouterTaskset(RouterConfig(table_path=table_path, split=split, few_shot=3)):
            prompt = task.data.prompt
            assert isinstance(prompt, list) and len(prompt) == 7
            shots = [m.content for m in prompt[:-1:2]]
            shot_ids = {i for i in train if any(f"Issue text of {i}." in str(c) for c in shots)}
            assert len(shot_ids) == 3 and task.data.record.instance_id not in shot_ids
            assert {m.content for m in prompt[1:-1:2]} == {
                format_route(small_table.task(i).oracle) for i in shot_ids
            }


def test_prompts_carry_no_outcomes(table_path) -> None:
    for task in RouterTaskset(RouterConfig(table_path=table_path, split="all")):
        text = (task.data.system_prompt or "") + task.data.prompt_text
        assert task.data.prompt_text == user_prompt(task.data.record)  # only repo + issue text
        for outcome in task.data.record.per_model.values():
            assert outcome.runs[0].run not in text


def test_wire_round_trip_scores_the_same(table_path) -> None:
    """A server worker rebuilds each task from its wire data and the config's task subtree."""
    config = RouterConfig(table_path=table_path, weights=[1, 0, 0, 1, 0], max_tasks=2)
    task = next(iter(RouterTaskset(config)))
    rebuilt = RouteTask(RouteData.model_validate(task.data.model_dump(mode="json")), config.task)
    reply = format_route("kimi-k2.5-high")
    assert scored_trace(rebuilt, reply).rewards == scored_trace(task, reply).rewards


def test_config_errors() -> None:
    with pytest.raises(ValidationError, match="weights"):
        RouterConfig(weights=[1, 0])
    with pytest.raises(ValidationError, match="train split only"):
        RouterConfig(split="eval", upsample=True)
    with pytest.raises(ValidationError):
        RouterConfig(eval_fraction=0)
    saved = RouterConfig(weights=[2, 0, 0, 0, 0]).model_dump()
    rerun = RouterConfig.model_validate({**saved, "weights": [3, 0, 0, 0, 1]})
    assert rerun.task.rewards["routed_reward"].weight == 3.0
    assert rerun.task.rewards["cost_if_chosen"].weight == 1.0


def test_bad_table_path_names_the_file(tmp_path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    with pytest.raises(ValueError, match=r"bad\.json"):
        list(RouterTaskset(RouterConfig(table_path=bad)))
