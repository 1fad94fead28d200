"""A crawl's log at Scrapy's default level, DEBUG: the metadata's libraries add no line per page (htmldate logs
its steps at DEBUG; the metadata sets its logger to INFO). A real `scrapy crawl edrew` against 127.0.0.1."""
from __future__ import annotations

import json
import re

import pytest
from conftest import run_scrapy

pytestmark = pytest.mark.crawl

# undated but for the full date in its URL, which htmldate reads (and logs, at DEBUG)
STORY = """<html lang="en"><head><title>Harbour to be dredged</title></head><body><article>
<h1>Harbour to be dredged</h1>
<p>The harbour board agreed on Monday to dredge the eastern basin before the summer season begins in June.</p>
<p>Fishing boats had run aground twice this winter, and the ferry company warned it would cancel crossings.</p>
<p>The dredging costs four million and the board will borrow half of it from the regional development bank.</p>
</article></body></html>"""


@pytest.mark.parametrize("workers", ["1", "0"])
def test_a_crawl_at_debug_level_logs_no_htmldate_lines(serve, tmp_path, workers):
    site = tmp_path / "site"
    (site / "2025" / "09" / "04").mkdir(parents=True)
    (site / "2025" / "09" / "04" / "story.html").write_text(STORY, "utf-8")
    base = serve(site)
    out = tmp_path / "items.jsonl"
    proc = run_scrapy(["crawl", "edrew", "-a", f"urls={base}/2025/09/04/story.html", "-a", "sitemaps=0",
                       "-s", "LOG_LEVEL=DEBUG", "-s", f"EDREW_WORKERS={workers}", "-s", "TELNETCONSOLE_ENABLED=False",
                       "-O", str(out)])
    assert proc.returncode == 0, proc.stderr[-4000:]
    items = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    assert [i["date_published"] for i in items] == ["2025-09-04"]  # htmldate read the URL's day
    assert re.search(r"\[scrapy[.\w]*\] DEBUG: ", proc.stderr)  # the log is at DEBUG
    assert not re.findall(r"\[htmldate[.\w]*\] DEBUG: .*", proc.stderr)
