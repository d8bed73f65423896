import numpy as np
import pytest
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


# --- fisher-direction on shuffled, unbalanced labels whose first sample is of the second class -------------
def _fisher_given(X, y, c0):
    a, b = X[y == c0], X[y != c0]
    R = np.vstack([a - a.mean(0), b - b.mean(0)])
    return np.linalg.solve(R.T @ R, b.mean(0) - a.mean(0))


def fisher_ignores_y(X, y):               # the first half is class 1: right for sorted, balanced labels only
    return _fisher_given(X, np.repeat([0, 1], [len(X) // 2, len(X) - len(X) // 2]), 0)


def fisher_first_label(X, y):             # class 1 is whatever y[0] is
    return _fisher_given(X, y, y[0])


def fisher_sum_of_covariances(X, y):      # S_W as the sum of the two classes' covariances: not S_W when unbalanced
    c0, c1 = np.unique(y)
    S = np.cov(X[y == c0].T) + np.cov(X[y == c1].T)
    return np.linalg.solve(S, X[y == c1].mean(0) - X[y == c0].mean(0))


@pytest.mark.parametrize("fn", [fisher_ignores_y, fisher_first_label, fisher_sum_of_covariances],
                         ids=lambda f: f.__name__)
def test_fisher_direction_rejects_answers_that_do_not_read_y(fn):
    assert not ex.check("gendisc.fisher-direction", fn, verbose=False)


def test_fisher_direction_says_when_it_points_the_wrong_way():
    r = ex.check("gendisc.fisher-direction", fisher_first_label, verbose=False)
    assert "points the wrong way" in r.properties[0].hint


def _sklearn_lda(X, y):
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
    return LinearDiscriminantAnalysis(solver="lsqr").fit(X, y).coef_[0]


def _pooled_covariance(X, y):             # S_W / (N - 2): a positive scale of the direction
    c0, c1 = np.unique(y)
    R = np.where((y == c0)[:, None], X - X[y == c0].mean(0), X - X[y == c1].mean(0))
    return np.linalg.solve(R.T @ R / (len(y) - 2), X[y == c1].mean(0) - X[y == c0].mean(0))


@pytest.mark.parametrize("fn", [
    _fisher, _pooled_covariance, _sklearn_lda,
    lambda X, y: 1e6 * _fisher(X, y),                                  # any positive scale
    lambda X, y: (_fisher(X, y) / np.linalg.norm(_fisher(X, y))).tolist(),   # unit length, as a list
    lambda X, y: _fisher(X, y).astype(np.float32),
], ids=["reference", "pooled covariance", "sklearn LDA", "scaled", "unit list", "float32"])
def test_fisher_direction_accepts_any_positive_scale(fn):
    r = ex.check("gendisc.fisher-direction", fn, verbose=False)
    assert r, r.report()
