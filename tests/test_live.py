"""tools/live.py (`make live`): who may read the kernel's token and use the kernel.

The servers run on a small stand-in site (the browser test, tests/browser/test_live_code.py,
uses the built book). Checked here: the token is given only to this site's own pages on this
machine, never on the command line; the Jupyter server listens on loopback only and refuses
other web origins; Ctrl-C stops the site and the Jupyter server.
"""

from __future__ import annotations

import http.client
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("jupyter_server", reason="make live needs jupyter_server (requirements.lock)")
psutil = pytest.importorskip("psutil")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import live  # noqa: E402


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    html = tmp_path_factory.mktemp("html")
    (html / "index.html").write_text("<!doctype html><title>stand-in</title>")
    return html


class Running:
    """`tools/live.py` as a reader runs it (one subprocess for the whole module, one start)."""

    def __init__(self, site):
        self.proc = subprocess.Popen(
            [sys.executable, str(ROOT / "tools" / "live.py"), "--site", str(site)],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
        self.lines, self.url = [], None
        deadline = time.monotonic() + live.START_TIMEOUT
        while self.url is None and time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            self.lines.append(line)
            if line.strip().startswith("http://127.0.0.1:"):
                self.url = line.strip()
        assert self.url and self.url.endswith("/index.html"), "".join(self.lines)
        self.port = int(self.url.split(":")[2].split("/")[0])
        status, _, body = _get(self.port, "/live-config.json", {"Host": f"127.0.0.1:{self.port}"})
        assert status == 200, body
        self.config = json.loads(body)
        self.token = self.config["token"]
        self.site_origin = f"http://127.0.0.1:{self.port}"
        self.kernel_port = int(self.config["baseUrl"].rstrip("/").rsplit(":", 1)[1])
        self.jupyter = [p for p in psutil.Process(self.proc.pid).children(recursive=True)
                        if "jupyter_server" in " ".join(p.cmdline())]


@pytest.fixture(scope="module")
def servers(site):
    running = Running(site)
    try:
        yield running
    finally:
        if running.proc.poll() is None:
            running.proc.kill()
            running.proc.wait()


def _get(port, path, headers=None, method="GET"):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request(method, path, headers=headers or {})
        r = conn.getresponse()
        return r.status, dict(r.getheaders()), r.read()
    finally:
        conn.close()


def test_config_goes_to_the_sites_own_pages(servers):
    port = servers.port
    for name in ("127.0.0.1", "localhost"):
        status, headers, body = _get(port, "/live-config.json", {"Host": f"{name}:{port}"})
        assert status == 200
        assert json.loads(body) == servers.config
    assert len(servers.token) >= 40
    assert servers.config["baseUrl"] == f"http://127.0.0.1:{servers.kernel_port}/"
    assert headers.get("Cache-Control") == "no-store"
    assert "Access-Control-Allow-Origin" not in headers


@pytest.mark.parametrize("host", ["evil.example:{port}", "127.0.0.1:1", "192.168.1.5:{port}", ""])
def test_config_refused_under_another_name(servers, host):
    # A page of another site whose name resolves to 127.0.0.1 (DNS rebinding) sends its own Host.
    port = servers.port
    status, _, body = _get(port, "/live-config.json", {"Host": host.format(port=port)})
    assert status == 403
    assert servers.token.encode() not in body


def test_site_files_still_served(servers):
    port = servers.port
    status, _, body = _get(port, "/index.html", {"Host": f"127.0.0.1:{port}"})
    assert status == 200 and b"stand-in" in body


def test_jupyter_listens_on_loopback_only_and_token_not_on_command_line(servers):
    assert len(servers.jupyter) == 1, servers.jupyter
    proc = servers.jupyter[0]
    listening = [c.laddr for c in proc.net_connections(kind="inet") if c.status == psutil.CONN_LISTEN]
    assert listening and all(addr.ip == "127.0.0.1" for addr in listening), listening
    assert not any(servers.token in arg for arg in proc.cmdline())


def test_jupyter_needs_the_token_and_shares_only_with_the_site(servers):
    # The token is the key (with it, Jupyter skips its origin check); CORS lets a browser read
    # the answers, and send the token in a preflighted request, from the site's origin alone.
    port, site = servers.kernel_port, servers.site_origin
    host = {"Host": f"127.0.0.1:{port}"}
    auth = {**host, "Authorization": f"token {servers.token}"}
    assert _get(port, "/api/kernels", host)[0] == 403
    assert _get(port, "/api/kernels", {**host, "Authorization": "token wrong"})[0] == 403
    status, headers, _ = _get(port, "/api/kernels", {**auth, "Origin": site})
    assert status == 200 and headers.get("Access-Control-Allow-Origin") == site
    # (Jupyter names the one allowed origin whoever asks; a browser then blocks other pages.)
    _, headers, _ = _get(port, "/api/kernels", {**auth, "Origin": "http://evil.example"})
    assert headers.get("Access-Control-Allow-Origin") in (None, site)
    preflight = {**host, "Access-Control-Request-Method": "POST",
                 "Access-Control-Request-Headers": "authorization"}
    _, headers, _ = _get(port, "/api/kernels", {**preflight, "Origin": site}, method="OPTIONS")
    assert headers.get("Access-Control-Allow-Origin") == site
    # (jupyter_server 2.21 answers any origin's preflight that asks to send a token; the request
    # itself still needs the token, and its answer names only the site, as checked above.)


def test_ctrl_c_stops_live_started_with_sigint_ignored(site):
    """A parent that ignores SIGINT (nohup, some CI runners, a test worker after a library set
    SIG_IGN) passes that on to its children, and Python then never raises KeyboardInterrupt:
    `make live` would not stop on Ctrl-C (seen once as a 60 s hang in `make test`)."""
    proc = subprocess.Popen([sys.executable, str(ROOT / "tools" / "live.py"), "--site", str(site)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    try:
        deadline, line = time.monotonic() + live.START_TIMEOUT, "started"
        while line and "http://127.0.0.1:" not in line and time.monotonic() < deadline:
            line = proc.stdout.readline()          # "" at EOF: live.py exited early
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=60)
        assert proc.returncode == 0 and "Stopped" in out, out
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_ctrl_c_stops_both_servers(servers):
    # Last in this file: it stops the module's servers.
    kernel_side = psutil.Process(servers.proc.pid).children(recursive=True)
    servers.proc.send_signal(signal.SIGINT)
    out, _ = servers.proc.communicate(timeout=60)
    assert servers.proc.returncode == 0, "".join(servers.lines) + out
    assert "Stopped" in out
    psutil.wait_procs(kernel_side, timeout=20)
    assert not [p for p in kernel_side if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
    for port in (servers.port, servers.kernel_port):
        with pytest.raises(OSError):
            _get(port, "/index.html")
