"""Session 30: leave-one-out with far rows beside exactly dependent columns, and a row-graded rank test.

* A column ``c x`` (``c`` not a power of two: 3, 0.1, 1/3, pi) or ``a x1 + b x2``, beside one to three rows
  1e5..1e150 times the others: the dependence holds only to the rounding of ``c x``, which in a far row is far
  larger than the small rows. Rank tests relative to the large rows kept the column as one of its own (its pivot
  the far row's rounding): leave-one-out residuals 4 to 1e53 times off, silently (least squares and ridge, with
  and without an intercept). Since this session a column is dependent where its residual from the others is within
  rounding in every row, each on its own digits, and is then treated as exactly dependent: least squares drops it
  (the fitted values, unique, are the minimum-norm solution's); ridge folds it into the others (the same fit).
* Least squares with two or three far rows among 300 was refused ("the other rows do not determine its
  prediction"): the rank test without a far row was relative to the other far row. It is now row-graded; a row
  whose removal truly drops the rank is still refused.

Oracle: explicit refits without each row in mpmath (at least 200 digits, more for wide spreads), the dependent
columns built exactly (``c * x`` of the stored ``x``); least squares on the independent columns (the fitted values
of any least-squares solution), ridge on all of them.
"""

import warnings

import mpmath as mp
import numpy as np
import pytest

from linbook import hat_diagonal, loocv_least_squares, loocv_ridge
from linbook.base import LinbookWarning


def _digits(base, lam):
    big, small = np.max(np.abs(base)), np.min(np.abs(base[base != 0]))
    return max(200, int(4 * np.log10(big / small)) + 80 + (int(-np.log10(lam)) if lam else 0))


def _oracle(base, deps, y, lam, fit_intercept):
    """``(X, r, h)``: ``X`` the float design (``base`` and the columns ``deps @ base``, rounded), ``r`` the leave-one-
    out residuals of exact refits with those columns exactly dependent, ``h`` the leverages (least squares)."""
    n, k = base.shape
    with mp.workdps(_digits(base, lam)):
        B = [[mp.mpf(float(v)) for v in row] for row in base]
        extra = [[mp.fsum(mp.mpf(float(c)) * row[j] for j, c in enumerate(cv)) for row in B] for cv in deps]
        X = np.column_stack([base] + [[float(v) for v in col] for col in extra])
        rows = [B[i] + ([col[i] for col in extra] if lam else []) + [mp.mpf(1)] * int(fit_intercept) for i in range(n)]
        penalised = k + (len(deps) if lam else 0)
        t = [mp.mpf(float(v)) for v in y]
        p = len(rows[0])
        G = mp.matrix([[mp.fsum(r[a] * r[b] for r in rows) + (mp.mpf(lam or 0) if a == b < penalised else 0)
                        for b in range(p)] for a in range(p)])
        g = mp.matrix([mp.fsum(r[a] * v for r, v in zip(rows, t)) for a in range(p)])
        r_out, h_out = [], []
        for r, v in zip(rows, t):
            Gi = G - mp.matrix([[r[a] * r[b] for b in range(p)] for a in range(p)])
            beta = mp.lu_solve(Gi, g - mp.matrix([r[a] * v for a in range(p)]))
            r_out.append(float(v - mp.fsum(r[a] * beta[a] for a in range(p))))
            u = mp.lu_solve(G, mp.matrix(r))
            h_out.append(float(mp.fsum(r[a] * u[a] for a in range(p))))
    return X, np.array(r_out), np.array(h_out)


def _silent(call):
    with warnings.catch_warnings():
        warnings.simplefilter("error", LinbookWarning)
        return call()


DEPENDENT = [(c, n_far, far, n_small)
             for c, n_far, far, n_small in [(3.0, 1, 1e5, 6), (0.1, 2, 1e20, 6), (1 / 3, 3, 1e80, 20),
                                            (np.pi, 1, 1e150, 20), (np.pi, 3, 1e5, 6), (3.0, 2, 1e150, 300),
                                            (0.1, 3, 1e20, 300)]]


@pytest.mark.parametrize("lam", [None, 1e-300, 1e-6, 1.0])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("c, n_far, far, n_small", DEPENDENT, ids=lambda v: f"{v:.3g}")
def test_a_multiple_of_a_column_beside_far_rows(c, n_far, far, n_small, fit_intercept, lam):
    rng = np.random.default_rng(n_small + n_far)
    base = rng.standard_normal((n_small + n_far, 2))
    base[:n_far] *= far
    y = rng.standard_normal(len(base))
    X, expected, leverages = _oracle(base, [[0.0, c]], y, lam, fit_intercept)
    if lam is None:
        mse, r = _silent(lambda: loocv_least_squares(X, y, fit_intercept=fit_intercept, return_residuals=True))
        np.testing.assert_allclose(hat_diagonal(X, fit_intercept=fit_intercept), leverages, rtol=1e-9, atol=1e-12)
    else:
        mse, r = _silent(lambda: loocv_ridge(X, y, lam, fit_intercept=fit_intercept, return_residuals=True))
    np.testing.assert_allclose(r, expected, rtol=1e-8, atol=0)
    assert mse == pytest.approx(np.mean(expected ** 2), rel=1e-8)


@pytest.mark.parametrize("lam", [None, 1e-300, 1.0])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("far_in", ["all", "dependent"])
def test_a_combination_of_two_columns_beside_far_rows(far_in, fit_intercept, lam):
    """``x3 = 0.1 x1 + pi x2``; the far rows far in every column, or only in the columns that carry the dependence
    (and a duplicated far row)."""
    rng = np.random.default_rng(5)
    base = rng.standard_normal((12, 3))
    if far_in == "all":
        base[:2] *= 1e40
    else:
        base[:2, :2] *= 1e90
        base = np.vstack([base, base[:1]])
    y = rng.standard_normal(len(base))
    X, expected, _ = _oracle(base, [[0.1, np.pi, 0.0]], y, lam, fit_intercept)
    if lam is None:
        r = _silent(lambda: loocv_least_squares(X, y, fit_intercept=fit_intercept, return_residuals=True)[1])
    else:
        r = _silent(lambda: loocv_ridge(X, y, lam, fit_intercept=fit_intercept, return_residuals=True)[1])
    np.testing.assert_allclose(r, expected, rtol=1e-8, atol=0)


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("n_far, far", [(2, 1e20), (3, 1e20), (2, 1e150), (3, 1e80)])
def test_least_squares_with_a_few_far_rows_among_300_is_answered(n_far, far, fit_intercept):
    """Without one far row the others (the other far rows and the small ones) still determine the fit: it was
    refused by a rank test relative to the remaining far row."""
    rng = np.random.default_rng(n_far)
    base = rng.standard_normal((300, 2))
    base[:n_far] *= far
    y = rng.standard_normal(300)
    X, expected, _ = _oracle(base, [], y, None, fit_intercept)
    r = _silent(lambda: loocv_least_squares(X, y, fit_intercept=fit_intercept, return_residuals=True)[1])
    np.testing.assert_allclose(r, expected, rtol=1e-8, atol=0)
    np.testing.assert_allclose(loocv_ridge(X, y, 0.0, fit_intercept=fit_intercept, return_residuals=True)[1],
                               expected, rtol=1e-8, atol=0)


def test_a_far_row_whose_removal_drops_the_rank_is_still_refused():
    """Row 0 alone has a second column (1e100, zero elsewhere), and the third is 3 times it: without row 0 the
    design loses rank and its leave-one-out prediction is not defined (the docstring's ``ValueError``)."""
    rng = np.random.default_rng(8)
    X = np.column_stack([rng.standard_normal(40), np.zeros(40), np.zeros(40)])
    X[0, 1:] = [1e100, 3e100]
    y = rng.standard_normal(40)
    for call in (lambda: loocv_least_squares(X, y), lambda: loocv_ridge(X, y, 0.0)):
        with pytest.raises(ValueError, match="row 0 of X .* do not determine its prediction"):
            call()


def _check_all(base, deps, y, fit_intercept):
    """Least squares (residuals and leverages), and ridge at 1e-300 and 1, against the oracle; no warning."""
    for lam in (None, 1e-300, 1.0):
        X, expected, leverages = _oracle(base, deps, y, lam, fit_intercept)
        if lam is None:
            r = _silent(lambda: loocv_least_squares(X, y, fit_intercept=fit_intercept, return_residuals=True)[1])
            h = _silent(lambda: hat_diagonal(X, fit_intercept=fit_intercept))
            np.testing.assert_allclose(h, leverages, rtol=1e-9, atol=1e-13)
        else:
            r = _silent(lambda: loocv_ridge(X, y, lam, fit_intercept=fit_intercept, return_residuals=True)[1])
        np.testing.assert_allclose(r, expected, rtol=1e-8, atol=0)


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("groups", [(1, 1, 1), (2, 0, 3), (0, 3, 2), (5, 2, 1)], ids=str)
def test_far_rows_in_groups_at_three_scales(groups, fit_intercept):
    """Groups of far rows at 1e5, 1e40 and 1e120 among 6 ordinary rows, with ``3 x`` as a fourth column. Before:
    leverages O(1) off (no warning for some), residuals 2 to 5000 times off, or a refusal."""
    rng = np.random.default_rng(sum(groups))
    base = rng.standard_normal((6 + sum(groups), 3))
    start = 0
    for count, scale in zip(groups, (1e5, 1e40, 1e120)):
        base[start:start + count] *= scale
        start += count
    _check_all(base, [[3.0, 0.0, 0.0]], rng.standard_normal(len(base)), fit_intercept)


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("kind", ["rows of zeros", "column of zeros", "n = p + 1", "y offset", "X offset"])
def test_far_rows_beside_degenerate_rows_columns_and_offsets(kind, fit_intercept):
    """One or two far rows beside two rows of zeros, a column of zeros, as few rows as coefficients plus one, a
    target offset by 1e12, or a column offset by 1e6; each with a dependent column (``0.1 x``, ``pi x``, ``x / 3``)
    except the column of zeros, which is one."""
    rng = np.random.default_rng(12)
    base = rng.standard_normal((10, 2))
    deps = [[0.1, 0.0]]
    y = rng.standard_normal(10)
    if kind == "rows of zeros":
        base[0] *= 1e30
        base[[3, 7]] = 0.0
    elif kind == "column of zeros":
        base[:2] *= 1e50
        deps = [[0.0, 0.0]]
    elif kind == "n = p + 1":
        base, y, deps = base[:3 + int(fit_intercept)], y[:3 + int(fit_intercept)], [[np.pi, 0.0]]
        base[0] *= 1e20
    elif kind == "y offset":
        base[0] *= 1e15
        y, deps = y + 1e12, [[1 / 3, 0.0]]
    else:
        base[:, 0] += 1e6
        base[0] *= 1e10
        deps = [[3.0, 0.0]]
    _check_all(base, deps, y, fit_intercept)


@pytest.mark.parametrize("n", [5, 12, 60])
@pytest.mark.parametrize("seed", range(3))
def test_a_multiple_of_a_column_offset_far_from_its_spread(seed, n):
    """``x1 = 1 + 1e-8 z`` and ``x3 = 3 x1`` beside an intercept, no far rows: ``3 x1`` rounded is 1e-8 of its own
    spread off ``x3``, which a rank test on the centred columns counted as a column of its own (least squares
    residuals up to 140 times off, leverages O(1) off, silently). The entries' rounding is measured as given."""
    rng = np.random.default_rng(500 + seed)
    base = rng.standard_normal((n, 2))
    base[:, 0] = base[:, 0] * 1e-8 + 1.0
    y = rng.standard_normal(n)
    X, expected, leverages = _oracle(base, [[3.0, 0.0]], y, None, True)
    r = _silent(lambda: loocv_least_squares(X, y, return_residuals=True)[1])
    np.testing.assert_allclose(r, expected, rtol=1e-6, atol=0)
    np.testing.assert_allclose(hat_diagonal(X, fit_intercept=True), leverages, rtol=0, atol=1e-8)
