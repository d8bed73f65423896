"""The notebook gate (tools/nbgate.py) catches a configuration-dependent output and names it.

A notebook whose one cell prints the full repr of a BLAS product is executed here, then
checked under make test's second configuration (another OpenBLAS kernel, one thread, numba
for a generic CPU): the gate must report that cell, by its first line, with both texts; the
cell that prints the product rounded to what the maths guarantees must pass.
"""

from __future__ import annotations

import platform
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import build_notebooks  # noqa: E402
import nbgate  # noqa: E402

pytestmark = pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"),
                                reason="needs a second OpenBLAS x86-64 kernel to differ from")

SETUP = "import numpy as np\nrng = np.random.default_rng(0)\nA = rng.standard_normal((300, 300))\nx = rng.standard_normal(300)"
RAW = "# full repr: the last digits follow the order of summation\nprint(repr(x @ A @ x))"
ROUNDED = "print(f'{x @ A @ x:.6f}')"


def test_configurations_cover_each_dimension():
    configs = nbgate.configurations()
    envs = [c.env for c in configs[1:]]
    assert configs[0].env == {}, "the reference is the machine as it is"
    assert any(e.get("OPENBLAS_NUM_THREADS") == "1" for e in envs)
    assert any(e.get("NUMBA_CPU_NAME") == "generic" for e in envs)
    assert any("OPENBLAS_CORETYPE" in e for e in envs), "another OpenBLAS kernel is always runnable on x86-64"
    alt = nbgate.alternative()
    assert alt.env["OPENBLAS_CORETYPE"] == "Prescott" and alt.env["NUMBA_CPU_NAME"] == "generic"
    # each older kernel's configuration is a whole CPU of its generation: numba compiles for it too
    haswell = [c for c in configs if c.env.get("OPENBLAS_CORETYPE") == "Haswell"]
    assert all(c.env["NUMBA_CPU_NAME"] == "haswell" for c in haswell)
    if nbgate._numpy_dispatch_above("baseline"):
        assert alt.env["NPY_DISABLE_CPU_FEATURES"] == nbgate._numpy_dispatch_above("baseline")


def _executed_probe(tmp_path, monkeypatch, cells):
    # the reference run is this machine's native configuration, also when the tests themselves
    # run under the alternative one (make test's second unit run)
    for key in nbgate.alternative().env:
        monkeypatch.delenv(key, raising=False)
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(s) for s in cells]
    nb.metadata["kernelspec"] = build_notebooks.KERNELSPEC
    from nbclient import NotebookClient

    NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    candidate = tmp_path / "probe.ipynb"
    nbformat.write(nb, candidate)
    return candidate


def test_gate_names_the_cell_that_depends_on_the_blas_kernel(tmp_path, monkeypatch):
    candidate = _executed_probe(tmp_path, monkeypatch, (SETUP, ROUNDED, RAW))
    differences = nbgate.check(candidate, nbgate.alternative(), "probe.md")
    assert [d.cell for d in differences] == [2], [str(d) for d in differences]
    report = str(differences[0])
    assert "probe.md: cell 2 ('# full repr" in report
    assert "Prescott" in report and "--- native (would be stored)" in report
    assert differences[0].stored != differences[0].obtained


@pytest.mark.skipif(not nbgate._numpy_dispatch_above("baseline"),
                    reason="numpy has no SIMD path above its baseline on this CPU to differ from")
def test_gate_names_the_cell_that_depends_on_numpys_simd_exp(tmp_path, monkeypatch):
    """numpy's vectorised exp (AVX2 / AVX-512) and its baseline one differ in the last bit on a few
    per cent of inputs: a cell printing exp's full repr is a reader's failure on another CPU."""
    raw_exp = "print(repr(np.exp(5 * x).tolist()))"
    rounded_exp = "print(np.array2string(np.exp(5 * x[:4]), precision=6))"
    candidate = _executed_probe(tmp_path, monkeypatch, (SETUP, rounded_exp, raw_exp))
    differences = nbgate.check(candidate, nbgate.alternative(), "probe.md")
    assert [d.cell for d in differences] == [2], [str(d) for d in differences]
