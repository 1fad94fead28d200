"""scripts/pdf-demo.sh end to end: demo/articles/serve.py on 127.0.0.1 and a real `scrapy crawl articles`
over its listing (four PDFs, one of them behind a 301; an HTML page, an image, HTML served as
application/pdf and a 404 that are not articles)."""
from __future__ import annotations

import json
import os
import re
import subprocess

import pytest
from conftest import ROOT

pytestmark = pytest.mark.crawl


def test_pdf_demo_crawls_the_listing(tmp_path):
    env = dict(os.environ, EDREW_DEMO_OUT=str(tmp_path))
    proc = subprocess.run(["bash", "scripts/pdf-demo.sh"], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr[-2000:]
    items = [json.loads(line) for line in (tmp_path / "pdf-demo.jsonl").read_text().splitlines() if line.strip()]
    by_path = {item["url"].split("/", 3)[-1]: item for item in items}
    assert set(by_path) == {"papers/layout.pdf", "papers/sentences.pdf", "papers/tables.pdf", "old/moved.pdf"}
    assert by_path["old/moved.pdf"]["pdf_url"].endswith("/papers/moved.pdf")
    assert by_path["papers/tables.pdf"]["title"] == "Finding Captions and Footnotes in Technical Reports"
    assert by_path["papers/tables.pdf"]["authors"] == ["Dan Park", "Eva Lindqvist"]
    for item in items:
        assert [s["title"] for s in item["sections"]] == ["Introduction", "Method", "Results"]
        assert len(item["references"]) == 3
    log = (tmp_path / "pdf-demo.log").read_text()
    stats = {k: int(v) for k, v in re.findall(r"'(edrew/pdf/[^']+)': (\d+)", log)}
    assert stats["edrew/pdf/articles"] == 4 and stats["edrew/pdf/skipped/not-pdf"] == 1
    assert stats["edrew/pdf/link-errors"] == 1  # the 404
    assert "4 articles in" in proc.stdout
