"""Rewards are read from the table row and nothing else."""

from __future__ import annotations

import pytest
from env_tables import IDS, record

from router_frontier_rl import bundled_table_path, format_route, score_completion, score_route
from router_frontier_rl.rewards import DEFAULT_WEIGHTS, NO_ROUTE, REWARD_NAMES, RouteScores
from router_oracle.table_check import load_table


def test_scores_follow_the_row() -> None:
    task = record("o__r-1", {IDS[0]: (1.0, 2.0), IDS[1]: (1.0, 0.5), IDS[2]: (0.0, 0.1)})
    assert task.oracle == IDS[1]
    assert score_route(task, IDS[1]) == RouteScores(
        routed_reward=1.0,
        chose_oracle=1.0,
        parsed_valid_route=1.0,
        resolved_if_chosen=1.0,
        cost_if_chosen=0.5,
    )
    assert score_route(task, IDS[0]) == RouteScores(
        routed_reward=0.0,
        chose_oracle=0.0,
        parsed_valid_route=1.0,
        resolved_if_chosen=1.0,
        cost_if_chosen=2.0,
    )
    assert score_route(task, IDS[2]).resolved_if_chosen == 0.0
    assert score_route(task, None) == NO_ROUTE
    assert NO_ROUTE.routed_reward == -1.0 and NO_ROUTE.cost_if_chosen == 0.0
    assert score_completion(task, "<route>nope</route>", IDS) == NO_ROUTE


def test_unknown_route_is_a_programming_error() -> None:
    task = record("o__r-1", {IDS[0]: (1.0, 2.0)})
    with pytest.raises(ValueError, match="not a pool model"):
        score_route(task, IDS[1])


def test_weighted_sum() -> None:
    s = RouteScores(
        routed_reward=1.0,
        chose_oracle=1.0,
        parsed_valid_route=1.0,
        resolved_if_chosen=0.5,
        cost_if_chosen=2.0,
    )
    assert s.weighted() == 1.0
    assert s.weighted([1, 2, 3, 4, -0.5]) == 1 + 2 + 3 + 2 - 1
    assert len(DEFAULT_WEIGHTS) == len(REWARD_NAMES) == len(RouteScores.model_fields)
    assert list(RouteScores.model_fields) == list(REWARD_NAMES)


def test_bundled_table_every_task_and_model() -> None:
    table = load_table(bundled_table_path())
    ids = table.pool.ids
    for task in table.tasks:
        for model in ids:
            s = score_completion(task, f"Reasoning.\n{format_route(model)}", ids)
            outcome = task.per_model[model]
            assert s.routed_reward == (1.0 if model == task.oracle else 0.0)
            assert (s.resolved_if_chosen, s.cost_if_chosen) == (outcome.resolve_rate, outcome.cost)
        assert score_completion(task, format_route(task.oracle) * 2, ids) == NO_ROUTE
