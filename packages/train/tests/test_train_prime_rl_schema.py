"""Every shipped and rendered config loads in prime-rl's real `RLConfig` (at the validated commit).

Runs where prime-rl's config package is installed (CI: ../shared/vendor, see `prime_rl_schema`);
skips, saying why, elsewhere.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from prime_rl_schema import SKIP_REASON, prime_rl_python, validate

from router_train.hosted.config_files import dumps_config, load_config, render_multi_node, shipped_path
from router_train.hosted.presets import ENV_ID, PRESET_NAMES

pytestmark = pytest.mark.e2e  # prime-rl's RLConfig in a CPython 3.12 subprocess

SHIPPED = [shipped_path(name) for name in PRESET_NAMES]
MULTI_NODE = [("full", 2), ("full", 5), ("agentic-full", 3), ("anypool", 4)]
CASES = (
    [f"shipped/{p.name}" for p in SHIPPED]
    + [f"submitted/{p.name}" for p in SHIPPED]
    + [f"nodes/{name}-{n}.toml" for name, n in MULTI_NODE]
)


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, object]]:
    python = prime_rl_python()
    if python is None:
        pytest.skip(SKIP_REASON)
    root = tmp_path_factory.mktemp("prime-rl-schema")
    files: dict[str, Path] = {}
    for path in SHIPPED:
        files[f"shipped/{path.name}"] = path
        # What a hosted launch submits: the taskset id is the pushed hub id.
        pushed = root / "submitted" / path.name
        pushed.parent.mkdir(exist_ok=True)
        pushed.write_text(dumps_config(load_config(path).with_taskset_id(ENV_ID, f"alice/{ENV_ID}")))
        files[f"submitted/{path.name}"] = pushed
    for name, nodes in MULTI_NODE:
        rendered = root / "nodes" / f"{name}-{nodes}.toml"
        rendered.parent.mkdir(exist_ok=True)
        rendered.write_text(render_multi_node(name, nodes), encoding="utf-8")  # type: ignore[arg-type]
        files[f"nodes/{name}-{nodes}.toml"] = rendered
    by_path = validate(python, list(files.values()))
    return {case: by_path[str(path)] for case, path in files.items()}


@pytest.mark.parametrize("case", CASES)
def test_config_loads_in_prime_rl(case: str, results: dict[str, dict[str, object]]) -> None:
    result = results[case]
    assert result["ok"], result.get("error")
    stem = case.split("/")[1].removesuffix(".toml")
    name = stem.rsplit("-", 1)[0] if case.startswith("nodes/") else stem
    ours = load_config(shipped_path(name))  # type: ignore[arg-type]
    assert result["batch_size"] == ours.orchestrator.batch_size
    assert result["group_size"] == ours.orchestrator.group_size
    assert result["lr"] == ours.trainer.optim.lr and result["max_steps"] == ours.max_steps
    multi = case.startswith("nodes/")
    assert result["deployment"] == ("multi_node" if multi else "single_node")
    assert result["slurm"] is multi
