"""Logistic (binary and multinomial) and probit regression, fitted by IRLS / Newton and friends.

Objective (all solvers, all models here)::

    minimise  NLL(theta) + (lam / 2) * ||W||^2            (intercepts unpenalised)

where ``NLL = -sum_i log p(y_i | x_i)`` is *summed* over samples (not averaged). With
``lam = 1 / C`` this is exactly scikit-learn's ``LogisticRegression(C=C)``; with
``lam = 0`` it is the maximum-likelihood fit of statsmodels ``Logit`` / ``MNLogit`` /
``Probit``.

Derived in: chapter "Logistic regression" (model, NLL, gradient, Hessian, MAP,
multinomial) and chapter "Optimizers" § "IRLS" (the solver).
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg
import scipy.optimize
import scipy.sparse
import scipy.special
from scipy.linalg.blas import dsyrk, ssyrk
from scipy.special import log_ndtr
from sklearn.base import BaseEstimator, ClassifierMixin

from . import optim
from .base import SeparableDataWarning, encode_labels, validate_data, validate_X
from .criteria import InformationCriteriaMixin
from .numerics import log_sigmoid, log_softmax, logsumexp, softmax

__all__ = ["LogisticRegression", "ProbitRegression"]

_SOLVERS = ("irls", "newton", "gd", "bfgs", "lbfgs")
_DEFAULT_MAX_ITER = {"irls": 100, "newton": 100, "bfgs": 2000, "lbfgs": 5000, "gd": 20000}
_SATURATED = 25.0   # logit: a margin t_i z_i above this means p(y_i | x_i) > 1 - 1.4e-11


# ---------------------------------------------------------------------------------------
# per-sample link functions for the binary models: nll_i(z), d nll_i / dz, d2 nll_i / dz2
# with t_i = 2 y_i - 1 in {-1, +1}
# ---------------------------------------------------------------------------------------

def _logit_terms(z, t):
    m = t * z
    with np.errstate(under="ignore"):
        e = np.exp(-np.abs(z))                # one exp serves all three terms
    ope = 1.0 + e
    nll = np.maximum(-m, 0.0) + np.log1p(e)   # -log sigma(t z) = log1pexp(-m)
    sig_neg = np.where(m >= 0, e, 1.0) / ope  # sigma(-m)
    dz = -t * sig_neg                         # mu - y
    d2 = e / (ope * ope)                      # mu (1 - mu), exact also for |z| large
    return nll, dz, d2


def _probit_terms(z, t):
    u = t * z
    logPhi = log_ndtr(u)
    lam = np.exp(-0.5 * u * u - 0.5 * np.log(2 * np.pi) - logPhi)   # phi(u) / Phi(u)
    nll = -logPhi
    dz = -t * lam
    d2 = np.clip(lam * (u + lam), 1e-300, 1.0)   # in (0, 1): log Phi is concave
    return nll, dz, d2


def _saturation(terms):
    """Margin t z above which p(y | x) > 1 - 1e-11 (logit 25; probit 6.7, Phi(-6.7) = 1e-11)."""
    return 6.7 if terms is _probit_terms else _SATURATED


def _block_rows(n_rows, n_cols, block_size=None):
    if block_size is None:
        block_size = max(256, (1 << 16) // max(n_cols, 1))   # ~0.5 MB of float64 per block
    return [(i, min(i + block_size, n_rows)) for i in range(0, n_rows, block_size)]


def _binary_pass(X, t, w, b, lam, fit_intercept, terms, blocks, need_hessian=True, h32=False):
    """One blocked pass over X: z = Xw + b, objective, gradient and Hessian.

    Parameter order is ``theta = [b, w]`` (intercept first, when fitted). Memory: one
    ``block x D`` temporary; ``X' S X`` accumulated by BLAS ``syrk`` on ``sqrt(s) * X_b``.
    With ``h32`` the block products ``X_b' S_b X_b`` run in single precision (twice the
    speed) and are summed in double: the Hessian only sets the Newton *direction*, the
    objective and gradient stay in double precision, so the optimum is unchanged.
    """
    n, d = X.shape
    off = 1 if fit_intercept else 0
    p = d + off
    z = np.empty(n)
    f = 0.0
    g = np.zeros(p)
    Hww = np.zeros((d, d), order="F")
    Hwb = np.zeros(d)
    Hbb = 0.0
    for i, j in blocks:
        Xb = X[i:j]
        zb = Xb @ w
        if fit_intercept:
            zb += b
        z[i:j] = zb
        nll, dz, d2 = terms(zb, t[i:j])
        f += nll.sum()
        if need_hessian:
            rs = Xb.T @ np.column_stack([dz, d2]) if fit_intercept else (Xb.T @ dz)[:, None]
            g[off:] += rs[:, 0]
            if h32:
                Xs = np.multiply(Xb, np.sqrt(d2)[:, None], dtype=np.float32)
                Hww += ssyrk(1.0, Xs.T, trans=0, lower=0)
            else:
                Xs = Xb * np.sqrt(d2)[:, None]
                Hww = dsyrk(1.0, Xs.T, beta=1.0, c=Hww, trans=0, lower=0, overwrite_c=1)
            if fit_intercept:
                Hwb += rs[:, 1]
                Hbb += d2.sum()
                g[0] += dz.sum()
        else:
            g[off:] += Xb.T @ dz
            if fit_intercept:
                g[0] += dz.sum()
    f += 0.5 * lam * float(w @ w)
    g[off:] += lam * w
    if not need_hessian:
        return f, g, None, z
    Hww = np.triu(Hww) + np.triu(Hww, 1).T   # dsyrk filled the upper triangle (Fortran)
    Hww[np.diag_indices(d)] += lam
    H = np.empty((p, p))
    H[off:, off:] = Hww
    if fit_intercept:
        H[0, 0] = Hbb
        H[0, 1:] = Hwb
        H[1:, 0] = Hwb
    return f, g, H, z


def _line_objective(z0, z1, t, terms, lam, w0, dw, tau):
    """Objective at theta0 + tau d, using that z is linear in theta (no pass over X)."""
    nll, _, _ = terms(z0 + tau * (z1 - z0), t)
    w = w0 + tau * dw
    return nll.sum() + 0.5 * lam * float(w @ w)


def _cho_factor_jitter(H):
    """Cholesky factor of H, adding a tiny ridge if H is numerically singular."""
    tau = 0.0
    scale = max(np.abs(np.diag(H)).max(), 1e-300)
    while True:
        try:
            return scipy.linalg.cho_factor(H + tau * np.eye(H.shape[0]), lower=True, check_finite=False)
        except np.linalg.LinAlgError:
            tau = max(10 * tau, 1e-12 * scale)
            if tau > 1e6 * scale:
                raise ValueError("The Hessian is not positive definite even with a ridge; "
                                 "check X for constant or duplicated columns, or set lam > 0.")


_FREEZE = 1e-2   # relative Newton step below which the Hessian factor is reused (chord method)


def _binary_newton(X, t, lam, fit_intercept, terms, b0, max_iter, tol, check_separable, block_size=None):
    """Blocked Newton/IRLS with Armijo backtracking done on z (one pass over X per iteration).

    Once the relative Newton step falls below ``_FREEZE`` the Cholesky factor of the
    Hessian is kept and later passes compute only ``z`` and the gradient (the chord, or
    simplified Newton, method): those passes cost two matrix-vector products instead of
    ``X'SX``. The gradient stays exact, so the fixed point is the same; contraction per
    step is about the relative change of the Hessian, i.e. tiny this close to the optimum.
    If a chord step does not at least halve, the Hessian is recomputed.
    """
    n, d = X.shape
    blocks = _block_rows(n, d, block_size)
    w = np.zeros(d)
    b = float(b0)
    h32 = d >= 32          # single-precision X'SX pays off only for wider X
    f, g, H, z = _binary_pass(X, t, w, b, lam, fit_intercept, terms, blocks, h32=h32)
    off = 1 if fit_intercept else 0
    converged, separable, n_iter = False, False, 0
    steps = []
    factor = None
    frozen = False
    for n_iter in range(1, max_iter + 1):
        if H is not None:
            factor = _cho_factor_jitter(H)
        dth = scipy.linalg.cho_solve(factor, -g, check_finite=False)
        slope = float(g @ dth)
        theta = np.r_[b, w] if fit_intercept else w
        scale = 1.0 + np.max(np.abs(theta))
        rel_step = np.max(np.abs(dth)) / scale
        if rel_step <= tol:
            # the full step is below tol: take it without another pass (error ~ its square)
            w, b = w + dth[off:], b + (dth[0] if fit_intercept else 0.0)
            converged = True
            break
        if frozen and steps and np.linalg.norm(dth) > 0.5 * steps[-1]:
            frozen = False                       # chord not contracting: new exact Hessian
            h32 = False
            _, g, H, z = _binary_pass(X, t, w, b, lam, fit_intercept, terms, blocks)
            factor = _cho_factor_jitter(H)
            dth = scipy.linalg.cho_solve(factor, -g, check_finite=False)
            slope = float(g @ dth)
        frozen = frozen or rel_step <= _FREEZE
        dw, db = dth[off:], (dth[0] if fit_intercept else 0.0)
        w1, b1 = w + dw, b + db
        f1, g1, H1, z1 = _binary_pass(X, t, w1, b1, lam, fit_intercept, terms, blocks,
                                      need_hessian=not frozen, h32=h32)
        tau = 1.0
        if not (f1 <= f + 1e-4 * slope + 1e-14 * abs(f)) and slope < 0:
            while tau > 1e-10:
                tau *= 0.5
                if _line_objective(z, z1, t, terms, lam, w, dw, tau) <= f + 1e-4 * tau * slope:
                    break
            w1, b1 = w + tau * dw, b + tau * db
            frozen = False
            f1, g1, H1, z1 = _binary_pass(X, t, w1, b1, lam, fit_intercept, terms, blocks, h32=h32)
        step = tau * dth
        w, b, f, g, H, z = w1, b1, f1, g1, H1, z1
        steps.append(np.linalg.norm(step))
        if h32 and len(steps) >= 3 and steps[-1] > 0.5 * steps[-2]:
            h32 = False     # slow contraction: do not let single precision be the reason
        if tau < 1e-9:
            converged = np.max(np.abs(step)) / scale <= 1e3 * tol
            break
        if check_separable and n_iter >= 4 and steps[-1] >= 0.5 * steps[-2] \
                and steps[-2] >= 0.5 * steps[-3] and np.any(t * z > _saturation(terms)):
            # Newton steps do not shrink and probabilities saturate: test for separation
            if _separable(X, t, fit_intercept):
                separable = True
                break
            check_separable = False       # not separable: the MLE exists, keep going
    return w, b, f, n_iter, converged, separable, z


def _separable(X, t, fit_intercept):
    """Exact test (linear program): is there v != 0 with t_i (x_i'v + c) >= 0 for all i?

    Albert and Anderson (1984): the logistic / probit MLE exists iff the classes are not
    (quasi-)completely separated. The LP maximises sum_i t_i (x_i'v + c) under these
    constraints and |v|, |c| <= 1; a positive optimum means separation.
    """
    A = X * t[:, None]
    if fit_intercept:
        A = np.column_stack([t, A])
    scale = np.abs(A).sum()
    res = scipy.optimize.linprog(-A.sum(0), A_ub=-A, b_ub=np.zeros(A.shape[0]),
                                 bounds=(-1, 1), method="highs")
    return bool(res.status == 0 and -res.fun > 1e-7 * max(scale / A.shape[1], 1.0))


def _separable_multinomial(X, yidx, C, fit_intercept):
    """Multinomial version: is there V != 0 with (v_{y_i} - v_k)'x~_i >= 0 for all i, k?"""
    n = X.shape[0]
    Xt = np.column_stack([np.ones(n), X]) if fit_intercept else X
    p = Xt.shape[1]
    rows, cols, vals = [], [], []
    r = 0
    ii = np.arange(n)
    for k in range(C):
        mask = yidx != k
        idx = ii[mask]
        m = idx.size
        rr = np.repeat(np.arange(r, r + m), p)
        jj = np.tile(np.arange(p), m)
        # -(v_y - v_k)'x <= 0
        rows += [rr, rr]
        cols += [(yidx[idx] * p)[:, None].repeat(p, 1).ravel() + jj, k * p + jj]
        vals += [-Xt[idx].ravel(), Xt[idx].ravel()]
        r += m
    A = scipy.sparse.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                                shape=(r, C * p))
    c = np.asarray(A.sum(0)).ravel()      # minimise sum of -(margins) = maximise margins
    res = scipy.optimize.linprog(c, A_ub=A, b_ub=np.zeros(r), bounds=(-1, 1), method="highs")
    scale = np.abs(A).sum() / (C * p)
    return bool(res.status == 0 and -res.fun > 1e-7 * max(scale, 1.0))


def _encode(y, model, max_classes=None):
    """Labels -> (classes, codes) via ``linbook.base.encode_labels`` on the distinct values.

    Validating the (few) distinct labels instead of all of ``y`` gives the same errors
    while keeping the temporary memory at about one copy of ``y``.
    """
    classes = np.unique(y)
    classes, _ = encode_labels(classes, max_classes=max_classes, model=model)
    if classes.size == 2:
        t = (y == classes[1]).astype(np.int8)   # +-1 labels in N bytes
        t *= 2
        t -= 1
        return classes, t
    return classes, np.searchsorted(classes, y)


def _warn_separable(model):
    warnings.warn(
        f"{model}: the classes are (quasi-)separable, so the unregularised maximum-likelihood "
        "estimate does not exist: ||w|| grows without bound and the fitted probabilities "
        "saturate at 0 and 1. The returned coefficients are the last finite iterate. "
        "Set lam > 0 (l2 regularisation, a Gaussian prior) to get a unique finite fit.",
        SeparableDataWarning, stacklevel=3)


class _BinaryGLM(InformationCriteriaMixin, ClassifierMixin, BaseEstimator):
    """Shared plumbing of the binary models (not public)."""

    _terms = staticmethod(_logit_terms)
    _name = "model"

    def _check_params(self):
        if not np.isfinite(self.lam) or self.lam < 0:
            raise ValueError(f"lam must be a finite number >= 0; got {self.lam!r}")
        if self.tol <= 0:
            raise ValueError("tol must be positive")

    def _z(self, X):
        X = validate_X(self, X)
        return X @ self.coef_[0] + self.intercept_[0]

    def decision_function(self, X):
        """Linear predictor ``z = x'w + b`` (shape ``(n,)``); class ``classes_[1]`` when ``z > 0``."""
        return self._z(X)

    def predict(self, X):
        """Most probable class label."""
        return self.classes_[(self._z(X) > 0).astype(int)]

    def predict_log_proba(self, X):
        """Log class probabilities, shape ``(n, 2)``, computed without underflow."""
        z = self._z(X)
        return np.column_stack([self._log_p(-z), self._log_p(z)])

    def predict_proba(self, X):
        """Class probabilities, shape ``(n, 2)``, columns in the order of ``classes_``."""
        return np.exp(self.predict_log_proba(X))

    def _y_index(self, y):
        y = np.asarray(y)
        pos = np.searchsorted(self.classes_, y)
        pos = np.clip(pos, 0, self.classes_.size - 1)
        if not np.all(self.classes_[pos] == y):
            raise ValueError(f"y has labels not seen in fit; the model knows {self.classes_.tolist()}")
        return pos

    def log_likelihood(self, X, y):
        """Summed log-likelihood ``sum_i log p(y_i | x_i)`` in nats (penalty not included)."""
        X = validate_X(self, X)
        yi = self._y_index(y)
        if yi.shape[0] != X.shape[0]:
            raise ValueError("X and y have different numbers of samples")
        z = X @ self.coef_[0] + self.intercept_[0]
        return float(np.sum(self._log_p(np.where(yi == 1, z, -z))))

    @property
    def n_params_(self):
        """Number of free parameters: ``D + 1`` (``D`` without intercept)."""
        return self.n_features_in_ + int(self.fit_intercept)

    def nll_gradient(self, X, y):
        """Gradient of the penalised NLL at the fit, order ``[intercept, coef]``."""
        X = validate_X(self, X)
        t = 2.0 * self._y_index(y) - 1.0
        f, g, _, _ = _binary_pass(X, t, self.coef_[0], self.intercept_[0], self.lam,
                                  self.fit_intercept, self._terms, _block_rows(*X.shape),
                                  need_hessian=False)
        return g

    def nll_hessian(self, X):
        """Hessian of the penalised NLL at the fitted parameters, on the data ``X``.

        ``H = X~' S X~ + lam * diag(0, 1, ..., 1)`` with ``X~ = [1, X]`` (intercept first;
        no leading 1 when ``fit_intercept=False``) and ``S`` the per-sample curvature
        (``mu (1 - mu)`` for the logit). Order of parameters: ``[intercept_, coef_]``.
        The Laplace approximation's posterior covariance is ``H^{-1}``. For the logit
        the Hessian does not depend on ``y``.
        """
        X = validate_X(self, X)
        t = np.ones(X.shape[0])   # the curvature d2 does not depend on y for logit and
        if type(self)._terms is not _logit_terms:   # probit needs y: see nll_hessian_xy
            raise ValueError("use nll_hessian_xy(X, y) for the probit model")
        _, _, H, _ = _binary_pass(X, t, self.coef_[0], self.intercept_[0], self.lam,
                                  self.fit_intercept, self._terms, _block_rows(*X.shape))
        return H

    def nll_hessian_xy(self, X, y):
        """Hessian of the penalised NLL at the fit, on data ``(X, y)`` (any binary model)."""
        X = validate_X(self, X)
        t = 2.0 * self._y_index(y) - 1.0
        _, _, H, _ = _binary_pass(X, t, self.coef_[0], self.intercept_[0], self.lam,
                                  self.fit_intercept, self._terms, _block_rows(*X.shape))
        return H

    def _fit_binary(self, X, t, solver, max_iter):
        fi = self.fit_intercept
        ybar = np.clip((t > 0).mean(), 1e-12, 1 - 1e-12)
        b0 = self._b0(ybar) if fi else 0.0
        check = self.lam == 0
        if solver == "irls":
            w, b, f, n_iter, conv, sep, z = _binary_newton(
                X, t, self.lam, fi, self._terms, b0, max_iter, self.tol, check)
        else:
            blocks = _block_rows(*X.shape)
            off = 1 if fi else 0

            def fg(theta):
                f, g, _, _ = _binary_pass(X, t, theta[off:], theta[0] if fi else 0.0, self.lam, fi,
                                          self._terms, blocks, need_hessian=False)
                return f, g

            def hess(theta):
                return _binary_pass(X, t, theta[off:], theta[0] if fi else 0.0, self.lam, fi,
                                    self._terms, blocks)[2]

            th0 = np.zeros(X.shape[1] + off)
            if fi:
                th0[0] = b0
            res = _run_solver(solver, fg, hess, th0, max_iter, self.tol, X.shape[0])
            th = res.x
            w, b = th[off:], (th[0] if fi else 0.0)
            n_iter, conv, sep = res.n_iter, res.converged, False
            z = X @ w + b
        if check and not sep and np.any(t * z > _saturation(self._terms)):
            sep = _separable(X, t, fi)
        if sep:
            conv = False
            _warn_separable(type(self).__name__)
        self.coef_ = w[None, :].copy()
        self.intercept_ = np.array([b if fi else 0.0])
        self.n_iter_ = int(n_iter)
        self.converged_ = bool(conv)
        self.separable_ = bool(sep)
        if not conv and not sep:
            warnings.warn(f"{type(self).__name__} ({solver}) did not converge in {max_iter} "
                          "iterations; increase max_iter (or try solver='irls').", RuntimeWarning,
                          stacklevel=3)


def _run_solver(solver, fg, hess, th0, max_iter, tol, n):
    gtol = tol * max(n, 1)     # tol applies to the gradient of the *mean* NLL
    if solver == "newton":
        return optim.newton(fg, th0, grad=True, hess=hess, max_iter=max_iter, gtol=gtol, xtol=tol)
    if solver == "bfgs":
        return optim.bfgs(fg, th0, grad=True, max_iter=max_iter, gtol=gtol)
    if solver == "lbfgs":
        return optim.lbfgs(fg, th0, grad=True, max_iter=max_iter, gtol=gtol)
    return optim.gradient_descent(fg, th0, grad=True, step="backtracking", max_iter=max_iter, gtol=gtol)


class LogisticRegression(_BinaryGLM):
    """Logistic regression, binary or multinomial, with an l2 penalty.

    Minimises, over weights ``W`` and intercepts ``b``::

        NLL(W, b) + (lam / 2) * ||W||_F^2,     NLL = -sum_i log p(y_i | x_i)

    summed over samples, intercepts unpenalised. This is scikit-learn's
    ``LogisticRegression(C=1/lam)`` (``lam = 0``: no penalty, statsmodels ``Logit`` /
    ``MNLogit``). Two classes give the binary model ``p(y = classes_[1] | x) =
    sigmoid(x'w + b)``; three or more the multinomial (softmax) model.

    Parameters
    ----------
    lam : float, default 0
        l2 penalty strength (the precision of a Gaussian prior on the weights).
    solver : {"irls", "newton", "gd", "bfgs", "lbfgs"}, default "irls"
        ``"irls"``: Newton / IRLS with one blocked pass over ``X`` per iteration (binary:
        BLAS ``syrk`` on blocks, Cholesky solve, backtracking on the linear predictor);
        ``"newton"``: :func:`linbook.optim.newton` on the same objective; ``"gd"``,
        ``"bfgs"``, ``"lbfgs"``: the corresponding :mod:`linbook.optim` method.
        (For multinomial ``"irls"`` and ``"newton"`` both use the full block Hessian.)
    fit_intercept : bool, default True
    max_iter : int, optional
        Default 100 (irls, newton), 2000 (bfgs), 5000 (lbfgs), 20000 (gd).
    tol : float, default 1e-10
        Newton methods: stop when a step is below ``tol * (1 + max |theta|)`` (the next
        error is then about its square). First-order methods: stop when the gradient of
        the *mean* NLL is below ``tol`` in max-norm.

    Attributes
    ----------
    classes_ : ndarray of shape (C,)
    coef_ : ndarray of shape (1, D) (binary) or (C, D) (multinomial)
    intercept_ : ndarray of shape (1,) or (C,)
    n_iter_ : int
    converged_ : bool
    separable_ : bool
        ``lam = 0`` and the classes are (quasi-)separated (a ``SeparableDataWarning`` was given).
    n_features_in_ : int

    Notes
    -----
    Identifiability (multinomial). Softmax probabilities do not change when one vector
    is added to every ``w_c`` (and one number to every ``b_c``). The solver therefore
    works in the reduced parameterisation with class ``classes_[0]`` as reference
    (``v_c = w_c - w_0``, ``(C - 1)(D + 1)`` free parameters, as statsmodels ``MNLogit``);
    the penalty of the symmetric model, ``(lam/2) sum_c ||w_c||^2`` minimised over the free
    shift, equals ``(lam/2)(sum_c ||v_c||^2 - ||sum_c v_c||^2 / C)``, so the fit is
    exactly scikit-learn's symmetric l2 solution. ``coef_`` and ``intercept_`` are
    reported centred (``sum_c w_c = 0``, ``sum_c b_c = 0``): for ``lam > 0`` the centred
    weights *are* scikit-learn's ``coef_`` (the penalty forces ``sum_c w_c = 0``); its
    unpenalised intercepts are defined only up to a shift, so compare them centred.
    The binary model is not the two-class softmax: it has a single ``w`` penalised by
    ``(lam/2)||w||^2``, as scikit-learn's binary case.

    Derived in: chapter "Logistic regression" § "Negative log-likelihood, gradient and Hessian".
    """

    _terms = staticmethod(_logit_terms)

    def __init__(self, lam=0.0, solver="irls", fit_intercept=True, max_iter=None, tol=1e-10):
        self.lam = lam
        self.solver = solver
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol

    @staticmethod
    def _log_p(z):
        return log_sigmoid(z)

    @staticmethod
    def _b0(ybar):
        return float(np.log(ybar / (1 - ybar)))

    def fit(self, X, y):
        """Fit the model; returns ``self``.

        Raises
        ------
        ValueError
            NaN/inf or badly shaped input, a single class, continuous targets, bad ``lam``.

        Warns
        -----
        SeparableDataWarning
            ``lam = 0`` and the classes are (quasi-)separable (no finite MLE).
        """
        self._check_params()
        if self.solver not in _SOLVERS:
            raise ValueError(f"solver must be one of {_SOLVERS}; got {self.solver!r}")
        X, y = validate_data(X, y)
        self.classes_, codes = _encode(y, "LogisticRegression")
        self.n_features_in_ = X.shape[1]
        max_iter = _DEFAULT_MAX_ITER[self.solver] if self.max_iter is None else int(self.max_iter)
        if self.classes_.size == 2:
            self._fit_binary(X, codes, self.solver, max_iter)     # codes are +-1 (int8)
        else:
            self._fit_multinomial(X, codes, max_iter)
        return self

    # ---------------- multinomial ----------------
    @property
    def _multi(self):
        return self.classes_.size > 2

    def _mn_fg(self, X, yidx, C, with_hess=False):
        """Objective / gradient / Hessian in the reduced parameters theta (K = C - 1 rows)."""
        n, d = X.shape
        fi = self.fit_intercept
        off = 1 if fi else 0
        p = d + off
        K = C - 1
        lam = self.lam
        kappa = 1.0 / C
        Y = np.zeros((n, C))
        Y[np.arange(n), yidx] = 1.0
        Yr = Y[:, 1:]

        def unpack(theta):
            T = theta.reshape(K, p)
            return T[:, off:], (T[:, 0] if fi else np.zeros(K))

        def fg(theta):
            W, b = unpack(theta)
            A = np.empty((n, C))
            A[:, 0] = 0.0
            np.matmul(X, W.T, out=A[:, 1:])
            A[:, 1:] += b
            lse = logsumexp(A, axis=1)
            f = float(lse.sum() - A[np.arange(n), yidx].sum())
            P = np.exp(A - lse[:, None])
            R = P[:, 1:] - Yr
            G = np.empty((K, p))
            G[:, off:] = R.T @ X
            if fi:
                G[:, 0] = R.sum(0)
            Ws = W.sum(0)
            f += 0.5 * lam * (float(np.sum(W * W)) - kappa * float(Ws @ Ws))
            G[:, off:] += lam * (W - kappa * Ws)
            return f, G.ravel()

        def hess(theta):
            W, b = unpack(theta)
            H = np.zeros((K * p, K * p))
            for i, j in _block_rows(n, p * K):
                Xb = X[i:j]
                Xt = np.column_stack([np.ones(j - i), Xb]) if fi else Xb
                A = np.zeros((j - i, C))
                A[:, 1:] = Xb @ W.T + b
                P = softmax(A, axis=1)[:, 1:]
                for k in range(K):
                    H[k * p:(k + 1) * p, k * p:(k + 1) * p] += Xt.T @ (P[:, k:k + 1] * Xt)
                Z = (P[:, :, None] * Xt[:, None, :]).reshape(j - i, K * p)
                H -= Z.T @ Z
            pen = lam * (np.eye(K) - kappa * np.ones((K, K)))
            mask = np.zeros(p)
            mask[off:] = 1.0
            H += np.kron(pen, np.diag(mask))
            return H

        return fg, hess

    def _mn_fg_symmetric(self, X, yidx, C):
        """Objective and gradient in the symmetric parameters (C rows of ``[b_c, w_c]``).

        NLL + (lam/2) sum_c ||w_c||^2 (intercepts unpenalised): scikit-learn's
        parameterisation. At the optimum sum_c w_c = 0, since the NLL gradient rows sum
        to zero. Used only with lam > 0 (otherwise the weights are not identifiable).
        """
        n, d = X.shape
        fi = self.fit_intercept
        off = 1 if fi else 0
        p = d + off
        lam = self.lam
        rows = np.arange(n)

        def fg(theta):
            T = theta.reshape(C, p)
            W = T[:, off:]
            # class-major scores (C, n): reductions over the C classes are then
            # elementwise passes over contiguous rows, not short-row reductions
            A = W @ X.T
            if fi:
                A += T[:, :1]
            # one exp pass gives both log-sum-exp and the softmax (max-shifted: stable)
            m = A.max(axis=0)
            R = A - m
            np.exp(R, out=R)
            s = R.sum(axis=0)
            lse = m + np.log(s)
            f = float(lse.sum() - A[yidx, rows].sum()) + 0.5 * lam * float(np.sum(W * W))
            R /= s
            R[yidx, rows] -= 1.0
            G = np.empty((C, p))
            G[:, off:] = R @ X + lam * W
            if fi:
                G[:, 0] = R.sum(1)
            return f, G.ravel()

        return fg

    def _fit_multinomial(self, X, yidx, max_iter):
        n, d = X.shape
        C = self.classes_.size
        fi = self.fit_intercept
        off = 1 if fi else 0
        p = d + off
        fg, hess = self._mn_fg(X, yidx, C)
        th0 = np.zeros((C - 1, p))
        if fi:
            counts = np.bincount(yidx, minlength=C).astype(float)
            th0[:, 0] = np.log(counts[1:] / counts[0])
        solver = "newton" if self.solver == "irls" else self.solver
        if solver == "newton":
            res = optim.newton(fg, th0.ravel(), grad=True, hess=hess, max_iter=max_iter,
                               gtol=self.tol * n * 1e-3, xtol=self.tol)
        elif self.lam > 0:
            # First-order solvers run in the symmetric parameterisation (all C weight
            # vectors, each penalised): the same minimiser, but better conditioned than
            # the reference-class one (about half the L-BFGS iterations here).
            th_sym = np.zeros((C, p))
            if fi:
                th_sym[1:, 0] = th0[:, 0]
                th_sym[:, 0] -= th_sym[:, 0].mean()
            res = _run_solver(solver, self._mn_fg_symmetric(X, yidx, C), None, th_sym.ravel(),
                              max_iter, self.tol, n)
        else:
            res = _run_solver(solver, fg, hess, th0.ravel(), max_iter, self.tol, n)
        if solver != "newton" and self.lam > 0:
            T = res.x.reshape(C, p)
            V = T[:, off:].copy()
            c = T[:, 0].copy() if fi else np.zeros(C)
        else:
            T = res.x.reshape(C - 1, p)
            V = np.zeros((C, d))
            V[1:] = T[:, off:]
            c = np.zeros(C)
            if fi:
                c[1:] = T[:, 0]
        sep = False
        conv = res.converged
        if self.lam == 0:
            A = X @ V.T + c
            A -= A[np.arange(n), yidx][:, None]
            A[np.arange(n), yidx] = -np.inf
            margin = -A.max(axis=1)
            if np.any(margin > _SATURATED):
                sep = _separable_multinomial(X, yidx, C, fi)
        if sep:
            conv = False
            _warn_separable("LogisticRegression")
        elif not conv:
            warnings.warn(f"LogisticRegression ({self.solver}) did not converge in {max_iter} "
                          "iterations; increase max_iter.", RuntimeWarning, stacklevel=2)
        self.coef_ = V - V.mean(0)
        self.intercept_ = c - c.mean()
        self.n_iter_ = int(res.n_iter)
        self.converged_ = bool(conv)
        self.separable_ = bool(sep)

    def _reduced_theta(self):
        T = self.coef_[1:] - self.coef_[0]
        if self.fit_intercept:
            T = np.column_stack([self.intercept_[1:] - self.intercept_[0], T])
        return T.ravel()

    def decision_function(self, X):
        """Binary: ``z = x'w + b``, shape ``(n,)``. Multinomial: centred scores ``X W' + b``, ``(n, C)``."""
        X = validate_X(self, X)
        if self._multi:
            return X @ self.coef_.T + self.intercept_
        return X @ self.coef_[0] + self.intercept_[0]

    def predict(self, X):
        """Most probable class label."""
        a = self.decision_function(X)
        if self._multi:
            return self.classes_[np.argmax(a, axis=1)]
        return self.classes_[(a > 0).astype(int)]

    def predict_log_proba(self, X):
        """Log class probabilities ``(n, C)`` (stable log-sigmoid / log-softmax)."""
        a = self.decision_function(X)
        if self._multi:
            return log_softmax(a, axis=1)
        return np.column_stack([log_sigmoid(-a), log_sigmoid(a)])

    def log_likelihood(self, X, y):
        """Summed log-likelihood ``sum_i log p(y_i | x_i)`` in nats (penalty not included).

        Equals statsmodels ``Logit(...).fit().llf`` (binary) and ``MNLogit`` (multinomial)
        at the same parameters.
        """
        if not self._multi:
            return super().log_likelihood(X, y)
        L = self.predict_log_proba(X)
        yi = self._y_index(y)
        if yi.shape[0] != L.shape[0]:
            raise ValueError("X and y have different numbers of samples")
        return float(L[np.arange(L.shape[0]), yi].sum())

    @property
    def n_params_(self):
        """Free parameters: ``D + 1`` (binary), ``(C - 1)(D + 1)`` (multinomial); ``D`` for ``D + 1`` without intercept."""
        k = self.n_features_in_ + int(self.fit_intercept)
        return k * (self.classes_.size - 1)

    def nll_gradient(self, X, y):
        """Gradient of the penalised NLL at the fit (parameter order as :meth:`nll_hessian`)."""
        if not self._multi:
            return super().nll_gradient(X, y)
        X = validate_X(self, X)
        fg, _ = self._mn_fg(X, self._y_index(y), self.classes_.size)
        return fg(self._reduced_theta())[1]

    def nll_hessian(self, X):
        """Hessian of the penalised NLL at the fitted parameters, on the data ``X``.

        Binary: ``H = X~' S X~ + lam diag(0, 1, ..., 1)``, ``X~ = [1, X]``, ``S = diag(mu(1-mu))``,
        parameters ``[intercept_, coef_]`` (``D + 1``). Multinomial: the reduced parameters
        ``theta = (theta_1, ..., theta_{C-1})``, ``theta_c = [b_c - b_0, w_c - w_0]``
        (reference class ``classes_[0]``, as statsmodels MNLogit), with blocks
        ``H_{ck} = sum_i mu_ic (delta_ck - mu_ik) x~_i x~_i'`` plus the penalty
        ``lam (I - 11'/C) kron diag(0, 1, ..., 1)``. The Hessian does not depend on ``y``.
        Positive definite at the fit; ``inv(H)`` is the Laplace posterior covariance.
        """
        if not self._multi:
            return super().nll_hessian(X)
        X = validate_X(self, X)
        _, hess = self._mn_fg(X, np.zeros(X.shape[0], dtype=int), self.classes_.size)
        return hess(self._reduced_theta())


class ProbitRegression(_BinaryGLM):
    """Binary probit regression ``p(y = classes_[1] | x) = Phi(x'w + b)``.

    Minimises ``-sum_i log Phi(t_i (x_i'w + b)) + (lam/2) ||w||^2`` (``t_i = +-1``, intercept
    unpenalised) by Newton's method (blocked, Cholesky, backtracking) with the stable
    ``log Phi = scipy.special.log_ndtr``. With ``lam = 0`` it equals statsmodels ``Probit``.

    Parameters
    ----------
    lam : float, default 0
    solver : {"irls", "newton", "gd", "bfgs", "lbfgs"}, default "irls"
    fit_intercept : bool, default True
    max_iter : int, optional
    tol : float, default 1e-10

    Attributes
    ----------
    classes_, coef_ (1, D), intercept_ (1,), n_iter_, converged_, separable_, n_features_in_

    Derived in: chapter "Logistic regression" § "Probit regression".
    """

    _terms = staticmethod(_probit_terms)

    def __init__(self, lam=0.0, solver="irls", fit_intercept=True, max_iter=None, tol=1e-10):
        self.lam = lam
        self.solver = solver
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol

    @staticmethod
    def _log_p(z):
        return log_ndtr(z)

    @staticmethod
    def _b0(ybar):
        return float(scipy.special.ndtri(ybar))

    def fit(self, X, y):
        """Fit by Newton's method; returns ``self`` (warns on separable data with ``lam = 0``)."""
        self._check_params()
        if self.solver not in _SOLVERS:
            raise ValueError(f"solver must be one of {_SOLVERS}; got {self.solver!r}")
        X, y = validate_data(X, y)
        self.classes_, t = _encode(y, "ProbitRegression", max_classes=2)
        self.n_features_in_ = X.shape[1]
        max_iter = _DEFAULT_MAX_ITER[self.solver] if self.max_iter is None else int(self.max_iter)
        self._fit_binary(X, t, self.solver, max_iter)
        return self

    def nll_hessian(self, X, y=None):
        """Hessian of the penalised NLL at the fit; the probit curvature depends on ``y``, so pass it."""
        if y is None:
            raise ValueError("ProbitRegression.nll_hessian needs y: its curvature depends on the labels")
        return self.nll_hessian_xy(X, y)
