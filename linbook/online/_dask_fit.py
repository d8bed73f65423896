"""The streaming models on row blocks: ``partial_fit`` over the blocks, in order, on the workers.

An online model's state after a stream is a function of the chunks in their order, so a dask
collection is a stream whose chunks are its row blocks: the model travels from task to task
(each task a ``partial_fit`` on one block, on the worker that holds it), and only the final
model (``O(D^2)``: recursive least squares keeps a ``D x D`` matrix) comes back to the client.
The answer is that of ``partial_fit`` called on the same blocks in memory, in the same order;
recursive least squares gives the exact batch (ridge) solution whatever the blocks.

``fit`` on a dask collection is defined where the in-memory ``fit`` is one pass in order from
the prior (``RecursiveLeastSquares``, ``OnlineGradientDescent``); the SGD models' and LMS's
``fit`` run several epochs over all rows (shuffled, with a stopping test), which blocks cannot
reproduce, so they say to call ``partial_fit``.

Derived in: chapter "Online learning and stochastic optimisation".
"""

from __future__ import annotations

import copy
import warnings

import dask
import numpy as np
from sklearn.base import clone

from .._dask.blocks import check_block_lengths, row_blocks

__all__ = ["stream"]


def _all_zero(sample_weight):
    """True when every weight of a block is 0 (NaN counts as non-zero, so ``partial_fit`` refuses it)."""
    try:
        return not np.any(np.asarray(sample_weight, dtype=np.float64))
    except (TypeError, ValueError):
        return False                 # not numbers: partial_fit says so


def _stack(first, second):
    """Two consecutive row blocks ``(X, y, sample_weight)`` as one."""
    import scipy.sparse as sp

    return tuple(None if a is None else sp.vstack([a, b]).tocsr() if sp.issparse(a) else np.concatenate([a, b])
                 for a, b in zip(first, second))


def _partial_fit_block(carry, Xb, yb, swb, index, kwargs, names, in_fit=False):
    """``partial_fit`` on one block; ``carry`` is ``(model, held)``.

    A stream cannot start from rows that all weigh 0 (there is nothing to centre or scale by), but
    inside a fit, or a dask collection whose first block happens to hold them, those rows are valid
    and count for nothing. So the blocks of weight 0 met before the model has started are held and
    read together with the next block (``partial_fit`` drops their weight or counts them as seen,
    exactly as it does for such rows inside one chunk); :func:`_finish` reports the stream whose
    every weight is 0.
    """
    model, held = carry
    check_block_lengths(Xb, yb, swb, index, type(model).__name__)
    if np.shape(Xb)[0] == 0:                 # an empty block (a filtered array) is no chunk
        return carry
    if held is not None:
        Xb, yb, swb = _stack(held, (Xb, yb, swb))
    if swb is not None and not hasattr(model, "n_features_in_") and _all_zero(swb):
        return model, (Xb, yb, swb)
    return _read(model, Xb, yb, swb, kwargs, names, in_fit), None


#: How ``RecursiveLeastSquares.partial_fit`` warns of a design it cannot solve yet: inside ``fit`` on row blocks a
#: block with fewer rows than parameters said so of a fit that the later blocks determine (the in-memory ``fit``
#: reads all rows at once), so there it is left to the end (:func:`_finish`).
_NOT_YET_SOLVABLE = "The design seen so far"


def _read(model, Xb, yb, swb, kwargs, names, in_fit=False):
    if names is not None:
        import pandas as pd

        Xb = pd.DataFrame(Xb, columns=names)
    if swb is not None:
        kwargs = dict(kwargs, sample_weight=swb)
    with warnings.catch_warnings():
        if in_fit:
            warnings.filterwarnings("ignore", message=_NOT_YET_SOLVABLE)
        model.partial_fit(Xb, yb, **kwargs)
    return model


def _finish(carry, kwargs, names, in_fit=False):
    """The model after the last block; blocks still held all weigh 0, which ``partial_fit`` refuses clearly. After
    ``fit``, a design still not solvable is refused, as the in-memory ``fit`` refuses it."""
    model, held = carry
    model = model if held is None else _read(model, *held, kwargs, names, in_fit)
    if in_fit and getattr(model, "_m", 0) is None:
        raise ValueError(model._rank_deficient())
    return model


def stream(est, method, X, y=None, sample_weight=None, **kwargs):
    """``est.partial_fit`` on each row block of ``X`` (``y``, ``sample_weight``) in order; ``method="fit"``
    starts from the prior. The estimator is changed only when every block succeeded."""
    name = type(est).__name__
    if method == "fit":
        if not getattr(est, "_fit_is_one_pass", False):   # RLS, online gradient descent
            raise TypeError(f"{name}.fit runs max_iter epochs over all rows (shuffled, with a stopping test), "
                            f"which a dask collection's blocks cannot reproduce: call {name}().partial_fit(X, y) (one pass over the blocks in "
                            "order; repeat it for more epochs), or fit(X.compute(), y.compute()).")
        model = clone(est)
    elif method == "partial_fit":
        # a copy: Dask's local schedulers pass the object itself from task to task (a cluster pickles
        # it), and the blocks must not change ``est`` before they have all succeeded
        model = copy.deepcopy(est)
    else:  # pragma: no cover - only fit and partial_fit are transactional
        raise TypeError(f"{name}.{method} does not take dask collections")
    blocks = row_blocks(X, y, sample_weight, model=name)
    step = dask.delayed(_partial_fit_block, pure=False)
    state = (model, None)
    for index, (Xb, yb, swb) in enumerate(blocks.parts):
        state = step(state, Xb, yb, swb, index, kwargs, blocks.feature_names, method == "fit")
    (fitted,) = dask.compute(dask.delayed(_finish, pure=False)(state, kwargs, blocks.feature_names, method == "fit"))
    vars(est).clear()
    vars(est).update(vars(fitted))
    return est
