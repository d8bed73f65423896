"""The chapters' code follows one style: ruff-formatted at 100 columns, no `;` chains,
named functions instead of assigned lambdas (checked on the MyST sources' code cells)."""

import shutil
import subprocess
import sys
from pathlib import Path

import jupytext
import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted((ROOT / "chapters").glob("[0-9][0-9]_*.md"))
RUFF = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
RULES = "E501,E702,E703,E731"


def _code_only(source, tmp_path):
    nb = jupytext.read(source, fmt="md:myst")
    nb.cells = [c for c in nb.cells if c.cell_type == "code"]
    path = tmp_path / (source.stem + ".ipynb")
    nbformat.write(nb, path)
    return path


@pytest.mark.skipif(RUFF is None, reason="ruff is not installed (it is in the locked environment)")
@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_code_cells_follow_the_style(source, tmp_path):
    nb = _code_only(source, tmp_path)
    lint = subprocess.run([RUFF, "check", "--no-cache", "--isolated", "--select", RULES,
                           "--line-length", "100", str(nb)], capture_output=True, text=True)
    assert lint.returncode == 0, f"{source.name}: {lint.stdout[-3000:]}"
    fmt = subprocess.run([RUFF, "format", "--no-cache", "--isolated", "--check", "--line-length", "100",
                          str(nb)], capture_output=True, text=True)
    assert fmt.returncode == 0, (f"{source.name} is not formatted; run: jupytext --pipe 'ruff format "
                                 f"--line-length 100 -' --pipe-fmt py:percent {source.relative_to(ROOT)}")


def test_prose_is_one_sentence_per_line():
    """CONTRIBUTING promises one-line diffs for one-sentence edits (tools/sentence_lines.py)."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    proc = subprocess.run([sys.executable, str(root / "tools" / "sentence_lines.py"), "--check"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
