"""`--plan mini-swe-agent`: per routed model, the `mini-extra swebench` command that runs exactly its tasks.

Flags are those of mini-swe-agent 2.4.x (`minisweagent/run/benchmarks/swebench.py`): `--subset verified
--split test` loads SWE-bench Verified, `--filter REGEX` keeps the instances whose id `re.match`es it
(anchored here with `^(?:...)$`, ids escaped, so it selects exactly the listed ids), `-m/--model` is the
model name mini-swe-agent passes to its model class (litellm by default), `-o/--output` the run directory
(`preds.json` and `<id>/<id>.traj.json`, what `router-oracle build --trajectories` reads).
"""

from __future__ import annotations

import os
import re
import shlex
import tomllib
from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError

from router_oracle.infra.frozen_model import FrozenModel
from router_oracle.infra.validation_message import one_line
from router_train.route.decision import Decision
from router_train.route.spec import RouteError

PLANS = ("mini-swe-agent",)
"""Harnesses `--plan` knows."""

SUBSET = "verified"
"""mini-swe-agent's name for SWE-bench Verified (`DATASET_MAPPING`: princeton-nlp/SWE-Bench_Verified)."""
SPLIT = "test"
"""SWE-bench Verified's one split."""


class ModelMap(FrozenModel):
    """`--model-map FILE.toml`: the mini-swe-agent model name of each pool model id.

    ```toml
    [models]
    "claude-opus-4.6" = "anthropic/claude-opus-4-6"
    ```
    """

    models: dict[str, str]
    """Pool model id -> the `--model` name mini-swe-agent runs it as (a litellm model name by default)."""


def read_model_map(path: str | os.PathLike[str]) -> ModelMap:
    """Read a model map; errors name the file."""
    try:
        with open(path, "rb") as fh:
            doc = tomllib.load(fh)
    except OSError as exc:
        raise RouteError(f"{path}: cannot read model map: {exc.strerror}") from exc
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise RouteError(f"{path}: not a TOML model map: {exc}") from exc
    try:
        return ModelMap.model_validate(doc)
    except ValidationError as exc:
        raise RouteError(f"{path}: not a model map: {one_line(exc)}") from exc


def id_filter(instance_ids: Sequence[str]) -> str:
    """The `--filter` regex matching exactly `instance_ids` (mini-swe-agent applies it with `re.match`)."""
    return "^(?:" + "|".join(re.escape(i) for i in sorted(instance_ids)) + ")$"


def mini_swe_agent_plan(
    decisions: Sequence[Decision],
    verified_ids: set[str],
    model_map: ModelMap | None,
    output_root: Path,
    *,
    every_model: Sequence[str] = (),
) -> str:
    """A shell script: one `mini-extra swebench` command per routed model (models sorted), with comments
    for tasks it cannot run (unrouted, or not SWE-bench Verified).

    `every_model` (the pool): instead, every one of these models runs every task, the counterfactual
    runs an oracle table needs to add the tasks (`router-oracle build` wants each pool model on each
    task); routed-only runs measure just the deployed route."""
    names = model_map.models if model_map is not None else {}
    by_model: dict[str, list[str]] = {}
    unrouted: list[str] = []
    not_verified: list[str] = []
    for d in decisions:
        if d.model is None:
            unrouted.append(d.instance_id)
        elif d.instance_id not in verified_ids:
            not_verified.append(d.instance_id)
        else:
            by_model.setdefault(d.model, []).append(d.instance_id)
    if every_model:
        routed = {i for ids in by_model.values() for i in ids}
        runnable = sorted(routed | {i for i in unrouted if i in verified_ids})
        by_model = {m: runnable for m in every_model} if runnable else {}
        unrouted = [i for i in unrouted if i not in verified_ids]
    what = "every pool model on every task" if every_model else "one run per routed model"
    lines = [f"# mini-SWE-agent 2.4.x plan: {what} (router-train route --plan mini-swe-agent)"]
    for model in sorted(by_model):
        ids = by_model[model]
        name = names.get(model)
        note = "" if name is not None else "  (no --model-map entry: the pool id is used as the model name)"
        lines.append(f"# {model}: {len(ids)} task(s){note}")
        cmd = [
            "mini-extra",
            "swebench",
            "--subset",
            SUBSET,
            "--split",
            SPLIT,
            "--filter",
            id_filter(ids),
            "--model",
            name or model,
            "--output",
            str(output_root / model),
        ]
        lines.append(shlex.join(cmd))
    if unrouted:
        lines.append(f"# not routed (no valid route): {' '.join(sorted(unrouted))}")
    if not_verified:
        lines.append(
            "# not SWE-bench Verified instances (mini-extra swebench cannot run them): "
            + " ".join(sorted(not_verified))
        )
    return "\n".join(lines) + "\n"
