"""Re-execute notebooks in place so their stored outputs are current (``make notebooks``).

Usage: python tools/run_notebooks.py [NOTEBOOK ...]   (default: every chapters/**/*.ipynb)
Notebooks run with the working directory set to their own folder, in the kernel of
this Python (the project's .venv), exactly as nbval runs them in ``make test``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]


def run(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=900, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}})
    t = time.perf_counter()
    client.execute()
    nbformat.write(nb, path)
    print(f"executed {path.relative_to(ROOT)} in {time.perf_counter() - t:.1f} s")


def main(args):
    paths = [Path(a).resolve() for a in args] or sorted((ROOT / "chapters").rglob("*.ipynb"))
    for p in paths:
        if ".ipynb_checkpoints" in p.parts:
            continue
        run(p)


if __name__ == "__main__":
    main(sys.argv[1:])
