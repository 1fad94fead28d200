"""What a Scrapy user meets first: a new project with only `ADDONS` set, run with `scrapy crawl`.

Real `scrapy crawl` subprocesses against the demo site on 127.0.0.1, in a project of their own (no
settings of this repository's), as `scrapy startproject` leaves one.
"""
from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest
from conftest import run_scrapy

pytestmark = pytest.mark.crawl

SPIDER = '''
import scrapy


class NewsSpider(scrapy.Spider):
    name = "news"

    def __init__(self, base, **kwargs):
        super().__init__(**kwargs)
        self.base = base

    async def start(self):
        yield scrapy.Request(self.base + "/news/library-extends-weekend-hours.html")

    def parse(self, response):
        yield {"url": response.url, "h1": response.css("h1::text").get()}
'''


def new_project(root: Path, settings: str = "") -> Path:
    """A minimal project as `scrapy startproject` makes it, with the add-on on and `settings` appended."""
    (root / "scrapy.cfg").write_text("[settings]\ndefault = proj.settings\n", "utf-8")
    package = root / "proj"
    (package / "spiders").mkdir(parents=True)
    (package / "__init__.py").write_text("", "utf-8")
    (package / "spiders" / "__init__.py").write_text("", "utf-8")
    (package / "spiders" / "news.py").write_text(textwrap.dedent(SPIDER), "utf-8")
    (package / "settings.py").write_text(
        'BOT_NAME = "proj"\nSPIDER_MODULES = ["proj.spiders"]\nROBOTSTXT_OBEY = True\n'
        'TELNETCONSOLE_ENABLED = False\nADDONS = {"edrew_scrapy.Addon": 500}\n' + settings, "utf-8")
    return root


def crawl(project: Path, base: str, *args: str):
    out = project / "out.jsonl"
    proc = run_scrapy(["crawl", "news", "-a", f"base={base}", "-O", str(out), *args], cwd=project)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return proc, [json.loads(line) for line in out.read_text("utf-8").splitlines()]


def test_a_plain_crawl_logs_no_warning(demo_url, tmp_path):
    """Nothing misconfigured, nothing to warn about: an extension the user did not ask for (the crawl
    reports, off without EDREW_REPORT_DIR) is off without a WARNING line on every crawl."""
    proc, items = crawl(new_project(tmp_path), demo_url)
    assert [i for i in items if "text" in i and "Sunday" in i["text"]]
    warnings = [line for line in proc.stderr.splitlines() if re.search(r"\] (WARNING|ERROR):", line)]
    assert warnings == []
