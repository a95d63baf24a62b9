"""What the oracle tests share: fixture paths, the bundled data as plain JSON, small input files."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from router_oracle.data_files import leaderboard_path, tasks_path

FIXTURES = Path(__file__).parent / "fixtures"
"""Sample upstream files (see fixtures/README.md)."""

TRAJ = FIXTURES / "trajs/gemini-3-pro/django__django-11099/django__django-11099.traj.json"
"""A real mini-SWE-agent trajectory, the template of synthetic ones."""


def leaderboard_results() -> list[Any]:
    """The bundled leaderboard's `results` entries, read as plain JSON (not by the importer)."""
    with gzip.open(leaderboard_path(), "rt", encoding="utf-8") as fh:
        results: list[Any] = json.load(fh)["results"]
    return results


def write_tasks(directory: Path, ids: Iterable[str]) -> Path:
    """`directory/tasks.jsonl`: the bundled task rows of `ids`, in that order."""
    with gzip.open(tasks_path(), "rt", encoding="utf-8") as fh:
        rows = {r["instance_id"]: r for r in map(json.loads, fh)}
    path = directory / "tasks.jsonl"
    path.write_text("".join(json.dumps(rows[i]) + "\n" for i in ids))
    return path


def write_trajectories(directory: Path, costs: Mapping[str, float], model: str | None = None) -> Path:
    """`directory/<id>/<id>.traj.json` per task id: the real `TRAJ` with that id and cost (and, given
    `model`, that `info.config.model.model_name` instead of the real run's `google/gemini-3-pro-preview`)."""
    template = json.loads(TRAJ.read_text())
    if model is not None:
        config = template["info"]["config"]
        template["info"]["config"] = config | {"model": config["model"] | {"model_name": model}}
    for i, cost in costs.items():
        doc = template | {"instance_id": i}
        doc["info"] = template["info"] | {"model_stats": {"instance_cost": cost, "api_calls": 1}}
        (directory / i).mkdir(parents=True)
        (directory / i / f"{i}.traj.json").write_text(json.dumps(doc))
    return directory
