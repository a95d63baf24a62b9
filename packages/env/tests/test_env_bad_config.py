"""The env's `RouterConfig` refuses a table or weights every other consumer refuses, with one line."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from env_tables import labelled_table
from pydantic import ValidationError

from router_frontier_rl import RouterConfig, RouterTaskset
from router_frontier_rl.rewards import REWARD_NAMES, check_weights
from router_oracle.infra.validation_message import one_line
from router_oracle.table import dumps_table
from router_oracle.table_check import load_table


def _config_error(**kwargs: object) -> str:
    with pytest.raises(ValidationError) as exc:
        RouterConfig(**kwargs)  # type: ignore[arg-type]
    line = one_line(exc.value)
    assert "\n" not in line and "pydantic.dev" not in line
    return line


def test_a_missing_table_path_is_one_line_naming_the_file(tmp_path: Path) -> None:
    missing = tmp_path / "missing.json"
    assert _config_error(table_path=missing) == (
        f"table_path: {missing}: cannot read oracle table: No such file or directory"
    )


def test_a_table_the_check_refuses_is_refused_by_the_config_with_the_same_line(tmp_path: Path) -> None:
    table = labelled_table({"kimi-k2.5-high": 6, "gpt-5.2-high": 4})
    doc = json.loads(dumps_table(table))
    task = doc["tasks"][0]
    task["oracle"] = next(m for m in task["per_model"] if m != task["oracle"])  # contradicts the tie rule
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError) as direct:
        load_table(path)
    assert _config_error(table_path=path) == f"table_path: {direct.value}"
    # and a valid table still loads
    good = tmp_path / "good.json"
    good.write_text(dumps_table(table))
    assert len(list(RouterTaskset(RouterConfig(table_path=good, split="all")))) == 10


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_weights_are_refused_by_the_one_check(bad: float) -> None:
    weights = [1.0, 0.0, 0.0, 0.0, bad]
    with pytest.raises(ValueError) as direct:
        check_weights(weights)
    assert str(direct.value) == f"weights must be finite numbers: the weight of {REWARD_NAMES[4]} is {bad}"
    assert _config_error(weights=weights) == str(direct.value)
    assert check_weights([1, 0, 0, 0, -0.5]) == (1.0, 0.0, 0.0, 0.0, -0.5)


def test_a_damaged_gzip_tasks_path_is_one_config_error(tmp_path: Path) -> None:
    import gzip

    data = bytearray(gzip.compress(b'{"instance_id": "a__b-1", "repo": "a/b", "base_commit": "0"}\n' * 200))
    for i in range(20, 40):  # damage the deflate stream, not the header
        data[i] ^= 0xFF
    bad = tmp_path / "tasks.jsonl.gz"
    bad.write_bytes(bytes(data))
    line = _config_error(tasks_path=bad)
    assert line.startswith(f"tasks_path: {bad}: cannot read: "), line


@pytest.mark.parametrize("bad", [math.inf, 1e308, 1e7])
def test_exploration_cost_must_be_finite_and_bounded(bad: float) -> None:
    line = _config_error(repo_access=True, exploration_cost=bad)
    assert line.startswith("exploration_cost: Input should be"), line


@pytest.mark.parametrize(
    ("argument", "bad"),
    [("split_seed", -1), ("split_seed", 2**40), ("eval_fraction", math.nan), ("turn_budget", 10**30)],
)
def test_numeric_arguments_are_bounded_by_the_shared_rule(argument: str, bad: float) -> None:
    # The same bounds as the CLIs' flags (router_oracle.infra.numeric_option): seeds 0..2**32-1,
    # counts <= 1e6.
    line = _config_error(**{argument: bad})
    assert line.startswith(f"{argument}: Input should be"), line


@pytest.mark.parametrize("huge", [1e308, -1e308, 1e7])
def test_huge_weights_are_refused_before_they_overflow(huge: float) -> None:
    weights = [huge, huge, 0.0, 0.0, 0.0]
    assert _config_error(weights=weights) == (
        f"weights must be within ±1e+06: the weight of {REWARD_NAMES[0]} is {huge:g}"
    )
    assert check_weights([1e6, -1e6, 0, 0, 0]) == (1e6, -1e6, 0.0, 0.0, 0.0)


def test_any_pool_arguments_no_pool_can_satisfy_are_config_errors(tmp_path: Path) -> None:
    line = _config_error(pool_size=100)
    assert line.startswith("bundled: pool_size 100 needs 1 to "), line
    line = _config_error(pool_size=3, held_out_models=["no-such-model"])
    assert line == "bundled: held_out_models ['no-such-model'] are not candidate models"
    missing = tmp_path / "missing.json"
    line = _config_error(pool_size=3, candidates_path=missing)
    assert line.startswith(f"candidates_path: {missing}: cannot read candidates table"), line
    junk = tmp_path / "junk.json"
    junk.write_text(json.dumps({"tasks": [{"instance_id": f"t{i}"} for i in range(300)]}))
    line = _config_error(pool_size=3, candidates_path=junk)
    assert line.startswith(f"candidates_path: {junk}: not a valid candidates table"), line
