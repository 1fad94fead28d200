"""Coverage-guided fuzzing of `edrew_scrapy.serializer.serialize` with atheris (libFuzzer).

    nice -n 10 python fuzz/fuzz_serializer.py --minutes 10 [--out /tmp/edrew-fuzz] [--max-len 65536]

A finding is any exception out of serialize() (its contract: never raises on str or bytes) or one
input that takes longer than the time bound (a sign of super-linear behaviour). The first byte of each
input picks how it reaches serialize: raw bytes, bytes with a declared charset taken from the input
itself, or a str. Findings are written to OUT/findings/ (the input and a traceback), one per distinct
(exception type, raising line); the fuzzer keeps going so that one known bug does not hide the next.
Progress and a summary go to stderr; the exit status is 1 when anything was found.

atheris is a development tool only (`pip install atheris`); nothing in the package depends on it.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import sys
import time
import traceback
from pathlib import Path

import atheris

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

with atheris.instrument_imports(include=["edrew_scrapy"]):
    from edrew_scrapy.serializer import serialize

# Charset labels, including ones that name codecs which are not text encodings, so the fuzzer reaches
# the decoding paths through <meta charset> and Content-Type without having to invent the names.
CHARSETS = ["utf-8", "utf-16", "utf-16le", "utf-32", "latin-1", "cp1252", "shift_jis", "gb18030",
            "iso-2022-jp", "utf-7", "koi8-r", "big5", "euc-kr", "x-unknown", "", "base64", "rot13",
            "punycode", "idna", "unicode_escape", "undefined"]
SEEDS = {
    "article.html": b"<!DOCTYPE html><html><head><meta charset='utf-8'><title>T</title></head><body>"
                    b"<nav><a href='/'>Home</a></nav><article><h1 class='title'>Head</h1><p>Some "
                    b"<b>bold</b> text &amp; <a href='x'>a link</a>.</p><img src='a.png'></article>"
                    b"<script>var s = '<p>not text</p>';</script><footer>(c)</footer></body></html>",
    "broken.html": b"<div><p>open<p>again<li>item<table><tr><td>cell<!-- unterminated <a href='x>y",
    "utf16.html": "\ufeff<html><body><p>\u00e9t\u00e9 \u4e2d\u6587</p></body></html>".encode("utf-16"),
    "meta.html": b"<html><head><meta http-equiv='Content-Type' content='text/html; charset=koi8-r'>"
                 b"</head><body><p>\xf0\xd2\xc9\xd7\xc5\xd4</p></body></html>",
    "raw.html": b"<style>p{}</style><textarea><p>x</textarea><title>a<b>c</title><![CDATA[<p>]]>"
                b"<svg><text>t</text></svg><template><p>hidden</p></template><p hidden>h</p>",
    "deep.html": b"<div>" * 300 + b"<span>deep</span>" + b"</div>" * 10,
}


class Fuzzer:
    def __init__(self, out: Path, bound_s: float, per_byte_s: float, minutes: float):
        self.findings_dir = out / "findings"
        self.findings_dir.mkdir(parents=True, exist_ok=True)
        self.bound_s = bound_s
        self.per_byte_s = per_byte_s
        self.seen: dict = {}
        self.runs = 0
        self.start = time.monotonic()
        self.last_report = self.start
        self.deadline = self.start + minutes * 60

    def target(self, data: bytes) -> None:
        self.runs += 1
        now = time.monotonic()
        if now >= self.deadline:
            # Ended here rather than by libFuzzer's -max_total_time, whose exit() skips Python's atexit.
            self.finish()
        if now - self.last_report >= 60:
            self.last_report = now
            print(f"[fuzz] {(now - self.start) / 60:.1f} min, {self.runs} inputs, "
                  f"{len(self.seen)} distinct findings", file=sys.stderr, flush=True)
        if not data:
            return
        mode, body = data[0] % 4, data[1:]
        call = self._call(mode, body)
        limit = self.bound_s + self.per_byte_s * len(body)
        try:
            elapsed = self._timed(call)
            # The machine is shared: an input over the bound is timed again before it counts.
            if elapsed > limit and self._timed(call) > limit:
                raise TimeoutError(f"{elapsed:.2f} s for {len(body)} bytes (bound {limit:.2f} s)")
        except Exception as exc:  # every exception is a finding: serialize() must never raise
            self._record(exc, data)

    @staticmethod
    def _call(mode: int, body: bytes):
        if mode == 0:
            return lambda: serialize(body)
        if mode == 1:
            # A declared charset (label or Content-Type value) taken from the input itself.
            provider = atheris.FuzzedDataProvider(body)
            pick = provider.ConsumeIntInRange(0, len(CHARSETS))
            declared = CHARSETS[pick] if pick < len(CHARSETS) else provider.ConsumeUnicode(12)
            if provider.ConsumeBool():
                declared = f"text/html; charset={declared}"
            rest = provider.ConsumeBytes(provider.remaining_bytes())
            return lambda: serialize(rest, encoding=declared, url="http://fuzz.example/a/b")
        if mode == 2:
            text = body.decode("utf-8", errors="surrogateescape")  # lone surrogates included
            return lambda: serialize(text, url="http://fuzz.example/")
        text = atheris.FuzzedDataProvider(body).ConsumeUnicode(len(body))  # any code point
        return lambda: serialize(text)

    @staticmethod
    def _timed(call) -> float:
        t0 = time.perf_counter()
        page = call()
        elapsed = time.perf_counter() - t0
        if page is None or not isinstance(page.nodes, list):
            raise AssertionError(f"serialize returned {page!r}")
        return elapsed

    def finish(self) -> None:
        minutes = (time.monotonic() - self.start) / 60
        found = "; ".join(f"{k[0]} at {Path(k[1]).name}:{k[2]} after {m:.2f} min"
                          for k, m in self.seen.items()) or "none"
        last = max(self.seen.values(), default=0.0)
        print(f"[fuzz] done: {minutes:.1f} min, {self.runs} inputs; findings: {found}; "
              f"{minutes - last:.1f} min since the last new finding", file=sys.stderr, flush=True)
        os._exit(1 if self.seen else 0)

    def _record(self, exc: BaseException, data: bytes) -> None:
        frame = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
        key = (type(exc).__name__, frame.filename if frame else "", frame.lineno if frame else 0)
        if isinstance(exc, TimeoutError):
            key = ("TimeoutError", "", 0)
        if key in self.seen:
            return
        minutes = (time.monotonic() - self.start) / 60
        self.seen[key] = minutes
        name = f"{key[0]}-{Path(key[1]).name}-{key[2]}-{hashlib.sha1(data).hexdigest()[:10]}"
        (self.findings_dir / f"{name}.bin").write_bytes(data)
        (self.findings_dir / f"{name}.txt").write_text(
            f"after {minutes:.2f} min, input {len(data)} bytes, mode {data[0] % 4}\n"
            + "".join(traceback.format_exception(exc)), encoding="utf-8")
        print(f"[fuzz] FINDING after {minutes:.2f} min: {type(exc).__name__}: {exc} "
              f"(at {key[1]}:{key[2]}; input in {self.findings_dir / name}.bin)", file=sys.stderr, flush=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, help="how long to fuzz")
    parser.add_argument("--replay", type=Path, nargs="+", metavar="FILE",
                        help="run these inputs (e.g. findings/*.bin) once, letting exceptions through")
    parser.add_argument("--out", type=Path, default=Path("/tmp/edrew-fuzz"),
                        help="corpus and findings directory (default /tmp/edrew-fuzz)")
    parser.add_argument("--max-len", type=int, default=65536, help="largest input in bytes")
    parser.add_argument("--bound", type=float, default=2.0,
                        help="seconds any input may take, plus --per-byte for each byte (default 2.0)")
    parser.add_argument("--per-byte", type=float, default=20e-6,
                        help="extra seconds allowed per input byte (default 20e-6: 1.3 s more at 64 KiB)")
    args, libfuzzer_args = parser.parse_known_args(argv)
    if args.replay:
        for path in args.replay:
            data = path.read_bytes()
            page = Fuzzer._call(data[0] % 4, data[1:])() if data else None
            print(f"{path}: {len(page.nodes) if page else 0} nodes, skipped={page and page.skipped}")
        return 0
    if args.minutes is None:
        parser.error("--minutes is required (or --replay FILE...)")

    corpus = args.out / "corpus"
    corpus.mkdir(parents=True, exist_ok=True)
    for name, body in SEEDS.items():
        for mode in range(4):
            (corpus / f"seed-{mode}-{name}").write_bytes(bytes([mode]) + body)
    fuzzer = Fuzzer(args.out, args.bound, args.per_byte, args.minutes)
    # libFuzzer's own -timeout kills the process on an input that hangs outright (no return at all).
    hang_s = int(max(10, 5 * (args.bound + args.per_byte * args.max_len)))
    libfuzzer = [sys.argv[0], str(corpus), f"-max_total_time={int(args.minutes * 60) + 60}",
                 f"-max_len={args.max_len}", f"-timeout={hang_s}", "-rss_limit_mb=4096",
                 "-print_final_stats=1", *libfuzzer_args]
    print(f"[fuzz] {args.minutes} min, corpus {corpus}, findings {fuzzer.findings_dir}, "
          f"time bound {args.bound} s + {args.per_byte * 1e6:.0f} us/byte", file=sys.stderr, flush=True)

    atheris.Setup(libfuzzer, fuzzer.target)
    atheris.Fuzz()
    return 0


if __name__ == "__main__":
    sys.exit(main())
