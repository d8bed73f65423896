"""The built site checked in a real browser (headless Chromium via chromedriver).

Every page of ``_build/html`` (or ``$LINBOOK_SITE``) is served on 127.0.0.1 and loaded in
headless Chromium; after MathJax has finished, each page must have

* all math typeset by the vendored MathJax: every ``.math`` element holds an
  ``mjx-container``, no MathJax error (``mjx-merror``) and no raw TeX left in the visible
  text (``$$``, ``\\(``, ``\\[``, ``\\begin{``, ``$\\command``);
* every image loaded (``naturalWidth > 0``);
* no console errors (uncaught exceptions, ``console.error``, failed resource loads);
* no broken internal links: every same-site ``href`` resolves to a file of the site, and a
  ``#fragment`` to an element id on the target page;

and the search page finds a term. Every page is loaded twice, at 1280 px and at a phone's
390 px, and at both widths must have no horizontal overflow (the document, the main content,
prose, cell outputs and tables all fit: ``scrollWidth <= clientWidth``), no MathJax error,
and every display equation fits its column without scrolling once linbook_math.js has
scaled it down (to no less than MIN_MATH_SCALE); a test typesets a too-wide one to show
that this check fails. At 390 px every
figure's smallest text is at least 8 CSS px (the PNG records its text size), and in the theme's
dark mode every figure stays on white, undimmed.
Code input blocks scroll inside their box (their lines do not wrap).
Screenshots of every page at both widths go to ``tests/browser/screenshots/`` (gitignored;
the errata page and the first two chapters also as full-page shots at 390 px).

Run:  ``make browser``  (or ``.venv/bin/python -m pytest tests/browser``; with
``LINBOOK_SITE=/path/to/html`` to check another build). Without Chromium the test is
skipped with a plain message, except in CI (``CI=true``) where that is a failure.
Install: ``apt-get install chromium chromium-driver``.
"""

from __future__ import annotations

import re
import sys
import time
import urllib.parse
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from browserlib import HTML, SHOTS, Browser, SiteServer, require_chromium  # noqa: E402

PHONE_WIDTH = 390
DESKTOP_WIDTH = 1280
WIDTHS = (DESKTOP_WIDTH, PHONE_WIDTH)
SEARCH_TERM = "Hessian"
#: Smallest figure text on a phone, in CSS px (linbook.plotting sets 12 pt for this).
MIN_FIGURE_TEXT_CSS_PX = 8.0
#: The least linbook_math.js scales a display equation down before it scrolls instead.
MIN_MATH_SCALE = 0.6
pytestmark = pytest.mark.site

# Console messages that are not defects of the book: the browser asks every server for
# /favicon.ico (the book has no favicon; static hosts answer 404 too).
IGNORED_CONSOLE = [re.compile(r"/favicon\.ico\b")]

# Runs in the page after load: waits for MathJax, then reports everything the tests need.
PAGE_REPORT_JS = r"""
const done = arguments[arguments.length - 1];
const report = () => {
  const skip = 'pre, code, script, style, textarea, mjx-container, .highlight, .MathJax, mjx-assistive-mml';
  // Visible text outside code blocks and typeset math.
  let text = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const n = walker.currentNode, el = n.parentElement;
    if (!el || el.closest(skip)) continue;
    if (el.closest('[hidden], .d-none')) continue;
    text.push(n.nodeValue);
  }
  const mathEls = Array.from(document.querySelectorAll('.math, .output_latex, [class*="text_latex"]'));
  const untypeset = mathEls.filter(e => !e.querySelector('mjx-container') && e.textContent.trim())
                           .map(e => e.textContent.trim().slice(0, 80));
  const merrors = Array.from(document.querySelectorAll('mjx-merror'))
                       .map(e => (e.getAttribute('data-mjx-error') || e.textContent).slice(0, 120));
  const imgs = Array.from(document.images).map(i => ({
      src: i.currentSrc || i.src, ok: i.complete && i.naturalWidth > 0}));
  const links = Array.from(document.querySelectorAll('a[href], link[href], img[src], script[src]'))
      .map(a => a.href || a.src).filter(Boolean);
  const ids = Array.from(document.querySelectorAll('[id], a[name]')).map(e => e.id || e.getAttribute('name'));
  done({text: text.join(' '), n_math: mathEls.length,
        n_mjx: document.querySelectorAll('mjx-container').length,
        untypeset, merrors, imgs, links, ids,
        has_mathjax: typeof window.MathJax === 'object' && !!window.MathJax.startup,
        scroll_width: document.documentElement.scrollWidth, inner_width: window.innerWidth,
        title: document.title});
};
const settle = () => Promise.all(Array.from(document.images).map(
    i => i.complete ? null : new Promise(r => { i.onload = i.onerror = r; })));
const mj = (window.MathJax && MathJax.startup && MathJax.startup.promise) || Promise.resolve();
// linbook_math.js scales wide equations once MathJax has typeset (it polls for MathJax every 100 ms): measured
// before its first run, on a busy machine, they counted as scrolling at scale None
const fitted = () => new Promise(r => {
  const t0 = Date.now();
  (function poll() {
    if (!window.linbookFitMath || window.linbookMathFitted || Date.now() - t0 > 10000) r();
    else setTimeout(poll, 50);
  })();
});
Promise.all([mj, settle()]).then(fitted).then(report, e => { window.__mjx_failed = String(e); report(); });
"""

# Runs after PAGE_REPORT_JS: what sticks out, and how over-wide display equations behave.
LAYOUT_JS = r"""
const W = window.innerWidth, out = [], math = [];
const desc = e => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') +
  (typeof e.className === 'string' && e.className ? '.' + e.className.trim().split(/\s+/).slice(0, 2).join('.') : '') +
  ' "' + (e.textContent || '').trim().replace(/\s+/g, ' ').slice(0, 50) + '"';
const docW = document.documentElement.scrollWidth;
if (docW > W + 1) out.push(`the document is ${docW} px wide in a ${W} px window`);
const art = document.querySelector('article.bd-article') || document.querySelector('main') || document.body;
const a = art.getBoundingClientRect();
const sel = 'main.bd-main, article.bd-article, .bd-article p, .bd-article li, .bd-article dd, ' +
            '.bd-article dt, .bd-article blockquote, .bd-article h1, .bd-article h2, .bd-article h3, ' +
            '.cell_output, .output, .bd-article table';
for (const e of document.querySelectorAll(sel)) {
  if (e.closest('pre, .highlight, div.math, mjx-container')) continue;  // scroll inside their own box
  if (e.offsetParent === null && getComputedStyle(e).position !== 'fixed') continue;  // hidden
  const sw = e.scrollWidth, cw = e.clientWidth;
  if (cw > 0 && sw > cw + 1) out.push(`${desc(e)}: scrollWidth ${sw} > clientWidth ${cw}`);
  const b = e.getBoundingClientRect();
  if (e.matches('main, article')) { if (b.right > W + 1) out.push(`${desc(e)}: ends at ${Math.round(b.right)} px`); continue; }
  if (b.width > 0 && b.right > a.right + 1) out.push(`${desc(e)}: sticks out of the article by ${Math.round(b.right - a.right)} px`);
}
for (const e of document.querySelectorAll('div.math, mjx-container[display="true"], .output_latex, .text_latex')) {
  const cs = getComputedStyle(e);
  // Inline formulas are covered by the paragraph check (on a phone they scroll, with the cue).
  if (cs.display === 'inline' || e.scrollWidth <= e.clientWidth + 1) continue;
  math.push({what: desc(e), scrolls: ['auto', 'scroll'].includes(cs.overflowX),
             scale: e.getAttribute('data-linbook-scale'),
             cue: /gradient/.test(cs.backgroundImage)});
}
const scaled = document.querySelectorAll('mjx-container[data-linbook-scale]').length;
const n_display = document.querySelectorAll('mjx-container[display="true"]').length;
// Figures of cell outputs: shown width vs the PNG's own (the PNG records its smallest text).
const figures = Array.from(document.querySelectorAll('.cell_output img')).map(i => ({
    src: i.currentSrc || i.src, shown: i.getBoundingClientRect().width, natural: i.naturalWidth}));
return {overflow: out.slice(0, 10), wide_math: math, n_scaled_math: scaled, n_display_math: n_display, figures};
"""

RAW_TEX = [
    ("$$", re.compile(r"\$\$")),
    ("\\(", re.compile(r"\\\(")),
    ("\\[", re.compile(r"\\\[")),
    ("\\begin{", re.compile(r"\\begin\{")),
    ("$\\command", re.compile(r"\$\s*\\[A-Za-z]+")),
    ("\\command{", re.compile(r"\\(?:frac|mathbf|boldsymbol|sum|mathrm|top|lVert|hat|mathcal)\b")),
]


def _pages():
    pages = sorted(p for p in HTML.rglob("*.html")
                   if not {"_static", "_sources", "_images"} & set(p.relative_to(HTML).parts))
    return [p.relative_to(HTML).as_posix() for p in pages]


class Crawl:
    """Every page loaded once; what each page reported, and its console messages."""

    def __init__(self, browser, base):
        self.browser, self.base = browser, base
        self.pages, self.console = {}, {}

    def visit(self, rel, width, query=""):
        br = self.browser
        br.logs()  # drop messages of the previous page
        br.get(self.base + rel + query)
        report = br.async_script(PAGE_REPORT_JS)
        report.update(br.script(LAYOUT_JS))
        br.screenshot(SHOTS / f"{_shot_name(rel)}_{width}.png")
        # Late console messages (e.g. from async scripts) arrive after load: give them a moment.
        time.sleep(0.05)
        msgs = [m for m in br.logs() if m.get("level") == "SEVERE"
                and not any(p.search(m.get("message", "")) for p in IGNORED_CONSOLE)]
        return report, msgs


def _shot_name(rel):
    return rel.removesuffix(".html").replace("/", "_")


FULL_PAGE_AT_PHONE = ["chapters/backmatter/errata.html", "chapters/01_estimation.html",
                      "chapters/04_logistic_regression.html"]


@pytest.fixture(scope="module")
def site():
    browser, driver = require_chromium()
    if not (HTML / "index.html").exists():
        pytest.fail(f"no built site at {HTML}: run `make book` first (make test builds it)", pytrace=False)
    SHOTS.mkdir(exist_ok=True)
    with SiteServer(HTML) as server, Browser(browser, driver, width=DESKTOP_WIDTH) as br:
        crawl = Crawl(br, server.url)
        crawl.by_width = {}
        for width in WIDTHS:
            pages = crawl.by_width[width] = {}
            if width != DESKTOP_WIDTH:
                br.set_viewport(width, 844, mobile=True)
            try:
                for rel in _pages():
                    pages[rel], crawl.console[(rel, width)] = crawl.visit(rel, width)
                    if width == PHONE_WIDTH and rel in FULL_PAGE_AT_PHONE:
                        br.screenshot(SHOTS / f"{_shot_name(rel)}_{width}_full.png", full=True)
            finally:
                br.clear_viewport()
        crawl.pages = crawl.by_width[DESKTOP_WIDTH]
        crawl.server = server
        yield crawl


def _fail_if(problems, what):
    if problems:
        pytest.fail(f"{len(problems)} {what}:\n  " + "\n  ".join(problems), pytrace=False)


def test_every_page_visited(site):
    assert len(site.pages) >= 15, sorted(site.pages)
    assert "chapters/intro.html" in site.pages


@pytest.mark.parametrize("width", WIDTHS)
def test_math_typeset_by_mathjax(site, width):
    problems, pages_with_math = [], 0
    for rel, r in site.by_width[width].items():
        if r["n_math"]:
            pages_with_math += 1
            if not r["has_mathjax"]:
                problems.append(f"{rel}: has {r['n_math']} math elements but MathJax did not load")
            if r["n_mjx"] == 0:
                problems.append(f"{rel}: no mjx-container although the page has math")
        for snippet in r["untypeset"][:5]:
            problems.append(f"{rel}: math element not typeset: {snippet!r}")
        for err in r["merrors"][:5]:
            problems.append(f"{rel}: MathJax error: {err!r}")
        for name, pat in RAW_TEX:
            for m in list(pat.finditer(r["text"]))[:3]:
                ctx = r["text"][max(0, m.start() - 40):m.end() + 40].replace("\n", " ")
                problems.append(f"{rel}: raw TeX {name!r} in the text: ...{ctx}...")
    assert pages_with_math >= 1, "no page has math at all: is the site built?"
    _fail_if(problems, "math problems")


def test_every_image_loads(site):
    problems = [f"{rel}: image did not load: {i['src'][:120]}"
                for rel, r in site.pages.items() for i in r["imgs"] if not i["ok"]]
    _fail_if(problems, "broken images")


def test_no_console_errors(site):
    problems = [f"{rel} at {width} px: [{m.get('source')}] {m.get('message', '')[:300]}"
                for (rel, width), msgs in site.console.items() for m in msgs]
    _fail_if(problems, "console errors")


def test_no_broken_internal_links(site):
    base = urllib.parse.urlsplit(site.server.url)
    ids = {rel: set(r["ids"]) for rel, r in site.pages.items()}
    problems, checked = set(), 0
    for rel, r in site.pages.items():
        for href in r["links"]:
            u = urllib.parse.urlsplit(href)
            if u.scheme not in ("http", "https") or u.netloc != base.netloc:
                continue  # external (launch buttons, repository, references): not checked offline
            path = urllib.parse.unquote(u.path).lstrip("/")
            target = HTML / path
            if path == "" or target.is_dir():
                target = target / "index.html"
                path = (Path(path) / "index.html").as_posix()
            checked += 1
            if not target.is_file():
                problems.add(f"{rel}: link to missing file {path}")
                continue
            frag = urllib.parse.unquote(u.fragment)
            if frag and path in ids and frag not in ids[path]:
                problems.add(f"{rel}: link to {path}#{frag}: no element with that id")
    assert checked > 0
    _fail_if(sorted(problems), "broken internal links")


def test_search_finds_a_term(site):
    br = site.browser
    br.get(site.base + "search.html?q=" + SEARCH_TERM)
    found = br.async_script(r"""
        const done = arguments[arguments.length - 1], t0 = Date.now();
        (function poll() {
          const items = document.querySelectorAll('#search-results ul.search li');
          const summary = document.querySelector('#search-results p.search-summary');
          if (items.length || (summary && summary.textContent.trim()) || Date.now() - t0 > 15000)
            done({n: items.length, summary: summary ? summary.textContent.trim() : null,
                  first: items.length ? items[0].textContent.trim().slice(0, 120) : null});
          else setTimeout(poll, 100);
        })();""")
    br.screenshot(SHOTS / "search.png")
    assert found["n"] >= 1, f"search.html?q={SEARCH_TERM} found nothing: {found}"


@pytest.mark.parametrize("width", WIDTHS)
def test_no_horizontal_overflow(site, width):
    """Document, main content, prose, outputs and tables fit the window (scrollWidth <= clientWidth)."""
    problems = []
    for rel, r in site.by_width[width].items():
        problems += [f"{rel}: {p}" for p in r["overflow"]]
        # Content wider than a phone makes the browser zoom out (innerWidth grows).
        if r["inner_width"] > width + 2:
            problems.append(f"{rel}: the layout viewport grew to {r['inner_width']} px")
    _fail_if(problems, f"overflow problems at {width} px")


@pytest.mark.parametrize("width", WIDTHS)
def test_display_equations_fit_without_scrolling(site, width):
    """No display equation needs horizontal scrolling: one wider than the column is scaled to
    fit (linbook_math.js), down to MIN_MATH_SCALE; one still too wide at that scale fails here
    (write it over several lines: `aligned`, split at relation signs). The scroll box with its
    cue stays in the CSS only so that such an equation is never cut off."""
    problems, n_display = [], 0
    for rel, r in site.by_width[width].items():
        n_display += r["n_display_math"]
        for m in r["wide_math"]:
            problems.append(f"{rel}: {m['what']} is wider than the column at scale {m['scale']} "
                            f"(scrolls in its box: {m['scrolls']}, cue: {m['cue']})")
    assert n_display > 0, "no display equation measured: is MathJax typesetting?"
    _fail_if(problems, f"display equations that scroll at {width} px")
    scaled = sum(r["n_scaled_math"] for r in site.by_width[width].values())
    print(f"{width} px: {n_display} display equations, {scaled} scaled down, none scroll")


def test_a_too_wide_display_equation_is_reported(site):
    """The measurement can fail: an equation typeset into a chapter at 390 px that is too wide
    even at MIN_MATH_SCALE is reported by LAYOUT_JS."""
    br = site.browser
    rel = next(rel for rel, r in site.by_width[PHONE_WIDTH].items() if r["n_display_math"])
    try:
        br.set_viewport(PHONE_WIDTH, 844, mobile=True)
        br.get(site.base + rel)
        br.async_script(PAGE_REPORT_JS)
        wide = br.async_script(r"""
            const done = arguments[arguments.length - 1];
            const d = document.createElement('div');
            d.className = 'math notranslate nohighlight';
            d.textContent = '\\[' + Array.from({length: 40}, (_, i) => 'x_{' + i + '}').join(' + ') + '\\]';
            document.querySelector('article.bd-article section, article.bd-article').appendChild(d);
            MathJax.typesetPromise([d]).then(() => { window.linbookFitMath(); done(true); },
                                            e => done(String(e)));""")
        assert wide is True, wide
        layout = br.script(LAYOUT_JS)
    finally:
        br.clear_viewport()
    assert any("x" in m["what"] and m["scale"] == f"{MIN_MATH_SCALE:.3f}" for m in layout["wide_math"]), layout["wide_math"]


def _png_min_text_px(src):
    """The smallest text height (px of the PNG) a figure records (linbook.plotting.MIN_TEXT_KEY)."""
    from PIL import Image

    from linbook.plotting import MIN_TEXT_KEY

    path = HTML / urllib.parse.unquote(urllib.parse.urlsplit(src).path).lstrip("/")
    if not path.is_file():
        return None
    with Image.open(path) as im:
        value = im.text.get(MIN_TEXT_KEY) if hasattr(im, "text") else None
    return float(value) if value else None


def test_figure_text_readable_on_a_phone(site):
    """At 390 px every figure's smallest text is >= 8 CSS px: its size in the PNG times the
    width the page shows the PNG at over the PNG's own width."""
    problems, measured = [], []
    for rel, r in site.by_width[PHONE_WIDTH].items():
        for fig in r["figures"]:
            name = fig["src"].rsplit("/", 1)[-1]
            px = _png_min_text_px(fig["src"])
            if px is None:
                problems.append(f"{rel}: {name} does not record its text size "
                                "(regenerate the notebook: make notebooks)")
                continue
            css = px * fig["shown"] / fig["natural"]
            measured.append(css)
            if css < MIN_FIGURE_TEXT_CSS_PX:
                problems.append(f"{rel}: {name}: smallest text {css:.1f} CSS px "
                                f"({px:.1f} px in a {fig['natural']} px PNG shown {fig['shown']:.0f} px wide)")
    assert measured or problems, "no figure on any page"
    _fail_if(problems, f"figures with text under {MIN_FIGURE_TEXT_CSS_PX} CSS px at {PHONE_WIDTH} px")
    print(f"{len(measured)} figures: smallest text at {PHONE_WIDTH} px is {min(measured):.1f} CSS px")


DARK_JS = r"""
const done = arguments[arguments.length - 1];
const report = () => {
  const imgs = Array.from(document.querySelectorAll('.cell_output img'));
  const cs = e => getComputedStyle(e);
  done({theme: document.documentElement.dataset.theme,
        page_bg: cs(document.body).backgroundColor,
        figures: imgs.map(i => ({src: (i.currentSrc || i.src).split('/').pop(),
                                 bg: cs(i).backgroundColor, filter: cs(i).filter,
                                 opacity: cs(i).opacity}))});
};
const mj = (window.MathJax && MathJax.startup && MathJax.startup.promise) || Promise.resolve();
mj.then(report, report);
"""


def _luminance(css_rgb):
    r, g, b = (int(v) for v in re.findall(r"\d+", css_rgb)[:3])
    return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255


def test_dark_mode_keeps_figures_on_white(site):
    """In the theme's dark mode every figure sits on a white background, undimmed."""
    br, problems, n = site.browser, [], 0
    chapters = [rel for rel, r in site.pages.items() if r["figures"]]
    assert chapters
    try:
        br.get(site.base + chapters[0])
        br.script("localStorage.setItem('mode', 'dark'); localStorage.setItem('theme', 'dark');")
        for rel in chapters:
            br.get(site.base + rel)
            r = br.async_script(DARK_JS)
            assert r["theme"] == "dark", r["theme"]
            assert _luminance(r["page_bg"]) < 0.3, f"{rel}: dark mode page background {r['page_bg']}"
            for f in r["figures"]:
                n += 1
                if _luminance(f["bg"]) < 0.95 or f["filter"] != "none" or f["opacity"] != "1":
                    problems.append(f"{rel}: {f['src']}: background {f['bg']}, filter {f['filter']}, "
                                    f"opacity {f['opacity']}")
        br.screenshot(SHOTS / f"{_shot_name(chapters[0])}_dark.png")
    finally:
        br.script("localStorage.removeItem('mode'); localStorage.removeItem('theme');")
    assert n > 0
    _fail_if(problems, "figures not on white in dark mode")


def test_screenshots(site):
    shots = sorted(SHOTS.glob("*.png"))
    for width in WIDTHS:
        for rel in site.by_width[width]:
            p = SHOTS / f"{_shot_name(rel)}_{width}.png"
            assert p.is_file() and p.stat().st_size > 5_000, p
    for rel in FULL_PAGE_AT_PHONE:
        if rel in site.pages:
            assert (SHOTS / f"{_shot_name(rel)}_{PHONE_WIDTH}_full.png").is_file(), rel
    assert len(shots) >= 2 * len(site.pages)
