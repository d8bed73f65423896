"""Model and feature selection: closed-form leave-one-out, wrapper search, mutual information.

What the chapter "Model and feature selection" derives and students reuse:

* :func:`hat_diagonal`, :func:`loocv_least_squares`, :func:`loocv_ridge` - leave-one-out
  residuals of (penalised) least squares without refitting, ``e_i / (1 - h_ii)``, with the
  leverages ``h_ii`` from a thin QR or SVD (never an N x N matrix).
* :func:`forward_selection`, :func:`backward_selection` - the greedy wrapper searches of
  the CS229 notes, scored by scikit-learn's ``cross_val_score``.
* :func:`mutual_information`, :func:`mutual_information_scores`, :func:`kl_divergence` -
  the filter score for discrete features.

Splitting (``KFold``, ``LeaveOneOut``) and the library selector
(``SequentialFeatureSelector``) come from scikit-learn; the chapter shows these agree.

Derived in: chapter "Model and feature selection".
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import linalg
from sklearn.base import clone
from sklearn.model_selection import cross_val_score
from sklearn.utils.validation import check_array

from ._design import column_means
from .base import NON_NEGATIVE, _with_advice, check_param_values, renamed_kwargs, validate_data
from .numerics import _power_of_two_scale

__all__ = ["hat_diagonal", "loocv_least_squares", "loocv_ridge", "SearchResult",
           "forward_selection", "backward_selection", "mutual_information",
           "mutual_information_scores", "kl_divergence"]


def _design(X, fit_intercept):
    return np.hstack([np.ones((X.shape[0], 1)), X]) if fit_intercept else X


def _equilibrate(Phi):
    """Columns divided by a power of two near their largest entry (exact).

    The hat matrix ``X (X^T X)^+ X^T`` does not change when columns are rescaled, but the
    numerical rank decision does: without this an intercept column next to features near
    1e150 would count as rank-deficient.
    """
    return Phi / _power_of_two_scale(np.max(np.abs(Phi), axis=0, initial=0.0), below=True)


def hat_diagonal(X, *, fit_intercept=False):
    """Leverages ``h_ii``: the diagonal of ``H = X (X^T X)^+ X^T``, from a thin pivoted QR.

    With ``X = Q R`` (``Q`` of shape (N, r) for the numerical rank ``r``), ``H = Q Q^T`` and
    ``h_ii = sum_j Q_ij^2``. Cost ``O(N D^2)``, memory ``O(N D)``. The columns are first divided
    by powers of two near their largest entries (``H`` does not change), so the rank, and the
    leverages, do not depend on the units of the features.

    Parameters
    ----------
    X : array-like of shape (N, D)
    fit_intercept : bool, default=False
        Prepend a column of ones.

    Returns
    -------
    h : ndarray of shape (N,)
        Each in ``[0, 1]``; they sum to the rank.

    Derived in: chapter "Model and feature selection" § "Leave-one-out in closed form".
    """
    with _with_advice():
        X = check_array(X, dtype=np.float64, input_name="X")
    Phi = _equilibrate(_design(X, fit_intercept))
    Q, R, _ = linalg.qr(Phi, mode="economic", pivoting=True)
    d = np.abs(np.diag(R))
    rank = int(np.sum(d > d.max() * max(Phi.shape) * np.finfo(float).eps)) if d.size and d.max() > 0 else 0
    return np.sum(Q[:, :rank] ** 2, axis=1)


def _loo_from(y, fitted, h, what):
    if np.any(h > 1 - 1e-10):
        i = int(np.argmax(h))
        raise ValueError(f"row {i} of X has leverage h_ii = {h[i]:.12g} (within 1e-10 of 1, the leverages' "
                         "rounding), so its leave-one-out prediction is not determined by the other samples "
                         f"({what}); use fewer columns of X (or more rows), or set lam > 0 in loocv_ridge.")
    return (y - fitted) / (1 - h)


def loocv_least_squares(X, y, *, fit_intercept=True, return_residuals=False):
    """Leave-one-out mean squared error of least squares, without refitting.

    Uses ``y_i - yhat_{-i}(x_i) = (y_i - yhat_i) / (1 - h_ii)`` with ``h_ii`` from
    :func:`hat_diagonal`; equal to refitting ``LinearRegression`` N times.

    Parameters
    ----------
    X : array-like of shape (N, D)
    y : array-like of shape (N,)
    fit_intercept : bool, default=True
    return_residuals : bool, default=False
        Also return the N leave-one-out residuals.

    Returns
    -------
    mse : float
        ``(1/N) sum_i (y_i - yhat_{-i}(x_i))^2``.
    residuals : ndarray of shape (N,), only if ``return_residuals``

    Derived in: chapter "Model and feature selection" § "Leave-one-out in closed form".
    """
    X, y = validate_data(X, y, y_numeric=True, min_samples=2)
    Phi = _equilibrate(_design(X, fit_intercept))
    coef, *_ = linalg.lstsq(Phi, y)
    h = hat_diagonal(Phi)
    r = _loo_from(y, Phi @ coef, h, "least squares")
    mse = float(np.mean(r ** 2))
    return (mse, r) if return_residuals else mse


@renamed_kwargs(alpha="lam")
def loocv_ridge(X, y, lam, *, fit_intercept=True, return_residuals=False):
    """Leave-one-out mean squared error of ridge regression, without refitting.

    Ridge minimises ``||y - b 1 - X w||^2 + lam ||w||^2`` (intercept ``b`` unpenalised), the
    minimiser of :class:`linbook.Ridge` ``(lam)`` and of scikit-learn's ``Ridge(alpha=lam)``. Its
    hat matrix is ``11^T/N + U diag(s^2/(s^2+lam)) U^T`` for the thin SVD ``X_c = U diag(s) V^T``
    of the centred inputs, so ``h_ii = 1/N + sum_j U_ij^2 s_j^2 / (s_j^2 + lam)``, and the LOO
    residual is again ``(y_i - yhat_i) / (1 - h_ii)``. It is computed as ``Q_1 Q_1^T``, the same
    matrix, from a QR factorisation (see ``_ridge_projector``): accurate also when the features'
    scales differ by 1e16 or more, where the SVD loses the small ones.

    Parameters
    ----------
    X : array-like of shape (N, D)
    y : array-like of shape (N,)
    lam : float
        Penalty, ``lam >= 0`` (scikit-learn ``alpha = lam``).
    fit_intercept : bool, default=True
    return_residuals : bool, default=False

    Returns
    -------
    mse : float
    residuals : ndarray of shape (N,), only if ``return_residuals``

    Derived in: chapter "Model and feature selection" § "Leave-one-out in closed form".
    """
    X, y = validate_data(X, y, y_numeric=True, min_samples=2)
    check_param_values("loocv_ridge", {"lam": [NON_NEGATIVE], "fit_intercept": ["boolean"]},
                       {"lam": lam, "fit_intercept": fit_intercept})
    n = X.shape[0]
    if fit_intercept:
        xm, ym = column_means(X), y.mean()    # a constant column centres to exact zeros (no feature)
        Xc, yc, h0 = X - xm, y - ym, 1.0 / n
    else:
        Xc, yc, h0, ym = X, y, 0.0, 0.0
    Q1 = _ridge_projector(Xc, lam)              # the hat matrix of the centred inputs is Q1 Q1^T
    fitted = ym + Q1 @ (Q1.T @ yc)
    h = h0 + np.sum(Q1 ** 2, axis=1)
    r = _loo_from(y, fitted, h, "ridge")
    mse = float(np.mean(r ** 2))
    return (mse, r) if return_residuals else mse


def _ridge_projector(Xc, lam):
    """``Q1`` of shape (N, k) with ``Q1 Q1^T = Xc (Xc^T Xc + lam I)^{-1} Xc^T``, the ridge hat matrix.

    Ridge is least squares on ``Xc`` stacked on ``sqrt(lam) I`` (``D`` extra rows). With the thin QR
    ``[Xc; sqrt(lam) I] = Q R`` and ``Q1`` the first ``N`` rows of ``Q``, ``Xc = Q1 R``, so the hat
    matrix is ``Q1 R (R^T R)^{-1} R^T Q1^T = Q1 Q1^T``: the SVD form ``U diag(s^2/(s^2+lam)) U^T``
    without the SVD, whose singular values are resolved only down to ``eps * s_max`` (a feature
    of 1e-8 next to one of 1e8 was dropped, and ``lam = 0`` did not give least squares).
    Householder QR is accurate column by column, whatever the columns' scales.

    Each column is first divided by a power of two near its largest entry (exact; ``Q`` does not
    change, the penalty row becomes ``sqrt(lam) / d_j``), so nothing over- or underflows. Left out:
    a column whose penalty exceeds 1e16 times its norm (its coefficient is 0 to double precision),
    and a column the QR finds dependent on the ones before it to rounding (its penalty too small
    to tell it apart): its share of the hat matrix is nil, as for least squares.
    """
    n, d = Xc.shape
    root_lam = np.sqrt(lam)
    if d > n:
        # wide: with Xc = L Q (Q's n rows orthonormal) the hat matrix of Xc is that of the n x n factor L,
        # Q (Q'L'L Q + lam I)^{-1} Q' being (L'L + lam I)^{-1}: an (n + n) x n QR below, not (n + d) x d.
        # Xc / c first (c a power of two near its largest entry, so nothing overflows; the penalty of
        # L's columns is then sqrt(lam) / c), and the largest features first (Householder QR of a graded
        # matrix is accurate row by row)
        c = _power_of_two_scale(np.max(np.abs(Xc), initial=0.0), below=True)
        largest_first = np.argsort(-np.max(np.abs(Xc), axis=0), kind="stable")
        Xc = linalg.qr((Xc[:, largest_first] / c).T, mode="r")[0][:n].T
        with np.errstate(over="ignore"):
            root_lam = root_lam / c
    scale = _power_of_two_scale(np.max(np.abs(Xc), axis=0, initial=0.0), below=True)
    Z = Xc / scale
    with np.errstate(over="ignore"):
        penalty = root_lam / scale
    keep = np.flatnonzero(penalty <= 1e16 * np.linalg.norm(Z, axis=0))
    while keep.size:
        A = np.vstack([Z[:, keep], np.diag(penalty[keep])])
        Q, R = linalg.qr(A, mode="economic")
        # a column within rounding of the span of the earlier ones; dropping it leaves that span,
        # so every flagged column goes at once (a second pass confirms)
        dependent = np.abs(np.diag(R)) <= max(A.shape) * np.finfo(float).eps * np.linalg.norm(A, axis=0)
        if not dependent.any():
            return Q[:n]
        keep = keep[~dependent]
    return np.zeros((n, 0))


@dataclass
class SearchResult:
    """Path of a greedy feature search.

    Attributes
    ----------
    support : ndarray of bool, shape (D,)
        Selected features at the end of the search.
    order : list of int
        Features in the order they were added (forward) or removed (backward).
    scores : list of float
        Mean cross-validation score after each step (higher is better).
    n_features : int
        Number of selected features.

    Derived in: chapter "Model and feature selection" § "Feature selection: wrapper search".
    """

    support: np.ndarray
    order: list = field(default_factory=list)
    scores: list = field(default_factory=list)

    @property
    def n_features(self):
        return int(self.support.sum())


def _cv(estimator, X, y, cols, cv, scoring):
    return float(np.mean(cross_val_score(clone(estimator), X[:, cols], y, cv=cv, scoring=scoring)))


def _check_search(X, y, n_features, d):
    X, y = validate_data(X, y)
    if n_features is not None and not (1 <= int(n_features) <= X.shape[1]):
        raise ValueError(f"n_features must be between 1 and {X.shape[1]}; got {n_features!r}")
    return X, y


def forward_selection(estimator, X, y, *, n_features=None, cv=5, scoring=None, tol=0.0):
    """Greedy forward search (the CS229 notes' wrapper model).

    Start from the empty set; at each step add the feature whose addition gives the highest
    mean ``cross_val_score``; stop after ``n_features`` features, or (``n_features=None``)
    when the best addition does not improve the score by more than ``tol``. Ties go to the
    lowest feature index, as in scikit-learn's ``SequentialFeatureSelector``, which makes
    the same choices for the same ``cv`` and ``scoring``.

    Parameters
    ----------
    estimator : scikit-learn estimator
    X : array-like of shape (N, D)
    y : array-like of shape (N,)
    n_features : int or None, default=None
    cv : int or splitter, default=5
        Passed to ``cross_val_score`` (an int means (Stratified)KFold without shuffling).
    scoring : str or callable, optional
        Passed to ``cross_val_score`` (default: the estimator's ``score``).
    tol : float, default=0.0

    Returns
    -------
    SearchResult

    Derived in: chapter "Model and feature selection" § "Feature selection: wrapper search".
    """
    X, y = _check_search(X, y, n_features, None)
    d = X.shape[1]
    chosen, scores, current = [], [], -np.inf
    target = d if n_features is None else int(n_features)
    while len(chosen) < target:
        cand = [j for j in range(d) if j not in chosen]
        s = [_cv(estimator, X, y, chosen + [j], cv, scoring) for j in cand]
        best = int(np.argmax(s))
        if n_features is None and not s[best] > current + tol:
            break
        chosen.append(cand[best])
        scores.append(s[best])
        current = s[best]
    support = np.zeros(d, bool)
    support[chosen] = True
    return SearchResult(support, chosen, scores)


def backward_selection(estimator, X, y, *, n_features=None, cv=5, scoring=None, tol=0.0):
    """Greedy backward search: start from all features, remove the least useful one at a time.

    At each step remove the feature whose removal gives the highest mean
    ``cross_val_score``; stop at ``n_features`` features, or (``n_features=None``) when every
    removal lowers the score by more than ``tol``. ``scores[0]`` is the score of the full set.

    Parameters
    ----------
    estimator, X, y, n_features, cv, scoring, tol
        As in :func:`forward_selection`.

    Returns
    -------
    SearchResult
        ``order`` lists the removed features.

    Derived in: chapter "Model and feature selection" § "Feature selection: wrapper search".
    """
    X, y = _check_search(X, y, n_features, None)
    d = X.shape[1]
    kept = list(range(d))
    removed = []
    current = _cv(estimator, X, y, kept, cv, scoring)
    scores = [current]
    target = 1 if n_features is None else int(n_features)
    while len(kept) > target:
        s = [_cv(estimator, X, y, [k for k in kept if k != j], cv, scoring) for j in kept]
        best = int(np.argmax(s))
        if n_features is None and s[best] < current - tol:
            break
        removed.append(kept.pop(best))
        scores.append(s[best])
        current = s[best]
    support = np.zeros(d, bool)
    support[kept] = True
    return SearchResult(support, removed, scores)


def _codes(v, name):
    v = np.asarray(v)
    if v.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional; got shape {v.shape}. Pass one value per sample.")
    missing = (not np.all(np.isfinite(v)) if v.dtype.kind in "fc" else
               v.dtype == object and any(_is_missing(e) for e in v))
    if missing:
        raise ValueError(f"{name} contains NaN, None or infinity; drop or impute those samples (a discrete "
                         "variable's missing value can be a category of its own, e.g. -1)")
    try:
        return np.unique(v, return_inverse=True)[1].ravel()
    except TypeError:     # an object array mixing types that do not compare (str and int, ...)
        raise TypeError(f"{name} mixes values that cannot be compared ({sorted({type(e).__name__ for e in v})}); "
                        f"convert {name} to one type first, e.g. {name}.astype(str)") from None


def _is_missing(e):
    """Whether an entry of an object array is a missing value: ``None``, or a float NaN / inf (each NaN
    would otherwise be a category of its own, NaN != NaN)."""
    return e is None or (isinstance(e, (float, np.floating)) and not np.isfinite(e))


def mutual_information(x, y):
    """Mutual information of two discrete variables from their empirical joint distribution.

    ``MI(x, y) = sum_x sum_y p(x, y) log[ p(x, y) / (p(x) p(y)) ] = KL(p(x, y) || p(x) p(y))``
    in nats, with the empirical (plug-in) probabilities; equals scikit-learn's
    ``mutual_info_score``.

    Parameters
    ----------
    x, y : array-like of shape (N,)
        Discrete values (any labels; each distinct value is one category).

    Returns
    -------
    float

    Derived in: chapter "Model and feature selection" § "Feature selection: the mutual-information filter".
    """
    a, b = _codes(x, "x"), _codes(y, "y")
    if a.size != b.size:
        raise ValueError(f"x and y must have the same length; got {a.size} and {b.size}")
    if a.size == 0:
        raise ValueError("x and y are empty")
    n = a.size
    joint = np.bincount(a * (b.max() + 1) + b, minlength=(a.max() + 1) * (b.max() + 1))
    pxy = joint.reshape(a.max() + 1, b.max() + 1) / n
    px, py = pxy.sum(axis=1), pxy.sum(axis=0)
    nz = pxy > 0
    return float(max(np.sum(pxy[nz] * np.log(pxy[nz] / np.outer(px, py)[nz])), 0.0))


def mutual_information_scores(X, y):
    """``mutual_information(X[:, j], y)`` for every column of a discrete ``X``; shape (D,).

    Derived in: chapter "Model and feature selection" § "Feature selection: the mutual-information filter".
    """
    with _with_advice():                     # scikit-learn's "Found array with dim 3" names no input
        X = check_array(X, dtype=None)
    return np.array([mutual_information(X[:, j], y) for j in range(X.shape[1])])


def kl_divergence(p, q):
    """``KL(p || q) = sum_k p_k log(p_k / q_k)`` for discrete distributions (nats).

    Terms with ``p_k = 0`` contribute 0; ``p_k > 0`` with ``q_k = 0`` gives ``inf``.

    Derived in: chapter "Model and feature selection" § "Feature selection: the mutual-information filter".
    """
    p, q = np.asarray(p, dtype=float).ravel(), np.asarray(q, dtype=float).ravel()
    if p.shape != q.shape:
        raise ValueError(f"p and q must have the same shape; got {p.shape} and {q.shape}. Pass two "
                         "probability vectors over the same outcomes")
    for name, v in (("p", p), ("q", q)):
        if not np.all(np.isfinite(v)) or np.any(v < 0):
            raise ValueError(f"{name} must be a probability vector (finite, non-negative); got {v.tolist()[:6]}. "
                             f"Fix or drop the entries of {name} that are NaN, infinite or negative.")
    if not (np.isclose(p.sum(), 1.0) and np.isclose(q.sum(), 1.0)):
        raise ValueError(f"p and q must each sum to 1; got {p.sum():.6g} and {q.sum():.6g}. Pass p / p.sum() "
                         "and q / q.sum() to normalise counts.")
    nz = p > 0
    if np.any(q[nz] == 0):
        return float("inf")
    return float(np.sum(p[nz] * _log_ratio(p[nz], q[nz])))


def _log_ratio(p, q):
    """``log(p / q)`` for ``p, q > 0``: from the quotient where it is a normal double (no cancellation), else
    ``log p - log q`` (``q`` subnormal makes ``p / q`` overflow to inf, a ratio below 1e-308 loses digits)."""
    with np.errstate(over="ignore", under="ignore"):
        ratio = p / q
    normal = np.isfinite(ratio) & (ratio >= np.finfo(float).tiny)
    return np.where(normal, np.log(np.where(normal, ratio, 1.0)), np.log(p) - np.log(q))
