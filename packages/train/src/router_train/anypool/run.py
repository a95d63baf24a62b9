"""`run_any_pool`: the `router-train local-anypool` run, from candidates table to files.

Tasks and their split are the env's (`split.split_ids` of the reference table, as the any-pool env
serves them); training uses the train tasks and every candidate model outside `held_out_models`; the
end-of-run check routes the env's any-pool eval episodes (held-out tasks, pools holding a held-out
model). Writes `checkpoint.json`, `metrics.jsonl` (one line per step) and `summary.json`; the same
inputs and seed give byte-identical files.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from router_frontier_rl.any_pool import AnyPoolSpec, any_pool_episodes
from router_frontier_rl.bundled import bundled_table_path
from router_frontier_rl.split import split_ids
from router_oracle.candidates import BUNDLED_CANDIDATES
from router_oracle.derive import CandidateIndex
from router_oracle.infra.frozen_model import FrozenModel
from router_oracle.infra.numeric_option import MAX_COUNT, Seed
from router_oracle.table_check import load_table
from router_train.anypool.checkpoint import checkpoint_of
from router_train.anypool.config import AnyPoolError, AnyPoolTrainConfig
from router_train.anypool.heldout import AnyPoolSummary, anypool_summary
from router_train.anypool.policy import PoolView
from router_train.anypool.trainer import train_any_pool
from router_train.checkpoint_io import dumps_checkpoint
from router_train.irt.router import check_enough_tasks
from router_train.local.irt_features import IRT_FEATURE_CONFIG
from router_train.report_files import publish_files

CHECKPOINT_FILE = "checkpoint.json"
METRICS_FILE = "metrics.jsonl"
SUMMARY_FILE = "summary.json"


class AnyPoolRunConfig(FrozenModel):
    """One `router-train local-anypool` run: the data, the held-out models, training, outputs."""

    candidates: str = BUNDLED_CANDIDATES
    """Candidates table (`bundled` or a path)."""
    table_path: Path | None = None
    """Oracle table whose env split picks the train and held-out tasks (unset: the env's bundled table)."""
    eval_fraction: float = Field(default=0.2, gt=0, lt=1, allow_inf_nan=False)
    """Held-out share of the env's split, in (0, 1)."""
    split_seed: Seed = 0
    """Seed of the env's split (0 to 2**32 - 1)."""
    held_out_models: list[str] = Field(default_factory=list)
    """Candidate models kept out of every training pool; every evaluation pool holds one of them
    (`router-oracle models` lists the ids)."""
    eval_pool_size: int = Field(default=3, ge=2, le=MAX_COUNT)
    """Models per evaluation pool (the env's `pool_size` on the eval split); at least 2."""
    pool_seed: Seed = 0
    """Seed of the evaluation pools (the env's `pool_seed`; 0 to 2**32 - 1)."""
    output_dir: Path = Path("runs/local-anypool")
    """Where `checkpoint.json`, `metrics.jsonl` and `summary.json` are written (created if missing)."""
    train: AnyPoolTrainConfig = AnyPoolTrainConfig()
    """Training configuration."""


class AnyPoolRunResult(BaseModel):
    """What a finished run produced."""

    model_config = ConfigDict(frozen=True)

    checkpoint_path: Path
    """The trained router (`load_any_pool_router(checkpoint_path)`)."""
    metrics_path: Path
    """One JSON object per step."""
    summary_path: Path
    """The held-out summary as JSON."""
    summary: AnyPoolSummary
    """The trained router against the per-pool rules on held-out episodes."""
    train_tasks: int
    """Train tasks."""
    train_models: int
    """Models training pools were drawn from."""
    wall_seconds: float
    """Wall time of the whole run (not written to any file: files are deterministic)."""
    bank_seconds: float
    """Wall time of summarising the training pool bank."""
    seconds_per_step: float
    """Mean wall time of one GRPO step."""


def run_any_pool(cfg: AnyPoolRunConfig, *, progress: bool = True) -> AnyPoolRunResult:
    """Train, check on held-out episodes, write the three files under `cfg.output_dir`."""
    start = time.perf_counter()
    index = CandidateIndex.load(cfg.candidates)
    table = load_table(cfg.table_path or bundled_table_path())
    parts = split_ids(table, cfg.eval_fraction, cfg.split_seed)
    spec = AnyPoolSpec(cfg.eval_pool_size, cfg.pool_seed, tuple(cfg.held_out_models))
    try:
        # Checks the held-out ids, the pool size and the task coverage before any training.
        episodes = list(any_pool_episodes(index, table, spec, "eval", cfg.eval_fraction, cfg.split_seed))
    except ValueError as exc:
        raise AnyPoolError(str(exc)) from exc
    if cfg.train.features.irt:
        source = cfg.table_path or bundled_table_path()
        where = f"{source} ({len(table.tasks)} tasks, --eval-fraction {cfg.eval_fraction})"
        check_enough_tasks(len(parts.train), IRT_FEATURE_CONFIG, where)
    held = set(cfg.held_out_models)
    models = [m for m in index.model_ids if m not in held]
    result = train_any_pool(index, parts.train, models, cfg.train, progress=progress)
    routes = [result.policy.route([e.record], PoolView(e.pool.ids, e.summary))[0] for e in episodes]
    summary = anypool_summary(episodes, routes, cfg.held_out_models)

    ckpt = checkpoint_of(result.policy, cfg.train, index, parts.train, models, cfg.held_out_models)
    files = {  # published as one set: an interrupted or failed run leaves the previous run's files
        CHECKPOINT_FILE: dumps_checkpoint(ckpt),
        METRICS_FILE: "".join(m.to_line() for m in result.metrics),
        SUMMARY_FILE: json.dumps(summary.model_dump(mode="json"), indent=1) + "\n",
    }
    checkpoint, metrics, summary_path = publish_files(
        cfg.output_dir, {name: text.encode("utf-8") for name, text in files.items()}, owned=list(files)
    )
    return AnyPoolRunResult(
        checkpoint_path=checkpoint,
        metrics_path=metrics,
        summary_path=summary_path,
        summary=summary,
        train_tasks=len(parts.train),
        train_models=len(models),
        wall_seconds=time.perf_counter() - start,
        bank_seconds=result.bank_seconds,
        seconds_per_step=result.seconds_per_step,
    )
