"""nbval, extended: stored figures are verified too.

nbval compares text outputs and skips images. Here each stored PNG of a cell is
compared with the one the cell draws now, by matplotlib's
``compare_images`` (RMS of the pixel difference, 0-255 scale). The book's
notebooks write PNGs without volatile metadata (``linbook.plotting.use_book_style``),
so an unchanged figure is byte-identical; the tolerance only absorbs sub-pixel
anti-aliasing moves when a plotted value changes in its last bits (another BLAS
kernel). Changing what a cell draws - a colour, a line, an axis - exceeds it.
"""

from __future__ import annotations

import base64
import tempfile
from pathlib import Path

import pytest

# matplotlib builds its font cache on first import and says so on stderr; build it here, in
# the test process, so that notice never lands in a notebook cell's output on a fresh machine.
import matplotlib.font_manager  # noqa: E402,F401

#: RMS tolerance on the 0-255 scale (see the module docstring and CONTRIBUTING.md).
FIGURE_RMS_TOLERANCE = 0.5

try:
    from nbval.plugin import IPyNbCell
except ImportError:  # nbval absent: nothing to extend
    IPyNbCell = None


def _pngs(outputs):
    return [o["data"]["image/png"] for o in outputs
            if o.get("output_type") in ("display_data", "execute_result") and "image/png" in o.get("data", {})]


def _compare_figures(cell, test, ref):
    from matplotlib.testing.compare import compare_images

    new, old = _pngs(test), _pngs(ref)
    if len(new) != len(old):
        return f"the cell draws {len(new)} figure(s); {len(old)} are stored"
    with tempfile.TemporaryDirectory() as tmp:
        for i, (a, b) in enumerate(zip(new, old)):
            if a == b:
                continue
            actual, expected = Path(tmp, f"actual{i}.png"), Path(tmp, f"expected{i}.png")
            actual.write_bytes(base64.b64decode(a))
            expected.write_bytes(base64.b64decode(b))
            try:
                msg = compare_images(str(expected), str(actual), tol=FIGURE_RMS_TOLERANCE)
            except Exception as exc:  # sizes differ: compare_images raises
                msg = str(exc)
            if msg:
                return f"figure {i + 1} differs from the stored one: {msg.splitlines()[0]}"
    return None


if IPyNbCell is not None and not getattr(IPyNbCell, "_linbook_figures", False):
    _compare_text = IPyNbCell.compare_outputs

    def compare_outputs(self, test, ref, skip_compare=None):
        ok = _compare_text(self, test, ref, skip_compare)
        if not ok or not self.options.get("check", True):
            return ok
        problem = _compare_figures(self, test, ref)
        if problem:
            self.comparison_traceback = [problem, "-> if the change is intended: make notebooks NB=<the .md source>"]
            return False
        return True

    IPyNbCell.compare_outputs = compare_outputs
    IPyNbCell._linbook_figures = True


# Kernels start one at a time across pytest-xdist's workers, and a start that fails is tried again. Why: each
# worker's jupyter_client picks "free" ports and the kernel binds them a moment later, so two workers starting kernels
# together can pick the same ones (jupyter_client issue 487): on a fresh clone one notebook's kernel "died before
# replying to kernel_info" and all its 66 cells errored, while the notebook itself passes.
_KERNEL_START_ATTEMPTS = 3

try:
    import nbval.kernel as _nbval_kernel
except ImportError:  # nbval absent: nothing to extend
    _nbval_kernel = None

if _nbval_kernel is not None and not getattr(_nbval_kernel.start_new_kernel, "_linbook_serialised", False):
    import functools
    import os

    try:
        import fcntl
    except ImportError:  # not POSIX: the retries only
        fcntl = None

    _start_new_kernel = _nbval_kernel.start_new_kernel
    _LOCK = Path(tempfile.gettempdir(), f"linbook-nbval-kernel-start-{os.getuid() if hasattr(os, 'getuid') else 0}.lock")

    @functools.wraps(_start_new_kernel)
    def _serialised_start(*args, **kwargs):
        for attempt in range(1, _KERNEL_START_ATTEMPTS + 1):
            with open(_LOCK, "a") as lock:
                if fcntl is not None:
                    fcntl.flock(lock, fcntl.LOCK_EX)       # released when the file closes
                try:
                    return _start_new_kernel(*args, **kwargs)
                except RuntimeError:
                    if attempt == _KERNEL_START_ATTEMPTS:
                        raise

    _serialised_start._linbook_serialised = True
    _nbval_kernel.start_new_kernel = _serialised_start
