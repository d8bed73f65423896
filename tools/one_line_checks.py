"""Write each check of the chapters' MyST sources as one line, naming its long pieces above it.

Usage: python tools/one_line_checks.py [chapters/NN_name.md ...]   (default: every chapter)

A check (``check_close(...)``, ``check_true(...)``, ...) that ``ruff format`` spread over several
lines because its arguments are long becomes one line: its arguments are assigned, in their
order, to variables named after the checker's parameters (``lhs``/``rhs`` of ``check_equal``,
``actual``/``expected`` of ``check_close``, ``claim`` for a label, ``detail``, ...) on the lines
above, until the call fits in ``WIDTH`` columns. Each piece is evaluated once and in the same
order as before, so the check prints the same line. A name the chapter already uses for
something else gets a trailing underscore. ``tools/format_chapters.py`` runs this before
``ruff format``, so the formatter does not spread a check again; checks inside a lambda or a
comprehension are left for a person (``tools/chapter_metrics.py --cells`` lists them).
"""

from __future__ import annotations

import ast
import re
import sys
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WIDTH = 100


def width(text: str) -> int:
    """Columns the text takes as ruff counts them (a CJK character is two)."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)
#: What each checker's positional arguments hold (the label is always the claim).
ROLES = {
    "check_close": ("actual", "expected", "claim"),
    "check_differs": ("wrong", "right", "claim"),
    "check_equal": ("lhs", "rhs", "claim"),
    "check_gradient": ("energy", "gradient", "point", "claim"),
    "check_hessian": ("gradient", "hessian", "point", "claim"),
    "check_integral": ("integrand", "value", "claim"),
    "check_numeric": ("form", "reference", "claim"),
    "check_positive_definite": ("matrix", "claim"),
    "check_true": ("condition", "claim"),
}
_SIMPLE = (ast.Name, ast.Constant)


def _name(call: ast.Call) -> str:
    return call.func.id if isinstance(call.func, ast.Name) else getattr(call.func, "attr", "")


def _pieces(call: ast.Call):
    """``[(role, node, keyword)]`` of a check call's arguments in source order."""
    name, args = _name(call), list(call.args)
    if name == "check_fails" and args and isinstance(args[0], ast.Name):
        roles = ("checker", *ROLES.get(args[0].id, ()))
    else:
        roles = ROLES.get(name, ())
    pieces = [(roles[i] if i < len(roles) else f"arg{i}", a, None) for i, a in enumerate(args)]
    pieces += [(k.arg, k.value, k.arg) for k in call.keywords if k.arg]
    return sorted(pieces, key=lambda p: (p[1].lineno, p[1].col_offset))


def _segment(lines, node) -> str:
    seg = ast.get_source_segment("\n".join(lines), node)
    return seg


def _statement_of(tree, call):
    """The statement whose value is the call (an expression statement or an assignment)."""
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(node, field, None)
            for stmt in stmts if isinstance(stmts, list) else []:
                if isinstance(stmt, (ast.Expr, ast.Assign)) and stmt.value is call:
                    return stmt
    return None


def _rewrite(lines, stmt, call, taken) -> list[str] | None:
    """The lines that replace ``stmt``: hoisted pieces, then the one-line check."""
    indent = re.match(r"\s*", lines[stmt.lineno - 1]).group(0)
    func = _segment(lines, call.func)
    if isinstance(stmt, ast.Assign):  # "result = check_...(...)" keeps its target
        func = f"{lines[stmt.lineno - 1][len(indent):call.col_offset]}{func}"
    pieces = _pieces(call)
    if any(isinstance(node, ast.Starred) for _, node, _ in pieces):
        return None
    # a label split into adjacent literals is one string again (the formatter rewraps it)
    texts = [repr(node.value) if isinstance(node, ast.Constant) and isinstance(node.value, str)
             else _segment(lines, node) for _, node, _ in pieces]
    hoisted = [("\n" in t) for t in texts]

    def render():
        parts = []
        for (role, node, kw), text, h in zip(pieces, texts, hoisted):
            value = names[role] if h else text
            parts.append(f"{kw}={value}" if kw else value)
        return f"{indent}{func}({', '.join(parts)})"

    names = {}
    for role, _, _ in pieces:
        name = role
        while name in taken:
            name += "_"
        names[role] = name
    while width(render()) > WIDTH:
        candidates = [i for i, ((_, node, _), h) in enumerate(zip(pieces, hoisted))
                      if not h and not isinstance(node, _SIMPLE) or (not h and len(texts[i]) > 30)]
        if not candidates:
            return None
        longest = max(candidates, key=lambda i: len(texts[i]))
        hoisted[longest] = True
    # evaluation order: a piece with a call that came before a hoisted piece is hoisted too
    last = max((i for i, h in enumerate(hoisted) if h), default=-1)
    for i in range(last):
        if not hoisted[i] and any(isinstance(n, ast.Call) for n in ast.walk(pieces[i][1])):
            hoisted[i] = True
    out = []
    for (role, node, _), text, h in zip(pieces, texts, hoisted):
        if h:
            body = text.split("\n")
            first_col = node.col_offset
            rest = [ln[first_col:] if ln[:first_col].strip() == "" else ln.lstrip() for ln in body[1:]]
            if rest:  # parenthesised: a bare multi-line expression is not a statement
                out.append(f"{indent}{names[role]} = (")
                out += [f"{indent}    {ln}" for ln in [body[0], *rest]]
                out.append(f"{indent})")
            else:
                out.append(f"{indent}{names[role]} = {body[0]}")
    line = render()
    return out + [line] if width(line) <= WIDTH else None


def one_line_cell(code: str, taken: set[str]) -> tuple[str, int]:
    """The cell with its multi-line checks rewritten, and how many it rewrote."""
    lines = code.split("\n")
    try:
        tree = ast.parse(re.sub(r"(?m)^(\s*)[%!].*$", r"\1pass", code))
    except SyntaxError:
        return code, 0
    jobs = []
    for node in ast.walk(tree):
        spread = isinstance(node, ast.Call) and node.end_lineno > node.lineno
        if spread and _name(node).startswith("check_"):
            stmt = _statement_of(tree, node)
            if stmt is not None:
                jobs.append((stmt, node))
    done = 0
    for stmt, call in sorted(jobs, key=lambda j: -j[0].lineno):  # bottom up: line numbers stay valid
        new = _rewrite(lines, stmt, call, taken)
        if new is not None:
            lines[stmt.lineno - 1:stmt.end_lineno] = new
            done += 1
    return "\n".join(lines), done


def chapter_names(text: str) -> set[str]:
    """Every name the chapter's code binds or reads (a hoisted name must not clobber one)."""
    names = set()
    for cell in re.findall(r"```\{code-cell\}[^\n]*\n(.*?)\n```", text, flags=re.S):
        cell = re.sub(r"\A(?:(?::[\w-]+:[^\n]*\n)+|---\n.*?\n---\n)", "", cell, flags=re.S)
        try:
            tree = ast.parse(re.sub(r"(?m)^(\s*)[%!].*$", r"\1pass", cell))
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Name):
                names.add(node.id)
            elif isinstance(node, ast.arg):
                names.add(node.arg)
            elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.alias):
                names.add((node.asname or node.name).split(".")[0])
    return names


def one_line_checks(source: Path) -> int:
    """Rewrite a MyST source in place; the number of checks made one line."""
    text = source.read_text(encoding="utf-8")
    taken = chapter_names(text)
    lines, out, cell, done = text.split("\n"), [], None, 0
    for line in lines:
        if cell is None:
            out.append(line)
            if line.startswith("```{code-cell}"):
                cell = []
            continue
        if line.startswith("```"):
            head = []
            if cell and cell[0] == "---":  # YAML cell options
                head.append(cell.pop(0))
                while cell and cell[0] != "---":
                    head.append(cell.pop(0))
                head.append(cell.pop(0))
            while cell and (re.match(r":[\w-]+:", cell[0]) or cell[0] == ""):
                head.append(cell.pop(0))
            code, n = one_line_cell("\n".join(cell), taken)
            done += n
            out += head + ([code] if cell else []) + [line]
            cell = None
        else:
            cell.append(line)
    source.write_text("\n".join(out), encoding="utf-8")
    return done


def main(argv):
    sources = [Path(a) for a in argv] or sorted((ROOT / "chapters").glob("[0-9][0-9]_*.md"))
    for source in sources:
        print(f"{source}: {one_line_checks(source)} checks made one line")


if __name__ == "__main__":
    main(sys.argv[1:])
