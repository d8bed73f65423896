"""Test helper: a readable and a compiled coordinate-descent sweep, run side by side."""

import numpy as np


def assert_sweeps_in_lockstep(readable, compiled, states, sweeps=12, polish_at=3, check=None, carried=()):
    """Sweep ``readable`` (numpy) and ``compiled`` from the same start and assert the same ``w`` and the
    same ``states`` (attribute names: the gradient, or the residual and its weighted sum) to rounding,
    sweep after sweep; after sweep ``polish_at`` both go on from the readable one's polished point.
    ``check(readable, compiled)`` adds a test of its own each sweep, and ``carried`` names more state the
    polished point hands on. Returns whether a polish happened."""
    polished = False
    for sweep in range(sweeps):
        readable.sweep()
        compiled.compiled_sweep()
        scale = max(1.0, np.max(np.abs(readable.w)))
        np.testing.assert_allclose(compiled.w, readable.w, rtol=1e-9, atol=1e-11 * scale)
        for state in states:
            want = np.asarray(getattr(readable, state))
            np.testing.assert_allclose(getattr(compiled, state), want, rtol=1e-9,
                                       atol=1e-10 * np.max(np.abs(want), initial=0.0))
        if check is not None:
            check(readable, compiled)
        if sweep == polish_at and np.any(readable.w != 0):     # continue both from the same polished point
            readable.polish(np.sign(readable.w))
            compiled.w, polished = readable.w.copy(), True
            for state in (*states, *carried):
                value = getattr(readable, state)
                setattr(compiled, state, value.copy() if isinstance(value, np.ndarray) else value)
    return polished
