"""The Gram matrix ``X' diag(s) X`` of a CSR matrix, accumulated row by row.

    csr_gram(X, s) == (X.T @ diag(s) @ X).toarray()

(``s`` empty: all weights 1). Row ``i`` adds ``s_i x_ij x_ik`` for every pair of its
nonzeros, so a pass costs ``sum_i nnz_i^2 / 2`` multiply-adds into a dense ``d x d``
array (only built for ``d <= 4096``, see ``linbook.linear._moments``). scipy's sparse
product computes the same sums but builds a sparse result and its transpose first,
about 8x slower on a tall 1 % dense matrix.

Each pair lands at a scattered place of ``G``; beyond ``TILE_ROWS`` columns (``G`` above
a few MB) those writes leave the cache, and a pass costs 30-40 ns a pair on a busy
machine against 7 ns quiet. So the rows of ``G`` are filled a band of ``TILE_ROWS``
at a time: each band is one pass over the rows of ``X`` (each row's entries from the
band's first column on), and only that band is written. The sums are the same,
added in the same order (row by row), so the result has the same bits for every band
width. The upper triangle is accumulated and mirrored, so the result is exactly symmetric.
"""

import numpy as np

from . import _cache_load  # noqa: F401  (imports numba: before it, see the module)
from numba import njit

#: Rows of ``G`` filled per pass over ``X`` (128 x 1000 columns: a 1 MB band). Measured on 100k x 1000
#: (1 %), busy machine: bands of 16 / 64 / 128 / 256 / all rows 0.19 / 0.058 / 0.046 / 0.062 / 0.16 s;
#: below ``4 x TILE_ROWS`` columns one pass (all rows) is as fast.
TILE_ROWS = 128


def csr_gram(X, s):
    """``X' diag(s) X`` (dense, ``d x d``) of a scipy CSR matrix ``X`` (``s`` empty: unweighted)."""
    if not X.has_sorted_indices:
        X = X.sorted_indices()           # a copy; duplicates stay, next to each other
    d = X.shape[1]
    band = d if d <= 4 * TILE_ROWS else TILE_ROWS
    G = _upper_gram(X.data, X.indices, X.indptr, s, d, band)
    _mirror_upper(G)
    return G


@njit(cache=True)
def _upper_gram(data, indices, indptr, s, d, band):
    """The upper triangle of ``X' diag(s) X`` from CSR arrays with sorted rows, ``band`` rows of it a pass."""
    G = np.zeros((d, d))
    weighted = s.shape[0] > 0
    cursor = indptr[:-1].copy()          # row i's first entry not yet paired
    for j0 in range(0, d, band):
        j1 = j0 + band
        for i in range(indptr.shape[0] - 1):
            p, hi = cursor[i], indptr[i + 1]
            while p < hi and indices[p] < j1:
                j = indices[p]
                a = data[p] * s[i] if weighted else data[p]
                G[j, j] += a * data[p]
                for q in range(p + 1, hi):
                    k = indices[q]
                    # a duplicated entry (k == j) pairs with its twin both ways round
                    G[j, k] += (a * data[q]) if k != j else 2.0 * (a * data[q])
                p += 1
            cursor[i] = p
    return G


@njit(cache=True)
def _mirror_upper(G):
    """``G[k, j] = G[j, k]`` for ``j < k``, in 64 x 64 blocks (a plain transposed sweep misses the cache)."""
    d = G.shape[0]
    for j0 in range(0, d, 64):
        for k0 in range(j0, d, 64):
            for j in range(j0, min(j0 + 64, d)):
                for k in range(max(k0, j + 1), min(k0 + 64, d)):
                    G[k, j] = G[j, k]
