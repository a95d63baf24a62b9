"""A batch of rows of a CSR feature matrix and the two products a GRPO step takes with it.

`take_rows(x, rows)` is `grpo.batch_rows(x, rows)` as plain arrays; `RowBatch.matmul(w)` and
`RowBatch.t_matmul(g)` are `x[rows] @ w` and `x[rows].T @ g` computed by the very scipy kernels those
operators call (`csr_matvecs`, and `csc_matvecs` on the transpose, which shares the CSR's arrays), on the
same arrays, so every sum is taken in the same order and the results are bitwise the same. What is left
out is the wrapping: building a `csr_matrix` per step, its format checks and its transpose object cost
several times the products themselves on a 64-row batch, taken thousands of times per fit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.sparse import _sparsetools


@dataclass(frozen=True)
class RowBatch:
    """Rows of a CSR matrix: `indptr` (rows + 1), `indices` and `data` (the rows' entries, in order)."""

    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray
    n_cols: int
    """Columns of the matrix the rows were taken from."""

    @property
    def n_rows(self) -> int:
        return len(self.indptr) - 1

    def matmul(self, w: np.ndarray) -> np.ndarray:
        """`x[rows] @ w` for a dense 2-D `w` of shape (n_cols, k): shape (rows, k)."""
        k = w.shape[1]
        out = np.zeros((self.n_rows, k), dtype=np.result_type(self.data, w))
        _sparsetools.csr_matvecs(
            self.n_rows, self.n_cols, k, self.indptr, self.indices, self.data, w.ravel(), out.ravel()
        )
        return out

    def t_matmul(self, g: np.ndarray) -> np.ndarray:
        """`x[rows].T @ g` for a dense 2-D `g` of shape (rows, k): shape (n_cols, k)."""
        k = g.shape[1]
        out = np.zeros((self.n_cols, k), dtype=np.result_type(self.data, g))
        _sparsetools.csc_matvecs(
            self.n_cols, self.n_rows, k, self.indptr, self.indices, self.data, g.ravel(), out.ravel()
        )
        return out


def take_rows(x: sp.csr_matrix, rows: np.ndarray) -> RowBatch:
    """The rows `rows` of `x` (repeats allowed), entries in `x`'s order (as `grpo.batch_rows`)."""
    starts = x.indptr[rows]
    lengths = x.indptr[rows + 1] - starts
    indptr = np.zeros(len(rows) + 1, dtype=x.indptr.dtype)
    np.cumsum(lengths, out=indptr[1:])
    take = np.repeat(starts - indptr[:-1], lengths) + np.arange(indptr[-1], dtype=x.indptr.dtype)
    # The kernels want one index type for indptr and indices (scipy's constructor unifies them too).
    return RowBatch(indptr, x.indices[take].astype(indptr.dtype, copy=False), x.data[take], x.shape[1])
