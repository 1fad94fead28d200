"""Memory: a page too large to hold is skipped with a counted reason, and torch stays out of the crawl
process while worker processes score.

The CLI runs as a real `python -m edrew_scrapy.cli extract` subprocess whose own peak RSS is read from
os.wait4; the crawl is a real `scrapy crawl edrew` against a server on 127.0.0.1, whose process reports
whether it imported torch (tests/fixtures/reliability StatsToJson).
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "fixtures" / "reliability"))
from reliability_support import ROOT, RecordingServer, crawl_env, model_missing_reason, read_jsonl, run_crawl  # noqa: E402

from edrew_scrapy.serializer import serialize  # noqa: E402
from edrew_scrapy.tokens import SerializerConfig  # noqa: E402

needs_model = pytest.mark.skipif(model_missing_reason() is not None, reason=str(model_missing_reason()))
ARTICLE = (b"<!DOCTYPE html><html><head><title>Story</title></head><body><article><h1>A heading</h1>"
           b"<p>Reporters found that the story was about the river, the bridge and the people of the town, "
           b"who met on Tuesday to talk about the flood defences for the coming winter.</p></article></body></html>")


def one_paragraph(n_bytes: int) -> bytes:
    return b"<html><body><p>" + b"word " * (n_bytes // 5) + b"</p></body></html>"


def many_nodes(n: int) -> bytes:
    return b"<html><body>" + b"".join(b"<div><p>item %d text</p></div>" % i for i in range(n)) + b"</body></html>"


def test_pages_over_the_budget_are_skipped_with_a_reason():
    config = SerializerConfig(max_text_chars=1000, max_nodes=50)
    assert serialize(one_paragraph(2000), config=config).skipped == "too-much-text"
    assert serialize(many_nodes(60), config=config).skipped == "too-many-nodes"
    # text hidden in the title or past max_elements counts as well
    assert serialize(b"<title>" + b"t " * 1000 + b"</title><p>x</p>", config=config).skipped == "too-much-text"
    overflow = SerializerConfig(max_text_chars=1000, max_elements=10)
    assert serialize(many_nodes(300), config=overflow).skipped == "too-much-text"
    # under the limits, or with them off (0), nothing changes
    assert serialize(many_nodes(50), config=config).skipped is None
    assert len(serialize(many_nodes(60), config=SerializerConfig(max_nodes=0)).nodes) == 60
    assert serialize(ARTICLE).skipped is None
    # the defaults: a 40 MB paragraph and 25,000 nodes are over them
    assert serialize(one_paragraph(40_000_000)).skipped == "too-much-text"
    assert serialize(many_nodes(25_000)).skipped == "too-many-nodes"


# Runs a module as `python -m` would and, at exit, writes the process's own peak RSS (VmHWM, kB) to the
# file named by its first argument. Not wait4's ru_maxrss: Linux carries that across fork and execve, so a
# child started from a large pytest process reports at least the parent's size.
_HIGH_WATER = """
import atexit, runpy, sys
out = sys.argv.pop(1)
def high_water():
    with open("/proc/self/status") as status, open(out, "w") as f:
        f.write(next(line.split()[1] for line in status if line.startswith("VmHWM:")))
atexit.register(high_water)
runpy.run_module(sys.argv.pop(1), run_name="__main__", alter_sys=True)
"""


def peak_rss_mb(argv, cwd: Path) -> tuple:
    """(exit status, stdout, the process's own peak RSS in MB) of `python -m MODULE ARGS...` (argv)."""
    assert argv[:2] == [sys.executable, "-m"], argv
    high_water = cwd / "vmhwm"
    with open(cwd / "stdout", "wb") as out, open(cwd / "stderr", "wb") as err:
        proc = subprocess.run([sys.executable, "-c", _HIGH_WATER, str(high_water), *argv[2:]], cwd=str(ROOT),
                              env=crawl_env(), stdout=out, stderr=err, stdin=subprocess.DEVNULL)
    return proc.returncode, (cwd / "stdout").read_text("utf-8"), int(high_water.read_text()) / 1024


@needs_model
def test_a_40_mb_paragraph_does_not_take_a_gigabyte_in_the_cli(tmp_path):
    page = tmp_path / "big.html"
    page.write_bytes(one_paragraph(40_000_000))
    status, out, peak = peak_rss_mb([sys.executable, "-m", "edrew_scrapy.cli", "extract", str(page)], tmp_path)
    assert status == 0, (tmp_path / "stderr").read_text()
    (record,) = [json.loads(line) for line in out.splitlines()]
    assert record["skipped"] == "too-much-text" and record["text"] == ""
    # torch and the model take about 280 MB, the page's bytes and decoded text 80 MB more; before the
    # limit the page's nodes, scoring and output took the process to 1.29 GB
    assert peak < 700, peak


@pytest.mark.crawl
@needs_model
def test_the_crawl_skips_an_oversized_page_counts_it_and_keeps_torch_out(tmp_path):
    html = {"Content-Type": "text/html; charset=utf-8"}
    routes = {"/": (200, html, b"<html><body><a href='/a'>a</a> <a href='/huge'>huge</a> <a href='/b'>b</a>"
                                b"<p>Links to the stories of the day, with words enough.</p></body></html>"),
              "/a": (200, html, ARTICLE), "/b": (200, html, ARTICLE.replace(b"Story", b"Other story")),
              "/huge": (200, html, many_nodes(25_000))}  # 0.7 MB: under EDREW_MAX_PAGE_BYTES, over the nodes
    with RecordingServer(routes) as site:
        proc, stats = run_crawl(site.url + "/", tmp_path, "-s", "EDREW_WORKERS=1",
                                "-o", str(tmp_path / "out.jsonl"), timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert stats.get("edrew/skipped/too-many-nodes") == 1, stats
    urls = {item["url"] for item in read_jsonl(tmp_path / "out.jsonl")}
    assert site.url + "/huge" not in urls and {site.url + "/a", site.url + "/b"} <= urls
    # the workers score: the crawl process never imports torch
    assert stats["reliability/torch_imported"] is False
