""""Live code" in a real browser, against the servers `make live` starts (tools/live.py).

Both servers run as a fixture on free ports of 127.0.0.1 over the built site (``_build/html`` or
``$LINBOOK_SITE``). In headless Chromium the test opens the first chapter, clicks "Live code",
waits for the kernel, clicks "Run all" (restart and run every cell) and checks that

* the chapter's first printed output is computed live (a new output box, the stored one hidden)
  and has the same text as the stored one;
* a cell edited in its editor and run again shows the new output.

Without ``make live`` (the site served as plain files) the control says how to start it.
Skipped without Chromium (a failure with ``CI=true``), like the site test.
"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from browserlib import HTML, ROOT, SHOTS, Browser, SiteServer, require_chromium  # noqa: E402

sys.path.insert(0, str(ROOT / "tools"))
import live  # noqa: E402

CHAPTER = "chapters/01_estimation.html"
# Console errors that say nothing about the page: the missing favicon, and thebe's "Comm not found
# for comm id ...", logged when a comm message from the kernel reaches the page before (or after)
# thebe holds that comm -- most likely its widget manager's comm, which a kernel without ipywidgets
# closes at once. It appeared in one of two fresh-clone runs of session 8, with every output this
# test reads right; the chapter opens no comm of its own.
BENIGN = re.compile(r"favicon\.ico|Comm not found for comm id [0-9a-f-]+")
pytestmark = pytest.mark.site

# The stored and the live text of the first cell whose stored output is printed text.
FIRST_PRINTED_JS = r"""
for (const cell of document.querySelectorAll('article.bd-article div.cell')) {
  const stored = cell.querySelector('.cell_output .output.text_plain pre, .cell_output .output.stream pre');
  if (!stored) continue;
  const live = cell.querySelector('.linbook-live-output');
  const liveText = live ? Array.from(live.querySelectorAll('.jp-OutputArea-output'))
      .map(o => o.textContent).join('') : null;
  return {stored: stored.textContent, live: liveText,
          stored_hidden: cell.querySelector('.cell_output').hidden,
          source: cell.querySelector('pre[data-executable], .thebe-cell .CodeMirror') ? 'live' : 'static'};
}
return null;
"""


def _wait(br, js, timeout, what):
    """Poll ``js`` (a function body returning a truthy value when done) for up to ``timeout`` s."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        value = br.script(js)
        if value:
            return value
        time.sleep(0.25)
    state = br.script("const b = document.querySelector('.linbook-live');"
                      "return b ? b.getAttribute('data-state') + ': ' + b.textContent : 'no control';")
    br.screenshot(SHOTS / "live_timeout.png")
    pytest.fail(f"timed out after {timeout} s waiting for {what}; live control: {state}", pytrace=False)


def _state(br):
    return br.script("return document.querySelector('.linbook-live').getAttribute('data-state');")


@pytest.fixture(scope="module")
def browser():
    chromium, driver = require_chromium()
    if not (HTML / "index.html").exists():
        pytest.fail(f"no built site at {HTML}: run `make book` first", pytrace=False)
    SHOTS.mkdir(exist_ok=True)
    with Browser(chromium, driver, width=1280) as br:
        yield br


@pytest.fixture(scope="module")
def live_site():
    with live.LiveServers(HTML) as servers:
        yield servers


def test_static_site_says_how_to_start_live_code(browser):
    with SiteServer(HTML) as server:
        browser.get(server.url + CHAPTER)
        browser.script("document.querySelector('.linbook-live-button').click();")
        _wait(browser, "return document.querySelector('.linbook-live').getAttribute('data-state')"
                       " === 'unavailable';", 15, "the 'how to start' message")
        text = browser.script("return document.querySelector('.linbook-live-status').textContent;")
        assert "make live" in text, text
        # The page is unchanged: no editor, the stored outputs shown.
        assert browser.script("return document.querySelectorAll('.thebe-cell').length;") == 0
        first = browser.script(FIRST_PRINTED_JS)
        assert first["source"] == "static" and not first["stored_hidden"], first


def test_run_all_then_edit_a_cell(browser, live_site):
    br = browser
    br.logs()  # drain what earlier tests in this browser logged (a site without make live answers 404)
    br.get(live_site.url + CHAPTER)
    assert br.script("return document.querySelector('.linbook-live-button').textContent;") == "Live code"
    br.script("document.querySelector('.linbook-live-button').click();")
    _wait(br, "return ['connected', 'failed', 'unavailable'].includes("
              "document.querySelector('.linbook-live').getAttribute('data-state'));",
          300, "the kernel to connect")
    assert _state(br) == "connected", (br.script("return document.querySelector('.linbook-live').textContent;")
                                       + "\nJupyter server log:\n" + live_site.jupyter.log_tail())
    n_cells = br.script("return document.querySelectorAll('.thebe-cell').length;")
    n_run = br.script("return document.querySelectorAll('.thebe-cell .thebe-run-button').length;")
    assert n_cells > 5 and n_run == n_cells, (n_cells, n_run)

    br.script("document.querySelector('.linbook-live-runall').click();")
    _wait(br, "return ['done', 'error', 'failed'].includes("
              "document.querySelector('.linbook-live').getAttribute('data-state'));",
          600, "Run all to finish")
    status = br.script("return document.querySelector('.linbook-live-status').textContent;")
    br.screenshot(SHOTS / "live_after_run_all.png")
    assert _state(br) == "done", status + "\nJupyter server log:\n" + live_site.jupyter.log_tail()
    assert status == f"Ran all {n_cells} cells.", status

    first = br.script(FIRST_PRINTED_JS)
    assert first is not None and first["source"] == "live", first
    assert first["stored_hidden"], "the stored output is still shown beside the live one"
    assert first["live"] is not None and first["live"].strip(), first
    assert first["live"].strip() == first["stored"].strip(), first

    # Edit the first code cell in its editor (as a reader types) and run it with its button.
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    # the second visible editor (hide-input cells keep theirs folded)
    index = br.script("const c = Array.from(document.querySelectorAll('.thebe-cell'));"
                      "return c.indexOf(c.filter(e => !e.closest('details:not([open])'))[1]);")
    assert index >= 1
    cell = br.driver.find_elements(By.CSS_SELECTOR, ".thebe-cell")[index]
    br.script("arguments[0].scrollIntoView({block: 'center'});", cell)
    br.script("arguments[0].querySelector('.CodeMirror').CodeMirror.focus();", cell)
    typing = br.driver.switch_to.active_element  # the editor's input
    typing.send_keys(Keys.CONTROL, "a")
    typing.send_keys("print('live', 6 * 7)")
    source = br.script("return arguments[0].querySelector('.CodeMirror').CodeMirror.getValue();", cell)
    assert source == "print('live', 6 * 7)", source
    cell.find_element(By.CSS_SELECTOR, ".thebe-run-button").click()
    out = _wait(br, "const o = arguments[0].closest('div.cell').querySelector('.linbook-live-output');"
                    "return o && o.textContent.includes('live 42') ? o.textContent : null;"
                    .replace("arguments[0]", f"document.querySelectorAll('.thebe-cell')[{index}]"),
                60, "the edited cell's output")
    assert out.strip() == "live 42", out

    # A sympy result (text/latex) is typeset by the page's own MathJax, not one from a CDN.
    br.script("arguments[0].querySelector('.CodeMirror').CodeMirror.focus();", cell)
    typing = br.driver.switch_to.active_element
    typing.send_keys(Keys.CONTROL, "a")
    typing.send_keys("sp.Rational(1, 2) * sp.Symbol('x') ** 2")
    cell.find_element(By.CSS_SELECTOR, ".thebe-run-button").click()
    _wait(br, f"const o = document.querySelectorAll('.thebe-cell')[{index}].closest('div.cell')"
              ".querySelector('.linbook-live-output');"
              "return o && o.querySelector('mjx-container');", 60, "a typeset LaTeX output")
    br.screenshot(SHOTS / "live_edited.png")
    errors = [m for m in br.logs() if m.get("level") == "SEVERE" and not BENIGN.search(m.get("message", ""))]
    assert not errors, errors
    requested = br.script("return performance.getEntriesByType('resource').map(e => e.name);")
    foreign = [u for u in requested if not u.startswith(("http://127.0.0.1:", "ws://127.0.0.1:", "data:"))]
    assert not foreign, f"requests that left the machine: {foreign}"
