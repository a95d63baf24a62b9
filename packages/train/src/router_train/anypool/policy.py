"""The pool-agnostic router: a score per (task, model) pair, softmax over whatever pool is offered.

    score(task, model) = m(model, pool, repo) . (x(task) @ W + b)

x(task) are the local trainer's task features (hashed issue words, repository, length:
`local.features`), m the model's capability-summary entries for that pool and the task's repository
(`model_features`), so `W` holds the task x capability interactions ("this kind of issue needs a strong
model") and `b` the task-independent preferences ("cheap, unless much weaker"). No weight belongs to a
model id: any pool of any models with a capability summary can be routed. With the IRT inputs
(`FeatureConfig.irt`), m also holds the model's predicted resolve probability on the task
(`irt_inputs.IRT_MODEL_FEATURES`, from an IRT fit on the train tasks that the policy carries).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from router_frontier_rl.any_pool import pool_view
from router_frontier_rl.capabilities import CapabilitySummary
from router_oracle.derive import CandidateIndex
from router_oracle.task_input import TaskInput
from router_train.anypool.irt_inputs import (
    IRT_MODEL_FEATURES,
    AnyPoolIrtState,
    irt_model_columns,
    model_probabilities,
    pool_columns,
    task_side,
)
from router_train.anypool.model_features import MODEL_FEATURES, PoolFeatureCache
from router_train.local.config import FeatureConfig
from router_train.local.features import FeatureState, featurize
from router_train.local.policy import LinearTaskModel, greedy, softmax


@dataclass(frozen=True)
class PoolView:
    """A pool as the router sees it: its model ids and its capability summary on some train tasks."""

    ids: list[str]
    """The pool's model ids, in pool order (the order of every probability row)."""
    summary: CapabilitySummary
    """The pool's capability summary (`capabilities.summarize` on the train tasks)."""

    @classmethod
    def build(
        cls, index: CandidateIndex, model_ids: Sequence[str], train_task_ids: Sequence[str]
    ) -> PoolView:
        """The view of candidate models `model_ids`, summarised on `train_task_ids` (train tasks only)."""
        pool, _, summary = pool_view(index, model_ids, train_task_ids)
        return cls(ids=pool.ids, summary=summary)

    def features(self) -> PoolFeatureCache:
        return PoolFeatureCache(self.summary)


def model_feature_names(features: FeatureConfig) -> tuple[str, ...]:
    """The model-feature columns of a policy with these features: `MODEL_FEATURES`, then the IRT inputs'."""
    return MODEL_FEATURES + (IRT_MODEL_FEATURES if features.irt else ())


class AnyPoolPolicy(LinearTaskModel):
    """pi(model | task, pool) = softmax over the pool of m(model) . (x(task) @ weights + bias); `task_vectors`
    gives, per task, the weight each model feature gets (tasks x MODEL_FEATURES)."""

    def __init__(
        self,
        features: FeatureConfig,
        feature_state: FeatureState,
        weights: np.ndarray,
        bias: np.ndarray,
        irt: AnyPoolIrtState | None = None,
    ) -> None:
        if features.irt != (irt is not None):
            raise ValueError("an any-pool policy has an IRT fit exactly when its features ask for IRT inputs")
        self.irt = irt
        """The IRT fit behind the `IRT_MODEL_FEATURES` columns (None without IRT inputs)."""
        self.model_features = model_feature_names(features)
        """Names of the model-feature columns, in weight-column order."""
        super().__init__(features, feature_state, weights, bias, len(self.model_features))

    def featurize(self, tasks: Sequence[TaskInput]) -> sp.csr_matrix:
        """Task features (repo and issue text; the IRT inputs are model columns, `model_matrices`)."""
        return featurize(task_side(self.features), self.feature_state, tasks)

    def model_matrices(self, tasks: Sequence[TaskInput], view: PoolView) -> list[np.ndarray]:
        """Per task, the (pool models, model features) matrix m the task vector is applied to."""
        cache = view.features()
        if self.irt is None:
            return [cache.matrix(t.repo) for t in tasks]
        p = model_probabilities(self.irt, tasks)[:, pool_columns(self.irt, view.ids)]
        return [
            np.hstack([cache.matrix(t.repo), irt_model_columns(self.irt, p[i])]) for i, t in enumerate(tasks)
        ]

    def probabilities(self, tasks: Sequence[TaskInput], view: PoolView) -> np.ndarray:
        """Routing distribution over `view.ids`, shape (len(tasks), len(view.ids)); rows sum to 1."""
        if not tasks:
            return np.zeros((0, len(view.ids)))
        return softmax(self.logits(tasks, view))

    def logits(self, tasks: Sequence[TaskInput], view: PoolView) -> np.ndarray:
        """score(task, model) over `view.ids`, shape (len(tasks), len(view.ids)): the scores its cost dial
        (`evaluate.dial`) is applied to."""
        u = self.task_vectors(self.featurize(tasks))
        out: np.ndarray = np.stack([m @ u[i] for i, m in enumerate(self.model_matrices(tasks, view))])
        return out

    def route(self, tasks: Sequence[TaskInput], view: PoolView) -> list[str]:
        """Greedy routes: the most probable model of the pool per task (ties: the earlier pool model)."""
        return greedy(view.ids, self.probabilities(tasks, view))
