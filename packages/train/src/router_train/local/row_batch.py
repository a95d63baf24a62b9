"""A batch of rows of a CSR feature matrix and the two products a GRPO step takes with it.

`take_rows(x, rows)` names the rows; `RowBatch.matmul(w)` and `RowBatch.t_matmul(g)` are `x[rows] @ w`
and `x[rows].T @ g`, bitwise what scipy computes (the loops of its `csr_matvecs` and `csc_matvecs`,
compiled in `kernels`), read from `x`'s arrays in place. What is left out is the copy of the rows and
the wrapping: building a `csr_matrix` per step, its format checks and its transpose object cost several
times the products themselves on a 64-row batch, taken thousands of times per fit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from router_train.local import kernels


@dataclass(frozen=True)
class RowBatch:
    """Rows `rows` (repeats allowed, in batch order) of the CSR matrix (`indptr`, `indices`, `data`)."""

    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray
    rows: np.ndarray
    """int64 row numbers into the matrix."""
    n_cols: int
    """Columns of the matrix."""

    @property
    def n_rows(self) -> int:
        return len(self.rows)

    def matmul(self, w: np.ndarray) -> np.ndarray:
        """`x[rows] @ w` for a dense 2-D `w` of shape (n_cols, k): shape (rows, k)."""
        return kernels.rows_matmul(self.indptr, self.indices, self.data, self.rows, _dense(w))

    def t_matmul(self, g: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """`x[rows].T @ g` for a dense 2-D `g` of shape (rows, k): shape (n_cols, k). `out`: a C-ordered
        float64 array of that shape to write it into (overwritten), instead of a new one."""
        if out is None:
            out = np.zeros((self.n_cols, g.shape[1]))
        elif out.shape != (self.n_cols, g.shape[1]) or out.dtype != np.float64 or not out.flags.c_contiguous:
            raise ValueError(f"t_matmul's out must be C-ordered float64 of shape {(self.n_cols, g.shape[1])}")
        else:
            out.fill(0.0)
        kernels.rows_t_matmul(self.indptr, self.indices, self.data, self.rows, _dense(g), out)
        return out


def _dense(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.float64)


def take_rows(x: sp.csr_matrix, rows: np.ndarray) -> RowBatch:
    """The rows `rows` of `x` (float64 CSR), as `grpo.batch_rows` takes them."""
    if x.dtype != np.float64:
        raise ValueError(f"take_rows needs float64 features, got {x.dtype}")
    return RowBatch(x.indptr, x.indices, x.data, np.asarray(rows, dtype=np.int64), x.shape[1])
