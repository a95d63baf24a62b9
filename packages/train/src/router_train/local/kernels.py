"""Compiled loops of a GRPO step (numba): a batch's two sparse products, the AdamW update, the sampling
of actions and the logit gradient's scatter.

Each is the loop scipy or numpy runs, written out so that it reads the batch's rows of the feature matrix
in place (no copy of the rows per step) and updates every weight in one pass, with the same
floating-point operations in the same order:

- `rows_matmul` is scipy's `csr_matvecs` over the batch rows: each output entry sums its row's entries
  in order, starting from 0;
- `rows_t_matmul` is its `csc_matvecs` on the batch's transpose: each weight's gradient adds the rows'
  terms in batch order;
- `adamw` is the update in `grpo.AdamW`'s docstring, element by element, as the numpy expressions over
  whole arrays that it replaced computed it;
- `inverse_cdf` is numpy's `cumsum` along each row and the count of running sums at or below each draw;
- `scatter_columns` is numpy's `add.at` of the advantages onto their actions' columns.

numba compiles without fast-math: nothing is reassociated or fused into an FMA, and `error_model="numpy"`
only drops the zero-division checks (the divisors are never 0), so the loops vectorise. The results are
bitwise scipy's and numpy's (`tests/test_train_exact_speedups.py` compares the bytes). Columns are taken
in groups of up to 4 with a register per column: a loop over a runtime column count costs several times
more for the 3 to 8 columns these products have.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

_jit = njit(cache=True, nogil=True, error_model="numpy")


@_jit
def rows_matmul(
    indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, rows: np.ndarray, w: np.ndarray
) -> np.ndarray:
    """`x[rows] @ w` for the CSR matrix x = (indptr, indices, data) and a dense C-ordered `w`."""
    k = w.shape[1]
    out = np.empty((rows.shape[0], k))
    for i in range(rows.shape[0]):
        lo, hi = indptr[rows[i]], indptr[rows[i] + 1]
        c = 0
        while c < k:
            width = min(4, k - c)
            s0 = s1 = s2 = s3 = 0.0
            if width == 4:
                for jj in range(lo, hi):
                    a, j = data[jj], indices[jj]
                    s0 += a * w[j, c]
                    s1 += a * w[j, c + 1]
                    s2 += a * w[j, c + 2]
                    s3 += a * w[j, c + 3]
                out[i, c + 3] = s3
            elif width == 3:
                for jj in range(lo, hi):
                    a, j = data[jj], indices[jj]
                    s0 += a * w[j, c]
                    s1 += a * w[j, c + 1]
                    s2 += a * w[j, c + 2]
            elif width == 2:
                for jj in range(lo, hi):
                    a, j = data[jj], indices[jj]
                    s0 += a * w[j, c]
                    s1 += a * w[j, c + 1]
            else:
                for jj in range(lo, hi):
                    s0 += data[jj] * w[indices[jj], c]
            out[i, c] = s0
            if width > 1:
                out[i, c + 1] = s1
            if width > 2:
                out[i, c + 2] = s2
            c += width
    return out


@_jit
def rows_t_matmul(
    indptr: np.ndarray,
    indices: np.ndarray,
    data: np.ndarray,
    rows: np.ndarray,
    g: np.ndarray,
    out: np.ndarray,
) -> None:
    """`out += x[rows].T @ g` for a dense C-ordered `g` (rows, k) and `out` (x's columns, k); with `out`
    zero on entry, scipy's product bitwise."""
    k = g.shape[1]
    for i in range(rows.shape[0]):
        lo, hi = indptr[rows[i]], indptr[rows[i] + 1]
        c = 0
        while c < k:
            width = min(4, k - c)
            if width == 4:
                g0, g1, g2, g3 = g[i, c], g[i, c + 1], g[i, c + 2], g[i, c + 3]
                for jj in range(lo, hi):
                    a, j = data[jj], indices[jj]
                    out[j, c] += a * g0
                    out[j, c + 1] += a * g1
                    out[j, c + 2] += a * g2
                    out[j, c + 3] += a * g3
            elif width == 3:
                g0, g1, g2 = g[i, c], g[i, c + 1], g[i, c + 2]
                for jj in range(lo, hi):
                    a, j = data[jj], indices[jj]
                    out[j, c] += a * g0
                    out[j, c + 1] += a * g1
                    out[j, c + 2] += a * g2
            elif width == 2:
                g0, g1 = g[i, c], g[i, c + 1]
                for jj in range(lo, hi):
                    a, j = data[jj], indices[jj]
                    out[j, c] += a * g0
                    out[j, c + 1] += a * g1
            else:
                g0 = g[i, c]
                for jj in range(lo, hi):
                    out[indices[jj], c] += data[jj] * g0
            c += width


@_jit
def adamw(
    p: np.ndarray,
    g: np.ndarray,
    m: np.ndarray,
    v: np.ndarray,
    betas: tuple[float, float],
    bias_corrections: tuple[float, float],
    lr: float,
    eps: float,
    decay: float,
) -> None:
    """One AdamW update of the flat arrays `p` (parameters) and `m`, `v` (moments) in place, for the
    gradient `g`: the update in `grpo.AdamW`'s docstring, per element (`decay` 1.0: no weight decay)."""
    b1, b2 = betas
    c1, c2 = bias_corrections
    one_b1, one_b2 = 1.0 - b1, 1.0 - b2
    for i in range(p.shape[0]):
        gi = g[i]
        mi = m[i] * b1 + one_b1 * gi
        vi = v[i] * b2 + one_b2 * gi * gi
        m[i], v[i] = mi, vi
        p[i] = p[i] * decay - lr * (mi / c1) / (math.sqrt(vi / c2) + eps)


@_jit
def inverse_cdf(probs: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Per row r and draw s: how many entries of the row's running sum of `probs` are <= `u[r, s]`, at
    most K - 1 (numpy's `cumsum` along the row, the comparisons counted; rounding can leave the last
    running sum a hair under 1, so a draw never falls off the end)."""
    n, k = probs.shape
    out = np.empty(u.shape, dtype=np.int64)
    cdf = np.empty(k)
    for r in range(n):
        acc = probs[r, 0]
        cdf[0] = acc
        for c in range(1, k):
            acc += probs[r, c]
            cdf[c] = acc
        for s in range(u.shape[1]):
            count = 0
            for c in range(k):
                if u[r, s] >= cdf[c]:
                    count += 1
            out[r, s] = min(count, k - 1)
    return out


@_jit
def scatter_columns(actions: np.ndarray, values: np.ndarray, k: int) -> np.ndarray:
    """(rows, k) zeros with `values[r, s]` added at column `actions[r, s]`, in row-major order (numpy's
    `add.at` over those indices)."""
    out = np.zeros((actions.shape[0], k))
    for r in range(actions.shape[0]):
        for s in range(actions.shape[1]):
            out[r, actions[r, s]] += values[r, s]
    return out
