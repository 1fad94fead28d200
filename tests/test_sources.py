"""CLI inputs (edrew_scrapy.sources): every way a fetch or a read can go wrong is one SourceError, and a
URL is fetched whole or not at all. A raw socket server on 127.0.0.1 plays the servers that misbehave."""
from __future__ import annotations

import gzip
import io
import socket
import threading
import time
from typing import Callable, Dict

import pytest

from edrew_scrapy import sources
from edrew_scrapy.sources import SourceError, is_html, read_source

PAGE = b"<!DOCTYPE html><html><body><p>A paragraph long enough to be text.</p></body></html>"


def _reply(status: str, headers: Dict[str, str], body: bytes) -> bytes:
    head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    return f"HTTP/1.1 {status}\r\n{head}Connection: close\r\n\r\n".encode() + body


def _trickle(conn: socket.socket) -> None:
    conn.sendall(_reply("200 OK", {"Content-Type": "text/html", "Content-Length": "100000"}, b""))
    for _ in range(200):  # one byte every 0.1 s: every read succeeds, the body never ends in time
        conn.sendall(b"x")
        time.sleep(0.1)


ROUTES: Dict[str, Callable[[socket.socket], None]] = {
    "/garbage": lambda c: c.sendall(b"GARBAGE NOT HTTP\r\n\r\n"),
    "/short": lambda c: c.sendall(_reply("200 OK", {"Content-Type": "text/html", "Content-Length": "100000"},
                                         PAGE)),
    "/trickle": _trickle,
    "/gzip": lambda c: c.sendall(_reply("200 OK", {"Content-Type": "text/html; charset=utf-8",
                                                   "Content-Encoding": "gzip"}, gzip.compress(PAGE))),
    "/big": lambda c: c.sendall(_reply("200 OK", {"Content-Type": "text/html"}, b"<p>" + b"x" * 5000)),
    "/pdf": lambda c: c.sendall(_reply("200 OK", {"Content-Type": "application/pdf",
                                                  "Content-Length": "12"}, b"%PDF-1.4 xxx")),
}


@pytest.fixture(scope="module")
def raw_server():
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)

    def serve_one(conn: socket.socket) -> None:
        with conn:
            try:
                request = conn.recv(65536).decode("latin-1")
                path = request.split(" ", 2)[1] if " " in request else "/"
                ROUTES[path](conn)
            except OSError:  # the client gave up (the trickle): nothing to do
                pass

    def accept() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=serve_one, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    listener.close()


@pytest.mark.parametrize("path,message", [
    ("/garbage", "cannot fetch: BadStatusLine"),
    ("/short", "cut short"),
])
def test_a_broken_reply_is_a_source_error(raw_server, path, message):
    with pytest.raises(SourceError, match=message):
        read_source(raw_server + path, timeout=5)


def test_a_server_that_trickles_cannot_hold_the_fetch_past_its_timeout(raw_server):
    # each byte comes well within the socket timeout; only a deadline on the whole fetch ends it
    with pytest.raises(SourceError, match="not fetched whole within 1 s"):
        read_source(raw_server + "/trickle", timeout=1)


def test_a_compressed_reply_is_decompressed(raw_server):
    body, content_type, url = read_source(raw_server + "/gzip", timeout=5)
    assert body == PAGE and content_type.startswith("text/html") and url == raw_server + "/gzip"


def test_inputs_over_the_limit_are_refused_not_cut(raw_server, tmp_path, monkeypatch):
    monkeypatch.setattr(sources, "MAX_FETCH_BYTES", 1000)
    with pytest.raises(SourceError, match="larger than the limit of 1,000 bytes"):
        read_source(raw_server + "/big", timeout=5)
    big = tmp_path / "big.html"
    big.write_bytes(b"<p>" + b"x" * 5000)
    with pytest.raises(SourceError, match="larger than"):
        read_source(str(big))
    bomb = tmp_path / "bomb.html.gz"
    bomb.write_bytes(gzip.compress(b"x" * 5000))  # 5 KB once decompressed, a few bytes on disk
    with pytest.raises(SourceError, match="once decompressed"):
        read_source(str(bomb))


def test_a_closed_stdin_is_a_source_error(monkeypatch):
    monkeypatch.setattr("sys.stdin", None)  # what Python sets when started with stdin closed
    with pytest.raises(SourceError, match="standard input is closed"):
        read_source("-")


def test_gzip_on_stdin_and_in_several_members(tmp_path, monkeypatch):
    class Stdin:
        buffer = io.BytesIO(gzip.compress(PAGE[:20]) + gzip.compress(PAGE[20:]))

    monkeypatch.setattr("sys.stdin", Stdin)
    assert read_source("-") == (PAGE, None, None)
    broken = tmp_path / "broken.html.gz"
    broken.write_bytes(gzip.compress(PAGE)[:15])
    with pytest.raises(SourceError, match="broken gzip data"):
        read_source(str(broken))


def test_html_by_content_type_or_by_its_first_bytes(raw_server):
    body, content_type, _ = read_source(raw_server + "/pdf", timeout=5)
    assert not is_html(content_type, body)
    assert is_html("text/html; charset=utf-8", b"anything")
    assert is_html("text/plain", PAGE) and not is_html("text/plain", b"just text")
    assert is_html(None, PAGE) and not is_html("application/json", PAGE)
