"""linbook.Perceptron: exactness against the textbook loop, scikit-learn, bad input, plumbing."""

import re
import warnings

import numpy as np
import pytest
import scipy.sparse
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import Perceptron as SkPerceptron
from sklearn.model_selection import cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import linbook
from linbook.datasets import make_separable
from linbook.perceptron import Perceptron, perceptron_reference


def sep(n=200, d=3, margin=0.05, seed=0, b=0.3):
    X, y, _ = make_separable(n, d, margin=margin, b=b, random_state=seed)
    return X, y


def orders(seed, n, epochs):
    rng = np.random.default_rng(seed)
    return [rng.permutation(n) for _ in range(epochs)]


@pytest.mark.parametrize("form", ["primal", "dual", "pocket"])
@pytest.mark.parametrize("shuffle", [True, False])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_exact_against_textbook_loop(form, shuffle, seed):
    X, y = sep(seed=seed, d=2 + seed)
    eta = 0.7
    m = Perceptron(form=form, eta=eta, shuffle=shuffle, random_state=seed, max_iter=200, tol=None).fit(X, y)
    order = orders(seed, len(y), 200) if shuffle else None
    w, b, upd = perceptron_reference(X, y, eta=eta, max_iter=200, order=order)
    assert m.update_indices_.tolist() == upd          # the same sequence of updates
    np.testing.assert_allclose(m.coef_, [w], rtol=1e-12, atol=1e-12)
    assert m.intercept_ == pytest.approx([b], abs=1e-12)
    assert m.n_mistakes_ == len(upd)
    assert m.converged_ or form == "pocket"
    assert m.score(X, y) == 1.0


def test_exact_on_larger_nonseparable_data():
    rng = np.random.default_rng(5)
    X = rng.standard_normal((3000, 8))
    y = np.where(X @ rng.standard_normal(8) + 0.8 * rng.standard_normal(3000) > 0, 1, -1)
    with pytest.warns(ConvergenceWarning):
        m = Perceptron(max_iter=3, random_state=4).fit(X, y)
    w, b, upd = perceptron_reference(X, y, max_iter=3, order=orders(4, 3000, 3))
    assert m.update_indices_.tolist() == upd
    np.testing.assert_allclose(m.coef_, [w], rtol=1e-10, atol=1e-10)
    assert not m.converged_ and m.n_iter_ == 3


def test_dual_equals_primal_and_alpha():
    X, y = sep(seed=3)
    p = Perceptron(form="primal", random_state=7).fit(X, y)
    d = Perceptron(form="dual", random_state=7).fit(X, y)
    assert p.update_indices_.tolist() == d.update_indices_.tolist()
    np.testing.assert_allclose(d.coef_, p.coef_, atol=1e-10)
    t = np.where(y == d.classes_[1], 1.0, -1.0)
    np.testing.assert_allclose(d.coef_, [X.T @ (d.alpha_ * t)], atol=1e-12)
    assert d.intercept_ == pytest.approx([np.sum(d.alpha_ * t)])
    counts = np.bincount(d.update_indices_, minlength=len(y))
    np.testing.assert_allclose(d.alpha_, counts * d.eta)


def test_matches_sklearn_without_shuffle():
    X, y = sep(n=300, d=4, seed=4, margin=0.01)
    for epochs in (1, 2, 3):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            a = Perceptron(shuffle=False, max_iter=epochs).fit(X, y)
            b = SkPerceptron(shuffle=False, max_iter=epochs, tol=None).fit(X, y)
        assert a.coef_.shape == b.coef_.shape and a.intercept_.shape == b.intercept_.shape
        np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(a.intercept_, b.intercept_, atol=1e-10)


def test_updates_record_and_determinism():
    X, y = sep(seed=6)
    m1 = Perceptron(random_state=11).fit(X, y)
    m2 = Perceptron(random_state=11).fit(X, y)
    assert m1.update_indices_.tolist() == m2.update_indices_.tolist()
    rec = m1.updates_
    assert len(rec) == m1.n_mistakes_
    i, w, b = rec[-1]
    np.testing.assert_allclose(w, m1.coef_[0], atol=1e-12)
    assert b == pytest.approx(m1.intercept_[0])
    # replaying the record: each update is w_prev + eta y_i x_i
    t = np.where(y == m1.classes_[1], 1.0, -1.0)
    prev = np.zeros(X.shape[1])
    for i, w, _ in rec:
        np.testing.assert_allclose(w, prev + t[i] * X[i], atol=1e-12)
        prev = w


def test_any_two_labels_and_sign_convention():
    X, y = sep(seed=8)
    labels = np.where(y > 0, "spam", "ham")
    m = Perceptron(random_state=0).fit(X, labels)
    assert m.classes_.tolist() == ["ham", "spam"]
    assert set(m.predict(X)) <= {"ham", "spam"} and m.score(X, labels) == 1.0
    # sign(0) = +1: a point on the hyperplane goes to classes_[1]
    m.coef_ = np.zeros_like(m.coef_)
    m.intercept_ = np.zeros(1)
    assert m.predict(X[:1])[0] == "spam"


def test_eta_only_rescales():
    X, y = sep(seed=9)
    a = Perceptron(eta=1.0, random_state=1).fit(X, y)
    b = Perceptron(eta=0.01, random_state=1).fit(X, y)
    assert a.update_indices_.tolist() == b.update_indices_.tolist()
    np.testing.assert_allclose(b.coef_, 0.01 * a.coef_, atol=1e-12)


def test_pocket_on_nonseparable():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((200, 2))
    y = np.where(X[:, 0] + 0.5 * rng.standard_normal(200) > 0, 1, 0)
    m = Perceptron(form="pocket", max_iter=30, random_state=0).fit(X, y)
    # the pocket holds the best weights visited along the primal run
    errs = [np.sum((X @ w + b >= 0).astype(int) != y) for _, w, b in m.updates_]
    assert m.pocket_errors_ == min(errs + [int(np.sum(y != 1))])
    assert np.sum(m.predict(X) != y) == m.pocket_errors_


def test_no_intercept():
    X, y = sep(seed=10, b=0.0)
    m = Perceptron(fit_intercept=False, tol=None, random_state=0).fit(X, y)
    assert m.intercept_ == [0.0]
    w, b, upd = perceptron_reference(X, y, max_iter=1000, order=orders(0, len(y), 1000),
                                     fit_intercept=False)
    np.testing.assert_allclose(m.coef_, [w])


def test_bad_input():
    X, y = sep()
    with pytest.raises(ValueError, match="at most 2"):
        Perceptron().fit(X, np.arange(len(y)) % 3)
    with pytest.raises(ValueError, match="at least 2"):
        Perceptron().fit(X, np.ones(len(y)))
    Xn = X.copy()
    Xn[3, 1] = np.nan
    with pytest.raises(ValueError):
        Perceptron().fit(Xn, y)
    with pytest.raises(ValueError):
        Perceptron().fit(X, y[:-1])
    with pytest.raises(ValueError):
        Perceptron().fit(X, y + 0.5)        # continuous target
    for bad in (dict(form="kernel"), dict(eta=0), dict(eta=-1), dict(max_iter=0), dict(tol=-1), dict(n_iter_no_change=0)):
        with pytest.raises(ValueError):
            Perceptron(**bad).fit(X, y)
    m = Perceptron(random_state=0).fit(X, y)
    with pytest.raises(ValueError):
        m.predict(X[:, :2])


def test_nonseparable_warns():
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    y = np.array([1, -1, 1, -1])
    with pytest.warns(ConvergenceWarning, match="pocket"):
        Perceptron(max_iter=20, tol=None, random_state=0).fit(X, y)


def test_sklearn_plumbing():
    X, y = sep(n=150, seed=12)
    m = Perceptron(random_state=0)
    c = clone(m)
    assert c.get_params() == m.get_params()
    s = cross_val_score(make_pipeline(StandardScaler(), c), X, y, cv=3)
    assert s.shape == (3,) and np.all(s > 0.9)
    assert linbook.Perceptron is Perceptron


@pytest.mark.parametrize("form", ["primal", "dual", "pocket"])
def test_sparse_input_equals_dense(form):
    import scipy.sparse as sp
    rng = np.random.default_rng(13)
    X = np.where(rng.random((300, 30)) < 0.2, rng.standard_normal((300, 30)), 0.0)
    y = np.where(X @ rng.standard_normal(30) + 0.05 * rng.standard_normal(300) > 0, 1, -1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        a = Perceptron(form=form, max_iter=20, random_state=3).fit(X, y)
        b = Perceptron(form=form, max_iter=20, random_state=3).fit(sp.csr_matrix(X), y)
        c = Perceptron(form=form, max_iter=20, random_state=3).fit(sp.csc_matrix(X), y)
    for m in (b, c):
        assert m.update_indices_.tolist() == a.update_indices_.tolist()
        np.testing.assert_allclose(m.coef_, a.coef_, rtol=1e-12, atol=1e-12)
        assert m.intercept_ == pytest.approx(a.intercept_, abs=1e-12)
        np.testing.assert_array_equal(m.predict(sp.csr_matrix(X)), a.predict(X))
    i, w, bb = b.updates_[-1] if form != "pocket" else a.updates_[-1]
    assert np.all(np.isfinite(w))


def test_intercept_scaling_auto_is_scale_invariant_and_textbook():
    X, y = sep(n=300, d=3, seed=14, b=0.8)
    R2 = np.max(np.sum(X ** 2, axis=1))
    m = Perceptron(intercept_scaling="auto", tol=None, random_state=2).fit(X, y)
    w, b, upd = perceptron_reference(X, y, max_iter=1000, order=orders(2, 300, 1000),
                                     intercept_scaling=np.sqrt(R2))
    assert m.update_indices_.tolist() == upd
    np.testing.assert_allclose(np.r_[m.coef_[0], m.intercept_], np.r_[w, b], rtol=1e-10)
    for s in (1e-8, 1e6):
        ms = Perceptron(intercept_scaling="auto", tol=None, random_state=2).fit(X * s, y)
        assert ms.update_indices_.tolist() == m.update_indices_.tolist() and ms.converged_
        np.testing.assert_allclose(ms.coef_ / s, m.coef_, rtol=1e-9)          # w = sum eta y x scales like x
    with pytest.warns(ConvergenceWarning, match="intercept_scaling='auto'"):   # c = 1 cannot keep up
        Perceptron(max_iter=5, tol=None, random_state=2).fit(X * 1e4, y)
    with pytest.raises(ValueError, match="intercept_scaling"):
        Perceptron(intercept_scaling=0.0).fit(X, y)


def test_noisy_data_runs_every_epoch_like_sklearn():
    """3 % label noise: no epoch is free of mistakes; the run is the textbook loop."""
    rng = np.random.default_rng(15)
    X = rng.standard_normal((2000, 10))
    y = np.where(X @ rng.standard_normal(10) > 0, 1, -1)
    y[rng.random(2000) < 0.03] *= -1
    with pytest.warns(ConvergenceWarning):
        m = Perceptron(max_iter=4, tol=None, shuffle=False).fit(X, y)
    sk = SkPerceptron(max_iter=4, tol=None, shuffle=False).fit(X, y)
    assert m.n_iter_ == 4
    np.testing.assert_allclose(m.coef_, sk.coef_, rtol=1e-10, atol=1e-10)
    w, b, upd = perceptron_reference(X, y, max_iter=4)
    assert m.update_indices_.tolist() == upd


def test_fit_records_feature_names_and_predict_does_not_write():
    pd = pytest.importorskip("pandas")
    X, y = sep(seed=16)
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    m = Perceptron(random_state=0).fit(df, y)
    assert list(m.feature_names_in_) == ["a", "b", "c"]
    before = set(vars(m))
    m.predict(df)
    m.decision_function(df)
    assert set(vars(m)) == before
    with pytest.raises(ValueError, match="feature names"):
        m.predict(df[["c", "b", "a"]])


def noisy(n, d, noise, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.where(X @ rng.standard_normal(d) > 0, 1, -1)
    y[rng.random(n) < noise] *= -1
    return X, y


def test_default_stops_when_mistakes_stop_falling():
    """5 % label noise: the default stops by the tol rule, at scikit-learn's accuracy; tol=None runs on."""
    X, y = noisy(3000, 10, 0.05, 17)
    m = Perceptron(random_state=0).fit(X, y)
    assert m.tol_reached_ and not m.converged_ and m.n_iter_ < 100
    with pytest.warns(ConvergenceWarning):
        full = Perceptron(random_state=0, tol=None, max_iter=m.n_iter_ + 3).fit(X, y)
    assert full.n_iter_ == m.n_iter_ + 3 and not full.tol_reached_
    assert full.update_indices_[:m.n_mistakes_].tolist() == m.update_indices_.tolist()
    # the rule, replayed from the textbook runs of 1, 2, ... epochs
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        done = [Perceptron(random_state=0, tol=None, max_iter=e).fit(X, y).n_mistakes_
                for e in range(1, m.n_iter_ + 1)]
    per_epoch = np.diff(np.r_[0, done])
    k = m.n_iter_no_change
    assert np.all(per_epoch[-k:] > per_epoch[:-k].min() - m.tol * len(y))
    sk = SkPerceptron(random_state=0).fit(X, y)
    assert m.score(X, y) > sk.score(X, y) - 0.03


def test_separable_data_still_converge_by_default():
    X, y = sep(n=300, d=4, seed=18, margin=0.05)
    m = Perceptron(random_state=1).fit(X, y)
    assert m.converged_ and not m.tol_reached_ and m.score(X, y) == 1.0


@pytest.mark.parametrize("shuffle", [True, False])
def test_numpy_loop_equals_compiled_kernel(monkeypatch, shuffle):
    """fit's readable loop (small dense data) and the compiled epoch make the same updates; so does a
    fit that switches from the one to the other when the process's numpy budget runs out."""
    import linbook.perceptron as mod
    X, y = noisy(600, 7, 0.03, 19)
    kw = dict(max_iter=6, tol=None, shuffle=shuffle, random_state=2, eta=0.3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        monkeypatch.setattr(mod, "_numpy_updates_left", [10 ** 9])
        readable = Perceptron(**kw).fit(X, y)
        monkeypatch.setattr(mod, "_NUMPY_MAX_ROWS", 0)
        compiled = Perceptron(**kw).fit(X, y)
    assert readable.update_indices_.tolist() == compiled.update_indices_.tolist()
    np.testing.assert_allclose(readable.coef_, compiled.coef_, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(readable.intercept_, compiled.intercept_, rtol=1e-12, atol=1e-12)
    monkeypatch.setattr(mod, "_NUMPY_MAX_ROWS", 1000)
    monkeypatch.setattr(mod, "_numpy_updates_left", [readable.n_mistakes_ // 2])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        switched = Perceptron(**kw).fit(X, y)
    assert mod._numpy_updates_left[0] <= 0
    assert switched.update_indices_.tolist() == readable.update_indices_.tolist()


def test_max_epochs_is_renamed_max_iter():
    X, y = sep(seed=20)
    with pytest.warns(FutureWarning, match="max_iter"):
        old = Perceptron(max_epochs=7, tol=None, random_state=0).fit(X, y)
    new = Perceptron(max_iter=7, tol=None, random_state=0).fit(X, y)
    assert old.update_indices_.tolist() == new.update_indices_.tolist()
    with pytest.warns(FutureWarning, match="max_iter"):
        w, b, _ = perceptron_reference(X, y, max_epochs=7)
    np.testing.assert_array_equal(w, perceptron_reference(X, y, max_iter=7)[0])
    assert clone(Perceptron(max_epochs=3)).get_params()["max_epochs"] == 3


def test_dual_on_one_positive_in_many_rows_is_bounded():
    """1 positive in 5,000 rows: the dual form stops by the tol rule instead of 1,000 slow epochs."""
    X, y = noisy(5000, 5, 0.0, 21)
    y = -np.ones(5000)
    y[0] = 1
    X[0] = X[1]                                    # a positive on top of a negative: not separable
    m = Perceptron(form="dual", random_state=0).fit(X, y)
    assert m.tol_reached_ and m.n_iter_ < 50
    p = Perceptron(form="primal", random_state=0).fit(X, y)
    assert p.update_indices_.tolist() == m.update_indices_.tolist()


def test_dual_ignores_noncanonical_sparse_layout():
    """Duplicate entries (summed) and unsorted indices give the dual form the dense answer."""
    import scipy.sparse as sp
    X, y = noisy(200, 6, 0.0, 22)
    rng = np.random.default_rng(0)
    data, indices, indptr = [], [], [0]
    for row in X:                                   # every entry split in two, in a shuffled order
        cols = np.r_[np.arange(6), np.arange(6)]
        vals = np.r_[row / 2, row / 2]
        perm = rng.permutation(12)
        data += list(vals[perm])
        indices += list(cols[perm])
        indptr.append(len(data))
    raw = sp.csr_matrix((np.array(data), np.array(indices), np.array(indptr)), shape=X.shape)
    assert not raw.has_canonical_format
    before = raw.indices.copy()
    dense = Perceptron(form="dual", tol=None, random_state=1).fit(X, y)
    got = Perceptron(form="dual", tol=None, random_state=1).fit(raw, y)
    assert got.update_indices_.tolist() == dense.update_indices_.tolist()
    np.testing.assert_allclose(got.coef_, dense.coef_, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(raw.indices, before)               # the caller's matrix is untouched


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_one_textbook_epoch_equals_the_compiled_epoch(seed):
    """From the same non-zero (w, b) and visiting order, the numpy epoch (w <- w + eta y_i x_i,
    b <- b + eta c^2 y_i) and the compiled primal epoch update the same samples and reach the same weights."""
    import linbook.perceptron as mod
    from linbook._kernels.perceptron_numpy import primal_epoch
    rng = np.random.default_rng(seed)
    X = np.ascontiguousarray(rng.standard_normal((200, 5)))
    t = np.where(rng.random(200) < 0.5, -1.0, 1.0)
    order = rng.permutation(200)
    eta, eta_b = 0.7, 0.7 * 2.5
    w0, b0 = rng.standard_normal(5), np.array([0.3])
    w, b = w0.copy(), b0.copy()
    updated = primal_epoch(X, t, order, w, b, eta, eta_b)
    wc, bc = w0.copy(), b0.copy()
    compiled = mod._CompiledEpochs("primal", X, t, wc, bc, eta, eta_b)
    assert len(updated) > 10
    assert compiled.epoch(order).tolist() == updated
    np.testing.assert_allclose(wc, w, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(bc, b, rtol=1e-12, atol=1e-12)


def _readable_epoch(X, t, order, w, b, eta, eta_b):
    """The loop that ``linbook._kernels.perceptron_numpy.primal_epoch`` computes (its docstring)."""
    updated = []
    for i in order:
        if t[i] * (X[i] @ w + b[0]) <= 0:
            w += eta * t[i] * X[i]
            b += eta_b * t[i]
            updated.append(i)
    return updated


def _near_ties(rng, n, d, w, b):
    """Rows on the hyperplane ``x.w + b = 0`` up to rounding: their scores' signs depend on the summation order."""
    X = rng.standard_normal((n, d))
    X[:, -1] = -(X[:, :-1] @ w[:-1] + b) / w[-1]
    return X


@pytest.mark.parametrize("kind", ["gaussian", "integer", "near ties", "weighted", "tiny weights", "no intercept",
                                  "wide", "huge"])
@pytest.mark.parametrize("seed", range(6))
def test_numpy_epoch_equals_the_readable_loop_bit_for_bit(kind, seed):
    """The block-product epoch makes the readable loop's decisions and updates, bit for bit, over several epochs
    from zero and from non-zero weights: integer data (exact ties, margin 0), rows on the hyperplane of the
    starting weights (scores at rounding level), sample weights (t_i = s_i y_i, some below 1e-30), no
    intercept (eta_b = 0), wide rows, scores near overflow."""
    from linbook._kernels.perceptron_numpy import primal_epoch
    rng = np.random.default_rng(seed)
    n, d = (60, 300) if kind == "wide" else (400, 1 + seed)
    w0 = rng.standard_normal(d) if seed % 2 else np.zeros(d)
    b0 = np.array([rng.standard_normal() if seed % 2 else 0.0])
    X = rng.standard_normal((n, d))
    if kind == "integer":
        X = rng.integers(-2, 3, size=(n, d)).astype(float)
        w0, b0 = np.round(3 * w0), np.round(3 * b0)
    elif kind == "near ties":
        w0, b0 = rng.standard_normal(d), np.array([rng.standard_normal()])
        X = _near_ties(rng, n, d, w0, b0[0]) if d > 1 else np.full((n, 1), -b0[0] / w0[0])
    elif kind == "huge":
        X *= 1e149
    t = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    if kind in ("weighted", "tiny weights"):
        t *= rng.exponential(size=n) * (1e-40 if kind == "tiny weights" else 1.0)
        if kind == "tiny weights":
            t[: n // 2] *= 1e35                      # half below 1e-30, half above
    eta, eta_b = (0.0 if kind == "near ties" else 0.7), (0.0 if kind == "no intercept" else 0.7 * 2.0)
    w, b, w_ref, b_ref = w0.copy(), b0.copy(), w0.copy(), b0.copy()
    total = 0
    for _ in range(4):
        order = rng.permutation(n)
        got = primal_epoch(X, t, order, w, b, eta, eta_b)
        assert got == _readable_epoch(X, t, order, w_ref, b_ref, eta, eta_b)
        np.testing.assert_array_equal(w, w_ref)
        np.testing.assert_array_equal(b, b_ref)
        total += len(got)
    assert total > 0


@pytest.mark.parametrize("seed", range(16))
def test_fit_equals_the_textbook_loop_bit_for_bit_at_rounding_level_ties(monkeypatch, seed):
    """Scores at rounding level after the first update: the fit's numpy epochs make the decisions of
    perceptron_reference's per-row test ``y_i (x_i @ w + b) <= 0``, and its weights, bit for bit. (fit's old
    numpy loop scored 16 rows per matrix product, whose last bits can differ from the row's own product:
    other updates. The compiled epochs, once the process's numpy budget is spent, sum in another order.)"""
    import linbook.perceptron as mod
    monkeypatch.setattr(mod, "_numpy_updates_left", [10 ** 9])
    rng = np.random.default_rng(seed)
    n, d = 300, 6
    x0 = rng.standard_normal(d)
    X = _near_ties(rng, n, d, x0, 1.0)       # after the update on row 0 (w = x0, b = 1): every score ~ 0
    X[0] = x0
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    y[0] = 1.0
    for fit_intercept in (True, False):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            m = Perceptron(max_iter=3, tol=None, shuffle=False, fit_intercept=fit_intercept).fit(X, y)
        w, b, upd = perceptron_reference(X, y, max_iter=3, fit_intercept=fit_intercept)
        assert m.update_indices_.tolist() == upd
        np.testing.assert_array_equal(m.coef_, [w])
        np.testing.assert_array_equal(m.intercept_, [b])


# ------------------------------------------------------------------ sample weights
def _weighted_textbook(X, y, s, epochs):
    """The primal loop with weights, sample by sample in the given order: w += s_i y_i x_i on a mistake."""
    keep = s > 0
    X, t, s = X[keep], np.where(y[keep] == 1, 1.0, -1.0), s[keep]
    w, b = np.zeros(X.shape[1]), 0.0
    for _ in range(epochs):
        mistakes = 0
        for i in range(len(t)):
            if t[i] * (X[i] @ w + b) <= 0:
                w, b, mistakes = w + s[i] * t[i] * X[i], b + s[i] * t[i], mistakes + 1
        if mistakes == 0:
            break
    return w, b


@pytest.mark.parametrize("form", ["primal", "dual"])
@pytest.mark.parametrize("layout", ["dense", "csr", "compiled"])
def test_sample_weight_scales_each_update(form, layout):
    """A mistake on sample i moves (w, b) by s_i y_i (x_i, 1); samples of weight 0 are left out;
    update_indices_ and alpha_ count in the caller's rows."""
    rng = np.random.default_rng(0)
    n = 10_500 if layout == "compiled" else 300           # past the numpy loop's 10,000 rows: compiled epochs
    X = rng.standard_normal((n, 4))
    y = (X @ np.array([1.0, -2.0, 0.5, 1.0]) + 0.3 > 0).astype(int)
    s = rng.integers(0, 4, n).astype(float)
    model = linbook.Perceptron(form=form, shuffle=False, tol=None, max_iter=4 if layout == "compiled" else 40)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(scipy.sparse.csr_matrix(X) if layout == "csr" else X, y, sample_weight=s)
    w, b = _weighted_textbook(X, y, s, model.n_iter_)
    np.testing.assert_allclose(model.coef_[0], w, rtol=1e-12, atol=1e-12 * np.abs(w).max())
    assert model.intercept_[0] == pytest.approx(b, rel=1e-12, abs=1e-12)
    assert np.all(s[model.update_indices_] > 0)
    if form == "dual":
        assert model.alpha_.shape == (n,) and np.all(model.alpha_[s == 0] == 0)
        np.testing.assert_allclose(model.alpha_ * s * np.where(y == 1, 1, -1) @ X, model.coef_[0], rtol=1e-10)


def test_pocket_counts_weighted_training_errors():
    """The pocket keeps the visited weights of fewest weighted errors: weights 0 drop rows, and a
    heavy row decides which weights are kept."""
    rng = np.random.default_rng(4)
    X = rng.standard_normal((120, 2))
    y = (X[:, 0] + 0.8 * rng.standard_normal(120) > 0).astype(int)       # not separable
    s = rng.integers(0, 3, 120).astype(float)
    kw = dict(form="pocket", shuffle=False, max_iter=20, tol=None)
    weighted = linbook.Perceptron(**kw).fit(X, y, sample_weight=s)
    dropped = linbook.Perceptron(**kw).fit(X[s > 0], y[s > 0], sample_weight=s[s > 0])
    np.testing.assert_array_equal(weighted.coef_, dropped.coef_)
    wrong = (weighted.decision_function(X) >= 0) != (y == 1)
    assert weighted.pocket_errors_ == pytest.approx(float(s[wrong].sum()))
    plain = linbook.Perceptron(**kw).fit(X, y)
    assert isinstance(plain.pocket_errors_, int)
    assert plain.pocket_errors_ == int(np.sum((plain.decision_function(X) >= 0) != (y == 1)))


def test_sample_weight_of_ones_is_the_unweighted_fit_and_bad_weights_are_refused():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((200, 3))
    y = (X[:, 0] - X[:, 1] > 0).astype(int)
    plain = linbook.Perceptron(random_state=0).fit(X, y)
    ones = linbook.Perceptron(random_state=0).fit(X, y, sample_weight=np.ones(200))
    assert np.array_equal(plain.coef_, ones.coef_) and np.array_equal(plain.update_indices_, ones.update_indices_)
    for form, weights, words in [("primal", np.where(y == 1, 0.0, 1.0), "positive sample_weight"),
                                 ("primal", -np.ones(200), "sample_weight")]:
        model = linbook.Perceptron(form=form)
        with pytest.raises(ValueError, match=re.escape(words)):
            model.fit(X, y, sample_weight=weights)
        assert not hasattr(model, "coef_")


def test_weighted_epochs_equal_sklearns_weighted_perceptron():
    """scikit-learn's Perceptron with sample_weight makes the same update on a mistake (eta0 = 1, no
    penalty, t (w.x + b) <= 0 counts): with the samples in order, every epoch gives the same (w, b)."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 3))
    y = (X @ np.array([1.0, -1.0, 0.5]) + 0.5 * rng.standard_normal(200) > 0).astype(int)
    s = rng.integers(0, 4, 200).astype(float)
    for epochs in (1, 3, 7):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            ours = linbook.Perceptron(shuffle=False, tol=None, max_iter=epochs).fit(X, y, sample_weight=s)
            theirs = SkPerceptron(shuffle=False, tol=None, max_iter=epochs).fit(X, y, sample_weight=s)
        np.testing.assert_allclose(ours.coef_, theirs.coef_, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(ours.intercept_, theirs.intercept_, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
def test_pocket_converged_exactly_when_its_weights_make_no_training_error(sparse, weighted):
    """converged_ means "the returned weights separate the data": the pocket stops as soon as its weights
    make no error, before an epoch without mistakes, and must report that as converged."""
    X = np.array([[-2.0, -1.0], [-1.0, -2.0], [1.0, 2.0], [2.0, 1.0], [1.5, 1.5], [-1.5, -1.5]])
    y = np.array([0, 0, 1, 1, 1, 0])
    rng = np.random.default_rng(0)
    Xn = rng.standard_normal((80, 2))
    yn = (Xn[:, 0] + 0.8 * rng.standard_normal(80) > 0).astype(int)        # not separable
    for A, t in [(X, y), sep(n=60, seed=2), (Xn, yn)]:
        s = np.linspace(0.5, 2.0, t.size) if weighted else None
        m = Perceptron(form="pocket", tol=None, max_iter=50, intercept_scaling="auto", random_state=0)
        m.fit(scipy.sparse.csr_matrix(A) if sparse else A, t, sample_weight=s)
        separated = bool(np.all(m.predict(A) == t))
        assert m.converged_ == separated == (m.pocket_errors_ == 0)
    assert not m.converged_                                                     # the noisy data
