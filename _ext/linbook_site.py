"""Local Sphinx extension for the linbook site (and its PDF edition).

* sphinx-thebe 0.3.1 on Sphinx 7.4 adds its inline script twice to every page, which the
  browser reports as "Identifier 'THEBE_JS_URL' has already been declared". Drop the
  duplicate script entries before the page is rendered.
* Lift each docstring's "Derived in: ..." paragraph (which may span lines) above the numpy
  sections, as one paragraph.
* Show linbook's version (``linbook.__version__``) in the page title and footer, use it as
  Sphinx's ``version``/``release`` (the PDF's title page) and as the MyST substitution
  ``{{ linbook_version }}`` (the home page).
* Repository, issue and launch (Binder, Colab) buttons exist only when ``repository.url`` of
  ``_config.yml`` names the book's public repository; it is empty by default, and then the
  site links to no repository.
* ``\\tag`` inside the ``split`` environment Sphinx wraps multi-line display math in is an
  error (LaTeX and MathJax): LaTeX gets ``equation*`` + ``aligned`` with the tag outside, the
  HTML page a multi-line tagged equation unwrapped in ``\\[ ... \\]``.
"""

from __future__ import annotations

import re


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


def derived_in_paragraphs(lines):
    """Remove every "Derived in:" paragraph from ``lines``; return them, each joined to one line.

    A paragraph runs from the "Derived in:" line to the next blank line (or a numpy section
    underline), so a sentence wrapped over several lines stays whole.
    """
    out, found, i = [], [], 0
    while i < len(lines):
        if lines[i].strip().startswith("Derived in:"):
            para = [lines[i].strip()]
            i += 1
            while i < len(lines) and lines[i].strip() and not re.match(r"^\s*-{3,}\s*$", lines[i]) \
                    and not (i + 1 < len(lines) and re.match(r"^\s*-{3,}\s*$", lines[i + 1])):
                para.append(lines[i].strip())
                i += 1
            found.append(" ".join(para))
            continue
        out.append(lines[i])
        i += 1
    return out, found


def _move_derived_in(app, what, name, obj, options, lines):
    """Lift linbook's "Derived in: ..." paragraph to just after the summary.

    Docstrings end with that sentence (the book's cross-reference convention), but napoleon
    would read it as one more entry of the last numpy section ("Raises", "Attributes").
    Runs before napoleon (lower priority number) and rewrites it as its own paragraph.

    napoleon's ``napoleon_custom_sections`` cannot do this (measured with Sphinx 7.4.7): a numpy
    section header is a line of its own with a dashed underline, so with ``["Derived in"]`` or
    ``[("Derived in", "notes")]`` the inline sentence still renders as a second "Returns" item,
    "**Derived in** (*chapter ...*)". It would take rewriting the 165 "Derived in:" lines of 55
    modules as underlined sections, shown after the numpy sections instead of under the summary.
    """
    rest, derived = derived_in_paragraphs(list(lines))
    if not derived:
        return
    while rest and not rest[-1].strip():
        rest.pop()
    try:
        first_blank = next(i for i, ln in enumerate(rest) if not ln.strip())
    except StopIteration:
        first_blank = len(rest)
    block = [""]
    for d in derived:
        head, tail = d.split(":", 1)
        block += ["*" + head + ":*" + tail, ""]
    rest[first_blank:first_blank] = block
    lines[:] = rest


def _version(app, config):
    try:
        import linbook
        version = str(linbook.__version__)
    except Exception:  # the site still builds without the package importable
        return
    config.version = config.release = version
    config.myst_substitutions = {**(config.myst_substitutions or {}), "linbook_version": version}
    if config.html_title and version not in config.html_title:
        config.html_title = f"{config.html_title} (v{version})"
    opts = dict(config.html_theme_options or {})
    footer = opts.get("extra_footer") or ""
    if version not in footer:
        opts["extra_footer"] = (footer + " " if footer else "") + f"<p>linbook {version}</p>"
    config.html_theme_options = opts


# Launch services offered when the book has a public repository (Binder builds binder/ from it;
# Colab runs the chapter's first cell, which installs linbook from it).
LAUNCH_BUTTONS = {"notebook_interface": "classic", "binderhub_url": "https://mybinder.org",
                  "colab_url": "https://colab.research.google.com"}
REPOSITORY_BUTTONS = ("use_repository_button", "use_issues_button")


def repository_theme_options(options):
    """The theme options with the repository and launch buttons on iff a repository URL is set."""
    opts = dict(options or {})
    url = str(opts.get("repository_url") or "").strip()
    for button in REPOSITORY_BUTTONS:
        opts[button] = bool(url)
    opts.pop("use_edit_page_button", None)
    if url:
        opts["repository_url"] = url
        opts["launch_buttons"] = {**LAUNCH_BUTTONS, **(opts.get("launch_buttons") or {})}
    else:
        opts.pop("repository_url", None)
        launch = {k: v for k, v in (opts.get("launch_buttons") or {}).items()
                  if k not in ("binderhub_url", "colab_url", "jupyterhub_url", "deepnote_url")}
        if launch:
            opts["launch_buttons"] = launch
        else:
            opts.pop("launch_buttons", None)
    return opts


def _repository(app, config):
    config.html_theme_options = repository_theme_options(config.html_theme_options)


def latex_tagged_math(text):
    """Display math with ``\\tag`` as LaTeX that compiles: ``equation*`` + ``aligned``.

    Sphinx wraps display math in ``equation*`` + ``split`` (LaTeX only), and amsmath forbids
    ``\\tag`` inside ``split``; here the tag goes outside the ``aligned`` block instead.
    """
    tags = re.findall(r"\\tag\*?\{[^{}]*\}", text)
    body = re.sub(r"\\tag\*?\{[^{}]*\}", "", text)
    body = re.sub(r"\n\s*\n", "\n", body).strip()
    return "\\begin{equation*}\\begin{aligned}" + body + "\\end{aligned}" + "".join(tags[:1]) + "\\end{equation*}"


def _latex_tagged_math(app, doctree, docname):
    """Display math with ``\\tag`` written so that the tag is allowed.

    Sphinx wraps a display equation that has line breaks (``\\\\``) in ``split``, for LaTeX
    and for MathJax alike, and both refuse ``\\tag`` there. LaTeX gets
    :func:`latex_tagged_math`; the HTML page gets the equation unwrapped in ``\\[ ... \\]``
    (a multi-line one carries its own ``aligned``), where MathJax accepts the tag.
    """
    from docutils import nodes
    for node in doctree.findall(nodes.math_block):
        if "\\tag" not in node.astext():
            continue
        if app.builder.format == "latex":
            node["nowrap"] = True
            node.children = [nodes.Text(latex_tagged_math(node.astext()))]
        elif app.builder.format == "html" and "\\\\" in node.astext() and not node.get("number"):
            node["nowrap"] = True
            node.children = [nodes.Text("\\[" + node.astext().strip() + "\\]")]


def setup(app):
    app.add_css_file("linbook_site.css")
    app.add_js_file("linbook_zoom.js")
    app.add_js_file("linbook_math.js")
    # "Live code" (make live): the control, and the vendored thebe it loads on a click.
    app.add_css_file("linbook_live.css")
    app.add_js_file("linbook_live.js")
    app.connect("config-inited", _version)
    app.connect("config-inited", _repository)
    app.connect("html-page-context", _dedupe_scripts)
    app.connect("autodoc-process-docstring", _move_derived_in, priority=100)
    app.connect("doctree-resolved", _latex_tagged_math)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
