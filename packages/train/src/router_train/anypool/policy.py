"""The pool-agnostic router: a score per (task, model) pair, softmax over whatever pool is offered.

    score(task, model) = m(model, pool, repo) . (x(task) @ W + b)

x(task) are the local trainer's task features (hashed issue words, repository, length:
`local.features`), m the model's capability-summary entries for that pool and the task's repository
(`model_features`), so `W` holds the task x capability interactions ("this kind of issue needs a strong
model") and `b` the task-independent preferences ("cheap, unless much weaker"). No weight belongs to a
model id: any pool of any models with a capability summary can be routed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from router_frontier_rl.any_pool import pool_view
from router_frontier_rl.capabilities import CapabilitySummary
from router_oracle.derive import CandidateIndex
from router_oracle.table import TaskRecord
from router_train.anypool.model_features import MODEL_FEATURES, PoolFeatureCache
from router_train.local.config import FeatureConfig
from router_train.local.features import FeatureState
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


class AnyPoolPolicy(LinearTaskModel):
    """pi(model | task, pool) = softmax over the pool of m(model) . (x(task) @ weights + bias); `task_vectors`
    gives, per task, the weight each model feature gets (tasks x MODEL_FEATURES)."""

    def __init__(
        self, features: FeatureConfig, feature_state: FeatureState, weights: np.ndarray, bias: np.ndarray
    ) -> None:
        super().__init__(features, feature_state, weights, bias, len(MODEL_FEATURES))

    def probabilities(self, tasks: Sequence[TaskRecord], view: PoolView) -> np.ndarray:
        """Routing distribution over `view.ids`, shape (len(tasks), len(view.ids)); rows sum to 1."""
        if not tasks:
            return np.zeros((0, len(view.ids)))
        return softmax(self.logits(tasks, view))

    def logits(self, tasks: Sequence[TaskRecord], view: PoolView) -> np.ndarray:
        """score(task, model) over `view.ids`, shape (len(tasks), len(view.ids)): the scores its cost dial
        (`evaluate.dial`) is applied to."""
        u = self.task_vectors(self.featurize(tasks))
        cache = view.features()
        out: np.ndarray = np.stack([cache.matrix(t.repo) @ u[i] for i, t in enumerate(tasks)])
        return out

    def route(self, tasks: Sequence[TaskRecord], view: PoolView) -> list[str]:
        """Greedy routes: the most probable model of the pool per task (ties: the earlier pool model)."""
        return greedy(view.ids, self.probabilities(tasks, view))
