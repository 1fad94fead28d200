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


def test_a_misspelt_setting_is_named_with_the_right_one(demo_url, tmp_path):
    """`EDREW_ITEM = "node"` (for EDREW_ITEMS) used to do nothing, silently: page items came out."""
    project = new_project(tmp_path, 'EDREW_ITEM = "node"\n')
    proc, items = crawl(project, demo_url, "-s", "EDREW_TRESHOLD=0.9", "-s", "EDREW_BATCH_PAGES=2")
    warnings = [line.split("] ", 1)[1] for line in proc.stderr.splitlines() if "] WARNING:" in line]
    assert warnings == [
        "WARNING: EDREW: EDREW_ITEM is not a setting of edrew-scrapy and does nothing; did you mean EDREW_ITEMS?",
        "WARNING: EDREW: EDREW_TRESHOLD is not a setting of edrew-scrapy and does nothing; "
        "did you mean EDREW_THRESHOLD?",
    ]
    assert [i for i in items if "text" in i]  # the crawl itself goes on as before


def test_every_setting_the_code_reads_is_known():
    """The list the warning checks against covers every EDREW_ setting a component reads."""
    from edrew_scrapy.scrapy.settings import KNOWN_SETTINGS

    root = Path(__file__).resolve().parents[1] / "edrew_scrapy"
    read = set()
    for path in root.rglob("*.py"):
        source = path.read_text("utf-8")
        read.update(re.findall(r"settings\.get\w*\(\s*[\"'](EDREW_\w+)", source))
        read.update(re.findall(r"^\s+[\"'](EDREW_\w+)[\"']:", source, flags=re.M))  # DEFAULTS dicts
    assert len(read) > 20
    assert read <= KNOWN_SETTINGS, read - KNOWN_SETTINGS


def test_a_misspelt_spider_argument_is_named(demo_url, tmp_path):
    """`-a max_page=1` (for max_pages) crawled the whole site without a word; a name far from every argument
    (a spider attribute some other component reads) is no misspelling."""
    out = tmp_path / "out.jsonl"
    proc = run_scrapy(["crawl", "edrew", "-a", f"urls={demo_url}/about.html", "-a", "max_page=1", "-a", "sitemaps=0",
                       "-a", "team=newcomers", "-s", "TELNETCONSOLE_ENABLED=False", "-O", str(out)])
    assert proc.returncode == 0, proc.stderr[-4000:]
    warnings = [line.split("] ", 1)[1] for line in proc.stderr.splitlines() if "] WARNING:" in line]
    assert warnings == ["WARNING: scrapy crawl edrew: -a max_page is not an argument of this spider and does "
                        "nothing; did you mean -a max_pages? (its arguments: urls, allowed_domains, max_pages, "
                        "max_depth, sitemaps)"]
    assert out.read_text("utf-8").count("\n") > 1  # the argument did nothing: the crawl went past one page


@pytest.mark.parametrize("args, message", [
    ([], "give the start pages: scrapy crawl edrew -a urls=URL1,URL2"),
    (["-a", "urls=127.0.0.1:8000"], "not an http(s) URL: '127.0.0.1:8000'"),
    (["-a", "urls=http://127.0.0.1:9/", "-a", "max_pages=ten"],
     "max_pages must be a whole number of pages (0: no limit), not 'ten'"),
])
def test_a_wrong_spider_argument_is_the_first_error_line(tmp_path, args, message):
    """Scrapy reports a spider's ValueError as an asyncio traceback ("Task exception was never retrieved")
    with the message at its end; the spider's own ERROR line comes first and names it."""
    proc = run_scrapy(["crawl", "edrew", *args, "-s", "TELNETCONSOLE_ENABLED=False", "-O", str(tmp_path / "o.jl")])
    assert proc.returncode == 1
    errors = [line.split("] ", 1)[1] for line in proc.stderr.splitlines() if "] ERROR:" in line]
    assert errors[0] == f"ERROR: scrapy crawl edrew cannot start: {message}", proc.stderr[-3000:]
