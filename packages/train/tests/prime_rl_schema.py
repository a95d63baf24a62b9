"""prime-rl's real `RLConfig` for the schema-check tests, run in its own CPython 3.12 venv.

prime-rl is not on PyPI; its config package (`prime-rl-configs`, prime_rl.configs) is vendored as a
source snapshot in ../shared/vendor beside the repository (CI has it, a user's clone does not) and needs
CPython ~=3.12, so it cannot be imported into the tests' own 3.11 interpreter. `.ci/prime_rl_configs.sh`
installs it into a venv cached under ~/.cache and prints that venv's python; the tests find it:

1. $ROUTER_PRIME_RL_PYTHON (.ci/run exports it; pants.toml passes it into the test sandbox), else
2. ../shared/vendor/prime-rl-configs-*.tar.gz beside this checkout, installed with the same script
   (a plain pytest run from a checkout that has ../shared), else
3. skip, saying why.

Files load through `pydantic_config.cli(RLConfig, args=["@", FILE])`, which is what `rl @ FILE` does.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import router_frontier_rl
import router_oracle

ENV_VAR = "ROUTER_PRIME_RL_PYTHON"
REPO = Path(__file__).resolve().parents[3]
SCRIPT = REPO / ".ci" / "prime_rl_configs.sh"
VENDOR = REPO.parent / "shared" / "vendor"

SKIP_REASON = (
    f"prime-rl's config package is not installed: it is not on PyPI; set {ENV_VAR} to the python that "
    "`.ci/prime_rl_configs.sh ../shared/vendor/prime-rl-configs-559b447.tar.gz` prints (CI does), or "
    "run from a checkout with ../shared/vendor beside it"
)

CHECK = r"""
import json, sys
import pydantic_config
from prime_rl.configs.rl import RLConfig

results = {}
for path in sys.argv[1:]:
    try:
        cfg = pydantic_config.cli(RLConfig, args=["@", path])
    except BaseException as e:  # pydantic_config may SystemExit on a bad file
        results[path] = {"ok": False, "error": f"{type(e).__name__}: {e}"[:4000]}
        continue
    results[path] = {
        "ok": True,
        "batch_size": cfg.orchestrator.batch_size,
        "group_size": cfg.orchestrator.group_size,
        "lr": cfg.trainer.optim.lr,
        "deployment": cfg.deployment.type,
        "max_steps": cfg.max_steps,
        "slurm": cfg.slurm is not None,
    }
print(json.dumps(results))
"""


def prime_rl_python() -> str | None:
    """The python of a venv with prime_rl.configs installed, or None (see the module docstring)."""
    given = os.environ.get(ENV_VAR)
    if given:
        return given
    tarballs = sorted(VENDOR.glob("prime-rl-configs-*.tar.gz")) if VENDOR.is_dir() else []
    if not tarballs or not SCRIPT.is_file():
        return None
    proc = subprocess.run(
        ["bash", str(SCRIPT), str(tarballs[-1])], capture_output=True, text=True, timeout=1800, check=False
    )
    if proc.returncode != 0:
        raise RuntimeError(f"{SCRIPT} failed: {proc.stderr[-2000:]}")
    return proc.stdout.strip().splitlines()[-1]


def validate(python: str, paths: list[Path]) -> dict[str, dict[str, object]]:
    """Load every file through prime-rl's RLConfig in one process; {path: result}."""
    # The env's taskset id resolves to module router_frontier_rl: give prime-rl's venv our sources.
    roots = {str(Path(m.__file__).resolve().parent.parent) for m in (router_frontier_rl, router_oracle)}  # type: ignore[arg-type]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sorted(roots)))
    proc = subprocess.run(
        [python, "-c", CHECK, *map(str, paths)],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"prime-rl schema check crashed: {proc.stderr[-3000:]}")
    results: dict[str, dict[str, object]] = json.loads(proc.stdout.strip().splitlines()[-1])
    return results
