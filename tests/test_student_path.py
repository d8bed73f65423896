"""What a student meets when they use the book for homework (issue 12.5).

`import linbook` gives `linbook.exercises`; the chapters need no Jupyter Book package; the
`notebooks` extra and Binder's environment hold what the chapters import, at the locked
versions; every chapter's first code cell (hidden on the site) installs linbook on Colab from the
book's repository and does nothing elsewhere;
the exercises' printed self-check calls name registered exercises.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import io
import os
import re
import subprocess
import sys
import tomllib
import warnings
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted((ROOT / "chapters").glob("[0-9][0-9]_*.md"))
CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```\s*$", re.M | re.S)
PRINTED_CHECK = re.compile(r'`(linbook\.exercises\.check\("([\w.-]+)",\s*(\w+)\))`')


def _code_cells(path):
    """[(tags, code)] of a MyST source, in order (read with jupytext, so any cell metadata works)."""
    import jupytext

    nb = jupytext.read(path, fmt="md:myst")
    return [(list(c.metadata.get("tags", [])), c.source.strip("\n")) for c in nb.cells if c.cell_type == "code"]


def _prose(path):
    return CELL.sub("", path.read_text(encoding="utf-8"))


def _imported_modules(path):
    mods = set()
    for _, code in _code_cells(path):
        lines = [ln for ln in code.splitlines() if not ln.lstrip().startswith(("%", "!"))]
        for node in ast.walk(ast.parse("\n".join(lines))):
            if isinstance(node, ast.Import):
                mods |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                mods.add(node.module.split(".")[0])
    return mods


def test_import_linbook_gives_exercises_lazily():
    code = ("import sys, linbook; assert 'linbook.exercises' not in sys.modules; "
            "r = linbook.exercises.check('gendisc.param-count', lambda M: 2*M + M*(M+1)//2 + 1, verbose=False); "
            "assert r and 'exercises' in dir(linbook); print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd="/")
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def test_no_chapter_imports_myst_nb():
    for path in SOURCES:
        assert "myst_nb" not in _imported_modules(path), path.name


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.stem)
def test_colab_setup_cell_is_first_hidden_and_silent_here(path):
    cells = _code_cells(path)
    (tags, code), (_, imports) = cells[0], cells[1]
    assert tags == ["colab-setup", "remove-cell"], "the first code cell installs linbook on Colab, off the page"
    assert 'if "google.colab" in sys.modules' in code and "linbook" in code
    assert re.search(r"^import .*\blinbook\b", imports, re.M), "the Colab cell comes right before the imports cell"
    calls = []
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.MonkeyPatch.context() as mp:
        mp.setattr(subprocess, "run", lambda *a, **k: calls.append(a))
        exec(compile(code, path.name, "exec"), {})
    assert calls == [] and out.getvalue() == "", "off Colab the cell must do and print nothing"


def _run_on_colab(code, repository):
    """Run a Colab cell as on a fresh Colab runtime (no linbook) for the given repository URL."""
    import importlib.util

    code = re.sub(r'^LINBOOK_REPOSITORY = ".*"$', f"LINBOOK_REPOSITORY = {repository!r}", code, flags=re.M)
    calls = []
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(sys.modules, "google.colab", object())
        mp.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "linbook" else object())
        mp.setattr(subprocess, "run", lambda cmd, **k: calls.append(cmd))
        exec(compile(code, "colab", "exec"), {})
    return calls


def test_colab_cell_installs_from_the_book_repository_on_colab():
    import book_settings

    _, code = _code_cells(SOURCES[0])[0]
    assert f'LINBOOK_REPOSITORY = "{book_settings.repository_url()}"' in code, "run make backmatter"
    (cmd,) = _run_on_colab(code, "https://example.org/owner/book")
    assert cmd[:4] == [sys.executable, "-m", "pip", "install"]
    assert "linbook @ git+https://example.org/owner/book" in cmd
    with pytest.raises(ModuleNotFoundError, match="make wheel"):
        _run_on_colab(code, "")


def _lock():
    pins = {}
    for line in (ROOT / "requirements.lock").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, version = line.split("==")
            pins[canonicalize_name(name)] = version.strip()
    return pins


def _pyproject():
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


@functools.cache
def _distributions():
    from importlib.metadata import packages_distributions
    return packages_distributions()


def _dist_of(module):
    return [canonicalize_name(d) for d in _distributions().get(module, [])]


def test_notebooks_extra_covers_every_chapter_import():
    project = _pyproject()
    provided = {canonicalize_name(Requirement(r).name)
                for r in project["dependencies"] + project["optional-dependencies"]["notebooks"]}
    assert {"jupyterlab", "ipykernel"} <= provided
    for r in project["optional-dependencies"]["notebooks"]:
        assert Requirement(r).specifier, f"{r}: the notebooks extra gives lower bounds"
    stdlib = set(sys.stdlib_module_names)
    for path in SOURCES:
        for mod in _imported_modules(path) - stdlib - {"linbook"}:
            dists = _dist_of(mod)
            assert dists and set(dists) & provided, f"{path.name} imports {mod}: not in linbook[notebooks]"


def test_binder_environment_is_the_lock():
    lock = _lock()
    pins = {}
    for line in (ROOT / "binder" / "requirements.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            req = Requirement(line)
            (spec,) = req.specifier
            assert spec.operator == "==", line
            pins[canonicalize_name(req.name)] = spec.version
    assert {n: lock.get(n) for n in pins} == pins, "binder/requirements.txt disagrees with requirements.lock"
    project = _pyproject()
    needed = {canonicalize_name(Requirement(r).name)
              for r in project["dependencies"] + project["optional-dependencies"]["notebooks"]}
    assert needed - {"jupyterlab", "ipykernel"} <= set(pins), "Binder lacks a dependency of linbook[notebooks]"
    post = ROOT / "binder" / "postBuild"
    assert os.access(post, os.X_OK) and "pip install --no-deps ." in post.read_text()
    assert (ROOT / "binder" / "runtime.txt").read_text().strip() == "python-3.11"   # numpy 2.4 of the lock


def test_printed_self_checks_name_registered_exercises():
    import linbook.exercises as ex

    keys, found = set(ex.available()), set()
    for path in SOURCES:
        prose = _prose(path)
        assert "`ex.check(" not in prose, f"{path.name}: print linbook.exercises.check, which runs after `import linbook`"
        for _, key, _ in PRINTED_CHECK.findall(prose):
            assert key in keys, f"{path.name}: {key} is not a registered exercise"
            found.add(key)
    assert found == {k for k in keys if not k.startswith("test.")}, "an exercise is never printed in a chapter"


def test_logistic_grid_search_on_breast_cancer_is_quiet():
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from linbook import LogisticRegression

    X, y = load_breast_cancer(return_X_y=True)
    grid = GridSearchCV(make_pipeline(StandardScaler(), LogisticRegression()),
                        {"logisticregression__fit_intercept": [True, False]}, cv=3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        grid.fit(X, y)
    assert [str(w.message) for w in caught] == []
    assert grid.best_score_ > 0.9
