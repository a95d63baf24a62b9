"""Any-pool mode: pools drawn per task from a candidates table, held-out models only in eval pools."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

import pytest
from env_tables import candidates_for, labelled_table
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from router_frontier_rl import RouterConfig, RouterTaskset, format_route
from router_frontier_rl.any_pool import AnyPoolSpec, any_pool_episodes
from router_frontier_rl.capabilities import summarize
from router_frontier_rl.offline import score_reply
from router_frontier_rl.pool_draw import draw_pool
from router_frontier_rl.prompt import system_prompt, user_prompt
from router_frontier_rl.rewards import score_completion
from router_frontier_rl.split import split_ids
from router_oracle.candidates import write_candidates
from router_oracle.derive import CandidateIndex, derive_table
from router_oracle.table import OracleTable

MODELS = [f"m{k}" for k in range(7)]
HELD = ["m2", "m5"]


@pytest.fixture(scope="module")
def base() -> OracleTable:
    return labelled_table({"kimi-k2.5-high": 30, "gpt-5.2-high": 12, "claude-opus-4.6": 8}, repos=2)


@pytest.fixture(scope="module")
def files(base: OracleTable, tmp_path_factory) -> tuple[Path, Path]:
    rng = random.Random(7)
    outcomes = {
        m: [(rng.random() < 0.3 + 0.1 * k, round(0.05 + 0.1 * k + rng.random() / 10, 3)) for _ in base.tasks]
        for k, m in enumerate(MODELS)
    }
    tmp = tmp_path_factory.mktemp("anypool")
    table_path, cand_path = tmp / "table.json", tmp / "candidates.json"
    table_path.write_text(base.model_dump_json())
    write_candidates(candidates_for(base, outcomes), cand_path)
    return table_path, cand_path


def load(files: tuple[Path, Path], **kwargs) -> list:
    table_path, cand_path = files
    return list(RouterTaskset(RouterConfig(table_path=table_path, candidates_path=cand_path, **kwargs)))


# --- the draw ----------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.text("abcdefgh", min_size=1, max_size=4), min_size=2, max_size=12, unique=True),
    st.data(),
    st.integers(0, 5),
    st.text(max_size=8),
)
def test_draw_pool_properties(cands: list[str], data, seed: int, key: str) -> None:
    size = data.draw(st.integers(1, len(cands)))
    pool = draw_pool(cands, size, seed=seed, key=key)
    assert len(pool) == size == len(set(pool)) and set(pool) <= set(cands)
    assert draw_pool(list(reversed(cands)), size, seed=seed, key=key) == pool  # candidate order is irrelevant
    required = data.draw(st.lists(st.sampled_from(cands), min_size=1, unique=True))
    forced = draw_pool(cands, size, seed=seed, key=key, required_from=required)
    assert len(forced) == size == len(set(forced)) and set(forced) & set(required)
    # a new candidate never reorders the others: the pool drawn without it is a subsequence
    bigger = draw_pool([*cands, "zzzzz"], size + 1, seed=seed, key=key)
    assert [m for m in bigger if m != "zzzzz"][:size] == pool


def test_draws_vary_with_key_and_seed() -> None:
    pools = {tuple(draw_pool(MODELS, 3, seed=s, key=k)) for s in range(3) for k in ("a", "b", "c", "d")}
    assert len(pools) > 6
    with pytest.raises(ValueError, match="cannot draw 8 models from 7"):
        draw_pool(MODELS, 8, seed=0, key="a")
    with pytest.raises(ValueError, match="none of the required models"):
        draw_pool(MODELS, 2, seed=0, key="a", required_from={"x"})


# --- episodes ----------------------------------------------------------------------------------


def test_train_pools_never_show_a_held_out_model(files, base) -> None:
    tasks = load(files, pool_size=3, held_out_models=HELD, pool_seed=4)
    train = split_ids(base).train
    assert [t.data.record.instance_id for t in tasks] == train  # the fixed-pool env's train tasks, in order
    index = CandidateIndex.load(str(files[1]))
    pools = set()
    for task in tasks:
        ids = task.data.valid_ids
        assert len(ids) == 3 and not set(ids) & set(HELD)
        pools.add(tuple(ids))
        # the row and the oracle are those of a table derived for this pool
        derived = derive_table(index.candidates, ids)
        assert task.data.record == derived.task(task.data.record.instance_id)
        # the summary describes this pool on the train split only
        summary = summarize([derived.task(i) for i in train], derived.pool)
        assert task.data.system_prompt == system_prompt(summary)
        assert task.data.prompt == user_prompt(task.data.record)
    assert len(pools) > 10


def test_eval_pools_hold_a_held_out_model_and_score(files, base) -> None:
    tasks = load(files, pool_size=4, held_out_models=HELD, split="eval")
    assert [t.data.record.instance_id for t in tasks] == split_ids(base).eval
    seen = set()
    for task in tasks:
        assert set(task.data.valid_ids) & set(HELD)
        seen |= set(task.data.valid_ids) & set(HELD)
        record = task.data.record
        for reply in (
            format_route(record.oracle),
            format_route(task.data.valid_ids[-1]),
            "<route>m9</route>",
        ):
            trace = asyncio.run(score_reply(task, reply))
            want = score_completion(record, reply, task.data.valid_ids)
            assert trace.rewards["routed_reward"].score == want.routed_reward
        assert asyncio.run(score_reply(task, format_route(record.oracle))).reward == 1.0
    assert seen == set(HELD)


def test_all_split_and_no_held_out_models(files, base) -> None:
    tasks = load(files, pool_size=2, split="all", held_out_models=HELD)
    held_out_tasks = set(split_ids(base).eval)
    for task in tasks:
        shown = set(task.data.valid_ids) & set(HELD)
        assert bool(shown) == (task.data.record.instance_id in held_out_tasks)
    free = load(files, pool_size=7, split="eval")
    assert all(sorted(t.data.valid_ids) == MODELS for t in free)


def test_few_shot_examples_are_train_tasks_answered_for_the_pool(files, base) -> None:
    train = set(split_ids(base).train)
    for task in load(files, pool_size=3, few_shot=2, split="eval", max_tasks=4, held_out_models=HELD):
        prompt = task.data.prompt
        assert isinstance(prompt, list) and len(prompt) == 5
        answers = [m.content for m in prompt[1:-1:2]]
        assert all(a in {format_route(m) for m in task.data.valid_ids} for a in answers)
        shots = [str(m.content) for m in prompt[:-1:2]]
        assert all(any(f"Issue text of {i}." in s for i in train) for s in shots)


def test_any_pool_is_deterministic(files) -> None:
    first = [t.data.model_dump_json() for t in load(files, pool_size=3, held_out_models=HELD, max_tasks=8)]
    assert first == [
        t.data.model_dump_json() for t in load(files, pool_size=3, held_out_models=HELD, max_tasks=8)
    ]
    other = [
        t.data.model_dump_json()
        for t in load(files, pool_size=3, held_out_models=HELD, max_tasks=8, pool_seed=1)
    ]
    assert other != first


def test_bundled_candidates_serve_the_bundled_tasks() -> None:
    held = ["minimax-m2.5-high", "gemini-3-flash-preview-high"]
    tasks = list(RouterTaskset(RouterConfig(pool_size=3, split="eval", max_tasks=5, held_out_models=held)))
    assert len(tasks) == 5
    for task in tasks:
        assert set(task.data.valid_ids) & set(held)
        assert "Measured on 400 SWE-bench Verified tasks" in (task.data.system_prompt or "")
    episodes = list(
        any_pool_episodes(
            CandidateIndex.load(), tasks_table(), AnyPoolSpec(3, 0, tuple(held)), "eval", max_tasks=5
        )
    )
    assert [e.record for e in episodes] == [t.data.record for t in tasks]
    assert all(e.held_out for e in episodes)


def tasks_table() -> OracleTable:
    from router_frontier_rl.bundled import bundled_table_path
    from router_oracle.table_check import load_table

    return load_table(bundled_table_path())


# --- bad arguments -----------------------------------------------------------------------------


def test_config_errors() -> None:
    with pytest.raises(ValidationError, match="only apply with pool_size"):
        RouterConfig(held_out_models=["o3"])
    with pytest.raises(ValidationError, match="only apply with pool_size"):
        RouterConfig(candidates_path=Path("c.json"))
    with pytest.raises(ValidationError, match="upsample does not apply with pool_size"):
        RouterConfig(pool_size=3, upsample=True)
    with pytest.raises(ValidationError):
        RouterConfig(pool_size=1)
    defaults = RouterConfig()
    assert (defaults.pool_size, defaults.candidates_path, defaults.pool_seed, defaults.held_out_models) == (
        None,
        None,
        0,
        [],
    )


def test_bad_any_pool_arguments_name_the_file(files, tmp_path) -> None:
    with pytest.raises(
        ValueError, match=r"candidates\.json: held_out_models \['nope'\] are not candidate models"
    ):
        load(files, pool_size=3, held_out_models=["nope"])
    with pytest.raises(ValueError, match=r"pool_size 6 needs 1 to 5 models outside held_out_models"):
        load(files, pool_size=6, held_out_models=HELD)
    junk = tmp_path / "junk.json"
    junk.write_text("{}")
    with pytest.raises(ValueError, match=r"junk\.json: not a valid candidates table"):
        list(RouterTaskset(RouterConfig(table_path=files[0], candidates_path=junk, pool_size=2)))
    # a reference table with tasks the candidates table lacks
    with pytest.raises(ValueError, match=r"candidates\.json: the candidates table lacks 500 tasks"):
        list(RouterTaskset(RouterConfig(candidates_path=files[1], pool_size=2)))
