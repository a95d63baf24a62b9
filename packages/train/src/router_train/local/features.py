"""Task -> feature vector for the linear router: hashed issue text, repository, length.

Fitting (idf, vocabularies) reads the train split only; the fitted state is plain data so a checkpoint
carries it and a loaded policy featurises new tasks exactly as training did.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp
from pydantic import BaseModel, ConfigDict
from sklearn.feature_extraction.text import HashingVectorizer

from router_oracle.table import TaskRecord
from router_train.local.config import FeatureConfig


class FeatureState(BaseModel):
    """What feature fitting learned from the train split."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    idf: list[float] | None
    """Inverse document frequency per hash bucket (None when `FeatureConfig.idf` is off)."""
    repos: list[str]
    """Repository vocabulary of the one-hot, sorted (empty when `FeatureConfig.repo` is off)."""
    difficulties: list[str]
    """Difficulty vocabulary of the one-hot, sorted (empty when `FeatureConfig.difficulty` is off)."""


def _vectorizer(cfg: FeatureConfig) -> HashingVectorizer:
    # Stateless hashing: no vocabulary to store, and unseen words still land in a bucket.
    return HashingVectorizer(
        n_features=2**cfg.hash_bits,
        ngram_range=(1, cfg.ngram_max),
        alternate_sign=False,
        norm=None,
        dtype=np.float64,
    )


def unique_tasks(tasks: Sequence[TaskRecord]) -> list[TaskRecord]:
    """Each task once, in instance-id order: upsampled train lists repeat tasks, fitting counts each once."""
    seen: dict[str, TaskRecord] = {}
    for t in tasks:
        seen.setdefault(t.instance_id, t)
    return [seen[k] for k in sorted(seen)]


def fit_features(cfg: FeatureConfig, tasks: Sequence[TaskRecord]) -> FeatureState:
    """Fit idf and vocabularies on (train) tasks."""
    uniq = unique_tasks(tasks)
    idf: list[float] | None = None
    if cfg.text and cfg.idf:
        counts = _vectorizer(cfg).transform([t.problem_statement for t in uniq])
        df = np.bincount(counts.indices, minlength=counts.shape[1]).astype(np.float64)
        n = float(len(uniq))
        # scikit-learn's smoothed idf: as if one extra document held every term.
        idf = [float(v) for v in np.log((1.0 + n) / (1.0 + df)) + 1.0]
    repos = sorted({t.repo for t in uniq}) if cfg.repo else []
    diffs = sorted({t.difficulty for t in uniq if t.difficulty is not None}) if cfg.difficulty else []
    return FeatureState(idf=idf, repos=repos, difficulties=diffs)


def _one_hot(values: Sequence[str | None], vocab: list[str]) -> sp.csr_matrix:
    index = {v: i for i, v in enumerate(vocab)}
    rows = [r for r, v in enumerate(values) if v is not None and v in index]
    cols = [index[v] for v in values if v is not None and v in index]
    data = np.ones(len(rows), dtype=np.float64)
    return sp.csr_matrix((data, (rows, cols)), shape=(len(values), len(vocab)))


def featurize(cfg: FeatureConfig, state: FeatureState, tasks: Sequence[TaskRecord]) -> sp.csr_matrix:
    """Feature matrix, one row per task; column count is `feature_dim(cfg, state)`."""
    blocks: list[sp.csr_matrix] = [sp.csr_matrix((len(tasks), 0), dtype=np.float64)]
    if cfg.text:
        text = _vectorizer(cfg).transform([t.problem_statement for t in tasks]).tocsr()
        if state.idf is not None:
            text = text @ sp.diags(np.asarray(state.idf, dtype=np.float64))
        norms = np.sqrt(np.asarray(text.multiply(text).sum(axis=1)).ravel())
        blocks.append(sp.csr_matrix(sp.diags(1.0 / np.where(norms > 0, norms, 1.0)) @ text))
    if cfg.repo:
        blocks.append(_one_hot([t.repo for t in tasks], state.repos))
    if cfg.length:
        lengths = [[math.log1p(len(t.problem_statement)) / 10.0] for t in tasks]
        blocks.append(sp.csr_matrix(np.asarray(lengths, dtype=np.float64).reshape(len(tasks), 1)))
    if cfg.difficulty:
        blocks.append(_one_hot([t.difficulty for t in tasks], state.difficulties))
    return sp.csr_matrix(sp.hstack(blocks, format="csr"))


def feature_dim(cfg: FeatureConfig, state: FeatureState) -> int:
    return (
        (2**cfg.hash_bits if cfg.text else 0)
        + (len(state.repos) if cfg.repo else 0)
        + (1 if cfg.length else 0)
        + (len(state.difficulties) if cfg.difficulty else 0)
    )
