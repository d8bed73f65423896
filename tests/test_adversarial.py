"""Adversarial inputs for every public estimator and the main public functions: a right answer or a clear error.

Cases are generated, not listed: :func:`_estimators` finds every public estimator class
(``linbook.__all__`` and the subpackages' ``__all__``) and :data:`SPECS` says what kind it
is; a new estimator without a spec fails ``test_every_estimator_has_a_spec``. Each case
family below is crossed with every estimator it applies to. The oracle of a case is either
a peer library (scikit-learn, scipy), an exact closed form, or an exact invariance of the
model's maths (the fit on ``X * s`` with the penalty mapped by ``s`` predicts what the fit
on ``X`` predicts; an offset column changes nothing when the intercept is unpenalised; a
constant column changes nothing; integer weights equal repeated rows; ...). The rules of
"clear error" and "right answer required" are those of ``tests/adversarial/harness.py``:
a ValueError/TypeError naming the input and saying what to do, and after a failed ``fit``
the model is as it was.

"Exact" estimators minimise a deterministic objective (or are closed forms), so their
invariances hold to rounding; the stochastic ones (Perceptron, SGD, LMS, OGD) are held to
"the same answer on the same numbers" (containers, labels, refits) and to "finite and still
fitting the data, or a clear error" on extreme scales.

Known defects in modules this file's author does not own are strict xfails (:data:`KNOWN`),
each naming the input, the expected and the observed behaviour.
"""

from __future__ import annotations

import inspect
import math
import warnings
from dataclasses import dataclass, field

import numpy as np
import pytest
import scipy.sparse as sp
from adversarial.harness import answer_or_clear_error, assert_clear_error, right_answer_required, unrepresentable
from scipy import stats
from sklearn.base import BaseEstimator

import linbook

# ----------------------------------------------------------------------------------- estimators


def _estimators():
    """Every public estimator class, found from the public ``__all__`` lists (by name)."""
    import importlib

    found = {}
    modules = [linbook] + [importlib.import_module(f"linbook.{m}") for m in
                           ("linear", "logistic", "discriminant", "online", "laplace", "perceptron")]
    for module in modules:
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isclass(obj) and issubclass(obj, BaseEstimator):
                found[name] = obj
    return found


@dataclass
class Spec:
    kind: str                       # "reg", "clf" or "transform"
    params: dict = field(default_factory=dict)
    exact: bool = True              # a deterministic optimum / closed form (its invariances hold to rounding)
    pen: tuple | None = None        # (parameter, power p): the fit on X*s with param*s**p equals the fit on X
    dup_invariant: str | None = None  # "same": a duplicated column changes nothing; "sqrt2": as column*sqrt(2)
    intercept_prior: bool = False   # the intercept is penalised too (offsets and constant columns matter)
    rtol: float = 1e-6


SPECS = {
    "LinearRegression": Spec("reg", dup_invariant="same"),
    "Ridge": Spec("reg", {"lam": 1.5}, pen=("lam", 2), dup_invariant="sqrt2"),
    "Lasso": Spec("reg", {"lam": 4.0}, pen=("lam", 1), dup_invariant="same", rtol=1e-5),
    "LeastAbsoluteDeviation": Spec("reg", dup_invariant="same", rtol=1e-5),
    "RecursiveLeastSquares": Spec("reg", {"prior_precision": 0.5}, pen=("prior_precision", 2), rtol=1e-5),
    "SGDRegressor": Spec("reg", {"random_state": 0}, exact=False),
    "LMS": Spec("reg", {"random_state": 0}, exact=False),
    "OnlineGradientDescent": Spec("reg", exact=False),
    "LogisticRegression": Spec("clf", {"lam": 1.0}, pen=("lam", 2), dup_invariant="sqrt2", rtol=1e-5),
    "ProbitRegression": Spec("clf", {"lam": 1.0}, pen=("lam", 2), dup_invariant="sqrt2", rtol=1e-5),
    "BayesianLogisticRegression": Spec("clf", {"prior_precision": 0.5}, pen=("prior_precision", 2),
                                       dup_invariant="sqrt2", intercept_prior=True, rtol=1e-5),
    "QDA": Spec("clf"),
    "LDA": Spec("clf"),
    "RDA": Spec("clf", {"shrinkage": 0.3}),
    "DiagonalLDA": Spec("clf"),
    "GaussianNaiveBayes": Spec("clf"),
    "NearestShrunkenCentroids": Spec("clf", {"shrink_threshold": 0.2}),
    "FisherLDA": Spec("transform"),
    "Perceptron": Spec("clf", {"random_state": 0}, exact=False),
    "SGDClassifier": Spec("clf", {"random_state": 0}, exact=False),
}
ESTIMATORS = _estimators()
NAMES = sorted(ESTIMATORS)


def make(name, **over):
    return ESTIMATORS[name](**{**SPECS[name].params, **over})


def _takes(name, param):
    return param in inspect.signature(ESTIMATORS[name].fit).parameters


def _has_param(name, param):
    return param in inspect.signature(ESTIMATORS[name].__init__).parameters


# ----------------------------------------------------------------------------------------- data


def reg_data(n=40, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * np.linspace(1.0, 2.5, d) + np.linspace(-1.0, 2.0, d)
    y = X @ np.linspace(1.0, -0.5, d) + 0.7 + 0.5 * rng.standard_normal(n)
    return X, y


def clf_data(n=60, d=3, seed=0):
    """Two overlapping classes (not separable, so an unpenalised logistic MLE exists)."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    X = rng.standard_normal((n, d)) * np.linspace(1.0, 2.0, d) + np.outer(y, np.linspace(1.0, 0.5, d))
    return X, y


def data(name, **kw):
    return reg_data(**kw) if SPECS[name].kind == "reg" else clf_data(**kw)


def out(est, X):
    """What the case compares: predictions, probabilities, or the projection (columns normalised, signed)."""
    kind = "transform" if not hasattr(est, "predict") else ("clf" if hasattr(est, "classes_") else "reg")
    if kind == "reg":
        return np.asarray(est.predict(X), dtype=float)
    if kind == "clf":
        if hasattr(est, "predict_proba"):
            return np.asarray(est.predict_proba(X), dtype=float)
        return np.asarray(est.decision_function(X), dtype=float)
    Z = np.asarray(est.transform(X), dtype=float)
    Z = Z / np.max(np.abs(Z), axis=0)                 # first: the norm of columns near 1e300 overflows
    Z = Z / np.linalg.norm(Z, axis=0)
    return Z * np.sign(Z[0])


def fit_out(est, X, y, Xp=None, **fit_kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y, **fit_kw)
        return out(est, X if Xp is None else Xp)


def close(got, want, rtol, what):
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    assert np.all(np.isfinite(got)), f"{what}: silent non-finite output {got.ravel()[:4]}"
    scale = max(np.max(np.abs(want)), 1e-300)
    err = np.max(np.abs(got - want)) / scale if want.size else 0.0
    assert err <= rtol, f"{what}: relative error {err:.3g} > {rtol:g}"


def fits_data(name, est, X, y, base_score):
    """A stochastic model on a rescaled problem: finite outputs that still fit the data."""
    o = out(est, X)
    assert np.all(np.isfinite(o)), f"silent non-finite output {o.ravel()[:4]}"
    score = est.score(X, y)
    assert score >= base_score - 0.15, f"score fell from {base_score:.3f} to {score:.3f} (a silent wrong fit)"


def case_ids(cases):
    return [f"{n}-{c}" for n, c in cases]


#: Known defects outside this author's modules: (estimator or function, case) -> reason.
KNOWN: dict[tuple[str, str], str] = {
}


def params(cases):
    out_ = []
    for n, c in cases:
        marks = [pytest.mark.xfail(strict=True, reason=KNOWN[(n, c)])] if (n, c) in KNOWN else []
        out_.append(pytest.param(n, c, id=f"{n}-{c}", marks=marks))
    return out_


# --------------------------------------------------------------------------------- the families


def test_every_estimator_has_a_spec():
    assert set(NAMES) == set(SPECS), f"estimators without a spec: {set(NAMES) - set(SPECS)}"


SCALES = (1e-150, 1e-12, 1e12, 1e150, 1e300)
SCALE_CASES = [(n, f"scale{s:g}") for n in NAMES for s in SCALES]


@pytest.mark.parametrize("name, case", params(SCALE_CASES))
def test_feature_scale(name, case):
    """``X * s``: the fit with the penalty mapped (``param * s**p``) predicts what the fit on X predicts."""
    s, spec = float(case[5:]), SPECS[name]
    X, y = data(name)
    over = {"fit_intercept": False} if spec.intercept_prior else {}   # a prior on the intercept does not scale
    base = make(name, **over)
    want = fit_out(base, X, y)
    if spec.pen:
        p, power = spec.pen
        exp10 = math.log10(spec.params[p]) + power * math.log10(s)
        if exp10 > 307 or exp10 < -307:
            pytest.skip(f"{p} * s**{power} is not a double")   # the mapped problem cannot be stated
        over[p] = spec.params[p] * s ** power
    est = make(name, **over)
    if not spec.exact:
        got = answer_or_clear_error(lambda: fit_out(est, X * s, y), corrupts="X")
        if got is not None:
            fits_data(name, est, X * s, y, base.score(X, y))
        return
    coef = getattr(base, "coef_", None)
    why = unrepresentable(coef, 1 / s) if coef is not None and spec.kind != "transform" else None
    got = right_answer_required(lambda: fit_out(est, X * s, y), unreachable=why)
    if got is not None:
        close(got, want, max(spec.rtol, 1e-6), f"{name} on X*{s:g}")


OFFSETS = (1e8, 1e12)
OFFSET_CASES = [(n, f"offset{c:g}") for n in NAMES if SPECS[n].exact and not SPECS[n].intercept_prior
                for c in OFFSETS]


@pytest.mark.parametrize("name, case", params(OFFSET_CASES))
def test_column_offset(name, case):
    """A column plus 1e8..1e12: the answer of the same rounded numbers shifted back (unpenalised intercept)."""
    c = float(case[6:])
    X, y = data(name)
    Xo = X.copy()
    Xo[:, 1] += c
    Xr = X.copy()
    Xr[:, 1] = Xo[:, 1] - c                          # exact: the data the offset column really holds
    want = fit_out(make(name), Xr, y)
    got = right_answer_required(lambda: fit_out(make(name), Xo, y))
    # the model can do no better than the data: a feature rounded to eps * c
    close(got, want, max(SPECS[name].rtol, 50 * np.finfo(float).eps * c), f"{name} with column 1 + {c:g}")


@pytest.mark.parametrize("name, case", params([(n, "constant-column") for n in NAMES
                                           if SPECS[n].exact and not SPECS[n].intercept_prior]))
def test_constant_column(name, case):
    """A constant column carries nothing: the same answer as without it (or a clear error for X)."""
    X, y = data(name)
    want = fit_out(make(name), X, y)
    Xc = np.column_stack([X[:, :1], np.full(len(X), 3.7), X[:, 1:]])
    got = right_answer_required(lambda: fit_out(make(name), Xc, y))
    close(got, want, SPECS[name].rtol, f"{name} with a constant column")


DUP_CASES = [(n, "duplicate-column") for n in NAMES if SPECS[n].dup_invariant or n in ("LDA", "QDA", "FisherLDA")]


@pytest.mark.parametrize("name, case", params(DUP_CASES))
def test_duplicate_column(name, case):
    """A duplicated column: the original answer (an L2 penalty splits: as the column times sqrt 2)."""
    X, y = data(name)
    Xd = np.column_stack([X, X[:, 0]])
    ref = X.copy()
    if SPECS[name].dup_invariant == "sqrt2":
        ref[:, 0] *= np.sqrt(2.0)
    want = fit_out(make(name), ref, y)
    if SPECS[name].dup_invariant:
        got = right_answer_required(lambda: fit_out(make(name), Xd, y))
    else:   # a singular covariance: the original answer or a clear error naming X
        got = answer_or_clear_error(lambda: fit_out(make(name), Xd, y), corrupts="X")
    if got is not None:
        close(got, want, SPECS[name].rtol * 10, f"{name} with a duplicated column")


def _peer(name):
    """A peer library's estimator equal to ``make(name)`` (None when there is none)."""
    from sklearn import discriminant_analysis as da
    from sklearn import linear_model as lm
    from sklearn.naive_bayes import GaussianNB

    lam = SPECS[name].params.get("lam")
    return {"LinearRegression": lambda n: lm.LinearRegression(),
            "Ridge": lambda n: lm.Ridge(alpha=lam),
            "Lasso": lambda n: lm.Lasso(alpha=lam / n, tol=1e-12, max_iter=100000),
            "LogisticRegression": lambda n: lm.LogisticRegression(C=1 / lam, tol=1e-12, max_iter=10000),
            "LDA": lambda n: da.LinearDiscriminantAnalysis(solver="lsqr"),
            "QDA": lambda n: da.QuadraticDiscriminantAnalysis(),
            "GaussianNaiveBayes": lambda n: GaussianNB()}.get(name)


SHAPES = {"N<D": (8, 20), "N=1": (1, 3), "N=2": (2, 3), "N=3": (3, 3)}
SHAPE_CASES = [(n, s) for n in NAMES for s in SHAPES]


@pytest.mark.parametrize("name, case", params(SHAPE_CASES))
def test_small_n(name, case):
    """N < D, N = 1, 2, 3: a peer's answer (min-norm / penalised), or a clear error naming X or y."""
    n, d = SHAPES[case]
    X, y = data(name, n=max(n, 4), d=d, seed=3)
    X, y = X[:n], y[:n]
    if SPECS[name].kind != "reg" and n >= 2:
        y = np.arange(n) % 2
    got = answer_or_clear_error(lambda: fit_out(make(name), X, y), corrupts=("X", "y"))
    if got is None:
        return
    assert np.all(np.isfinite(got)), f"silent non-finite output {got.ravel()[:4]}"
    peer = _peer(name)
    if peer is not None and (SPECS[name].kind == "reg" or n >= 2):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                ref = peer(n).fit(X, y)
            except ValueError:
                return
            want = ref.predict_proba(X) if hasattr(ref, "predict_proba") else ref.predict(X)
        if np.all(np.isfinite(want)):
            close(got, want, 1e-4, f"{name} at {case} vs the peer")


LABELS = {"strings": lambda y: np.where(y == 1, "yes", "no"), "bools": lambda y: y == 1,
          "negative-ints": lambda y: np.where(y == 1, -1, -7), "floats": lambda y: y + 1.0,
          "object-strings": lambda y: np.where(y == 1, "b", "a").astype(object),
          "three-string-classes": None}
LABEL_CASES = [(n, c) for n in NAMES if SPECS[n].kind != "reg" for c in LABELS]


@pytest.mark.parametrize("name, case", params(LABEL_CASES))
def test_label_types(name, case):
    """Labels as strings / bools / negative ints / floats: the 0/1 fit's answer, and predict returns the labels."""
    X, y = clf_data()
    if case == "three-string-classes":
        y = np.arange(len(X)) % 3
        X = X + np.outer(y, [0.0, 1.0, -1.0])
        mapped = np.array(["c", "a", "b"])[y]
    else:
        mapped = LABELS[case](y)
    base = make(name)
    want = answer_or_clear_error(lambda: fit_out(base, X, y), corrupts="y")
    est = make(name)
    got = answer_or_clear_error(lambda: fit_out(est, X, mapped), corrupts="y")
    if want is None or got is None:
        assert want is None and got is None, "the labels' type changed whether the fit is accepted"
        return
    labels = np.unique(mapped)                  # the mapped labels may sort otherwise than 0, 1, 2
    if got.ndim == 2 and got.shape[1] == labels.size:
        # column of classes_ that holds class k of the 0/1/2 fit
        codes = [np.flatnonzero(labels == mapped[np.flatnonzero(y == k)[0]])[0] for k in range(labels.size)]
        got = got[:, codes]
    close(got, want, 1e-9, f"{name} with {case} labels")
    if hasattr(est, "predict"):
        pred = est.predict(X)
        want_pred = np.asarray(mapped)[[np.flatnonzero(y == k)[0] for k in base.predict(X)]]
        assert np.array_equal(np.asarray(pred), want_pred), "predict does not return the training labels"


BAD_Y = {"one-class": lambda y: np.zeros_like(y), "continuous": lambda y: y + np.linspace(0.01, 0.5, y.size),
         "class-with-one-row": None}


@pytest.mark.parametrize("name, case", params([(n, c) for n in NAMES if SPECS[n].kind != "reg" for c in BAD_Y]))
def test_bad_targets(name, case):
    """One class / continuous y: a clear error naming y. A class of one row: an answer or a clear error."""
    X, y = clf_data()
    if case == "class-with-one-row":
        y = y.copy()
        y[0] = 2
        got = answer_or_clear_error(lambda: fit_out(make(name), X, y), corrupts=("y", "sample_weight"))
        if got is not None:
            assert np.all(np.isfinite(got)), f"silent non-finite output {got.ravel()[:4]}"
        return
    est = make(name)
    with pytest.raises((ValueError, TypeError)) as info, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, BAD_Y[case](y))
    assert_clear_error(info.value, "y")


WEIGHT_CASES = [(n, c) for n in NAMES if _takes(n, "sample_weight")
                for c in ("zeros", "all-equal-3", "integer", "huge-1e200", "huge-1e12")]


@pytest.mark.parametrize("name, case", params(WEIGHT_CASES))
def test_sample_weight(name, case):
    """Zero weights drop rows, all weights c equal the unweighted fit (sum-form penalty / c), integers repeat rows."""
    X, y = data(name)
    spec, n = SPECS[name], len(X)
    w = np.ones(n)
    if case == "zeros":
        w[::3] = 0.0
        ref_X, ref_y, ref_over = X[w > 0], y[w > 0], {}
    elif case == "all-equal-3":      # weights count rows (the documented meaning): each row three times
        w[:] = 3.0                   # (= the unweighted fit for an MLE; a sum-form penalty / 3)
        ref_X, ref_y, ref_over = np.repeat(X, 3, axis=0), np.repeat(y, 3), {}
    elif case == "integer":
        w = (np.arange(n) % 3).astype(float) + 1
        ref_X, ref_y, ref_over = np.repeat(X, w.astype(int), axis=0), np.repeat(y, w.astype(int)), {}
    else:
        w[0] = float(case[5:])
        got = answer_or_clear_error(lambda: fit_out(make(name), X, y, sample_weight=w), corrupts="sample_weight")
        if got is None:
            return
        assert np.all(np.isfinite(got)), f"silent non-finite output {got.ravel()[:4]}"
        if name in ("LinearRegression", "Ridge") and case == "huge-1e200":
            # the limit: the fit through (x_0, y_0) that fits the other rows best (penalty on w only)
            D, r = X[1:] - X[0], y[1:] - y[0]
            lam = spec.params.get("lam", 0.0)
            coef = np.linalg.lstsq(np.vstack([D, np.sqrt(lam) * np.eye(X.shape[1])]),
                                   np.concatenate([r, np.zeros(X.shape[1])]), rcond=None)[0]
            close(got, y[0] + (X - X[0]) @ coef, 1e-8, f"{name} with one weight 1e200")
        elif spec.kind == "clf" and spec.exact:
            assert make(name).fit(X, y, sample_weight=w).predict(X[:1])[0] == y[0], \
                "the row of weight >= 1e12 is not predicted as its own class"
        return
    if not spec.exact:
        got = answer_or_clear_error(lambda: fit_out(make(name), X, y, sample_weight=w), corrupts="sample_weight")
        if got is not None:
            assert np.all(np.isfinite(got))
        return
    want = fit_out(make(name, **ref_over), ref_X, ref_y, Xp=X)
    got = fit_out(make(name), X, y, Xp=X, sample_weight=w)
    close(got, want, spec.rtol * 10, f"{name} with sample_weight {case}")


def _containers(X):
    import pandas as pd

    wide = np.zeros((X.shape[0], 2 * X.shape[1]))
    wide[:, ::2] = X
    return {"float32": X.astype(np.float32), "int": np.round(X * 3).astype(np.int64),
            "bool": X > 0.5, "pandas": pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])]),
            "list": X.tolist(), "non-contiguous": wide[:, ::2], "fortran": np.asfortranarray(X)}


CONTAINER_CASES = [(n, c) for n in NAMES for c in _containers(np.zeros((2, 2)))]


@pytest.mark.parametrize("name, case", params(CONTAINER_CASES))
def test_input_containers(name, case):
    """float32 / int / bool / pandas / list / strided / Fortran X: the float64 answer on the same numbers."""
    X, y = data(name)
    Xa = _containers(X)[case]
    as64 = np.asarray(Xa, dtype=np.float64).copy(order="C")
    want = fit_out(make(name), as64, y)
    est = make(name)
    got = right_answer_required(lambda: fit_out(est, Xa, y))
    close(got, want, 1e-4 if case == "float32" else 1e-9, f"{name} on {case} X")


def _sparse_messy(X):
    """CSR with duplicate entries (summing to X) and unsorted indices."""
    rows, cols = np.nonzero(X)
    vals = X[rows, cols]
    r = np.concatenate([rows[::-1], rows[::-1]])
    c = np.concatenate([cols[::-1], cols[::-1]])
    v = np.concatenate([0.25 * vals[::-1], 0.75 * vals[::-1]])
    M = sp.csr_matrix((v, (r, c)), shape=X.shape)       # the constructor sums duplicates: rebuild raw
    indptr = np.concatenate([[0], np.cumsum(np.bincount(r, minlength=X.shape[0]))])
    order = np.argsort(r, kind="stable")
    M = sp.csr_matrix((v[order], c[order], indptr), shape=X.shape)
    assert not M.has_sorted_indices or not M.has_canonical_format
    return M


@pytest.mark.parametrize("name, case", params([(n, "csr-duplicates-unsorted") for n in NAMES]))
def test_messy_csr(name, case):
    """CSR with duplicate and unsorted entries: the dense answer, or a clear error naming X."""
    X, y = data(name)
    M = _sparse_messy(X)
    want = fit_out(make(name), X, y)
    got = answer_or_clear_error(lambda: fit_out(make(name), M, y), corrupts="X")
    if got is not None:
        close(got, want, 1e-6 if SPECS[name].exact else 1e-9, f"{name} on messy CSR")


NONFINITE = [(n, f"{what}-{v}") for n in NAMES for what in ("X", "y", "sample_weight", "predict-X")
             for v in ("nan", "inf")
             if (what != "sample_weight" or _takes(n, "sample_weight"))
             and (what != "predict-X" or hasattr(ESTIMATORS[n], "predict") or SPECS[n].kind == "transform")]


@pytest.mark.parametrize("name, case", params(NONFINITE))
def test_nonfinite(name, case):
    """NaN/inf in X, y, sample_weight or the X of predict: a clear error naming it; the model unchanged."""
    what, v = case.rsplit("-", 1)
    X, y = data(name)
    bad = np.nan if v == "nan" else np.inf
    est = make(name)
    want = fit_out(est, X, y)
    state = {k: np.copy(a) if isinstance(a, np.ndarray) else a for k, a in vars(est).items()}
    if what == "predict-X":
        Xb = X.copy()
        Xb[4, 1] = bad
        if v == "nan" and getattr(est, "_nan_in_fit", None) is not None:
            # the Gaussian classifiers read NaN as missing: the answer of the model without that feature
            # (NSC's threshold is in units of the pooled spread of all features: only finiteness)
            got = out(est, Xb)[4]
            if name == "NearestShrunkenCentroids":
                assert np.all(np.isfinite(got)), f"silent non-finite output {got}"
                return
            ref = fit_out(make(name), np.delete(X, 1, axis=1), y, Xp=np.delete(X, 1, axis=1)[4:5])[0]
            close(got, ref, 1e-6, f"{name}: a NaN feature in predict is marginalised")
            return
        with pytest.raises((ValueError, TypeError)) as info:
            out(est, Xb)
        assert_clear_error(info.value, "X")
        return
    args = {"X": X.copy(), "y": np.asarray(y, dtype=float).copy(), "sample_weight": np.ones(len(X))}
    args[what].flat[7] = bad
    fit_kw = {"sample_weight": args["sample_weight"]} if what == "sample_weight" else {}
    if what == "X" and v == "nan" and getattr(est, "_nan_in_fit", False):
        got = answer_or_clear_error(lambda: fit_out(make(name), args["X"], y), corrupts="X")
        if got is not None:
            assert np.all(np.isfinite(got))
        return
    with pytest.raises((ValueError, TypeError)) as info, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(args["X"], args["y"] if what == "y" else y, **fit_kw)
    assert_clear_error(info.value, what)
    for k, a in state.items():     # a failed fit leaves the model as it was
        now = getattr(est, k, None)
        assert type(now) is type(a), f"attribute {k} changed by a failed fit"
        if isinstance(a, np.ndarray):
            assert np.array_equal(now, a, equal_nan=True), f"attribute {k} changed by a failed fit"
    close(out(est, X), want, 0.0, f"{name} after a failed fit")


def _hyper_cases():
    cases = []
    for n in NAMES:
        for p in ("lam", "prior_precision"):
            if _has_param(n, p) and inspect.signature(ESTIMATORS[n]).parameters[p].default != "deprecated":
                cases += [(n, f"{p}=1e-300"), (n, f"{p}=1e300")]
        if _has_param(n, "max_iter"):
            cases.append((n, "max_iter=1"))
        if _has_param(n, "tol"):
            cases.append((n, "tol=0"))
    return cases


@pytest.mark.parametrize("name, case", params(_hyper_cases()))
def test_hyperparameters(name, case):
    """lam 1e-300 = the unpenalised fit; 1e300 = the intercept-only fit; max_iter=1 and tol=0 stay honest."""
    p, v = case.split("=")
    X, y = data(name)
    spec = SPECS[name]
    est = make(name, **{p: float(v) if p != "max_iter" else int(v)})
    got = answer_or_clear_error(lambda: fit_out(est, X, y), corrupts=p)
    if got is None:
        assert p in ("max_iter", "tol") or v == "1e-300" and p == "prior_precision", \
            f"refused a valid {p}={v}"
        return
    assert np.all(np.isfinite(got)), f"silent non-finite output {got.ravel()[:4]}"
    full = fit_out(make(name), X, y)
    if p in ("max_iter", "tol"):
        if getattr(est, "converged_", False) and spec.exact:
            close(got, full, 1e-3, f"{name}: converged_ is true after {case} but the answer is not the optimum")
        if p == "tol" and spec.exact:
            close(got, full, spec.rtol * 10, f"{name} with tol=0")
        return
    if not spec.exact:
        return
    if v == "1e300":     # everything penalised is 0: the intercept-only model
        if spec.kind == "reg":
            close(got, np.full(len(X), np.mean(y)), 1e-6, f"{name} with {case}")
        else:
            close(got[:, 1], np.full(len(X), np.mean(y)), 1e-6, f"{name} with {case}")
        return
    zero = answer_or_clear_error(lambda: fit_out(make(name, **{p: 0.0}), X, y), corrupts=p)
    if zero is None:
        zero = fit_out(linbook.LinearRegression(), X, y) if spec.kind == "reg" else None
    if zero is not None:
        close(got, zero, 1e-5, f"{name} with {case} vs {p}=0")


@pytest.mark.parametrize("name, case", params([(n, "refit-other-D") for n in NAMES]))
def test_refit_and_predict_shape(name, case):
    """A refit on other D equals a fresh fit; predict with another D or other feature names is refused clearly."""
    import pandas as pd

    X, y = data(name)
    X5, y5 = data(name, d=5, seed=1)
    want = fit_out(make(name), X, y)
    est = make(name)
    fit_out(est, X5, y5)
    close(fit_out(est, X, y), want, 0.0, f"{name} refit after a fit on D=5")
    with pytest.raises(ValueError) as info:
        out(est, X5)
    assert_clear_error(info.value, "X")
    cols = [f"f{j}" for j in range(X.shape[1])]
    fit_out(est, pd.DataFrame(X, columns=cols), y)
    shuffled = pd.DataFrame(X[:, ::-1], columns=cols[::-1])
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", UserWarning)
            got = out(est, shuffled)
    except (ValueError, UserWarning) as exc:
        assert "feature names" in str(exc), f"unclear refusal of reordered columns: {exc}"
        return
    close(got, want, 1e-9, f"{name}: a DataFrame with reordered columns read by position")


@pytest.mark.parametrize("name, case", params([(n, "converged-at-optimum") for n in NAMES
                                              if SPECS[n].exact and _has_param(n, "max_iter")]))
def test_converged_flag(name, case):
    """converged_ after the default fit: true, and the answer equals a tighter fit's."""
    X, y = data(name)
    est = make(name)
    got = fit_out(est, X, y)
    if hasattr(est, "converged_"):
        assert est.converged_, "converged_ false on an easy problem"
    tight = make(name, max_iter=100000, **({"tol": 1e-15} if _has_param(name, "tol") else {}))
    close(got, fit_out(tight, X, y), 1e-6, f"{name} default vs tight fit")


# ---------------------------------------------------------------------------------- functions


def _fn_cases():
    return ["gaussian_mle", "mvn_mle", "mvn_logpdf", "mahalanobis", "mvn_log_likelihood", "mvn_entropy",
            "mvn_cholesky", "mvn_sample", "hat_diagonal", "loocv_least_squares", "loocv_ridge"]


FN_CASES = [(f, f"scale{s:g}") for f in _fn_cases() for s in SCALES] + \
           [(f, f"offset{c:g}") for f in ("gaussian_mle", "mvn_mle", "hat_diagonal", "loocv_least_squares",
                                          "loocv_ridge", "mvn_logpdf") for c in OFFSETS]


def _mvn_problem(seed=0, n=30, d=3):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((d, d))
    cov = A @ A.T + d * np.eye(d)
    mean = rng.standard_normal(d)
    X = mean + rng.standard_normal((n, d)) @ A.T
    return X, mean, cov


def _fn(name, s=1.0, c=0.0):
    """(result on the transformed problem, its exact reference from the untransformed one, reference size)."""
    from linbook import estimation, gaussian, selection

    X, mean, cov = _mvn_problem()
    Xs = X * s
    Xs[:, 0] += c
    Xr = X.copy()
    Xr[:, 0] = (Xs[:, 0] - c) / s if c else X[:, 0]        # the numbers the offset column really holds
    shift = np.zeros(X.shape[1])
    shift[0] = c
    ms, covs = mean * s + shift, cov * s * s
    if not np.all(np.isfinite(covs)) and name.startswith(("mvn", "mahalanobis")):
        pytest.skip("cov * s**2 is not a double")       # the transformed problem cannot be stated
    y = Xr @ [1.0, -2.0, 0.5] + np.sin(np.arange(len(X)))
    D = X.shape[1]
    if name == "gaussian_mle":
        return (lambda: estimation.gaussian_mle(Xs[:, 0]), (Xr[:, 0].mean() * s + c, Xr[:, 0].var() * s * s), s * s)
    if name == "mvn_mle":
        return lambda: estimation.mvn_mle(Xs), (Xr.mean(0) * s + shift, np.cov(Xr.T, bias=True) * s * s), s * s
    if name == "mvn_logpdf":
        ref = stats.multivariate_normal(mean, cov).logpdf(Xr) - D * np.log(s)
        return lambda: gaussian.mvn_logpdf(Xs, ms, covs), ref, 1.0
    if name == "mahalanobis":
        ref = np.einsum("ij,ij->i", (Xr - mean) @ np.linalg.inv(cov), Xr - mean)     # squared
        return lambda: gaussian.mahalanobis(Xs, ms, covs), ref, 1.0
    if name == "mvn_log_likelihood":
        ref = stats.multivariate_normal(mean, cov).logpdf(Xr).sum() - len(X) * D * np.log(s)
        return lambda: estimation.mvn_log_likelihood(Xs, ms, covs), ref, 1.0
    if name == "mvn_entropy":
        return lambda: gaussian.mvn_entropy(covs), stats.multivariate_normal(mean, cov).entropy() + D * np.log(s), 1.0
    if name == "mvn_cholesky":
        return lambda: gaussian.mvn_cholesky(covs), np.linalg.cholesky(cov) * s, s
    if name == "mvn_sample":
        ref = gaussian.mvn_sample(mean, cov, size=5, random_state=1) * s
        return lambda: gaussian.mvn_sample(ms, covs, size=5, random_state=1), ref, s
    H = np.hstack([np.ones((len(X), 1)), Xr])
    hat = np.einsum("ij,ji->i", H, np.linalg.pinv(H))
    if name == "hat_diagonal":
        return lambda: selection.hat_diagonal(Xs, fit_intercept=True), hat, 1.0
    if name == "loocv_least_squares":
        res = y - H @ np.linalg.lstsq(H, y, rcond=None)[0]
        return lambda: selection.loocv_least_squares(Xs, y), np.mean((res / (1 - hat)) ** 2), 1.0
    if name == "loocv_ridge":
        lam = 2.0
        Xc, yc = Xr - Xr.mean(0), y - y.mean()
        K = Xc.T @ Xc + lam * np.eye(D)
        w = np.linalg.solve(K, Xc.T @ yc)
        h = 1 / len(X) + np.einsum("ij,ij->i", Xc, np.linalg.solve(K, Xc.T).T)
        ref = np.mean(((yc - Xc @ w) / (1 - h)) ** 2)
        if not 1e-300 < lam * s * s < 1e300:
            pytest.skip("lam * s**2 is not a double")
        return lambda: selection.loocv_ridge(Xs, y, lam * s * s), ref, 1.0
    raise KeyError(name)


@pytest.mark.parametrize("name, case", params(FN_CASES))
def test_function_scale_offset(name, case):
    """The public functions on X * s (and a column + 1e8..1e12): the exact answer mapped by s, or a clear error."""
    s = float(case[5:]) if case.startswith("scale") else 1.0
    c = float(case[6:]) if case.startswith("offset") else 0.0
    call, ref, factor = _fn(name, s, c)
    first = ref[0] if isinstance(ref, tuple) else ref
    why = unrepresentable(first, factor) or (unrepresentable(ref[1], factor) if isinstance(ref, tuple) else None)
    got = right_answer_required(call, unreachable=why, corrupts=("X", "cov", "mean"))
    if got is None:
        return
    tol = max(1e-7, 50 * np.finfo(float).eps * c)
    for g, r in zip(got if isinstance(ref, tuple) else (got,), ref if isinstance(ref, tuple) else (ref,)):
        close(g, r, tol, f"{name} at {case}")


FN_BAD = {
    "gaussian_mle-nan": ("X", lambda m: m.gaussian_mle(np.array([1.0, np.nan, 2.0]))),
    "mvn_mle-inf": ("X", lambda m: m.mvn_mle(np.array([[1.0, 2.0], [np.inf, 1.0], [0.0, 3.0]]))),
    "bernoulli_mle-nan": ("x", lambda m: m.bernoulli_mle(np.array([1.0, np.nan, 0.0]))),
    "bernoulli_mle-not-binary": ("x", lambda m: m.bernoulli_mle(np.array([0.0, 2.0, 1.0]))),
    "mvn_logpdf-singular-cov": ("cov", lambda m: m.mvn_logpdf(np.zeros((2, 2)), np.zeros(2), np.ones((2, 2)))),
    "mvn_logpdf-nan-X": ("X", lambda m: m.mvn_logpdf(np.array([[np.nan, 0.0]]), np.zeros(2), np.eye(2))),
    "mvn_logpdf-nan-mean": ("mean", lambda m: m.mvn_logpdf(np.zeros((1, 2)), np.array([0.0, np.nan]), np.eye(2))),
    "mvn_logpdf-asymmetric-cov": ("cov", lambda m: m.mvn_logpdf(np.zeros((1, 2)), np.zeros(2),
                                                               np.array([[2.0, 1.0], [-1.0, 2.0]]))),
    "mvn_entropy-inf-cov": ("cov", lambda m: m.mvn_entropy(np.array([[np.inf, 0.0], [0.0, 1.0]]))),
    "aic-nan": ("log_likelihood", lambda m: m.aic(np.nan, 3)),
    "bic-zero-samples": ("n_samples", lambda m: m.bic(-5.0, 3, 0)),
    "aic-negative-params": ("n_params", lambda m: m.aic(-5.0, -1)),
    "kl_divergence-nan": ("p", lambda m: m.kl_divergence(np.array([0.5, np.nan]), np.array([0.5, 0.5]))),
    "kl_divergence-negative": ("q", lambda m: m.kl_divergence(np.array([0.5, 0.5]), np.array([1.5, -0.5]))),
    "hat_diagonal-nan": ("X", lambda m: m.hat_diagonal(np.array([[1.0, np.nan], [2.0, 1.0], [0.0, 1.0]]))),
    "loocv_least_squares-inf-y": ("y", lambda m: m.loocv_least_squares(np.arange(8.0)[:, None],
                                                                       np.r_[np.inf, np.ones(7)])),
    "loocv_ridge-negative-lam": ("lam", lambda m: m.loocv_ridge(np.arange(8.0)[:, None], np.ones(8), -1.0)),
    "mutual_information-nan": ("x", lambda m: m.mutual_information(np.array([0.0, np.nan, 1.0]),
                                                                   np.array([0, 1, 1]))),
}


@pytest.mark.parametrize("name, case", params([(k.split("-", 1)[0], k.split("-", 1)[1]) for k in FN_BAD]))
def test_function_bad_input(name, case):
    """Non-finite, singular or out-of-domain arguments: a clear error naming the argument."""
    corrupts, call = FN_BAD[f"{name}-{case}"]
    with pytest.raises((ValueError, TypeError)) as info, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        call(linbook)
    assert_clear_error(info.value, corrupts)


FN_EXACT = {
    "aic-closed-form": lambda: (linbook.aic(-1234.5, 7), 2 * 7 + 2 * 1234.5),
    "bic-closed-form": lambda: (linbook.bic(-1234.5, 7, 1000), 7 * np.log(1000) + 2 * 1234.5),
    "bic-huge-ll": lambda: (linbook.bic(-1e300, 2, 10), 2e300 + 2 * np.log(10)),
    "kl_divergence-scipy": lambda: (linbook.kl_divergence(np.array([0.2, 0.0, 0.8]), np.array([0.1, 0.3, 0.6])),
                                    stats.entropy([0.2, 0.0, 0.8], [0.1, 0.3, 0.6])),
    "kl_divergence-tiny-q": lambda: (linbook.kl_divergence(np.array([0.5, 0.5]), np.array([1e-300, 1.0])),
                                     stats.entropy([0.5, 0.5], [1e-300, 1.0])),
    "bernoulli_mle-bools": lambda: (linbook.bernoulli_mle(np.array([True, False, True, True])), 0.75),
    "bernoulli_mle-list": lambda: (linbook.bernoulli_mle([1, 0, 0, 0]), 0.25),
    "mutual_information-independent": lambda: (linbook.mutual_information(np.array([0, 0, 1, 1]),
                                                                          np.array([0, 1, 0, 1])), 0.0),
    "mutual_information-identical": lambda: (linbook.mutual_information(np.array(["a", "a", "b", "b"]),
                                                                        np.array([5, 5, 7, 7])), np.log(2)),
    "hat_diagonal-N<D": lambda: (linbook.hat_diagonal(np.random.default_rng(0).standard_normal((4, 9))),
                                 np.ones(4)),
    "mvn_mle-one-row": lambda: (linbook.mvn_mle(np.array([[1.0, 2.0]]))[1], np.zeros((2, 2))),
}


@pytest.mark.parametrize("name, case", params([(k.split("-", 1)[0], k.split("-", 1)[1]) for k in FN_EXACT]))
def test_function_exact(name, case):
    """Closed forms and scipy: the exact value (or, where the answer is undefined, a clear error)."""
    try:
        got, want = FN_EXACT[f"{name}-{case}"]()
    except (ValueError, TypeError) as exc:
        assert_clear_error(exc, ("X", "x", "y", "p", "q", "log_likelihood"))
        return
    got = np.asarray(got[1] if name == "bernoulli_mle" and isinstance(got, tuple) else got, dtype=float)
    want = np.asarray(want, dtype=float)
    assert got.shape == want.shape or got.size == want.size, f"shape {got.shape} != {want.shape}"
    assert np.allclose(got.ravel(), want.ravel(), rtol=1e-9, atol=1e-12), f"{got} != {want}"


# ------------------------------------------------------------------ more families (targets, mixes, state)

TARGET_SCALES = (1e-150, 1e150, 1e300)
TARGET_CASES = [(n, f"y-scale{t:g}") for n in NAMES if SPECS[n].kind == "reg" and SPECS[n].exact
                for t in TARGET_SCALES]


@pytest.mark.parametrize("name, case", params(TARGET_CASES))
def test_target_scale(name, case):
    """``y * t``: predictions times t (an L1 penalty maps to ``lam * t``), or a clear error when unrepresentable."""
    t = float(case[7:])
    X, y = reg_data()
    want = fit_out(make(name), X, y)
    over = {"lam": SPECS[name].params["lam"] * t} if SPECS[name].pen == ("lam", 1) else {}
    why = unrepresentable(want, t)
    got = right_answer_required(lambda: fit_out(make(name, **over), X, y * t), unreachable=why, corrupts="y")
    if got is not None:
        close(got, want * t, SPECS[name].rtol * 10, f"{name} on y*{t:g}")


#: Models whose answer does not change when each column has its own unit (no penalty, no absolute floor).
PER_COLUMN = ("LinearRegression", "LeastAbsoluteDeviation", "LDA", "QDA", "DiagonalLDA", "RDA", "FisherLDA")


@pytest.mark.parametrize("name, case", params([(n, c) for n in PER_COLUMN
                                              for c in ("columns-1e-150,1,1e150", "columns-1e-300,1e8,1e300")]))
def test_mixed_column_scales(name, case):
    """Each column in its own unit, from 1e-300 to 1e300 at once: the answer of the unscaled data."""
    X, y = data(name)
    s = np.array([float(v) for v in case.split("-", 1)[1].split(",")])
    want = fit_out(make(name), X, y)
    got = right_answer_required(lambda: fit_out(make(name), X * s, y))
    close(got, want, 1e-5, f"{name} with columns scaled by {s}")


def _deep_failures(name):
    X, y = data(name)
    cases = {"constant-X": (np.ones_like(X), y, None), "zero-weights": (X, y, np.zeros(len(X))),
             "one-column-constant-per-class": None}
    if SPECS[name].kind != "reg":
        cases["one-class"] = (X, np.zeros_like(y), None)
        Xc = X.copy()
        Xc[:, 0] = y * 2.0                       # a column constant inside each class
        cases["one-column-constant-per-class"] = (Xc, y, None)
        cases["two-rows"] = (X[:2], y[:2], None)
    else:
        cases["two-rows-wide"] = (X[:2], y[:2], None)
    return {k: v for k, v in cases.items() if v is not None}


@pytest.mark.parametrize("name, case", params([(n, "failed-fit-keeps-state") for n in NAMES]))
def test_failed_fit_keeps_state(name, case):
    """A fit that fails late (after validation) leaves the fitted model exactly as it was."""
    X, y = data(name)
    est = make(name)
    want = fit_out(est, X, y)
    for what, (Xb, yb, wb) in _deep_failures(name).items():
        if wb is not None and not _takes(name, "sample_weight"):
            continue
        state = {k: np.copy(a) if isinstance(a, np.ndarray) else a for k, a in vars(est).items()}
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est.fit(Xb, yb, **({} if wb is None else {"sample_weight": wb}))
        except (ValueError, TypeError):
            assert set(vars(est)) == set(state), f"{what}: a failed fit added or removed attributes"
            for k, a in state.items():
                now = vars(est)[k]
                if isinstance(a, np.ndarray):
                    assert isinstance(now, np.ndarray) and np.array_equal(now, a, equal_nan=True), \
                        f"{what}: attribute {k} changed by a failed fit"
            close(out(est, X), want, 0.0, f"{name} after the failed fit '{what}'")
        else:
            est = make(name)
            fit_out(est, X, y)


CONTAINERS_WY = ("weights-list", "weights-series", "weights-int", "y-list", "y-series", "y-float32")


@pytest.mark.parametrize("name, case", params([(n, c) for n in NAMES for c in CONTAINERS_WY
                                              if not c.startswith("weights") or _takes(n, "sample_weight")]))
def test_weight_and_target_containers(name, case):
    """sample_weight and y as list / Series / int / float32: the answer for the same numbers as float64."""
    import pandas as pd

    X, y = data(name)
    w = (np.arange(len(X)) % 3 + 1).astype(float)
    kw = {"sample_weight": w} if case.startswith("weights") else {}
    want = fit_out(make(name), X, y, **kw)
    conv = {"list": lambda v: v.tolist(), "series": lambda v: pd.Series(v, index=np.arange(len(v))[::-1]),
            "int": lambda v: v.astype(np.int64), "float32": lambda v: v.astype(np.float32)}[case.split("-")[1]]
    if case.startswith("weights"):
        got = right_answer_required(lambda: fit_out(make(name), X, y, sample_weight=conv(w)))
    else:
        if case == "y-float32" and SPECS[name].kind != "reg":
            return
        yc = conv(np.asarray(y, dtype=float) if SPECS[name].kind == "reg" else y)
        if case == "y-float32":
            want = fit_out(make(name), X, np.asarray(yc, dtype=float))
        got = right_answer_required(lambda: fit_out(make(name), X, yc), corrupts="y")
    close(got, want, 1e-9, f"{name} with {case}")


@pytest.mark.parametrize("name, case", params([(n, c) for n in NAMES for c in ("predict-1d", "predict-unfitted")]))
def test_predict_misuse(name, case):
    """predict on a 1-D row or before fit: a clear error (NotFittedError names fit)."""
    from sklearn.exceptions import NotFittedError

    X, y = data(name)
    est = make(name)
    if case == "predict-unfitted":
        with pytest.raises(NotFittedError):
            out(est, X)
        return
    fit_out(est, X, y)
    with pytest.raises((ValueError, TypeError)) as info:
        out(est, X[0])
    assert_clear_error(info.value, "X")


def _dataset_cases():
    from linbook import datasets as ds

    I2 = np.eye(2)
    return {
        "separable-tiny-margin": lambda: ("margin", ds.make_separable(50, 3, margin=1e-12, random_state=0), 1e-12),
        "separable-huge-radius": lambda: ("margin", ds.make_separable(50, 3, margin=1e140, radius=1e150,
                                                                      random_state=0), 1e140),
        "separable-negative-margin": lambda: ("margin", ds.make_separable(50, 3, margin=-1.0, random_state=0), None),
        "separable-margin-beyond-radius": lambda: ("margin", ds.make_separable(50, 3, margin=2.0, radius=1.0,
                                                                               random_state=0), 2.0),
        "separable-zero-w": lambda: ("w", ds.make_separable(50, 3, w=np.zeros(3), random_state=0), None),
        "separable-tiny-w": lambda: ("w", ds.make_separable(50, 2, w=[1e-200, 3e-200], random_state=0), 0.5),
        "separable-huge-w": lambda: ("w", ds.make_separable(50, 2, w=[1e200, 3e200], random_state=0), 0.5),
        "regression-no-noise": lambda: ("scale", ds.make_regression(30, 3, coef=[1.0, -2.0, 1e150],
                                                                    intercept=5.0, scale=0.0, random_state=0), None),
        "regression-nan-coef": lambda: ("coef", ds.make_regression(30, 2, coef=[1.0, np.nan], random_state=0), None),
        "gaussian-indefinite-cov": lambda: ("covs", ds.make_gaussian_classes(
            [5, 5], [[0, 0], [1, 1]], [[[1.0, 2.0], [2.0, 1.0]], I2], random_state=0), None),
        "gaussian-bad-priors": lambda: ("priors", ds.make_gaussian_classes(
            20, [[0, 0], [1, 1]], I2, priors=[0.9, 0.9], random_state=0), None),
        "regression-negative-scale": lambda: ("scale", ds.make_regression(30, 2, scale=-1.0, random_state=0), None),
        "gaussian-singular-cov": lambda: ("covs", ds.make_gaussian_classes(
            [5, 5], [[0, 0], [1, 1]], [np.ones((2, 2)), I2], random_state=0), None),
        "gaussian-nan-mean": lambda: ("means", ds.make_gaussian_classes(
            [5, 5], [[0, np.nan], [1, 1]], [I2, I2], random_state=0), None),
        "gaussian-scaled-1e150": lambda: ("covs", ds.make_gaussian_classes(
            [400, 400], [[0, 0], [1e150, 1e150]], [1e300 * I2, 1e300 * I2], random_state=0), None),
    }


@pytest.mark.parametrize("name, case", params([("datasets", c) for c in _dataset_cases()]))
def test_datasets_extremes(name, case):
    """The generators keep their promise (a margin, an exact line, the requested moments) or refuse clearly."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _, result, margin = _dataset_cases()[case]()
    except (ValueError, TypeError) as exc:
        param = {"separable-negative-margin": "margin", "regression-nan-coef": "coef", "separable-zero-w": "w",
                 "gaussian-nan-mean": "means", "gaussian-indefinite-cov": "covs", "gaussian-bad-priors": "priors",
                 "regression-negative-scale": "scale"}
        assert case in param, f"refused a valid request: {exc}"
        assert_clear_error(exc, param[case])
        return
    assert case not in ("separable-negative-margin", "regression-nan-coef", "gaussian-nan-mean", "separable-zero-w",
                        "gaussian-indefinite-cov", "gaussian-bad-priors", "regression-negative-scale"), \
        f"accepted an impossible request: {case}"
    arrays = [a for a in (result if isinstance(result, tuple) else (result,)) if isinstance(a, np.ndarray)]
    for a in arrays:
        if a.dtype.kind == "f":
            assert np.all(np.isfinite(a)), f"{case}: silent non-finite data"
    if case.startswith("separable"):
        X, y, w = result                              # w: the unit normal (b = 0)
        dist = np.where(np.asarray(y) > 0, 1.0, -1.0) * (X @ w) / np.linalg.norm(w)
        if margin is not None:
            assert np.min(dist) >= margin * (1 - 1e-9), f"{case}: a point inside the margin ({np.min(dist):.3g})"
    if case == "regression-no-noise":
        X, y = result[0], result[1]
        close(y, X @ [1.0, -2.0, 1e150] + 5.0, 1e-12, "noise-free make_regression")
    if case == "gaussian-scaled-1e150":
        X, y = result[0], result[1]
        close(X[y == 1].mean(0), [1e150, 1e150], 0.2, "class mean of make_gaussian_classes at 1e150")


FAR = (1e8, 1e150, 1e300)


@pytest.mark.parametrize("name, case", params([(n, f"predict-far{s:g}") for n in NAMES for s in FAR]))
def test_predict_far_out(name, case):
    """predict on rows ``x * s`` far from the training data: the limit the model's formula reaches (already
    reached at ``s = 1e4``: probabilities equal, outputs linear in ``s``), or a clear error naming X."""
    s = float(case[11:])
    X, y = data(name)
    est = make(name)
    fit_out(est, X, y)
    x = X[:6]
    near = out(est, x * 1e4)
    kind = SPECS[name].kind
    if kind == "clf" and not hasattr(est, "predict_proba"):      # a margin: linear in x
        kind = "reg"
    linear = kind == "reg"                       # a projection is compared with its columns normalised
    limit = near * (s / 1e4) if linear else near
    why = unrepresentable(near, s / 1e4) if linear else None
    got = right_answer_required(lambda: out(est, x * s), unreachable=why)
    if got is None:
        return
    if kind == "clf":
        assert np.all(np.isfinite(got)), f"silent non-finite output {got.ravel()[:4]}"
        assert np.max(np.abs(got - limit)) <= 1e-3, f"{name} at x*{s:g}: {got[:, -1]} != {limit[:, -1]}"
    else:
        close(got, limit, 1e-3, f"{name} at x*{s:g}")


COMBOS = ("csr-scale1e-150", "csr-scale1e150", "csr-offset1e8", "weights-scale1e150", "weights-scale1e-150",
          "weights-offset1e10")


@pytest.mark.parametrize("name, case", params([(n, c) for n in NAMES if SPECS[n].exact for c in COMBOS
                                              if not c.startswith("weights") or _takes(n, "sample_weight")]))
def test_combined_extremes(name, case):
    """Two hard inputs at once (sparse and scaled / offset; integer weights and scaled / offset): the answer of the
    plain problem mapped (dense; repeated rows), or a clear error naming X when the model takes no sparse input."""
    X, y = data(name)
    spec = SPECS[name]
    kind, _, v = case.partition("-")
    t = float(v[5:] if v.startswith("scale") else v[6:])
    Xt = X.copy()
    if v.startswith("scale"):
        Xt = X * t
    else:
        Xt[:, 1] += t
    over = {}
    if v.startswith("scale") and spec.pen:
        p, power = spec.pen
        exp10 = math.log10(spec.params[p]) + power * math.log10(t)
        if abs(exp10) > 307:
            pytest.skip(f"{p} * s**{power} is not a double")
        over[p] = spec.params[p] * t ** power
    if spec.intercept_prior:
        over["fit_intercept"] = False
        if not v.startswith("scale"):
            pytest.skip("an offset changes the answer of a model whose intercept has a prior")
    if kind == "csr":
        want = fit_out(make(name, **over), Xt, y)
        got = answer_or_clear_error(lambda: fit_out(make(name, **over), sp.csr_matrix(Xt), y), corrupts="X")
    else:
        w = (np.arange(len(X)) % 3 + 1).astype(float)
        reps = w.astype(int)
        want = fit_out(make(name, **over), np.repeat(Xt, reps, axis=0), np.repeat(y, reps), Xp=Xt)
        got = right_answer_required(lambda: fit_out(make(name, **over), Xt, y, Xp=Xt, sample_weight=w))
    if got is not None:
        close(got, want, max(spec.rtol * 10, 50 * np.finfo(float).eps * (t if v.startswith("offset") else 1)),
              f"{name} with {case}")
