"""Session 34: wrong answers found by independent probes, one test per class.

- ``bic`` with one number as ``sample_weight`` counted it as one row (``log N = 0``) and left out the whole
  ``k log N`` penalty. Oracle: statsmodels' WLS.
- ``forward_selection`` passed the columns in the order they were chosen, where scikit-learn's
  ``SequentialFeatureSelector`` passes them in index order: an estimator that depends on the order (random
  feature draws) chose other features than the selector its docstring says it matches.
- ``forward_selection`` / ``backward_selection`` with a generator of splits as ``cv``: the first step used it
  up and the second raised ``IndexError`` from inside scikit-learn.
- A 0-d array as ``sample_weight`` was refused with an error telling the user to pass ``X`` as a 2-D array.
- The Gaussian classifiers' ``n_params_`` counted ``C - 1`` priors also when the priors were given, not estimated.
"""

import numpy as np
import pytest
from sklearn.feature_selection import SequentialFeatureSelector
from sklearn.linear_model import LinearRegression as SkLinearRegression
from sklearn.model_selection import KFold
from sklearn.tree import DecisionTreeRegressor

import linbook
from linbook.selection import backward_selection, forward_selection


@pytest.mark.parametrize("model", [linbook.LinearRegression, lambda: linbook.Ridge(lam=0.5), linbook.Lasso])
@pytest.mark.parametrize("weight", [3.0, 1.0, np.float64(0.25), np.array(2.0)])
def test_bic_with_one_number_as_weight(model, weight):
    """One number weighs every row alike: ``N`` is the number of rows, as with the full array of weights."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 3))
    y = X @ [1.0, -1.0, 0.5] + rng.normal(size=20)
    fitted = model().fit(X, y, sample_weight=weight)
    full = np.full(20, float(weight))
    assert fitted.bic(X, y, sample_weight=weight) == pytest.approx(fitted.bic(X, y, sample_weight=full), rel=1e-14)
    assert fitted.bic(X, y, sample_weight=weight) - fitted.aic(X, y, sample_weight=weight) == pytest.approx(
        fitted.n_params_ * (np.log(20) - 2), rel=1e-12)


def test_bic_with_one_number_as_weight_matches_statsmodels():
    sm = pytest.importorskip("statsmodels.api")
    rng = np.random.default_rng(1)
    X = rng.normal(size=(20, 3))
    y = X @ [1.0, -1.0, 0.5] + rng.normal(size=20)
    fitted = linbook.LinearRegression().fit(X, y, sample_weight=3.0)
    oracle = sm.WLS(y, sm.add_constant(X), weights=np.full(20, 3.0)).fit()
    assert fitted.bic(X, y, sample_weight=3.0) == pytest.approx(oracle.bic, rel=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_forward_selection_chooses_as_sequential_feature_selector_for_order_dependent_fits(seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(30, 5))
    X[:, 3] = np.round(X[:, 3])
    y = X @ [1.0, 0.0, 0.5, 0.7, 1.0] + rng.normal(size=30)
    tree = DecisionTreeRegressor(random_state=0, max_depth=3, max_features=1)
    ours = forward_selection(tree, X, y, n_features=3, cv=3)
    theirs = SequentialFeatureSelector(tree, n_features_to_select=3, cv=3).fit(X, y)
    assert np.array_equal(ours.support, theirs.get_support())


@pytest.mark.parametrize("search", [forward_selection, backward_selection])
def test_searches_take_a_generator_of_splits(search):
    rng = np.random.default_rng(4)
    X = rng.normal(size=(40, 5))
    y = X[:, 0] + X[:, 3] + rng.normal(size=40)
    from_generator = search(SkLinearRegression(), X, y, n_features=2, cv=KFold(4).split(X))
    from_splitter = search(SkLinearRegression(), X, y, n_features=2, cv=KFold(4))
    assert np.array_equal(from_generator.support, from_splitter.support)
    assert from_generator.scores == pytest.approx(from_splitter.scores, rel=1e-14)


@pytest.mark.parametrize("model, free_params", [
    (linbook.LDA, lambda C, D: C * D + D * (D + 1) // 2),
    (linbook.QDA, lambda C, D: C * D + C * D * (D + 1) // 2),
    (linbook.GaussianNaiveBayes, lambda C, D: 2 * C * D),
    (linbook.DiagonalLDA, lambda C, D: C * D + D)])
def test_given_priors_are_not_counted_as_parameters(model, free_params):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(60, 2)) + np.repeat(np.eye(3, 2) * 3, 20, axis=0)
    y = np.repeat([0, 1, 2], 20)
    assert model().fit(X, y).n_params_ == 2 + free_params(3, 2)
    assert model(priors=[0.2, 0.3, 0.5]).fit(X, y).n_params_ == free_params(3, 2)
