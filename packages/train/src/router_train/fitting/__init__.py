"""The registry of router kinds, fitting side: how each kind of `route.kinds.KINDS` is fitted (`FITS`,
one `fit.Fit` per kind, in the same order): the command that writes its checkpoint, the fitters
`router-train evaluate` runs for it, evaluate-anypool's references, partition rows and any-pool trainer,
its safe point's margins, `feedback --refit`'s hook. It sits above the trainers and fitters it names; the
routing side (`route.kinds`) sits below it and imports none of them, so `route` and `serve` load no
trainer. What a new kind takes on each side: `route.kinds.RouterKind`'s docstring.
"""

from __future__ import annotations

from pathlib import Path
from typing import cast

from router_train.fitting import anypool, baseline, irt, local
from router_train.fitting.anypool import AnyPoolTraining
from router_train.fitting.fit import (
    Fit,
    FitRequest,
    KindOptions,
    ModelEvidence,
    PartitionFit,
    PartitionRequest,
    PoolRoutes,
    ReferenceRequest,
    RefitRequest,
    Refitted,
)
from router_train.route.kinds import KINDS, kind_of
from router_train.route.spec import RouteError
from router_train.scoring.fitter import Fitter
from router_train.scoring.safe_point import with_safe_point

FITS: dict[str, Fit] = {f.kind.kind: f for f in (local.FIT, anypool.FIT, baseline.FIT, irt.FIT)}
"""A checkpoint file's `kind` string -> how that kind is fitted, in the order of `route.kinds.KINDS`."""

# One fitting entry per routing entry, in the same order: a kind registered on one side only is an error
# at import, not a kind that routes but is never evaluated (or the reverse).
assert list(FITS) == list(KINDS), f"fitting.FITS {list(FITS)} != route.kinds.KINDS {list(KINDS)}"


def fitters_for(request: FitRequest) -> list[Fitter]:
    """Every fitter `router-train evaluate` runs for `request`: each kind's (`Fit.fitters`), the
    reference kinds' (the learned baselines) first, then the others in registry order; the order of the
    report's rows. With `request.safe_point`, each one that scores its models routes at its safe default
    point under its kind's margins (`scoring.safe_point.with_safe_point`, `Fit.margins`)."""
    kinds = sorted(FITS.values(), key=lambda k: not k.reference)
    fitted = [(k, f) for k in kinds if k.fitters is not None for f in k.fitters(request)]
    if not request.safe_point:
        return [f for _, f in fitted]
    pool = request.table.pool.ids
    return [cast(Fitter, with_safe_point(f, pool, k.margins)) for k, f in fitted]


def references_for(request: ReferenceRequest) -> list[Fitter]:
    """Every fixed-pool reference `router-train evaluate-anypool` fits on the request's pool
    (`Fit.references`), in registry order: the order of the report's reference rows."""
    return [f for k in FITS.values() if k.references is not None for f in k.references(request)]


def reference_rows() -> tuple[str, ...]:
    """The rows `references_for` gives, in its order (`Fit.reference_rows`): evaluate-anypool's fixed-pool
    reference rows."""
    return tuple(row for k in FITS.values() for row in k.reference_rows)


def partition_fits() -> list[PartitionFit]:
    """Every row `router-train evaluate-anypool --irt` fits once per task partition for every pool
    (`Fit.partition`), in registry order: the order of the report's rows after the references."""
    return [k.partition for k in FITS.values() if k.partition is not None]


def anypool_training() -> AnyPoolTraining:
    """How `router-train evaluate-anypool` trains its any-pool router: the one kind routing any pool
    (`Fit.anypool`, `local-anypool`)."""
    (training,) = [k.anypool for k in FITS.values() if k.anypool is not None]
    assert isinstance(training, AnyPoolTraining), "Fit.anypool holds a fitting.anypool.AnyPoolTraining"
    return training


def refit_kind(path: Path) -> Fit:
    """How the checkpoint at `path` is fitted, which must have a `refit` hook (`feedback --refit`); else
    one `RouteError` line naming the file and the kinds that do."""
    fit = FITS[kind_of(path).kind]
    if fit.refit is None:
        able = ", ".join(k.name for k in FITS.values() if k.refit is not None)
        raise RouteError(
            f"{path}: a {fit.name} checkpoint cannot be refitted from traffic (--refit takes: {able})"
        )
    return fit


__all__ = [
    "FITS",
    "AnyPoolTraining",
    "Fit",
    "FitRequest",
    "KindOptions",
    "ModelEvidence",
    "PartitionFit",
    "PartitionRequest",
    "PoolRoutes",
    "ReferenceRequest",
    "RefitRequest",
    "Refitted",
    "anypool_training",
    "fitters_for",
    "partition_fits",
    "reference_rows",
    "references_for",
    "refit_kind",
]
