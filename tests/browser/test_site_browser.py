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

and the search page finds a term, and a phone-width (390 px) viewport has no horizontal
overflow. Screenshots go to ``tests/browser/screenshots/`` (gitignored).

Run:  ``make browser``  (or ``.venv/bin/python -m pytest tests/browser``; with
``LINBOOK_SITE=/path/to/html`` to check another build). Without Chromium the test is
skipped with a plain message, except in CI (``CI=true``) where that is a failure.
Install: ``apt-get install chromium chromium-driver``.
"""

from __future__ import annotations

import os
import re
import sys
import time
import urllib.parse
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from browserlib import Browser, SiteServer, find_chromium  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
HTML = Path(os.environ.get("LINBOOK_SITE", ROOT / "_build" / "html")).resolve()
SHOTS = Path(__file__).resolve().parent / "screenshots"
PHONE_WIDTH = 390
SEARCH_TERM = "Hessian"
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
Promise.all([mj, settle()]).then(report, e => { window.__mjx_failed = String(e); report(); });
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


def _require_chromium():
    browser, driver = find_chromium()
    if browser and driver:
        return browser, driver
    missing = " and ".join(n for n, p in (("chromium", browser), ("chromedriver", driver)) if not p)
    msg = (f"Chromium not found ({missing} missing): the browser test is SKIPPED. "
           "Install with: apt-get install chromium chromium-driver")
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail("CI=true but " + msg.replace("SKIPPED", "required in CI"), pytrace=False)
    pytest.skip(msg)


class Crawl:
    """Every page loaded once; what each page reported, and its console messages."""

    def __init__(self, browser, base):
        self.browser, self.base = browser, base
        self.pages, self.console = {}, {}

    def visit(self, rel, query=""):
        br = self.browser
        br.logs()  # drop messages of the previous page
        br.get(self.base + rel + query)
        report = br.async_script(PAGE_REPORT_JS)
        # Late console messages (e.g. from async scripts) arrive after load: give them a moment.
        time.sleep(0.05)
        msgs = [m for m in br.logs() if m.get("level") == "SEVERE"
                and not any(p.search(m.get("message", "")) for p in IGNORED_CONSOLE)]
        return report, msgs


@pytest.fixture(scope="module")
def site():
    browser, driver = _require_chromium()
    if not (HTML / "index.html").exists():
        pytest.fail(f"no built site at {HTML}: run `make book` first (make test builds it)", pytrace=False)
    SHOTS.mkdir(exist_ok=True)
    with SiteServer(HTML) as server, Browser(browser, driver) as br:
        crawl = Crawl(br, server.url)
        for rel in _pages():
            crawl.pages[rel], crawl.console[rel] = crawl.visit(rel)
        crawl.server = server
        yield crawl


def _fail_if(problems, what):
    if problems:
        pytest.fail(f"{len(problems)} {what}:\n  " + "\n  ".join(problems), pytrace=False)


def test_every_page_visited(site):
    assert len(site.pages) >= 15, sorted(site.pages)
    assert "chapters/intro.html" in site.pages


def test_math_typeset_by_mathjax(site):
    problems, pages_with_math = [], 0
    for rel, r in site.pages.items():
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
    problems = [f"{rel}: [{m.get('source')}] {m.get('message', '')[:300]}"
                for rel, msgs in site.console.items() for m in msgs]
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


@pytest.mark.parametrize("rel", ["chapters/intro.html", "chapters/notation.html",
                                 "chapters/backmatter/errata.html", "chapters/backmatter/index_map.html",
                                 "chapters/01_estimation.html"])
def test_phone_viewport_has_no_horizontal_overflow(site, rel):
    if rel not in site.pages:
        pytest.skip(f"{rel} not in this build")
    br = site.browser
    br.set_viewport(PHONE_WIDTH, 844, mobile=True)
    try:
        br.get(site.base + rel)
        r = br.async_script(PAGE_REPORT_JS)
        if rel == "chapters/intro.html":
            br.screenshot(SHOTS / "phone_intro.png")
        # Which elements stick out (to make a failure actionable).
        wide = br.script("""
            const w = arguments[0], out = [];
            for (const e of document.querySelectorAll('body *')) {
              const b = e.getBoundingClientRect();
              if (b.right > w + 2 && b.width > 0 && getComputedStyle(e).position !== 'fixed') {
                let p = e.parentElement, clipped = false;
                while (p) { const o = getComputedStyle(p).overflowX;
                  if (o === 'auto' || o === 'scroll' || o === 'hidden') { clipped = true; break; } p = p.parentElement; }
                if (!clipped) out.push(e.tagName.toLowerCase() + (e.className && typeof e.className === 'string' ? '.' + e.className.split(' ')[0] : '') + ' right=' + Math.round(b.right));
              }
            }
            return out.slice(0, 5);""", PHONE_WIDTH)
    finally:
        br.clear_viewport()
    # Content wider than the phone either widens the document or makes the browser zoom
    # out (innerWidth grows beyond the device width): both are horizontal overflow.
    width = max(r["scroll_width"], r["inner_width"])
    assert width <= PHONE_WIDTH + 2, (
        f"{rel} is {width} px wide on a {PHONE_WIDTH} px phone; sticking out: {wide}")


def test_screenshots(site):
    br = site.browser
    chapters = sorted(p for p in site.pages if re.match(r"chapters/\d\d_", p))
    wanted = {"intro": "chapters/intro.html", "errata": "chapters/backmatter/errata.html",
              "notation": "chapters/notation.html"}
    if chapters:
        wanted["chapter"] = chapters[0]
    shots = []
    for name, rel in wanted.items():
        if rel not in site.pages:
            continue
        br.get(site.base + rel)
        br.async_script(PAGE_REPORT_JS)
        shots.append(br.screenshot(SHOTS / f"{name}.png"))
    assert shots and all(p.stat().st_size > 10_000 for p in shots), shots
