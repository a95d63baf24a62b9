"""The capability summary is computed from train-split tasks only."""

from __future__ import annotations

import pytest
from env_tables import IDS, labelled_table, record, table

from router_frontier_rl.capabilities import summarize
from router_frontier_rl.split import split_ids
from router_frontier_rl.taskset import RouterConfig, RouterTaskset


def test_numbers() -> None:
    tasks = [
        record("a__a-1", {IDS[0]: (1.0, 1.0), IDS[1]: (0.0, 0.5), IDS[2]: (0.0, 0.25)}),
        record("a__a-2", {IDS[0]: (1.0, 3.0), IDS[1]: (1.0, 0.5), IDS[2]: (0.0, 0.25)}),
    ]
    s = summarize(tasks, table(tasks).pool)
    m = {c.id: c for c in s.models}
    assert m[IDS[0]].resolve_rate == 1.0 and m[IDS[0]].mean_cost == 2.0 and m[IDS[0]].relative_cost == 8.0
    assert m[IDS[1]].oracle_share == 0.5 and m[IDS[0]].oracle_share == 0.5
    assert m[IDS[0]].sole_solver == 0.5 and m[IDS[1]].sole_solver == 0.0
    assert s.by_repo == []  # fewer than MIN_GROUP_TASKS per repo
    with pytest.raises(ValueError):
        summarize([], table(tasks).pool)


def _flip_outcomes(t):
    flipped = {m: (1.0 - o.resolve_rate, o.cost * 10) for m, o in t.per_model.items()}
    return record(t.instance_id, flipped, repo=t.repo, statement=t.problem_statement)


def _halve_oracle(t):
    outcomes = {m: (o.resolve_rate / 2 if m == t.oracle else 0.0, o.cost * 7) for m, o in t.per_model.items()}
    changed = record(t.instance_id, outcomes, repo=t.repo, statement=t.problem_statement)
    assert changed.oracle == t.oracle
    return changed


def _system_prompts(tbl, tmp_path, name) -> set[str]:
    path = tmp_path / name
    path.write_text(tbl.model_dump_json())
    return {t.data.system_prompt for t in RouterTaskset(RouterConfig(table_path=path, split="all"))}


def test_eval_outcomes_do_not_change_the_summary(tmp_path) -> None:
    base = labelled_table({"kimi-k2.5-high": 40, "gpt-5.2-high": 12, "claude-opus-4.6": 8}, repos=2)
    held = set(split_ids(base).eval)
    # The split is stratified by oracle label, so held-out labels stay; rates and costs change.
    changed = table([_halve_oracle(t) if t.instance_id in held else t for t in base.tasks])
    assert split_ids(changed) == split_ids(base)
    assert _system_prompts(base, tmp_path, "a.json") == _system_prompts(changed, tmp_path, "b.json")
    train_changed = table([_flip_outcomes(t) if t.instance_id not in held else t for t in base.tasks])
    assert _system_prompts(train_changed, tmp_path, "c.json") != _system_prompts(base, tmp_path, "a.json")
