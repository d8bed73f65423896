"""`make live`: the built site, with "Live code" connected to a Jupyter kernel on this machine.

Two servers, both bound to 127.0.0.1 on free ports:

* a Jupyter server (jupyter_server + ipykernel from the locked environment) with a random token.
  Browsers may use it only from the site's origin (``allow_origin``: its CORS answers and its
  websocket origin check name that origin alone); the kernels run in ``chapters/`` with the
  environment's Python, as nbval runs the notebooks;
* a static server for ``_build/html`` that also answers ``/live-config.json`` with the kernel's
  URL and token. It answers only a loopback client that addresses it by its own loopback name
  and port (the Host header), so neither another machine nor another web page (whose name a DNS
  rebinding could point at 127.0.0.1) can read the token, and the response carries no CORS
  header. No file of the site holds the token.

The site's "Live code" control (``_ext/static/linbook_live.js``) fetches that config; on a
static host the fetch fails and the control says how to start this. Ctrl-C stops both servers.

Usage: ``make live`` (builds the site first if ``_build/html`` is missing), or
``.venv/bin/python tools/live.py [--site _build/html] [--port N] [--kernel-port N]``.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import ipaddress
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONFIG_PATH = "/live-config.json"
#: How long a cold Jupyter server may take to answer (imports on a loaded 2-core machine).
START_TIMEOUT = 120.0


def free_port():
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class SiteHandler(http.server.SimpleHTTPRequestHandler):
    """Static files of the site, plus ``/live-config.json`` for this machine's own pages.

    ``live_config`` (set per server by :class:`SiteServer`) is the JSON body; ``own_hosts`` the
    Host header values under which this server is the page's origin.
    """

    live_config: bytes = b""
    own_hosts: frozenset = frozenset()

    def log_message(self, *args):  # a reader's terminal shows the URL, not every request
        pass

    def _config_allowed(self):
        try:
            loopback = ipaddress.ip_address(self.client_address[0]).is_loopback
        except ValueError:
            loopback = False
        return loopback and self.headers.get("Host", "") in self.own_hosts

    def do_GET(self):
        if self.path.split("?", 1)[0] != CONFIG_PATH:
            return super().do_GET()
        if not self._config_allowed():
            self.send_error(403, "the live-code config is given only to pages of this site "
                                 "opened on this machine")
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(self.live_config)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(self.live_config)

    def do_HEAD(self):
        if self.path.split("?", 1)[0] == CONFIG_PATH:
            self.send_error(405)
            return
        return super().do_HEAD()


class SiteServer:
    """Serve ``root`` on http://127.0.0.1:<port>/ from a daemon thread, with the live config."""

    def __init__(self, root, port, live_config):
        handler = type("BoundSiteHandler", (SiteHandler,), {
            "live_config": json.dumps(live_config).encode(),
            "own_hosts": frozenset({f"127.0.0.1:{port}", f"localhost:{port}"}),
        })
        self.httpd = http.server.ThreadingHTTPServer(
            ("127.0.0.1", port), functools.partial(handler, directory=str(root)))
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def start(self):
        self.thread.start()
        return self

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


class JupyterServer:
    """A jupyter_server subprocess on 127.0.0.1:<port> that only ``origin`` may use from a browser.

    The token reaches it through the environment (``JUPYTER_TOKEN``), not the command line that
    other users of the machine can read; its runtime files (which record the token) go to a
    private temporary directory that is removed on :meth:`stop`.
    """

    def __init__(self, port, token, origin, root_dir=ROOT, python=sys.executable):
        self.port, self.token, self.origin = port, token, origin
        self.url = f"http://127.0.0.1:{port}"
        self.tmp = Path(tempfile.mkdtemp(prefix="linbook-live-"))
        self.log_path = self.tmp / "jupyter.log"
        self.cmd = [
            python, "-m", "jupyter_server",
            "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
            "--ServerApp.open_browser=False", f"--ServerApp.root_dir={root_dir}",
            f"--ServerApp.allow_origin={origin}", "--ServerApp.allow_remote_access=False",
            "--ServerApp.terminals_enabled=False",
            # A kernel left by a closed tab stops after an idle hour.
            "--MappingKernelManager.cull_idle_timeout=3600",
            "--MappingKernelManager.cull_interval=300",
        ]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            # containers often run as root; the server is still this user's own, on loopback
            self.cmd.append("--allow-root")
        self.proc = None

    def start(self, timeout=START_TIMEOUT):
        env = dict(os.environ, JUPYTER_TOKEN=self.token,
                   JUPYTER_RUNTIME_DIR=str(self.tmp / "runtime"),
                   JUPYTER_CONFIG_DIR=str(self.tmp / "config"))
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(self.cmd, env=env, stdin=subprocess.DEVNULL, stdout=self._log,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the Jupyter server exited with code {self.proc.returncode}:\n"
                                   + self.log_tail())
            try:
                req = urllib.request.Request(self.url + "/api/status",
                                             headers={"Authorization": f"token {self.token}"})
                with urllib.request.urlopen(req, timeout=2) as r:
                    if r.status == 200:
                        return self
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            time.sleep(0.25)
        self.stop()
        raise RuntimeError(f"the Jupyter server did not answer within {timeout:.0f} s:\n"
                           + self.log_tail())

    def log_tail(self, lines=30):
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.replace(self.token, "<token>").splitlines()[-lines:])

    def stop(self, timeout=15.0):
        """Stop the server and its kernels (SIGTERM to its process group, then SIGKILL)."""
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
            except ProcessLookupError:
                pass
        if getattr(self, "_log", None) is not None:
            self._log.close()
        shutil.rmtree(self.tmp, ignore_errors=True)


class LiveServers:
    """Both servers, started together and stopped together (a context manager).

    ``url`` is the site's address; ``token`` the kernel's (tests read it from here, a reader's
    page from ``/live-config.json``).
    """

    def __init__(self, site=ROOT / "_build" / "html", port=0, kernel_port=0, root_dir=ROOT):
        self.site = Path(site)
        if not (self.site / "index.html").is_file():
            raise FileNotFoundError(f"no built site at {self.site}: run `make book` first")
        port = port or free_port()
        kernel_port = kernel_port or free_port()
        self.token = secrets.token_urlsafe(32)
        origin = f"http://127.0.0.1:{port}"
        self.jupyter = JupyterServer(kernel_port, self.token, origin, root_dir=root_dir)
        self.site_server = SiteServer(self.site, port, {
            "baseUrl": self.jupyter.url + "/", "wsUrl": f"ws://127.0.0.1:{kernel_port}/",
            "token": self.token, "kernelName": "python3"})
        self.url = self.site_server.url

    def __enter__(self):
        self.jupyter.start()
        try:
            self.site_server.start()
        except BaseException:
            self.jupyter.stop()
            raise
        return self

    def __exit__(self, *exc):
        try:
            self.site_server.stop()
        finally:
            self.jupyter.stop()


def _stop_on_sigterm(signum, frame):
    # SIGTERM (e.g. from a process manager) stops both servers, as Ctrl-C does.
    raise KeyboardInterrupt


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--site", default=str(ROOT / "_build" / "html"), help="the built site")
    ap.add_argument("--port", type=int, default=0, help="port of the site (default: a free one)")
    ap.add_argument("--kernel-port", type=int, default=0,
                    help="port of the Jupyter server (default: a free one)")
    args = ap.parse_args(argv)
    try:
        import jupyter_server  # noqa: F401
    except ImportError:
        sys.exit("make live needs jupyter_server in the environment: "
                 "pip install -r requirements.lock (make env does)")
    # Ctrl-C stops both servers even when the parent started us with SIGINT ignored (a pytest-xdist
    # worker, nohup, a CI runner): Python keeps an inherited SIG_IGN instead of raising KeyboardInterrupt.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _stop_on_sigterm)
    print("Starting a Jupyter server for the book's code (a few seconds)...", flush=True)
    try:
        with LiveServers(args.site, args.port, args.kernel_port) as live:
            print(f"\nLive code is ready. Open:\n\n    {live.url}index.html\n\n"
                  "On a chapter page, click \"Live code\". Press Ctrl-C here to stop.", flush=True)
            while live.jupyter.proc.poll() is None:
                time.sleep(0.5)
            print("the Jupyter server stopped:\n" + live.jupyter.log_tail(), file=sys.stderr)
            return 1
    except KeyboardInterrupt:
        print("\nStopped the site and the Jupyter server.")
        return 0
    except (FileNotFoundError, RuntimeError) as err:
        print(f"make live: {err}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
