import numpy as np
from scipy import stats

import linbook
import linbook.exercises as ex


def _marg(x, pis, mus, Sigmas):
    o = ~np.isnan(x)
    if not o.any():
        return np.asarray(pis, dtype=float)
    lj = np.array([np.log(p) + stats.multivariate_normal(m[o], S[np.ix_(o, o)]).logpdf(x[o])
                   for p, m, S in zip(pis, mus, Sigmas)])
    return np.exp(lj - linbook.logsumexp(lj))


def _fisher(X, y):
    c0, c1 = np.unique(y)
    m0, m1 = X[y == c0].mean(0), X[y == c1].mean(0)
    R = np.where((y == c0)[:, None], X - m0, X - m1)
    return np.linalg.solve(R.T @ R, m1 - m0)


def test_reference_solutions_pass():
    assert ex.check("gendisc.marginal-posterior", _marg, verbose=False)
    assert ex.check("gendisc.fisher-direction", _fisher, verbose=False)
    assert ex.check("gendisc.param-count", lambda M: M * (M + 5) // 2 + 1, verbose=False)


def test_wrong_answers_fail():
    def impute_zero(x, pis, mus, Sigmas):
        return _marg(np.nan_to_num(x), pis, mus, Sigmas)

    def mean_difference(X, y):                     # ignores S_W (right only for isotropic S_W)
        c0, c1 = np.unique(y)
        return X[y == c1].mean(0) - X[y == c0].mean(0)

    assert not ex.check("gendisc.marginal-posterior", impute_zero, verbose=False)
    assert not ex.check("gendisc.fisher-direction", mean_difference, verbose=False)
    assert not ex.check("gendisc.param-count", lambda M: 2 * M + M * M + 1, verbose=False)


def test_param_count_is_compared_as_a_number():
    """int() truncated a wrong non-integer count to the right one (2M + M(M+1)/2 + 1.5 passed)."""
    assert not ex.check("gendisc.param-count", lambda M: 2 * M + M * (M + 1) / 2 + 1.5, verbose=False)
    assert not ex.check("gendisc.param-count", lambda M: [2 * M + M * (M + 1) // 2 + 1], verbose=False)
    assert ex.check("gendisc.param-count", lambda M: 2 * M + M * (M + 1) / 2 + 1, verbose=False)   # a float is fine
    assert ex.check("gendisc.param-count", lambda M: np.int64(M * (M + 5) // 2 + 1), verbose=False)
