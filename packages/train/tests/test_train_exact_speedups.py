"""The faster paths of the evaluations compute the very same floats as the plain ones they replace.

`local.row_batch` (a batch's products without a scipy matrix per step), `local.kernels` (the compiled
AdamW, sampling and logit-gradient loops), `word_counts` (the TF-IDF vocabulary and counts without
re-counting every text) and `local.lockstep` (many local-grpo trainings in lockstep) must give bitwise
what scipy, numpy's expressions, scikit-learn's `CountVectorizer` and `fit_policy` give: the any-pool
report is compared byte for byte across versions.
"""

from __future__ import annotations

import itertools
import random
from typing import cast

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
from router_train.local.config import LocalTrainConfig
from router_train.local.grpo import AdamW, batch_rows, logits_gradient, sample_actions
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
    row_sets = (rng.integers(0, 120, size=64), np.asarray([5, 5, 0, 119]), np.zeros(0, dtype=np.int64))
    # 1 to 9 columns: every width of the kernels' column groups (4, 3, 2, 1) and groups after the first.
    for k, rows in itertools.product(range(1, 10), row_sets):
        w = rng.standard_normal((x.shape[1], k))
        batch = take_rows(x, rows)
        plain = batch_rows(x, rows)
        g = rng.standard_normal((len(rows), k))
        assert batch.matmul(w).tobytes() == np.asarray(plain @ w).tobytes()
        assert batch.t_matmul(g).tobytes() == np.asarray(plain.T @ g).tobytes()
        buffer = np.full((x.shape[1], k), 7.0)  # `out=`: overwritten, not added to
        assert batch.t_matmul(g, out=buffer) is buffer
        assert buffer.tobytes() == np.asarray(plain.T @ g).tobytes()


def test_row_batch_products_with_64_bit_indices_and_odd_values() -> None:
    """int64 index arrays (the lockstep's stacked matrix), unsorted columns, repeated rows, and values
    whose sums round differently in another order."""
    rng = np.random.default_rng(8)
    dense = rng.standard_normal((30, 50)) * 10.0 ** rng.integers(-8, 9, size=(30, 50))
    dense[rng.random((30, 50)) < 0.7] = 0.0
    x = sp.csr_matrix(dense)
    x = sp.csr_matrix((x.data[::-1].copy(), x.indices[::-1].astype(np.int64), x.indptr.astype(np.int64)))
    rows = rng.integers(0, 30, size=200)
    for k in (3, 6):
        w = rng.standard_normal((50, k)) * 1e6
        g = rng.standard_normal((200, k))
        plain = batch_rows(x, rows)
        assert take_rows(x, rows).matmul(w).tobytes() == np.asarray(plain @ w).tobytes()
        assert take_rows(x, rows).t_matmul(g).tobytes() == np.asarray(plain.T @ g).tobytes()
    with pytest.raises(ValueError, match="float64"):
        take_rows(x.astype(np.float32), rows)
    with pytest.raises(ValueError, match="shape"):
        take_rows(x, rows).t_matmul(np.ones((200, 3)), out=np.zeros((49, 3)))


def _numpy_adamw(
    p: np.ndarray, g: np.ndarray, m: np.ndarray, v: np.ndarray, t: int, decay: bool, lr: float, wd: float
) -> None:
    """AdamW as numpy expressions over whole arrays (what `grpo.AdamW` computed before its kernel)."""
    b1, b2, eps = 0.9, 0.999, 1e-8
    m *= b1
    m += (1.0 - b1) * g
    v *= b2
    v += (1.0 - b2) * g * g
    if decay and wd:
        p *= 1.0 - lr * wd
    p -= lr * (m / (1.0 - b1**t)) / (np.sqrt(v / (1.0 - b2**t)) + eps)


@pytest.mark.parametrize("wd", [0.0, 2.0])
def test_adamw_is_numpys_expressions_bitwise(wd: float) -> None:
    rng = np.random.default_rng(int(wd))
    w, b = np.zeros((37, 5)), np.zeros((4, 5))
    ref_w, ref_b = w.copy(), b.copy()
    moments = [np.zeros_like(a) for a in (w, w, b, b)]
    opt = AdamW((37, 5), lr=0.05, betas=(0.9, 0.999), weight_decay=wd, shape_b=(4, 5))
    for t in range(1, 60):
        gw = rng.standard_normal((37, 5)) * 10.0 ** rng.integers(-9, 3, size=(37, 5))
        gw[rng.random((37, 5)) < 0.3] = 0.0  # weights with no gradient this step still move
        gb = rng.standard_normal((4, 5))
        opt.step(w, b, gw, gb)
        _numpy_adamw(ref_w, gw, moments[0], moments[1], t, True, 0.05, wd)
        _numpy_adamw(ref_b, gb, moments[2], moments[3], t, False, 0.05, wd)
        assert w.tobytes() == ref_w.tobytes() and b.tobytes() == ref_b.tobytes()
    with pytest.raises(ValueError, match="C-contiguous"):
        opt.step(np.zeros((5, 37)).T, b, gw, gb)


def test_sampling_and_logit_gradient_are_numpys_bitwise() -> None:
    rng = np.random.default_rng(5)
    for k in (1, 2, 3, 7):
        logits = rng.standard_normal((300, k)) * 20.0
        probs = np.exp(logits - logits.max(axis=1, keepdims=True))
        probs /= probs.sum(axis=1, keepdims=True)
        probs[:3] = 1.0 / k  # equal shares: running sums that may end a hair under 1
        seed = int(rng.integers(1 << 30))
        actions = sample_actions(probs, 8, np.random.default_rng(seed))
        cdf = np.cumsum(probs, axis=1)
        # Draws from the seed, then draws exactly at a running sum and just under 1 (the clamp to K - 1).
        for u in (
            np.random.default_rng(seed).random((300, 8)),
            np.repeat(cdf[:, :1], 8, axis=1),
            np.full((300, 8), np.nextafter(1.0, 0.0)),
        ):
            got = sample_actions(probs, 8, cast(np.random.Generator, _FixedDraws(u)))
            want = np.minimum(np.sum(u[:, :, None] >= cdf[:, None, :], axis=2), k - 1)
            assert got.dtype == want.dtype and got.tobytes() == want.tobytes()
        assert actions.tobytes() == sample_actions(probs, 8, np.random.default_rng(seed)).tobytes()

        adv = rng.standard_normal((300, 8))
        onehot = np.zeros((300, k))
        np.add.at(onehot, (np.repeat(np.arange(300), 8), actions.ravel()), adv.ravel())
        want_g = -(onehot - adv.sum(axis=1, keepdims=True) * probs) / (300 * 8)
        assert logits_gradient(probs, actions, adv).tobytes() == want_g.tobytes()


class _FixedDraws:
    """A generator whose `random` returns given draws."""

    def __init__(self, draws: np.ndarray) -> None:
        self.draws = draws

    def random(self, shape: tuple[int, int]) -> np.ndarray:
        assert shape == self.draws.shape
        return self.draws


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


def test_the_word_analyzer_is_the_vectorizers(bundled: OracleTable) -> None:
    # `text_features` tokenises without scikit-learn (routing does not import it): the same words.
    analyze = CountVectorizer().build_analyzer()
    edge = [
        "",
        "a b",
        "Ünïcode ÉCOLE straße İstanbul ǅemal",
        "x_1 __init__ 3.14 don't foo-bar",
        "日本語 テスト",
    ]
    for text in [*_texts(bundled.tasks), *edge]:
        assert list(text_features._words(text)) == analyze(text)


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
