"""The `local` kind's fitting side (`fitting.FITS`): `router-train local` trains it (GRPO of a linear
softmax policy over one fixed pool); evaluate fits one per configuration asked, evaluate-anypool one as a
fixed-pool reference. Its routing side is `route.kinds.local`."""

from __future__ import annotations

from router_train.fitting.fit import Fit, FitRequest, ReferenceRequest, kind_option
from router_train.local.config import LocalTrainConfig
from router_train.local.fitter import LOCAL_ROUTER_NAME, LocalFitter
from router_train.route.kinds.local import KIND, KIND_NAME
from router_train.scoring.fitter import Fitter
from router_train.scoring.safe_point import LOCAL_MARGINS


def fitters(request: FitRequest) -> list[Fitter]:
    """One GRPO trainer per requested configuration (`local-grpo`, `--local NAME=...`), on the pool; with
    `--task-features` each configuration without its own reads them too."""
    return [
        LocalFitter(name, with_task_features(config, request.task_features), request.table.pool.ids)
        for name, config in kind_option(request.options, KIND_NAME, list, [])
    ]


def with_task_features(config: LocalTrainConfig, task_features: str | None) -> LocalTrainConfig:
    """`config` reading `task_features` too, unless it names its own (or none is given)."""
    if task_features is None or config.features.task_features is not None:
        return config
    features = config.features.model_copy(update={"task_features": task_features})
    return config.model_copy(update={"features": features})


def references(request: ReferenceRequest) -> list[Fitter]:
    """evaluate-anypool's fixed-pool GRPO router (`local-grpo`), its partitions trained in lockstep."""
    config = kind_option(request.options, KIND_NAME, LocalTrainConfig, LocalTrainConfig())
    return [LocalFitter(LOCAL_ROUTER_NAME, config, list(request.pool))]


FIT = Fit(
    KIND,
    "router-train local",
    fitters,
    references=references,
    reference_rows=(LOCAL_ROUTER_NAME,),
    margins=LOCAL_MARGINS,
)
"""The `local` kind's fitting entry."""
