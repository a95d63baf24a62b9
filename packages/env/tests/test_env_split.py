"""The held-out split: deterministic, stratified, leak-free; upsampling and max_tasks."""

from __future__ import annotations

from collections import Counter

import pytest
from env_tables import labelled_table, table

from router_frontier_rl.split import select_tasks, split_ids


def test_split_is_a_stratified_partition(small_table) -> None:
    s = split_ids(small_table, 0.2, 0)
    ids = [t.instance_id for t in small_table.tasks]
    assert sorted(s.train + s.eval) == sorted(ids)
    assert not set(s.train) & set(s.eval)
    label = {t.instance_id: t.oracle for t in small_table.tasks}
    held = Counter(label[i] for i in s.eval)
    assert held == {"kimi-k2.5-high": 4, "gpt-5.2-high": 2, "claude-opus-4.6": 1}


def test_rare_labels_land_in_both_splits() -> None:
    t = labelled_table({"kimi-k2.5-high": 50, "gpt-5.2-high": 2, "claude-opus-4.6": 1})
    for seed in range(5):
        s = split_ids(t, 0.05, seed)
        label = {r.instance_id: r.oracle for r in t.tasks}
        assert {label[i] for i in s.eval} == {"kimi-k2.5-high", "gpt-5.2-high"}
        assert {label[i] for i in s.train} == {"kimi-k2.5-high", "gpt-5.2-high", "claude-opus-4.6"}


def test_split_is_deterministic_and_order_free(small_table) -> None:
    reversed_table = table(list(reversed(small_table.tasks)))
    assert split_ids(small_table, 0.3, 7) == split_ids(reversed_table, 0.3, 7)
    assert split_ids(small_table, 0.3, 7) != split_ids(small_table, 0.3, 8)


def test_bad_fraction() -> None:
    with pytest.raises(ValueError, match="eval_fraction"):
        split_ids(labelled_table({"kimi-k2.5-high": 3}), 1.0)


def test_select_tasks(small_table) -> None:
    s = split_ids(small_table)
    assert [t.instance_id for t in select_tasks(small_table, "train")] == s.train
    assert [t.instance_id for t in select_tasks(small_table, "eval")] == s.eval
    assert len(select_tasks(small_table, "all")) == 30
    assert [t.instance_id for t in select_tasks(small_table, "train", max_tasks=5)] == s.train[:5]
    with pytest.raises(ValueError, match="train split only"):
        select_tasks(small_table, "eval", upsample=True)


def test_upsample_balances_labels_with_train_tasks_only(small_table) -> None:
    s = split_ids(small_table)
    tasks = select_tasks(small_table, "train", upsample=True)
    counts = Counter(t.oracle for t in tasks)
    assert set(counts.values()) == {max(counts.values())} and len(counts) == 3
    assert {t.instance_id for t in tasks} == set(s.train)
    assert tasks == select_tasks(small_table, "train", upsample=True)
    per_task = Counter(t.instance_id for t in tasks)
    assert max(per_task.values()) - min(per_task.values()) <= max(counts.values())
