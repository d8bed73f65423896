"""The figure check of chapters/conftest.py can fail: a changed plotting call is caught.

A one-cell notebook is executed to store its figure; nbval (with the book's conftest)
passes on it, and fails once only the axes background colour in the source changes.
"""

import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
CELL = """import matplotlib.pyplot as plt, linbook
linbook.plotting.use_book_style()
fig, ax = plt.subplots()
ax.plot([0, 1, 2], [0, 1, 4], label="y = x^2")
ax.set(xlabel="x", ylabel="y"){extra}
plt.show()"""


def _nbval(folder):
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval",
                           "--nbval-current-env", "--rootdir", str(folder), str(folder / "fig.ipynb")],
                          capture_output=True, text=True, cwd=folder)


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    folder = tmp_path_factory.mktemp("figcheck")
    shutil.copy(ROOT / "chapters" / "conftest.py", folder / "conftest.py")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(CELL.format(extra=""))])
    NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    assert any("image/png" in o.get("data", {}) for o in nb.cells[0].outputs)
    nbformat.write(nb, folder / "fig.ipynb")
    return folder, nb


def test_unchanged_figure_passes(stored):
    folder, _ = stored
    run = _nbval(folder)
    assert run.returncode == 0, run.stdout[-2000:]


def test_changed_plotting_call_fails(stored):
    folder, nb = stored
    changed = nbformat.from_dict(nb)
    changed.cells[0].source = CELL.format(extra='\nax.set_facecolor("#f0f0f0")')
    nbformat.write(changed, folder / "fig.ipynb")
    run = _nbval(folder)
    assert run.returncode != 0 and "figure 1 differs from the stored one" in run.stdout, run.stdout[-2000:]
