"""The committed table is exactly what `python -m router_frontier_rl.regenerate` writes."""

from __future__ import annotations

from router_frontier_rl import bundled_table_path
from router_oracle.build import build_default_table
from router_oracle.table import dumps_table
from router_oracle.table_check import load_table


def test_bundled_table_is_fresh() -> None:
    committed = bundled_table_path().read_text(encoding="utf-8")
    assert committed == dumps_table(build_default_table()), (
        "stale bundled table: run `python -m router_frontier_rl.regenerate`"
    )


def test_bundled_table_is_the_default_pool() -> None:
    table = load_table(bundled_table_path())
    assert table.pool.ids == ["claude-opus-4.6", "gpt-5.2-high", "kimi-k2.5-high"]
    assert len(table.tasks) == 500
