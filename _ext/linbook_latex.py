"""Local Sphinx extension for the PDF edition (``make pdf``): the site's numbering in LaTeX.

On the site only the "Chapters" part of ``_toc.yml`` is numbered (``numbered: true``), so
"Logistic regression" is chapter 4 and its exercises are "Exercise 4.1", ... LaTeX numbers every
``\\chapter`` it meets, so Notation (part "Getting started") would become chapter 1, every chapter
after it one higher than on the site, and the back matter chapters 11-17.

The numbers the site shows are the ones Sphinx assigned (``env.toc_secnumbers``, per document and
heading). Before each document's top heading in the assembled LaTeX document this writes the
number that heading has on the site (``\\setcounter{chapter}{N-1}``, so ``\\chapter`` steps it to
N) and numbers as many heading levels as the site does; a document the site leaves unnumbered is
set with ``secnumdepth`` -1 (its headings unnumbered, still listed in the PDF's contents).
"""

from __future__ import annotations

# LaTeX heading levels under the "part" top level that jupyterbook-latex uses for a jb-book with
# parts (level 0 = chapter).
_LEVELS = ("chapter", "section", "subsection", "subsubsection", "paragraph", "subparagraph")


def numbering_latex(secnumbers):
    """LaTeX that gives a document's headings the numbers ``secnumbers`` holds on the site.

    ``secnumbers`` maps the document's anchors to their site numbers (``{"": (4,), "#irls":
    (4, 3)}``); empty when the site leaves the document unnumbered.
    """
    top = secnumbers.get("") if secnumbers else None
    if not top:
        return "\\setcounter{secnumdepth}{-1}"
    depth = min(max(len(n) for n in secnumbers.values()), len(_LEVELS)) - 1
    counter = _LEVELS[len(top) - 1]
    return f"\\setcounter{{secnumdepth}}{{{depth}}}\\setcounter{{{counter}}}{{{top[-1] - 1}}}"


def _site_numbers_in_latex(app, doctree, docname):
    if app.builder.format != "latex":
        return
    from docutils import nodes
    from sphinx import addnodes

    env = app.env
    for start in list(doctree.findall(addnodes.start_of_file)):
        doc = start.get("docname")
        if doc not in env.all_docs:  # jupyterbook-latex's part headings reuse this node
            continue
        section = next((c for c in start.children if isinstance(c, nodes.section)), None)
        if section is None:
            continue
        latex = numbering_latex(env.toc_secnumbers.get(doc, {}))
        section.parent.insert(section.parent.index(section), nodes.raw("", latex + "\n", format="latex"))


def setup(app):
    app.connect("doctree-resolved", _site_numbers_in_latex)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
