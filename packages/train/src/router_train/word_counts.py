"""Word counts of texts as scikit-learn's `CountVectorizer` computes them, from per-text counts kept once.

`CountVectorizer` re-counts every word of every document in Python on each fit and each transform;
cross-validation fits and featurises the same few hundred issues thousands of times. Here each text is
tokenised and counted once (words as integer ids), and a fit or a transform is a few array operations
on those counts. The results are the vectorizer's exactly:

- `fit_vocabulary(texts, min_df, max_terms)` is `CountVectorizer(min_df=min_df, max_features=max_terms)`
  fitted on `texts`: the words of at least `min_df` documents, cut to the `max_terms` most frequent by
  total count with the vectorizer's own selection (`argsort` of the negated counts of the kept words in
  alphabetical order, the same array in the same order, so ties fall the same way), in alphabetical
  order, with their document frequencies;
- `count_matrix(texts, vocabulary)` is its `transform` with a fixed vocabulary: int64 counts in a CSR
  matrix with sorted column indices (int32), the layout later sums run over.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import scipy.sparse as sp

MAX_TEXTS = 4096
"""Texts whose counts are kept (as many as `text_features` keeps tokenised); an evaluation has ~500."""


class WordCounts:
    """Per-text word counts under one analyzer (text -> its tokens), kept for every text seen."""

    def __init__(self, analyze: Callable[[str], Sequence[str]]) -> None:
        self._analyze = analyze
        self._ids: dict[str, int] = {}
        self._words: list[str] = []
        self._rank: np.ndarray = np.zeros(0, dtype=np.int64)
        self._docs: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def _id(self, word: str) -> int:
        i = self._ids.get(word)
        if i is None:
            i = self._ids[word] = len(self._words)
            self._words.append(word)
        return i

    def doc(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        """(word ids, counts) of one text, each word once."""
        got = self._docs.get(text)
        if got is None:
            counts: dict[int, int] = {}
            for w in self._analyze(text):
                i = self._id(w)
                counts[i] = counts.get(i, 0) + 1
            got = (
                np.fromiter(counts, dtype=np.int64, count=len(counts)),
                np.fromiter(counts.values(), dtype=np.int64, count=len(counts)),
            )
            if len(self._docs) >= MAX_TEXTS:  # a long-running router sees ever new texts: drop the oldest
                del self._docs[next(iter(self._docs))]
            self._docs[text] = got
        return got

    def _alphabetical_rank(self) -> np.ndarray:
        """Rank of each known word in Python's string order (recomputed when words were added)."""
        if len(self._rank) != len(self._words):
            rank = np.empty(len(self._words), dtype=np.int64)
            rank[sorted(range(len(self._words)), key=self._words.__getitem__)] = np.arange(len(self._words))
            self._rank = rank
        return self._rank

    def fit_vocabulary(
        self, texts: Sequence[str], min_df: int, max_terms: int
    ) -> tuple[list[str], np.ndarray]:
        """(vocabulary in alphabetical order, document frequencies as int64); an empty vocabulary where
        the vectorizer raises (no word at all, or none in `min_df` documents)."""
        docs = [self.doc(t) for t in texts]
        if not docs or not any(len(ids) for ids, _ in docs):
            return [], np.zeros(0, dtype=np.int64)
        ids = np.concatenate([d[0] for d in docs])
        counts = np.concatenate([d[1] for d in docs])
        n_words = len(self._words)
        df = np.bincount(ids, minlength=n_words)
        tf = np.zeros(n_words, dtype=np.int64)
        np.add.at(tf, ids, counts)
        present = np.flatnonzero(df)
        order = present[np.argsort(self._alphabetical_rank()[present])]  # the vectorizer's column order
        dfs, tfs = df[order].astype(np.int64), tf[order]
        mask = dfs >= min_df  # max_df is 1.0: every document count passes
        if mask.sum() > max_terms:
            mask_inds = (-tfs[mask]).argsort()[:max_terms]  # as `CountVectorizer._limit_features`
            new_mask = np.zeros(len(dfs), dtype=bool)
            new_mask[np.where(mask)[0][mask_inds]] = True
            mask = new_mask
        kept = np.where(mask)[0]
        return [self._words[i] for i in order[kept]], dfs[kept]

    def count_matrix(self, texts: Sequence[str], vocabulary: Sequence[str]) -> sp.csr_matrix:
        """Counts of `vocabulary`'s words (distinct, lower case) per text: (texts, vocabulary) int64 CSR."""
        docs = [self.doc(t) for t in texts]  # first: counting may add words
        cols = [self._id(w) for w in vocabulary]
        column = np.full(len(self._words), -1, dtype=np.int64)
        column[cols] = np.arange(len(cols))
        indices: list[np.ndarray] = []
        data: list[np.ndarray] = []
        indptr = np.zeros(len(texts) + 1, dtype=np.int32)
        for r, (ids, counts) in enumerate(docs):
            c = column[ids]
            keep = np.flatnonzero(c >= 0)
            by_col = keep[np.argsort(c[keep])]
            indices.append(c[by_col])
            data.append(counts[by_col])
            indptr[r + 1] = indptr[r] + len(by_col)
        return sp.csr_matrix(
            (
                np.concatenate([np.zeros(0, dtype=np.int64), *data]),
                np.concatenate([np.zeros(0, dtype=np.int32), *indices]).astype(np.int32),
                indptr,
            ),
            shape=(len(texts), len(cols)),
        )
