"""The `local-anypool` kind's fitting side (`fitting.FITS`): `router-train local-anypool` trains it (one
policy routing any pool); evaluate-anypool trains it per held-out group and task partition
(`AnyPoolTraining`); evaluate does not fit it. Its routing side is `route.kinds.anypool`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from router_oracle.derive import CandidateIndex
from router_train.anypool.config import AnyPoolTrainConfig
from router_train.anypool.irt_inputs import AnyPoolIrtState, fit_anypool_irt
from router_train.anypool.trainer import AnyPoolTrainResult, ScoreCache, train_any_pool
from router_train.fitting.fit import Fit
from router_train.route.kinds.anypool import KIND


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
    group and task partition (`fitting.anypool_training`)."""

    train: AnyPoolTrainer
    """The trainer."""
    irt_inputs: Callable[[CandidateIndex, Sequence[str]], AnyPoolIrtState]
    """With IRT inputs (`FeatureConfig.irt`): their fit on a partition's train task ids (every run's rows),
    shared by the partition's trainings of every group."""


FIT = Fit(KIND, "router-train local-anypool", anypool=AnyPoolTraining(train_any_pool, fit_anypool_irt))
"""The `local-anypool` kind's fitting entry: judged across pools by `evaluate-anypool`, which trains it;
`evaluate` does not fit it."""
