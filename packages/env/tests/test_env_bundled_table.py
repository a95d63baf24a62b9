"""The committed table is exactly what `python -m router_frontier_rl.regenerate` writes."""

from __future__ import annotations

from router_frontier_rl import bundled_table_path
from router_oracle.build import build_default_table
from router_oracle.table import dumps_table, is_non_commercial, license_summary
from router_oracle.table_check import load_table


def test_bundled_table_is_fresh() -> None:
    committed = bundled_table_path().read_text(encoding="utf-8")
    assert committed == dumps_table(build_default_table()), (
        "stale bundled table: run `python -m router_frontier_rl.regenerate`"
    )


def test_bundled_table_is_the_default_pool() -> None:
    table = load_table(bundled_table_path())
    assert table.pool.ids == ["claude-opus-4.7", "gpt-5.5", "nemotron-3-super"]
    assert len(table.tasks) == 500


def test_bundled_table_is_mit_licensed() -> None:
    """The env publishes this table: built from the OpenHands Index (MIT) and the bundled tasks (BSD-3),
    nothing non-commercial."""
    table = load_table(bundled_table_path())
    assert {s.kind: s.license for s in table.sources} == {"tasks": "BSD-3-Clause", "openhands": "MIT"}
    assert not is_non_commercial(table.sources)
    assert license_summary(table.sources) == "results MIT; task texts BSD-3-Clause"
