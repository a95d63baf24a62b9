"""Task -> feature vector for the linear router: TF-IDF or hashed text, repository, length, a pre-pass's
task features.

Fitting (idf, vocabularies) reads the train split only; the fitted state is plain data so a checkpoint
carries it and a loaded policy featurises new tasks exactly as training did.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp
from pydantic import Field

from router_oracle.infra.frozen_model import FrozenModel
from router_oracle.table import TaskRecord
from router_oracle.task_input import TaskInput
from router_train.local.config import FeatureConfig, LocalTrainError
from router_train.local.irt_features import IrtFeatureState, fit_irt_features, irt_columns
from router_train.task_features import FeatureScaling
from router_train.text_features import fit_tfidf, tfidf_matrix

if TYPE_CHECKING:
    from sklearn.feature_extraction.text import HashingVectorizer


class FeatureState(FrozenModel):
    """What feature fitting learned from the train split."""

    vocabulary: list[str] = Field(default_factory=list)
    """`tfidf` text: the words, in column order (empty otherwise)."""
    idf: list[float] = Field(default_factory=list)
    """`tfidf` text: each word's idf."""
    bucket_weights: list[float] | None
    """`hashed` text, per hash bucket: its idf (1.0 when `FeatureConfig.idf` is off), 0.0 for buckets
    in fewer than `min_df` train issues; None when neither applies (every bucket weighs 1)."""
    repos: list[str]
    """Repository vocabulary of the one-hot, sorted (empty when `FeatureConfig.repo` is off)."""
    difficulties: list[str]
    """Difficulty vocabulary of the one-hot, sorted (empty when `FeatureConfig.difficulty` is off)."""
    irt: IrtFeatureState | None = None
    """`FeatureConfig.irt`: the IRT fit on the train tasks behind the per-model columns (None when off)."""
    task_features: FeatureScaling | None = None
    """`FeatureConfig.task_features`: the columns and their standardisation on the train tasks (None
    when off)."""


def _vectorizer(cfg: FeatureConfig) -> HashingVectorizer:
    # Stateless hashing: no vocabulary to store, and unseen words still land in a bucket. Imported here:
    # scikit-learn (scipy.stats and pandas with it) is most of a routing process's start, and only the
    # `hashed` text mode reads it.
    from sklearn.feature_extraction.text import HashingVectorizer

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


def fit_features(
    cfg: FeatureConfig, tasks: Sequence[TaskRecord], pool_ids: Sequence[str] = ()
) -> FeatureState:
    """Fit bucket weights (idf, min_df), vocabularies and, with `cfg.irt`, the IRT fit for the pool
    `pool_ids` on (train) tasks."""
    uniq = unique_tasks(tasks)
    irt = None
    if cfg.irt:
        if not pool_ids:
            raise LocalTrainError("the IRT features need the pool's model ids (this trainer gives none)")
        try:
            irt = fit_irt_features(uniq, pool_ids)
        except ValueError as exc:
            raise LocalTrainError(f"cannot fit the IRT features: {exc}") from exc
    weights: list[float] | None = None
    vocabulary: list[str] = []
    idf: list[float] = []
    if cfg.text == "tfidf":
        vocabulary, idf = fit_tfidf(uniq)
    if cfg.text == "hashed" and (cfg.idf or cfg.min_df > 1):
        counts = _vectorizer(cfg).transform([t.problem_statement for t in uniq])
        df = np.bincount(counts.indices, minlength=counts.shape[1]).astype(np.float64)
        n = float(len(uniq))
        # scikit-learn's smoothed idf: as if one extra document held every term.
        w = np.log((1.0 + n) / (1.0 + df)) + 1.0 if cfg.idf else np.ones_like(df)
        weights = [float(v) for v in np.where(df >= cfg.min_df, w, 0.0)]
    scaling = None
    if cfg.task_features is not None:
        scaling = FeatureScaling.fit_source(cfg.task_features, [t.instance_id for t in uniq])
    repos = sorted({t.repo for t in uniq}) if cfg.repo else []
    diffs = sorted({t.difficulty for t in uniq if t.difficulty is not None}) if cfg.difficulty else []
    return FeatureState(
        vocabulary=vocabulary,
        idf=idf,
        bucket_weights=weights,
        repos=repos,
        difficulties=diffs,
        irt=irt,
        task_features=scaling,
    )


def _one_hot(values: Sequence[str | None], vocab: list[str]) -> sp.csr_matrix:
    index = {v: i for i, v in enumerate(vocab)}
    rows = [r for r, v in enumerate(values) if v is not None and v in index]
    cols = [index[v] for v in values if v is not None and v in index]
    data = np.ones(len(rows), dtype=np.float64)
    return sp.csr_matrix((data, (rows, cols)), shape=(len(values), len(vocab)))


def featurize(cfg: FeatureConfig, state: FeatureState, tasks: Sequence[TaskInput]) -> sp.csr_matrix:
    """Feature matrix, one row per task; column count is `feature_dim(cfg, state)`."""
    blocks: list[sp.csr_matrix] = [sp.csr_matrix((len(tasks), 0), dtype=np.float64)]
    if cfg.text == "tfidf":
        blocks.append(tfidf_matrix(tasks, state.vocabulary, state.idf))
    if cfg.text == "hashed":
        text = _vectorizer(cfg).transform([t.problem_statement for t in tasks]).tocsr()
        if cfg.sublinear_tf:
            text.data = 1.0 + np.log(text.data)
        if state.bucket_weights is not None:
            text = text @ sp.diags(np.asarray(state.bucket_weights, dtype=np.float64))
        norms = np.sqrt(np.asarray(text.multiply(text).sum(axis=1)).ravel())
        blocks.append(sp.csr_matrix(sp.diags(1.0 / np.where(norms > 0, norms, 1.0)) @ text))
    if cfg.repo:
        blocks.append(_one_hot([t.repo for t in tasks], state.repos))
    if cfg.length:
        lengths = [[math.log1p(len(t.problem_statement)) / 10.0] for t in tasks]
        blocks.append(sp.csr_matrix(np.asarray(lengths, dtype=np.float64).reshape(len(tasks), 1)))
    if cfg.difficulty:
        blocks.append(_one_hot([t.difficulty for t in tasks], state.difficulties))
    if cfg.irt:
        if state.irt is None:
            raise LocalTrainError("the features ask for IRT columns but their fitted state has no IRT fit")
        blocks.append(sp.csr_matrix(irt_columns(state.irt, tasks)))
    if cfg.task_features is not None:
        if state.task_features is None:
            raise LocalTrainError("the features ask for task-feature columns but their fitted state has none")
        ids = [t.instance_id for t in tasks]
        blocks.append(sp.csr_matrix(state.task_features.read(ids, cfg.task_features)))
    return sp.csr_matrix(sp.hstack(blocks, format="csr"))


def feature_dim(cfg: FeatureConfig, state: FeatureState) -> int:
    return (
        len(state.vocabulary)
        + (2**cfg.hash_bits if cfg.text == "hashed" else 0)
        + (len(state.repos) if cfg.repo else 0)
        + (1 if cfg.length else 0)
        + (len(state.difficulties) if cfg.difficulty else 0)
        + (len(state.irt.pool.models) if cfg.irt and state.irt is not None else 0)
        + (len(state.task_features.columns) if cfg.task_features and state.task_features else 0)
    )
