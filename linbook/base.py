"""Estimator plumbing shared by every linbook model.

linbook's estimators subclass scikit-learn's ``BaseEstimator`` and mixins, so they
work with ``clone``, ``Pipeline``, ``GridSearchCV`` and ``cross_val_score``. The
input checks reuse scikit-learn's validation (which rejects NaN/inf and wrong
dimensions with a ``ValueError`` saying what is wrong), prefix its message with the
estimator's name and append what to do about it (``_ADVICE``), and add the checks the
book's models need: the number of classes a model can take, and a matching width at
predict time.

Derived in: not a derivation; conventions are stated in the chapter
"Estimation: MLE, MAP and Bayes" § "Using linbook".
"""

from __future__ import annotations

import functools
import inspect
import re
import warnings
from contextlib import contextmanager
from numbers import Integral, Real

import numpy as np
import scipy.sparse
from sklearn.base import ClassifierMixin as _SkClassifierMixin
from sklearn.base import RegressorMixin as _SkRegressorMixin
from sklearn.exceptions import NotFittedError
from sklearn.utils._param_validation import Options, StrOptions  # noqa: F401  (for the constraints)
from sklearn.utils._param_validation import Interval, InvalidParameterError, validate_parameter_constraints
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, check_X_y
from sklearn.utils.validation import validate_data as _sk_validate_data

from ._design import centre_offsets  # noqa: F401  (its old import path, public)
from ._kernels.threads import fit_blas_threads
from .numerics import _binary_exponent, _power_of_two_scale

__all__ = ["validate_fit", "validate_predict", "check_sample_weight",
           "encode_labels", "check_finite_fit", "LinbookWarning", "SeparableDataWarning",
           "DivergenceError", "centre_offsets", "check_params", "check_param_values", "require_y", "renamed_param",
           "renamed_kwargs", "as_rng", "is_dask", "dask_blocks", "DEPRECATED", "NON_NEGATIVE", "POSITIVE",
           "POSITIVE_INT", "OPEN_UNIT"]


class LinbookWarning(UserWarning):
    """Base class for linbook's warnings."""


class SeparableDataWarning(LinbookWarning):
    """The data are (quasi-)separable, so an unregularised maximum-likelihood fit diverges.

    Derived in: chapter "Logistic regression" § "Separable data and l2 regularisation".
    """


class DivergenceError(ValueError):
    """An iterative fit produced a non-finite loss or parameters (it diverged).

    A ``ValueError`` so that code catching bad-input errors also catches it; the
    message names the cure (scale the features, lower the step size, add a penalty).
    """


# scikit-learn's validation says what is wrong; this table says what to do about it.
# The first entry with a substring in the message wins, so the specific ones come first.
# Each sentence names the input and opens a clause with an imperative from
# tests/adversarial/harness.py's ACTIONS ("Pass ...", "Set ..."): that is how the harness
# recognises a clear error.
_ADVICE = (
    (("Input sample_weight contains", "sample_weight must be finite"),
     "Weights must be finite and >= 0: fix or drop the samples whose weight is NaN or infinite."),
    (("Negative values in data passed to `sample_weight`",),
     "Pass sample_weight >= 0 (a weight of 0 leaves a sample out)."),
    (("sample_weight.shape", "Sample weights must be 1D"), "Pass one sample_weight per row of X."),
    (("zero for every sample", "at least one non-zero"),
     "Give at least one sample a positive sample_weight."),
    (("Input y contains NaN", "Input y contains infinity"),
     "Drop the samples whose target is missing or infinite."),
    (("contains NaN",),
     "Remove or impute the missing values (e.g. sklearn.impute.SimpleImputer) first."),
    (("contains infinity",), "Remove the infinite values, or clip and scale the data, first."),
    (("inconsistent numbers of samples",), "Pass X and y with one row per sample."),
    (("0 feature(s)",), "Pass an X with at least one column."),
    (("sample(s) (shape=",), "Pass more samples (rows of X): check the data or its train/test split."),
    (("Found array with dim", "Expected 2D array"), "Reshape X to 2-D, of shape (n_samples, n_features)."),
    (("could not convert", "dtype='numeric'", "argument must be a string or a", "Unable to convert"),
     ("X must be numeric (and y too, for a regression): encode string or categorical columns first "
      "(e.g. sklearn.preprocessing.OneHotEncoder).")),
    (("Complex data",), "X must be real: split complex values into real and imaginary columns."),
    (("features as input", "feature names", "was fitted with"),
     "Pass X with the same columns, in the same order, as in fit."),
    (("target y is None",), "Call fit(X, y) with the targets."),
    (("not supported between instances of",),     # np.unique sorting labels: None, or numbers and strings
     "y holds labels that cannot be sorted together (None, or a mix of types such as numbers and strings): "
     "drop the samples without a label, or convert the labels to one type, e.g. y.astype(str)."),
    (("Unknown label type",),
     "y must hold class labels: pass them as numbers, strings or booleans (an object array of other or mixed "
     "types: convert it, e.g. y.astype(bool) or y.astype(str)); use a regression model for a continuous target."),
    (("y should be a 1d array",), "Pass y as a 1-D array of shape (n_samples,)."),
    (("Sparse data was passed", "sparse"),
     "Convert X with X.toarray(), or use a model that accepts sparse input."),
)
_FALLBACK = "Pass X as a finite numeric 2-D array of shape (n_samples, n_features)."


@contextmanager
def _with_advice(estimator=None):
    """Re-raise an input-validation ``ValueError``/``TypeError`` with the estimator's name and advice.

    The message becomes ``"<Estimator>: <scikit-learn's text, verbatim> <what to do>"``;
    the exception keeps its type (and traceback), so code and scikit-learn's estimator
    checks that match on type or on scikit-learn's text still do. ``NotFittedError``
    passes through unchanged, and an error is advised once however deep the nesting.
    """
    try:
        yield
    except NotFittedError:
        raise
    except (ValueError, TypeError) as exc:
        if getattr(exc, "_linbook_advised", False) or len(exc.args) > 1:
            raise
        msg = str(exc).rstrip()
        tip = next((tip for keys, tip in _ADVICE if any(k in msg for k in keys)), _FALLBACK)
        if tip not in msg:
            sep = "\n" if "\n" in msg else (" " if msg.endswith((".", "!", "?")) else ". ")
            msg = f"{msg}{sep}{tip}"
        name = None if estimator is None else type(estimator).__name__
        if name and not msg.startswith((f"{name} ", f"{name}:")):
            msg = f"{name}: {msg}"
        exc.args = (msg,)
        exc._linbook_advised = True
        raise


def _finite(a):
    """Whether the float array ``a`` is all finite, in one pass and no large temporary: NaN and inf
    propagate into the sum, so a finite sum proves it; a sum that overflowed from finite values
    is told apart by the extremes. An array of up to 2^16 entries is tested directly, its finite entries
    counted (the error state and the sum cost more: 7 us against 4 us on 10^4 entries; ``count_nonzero`` is
    one C call, ``.all()`` goes through a Python wrapper)."""
    if a.size <= 1 << 16:
        return np.count_nonzero(np.isfinite(a)) == a.size
    with np.errstate(over="ignore", invalid="ignore"):
        if np.isfinite(a.sum()):
            return True
    return bool(np.isfinite(a.max()) and np.isfinite(a.min()))


def _plain_input(estimator, X, y, *, reset, min_samples=1, finite_X=True):
    """``True`` when ``X`` (and ``y``) are plain finite float64 (numeric) ndarrays of the right shapes,
    which scikit-learn's validation would return unchanged; then records ``n_features_in_`` as it
    would (``reset``) or checks it. Saves its ~0.3 ms a call in small fits and streams; any other
    input goes through scikit-learn's validation, which says what is wrong. ``finite_X=False`` leaves
    the finiteness of ``X`` to a caller that proves it from a pass it makes anyway
    (:func:`linbook._predictor.predict_scores`: from the scores)."""
    if not (type(X) is np.ndarray and X.dtype == np.float64 and X.ndim == 2
            and X.shape[0] >= max(min_samples, 1) and X.shape[1] >= 1 and (not finite_X or _finite(X))):
        return False
    if y is not None and not (type(y) is np.ndarray and y.ndim == 1 and y.shape[0] == X.shape[0]
                              and y.dtype.kind in "fiu" and (y.dtype.kind != "f" or _finite(y))):
        return False
    if reset:
        estimator.n_features_in_ = X.shape[1]
        if "feature_names_in_" in vars(estimator):
            del estimator.feature_names_in_
        return True
    return getattr(estimator, "n_features_in_", None) == X.shape[1] and "feature_names_in_" not in vars(estimator)


def all_or_nothing(method):
    """Make a training method all-or-nothing: if it raises, the estimator is left exactly as it was.

    Validation records ``n_features_in_`` and ``feature_names_in_`` before anything is fitted, and a
    fit can still fail after that (one class, an overflow, a singular design): a refit that raised
    would leave a model that refuses its own data. The attribute dictionary is copied before the call
    and put back on any exception. A fit stores new arrays and never writes into those it holds, so
    this restores the model; the streaming models' updates, which do write in place, also save the
    arrays' contents (:func:`linbook.online._stream.transactional`).

    The method runs under linbook's BLAS policy for fits (:func:`linbook._kernels.threads.fit_blas_threads`).
    """
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        attributes = dict(self.__dict__)
        try:
            with fit_blas_threads(args[0] if args else kwargs.get("X")):
                return method(self, *args, **kwargs)
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(attributes)
            raise
    return wrapper


def validate_fit(estimator, X, y=None, *, y_numeric=False, accept_sparse=False, min_samples=1,
                 allow_nan=False):
    """Validate training data and record ``n_features_in_`` / ``feature_names_in_``.

    The one entry point every estimator's ``fit`` uses (scikit-learn's
    ``validate_data`` with ``reset=True``): ``X`` becomes a finite float64 array
    (or CSR matrix when ``accept_sparse``), ``y`` a 1-D array of the same length
    (float when ``y_numeric``); returns ``(X, y)``, or ``X`` alone when ``y`` is
    ``None`` (an unsupervised model). ``allow_nan=True`` lets NaN (missing values)
    through; inf is still rejected. Bad input raises scikit-learn's error, named after
    the estimator and ending with what to do. Validate weights with
    :func:`check_sample_weight`.
    """
    if is_dask(X, y):
        # Models whose fit is not a sum over rows have no map-reduce; pulling every block onto the
        # client would run out of memory exactly when Dask was needed, so say so instead.
        raise TypeError(f"{type(estimator).__name__} cannot fit dask collections: its fit is not a sum over "
                        "rows. Call X.compute() and y.compute() to fit in memory if the data fit, or use a model "
                        "that fits on Dask (README, 'Beyond one machine: Dask').")
    sparse = ["csr", "csc"] if accept_sparse is True else accept_sparse
    finite = "allow-nan" if allow_nan else True
    if _plain_input(estimator, X, y, reset=True, min_samples=min_samples):
        X = _own_canonical(X)
        return X if y is None else (X, np.asarray(y, dtype=np.float64) if y_numeric else y)
    y_array = None if y is None else np.asarray(y)
    if y_array is not None and y_array.ndim > 2:     # scikit-learn's "Found array with dim 3" names neither X nor y
        raise ValueError(f"{type(estimator).__name__}: y has {y_array.ndim} dimensions (shape {y_array.shape}); "
                         "pass y as a 1-D array of shape (n_samples,).")
    if y_array is not None and y_array.dtype.kind == "c":   # scikit-learn's message prints y but names neither
        raise ValueError(f"{type(estimator).__name__}: Complex data not supported: y is complex, and targets "
                         "must be real. Pass y.real, or fit the real and imaginary parts as two models.")
    with _with_advice(estimator):
        if y is None:
            return _own_canonical(_sk_validate_data(estimator, X, reset=True, dtype=np.float64, accept_sparse=sparse,
                                                    ensure_min_samples=min_samples, ensure_all_finite=finite))
        X, y = _sk_validate_data(estimator, X, y, reset=True, dtype=np.float64, accept_sparse=sparse,
                                 y_numeric=y_numeric, ensure_min_samples=min_samples,
                                 ensure_all_finite=finite)
    if y_numeric:
        y = _numeric_y(estimator, y)
    return _own_canonical(X), y


def _own_canonical(X):
    """Sparse ``X`` with duplicate entries summed and indices sorted: a copy where the caller's is not (scipy's
    column indexing canonicalises a matrix in place, and a fit that indexed it halved the caller's stored entries)."""
    if scipy.sparse.issparse(X) and X.format in ("csr", "csc") and not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    return X


def _numeric_y(estimator, y):
    """``y`` as float64 for a regression; for labels that are not numbers (strings), the error saying so:
    numpy's "could not convert string to float" named neither y nor what to do."""
    try:
        return np.asarray(y, dtype=np.float64)
    except (TypeError, ValueError):
        kind = f"dtype {np.asarray(y).dtype}"
        raise ValueError(f"{type(estimator).__name__}: y must be numeric for a regression; got {kind}. Use a "
                         "classifier for class labels, or convert y to numbers.") from None


def check_sample_weight(sample_weight, X, *, estimator=None, summed=True):
    """Non-negative float weights, one per row of ``X`` (ones when ``None``).

    Raises ``ValueError`` for negative, non-finite or all-zero weights, or a wrong length,
    named after ``estimator`` (when given) and ending with what to do; and, for a fit (``summed``), for
    weights whose sum overflows, which every weighted sum of the fit would too. ``score`` divides its
    weights by a power of two first (``score_weights``), so there any common scale is fine.
    """
    if sample_weight is None:
        ones = np.empty(X.shape[0])     # np.ones, without its Python wrapper (~1 us of a streamed chunk's ~20)
        ones.fill(1.0)
        return ones
    if isinstance(sample_weight, np.ndarray) and sample_weight.ndim == 0:
        sample_weight = sample_weight[()]       # one number, as a float is (scikit-learn refused it, naming X)
    with _with_advice(estimator):
        w = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
        if not np.all(np.isfinite(w)):
            raise ValueError("sample_weight must be finite.")
        if not np.any(w > 0):
            raise ValueError("sample_weight is zero for every sample: nothing to fit.")
        with np.errstate(over="ignore"):
            total = float(np.sum(w)) if summed else 0.0
        if not np.isfinite(total):     # every weighted sum a fit takes would overflow (inf - inf = NaN, or inf)
            raise ValueError(f"sample_weight sums to more than float64 holds (largest weight {np.max(w):.3g}): "
                             "rescale sample_weight, dividing it by its largest value (for a model with a penalty lam, "
                             "divide lam by the same factor: the fit is then the same).")
    return w


def validate_predict(estimator, X, *, accept_sparse=False, allow_nan=False):
    """Validate ``X`` at predict time against what ``fit`` saw.

    Raises ``sklearn.exceptions.NotFittedError`` before ``fit``; checks the width and,
    when ``fit`` saw a DataFrame, the column names (scikit-learn's rules). Never
    modifies the estimator. ``allow_nan=True`` lets NaN (missing values) through.
    Bad input raises scikit-learn's error, named after the estimator and ending with
    what to do.
    """
    check_is_fitted(estimator)
    if _plain_input(estimator, X, None, reset=False):
        return X
    sparse = ["csr", "csc"] if accept_sparse is True else accept_sparse
    # (scikit-learn's finiteness test sums X: rows near 1e308 overflow, and a RuntimeWarning about an
    # "invalid value" preceded a valid prediction or the clear error about NaN/inf)
    with _with_advice(estimator), np.errstate(over="ignore", invalid="ignore"):
        return _sk_validate_data(estimator, X, reset=False, dtype=np.float64, accept_sparse=sparse,
                                 ensure_all_finite="allow-nan" if allow_nan else True)


def without_zero_weight_rows(X, y, sw):
    """``(X, y, sw)`` without the rows of ``sample_weight`` 0 (unchanged when there are none, or ``sw`` is None).

    Such a row counts for nothing in a weighted fit, but its values would still enter what a fit computes
    before the weights apply: column scales and offsets (LAD: a row of 1e300 left the others ~1e-300, zeros
    to HiGHS), step sizes (SGD: every step ~1e-600, nothing learned), ``0 * x^2`` (``0 * inf`` = NaN).
    """
    if sw is None or np.all(sw > 0):
        return X, y, sw
    held = sw > 0
    return X[held], y[held], sw[held]


def validate_predict_missing(estimator, X):
    """:func:`validate_predict` with ``allow_nan=True``, and the mask of the missing (NaN) entries of ``X``, or
    ``None`` when it has none: for plain finite input the fast path's one finiteness pass says so (a second
    pass over ``X`` looking for NaN cost 10 ms of LDA's 0.1 s predict on 1e6 x 20)."""
    check_is_fitted(estimator)
    if _plain_input(estimator, X, None, reset=False):
        return X, None
    X = validate_predict(estimator, X, allow_nan=True)
    with np.errstate(over="ignore", invalid="ignore"):      # rows near 1e308 sum to inf or NaN: then look
        return X, (np.isnan(X) if np.isnan(X.sum()) else None)


def predict_input(est, X, accept_sparse=False):
    """:func:`validate_predict` (advised) with the sparse formats of the streaming models.

    Sparse ``X`` comes back as canonical CSR, so that predictions do not depend on the
    order of the stored entries (the sums run in the order of canonical X).
    """
    X = validate_predict(est, X, accept_sparse=["csr", "csc", "coo"] if accept_sparse else False)
    if scipy.sparse.issparse(X):
        from ._kernels.csr import canonical_csr
        X = canonical_csr(scipy.sparse.csr_matrix(X))
    return X


def max_sq_row_norm(X):
    """``max_i ||x_i||^2`` of dense or CSR ``X`` (inf when it overflows).

    Dense ``X`` in numpy: ``einsum`` makes one ``n``-vector, not a copy of ``X``, and a fit on it
    then loads no compiled code (compiling a pass of its own cost ~0.3 s in a cold first fit).
    """
    if scipy.sparse.issparse(X):
        return row_stats(X)[0]
    with np.errstate(over="ignore"):
        return float(np.max(np.einsum("ij,ij->i", X, X), initial=0.0))


def row_stats(X):
    """``(max_i ||x_i||^2, number of nonzero entries)`` of dense or CSR ``X`` (inf when it overflows).

    CSR ``X`` in one compiled pass over its stored entries (``linbook._kernels.sgd.csr_row_stats``).
    """
    if scipy.sparse.issparse(X):
        from ._kernels.sgd import csr_row_stats
        top, nnz = csr_row_stats(X.data, X.indptr)
        return float(top), int(nnz)
    return max_sq_row_norm(X), int(np.count_nonzero(X))


def as_rng(random_state=None):
    """Return a ``numpy.random.Generator`` from a seed, a Generator, or None.

    Derived in: chapter "Estimation: MLE, MAP and Bayes" § "Using linbook" (the seeding convention).
    """
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        raise TypeError("linbook uses numpy.random.Generator; pass an int seed or np.random.default_rng(seed)")
    return np.random.default_rng(random_state)


def check_finite_fit(estimator, *values, what="the fit", cure="scale the features (e.g. StandardScaler)"):
    """Raise :class:`DivergenceError` naming the cure when any value is not finite.

    Use after (or inside) an iterative fit on the loss and the parameters: a
    non-finite value means the iteration diverged or overflowed, and silently
    returning NaN would be a wrong answer.
    """
    for v in values:
        if v is None:
            continue
        a = np.asarray(v.data if hasattr(v, "data") and not isinstance(v, np.ndarray) else v)
        if a.dtype.kind in "fc" and not np.all(np.isfinite(a)):
            raise DivergenceError(
                f"{type(estimator).__name__}: {what} diverged (non-finite values). Cure: {cure}."
            )


def validate_data(X, y, *, y_numeric=False, min_samples=1):
    """Check ``X`` (2-D float, finite) and ``y`` (1-D, same length) for a function that fits
    without an estimator (:mod:`linbook.selection`'s criteria and searches).

    Returns float64 ``X`` and ``y`` (``y`` as float when ``y_numeric``). Raises ``ValueError``
    with a readable message naming X or y on NaN/inf, wrong shapes, mismatched lengths, or too
    few samples.
    """
    with _with_advice():
        X, y = check_X_y(X, y, dtype=np.float64, y_numeric=y_numeric, ensure_min_samples=min_samples)
    if y_numeric:
        y = np.asarray(y, dtype=np.float64)
    return X, y


def label_type(y, *, raise_unknown=False):
    """scikit-learn's ``type_of_target(y, input_name="y", raise_unknown=raise_unknown)``, in ~1/20 of its
    time for the common labels: a non-empty 1-D integer or boolean ndarray is ``"binary"`` (at most two
    distinct values) or ``"multiclass"``, whatever else ``type_of_target`` looks at (it costs ~0.2 ms a
    call, more than a small fit's other checks together). Any other ``y`` goes to ``type_of_target``:
    its answer and its errors."""
    if type(y) is np.ndarray and y.ndim == 1 and y.size > 0 and y.dtype.kind in "biu":
        return "binary" if np.unique(y).size <= 2 else "multiclass"
    with _with_advice():        # labels numpy cannot sort (None beside strings) raise a bare TypeError
        return type_of_target(y, input_name="y", raise_unknown=raise_unknown)


def encode_labels(y, *, min_classes=2, max_classes=None, model="this model", more_classes=None, target_type=None):
    """Map arbitrary labels to ``0..K-1``.

    Returns ``(classes, y_index)`` where ``classes`` is sorted (as
    ``np.unique``) and ``y_index`` holds integer codes.

    Raises ``ValueError`` for continuous targets, fewer than ``min_classes``
    classes (e.g. a single class) or more than ``max_classes`` (the message points to the
    model ``more_classes`` names, when given). ``target_type``: scikit-learn's
    ``type_of_target(y)`` when the caller has it already (it costs more than the rest).
    """
    kind = label_type(y) if target_type is None else target_type
    if kind not in ("binary", "multiclass"):
        raise ValueError(
            f"Unknown label type: {kind!r}. {model} needs class labels, but y looks {kind!r}. "
            + ("Pass labels as numbers, strings or booleans (an object array of other or mixed types: convert "
               "it, e.g. y.astype(bool) or y.astype(str))." if kind == "unknown" else
               "Use a regression model for a continuous target.")
        )
    classes, y_index = np.unique(y, return_inverse=True)
    k = classes.size
    if k < min_classes:
        raise ValueError(
            f"{model} needs at least {min_classes} classes in y; got {k} class{'es' if k != 1 else ''} "
            f"({classes.tolist()}). "
            "A single class cannot be learned: pass samples of at least two classes (check the data "
            "or its split)."
        )
    if max_classes is not None and k > max_classes:
        raise ValueError(
            ("Only binary classification is supported. " if max_classes == 2 else "")
            + f"{model} takes at most {max_classes} classes in y; got {k} ({classes.tolist()[:10]}). "
            + (f"Use {more_classes} for more classes, or pass" if more_classes else "Pass")
            + f" y with at most {max_classes} classes."
        )
    return classes, y_index



def class_index(estimator, y, *, partial_fit=False):
    """The positions of the labels ``y`` in ``estimator.classes_`` (sorted, as :func:`encode_labels`
    makes it), or the one error for labels the model does not know.

    Every classifier's methods that take labels after ``fit`` (``log_likelihood``, the NLL's gradient,
    ``partial_fit``) read them through here, so an unknown label is worded the same everywhere: the
    model's name, the labels, ``classes_``, and what to do. ``partial_fit=True`` adds the cure of a
    stream (every class in ``classes`` on the first call). Labels numpy cannot compare with
    ``classes_`` (strings against numbers) are unknown too.
    """
    classes, y = estimator.classes_, np.asarray(y)
    try:
        index = np.clip(np.searchsorted(classes, y), 0, classes.size - 1)
        unknown = classes[index] != y
    except TypeError:
        index, unknown = None, np.ones(y.shape, dtype=bool)
    if np.any(unknown):
        labels = np.unique(y[unknown].astype(object).astype(str)) if index is None else np.unique(y[unknown])
        raise ValueError(f"{type(estimator).__name__}: y has labels {labels.tolist()[:10]} not in classes_ "
                         f"{classes.tolist()} (the classes the model was fitted on). Pass y with labels from "
                         "classes_" + ("; for a stream, pass every class in `classes` on the first partial_fit "
                                       "call." if partial_fit else "."))
    return index


# ---------------------------------------------------------------- hyperparameters
# One scheme, scikit-learn's: each estimator states ``_parameter_constraints`` (a dict
# ``name: [constraint, ...]``, satisfied when any one holds) and calls :func:`check_params`
# at the start of ``fit``. The message is scikit-learn's one wording: "The 'lam' parameter of
# LogisticRegression must be a float in the range [0.0, inf). Got -1 instead."
# (InvalidParameterError, a ValueError and a TypeError). The finite upper bound ``inf``
# with an open end rejects inf as well as NaN.
NON_NEGATIVE = Interval(Real, 0, np.inf, closed="left")     # a finite number >= 0
POSITIVE = Interval(Real, 0, np.inf, closed="neither")      # a finite number > 0
POSITIVE_INT = Interval(Integral, 1, None, closed="left")   # 1, 2, ...
NON_NEGATIVE_INT = Interval(Integral, 0, None, closed="left")   # 0, 1, 2, ...
OPEN_UNIT = Interval(Real, 0, 1, closed="neither")          # a number strictly between 0 and 1


def check_params(estimator, constraints=None, **values):
    """Validate ``estimator``'s parameters against its class's ``_parameter_constraints``.

    Raises scikit-learn's ``InvalidParameterError`` (a ``ValueError``) naming the parameter,
    the estimator, what is allowed and what was given, and saying what to set. Parameters
    without a constraint (and renamed ones still set to ``DEPRECATED``) are not checked here.
    ``constraints`` adds rules that hold only in some settings (``kappa`` under the
    Robbins-Monro schedule); ``values`` checks a value read elsewhere under the parameter's
    name (``max_iter=`` the value given by its old name).
    """
    rules = dict(type(estimator)._parameter_constraints)
    rules.update(constraints or {})
    check_param_values(type(estimator).__name__, rules, {**estimator.get_params(deep=False), **values})


def check_param_values(caller, constraints, values):
    """:func:`check_params` for a function's arguments: ``values`` (``name: value``) against
    ``constraints`` (``name: [constraint, ...]``), the error named after ``caller``."""
    try:
        validate_parameter_constraints(constraints, values, caller_name=caller)
    except InvalidParameterError as exc:
        # scikit-learn's wording, plus what to do: "... Got -1 instead. Set lam to a float in ..."
        found = re.match(r"The '(\w+)' parameter of [\w.()]+ must be (.*?)\. Got ", str(exc), re.S)
        if found is None:
            raise
        raise InvalidParameterError(f"{exc} Set {found[1]} to {found[2]}.") from None


def require_y(estimator, y):
    """Raise the one "requires y" error of a supervised ``fit`` called without targets."""
    if y is None:
        raise ValueError(f"{type(estimator).__name__} requires y to be passed, but the target y is "
                         "None. Call fit(X, y) with one target per row of X.")


def weight_spread(sw):
    """``max / min`` of the positive ``sample_weight`` (1.0 without weights or without a positive one).

    A weight that dwarfs the others makes a fit hard in ways each model words for itself (a class's
    spread vanishes; Newton needs about ``log`` of the spread steps): the factor is measured here.
    """
    if sw is None or not np.any(sw > 0):
        return 1.0
    positive = sw[sw > 0]
    return float(positive.max() / positive.min())


#: Sample weights whose largest is below this are brought near 1 by :func:`weights_near_one`.
SMALL_WEIGHTS = 2.0 ** -64


def weights_near_one(sw, lam=0.0):
    """``(sw 2^-e, lam 2^-e, 2^e)``: weights (``None``: no weights) whose largest is below
    :data:`SMALL_WEIGHTS` brought near 1, and a penalty ``lam`` alongside, for a fit whose objective
    ``sum_i s_i l_i + lam P`` is then scaled by a power of two (the same minimiser, every weight scaled
    exactly); otherwise ``(sw, lam, 1.0)``. Why: products of tiny
    weights with small features (``s x^2`` below 1e-308) lost their digits or became 0: a three-class logistic fit
    under weights of 1e-301 beside features of 1e-30 returned all-zero coefficients, "converged"; least squares
    under subnormal weights was 1e-5 off. ``e`` stays small enough for ``lam 2^-e`` to be finite."""
    top = 0.0 if sw is None else float(np.max(sw, initial=0.0))
    if not 0.0 < top < SMALL_WEIGHTS:
        return sw, lam, 1.0
    e = int(_binary_exponent(top))
    if lam > 0:
        e = max(e, int(_binary_exponent(lam)) - 1020)
    return np.ldexp(sw, -e), float(np.ldexp(lam, -e)), float(np.ldexp(1.0, e))


def require_weighted_classes(model, classes, class_weight, fit_intercept=True):
    """Raise unless the classes of ``y`` can be fitted with their total ``sample_weight``s ``class_weight``.

    At least two classes need positive weight. With an intercept, every class of ``y`` does: a
    class of weight 0 takes no part in the likelihood but in its normaliser, so lowering its
    intercept lowers the loss for ever (its probability tends to 0) and the fit has no finite
    optimum, whatever the penalty on the weights. Without an intercept the penalised fit exists,
    and the separation test of ``lam = 0`` covers the rest.
    """
    present = np.asarray(class_weight) > 0
    if present.sum() < 2:
        raise ValueError(f"{model} needs at least 2 classes with positive sample_weight; only class "
                         f"{classes[present].tolist()} has any weight. Give samples of a second class a positive "
                         "sample_weight.")
    if fit_intercept and not present.all():
        raise ValueError(f"{model}: class {classes[~present].tolist()} of y has total sample_weight 0, so its "
                         "intercept has no finite optimum (its probability only tends to 0). Drop its samples from "
                         "X and y, or give them a positive sample_weight.")


# ---------------------------------------------------------------- Dask collections
# A dask array or DataFrame passed to ``fit`` or a predict method goes to linbook._dask (a
# map-reduce over its row blocks), imported only then: ``import linbook`` never imports dask.
def is_dask(*values):
    """Whether any of ``values`` is a dask collection (array, DataFrame, Series), without importing dask.
    An ndarray or ``None`` is not (told apart first: a missing attribute costs an exception)."""
    for v in values:
        if v is not None and type(v) is not np.ndarray and hasattr(v, "__dask_graph__"):
            return True
    return False


def dask_blocks(method):
    """Decorator of a predict-like method ``method(self, X)``: on a dask collection ``X`` it returns a
    dask array, the method applied to each row block (``map_blocks``); otherwise it is the method."""

    @functools.wraps(method)
    def on_blocks_or_array(self, X, *args, **kwargs):
        if is_dask(X):
            from ._dask.blocks import map_method

            return map_method(self, method, X, *args, **kwargs)
        return method(self, X, *args, **kwargs)

    return on_blocks_or_array


def score_weights(estimator, sample_weight, y):
    """``sample_weight`` for ``score``: checked as ``fit`` checks it (:func:`check_sample_weight`: negative,
    NaN, infinite, all-zero weights or a wrong length are a clear error), and divided by a power of two near
    the largest (exact), which leaves every ratio of weighted sums as it was.

    Unchecked, scikit-learn's metrics scored with negative weights, and their sums over- or underflowed:
    weights of 1e308 gave R^2 = NaN, weights of 5e-324 gave R^2 = 1 (the weighted total underflowed to 0,
    scored as a constant ``y``). ``None`` stays ``None``.
    """
    if sample_weight is None:
        return None
    sw = check_sample_weight(sample_weight, np.empty((len(y), 0)), estimator=estimator, summed=False)
    return sw / _power_of_two_scale(np.max(sw))


def _score_y(estimator, y):
    """``y`` for ``score`` as an array, with a clear error for a length or values ``score`` cannot use."""
    y_true = np.asarray(y)
    if y_true.ndim == 0:
        raise ValueError(f"{type(estimator).__name__}.score: y is a scalar; pass y with one entry per row of X.")
    if y_true.dtype.kind == "f" and not np.all(np.isfinite(y_true)):
        raise ValueError(f"{type(estimator).__name__}.score: y contains NaN or infinity; drop the samples whose "
                         "target is missing or infinite.")
    return y_true


def _checked_score(estimator, score, X, y, sample_weight, metric):
    """``score(X, y_true, sw)`` with ``y`` and ``sample_weight`` checked, scikit-learn's errors advised. On dask
    collections ``metric(y_true, y_pred, sw)`` of the predictions, ``y`` and the weights brought to the client
    (three vectors of N numbers), checked as in memory: passed to scikit-learn as they were, the weights went
    unchecked (negative ones accepted) and their sums over- or underflowed (R^2 NaN at weights of 1e307)."""
    y_pred = None
    if is_dask(X, y, sample_weight):
        import dask

        y_pred, y, sample_weight = dask.compute(estimator.predict(X), y, sample_weight)
        y_pred = np.asarray(y_pred)
    rows = _num_rows(X) if y_pred is None else y_pred.shape[0]
    with _with_advice(estimator):
        y_true = _score_y(estimator, y)
        if y_true.shape[0] != rows:
            raise ValueError(f"Found input variables with inconsistent numbers of samples: X has {rows} "
                             f"rows and y {y_true.shape[0]}.")
        sw = score_weights(estimator, sample_weight, y_true)
    return score(X, y_true, sw) if y_pred is None else metric(y_true, y_pred, sw)


def _accuracy(y_true, y_pred, sw):
    """``sum_i w_i [yhat_i = y_i] / sum_i w_i`` (scikit-learn's ``accuracy_score``)."""
    from sklearn.metrics import accuracy_score

    return float(accuracy_score(y_true, y_pred, sample_weight=sw))


def _num_rows(X):
    return X.shape[0] if hasattr(X, "shape") and len(X.shape) else len(X)


class ClassifierMixin(_SkClassifierMixin):
    """scikit-learn's ``ClassifierMixin`` whose ``score`` checks ``y`` and ``sample_weight`` as ``fit`` does
    (:func:`score_weights`): the accuracy ``sum_i w_i [yhat_i = y_i] / sum_i w_i`` for any positive weights."""

    def score(self, X, y, sample_weight=None):
        """Mean accuracy of ``self.predict(X)`` against ``y`` (weighted by ``sample_weight``)."""
        return _checked_score(self, super().score, X, y, sample_weight, _accuracy)


class RegressorMixin(_SkRegressorMixin):
    """scikit-learn's ``RegressorMixin`` whose ``score`` (R^2) holds for targets near 1e155 and beyond.

    ``R^2 = 1 - sum s (y - yhat)^2 / sum s (y - ybar)^2``: scikit-learn's ``r2_score`` squares the
    raw values, so targets or predictions near 1e155 overflowed and it returned NaN. Here both sums
    are taken on values divided by powers of two (exact), and their ratio is put together on the
    exponents (:func:`_r2`); scikit-learn's conventions are kept (1 or 0 for a constant ``y``,
    NaN with a warning for fewer than two samples).
    """

    def score(self, X, y, sample_weight=None):
        """R^2 of ``self.predict(X)`` against ``y``, as scikit-learn's ``r2_score`` (``y`` and ``sample_weight``
        checked as in ``fit``, :func:`score_weights`)."""
        return _checked_score(self, self._r2_score, X, y, sample_weight, _r2_of)

    def _r2_score(self, X, y, sample_weight=None):
        return _r2_of(np.asarray(y), np.asarray(self.predict(X)), sample_weight)


def _r2_of(y_true, y_pred, sw):
    """R^2 of ``y_pred`` against ``y_true`` (:func:`_r2`), or scikit-learn's ``r2_score`` with its checks, errors and
    warnings where the shapes or types are not those (fewer than two samples, several outputs, ...)."""
    if (y_true.dtype.kind not in "biuf" or y_true.ndim != 1 or np.shape(y_pred) != y_true.shape
            or y_true.size < 2):
        from sklearn.metrics import r2_score

        return float(r2_score(y_true, y_pred, sample_weight=sw))
    return _r2(np.asarray(y_true, dtype=float), np.asarray(y_pred, dtype=float), sw)


def _r2(y, yhat, sw):
    """``1 - sum sw (y - yhat)^2 / sum sw (y - ybar)^2`` without overflow or underflow of the squares
    (``sw`` None: unit weights)."""
    from sklearn.metrics import r2_score

    def sum_of_squares(r):
        """``sum sw r^2`` of a temporary ``r``, squared in place. Unweighted: numpy's pairwise sum (no vector
        of ones; BLAS's threaded dot product took 8 ms on 1e6 entries on busy cores, the square and sum ~1)."""
        np.square(r, out=r)
        return float(r.sum() if sw is None else sw @ r)

    # The plain sums where they are finite and the total is far above the underflow range (terms lost
    # to underflow then weigh under 1e-50 of it): the scaled sums below give the same numbers there
    # (dividing by a power of two is exact), in about half the passes over the data.
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        work = y - yhat                     # one temporary for both sums (a fresh one: ~2 ms of 1e6 rows)
        num = sum_of_squares(work)
        den = sum_of_squares(np.subtract(y, np.average(y, weights=sw), out=work))
    if np.isfinite(num) and np.isfinite(den) and den >= 1e-250:
        return 1.0 - num / den
    if not (np.all(np.isfinite(y)) and np.all(np.isfinite(yhat))):
        return float(r2_score(y, yhat, sample_weight=sw))           # its error for NaN / inf
    # |y / c|, |yhat / c| < 2, so differences stay finite (c is at most 2**1023: targets near 1e308
    # made c = 2**1024 = inf and the score 1.0)
    c = _power_of_two_scale(max(np.max(np.abs(y)), np.max(np.abs(yhat))))
    y, yhat = y / c, yhat / c
    ybar = np.average(y, weights=sw)

    def scaled_sum_of_squares(r):
        """``(m, e)`` with ``sum sw r^2 = m * 4^e``."""
        big = np.max(np.abs(r))
        if big == 0:
            return 0.0, 0
        e = int(_binary_exponent(big))
        return sum_of_squares(np.ldexp(r, -e)), e

    num, e_num = scaled_sum_of_squares(y - yhat)
    den, e_den = scaled_sum_of_squares(y - ybar)
    if den == 0:                                  # constant y: scikit-learn's force_finite convention
        return 1.0 if num == 0 else 0.0
    with np.errstate(over="ignore", under="ignore"):
        ratio = np.ldexp(num / den, 2 * (e_num - e_den))
    return float(1.0 - ratio)


# ---------------------------------------------------------------- renamed parameters
# A renamed public parameter keeps working for one release: the estimator keeps the old
# name in its __init__ as a keyword-only parameter whose default is DEPRECATED (stored
# unchanged, so clone/get_params/set_params work as scikit-learn requires), and fit reads
# the value through :func:`renamed_param`, which warns (FutureWarning) naming the new
# parameter. Functions use the decorator :func:`renamed_kwargs`. CHANGELOG.md lists them.
DEPRECATED = "deprecated"
RENAMED_IN, REMOVED_IN = "0.2", "0.3"


def _is_unset(value):
    return isinstance(value, str) and value == DEPRECATED


def _renamed_message(owner, old, new, replacement):
    return (f"{owner}: the parameter {old!r} was renamed {new!r} in linbook {RENAMED_IN}; "
            f"{old!r} will stop working in linbook {REMOVED_IN}. Pass {replacement} instead.")


def renamed_param(estimator, new, old, *, convert=None, formula=None, warn=True):
    """The value of parameter ``new``, or (FutureWarning) of its old name ``old`` when that was set.

    ``convert`` maps an old value to the new parameter's value when the meaning changed
    too (e.g. a prior variance to a precision); ``formula`` says it in the warning
    (``"prior_precision=1/prior_var"``). Setting both names raises ``ValueError`` (which
    one was meant is unknowable). ``old = None`` means the parameter was removed: a set
    value is ignored with a FutureWarning saying so. ``warn=False`` reads the value again
    without a second warning.
    """
    owner = type(estimator).__name__
    old_value = getattr(estimator, old)
    if _is_unset(old_value):
        return getattr(estimator, new) if new is not None else None
    if new is None:
        if warn:
            warnings.warn(f"{owner}: the parameter {old!r} was removed in linbook {RENAMED_IN} and has no "
                          f"effect; it will raise an error from linbook {REMOVED_IN} on. Remove it.",
                          FutureWarning, stacklevel=3)
        return None
    default = inspect.signature(type(estimator).__init__).parameters[new].default
    new_value = getattr(estimator, new)
    if not (new_value is default or _same_value(new_value, default)):
        raise ValueError(f"{owner}: pass {new!r} only; {old!r} is its old name (deprecated), and "
                         f"both were set ({new}={new_value!r}, {old}={old_value!r}).")
    value = old_value if convert is None else convert(old_value)
    if warn:
        warnings.warn(_renamed_message(owner, old, new, formula or f"{new}={value!r}"),
                      FutureWarning, stacklevel=3)
    return value


def _same_value(a, b):
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False


def renamed_kwargs(**renames):
    """Decorator: a function's renamed keyword arguments keep working for one release.

    ``@renamed_kwargs(alpha="lam")``: a call with ``alpha=...`` warns (FutureWarning) and
    passes the value as ``lam``; a call with both raises ``TypeError``. The signature shown
    (``inspect.signature``) is the function's own.
    """
    def decorate(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            for old, new in renames.items():
                if old in kwargs:
                    if new in kwargs:
                        raise TypeError(f"{func.__name__}() got both {new!r} and its old name {old!r}; "
                                        f"pass {new!r} only.")
                    value = kwargs.pop(old)
                    warnings.warn(_renamed_message(f"{func.__name__}()", old, new, f"{new}={value!r}"),
                                  FutureWarning, stacklevel=2)
                    kwargs[new] = value
            return func(*args, **kwargs)
        return wrapper
    return decorate
