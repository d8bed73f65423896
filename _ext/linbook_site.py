"""Local Sphinx extension for the linbook site.

sphinx-thebe 0.3.1 on Sphinx 7.4 adds its inline script twice to every page, which the
browser reports as "Identifier 'THEBE_JS_URL' has already been declared". Drop the
duplicate script entries before the page is rendered.
"""


def _dedupe_scripts(app, pagename, templatename, context, doctree):
    files = context.get("script_files")
    if not files:
        return
    seen, keep = set(), []
    for js in files:
        key = (str(getattr(js, "filename", js) or ""), repr(sorted(getattr(js, "attributes", {}).items())))
        if key not in seen:
            seen.add(key)
            keep.append(js)
    files[:] = keep


def _move_derived_in(app, what, name, obj, options, lines):
    """Lift linbook's trailing "Derived in: ..." line to just after the summary.

    Docstrings end with that line (the book's cross-reference convention), but napoleon
    would read it as one more entry of the last numpy section ("Raises", "Attributes").
    Runs before napoleon (lower priority number) and rewrites it as its own paragraph.
    """
    idx = [i for i, ln in enumerate(lines) if ln.strip().startswith("Derived in:")]
    if not idx:
        return
    derived = [lines[i].strip() for i in idx]
    for i in reversed(idx):
        del lines[i]
    while lines and not lines[-1].strip():
        lines.pop()
    try:
        first_blank = next(i for i, ln in enumerate(lines) if not ln.strip())
    except StopIteration:
        first_blank = len(lines)
    block = [""] + ["*" + d.split(":", 1)[0] + ":*" + d.split(":", 1)[1] for d in derived] + [""]
    lines[first_blank:first_blank] = block


def setup(app):
    app.add_css_file("linbook.css")
    app.connect("html-page-context", _dedupe_scripts)
    app.connect("autodoc-process-docstring", _move_derived_in, priority=100)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
