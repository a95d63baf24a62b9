"""What a router kind is: the entry of the registry (`route.kinds.KINDS`) that `route`, `serve`,
`evaluate --checkpoint`, evaluate's fitted rows and evaluate-anypool's trained routers go through, and the
checks every fixed-pool kind shares."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from router_oracle.derive import CandidateIndex
from router_oracle.file_hash import sha256_file
from router_oracle.frozen_model import FrozenModel
from router_oracle.pool_file import load_pool
from router_oracle.table import OracleTable, TaskRecord
from router_train.anypool.config import AnyPoolTrainConfig
from router_train.anypool.irt_inputs import AnyPoolIrtState
from router_train.anypool.trainer import AnyPoolTrainResult, ScoreCache
from router_train.irt.router import IrtConfig
from router_train.local.config import LocalTrainConfig
from router_train.route.deploy import Scorer
from router_train.route.operating_point import Calibrator
from router_train.route.router import Router
from router_train.route.spec import CheckpointSpec, RouteError
from router_train.scoring.dial import RouterScores
from router_train.scoring.fitter import Fitter
from router_train.scoring.safe_point import SafePoint
from router_train.task_features import FeatureScaling, load_task_features


@dataclass
class Loaded:
    """A checkpoint loaded for routing (`route`, `serve`)."""

    scorer: Scorer
    """The router's scorer, over the pool it routes (`spec.pool` for an any-pool kind); `load_router`
    builds the router from it at its operating point."""
    calibrate: Calibrator | None
    """Reads or computes its cost dial's calibration on its training tasks (`--budget` / `--dial`);
    None: the router has no dial (e.g. `cheapest-on-train`)."""
    safe_point: SafePoint | None = None
    """The default operating point its checkpoint stores (`scoring.safe_point`), applied when no budget or
    dial is given (unless `--no-safe-point`); None: none stored (older files, `cheapest-on-train`)."""


@dataclass
class Judged:
    """A checkpoint loaded for `router-train evaluate --checkpoint`: bound to the evaluated table's pool."""

    router: Router
    """The router at its checkpoint's stored default point (`route_many` routes the table's tasks)."""
    train_task_ids: list[str]
    """Every task it learned from: evaluate never scores it on one of them (unless told to)."""


@dataclass(frozen=True)
class FitRequest:
    """What `router-train evaluate` asks every kind to fit in each partition (`route.kinds.fitters_for`)."""

    table: OracleTable
    """The evaluated table: its pool is the fitted routers' pool."""
    tasks: Sequence[TaskRecord]
    """Every task the fits will route (a kind that reads other data checks that it covers them)."""
    baselines: bool
    """The learned baselines are wanted (off with `--no-baselines`)."""
    local: Sequence[tuple[str, LocalTrainConfig]]
    """The local GRPO routers to train, as (row name, configuration): `local-grpo` with the defaults
    unless `--no-baselines`, then each `--local NAME=OPTIONS`."""
    irt: bool
    """The IRT router is wanted (`--irt`: slower, off by default)."""
    task_features: str | None = None
    """`--task-features`: a file or bundled name (`router_train.task_features`) every learned router
    that can read task features takes as inputs beside the text (the logistic regressions, each local
    GRPO router without its own, the IRT task regressor), standardised on each fit's train tasks; None:
    none."""
    safe_point: bool = True
    """Each learned router routes at its safe default point, chosen on each fit's train tasks
    (`scoring.safe_point`); False (`--no-safe-point`): at its native point."""


@dataclass(frozen=True)
class ReferenceRequest:
    """What `router-train evaluate-anypool` asks every kind to fit on one evaluation pool alone, in every
    task partition: its fixed-pool references (`route.kinds.references_for`), what retraining for that
    pool buys next to the any-pool router."""

    pool: Sequence[str]
    """The evaluation pool's model ids: the fitted routers' pool."""
    local: LocalTrainConfig
    """The local GRPO reference's configuration (`local-grpo`: the defaults; few steps with `--quick`)."""


@dataclass(frozen=True)
class PartitionRequest:
    """What `router-train evaluate-anypool` asks a kind with a partition-shared row (`Fit.partition`) to
    fit in one task partition: one fit on the train tasks, routing every evaluation pool on the test
    tasks."""

    index: CandidateIndex
    """The candidates (every run's outcomes); a fit reads only the train tasks' rows."""
    train_ids: Sequence[str]
    """The partition's train task ids, in partition order."""
    test_ids: Sequence[str]
    """The partition's test task ids, in partition order: the tasks routed."""
    pools: Sequence[Sequence[str]]
    """Every distinct evaluation pool's model ids, in the report's order."""
    irt: IrtConfig
    """The IRT settings' grids (`--irt`), searched by inner cross-validation on the train tasks."""
    seed: int
    """Seed of the fit."""
    label: str
    """The partition's name, for messages."""


PoolRoutes = tuple[list[str], RouterScores]
"""A partition-shared fit on one pool: its route of each test task (partition order) and its per-model
scores on the pool's train and test tasks (its cost dial's curve)."""


@dataclass(frozen=True)
class PartitionFit:
    """A row of `router-train evaluate-anypool` fitted once per task partition and shared by every
    evaluation pool of it (the `irt` row, `--irt`): what one fit on every run's train-task rows gives
    each pool."""

    row: str
    """The report's row name."""
    fit: Callable[[PartitionRequest], list[PoolRoutes]]
    """The partition's fit, one `PoolRoutes` per `PartitionRequest.pools` entry, in order."""


class AnyPoolTrainer(Protocol):
    """Trains one router of any pool on `train_task_ids` with pools drawn from `model_ids`
    (`anypool.train_any_pool`); `score_cache` and `irt` are work shared between the trainings of one
    evaluation (route scores of a bank of pools; the IRT inputs' fit of a partition)."""

    def __call__(
        self,
        index: CandidateIndex,
        train_task_ids: Sequence[str],
        model_ids: Sequence[str],
        cfg: AnyPoolTrainConfig | None = None,
        *,
        score_cache: ScoreCache | None = None,
        irt: AnyPoolIrtState | None = None,
    ) -> AnyPoolTrainResult: ...


@dataclass(frozen=True)
class AnyPoolTraining:
    """How `router-train evaluate-anypool` trains a kind that routes any pool (`local-anypool`) per held-out
    group and task partition (`route.kinds.anypool_training`)."""

    train: AnyPoolTrainer
    """The trainer."""
    irt_inputs: Callable[[CandidateIndex, Sequence[str]], AnyPoolIrtState]
    """With IRT inputs (`FeatureConfig.irt`): their fit on a partition's train task ids (every run's rows),
    shared by the partition's trainings of every group."""


@dataclass(frozen=True)
class Fit:
    """How a kind is fitted: the command that writes its checkpoint, and evaluate's fitters of it."""

    command: str
    """The command that trains or fits it and writes the checkpoint (docs, help)."""
    fitters: Callable[[FitRequest], list[Fitter]] | None = None
    """The fitters `router-train evaluate` runs in every partition for the request (each a
    `scoring.fitter.Fitter`, with `fit_scored` for the cost-dial curves; none where the request does not
    ask for the kind); None: evaluate does not fit this kind (e.g. `local-anypool`, judged across pools by
    `evaluate-anypool`)."""
    reference: bool = False
    """Its rows are references (the learned baselines): evaluate lists them before the other kinds'."""
    references: Callable[[ReferenceRequest], list[Fitter]] | None = None
    """`router-train evaluate-anypool`'s fixed-pool references of this kind for the request's pool, each
    fitted in every task partition: one with `fit_scored_many` runs every partition's training at once and
    gives its scores (its cost-dial curve), any other gives its decisions per partition; None: none."""
    reference_rows: tuple[str, ...] = ()
    """The rows `references` gives, in order (the report's reference rows, its plot's styles);
    `evaluate-anypool` checks every fit gives exactly these."""
    partition: PartitionFit | None = None
    """`router-train evaluate-anypool`'s row of this kind shared by every pool of a task partition
    (`--irt`); None: none."""
    anypool: AnyPoolTraining | None = None
    """How `router-train evaluate-anypool` trains it, for a kind that routes any pool; None: not such a
    kind."""


@dataclass(frozen=True)
class RouterKind:
    """One kind of saved router: its file format and how to load it for each command.

    A new kind is one module defining its scorer (a `route.deploy.Scorer` subclass), its checkpoint model
    (a `FrozenModel` with a `kind: Literal["router-train-..."]` field) and one `RouterKind`, plus its line
    in `route.kinds`."""

    name: str
    """Short name (`local`, `local-anypool`, `baseline`): messages and router names say it."""
    checkpoint: type[FrozenModel]
    """The checkpoint file's model; its `kind` field's default is the string the file carries."""
    load: Callable[[Path, CheckpointSpec], Loaded]
    """Load the checkpoint at the path for routing as the spec says (pool, table, candidates checks);
    bad input raises a `ValueError` naming the file or flag."""
    judge: Callable[[Path, Sequence[str]], Judged]
    """Load the checkpoint at the path to be judged on an oracle table whose pool is the given ids."""
    fit: Fit
    """How it is fitted: its command, and evaluate's fitters of it."""

    @property
    def kind(self) -> str:
        """The checkpoint file's `kind` string (kept stable: older files keep loading)."""
        kind = self.checkpoint.model_fields["kind"].default
        assert isinstance(kind, str), f"{self.checkpoint.__name__}.kind needs a string default"
        return kind


def refuse_candidates(spec: CheckpointSpec, path: Path, name: str) -> None:
    """A fixed-pool checkpoint reads no candidates table: `--candidates` is a mistake."""
    if spec.candidates is not None:
        raise RouteError(f"--candidates applies to any-pool checkpoints; {path} is a {name} checkpoint")


def check_fixed(spec: CheckpointSpec, path: Path, pool_ids: list[str], table: str, table_sha256: str) -> None:
    """A fixed-pool checkpoint routes its own pool: a pool or table given must be the one it learned."""
    if spec.pool is not None:
        ids = load_pool(spec.pool).ids
        if sorted(ids) != sorted(pool_ids):
            raise RouteError(
                f"{path}: trained for the pool {', '.join(pool_ids)}, not the pool of {spec.pool} "
                f"({', '.join(ids)}); an any-pool checkpoint routes other pools"
            )
    if spec.table is not None:
        got = sha256_file(spec.table)
        if got != table_sha256:
            raise RouteError(
                f"{path}: trained on table {table} (sha256 {table_sha256[:16]}...), but {spec.table} "
                f"has sha256 {got[:16]}..."
            )


def routing_task_features(spec: CheckpointSpec, path: Path, trained: FeatureScaling | None) -> str | None:
    """The task-features file a checkpoint routes with: `spec.task_features`, needed (one line if absent)
    when it was trained on task features (`trained`: their columns' standardisation), refused when not."""
    if trained is None:
        if spec.task_features is not None:
            raise RouteError(f"{path}: not trained on task features; drop --task-features")
        return None
    if spec.task_features is None:
        raise RouteError(
            f"{path}: trained on {len(trained.columns)} task-feature columns (from {trained.source}); "
            "give --task-features FILE with them for every task routed"
        )
    # Read now, whatever the operating point: a file without the trained columns fails at load, also
    # for a router whose default point (always the cheapest model) reads no task's features.
    load_task_features(spec.task_features).check_covers([], trained.columns)
    return spec.task_features
