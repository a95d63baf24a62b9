"""The registry of router kinds: every saved router `route`, `serve` and `evaluate --checkpoint` read is
one of `KINDS`, found by its file's `kind` field (`kind_of`).

A new router kind is one class and one registry line. The class: a `Scorer` subclass (`route.deploy.Scorer`:
per task a score for each pool model; `route.deploy.deploy` turns them and the checkpoint's operating point
into the route) in its own module of `route/kinds/`, beside that module's `KIND = RouterKind(name, checkpoint,
load, judge, fit)`: its checkpoint model (a `FrozenModel` whose `kind: Literal["router-train-..."]` default
marks the file, written and read with `checkpoint_io`), `load` (the router for `route` and `serve`), `judge`
(the router for `evaluate --checkpoint`) and `fit` (a `Fit`: the command that fits it, and the fitters
`evaluate` runs for it), and optionally `refit` (for `feedback --refit`: the checkpoint refitted to serve's
logged outcomes). The registry line: that `KIND` in `KINDS` in `route/kinds/__init__.py`, with its checkpoint
model in the `Checkpoint` union beside it. `test_train_router_kinds.py` then runs the kind through `route`,
the cost dial and `evaluate --checkpoint` once its `CHECKPOINTS` entry makes a small checkpoint of it.
(The same statement as `kind.RouterKind`'s and docs/development.md's; `test_train_docs_statements.py`
holds the three to it.)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, cast

from pydantic import Field

from router_oracle.infra.text_file import read_text_file
from router_train.anypool.checkpoint import AnyPoolCheckpoint
from router_train.irt.checkpoint import IrtCheckpoint
from router_train.local.checkpoint import LocalCheckpoint
from router_train.route.baseline_checkpoint import BaselineCheckpoint
from router_train.route.kinds import anypool, baseline, irt, local
from router_train.route.kinds.anypool import AnyPoolTraining
from router_train.route.kinds.kind import (
    Fit,
    FitRequest,
    Judged,
    KindOptions,
    Loaded,
    ModelEvidence,
    PartitionFit,
    PartitionRequest,
    PoolRoutes,
    ReferenceRequest,
    RefitRequest,
    Refitted,
    RouterKind,
)
from router_train.route.spec import RouteError
from router_train.scoring.fitter import Fitter
from router_train.scoring.safe_point import with_safe_point

KINDS: dict[str, RouterKind] = {k.kind: k for k in (local.KIND, anypool.KIND, baseline.KIND, irt.KIND)}
"""A checkpoint file's `kind` string -> its kind, in the order messages list them."""

Checkpoint = Annotated[
    LocalCheckpoint | AnyPoolCheckpoint | BaselineCheckpoint | IrtCheckpoint, Field(discriminator="kind")
]
"""Any saved router's file, discriminated on `kind` (one member per entry of `KINDS`)."""


def fitters_for(request: FitRequest) -> list[Fitter]:
    """Every fitter `router-train evaluate` runs for `request`: each kind's (`RouterKind.fit`), the
    reference kinds' (the learned baselines) first, then the others in registry order; the order of the
    report's rows. With `request.safe_point`, each one that scores its models routes at its safe default
    point under its kind's margins (`scoring.safe_point.with_safe_point`, `Fit.margins`)."""
    kinds = sorted(KINDS.values(), key=lambda k: not k.fit.reference)
    fitted = [(k, f) for k in kinds if k.fit.fitters is not None for f in k.fit.fitters(request)]
    if not request.safe_point:
        return [f for _, f in fitted]
    pool = request.table.pool.ids
    return [cast(Fitter, with_safe_point(f, pool, k.fit.margins)) for k, f in fitted]


def references_for(request: ReferenceRequest) -> list[Fitter]:
    """Every fixed-pool reference `router-train evaluate-anypool` fits on the request's pool
    (`Fit.references`), in registry order: the order of the report's reference rows."""
    return [f for k in KINDS.values() if k.fit.references is not None for f in k.fit.references(request)]


def reference_rows() -> tuple[str, ...]:
    """The rows `references_for` gives, in its order (`Fit.reference_rows`): evaluate-anypool's fixed-pool
    reference rows."""
    return tuple(row for k in KINDS.values() for row in k.fit.reference_rows)


def partition_fits() -> list[PartitionFit]:
    """Every row `router-train evaluate-anypool --irt` fits once per task partition for every pool
    (`Fit.partition`), in registry order: the order of the report's rows after the references."""
    return [k.fit.partition for k in KINDS.values() if k.fit.partition is not None]


def anypool_training() -> AnyPoolTraining:
    """How `router-train evaluate-anypool` trains its any-pool router: the one kind routing any pool
    (`Fit.anypool`, `local-anypool`)."""
    (training,) = [k.fit.anypool for k in KINDS.values() if k.fit.anypool is not None]
    assert isinstance(training, AnyPoolTraining), "Fit.anypool holds a route.kinds.anypool.AnyPoolTraining"
    return training


def refit_kind(path: Path) -> RouterKind:
    """The kind of the checkpoint at `path`, which must have a `refit` hook (`feedback --refit`); else
    one `RouteError` line naming the file and the kinds that do."""
    kind = kind_of(path)
    if kind.refit is None:
        able = ", ".join(k.name for k in KINDS.values() if k.refit is not None)
        raise RouteError(
            f"{path}: a {kind.name} checkpoint cannot be refitted from traffic (--refit takes: {able})"
        )
    return kind


def kind_of(path: Path) -> RouterKind:
    """The kind of the checkpoint at `path`, read from the file's `kind` field; one `RouteError` line
    when the file is unreadable, not JSON or no router checkpoint."""
    text = read_text_file(path, "checkpoint", RouteError)
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RouteError(f"{path}: not a checkpoint: malformed JSON ({exc.msg}, line {exc.lineno})") from exc
    kind = doc.get("kind") if isinstance(doc, dict) else None
    if kind not in KINDS:
        raise RouteError(
            f"{path}: not a router checkpoint (kind {kind!r}; expected one of {', '.join(KINDS)})"
        )
    return KINDS[kind]


__all__ = [
    "KINDS",
    "AnyPoolTraining",
    "Checkpoint",
    "Fit",
    "FitRequest",
    "Judged",
    "KindOptions",
    "Loaded",
    "ModelEvidence",
    "PartitionFit",
    "PartitionRequest",
    "PoolRoutes",
    "ReferenceRequest",
    "RefitRequest",
    "Refitted",
    "RouterKind",
    "anypool_training",
    "fitters_for",
    "kind_of",
    "partition_fits",
    "reference_rows",
    "references_for",
    "refit_kind",
]
