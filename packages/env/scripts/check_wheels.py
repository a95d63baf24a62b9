"""Install the built wheels into a clean venv and load + score the env there, from no repo file.

  ./pants package packages/oracle:oracle packages/env:env
  python packages/env/scripts/check_wheels.py            # default: dist/router_{oracle,frontier_rl}-*.whl

Needs `uv` (the `uv` package) and PyPI for the wheels' dependencies. Exits non-zero on any failure.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import uv

REPO = Path(__file__).resolve().parents[3]

PROBE = """
import asyncio, sys
import router_frontier_rl as env
from router_frontier_rl.offline import score_reply
assert "site-packages" in env.__file__, env.__file__
tasks = list(env.RouterTaskset(env.RouterConfig(split="eval", max_tasks=5)))
task = tasks[0]
trace = asyncio.run(score_reply(task, env.format_route(task.data.record.oracle)))
assert trace.reward == 1.0, trace.rewards
assert env.bundled_table_path().is_file()
# any-pool mode draws from the candidates table inside the oracle wheel
anypool = list(env.RouterTaskset(env.RouterConfig(
    pool_size=3, split="eval", max_tasks=2, held_out_models=["minimax-m2.5-high"])))
assert all("minimax-m2.5-high" in t.data.valid_ids for t in anypool), [t.data.valid_ids for t in anypool]
print(f"OK: {len(tasks)} tasks from {env.bundled_table_path()}, oracle reply reward {trace.reward}; "
      f"any-pool eval pools {[t.data.valid_ids for t in anypool]}")
"""


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("wheels", nargs="*", type=Path)
    args = parser.parse_args()
    wheels = args.wheels or [
        *sorted((REPO / "dist").glob("router_oracle-*.whl")),
        *sorted((REPO / "dist").glob("router_frontier_rl-*.whl")),
    ]
    if len(wheels) < 2:
        print(f"need the router-oracle and router-frontier-rl wheels, found {wheels}", file=sys.stderr)
        return 2
    env_wheel = next(w for w in wheels if w.name.startswith("router_frontier_rl-"))
    with zipfile.ZipFile(env_wheel) as zf:
        metadata = next(zf.read(n).decode() for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        names = zf.namelist()
    requires = {
        line.split(":", 1)[1].replace(" ", "").replace("(", "").replace(")", "")
        for line in metadata.splitlines()
        if line.startswith("Requires-Dist:")
    }
    if "verifiers>=0.4.0" not in requires:
        print(
            f"{env_wheel.name}: verifiers is not pinned to >=0.4.0 (the Hub would tag it v0)", file=sys.stderr
        )
        return 1
    if "License: MIT" not in metadata.splitlines():
        print(f"{env_wheel.name}: the metadata does not state the MIT licence", file=sys.stderr)
        return 1
    if "router_frontier_rl/data/oracle_table.json" not in names:
        print(f"{env_wheel.name}: the bundled table is missing", file=sys.stderr)
        return 1
    uv_bin = uv.find_uv_bin()
    with tempfile.TemporaryDirectory() as tmp:
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        venv = Path(tmp) / "venv"
        subprocess.run([uv_bin, "venv", "-q", "--python", "3.11", str(venv)], check=True, env=env)
        python = str(venv / "bin" / "python")
        subprocess.run(
            [uv_bin, "pip", "install", "-q", "--python", python, *map(str, wheels)], check=True, env=env
        )
        return subprocess.run([python, "-c", PROBE], cwd=tmp, env=env).returncode


if __name__ == "__main__":
    sys.exit(main())
