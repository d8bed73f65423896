"""No fitted attribute aliases the caller's arrays: editing X, y, sample_weight or an array
parameter after ``fit`` changes nothing in the model.

A generic check over every public estimator (the list of tests/test_input_advice.py):
fit with arrays the test owns (and array values for the parameters that take them:
``priors``, ``theta0``, ``prior_precision``), record every attribute, overwrite every
one of those arrays in place, and compare. A second check asks numpy directly: no
array attribute may share memory with an input or a parameter.
"""

import copy
import inspect
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.utils import get_tags

from .harness import public_estimators as _public_estimators

# array values for the parameters that accept one (D = 3 features, 2 classes)
ARRAY_PARAMS = {"priors": np.array([0.3, 0.7]), "theta0": np.array([0.1, 0.2, 0.3, 0.4]),
                "prior_precision": np.array([0.5, 0.5, 0.5, 0.5])}



def _problem(cls):
    """``(estimator, X, y, fit kwargs, the arrays handed over)``; array parameters the class refuses are left out."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    est = cls()
    tags = get_tags(est)
    if tags.estimator_type == "regressor":
        y = X @ np.array([1.0, -2.0, 0.5]) + 0.1 * rng.normal(size=40)
    elif tags.target_tags.required:
        y = np.tile([0.0, 1.0], 20)
    else:
        y = None
    kwargs = {}
    if "sample_weight" in inspect.signature(est.fit).parameters:
        kwargs["sample_weight"] = rng.uniform(0.5, 1.5, size=40)
    params = {name: value.copy() for name, value in ARRAY_PARAMS.items() if name in est.get_params()}
    usable = {}
    for name, value in params.items():
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                clone(est).set_params(**{name: value.copy()}).fit(X.copy(), None if y is None else y.copy(),
                                                                  **copy.deepcopy(kwargs))
            usable[name] = value
        except (ValueError, TypeError):
            pass
    est.set_params(**usable)
    handed = [X, *([] if y is None else [y]), *kwargs.values(), *usable.values()]
    return est, X, y, kwargs, handed


ESTIMATORS = _public_estimators()


def _fit(cls):
    est, X, y, kwargs, handed = _problem(cls)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y, **kwargs) if y is not None else est.fit(X, **kwargs)
    return est, handed


def _fitted_arrays(est):
    params = est.get_params(deep=False)
    return {k: v for k, v in vars(est).items() if k not in params and isinstance(v, np.ndarray)}


def test_the_check_covers_the_array_parameters():
    covered = {name for cls in ESTIMATORS for name in _problem(cls)[0].get_params()
               if isinstance(_problem(cls)[0].get_params()[name], np.ndarray)}
    assert {"priors", "theta0"} <= covered


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_editing_the_inputs_after_fit_changes_nothing(cls):
    est, handed = _fit(cls)
    params = est.get_params(deep=False)
    before = {k: copy.deepcopy(v) for k, v in vars(est).items() if k not in params}
    for a in handed:
        a[...] = a[::-1] * 3.0 + 1.0 if a.ndim == 1 else a[::-1, ::-1] * 3.0 + 1.0
    for key, value in before.items():
        now = vars(est)[key]
        if isinstance(value, np.ndarray):
            np.testing.assert_array_equal(now, value, err_msg=f"{cls.__name__}.{key} follows the caller's array")


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_no_fitted_array_shares_memory_with_an_input(cls):
    est, handed = _fit(cls)
    for key, value in _fitted_arrays(est).items():
        for a in handed:
            assert not np.shares_memory(value, a), f"{cls.__name__}.{key} is a view of an input or parameter"
