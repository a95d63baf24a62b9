"""The TF-IDF of a task's text: one definition, shared by the TF-IDF baselines and the local router.

Fitting reads train tasks only and yields plain data (a vocabulary and its idf), so a checkpoint can
carry it and rebuild exactly the same features on any machine.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

import numpy as np
import scipy.sparse as sp

from router_oracle.table import TaskRecord
from router_oracle.task_input import TaskInput
from router_train.word_counts import WordCounts

MAX_TERMS = 5000
"""Vocabulary size: the most frequent words. Bigrams and more terms cost 4x the time on the bundled
table and changed no baseline prediction."""
MIN_DF = 2
"""A word must occur in at least this many train tasks: a word of one task only lets a model memorise
that task instead of generalising."""


def task_text(task: TaskInput) -> str:
    """What the text features read: the repository and the issue (never outcomes)."""
    return f"{task.repo}\n{task.problem_statement}"


_TOKEN = re.compile(r"(?u)\b\w\w+\b")
"""scikit-learn's default word analyzer (`CountVectorizer().build_analyzer()`: the text lowercased, then
this token pattern, its default), written out so that routing imports no scikit-learn (with scipy.stats
and pandas, most of serve's start); `test_train_exact_speedups.py` holds it to the vectorizer's."""


@lru_cache(maxsize=4096)
def _words(text: str) -> tuple[str, ...]:
    # Cross-validation featurises the same issues dozens of times; tokenising dominates otherwise.
    return tuple(_TOKEN.findall(text.lower()))


_COUNTS = WordCounts(_words)
"""Every text's word counts, counted once per process."""


def fit_tfidf(tasks: Sequence[TaskRecord]) -> tuple[list[str], list[float]]:
    """(vocabulary, idf) fitted on `tasks`: scikit-learn's smoothed idf, ln((1 + n) / (1 + df)) + 1."""
    vocabulary, idf = _fit_texts(tuple(task_text(t) for t in tasks))
    return list(vocabulary), list(idf)


@lru_cache(maxsize=64)
def _fit_texts(texts: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[float, ...]]:
    # Cached on the exact texts in order: cross-validation fits every router of a partition (each pool's
    # references, every held-out group's any-pool router) on the same train tasks.
    # `CountVectorizer(analyzer=_words, min_df=MIN_DF, max_features=MAX_TERMS)`'s vocabulary, from counts
    # kept per text (`word_counts`); empty where the vectorizer raises (no word reaches MIN_DF).
    words, doc_freq = _COUNTS.fit_vocabulary(texts, MIN_DF, MAX_TERMS)
    if not words:
        return (), ()
    df = doc_freq.astype(np.float64)
    n = float(len(texts))
    return tuple(words), tuple(float(v) for v in np.log((1.0 + n) / (1.0 + df)) + 1.0)


def tfidf_matrix(
    tasks: Sequence[TaskInput], vocabulary: Sequence[str], idf: Sequence[float]
) -> sp.csr_matrix:
    """One l2-normalised row per task: (1 + log count) x idf over `vocabulary` (what scikit-learn's
    `TfidfVectorizer(sublinear_tf=True)` computes); words outside the vocabulary are ignored."""
    if not vocabulary:
        return sp.csr_matrix((len(tasks), 0), dtype=np.float64)
    # A copy: callers own their matrix; the cached one stays as computed.
    return _matrix(tuple(task_text(t) for t in tasks), tuple(vocabulary), tuple(idf)).copy()


@lru_cache(maxsize=64)
def _matrix(texts: tuple[str, ...], vocabulary: tuple[str, ...], idf: tuple[float, ...]) -> sp.csr_matrix:
    # Cached: the same tasks are featurised with the same vocabulary by every router of a partition.
    if len(set(vocabulary)) == len(vocabulary) and not any(map(str.isupper, "".join(vocabulary))):
        # The vectorizer's `transform` counts, from counts kept per text (`word_counts`).
        counts = _COUNTS.count_matrix(texts, vocabulary)
    else:  # a hand-made vocabulary: the vectorizer itself, with its errors and warnings
        from sklearn.feature_extraction.text import CountVectorizer

        counts = CountVectorizer(analyzer=_words, vocabulary=list(vocabulary)).transform(texts)
    x = sp.csr_matrix(counts, dtype=np.float64)
    x.data = 1.0 + np.log(x.data)
    x = sp.csr_matrix(x @ sp.diags(np.asarray(idf, dtype=np.float64)))
    norms = np.sqrt(np.asarray(x.multiply(x).sum(axis=1)).ravel())
    return sp.csr_matrix(sp.diags(1.0 / np.where(norms > 0, norms, 1.0)) @ x)
