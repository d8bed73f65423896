"""Helpers for the book's notebooks: numbers quoted in the prose.

``glue`` stores a value under a name so that the prose can quote it
(``{glue:text}`name:.3f```); the page then cannot drift from the outputs. It
writes the same record as ``myst_nb.glue`` (so Jupyter Book renders it) but
needs only IPython, so a chapter runs in any Jupyter install, and it stores
floats *rounded*: nbval compares the stored record, and a value printed in the
prose to 3 decimals must not fail a test because its 16th digit moved with the
BLAS kernel.

Derived in: not a derivation; the book's convention for numbers in prose.
"""

from __future__ import annotations

import numbers

__all__ = ["glue"]

_GLUE_PREFIX = "application/papermill.record/"


def glue(name, value, *, decimals=None):
    """Store ``value`` for ``{glue:text}`name:fmt``` in the chapter's prose (nothing is shown).

    Parameters
    ----------
    name : str
        The key the prose refers to.
    value : int, float or str
        Integers and strings are stored as they are. A float must come with
        ``decimals`` and is stored rounded to that many decimals: quote it in the
        prose with at most that many (``:.{decimals}f``).
    decimals : int, optional
        Decimal places kept for a float (required for floats).

    Derived in: not a derivation; the book's convention for numbers in prose.
    """
    from IPython import get_ipython
    from IPython.display import display

    if isinstance(value, bool) or isinstance(value, numbers.Integral):
        value = int(value)
    elif isinstance(value, numbers.Real):
        if decimals is None:
            raise TypeError(f"glue({name!r}, <float>) needs decimals=: store floats rounded to the "
                            "precision the prose prints, so the record is the same on every machine")
        value = round(float(value), int(decimals)) + 0.0  # + 0.0 turns -0.0 into 0.0
    elif not isinstance(value, str):
        raise TypeError(f"glue takes an int, a float or a str, not {type(value).__name__}")
    if get_ipython() is None:  # plain Python (a script or a test): nothing to record
        return
    display({_GLUE_PREFIX + "text/plain": repr(value)}, raw=True,
            metadata={"scrapbook": {"name": name, "mime_prefix": _GLUE_PREFIX}})
