"""List the functions longer than a limit (default 60 lines) in linbook, outside ``linbook/_kernels``.

    python tools/long_functions.py [--limit 60] [paths ...]

A function's length is its ``def`` line through its last line, docstring included (nested
functions count inside their parent and on their own). Exit status 1 when any is found.
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def long_functions(paths, limit=60):
    """``[(path, line, qualified name, length)]`` of the functions over ``limit`` lines."""
    found = []
    for path in paths:
        tree = ast.parse(path.read_text(), filename=str(path))
        stack = [(tree, "")]
        while stack:
            node, prefix = stack.pop()
            for child in ast.iter_child_nodes(node):
                name = f"{prefix}{getattr(child, 'name', '')}"
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    start = min([child.lineno] + [d.lineno for d in child.decorator_list])
                    length = child.end_lineno - start + 1
                    if length > limit:
                        found.append((path, child.lineno, name, length))
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    stack.append((child, name + "."))
    return sorted(found, key=lambda f: (str(f[0]), f[1]))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=60)
    parser.add_argument("paths", nargs="*", type=Path)
    args = parser.parse_args(argv)
    paths = args.paths or [p for p in sorted((ROOT / "linbook").rglob("*.py")) if "_kernels" not in p.parts]
    found = long_functions(paths, args.limit)
    for path, line, name, length in found:
        print(f"{path.relative_to(ROOT) if path.is_absolute() else path}:{line}  {name}  {length} lines")
    print(f"{len(found)} function(s) over {args.limit} lines")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
