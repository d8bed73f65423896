"""Helpers for the browser test: a static file server and a selenium-driven headless Chromium.

Chromium and chromedriver come from Debian (``apt-get install chromium chromium-driver``);
selenium (in the lock) drives them, given the driver's path so that it never downloads one.
The site is served by ``http.server`` in a thread on 127.0.0.1 with a free port.

Environment overrides: ``LINBOOK_CHROMIUM`` (browser binary), ``LINBOOK_CHROMEDRIVER``.
"""

from __future__ import annotations

import base64
import functools
import http.server
import os
import shutil
import tempfile
import threading
from pathlib import Path

CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
    "--disable-dev-shm-usage", "--hide-scrollbars", "--force-color-profile=srgb",
]


def find_chromium():
    """Return (browser, chromedriver) paths, or None for each one not found."""
    browser = os.environ.get("LINBOOK_CHROMIUM")
    if not browser:
        # Debian's /usr/bin/chromium is a shell wrapper; prefer the real binary behind it.
        for cand in ("/usr/lib/chromium/chromium", "chromium", "chromium-browser", "google-chrome"):
            path = cand if os.path.isabs(cand) else shutil.which(cand)
            if path and os.access(path, os.X_OK):
                browser = path
                break
    driver = os.environ.get("LINBOOK_CHROMEDRIVER") or shutil.which("chromedriver")
    if not driver and os.access("/usr/lib/chromium/chromedriver", os.X_OK):
        driver = "/usr/lib/chromium/chromedriver"
    ok = lambda p: p if p and os.path.isfile(p) and os.access(p, os.X_OK) else None  # noqa: E731
    return ok(browser), ok(driver)


ROOT = Path(__file__).resolve().parents[2]
#: The site the browser tests check: ``_build/html``, or ``$LINBOOK_SITE``.
HTML = Path(os.environ.get("LINBOOK_SITE", ROOT / "_build" / "html")).resolve()
#: Screenshots of the browser tests (gitignored).
SHOTS = Path(__file__).resolve().parent / "screenshots"


def require_chromium():
    """(browser, chromedriver) paths; skip the test without them (fail it when ``CI=true``)."""
    import pytest

    browser, driver = find_chromium()
    if browser and driver:
        return browser, driver
    missing = " and ".join(n for n, p in (("chromium", browser), ("chromedriver", driver)) if not p)
    msg = (f"Chromium not found ({missing} missing): the browser test is SKIPPED. "
           "Install with: apt-get install chromium chromium-driver")
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail("CI=true but " + msg.replace("SKIPPED", "required in CI"), pytrace=False)
    pytest.skip(msg)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep pytest output clean
        pass


class SiteServer:
    """Serve a directory on http://127.0.0.1:<free port>/ from a daemon thread."""

    def __init__(self, root):
        handler = functools.partial(_QuietHandler, directory=str(root))
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


class Browser:
    """Headless Chromium driven by selenium through Debian's chromedriver (no downloads)."""

    def __init__(self, browser, driver, width=1280, height=900):
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        self.tmp = tempfile.mkdtemp(prefix="linbook-chromium-")
        opts = webdriver.ChromeOptions()
        opts.binary_location = browser
        for arg in CHROMIUM_ARGS + [f"--user-data-dir={self.tmp}/profile", f"--window-size={width},{height}"]:
            opts.add_argument(arg)
        opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        opts.page_load_strategy = "normal"
        try:
            # An explicit driver path: selenium-manager would otherwise try to download one.
            self.driver = webdriver.Chrome(service=Service(executable_path=driver), options=opts)
        except Exception:
            shutil.rmtree(self.tmp, ignore_errors=True)
            raise
        # A chapter page loads in 1-3 s on a quiet machine but took over 30 s at load 18 (two
        # make test runs side by side): a timeout here says nothing about the page, so allow minutes.
        self.driver.set_page_load_timeout(180)
        self.driver.set_script_timeout(120)

    def get(self, url):
        self.driver.get(url)

    def script(self, js, *args):
        return self.driver.execute_script(js, *args)

    def async_script(self, js, *args):
        """Run ``js`` with the callback as the last argument (``arguments[arguments.length-1]``)."""
        return self.driver.execute_async_script(js, *args)

    def logs(self):
        """Browser console entries since the last call ({level, message, source, timestamp})."""
        return self.driver.get_log("browser")

    def cdp(self, cmd, params=None):
        return self.driver.execute_cdp_cmd(cmd, params or {})

    def set_viewport(self, width, height, mobile=False, scale=1):
        """Emulate a device viewport (CSS pixels); ``mobile`` honours the viewport meta tag."""
        self.cdp("Emulation.setDeviceMetricsOverride",
                 {"width": width, "height": height, "deviceScaleFactor": scale, "mobile": mobile})

    def clear_viewport(self):
        self.cdp("Emulation.clearDeviceMetricsOverride", {})

    def screenshot(self, path, full=False, max_height=8000):
        """PNG of the viewport, or of the page from the top (``full``, at most ``max_height`` px)."""
        if not full:
            Path(path).write_bytes(self.driver.get_screenshot_as_png())
            return path
        size = self.cdp("Page.getLayoutMetrics")["cssContentSize"]
        clip = {"x": 0, "y": 0, "width": size["width"], "height": min(size["height"], max_height), "scale": 1}
        data = self.cdp("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True, "clip": clip})
        Path(path).write_bytes(base64.b64decode(data["data"]))
        return path

    def close(self):
        if getattr(self, "driver", None) is not None:
            try:
                self.driver.quit()
            finally:
                self.driver = None
        shutil.rmtree(self.tmp, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


if __name__ == "__main__":
    # `make test` prints this line so a skipped browser test is visible, not just an "s".
    _b, _d = find_chromium()
    if _b and _d:
        print(f"browser test: headless Chromium found ({_b}, {_d}); tests/browser will run")
    else:
        print("browser test SKIPPED: Chromium not found "
              "(apt-get install chromium chromium-driver; in CI, CI=true makes this a failure)")
