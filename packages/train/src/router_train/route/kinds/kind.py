"""What a router kind is to routing: the entry of the registry (`route.kinds.KINDS`) that `route`, `serve`
and `evaluate --checkpoint` load a checkpoint through, and the checks every fixed-pool kind shares. How
a kind is fitted is the fitting side's (`router_train.fitting`), above the trainers: nothing here imports
a trainer or a fitter."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from router_oracle.infra.file_hash import sha256_file
from router_oracle.infra.frozen_model import FrozenModel
from router_oracle.pool_file import load_pool
from router_train.route.deploy import Scorer
from router_train.route.operating_point import Calibrator
from router_train.route.router import Router
from router_train.route.spec import CheckpointSpec, RouteError
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
class RouterKind:
    """One kind of saved router to routing: its file format and how to load it for each command.

    A new router kind is one class and a registry line on each side, routing and fitting. Routing
    (`route/kinds/`, below everything that fits): a `Scorer` subclass (`route.deploy.Scorer`: per task a
    score for each pool model; `route.deploy.deploy` turns them and the checkpoint's operating point into
    the route) in its own module of `route/kinds/`, beside that module's `KIND = RouterKind(name,
    checkpoint, load, judge)`: its checkpoint model (a `FrozenModel` whose `kind:
    Literal["router-train-..."]` default marks the file, written and read with `checkpoint_io`), `load`
    (the router for `route` and `serve`) and `judge` (the router for `evaluate --checkpoint`); its registry
    line: that `KIND` in `KINDS` in `route/kinds/__init__.py`, with its checkpoint model in the `Checkpoint`
    union beside it. Fitting (`fitting/`, above the trainers): its own module of `fitting/` with `FIT =
    Fit(kind, command)`, the command that fits it, and what applies of `fitters` (what `evaluate` runs for
    it), `margins` and `refit` (for `feedback --refit`: the checkpoint refitted to serve's logged
    outcomes); its registry line: that `FIT` in `FITS` in `fitting/__init__.py`. `test_train_router_kinds.py`
    then runs the kind through `route`, the cost dial and `evaluate --checkpoint` once its `CHECKPOINTS`
    entry makes a small checkpoint of it, and checks that both registries hold it.
    """

    name: str
    """Short name (`local`, `local-anypool`, `baseline`): messages and router names say it."""
    checkpoint: type[FrozenModel]
    """The checkpoint file's model; its `kind` field's default is the string the file carries."""
    load: Callable[[Path, CheckpointSpec], Loaded]
    """Load the checkpoint at the path for routing as the spec says (pool, table, candidates checks);
    bad input raises a `ValueError` naming the file or flag."""
    judge: Callable[[Path, Sequence[str]], Judged]
    """Load the checkpoint at the path to be judged on an oracle table whose pool is the given ids."""

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
