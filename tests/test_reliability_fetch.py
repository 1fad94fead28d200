"""`edrew extract URL` against hostile servers on 127.0.0.1: one deadline for the whole exchange, a cut-off
header block, redirects, and server-controlled text that must reach the terminal escaped.

Every case runs the real CLI (`python -m edrew_scrapy.cli extract`) in a subprocess with a tiny model the
test builds; subprocess timeouts only guard against the hangs the tests are about.
"""
from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "fixtures" / "reliability"))
from reliability_support import ROOT, RawServer, RecordingServer, build_tiny_model, crawl_env  # noqa: E402

PAGE = (b"<!DOCTYPE html><html><head><title>A page</title></head><body><article><h1>A heading</h1>"
        b"<p>A paragraph with enough words in it to count as the content of the page.</p></article>"
        b"</body></html>")
GUARD_S = 60  # far above every --timeout used here: a run that reaches it hung
HTML = {"Content-Type": "text/html; charset=utf-8"}


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "model")


def extract(model: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "edrew_scrapy.cli", "extract", "--model", str(model), *args],
                          cwd=str(ROOT), env=crawl_env(), capture_output=True, text=True, timeout=GUARD_S,
                          stdin=subprocess.DEVNULL)


def records(proc: subprocess.CompletedProcess) -> list:
    return [json.loads(line) for line in proc.stdout.splitlines()]


def assert_clean_lines(text: str, count: int) -> list:
    """`count` lines, none holding a control character (the newline ending each is the only one)."""
    lines = text.split("\n")
    assert lines[-1] == "", repr(text)
    lines = lines[:-1]
    assert len(lines) == count, repr(text)
    for line in lines:
        bad = [ch for ch in line if ord(ch) < 0x20 or 0x7F <= ord(ch) < 0xA0 or ch in "\u2028\u2029\u202e"]
        assert not bad, repr(line)
    return lines


# ------------------------------------------------------------------ case 4: one deadline, whole headers

def trickle_header(conn, path):
    """A status line, then one header line that never ends: a byte every 50 ms, each read succeeds."""
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nX-Slow: ")
    for _ in range(100_000):
        conn.sendall(b"a")
        time.sleep(0.05)


def header_lines_one_a_second(conn, path):
    """The issue's server: one header line a second, up to http.client's 100 headers."""
    conn.sendall(b"HTTP/1.1 200 OK\r\n")
    for i in range(99):
        conn.sendall(f"X-Line-{i}: {i}\r\n".encode())
        time.sleep(1)


@pytest.mark.parametrize("server", [trickle_header, header_lines_one_a_second])
def test_timeout_bounds_the_status_line_and_headers(model, server):
    with RawServer(server) as site:
        proc = extract(model, site.url + "/", "--timeout", "2")
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert assert_clean_lines(proc.stderr, 1) == [f"edrew extract: {site.url}/: not fetched whole within 2 s"]
    assert records(proc) == [{"path": site.url + "/", "error": f"{site.url}/: not fetched whole within 2 s"}]


def trickle_tls_record(conn, path):
    """A TLS handshake record announcing 16 kB, then a byte every 50 ms: every read succeeds."""
    conn.sendall(b"\x16\x03\x03\x40\x00")
    for _ in range(100_000):
        conn.sendall(b"\x00")
        time.sleep(0.05)


def test_timeout_bounds_the_tls_handshake(model):
    with RawServer(trickle_tls_record, read_request=False) as site:
        url = site.url.replace("http://", "https://") + "/"
        proc = extract(model, url, "--timeout", "2")
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert assert_clean_lines(proc.stderr, 1) == [f"edrew extract: {url}: not fetched whole within 2 s"]


@pytest.mark.parametrize("reply", [
    b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n",               # closed before the blank line
    b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Len",     # closed inside a header line
])
def test_a_header_block_cut_off_is_an_error_not_an_empty_page(model, reply):
    with RawServer(lambda conn, path: conn.sendall(reply)) as site:
        proc = extract(model, site.url + "/")
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    (line,) = assert_clean_lines(proc.stderr, 1)
    assert line == f"edrew extract: {site.url}/: cannot fetch: _CutHeaders: the reply ended before its headers did"
    assert [set(r) for r in records(proc)] == [{"path", "error"}]


def test_a_whole_reply_still_reads(model):
    reply = (b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\nConnection: close\r\n\r\n"
             % len(PAGE) + PAGE)
    with RawServer(lambda conn, path: conn.sendall(reply)) as site:
        proc = extract(model, site.url + "/", "--timeout", "5")
    assert proc.returncode == 0, proc.stderr
    (record,) = records(proc)
    assert record["url"] == site.url + "/" and "redirects" not in record and record["title"] == "A page"


# ------------------------------------------------------------------ case 5: redirects

def redirect(location: str):
    return (302, {"Location": location, "Content-Type": "text/plain"}, b"moved")


@pytest.mark.parametrize("target", ["ftp://127.0.0.1/page.html", "file:///etc/passwd", "data:text/html,<p>hi</p>",
                                    "javascript:alert(1)", "gopher://127.0.0.1:70/1"])
def test_only_http_redirects_are_followed(model, target):
    with RecordingServer({"/": redirect(target)}) as site:
        proc = extract(model, site.url + "/")
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    (line,) = assert_clean_lines(proc.stderr, 1)
    assert line == (f"edrew extract: {site.url}/: redirected to {target}: only http and https redirects "
                    f"are followed")


def test_redirects_are_bounded_in_number(model):
    routes = {f"/{i}": redirect(f"/{i + 1}") for i in range(10)}
    routes["/10"] = (200, HTML, PAGE)
    with RecordingServer(routes) as site:
        proc = extract(model, site.url + "/0")
        fetched = site.paths()
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    (line,) = assert_clean_lines(proc.stderr, 1)
    assert line == f"edrew extract: {site.url}/0: more than 5 redirects (the last to {site.url}/6)"
    assert fetched == [f"/{i}" for i in range(6)]


def test_where_a_page_was_redirected_is_in_the_output(model):
    with RecordingServer({"/page": (200, HTML, PAGE)}, host="127.0.0.2") as other:
        with RecordingServer({"/": redirect(other.url + "/page")}) as site:
            proc = extract(model, site.url + "/")
            text = extract(model, site.url + "/", "--format", "text")
            both = extract(model, site.url + "/", site.url + "/", "--format", "text")
    assert proc.returncode == 0, proc.stderr
    (record,) = records(proc)
    assert record["url"] == other.url + "/page" and record["redirects"] == [other.url + "/page"]
    assert text.returncode == 0 and "A paragraph" in text.stdout
    assert text.stderr == f"edrew extract: {site.url}/: redirected to {other.url}/page\n"
    assert both.stdout.count(f"# {site.url}/ (redirected to {other.url}/page)\n") == 2


# ------------------------------------------------------------------ case 6: control characters escaped

def test_a_hostile_reason_phrase_reaches_stderr_escaped_on_one_line(model):
    reply = (b"HTTP/1.1 404 Not\x1b[2J Found\rfake line\x07\x9b\r\nContent-Type: text/plain\r\n"
             b"Content-Length: 0\r\n\r\n")
    with RawServer(lambda conn, path: conn.sendall(reply)) as site:
        proc = extract(model, site.url + "/")
    assert proc.returncode == 1
    (line,) = assert_clean_lines(proc.stderr, 1)
    assert line == f"edrew extract: {site.url}/: cannot fetch: HTTP Error 404: Not\\x1b[2J Found\\rfake line\\x07\\x9b"
    # the JSON record keeps the text itself (JSON escapes it) on one line
    (record,) = records(proc)
    assert record["error"] == f"{site.url}/: cannot fetch: HTTP Error 404: Not\x1b[2J Found\rfake line\x07\x9b"


def test_names_given_on_the_command_line_are_escaped(model, tmp_path):
    missing = str(tmp_path / "a\nb\x1b]0;title\x07\u2028.html")
    proc = extract(model, missing, "--format", "text")
    assert proc.returncode == 1
    (line,) = assert_clean_lines(proc.stderr, 1)
    assert "a\\nb\\x1b]0;title\\x07\\u2028.html" in line
    no_model = extract(tmp_path / "model\r\x1b[1A", str(tmp_path / "x.html"))
    assert no_model.returncode == 2
    (line,) = assert_clean_lines(no_model.stderr, 1)
    assert "model\\r\\x1b[1A" in line and "does not exist" in line


def test_printable_escapes_every_control_character():
    from edrew_scrapy.escape import printable

    text = "".join(map(chr, range(0x00, 0xA0))) + "\u2028\u2029\u202e\u2066"
    out = printable(text)
    assert_clean_lines(out + "\n", 1)
    assert printable("plain text, accents: é ü 中文") == "plain text, accents: é ü 中文"
