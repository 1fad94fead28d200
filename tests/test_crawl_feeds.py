"""A spider with items of its own, a CSV feed and Scrapy's default DEBUG log: the add-on warns that the CSV
would mix its items with the spider's and names the FEEDS setting that splits them (which works), and it
logs each page item as a one-line summary instead of whole.

Real `scrapy runspider` subprocesses against a server on 127.0.0.1.
"""
from __future__ import annotations

import csv
import re
import textwrap

import pytest
from conftest import run_scrapy

pytestmark = pytest.mark.crawl

N_PAGES = 4

SPIDER = '''
import scrapy


class QuotesLike(scrapy.Spider):
    """Like scrapy/quotesbot: its own items have a `text` field, as EDREW's page items do."""

    name = "quotes"
    custom_settings = {"ADDONS": {"edrew_scrapy.Addon": 500}, "TELNETCONSOLE_ENABLED": False}

    def __init__(self, base, **kwargs):
        super().__init__(**kwargs)
        self.start_urls = [f"{base}/q/{i}" for i in range(%d)]

    def parse(self, response):
        yield {"text": response.css("blockquote::text").get(), "author": response.css("cite::text").get()}
''' % N_PAGES


def _page(i: int) -> bytes:
    return (f"<!DOCTYPE html><html><head><title>Quote {i}</title></head><body><nav><a href='/'>Home</a></nav>"
            f"<main><article><h1>Quote number {i}</h1><blockquote>Quote {i} is short.</blockquote>"
            f"<cite>Author {i}</cite><p>Reporters found that story {i} was about the river, the bridge and the "
            f"people of the town, who met on Tuesday to talk about the flood defences for the winter.</p>"
            f"<p>The council said the work on story {i} would start in spring and last for two years.</p>"
            f"</article></main><footer>Copyright the Town Paper.</footer></body></html>").encode()


@pytest.fixture
def site(serve, tmp_path):
    (tmp_path / "site").mkdir()
    (tmp_path / "quotes.py").write_text(textwrap.dedent(SPIDER), "utf-8")
    routes = {f"/q/{i}": (200, {"Content-Type": "text/html; charset=utf-8"}, _page(i)) for i in range(N_PAGES)}
    return serve(tmp_path / "site", routes)


def _rows(path):
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_csv_feed_that_would_mix_items_is_named_with_the_feeds_that_split_it(site, tmp_path):
    proc = run_scrapy(["runspider", "quotes.py", "-a", f"base={site}", "-O", "out.csv", "-s", "LOG_LEVEL=DEBUG"],
                      cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-4000:]
    warning = re.search(r"WARNING: EDREW: the CSV feed out\.csv gets the spider's own items and EDREW's page "
                        r"items.*?-s FEEDS='([^\n]+)'", proc.stderr, re.S)
    assert warning, proc.stderr[-4000:]

    # -- the log: each page item is one summary line, the feed still gets it whole
    scraped = [m.group(1) for m in re.finditer(r"DEBUG: Scraped from <200 [^>]+>\n(.*)", proc.stderr)]
    summaries = [line for line in scraped if line.startswith("PageItem(")]
    assert len(summaries) == N_PAGES, scraped
    for line in summaries:
        assert re.fullmatch(r"PageItem\(url='http://127\.0\.0\.1:\d+/q/\d', nodes=\d+, words=\d+, images=0\)",
                            line), line
    assert "Reporters found" not in proc.stderr and "'path':" not in proc.stderr
    mixed = _rows(tmp_path / "out.csv")
    assert any(row["text"].startswith("Reporters found") or "Reporters found" in row["text"] for row in mixed)

    # -- the FEEDS setting the warning names: the spider's rows alone, the pages in their own file
    proc = run_scrapy(["runspider", "quotes.py", "-a", f"base={site}", "-s", f"FEEDS={warning.group(1)}"],
                      cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "gets the spider's own items" not in proc.stderr
    own = _rows(tmp_path / "out.csv")
    assert sorted(own, key=lambda r: r["author"]) == [{"text": f"Quote {i} is short.", "author": f"Author {i}"}
                                                      for i in range(N_PAGES)]
    pages = _rows(tmp_path / "out-pages.csv")
    assert len(pages) == N_PAGES and all(set(row) == {"url", "title", "text"} for row in pages)
    assert all("Reporters found" in row["text"] for row in pages)


def test_no_warning_for_feeds_that_do_not_mix(site, tmp_path):
    # JSON Lines holds any mix; a CSV feed restricted by item_classes gets one kind
    feeds = ('{"all.jsonl": {"format": "jsonlines"}, "pages.csv": {"format": "csv", '
             '"item_classes": ["edrew_scrapy.scrapy.PageItem"]}}')
    proc = run_scrapy(["runspider", "quotes.py", "-a", f"base={site}", "-s", f"FEEDS={feeds}"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "gets the spider's own items" not in proc.stderr
    assert len(_rows(tmp_path / "pages.csv")) == N_PAGES
