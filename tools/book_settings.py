"""The two project settings that generated files repeat: the repository URL and the version.

* The repository URL is ``repository.url`` in ``_config.yml`` (empty by default: the book
  names no public repository). Jupyter Book passes it to the theme, and ``_ext/linbook_site.py``
  shows the repository, issue and launch buttons only when it is set. The generated files that
  repeat it (``CITATION.cff``, the BibTeX entry of the home page, the test links of the
  cross-index and the Colab cell of each chapter) are written from it by
  ``tools/gen_backmatter.py`` and ``tools/gen_index.py``; tests check that they agree.
* The version is ``[project].version`` in ``pyproject.toml``; ``linbook.__version__`` reads it
  from the installed package's metadata.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def book_config():
    return yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8")) or {}


def repository_url():
    """The book's public repository (``https://...``, no trailing slash), or "" when it has none."""
    repo = book_config().get("repository") or {}
    return str(repo.get("url") or "").strip().rstrip("/")


def repository_branch():
    repo = book_config().get("repository") or {}
    return str(repo.get("branch") or "main")


def version():
    """The project's version, from ``pyproject.toml`` (the single source of ``linbook.__version__``)."""
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["project"]["version"]
