"""Rebuild the bundled table: `python -m router_frontier_rl.regenerate [--check]`.

The table is the oracle package's default pool on its bundled data (`router_oracle.build`), so this
is the only command that writes `router_frontier_rl/data/oracle_table.json`. `--check` writes
nothing and exits 1 when the committed file differs from a fresh build.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from router_frontier_rl.bundled import bundled_table_path
from router_oracle.build import build_default_table
from router_oracle.table import dumps_table, write_table


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m router_frontier_rl.regenerate", description=__doc__)
    parser.add_argument("--check", action="store_true", help="only report whether the bundled table is stale")
    args = parser.parse_args(argv)
    table, path = build_default_table(), bundled_table_path()
    if args.check:
        current = path.read_text(encoding="utf-8") if path.is_file() else ""
        stale = current != dumps_table(table)
        print(f"{path}: {'stale' if stale else 'up to date'}", file=sys.stderr if stale else sys.stdout)
        return 1 if stale else 0
    write_table(table, path)
    print(f"wrote {path} ({len(table.tasks)} tasks, pool {table.pool.name})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
