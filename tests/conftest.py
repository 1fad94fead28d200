"""Shared fixtures: a local HTTP server on a free port, and running Scrapy as a subprocess."""
from __future__ import annotations

import os
import subprocess
import sys
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Tuple

import pytest

ROOT = Path(__file__).resolve().parent.parent
DEMO_SITE = ROOT / "demo" / "site"

# path -> (status, headers, body): answers that a directory of files cannot give
Route = Tuple[int, Dict[str, str], bytes]


class _Handler(SimpleHTTPRequestHandler):
    routes: Dict[str, Route] = {}

    def do_GET(self):  # noqa: N802 (http.server's naming)
        route = self.routes.get(self.path.split("?", 1)[0])
        if route is None:
            return super().do_GET()
        status, headers, body = route
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):  # keep test output clean
        pass


class LocalServer:
    """Serve a directory (plus fixed routes) on 127.0.0.1 from a background thread."""

    def __init__(self, directory: Path, routes: Optional[Dict[str, Route]] = None):
        handler = type("Handler", (_Handler,), {"routes": dict(routes or {})})
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(handler, directory=str(directory)))
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, name="test-http", daemon=True)

    def __enter__(self) -> "LocalServer":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join(timeout=10)


@pytest.fixture
def serve():
    """serve(directory, routes=None) -> base URL; every server stops when the test ends."""
    servers: List[LocalServer] = []

    def start(directory: Path, routes: Optional[Dict[str, Route]] = None) -> str:
        server = LocalServer(directory, routes).__enter__()
        servers.append(server)
        return server.url

    yield start
    for server in servers:
        server.__exit__(None, None, None)


@pytest.fixture(scope="session")
def demo_url() -> Iterator[str]:
    """The bundled demo site, served once for the whole session."""
    with LocalServer(DEMO_SITE) as server:
        yield server.url


def scrapy_env() -> Dict[str, str]:
    """The test process's environment, with the repository importable from any working directory."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env.pop("SCRAPY_SETTINGS_MODULE", None)
    env.setdefault("OMP_NUM_THREADS", "1")  # several agents and CI share few cores
    return env


def run_scrapy(args: List[str], cwd: Path = ROOT, timeout: int = 300) -> subprocess.CompletedProcess:
    """`scrapy ARGS` in a subprocess of the same interpreter; the caller checks returncode and stderr."""
    proc = subprocess.run([sys.executable, "-m", "scrapy", *args], cwd=str(cwd), env=scrapy_env(),
                          capture_output=True, text=True, timeout=timeout)
    return proc


def cli(capsys, *argv):
    """(exit status, stderr) of `edrew ARGV`; a usage error argparse finds exits as SystemExit."""
    from edrew_scrapy.cli import main

    try:
        status = main(list(argv))
    except SystemExit as exc:
        status = exc.code
    return status, capsys.readouterr().err
