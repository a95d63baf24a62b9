"""The local GRPO trainer as one of evaluate's fitters (`scoring.fitter.Fitter`, with `fit_scored` for the
cost-dial curves): the `local` kind's entry of `fitting` makes one per configuration for
`router-train evaluate`; `evaluate-anypool` fits the fixed-pool rows with it too."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from router_oracle.table import TaskRecord
from router_train.local.config import LocalTrainConfig
from router_train.local.irt_features import irt_probabilities
from router_train.local.lockstep import fit_policies
from router_train.local.policy import RouterPolicy
from router_train.local.trainer import fit_policy
from router_train.scoring.decisions import Decisions, from_labels
from router_train.scoring.dial import RouterScores

LOCAL_ROUTER_NAME = "local-grpo"
"""Row name of the local GRPO trainer with its default settings."""


@dataclass(frozen=True)
class LocalFitter:
    """The local GRPO trainer (`router-train local`) with one configuration, trained per partition."""

    name: str
    """Row name (`local-grpo` for the defaults)."""
    config: LocalTrainConfig
    """Its configuration (table, split and output options are ignored: the partition decides)."""
    pool: list[str]
    """Pool model ids."""

    def __call__(self, train: Sequence[TaskRecord], test: Sequence[TaskRecord], seed: int) -> list[Decisions]:
        return self.fit_scored(train, test, seed)[0]

    def fit_scored(
        self, train: Sequence[TaskRecord], test: Sequence[TaskRecord], seed: int
    ) -> tuple[list[Decisions], list[RouterScores]]:
        """Its decisions, and the policy's logits on the train and test tasks (its cost dial); on IRT inputs
        (`FeatureConfig.irt`) the test tasks' predicted resolve probabilities behind them too (evaluate
        reports their calibration)."""
        return self._decide(fit_policy(self.config, train, self.pool).policy, train, test)

    def fit_scored_many(
        self, folds: Sequence[tuple[Sequence[TaskRecord], Sequence[TaskRecord]]]
    ) -> list[tuple[list[Decisions], list[RouterScores]]]:
        """`fit_scored(train, test, seed)` of each (train, test), with the trainings of all folds run in
        lockstep (`local.lockstep.fit_policies`: the same policies, bitwise)."""
        policies = fit_policies(self.config, [train for train, _ in folds], self.pool)
        return [self._decide(p, train, test) for p, (train, test) in zip(policies, folds, strict=True)]

    def _decide(
        self, policy: RouterPolicy, train: Sequence[TaskRecord], test: Sequence[TaskRecord]
    ) -> tuple[list[Decisions], list[RouterScores]]:
        routes = policy.route(list(test))
        picks: dict[str, list[str | None]] = {t.instance_id: [r] for t, r in zip(test, routes, strict=True)}
        irt = policy.feature_state.irt  # on IRT inputs: their predicted resolve rates, to be calibrated
        scores = RouterScores(
            self.name,
            list(self.pool),
            policy.logits(list(train)),
            policy.logits(list(test)),
            probabilities=None if irt is None else irt_probabilities(irt, test, self.pool),
        )
        return [from_labels(self.name, "local", picks)], [scores]
