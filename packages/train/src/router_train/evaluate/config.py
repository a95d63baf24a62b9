"""`EvaluateConfig`: what one `router-train evaluate` run judges and how, carried whole from the command's
options into `evaluate.run.evaluate` (one object, not a keyword per flag)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from router_frontier_rl.split import SplitName
from router_oracle.infra.frozen_model import FrozenModel
from router_train.local.config import LocalTrainConfig


class Source(BaseModel):
    """A router to evaluate from a file: a checkpoint (any kind in `route.kinds`) or vf-eval traces."""

    model_config = ConfigDict(frozen=True)

    name: str
    """Row label."""
    path: Path
    """The file."""


class EvaluateConfig(FrozenModel):
    """One evaluation: the split or the folds, the routers judged, and the fits' settings."""

    split: SplitName = "eval"
    """Split mode (`folds` None): the env split evaluated on (train/all are in-sample)."""
    eval_fraction: float = 0.2
    """Split mode: the env split's held-out share."""
    split_seed: int = 0
    """Split mode: the env split's seed."""
    folds: int | None = None
    """Cross-validation over every task of the table with K folds; None: the env's split."""
    fold_seeds: Sequence[int] = (0,)
    """Cross-validation: one complete K-fold pass per seed."""
    seed: int = 0
    """Seed of the random baseline, the classifiers and the bootstrap."""
    checkpoints: Sequence[Source] = ()
    """Checkpoints of any kind (`route.kinds`), scored only on tasks they did not train on (refused in
    split mode, narrowed under cross-validation) unless `allow_in_sample`."""
    traces: Sequence[Source] = ()
    """vf-eval traces files, scored on the tasks they cover."""
    local_routers: Sequence[tuple[str, LocalTrainConfig]] | None = None
    """The local GRPO routers trained per fit, as (row name, configuration); None: `local-grpo` with the
    defaults (a built-in like the baselines; none with `include_baselines` off)."""
    include_baselines: bool = True
    """The fixed and learned baselines are judged (off: `--no-baselines`)."""
    only_covered: bool = False
    """Split mode: only the tasks every traces file covers."""
    allow_in_sample: bool = False
    """Checkpoints and traces are scored on tasks they trained on anyway, marked in-sample."""
    irt: bool = False
    """The IRT router too (`irt`, fitted on the train tasks' rows of every bundled run), and its
    calibration."""
    jobs: int = 1
    """Processes fitting partitions in parallel."""
    calibrate: Sequence[int] = ()
    """With a test table: the calibration sizes N, each re-estimating on the first N held-out tasks of a
    fold (`cross_harness`)."""
    task_features: str | None = None
    """A file or bundled name (`router_train.task_features`): inputs of the learned routers that read them
    (`FitRequest`); every evaluated task needs them."""
    safe_point: bool = True
    """Each learned router routes at the default point chosen on each fit's train tasks
    (`scoring.safe_point`); False: at its native point."""
