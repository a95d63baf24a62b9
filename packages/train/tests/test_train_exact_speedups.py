"""The faster paths of the evaluations compute the very same floats as the plain ones they replace.

`local.row_batch` (a batch's products without a scipy matrix per step), `word_counts` (the TF-IDF
vocabulary and counts without re-counting every text) and `local.lockstep` (many local-grpo trainings in
lockstep) must give bitwise what scipy, scikit-learn's `CountVectorizer` and `fit_policy` give: the
any-pool report is compared byte for byte across versions.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
import scipy.sparse as sp
from evaluate_tables import IDS, make_table
from sklearn.feature_extraction.text import CountVectorizer

from router_frontier_rl.bundled import bundled_table_path
from router_oracle.table import OracleTable, TaskRecord
from router_oracle.table_check import load_table
from router_train import text_features
from router_train.evaluate.fitted import LocalFitter
from router_train.local import LocalTrainConfig
from router_train.local.grpo import batch_rows
from router_train.local.lockstep import fit_policies
from router_train.local.row_batch import take_rows
from router_train.local.trainer import fit_policy
from router_train.word_counts import WordCounts


@pytest.fixture(scope="module")
def bundled() -> OracleTable:
    return load_table(bundled_table_path())


def _texts(tasks: list[TaskRecord]) -> list[str]:
    return [text_features.task_text(t) for t in tasks]


def test_row_batch_products_are_scipys(bundled: OracleTable) -> None:
    tasks = bundled.tasks[:120]
    vocabulary, idf = text_features.fit_tfidf(tasks)
    x = text_features.tfidf_matrix(tasks, vocabulary, idf)
    rng = np.random.default_rng(3)
    w = rng.standard_normal((x.shape[1], 4))
    for rows in (rng.integers(0, 120, size=64), np.asarray([5, 5, 0, 119]), np.zeros(0, dtype=np.int64)):
        batch = take_rows(x, rows)
        plain = batch_rows(x, rows)
        g = rng.standard_normal((len(rows), 4))
        assert batch.matmul(w).tobytes() == np.asarray(plain @ w).tobytes()
        assert batch.t_matmul(g).tobytes() == np.asarray(plain.T @ g).tobytes()


def _vectorizer_fit(texts: list[str], limit: int) -> tuple[list[str], np.ndarray]:
    cv = CountVectorizer(analyzer=text_features._words, min_df=2, max_features=limit)
    x = cv.fit_transform(texts)
    words = sorted(cv.vocabulary_, key=cv.vocabulary_.__getitem__)
    return words, np.bincount(sp.csr_matrix(x).indices, minlength=len(words))


def test_word_counts_are_the_vectorizers(bundled: OracleTable) -> None:
    counts = WordCounts(text_features._words)
    rnd = random.Random(0)
    for size, limit in ((400, 5000), (150, 300), (60, 7), (30, 1)):  # small limits: ties in the cut
        texts = _texts(rnd.sample(bundled.tasks, size))
        words, df = counts.fit_vocabulary(texts, 2, limit)
        want_words, want_df = _vectorizer_fit(texts, limit)
        assert words == want_words and df.tolist() == want_df.tolist()
        others = [*_texts(rnd.sample(bundled.tasks, 40)), "", "Unseen WORDS zzqx only"]
        got = counts.count_matrix(others, words)
        want = CountVectorizer(analyzer=text_features._words, vocabulary=words).transform(others)
        assert got.dtype == want.dtype and got.shape == want.shape
        for part in ("indptr", "indices", "data"):
            assert getattr(got, part).tolist() == getattr(want, part).tolist()
    # No word in two texts: the vectorizer raises, the counts give an empty vocabulary.
    assert counts.fit_vocabulary(["alpha beta", "gamma"], 2, 10)[0] == []
    assert counts.fit_vocabulary([], 2, 10)[0] == []


def test_tfidf_of_a_hand_made_vocabulary_still_goes_through_the_vectorizer() -> None:
    with pytest.raises(ValueError):  # the vectorizer's own refusal of a repeated word
        text_features.tfidf_matrix(make_table(4).tasks, ["issue", "issue"], [1.0, 1.0])


@pytest.mark.parametrize(
    "cfg",
    [
        LocalTrainConfig(steps=30, tasks_per_step=16, shift_folds=2),
        LocalTrainConfig(steps=25, tasks_per_step=8, shift_folds=0, average_tail=0.0),
        LocalTrainConfig(steps=20, tasks_per_step=16, max_grad_norm=0.01, advantage="std", upsample=False),
    ],
)
def test_lockstep_fits_are_fit_policys_bitwise(cfg: LocalTrainConfig) -> None:
    tasks = make_table(120, seed=4).tasks
    # Partitions of different sizes, one too small for the prior shift's folds.
    train_sets = [tasks[:90], tasks[30:], tasks[::2], tasks[:15]]
    alone = [fit_policy(cfg, train, IDS) for train in train_sets]
    together = fit_policies(cfg, train_sets, IDS)
    for a, b in zip(alone, together, strict=True):
        assert a.policy.weights.shape == b.weights.shape
        assert a.policy.weights.tobytes() == b.weights.tobytes()
        assert a.policy.bias.tobytes() == b.bias.tobytes()
        assert a.policy.feature_state == b.feature_state
    fitter = LocalFitter("local-grpo", cfg, IDS)
    folds = [(train, tasks[100:]) for train in train_sets]
    many = fitter.fit_scored_many(folds)
    for (train, test), (decisions, scores) in zip(folds, many, strict=True):
        want_decisions, want_scores = fitter.fit_scored(train, test, 0)
        assert decisions == want_decisions
        assert scores[0].train.tobytes() == want_scores[0].train.tobytes()
        assert scores[0].test.tobytes() == want_scores[0].test.tobytes()


def test_lockstep_fits_on_real_issues(bundled: OracleTable) -> None:
    cfg = LocalTrainConfig(steps=12, shift_folds=2)
    tasks, pool = bundled.tasks, bundled.pool.ids
    train_sets = [tasks[:300], tasks[200:]]
    alone = [fit_policy(cfg, train, pool).policy for train in train_sets]
    for a, b in zip(alone, fit_policies(cfg, train_sets, pool), strict=True):
        assert a.weights.tobytes() == b.weights.tobytes() and a.bias.tobytes() == b.bias.tobytes()
