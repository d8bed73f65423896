"""Minimal helpers for the browser test: a static file server and a W3C WebDriver client.

No third-party packages: chromedriver (Debian package ``chromium-driver``) is driven through
its W3C WebDriver HTTP API with ``urllib`` (plain JSON requests), and the site is served by
``http.server`` in a thread on 127.0.0.1 with a free port.

Environment overrides: ``LINBOOK_CHROMIUM`` (browser binary), ``LINBOOK_CHROMEDRIVER``.
"""

from __future__ import annotations

import base64
import functools
import http.server
import json
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
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


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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


class WebDriverError(RuntimeError):
    pass


class Browser:
    """Headless Chromium driven by chromedriver over the W3C WebDriver protocol."""

    def __init__(self, browser, driver, width=1280, height=900):
        self.tmp = tempfile.mkdtemp(prefix="linbook-chromium-")
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen(
            [driver, f"--port={self.port}", "--allowed-ips=127.0.0.1"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.session = None
        try:
            self._wait_ready()
            args = CHROMIUM_ARGS + [f"--user-data-dir={self.tmp}/profile",
                                    f"--window-size={width},{height}"]
            caps = {"capabilities": {"alwaysMatch": {
                "browserName": "chrome",
                "pageLoadStrategy": "normal",
                "goog:chromeOptions": {"binary": browser, "args": args},
                "goog:loggingPrefs": {"browser": "ALL"},
                "timeouts": {"pageLoad": 30000, "script": 30000, "implicit": 0},
            }}}
            value = self._call("POST", "/session", caps)
            self.session = value["sessionId"]
        except Exception:
            self.close()
            raise

    # -- plumbing -----------------------------------------------------------------------
    def _wait_ready(self, timeout=20):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise WebDriverError(f"chromedriver exited with code {self.proc.returncode}")
            try:
                if self._call("GET", "/status", timeout=2).get("ready"):
                    return
            except (OSError, WebDriverError):
                pass
            time.sleep(0.1)
        raise WebDriverError("chromedriver did not start")

    def _call(self, method, path, body=None, timeout=60):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                payload = json.loads(r.read() or b"{}")
        except urllib.error.HTTPError as e:
            try:
                payload = json.loads(e.read())
            except ValueError:
                raise WebDriverError(f"{method} {path}: HTTP {e.code}") from None
            v = payload.get("value", {})
            raise WebDriverError(f"{method} {path}: {v.get('error')}: {v.get('message', '')[:500]}") from None
        return payload.get("value", payload)

    def _s(self, method, path, body=None, timeout=60):
        return self._call(method, f"/session/{self.session}{path}", body, timeout)

    # -- API --------------------------------------------------------------------------------
    def get(self, url):
        self._s("POST", "/url", {"url": url})

    def script(self, js, *args):
        return self._s("POST", "/execute/sync", {"script": js, "args": list(args)})

    def async_script(self, js, *args):
        """Run ``js`` with the callback as the last argument (``arguments[arguments.length-1]``)."""
        return self._s("POST", "/execute/async", {"script": js, "args": list(args)})

    def logs(self):
        """Browser console entries since the last call ({level, message, source, timestamp})."""
        try:
            return self._s("POST", "/se/log", {"type": "browser"})
        except WebDriverError:
            return self._s("POST", "/log", {"type": "browser"})

    def cdp(self, cmd, params=None):
        return self._s("POST", "/goog/cdp/execute", {"cmd": cmd, "params": params or {}})

    def set_viewport(self, width, height, mobile=False, scale=1):
        """Emulate a device viewport (CSS pixels); ``mobile`` honours the viewport meta tag."""
        self.cdp("Emulation.setDeviceMetricsOverride",
                 {"width": width, "height": height, "deviceScaleFactor": scale, "mobile": mobile})

    def clear_viewport(self):
        self.cdp("Emulation.clearDeviceMetricsOverride")

    def screenshot(self, path):
        png = base64.b64decode(self._s("GET", "/screenshot"))
        Path(path).write_bytes(png)
        return path

    def close(self):
        if self.session:
            try:
                self._s("DELETE", "", timeout=15)
            except Exception:
                pass
            self.session = None
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
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
