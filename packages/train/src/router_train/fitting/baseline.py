"""The `baseline` kind's fitting side (`fitting.FITS`): `router-train fit` fits it (one of evaluate's
learned baselines on a fixed pool); evaluate fits them all as its reference rows, evaluate-anypool the
balanced TF-IDF logistic regression as a fixed-pool reference. Its routing side is `route.kinds.baseline`."""

from __future__ import annotations

from router_train.fitting.fit import Fit, FitRequest, ReferenceRequest, kind_option
from router_train.route.kinds.baseline import KIND, KIND_NAME
from router_train.scoring.baseline_fitter import BalancedLogregFitter, BaselineFitter
from router_train.scoring.baselines import BALANCED_LOGREG_NAME
from router_train.scoring.fitter import Fitter


def fitters(request: FitRequest) -> list[Fitter]:
    """Every learned baseline at once, on the table's pool, unless `--no-baselines` (the logistic
    regressions reading `--task-features` too, when given)."""
    wanted = kind_option(request.options, KIND_NAME, bool, False)
    return [BaselineFitter(request.table.pool.ids, request.task_features)] if wanted else []


def references(request: ReferenceRequest) -> list[Fitter]:
    """evaluate-anypool's fixed-pool baseline: the balanced TF-IDF logistic regression alone."""
    return [BalancedLogregFitter()]


FIT = Fit(
    KIND,
    "router-train fit",
    fitters,
    reference=True,
    references=references,
    reference_rows=(BALANCED_LOGREG_NAME,),
)
"""The `baseline` kind's fitting entry."""
