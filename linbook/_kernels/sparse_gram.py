"""The Gram matrix ``X' diag(s) X`` of a CSR matrix, accumulated row by row.

    csr_gram(X.data, X.indices, X.indptr, s, d) == (X.T @ diag(s) @ X).toarray()

(``s`` empty: all weights 1). Row ``i`` adds ``s_i x_ij x_ik`` for every pair of its
nonzeros, so a pass costs ``sum_i nnz_i^2 / 2`` multiply-adds into a dense ``d x d``
array (only built for ``d <= 4096``, see ``linbook.linear._moments``). scipy's sparse
product computes the same sums but builds a sparse result and its transpose first,
about 8x slower on a tall 1 % dense matrix. The upper triangle is accumulated and
mirrored, so the result is exactly symmetric.
"""

import numpy as np

from . import _cache_load  # noqa: F401  (imports numba: before it, see the module)
from numba import njit


@njit(cache=True)
def csr_gram(data, indices, indptr, s, d):
    """``X' diag(s) X`` (dense, ``d x d``) from the CSR arrays of ``X``."""
    G = np.zeros((d, d))
    weighted = s.shape[0] > 0
    for i in range(indptr.shape[0] - 1):
        lo, hi = indptr[i], indptr[i + 1]
        for p in range(lo, hi):
            a = data[p] * s[i] if weighted else data[p]
            j = indices[p]
            for q in range(lo, hi):
                k = indices[q]
                if j < k:
                    G[j, k] += a * data[q]
                elif j == k and p <= q:       # a duplicated entry pairs with itself twice
                    G[j, k] += (a * data[q]) if p == q else 2.0 * (a * data[q])
    for j in range(d):
        for k in range(j):
            G[j, k] = G[k, j]
    return G
