"""The Scrapy glue without a crawl: settings, add-on wiring, the downloader middleware, the spider."""
from __future__ import annotations

import logging
import re
import subprocess
import sys

import pytest
from conftest import ROOT
from scrapy import Request
from scrapy.exceptions import NotConfigured
from scrapy.http import HtmlResponse, JsonResponse, Response, TextResponse, XmlResponse
from scrapy.settings import Settings
from scrapy.utils.test import get_crawler

from edrew_scrapy.scrapy import Addon, EdrewDownloaderMiddleware, EdrewSpiderMiddleware
from edrew_scrapy.scrapy.downloadermiddleware import is_html
from edrew_scrapy.scrapy.meta import EXTRACTION_KEY, ITEMS_SENT_KEY, META_KEY
from edrew_scrapy.scrapy.settings import DEFAULTS, EdrewSettings
from edrew_scrapy.spiders import EdrewSpider

ARTICLE = (b"<!DOCTYPE html><html><head><title>A page</title></head><body>"
           b"<nav><a href='/'>Home</a></nav><article><h1>Heading</h1>"
           b"<p>The first paragraph of the article has enough words to be text.</p></article></body></html>")


def resolve(coro):
    """Run a coroutine that never has to wait (EDREW_THREADS=0 serialises inline)."""
    try:
        coro.send(None)
    except StopIteration as stop:
        return stop.value
    raise AssertionError("the coroutine waited for something")


def downloader_mw(**settings):
    crawler = get_crawler(settings_dict={"EDREW_THREADS": 0, **settings})
    return crawler, EdrewDownloaderMiddleware.from_crawler(crawler)


def response(url="http://example.com/a", body=ARTICLE, headers=None, status=200, cls=HtmlResponse, meta=None):
    request = Request(url, meta=meta or {})
    kwargs = {"encoding": "utf-8"} if issubclass(cls, TextResponse) else {}
    headers = {"Content-Type": "text/html; charset=utf-8"} if headers is None else headers
    return request, cls(url=url, body=body, headers=headers, status=status, request=request, **kwargs)


def stat(crawler, key):
    return crawler.stats.get_value("edrew/" + key)


# ---------------------------------------------------------------- settings and add-on

def test_disabled_components_raise_not_configured():
    crawler = get_crawler(settings_dict={"EDREW_ENABLED": False})
    with pytest.raises(NotConfigured):
        EdrewDownloaderMiddleware.from_crawler(crawler)
    with pytest.raises(NotConfigured):
        EdrewSpiderMiddleware.from_crawler(crawler)


@pytest.mark.parametrize("name,value,message", [
    ("EDREW_ITEMS", "rows", "EDREW_ITEMS"),
    ("EDREW_BACKEND", "tensorflow", "EDREW_BACKEND"),
    ("EDREW_THRESHOLD", 1.5, "EDREW_THRESHOLD"),
    ("EDREW_REGION_SHARE", 0.3, "EDREW_REGION_SHARE"),
    ("EDREW_REGION_SHARE", 1.2, "EDREW_REGION_SHARE"),
    ("EDREW_BUILDER", "json.__doc__", "callable"),
    ("EDREW_THRESHOLD", "high", "EDREW_THRESHOLD must be a number, not 'high'"),
    ("EDREW_BATCH_PAGES", "eight", "EDREW_BATCH_PAGES must be a whole number"),
    ("EDREW_CACHE_MB", "1GB", "EDREW_CACHE_MB must be a number"),
    ("EDREW_CACHE_MB", "nan", "EDREW_CACHE_MB must be a number >= 0"),
    ("EDREW_CACHE_MB", "inf", "EDREW_CACHE_MB must be a number >= 0"),
    ("EDREW_WORKERS", "two", "EDREW_WORKERS"),
    # out of range or not whole: refused, not quietly changed (-1 ran in process, 1.7 ran one worker)
    ("EDREW_WORKERS", -1, "EDREW_WORKERS must be a whole number >= 0, not -1"),
    ("EDREW_WORKERS", 1.7, "EDREW_WORKERS must be a whole number >= 0, not 1.7"),
    ("EDREW_WORKERS", "1.7", "EDREW_WORKERS must be a whole number >= 0"),
    ("EDREW_BATCH_PAGES", "0", "EDREW_BATCH_PAGES must be a whole number >= 1, not '0'"),
    ("EDREW_MAX_PAGE_BYTES", "-1", "EDREW_MAX_PAGE_BYTES must be a whole number >= 0"),
    ("EDREW_THREADS", True, "EDREW_THREADS must be a whole number"),
    ("EDREW_WORKER_TIMEOUT", "-5", "EDREW_WORKER_TIMEOUT must be a number of seconds >= 0"),
    ("EDREW_WORKERS", "\u00b2", "EDREW_WORKERS must be a whole number >= 0"),
    ("EDREW_WORKER_TIMEOUT", "nan", "EDREW_WORKER_TIMEOUT must be a number of seconds >= 0"),
    ("EDREW_BUILDER", "nosuchmodule.builder",
     "EDREW_BUILDER 'nosuchmodule.builder' cannot be loaded: ModuleNotFoundError"),
    ("EDREW_BUILDER", "json.nosuchname", "EDREW_BUILDER 'json.nosuchname' cannot be loaded: NameError"),
    ("EDREW_COMMENTS", "inline", "EDREW_COMMENTS must be one of field, text, none, not 'inline'"),
])
def test_wrong_settings_fail_at_start(name, value, message, caplog):
    with pytest.raises(ValueError, match=re.escape(message)):
        EdrewSettings.from_settings(Settings({name: value}))
    # one ERROR line of ours names the setting, as for a model that cannot be loaded
    errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert len(errors) == 1 and errors[0].startswith("EDREW cannot start: ") and message in errors[0]


def test_whole_number_settings_as_written():
    import numpy as np

    conf = EdrewSettings.from_settings(Settings({"EDREW_WORKERS": "2", "EDREW_BATCH_PAGES": 4.0,
                                                 "EDREW_MAX_PAGE_BYTES": "5_000_000", "EDREW_THREADS": np.int64(0),
                                                 "EDREW_TORCH_THREADS": "+1"}))
    assert (conf.workers, conf.batch_pages, conf.max_page_bytes, conf.threads, conf.torch_threads) == \
        (2, 4, 5_000_000, 0, 1)


def test_none_written_on_the_command_line_means_unset():
    conf = EdrewSettings.from_settings(Settings({"EDREW_THRESHOLD": "None", "EDREW_REGION_SHARE": "none",
                                                 "EDREW_CACHE_MB": "None"}))
    assert conf.threshold is None and conf.region_share is None and conf.cache_mb is None


def test_settings_defaults_and_builder_path():
    conf = EdrewSettings.from_settings(Settings({"EDREW_BUILDER": "json.dumps", "EDREW_THRESHOLD": "0.7"}))
    import json

    assert conf.builder is json.dumps and conf.threshold == 0.7
    assert conf.items == "page" and conf.backend == "numpy" and conf.model is None
    assert conf.max_page_bytes == DEFAULTS["EDREW_MAX_PAGE_BYTES"] and conf.threads == DEFAULTS["EDREW_THREADS"]
    assert conf.region_share is None  # the model card's
    assert conf.metadata is True and DEFAULTS["EDREW_METADATA"] is True
    assert EdrewSettings.from_settings(Settings({"EDREW_METADATA": "False"})).metadata is False
    assert conf.comments == "field"
    assert EdrewSettings.from_settings(Settings({"EDREW_COMMENTS": "TEXT"})).comments == "text"


def test_region_share_setting_reaches_the_in_process_scorer():
    from edrew_scrapy.scrapy.scoring import load_scorer

    def loaded(value):
        return load_scorer(EdrewSettings.from_settings(Settings({"EDREW_REGION_SHARE": value}))).region_share

    assert loaded(None) == 0.7 and loaded("0") is None and loaded(0.8) == 0.8


def test_addon_wires_components_at_addon_priority():
    settings = Settings({"EDREW_ITEMS": "node"}, priority="project")
    Addon().update_settings(settings)
    downloader = settings.getdict("DOWNLOADER_MIDDLEWARES")
    spider = settings.getdict("SPIDER_MIDDLEWARES")
    assert downloader[EdrewDownloaderMiddleware] == 540
    assert spider[EdrewSpiderMiddleware] == 950
    assert settings["EDREW_ITEMS"] == "node"  # the project's value wins
    for name in set(DEFAULTS) - {"EDREW_ITEMS"}:
        assert settings.getpriority(name) == 15, name  # "addon"


def test_addon_keeps_a_projects_own_choice_of_priority_or_none():
    path = "edrew_scrapy.scrapy.downloadermiddleware.EdrewDownloaderMiddleware"
    settings = Settings({"DOWNLOADER_MIDDLEWARES": {path: None}})
    Addon().update_settings(settings)
    assert settings.getdict("DOWNLOADER_MIDDLEWARES") == {path: None}


class OldSettings(Settings):
    """Settings of a Scrapy before 2.13, which had no setdefault_in_component_priority_dict()."""

    @property
    def setdefault_in_component_priority_dict(self):
        raise AttributeError


def test_addon_on_a_scrapy_without_the_setdefault_helper():
    settings = OldSettings({"SPIDER_MIDDLEWARES": {"edrew_scrapy.scrapy.EdrewSpiderMiddleware": 10}})
    Addon().update_settings(settings)
    assert settings.getdict("DOWNLOADER_MIDDLEWARES")[EdrewDownloaderMiddleware] == 540
    assert settings.getdict("SPIDER_MIDDLEWARES") == {"edrew_scrapy.scrapy.EdrewSpiderMiddleware": 10}


def test_addon_in_a_real_crawler():
    crawler = get_crawler(settings_dict={"ADDONS": {"edrew_scrapy.Addon": 500}})
    crawler._apply_settings() if hasattr(crawler, "_apply_settings") else None
    assert any(getattr(k, "__name__", k).endswith("EdrewSpiderMiddleware")
               for k in crawler.settings.getdict("SPIDER_MIDDLEWARES"))


def test_import_is_light():
    code = ("import sys, edrew_scrapy; assert 'scrapy' not in sys.modules and 'torch' not in sys.modules;"
            "print(sorted(edrew_scrapy.__all__))")
    out = subprocess.run([sys.executable, "-c", code], cwd=str(ROOT), capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == str(sorted(["Addon", "EdrewPipeline", "Node", "Page", "extract", "load_model",
                                             "serialize"]))


def test_a_worker_process_imports_no_scrapy():
    # a spawned worker imports edrew_scrapy.scrapy.worker by name: the package must not pull Scrapy in
    code = ("import sys, edrew_scrapy.scrapy.worker; assert 'scrapy' not in sys.modules and 'twisted' not in "
            "sys.modules; from edrew_scrapy.scrapy import EdrewSpiderMiddleware; assert 'scrapy' in sys.modules")
    out = subprocess.run([sys.executable, "-c", code], cwd=str(ROOT), capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


# ---------------------------------------------------------------- what counts as HTML

@pytest.mark.parametrize("ctype,body,expected", [
    ("text/html; charset=utf-8", b"anything", True),
    ("application/xhtml+xml", b"<?xml version='1.0'?><html/>", True),
    ("", b"\xef\xbb\xbf  <!-- hi --> <!DOCTYPE html><html>", True),
    ("application/octet-stream", b"<html lang='en'><body>x</body></html>", True),
    ("text/plain", b"<head><title>t</title></head>", True),
    ("text/plain", b"Just text that mentions <html> later.", False),
    ("application/octet-stream", b"\x89PNG\r\n\x1a\n\x00\x00", False),
    ("application/json", b'{"html": "<html>"}', False),
    ("application/pdf", b"%PDF-1.7 <html>", False),
])
def test_is_html(ctype, body, expected):
    headers = {"Content-Type": ctype} if ctype else {}
    assert is_html(Response("http://example.com/x", body=body, headers=headers)) is expected


# ---------------------------------------------------------------- the downloader middleware

def test_html_response_gets_its_page():
    crawler, mw = downloader_mw()
    request, resp = response()
    assert resolve(mw.process_response(request, resp)) is resp
    page = resp.meta[META_KEY]
    assert page.url == "http://example.com/a" and page.title == "A page"
    assert any("first paragraph" in n.content for n in page.nodes)
    assert stat(crawler, "pages") == 1


def test_sniffed_html_without_content_type():
    crawler, mw = downloader_mw()
    request, resp = response(headers={}, cls=Response)
    resolve(mw.process_response(request, resp))
    assert resp.meta[META_KEY].nodes and stat(crawler, "pages") == 1


def test_skips_are_counted_and_logged_once_per_reason(caplog):
    crawler, mw = downloader_mw(EDREW_MAX_PAGE_BYTES=1000)
    cases = [  # (request, response, whether a Page is attached)
        (*response(meta={"edrew": False}), False),                                     # opt-out
        (*response(url="http://example.com/data.json", body=b"{}", cls=TextResponse,
                   headers={"Content-Type": "application/json"}), False),            # not-html
        (*response(url="http://example.com/logo.png", body=b"\x89PNG\r\n", cls=Response,
                   headers={"Content-Type": "image/png"}), False),                   # not-html
        (*response(body=ARTICLE.replace(b"</body>", b"<p>" + b"x" * 2000 + b"</p></body>")), False),  # too-large
        (*response(status=404), False),                                              # http-status
        (*response(body=b"<html><body>   </body></html>"), True),                    # no-text
    ]
    with caplog.at_level(logging.INFO, logger="edrew_scrapy"):
        for request, resp, attached in cases:
            assert resolve(mw.process_response(request, resp)) is resp
            assert (META_KEY in resp.meta) is attached
    assert stat(crawler, "skipped/opt-out") == 1
    assert stat(crawler, "skipped/not-html") == 2
    assert stat(crawler, "skipped/too-large") == 1
    assert stat(crawler, "skipped/http-status") == 1
    assert stat(crawler, "skipped/no-text") == 1
    assert stat(crawler, "pages") is None
    lines = [r.getMessage() for r in caplog.records if "EDREW skipped" in r.getMessage()]
    assert len(lines) == 5  # one per reason, not one per page
    assert any("data.json" in line and "application/json" in line for line in lines)
    assert any("EDREW_MAX_PAGE_BYTES=1000" in line for line in lines)


def test_a_page_carried_over_in_copied_meta_is_dropped():
    crawler, mw = downloader_mw()
    request, resp = response()
    resolve(mw.process_response(request, resp))
    # the previous page's scores, and the mark that its items left (which would drop this page's)
    copied = {**resp.meta, EXTRACTION_KEY: "the previous page's scores", ITEMS_SENT_KEY: True}
    request2, json_resp = response(url="http://example.com/data.json", body=b"{}", cls=TextResponse,
                                   headers={"Content-Type": "application/json"}, meta=copied)
    resolve(mw.process_response(request2, json_resp))
    assert META_KEY not in json_resp.meta and EXTRACTION_KEY not in json_resp.meta
    assert ITEMS_SENT_KEY not in json_resp.meta


def test_without_the_spider_middleware_pages_are_serialised_not_scored():
    crawler, mw = downloader_mw()
    request, resp = response()
    resolve(mw.process_response(request, resp))  # never waits: there is no model to wait for
    assert resp.meta[META_KEY].nodes and EXTRACTION_KEY not in resp.meta


def test_binary_bytes_served_as_html_are_skipped_as_binary():
    crawler, mw = downloader_mw()
    request, resp = response(body=b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 20)
    resolve(mw.process_response(request, resp))
    assert stat(crawler, "skipped/binary") == 1 and stat(crawler, "pages") is None


def test_an_explicit_response_encoding_beats_the_header():
    # what rendering middlewares produce: a UTF-8 DOM under the site's original headers
    crawler, mw = downloader_mw()
    body = ARTICLE.replace(b"first paragraph", "café crème".encode("utf-8"))
    request, resp = response(body=body, headers={"Content-Type": "text/html; charset=iso-8859-1"})
    resolve(mw.process_response(request, resp))
    assert any("café crème" in n.content for n in resp.meta[META_KEY].nodes)


def test_error_statuses_the_spider_handles_are_serialised():
    crawler, mw = downloader_mw()
    request, resp = response(status=404, meta={"handle_httpstatus_list": [404]})
    resolve(mw.process_response(request, resp))
    assert resp.meta[META_KEY].nodes
    crawler, mw = downloader_mw(HTTPERROR_ALLOWED_CODES=[410, 451])
    request, resp = response(status=410)
    resolve(mw.process_response(request, resp))
    assert resp.meta[META_KEY].nodes


@pytest.mark.parametrize("settings", [{}, {"HTTPERROR_ALLOWED_CODES": [500]}, {"HTTPERROR_ALLOW_ALL": True},
                                      {"HTTPERROR_ALLOWED_CODES": "500,404", "HTTPERROR_ALLOW_ALL": False}])
@pytest.mark.parametrize("spider_list", [None, [404]])
@pytest.mark.parametrize("meta", [{}, {"handle_httpstatus_list": [404]}, {"handle_httpstatus_list": []},
                                  {"handle_httpstatus_all": True}])
def test_error_statuses_are_serialised_exactly_when_httperror_middleware_lets_them_through(settings, spider_list,
                                                                                            meta):
    # The rule is Scrapy's own: a spider's list replaces HTTPERROR_ALLOWED_CODES, a request's list beats
    # HTTPERROR_ALLOW_ALL. An error page the spider never sees must not be serialised (nor get an item).
    from scrapy import Spider
    from scrapy.spidermiddlewares.httperror import HttpError, HttpErrorMiddleware

    attrs = {"name": "s"} if spider_list is None else {"name": "s", "handle_httpstatus_list": spider_list}
    spidercls = type("S", (Spider,), attrs)
    for status in (404, 500):
        crawler = get_crawler(spidercls, settings_dict={"EDREW_THREADS": 0, **settings})
        crawler.spider = crawler._create_spider()
        mw = EdrewDownloaderMiddleware.from_crawler(crawler)
        request, resp = response(status=status, meta=dict(meta))
        try:
            HttpErrorMiddleware.from_crawler(crawler).process_spider_input(resp)
            scrapy_lets_it_through = True
        except HttpError:
            scrapy_lets_it_through = False
        resolve(mw.process_response(request, resp))
        assert (META_KEY in resp.meta) is scrapy_lets_it_through, (status, settings, spider_list, meta)


# ---------------------------------------------------------------- the bundled spider

def test_spider_arguments_and_start_requests():
    spider = EdrewSpider(urls="http://a.example:8080/x, http://b.example/", max_pages="3")
    assert spider.allowed_domains == ["a.example", "b.example"]
    urls = [r.url for r in spider.start_requests()]
    assert urls[:2] == ["http://a.example:8080/x", "http://b.example/"]
    assert "http://a.example:8080/robots.txt" in urls and "http://b.example/sitemap.xml" in urls
    with pytest.raises(ValueError, match="urls="):
        EdrewSpider()
    for bad in ("abc", "-2"):
        with pytest.raises(ValueError, match="max_pages must be"):
            EdrewSpider(urls="http://a.example/", max_pages=bad)
    assert EdrewSpider(urls="http://a.example/", sitemaps="0").follow_sitemaps is False


def test_spider_arguments_as_people_write_them():
    # spaces between URLs; allowed_domains with a port, a scheme, a leading dot, capitals or non-ASCII
    # letters all name the bare host OffsiteMiddleware matches (an IDN in its IDNA form, as requests go)
    spider = EdrewSpider(urls="http://a.example/ http://bücher.example/x")
    assert spider.urls == ["http://a.example/", "http://bücher.example/x"]
    assert spider.allowed_domains == ["a.example", "xn--bcher-kva.example"]
    for written in ("Example.COM", ".example.com", "example.com:8080", "https://example.com/"):
        assert EdrewSpider(urls="http://www.example.com/", allowed_domains=written).allowed_domains == ["example.com"]
    with pytest.raises(ValueError, match="outside allowed_domains=example.org: http://www.example.com/"):
        EdrewSpider(urls="http://www.example.com/", allowed_domains="example.org")


def test_spider_requests_only_http_pages_and_never_makes_items_of_robots_or_sitemaps():
    spider = EdrewSpider(urls="http://a.example/")
    body = (b"<html><body><a href='file://a.example/etc/passwd'>f</a><a href='ftp://a.example/x'>x</a>"
            b"<a href='/ok'>ok</a></body></html>")
    page = HtmlResponse("http://a.example/", body=body, encoding="utf-8")
    assert [r.url for r in spider.parse(page)] == ["http://a.example/ok"]
    not_pages = [r for r in spider.start_requests() if r.callback != spider.parse]
    assert not_pages and all(r.meta.get("edrew") is False for r in not_pages)  # the add-on's opt-out


def test_spider_skips_a_broken_sitemap_with_a_warning(caplog):
    spider = EdrewSpider(urls="http://a.example/")
    late = (b'<?xml version="1.0"?><!--' + b"x" * 5000 + b'--><urlset xmlns="http://www.sitemaps.org/'
            b'schemas/sitemap/0.9"><url><loc>/late.html</loc></url></urlset>')
    assert [r.url for r in spider.parse_sitemap(Response("http://a.example/s.xml", body=late))] == \
        ["http://a.example/late.html"]
    with caplog.at_level(logging.WARNING):
        broken = b"\x1f\x8b\x08\x00" + b"not deflate data" * 8  # (a gzip cut short is read as far as it goes)
        assert list(spider.parse_sitemap(Response("http://a.example/s.xml.gz", body=broken))) == []
    assert "Skipped the sitemap http://a.example/s.xml.gz" in caplog.text


def test_spider_follows_links_in_domain_up_to_max_pages():
    spider = EdrewSpider(urls="http://a.example/", max_pages="3")
    list(spider.start_requests())
    body = (b"<html><body><a href='/one'>1</a><a href='http://other.example/'>o</a><a href='/two'>2</a>"
            b"<a href='/three'>3</a><a href='/one#frag'>again</a></body></html>")
    page = HtmlResponse("http://a.example/", body=body, encoding="utf-8")
    assert [r.url for r in spider.parse(page)] == ["http://a.example/one", "http://a.example/two"]


def test_max_pages_counts_every_page_request_whatever_comes_of_it(caplog):
    from scrapy.exceptions import IgnoreRequest
    from scrapy.spidermiddlewares.httperror import HttpError
    from twisted.python.failure import Failure

    spider = EdrewSpider(urls="http://a.example/", max_pages="3")
    list(spider.start_requests())  # the start page is the first request
    body = b"".join(b"<a href='/%d'>%d</a>" % (i, i) for i in range(1, 6))
    page = HtmlResponse("http://a.example/", body=b"<html><body>" + body + b"</body></html>", encoding="utf-8")
    assert [r.url for r in spider.parse(page)] == ["http://a.example/1", "http://a.example/2"]
    # a failed request gives no request back: the crawl stays bounded when every link is a 404
    forbidden = Failure(IgnoreRequest("Forbidden by robots.txt"))  # what RobotsTxtMiddleware raises
    assert spider.page_failed(forbidden) is None
    not_found = Failure(HttpError(HtmlResponse("http://a.example/2", status=404), "Ignoring non-200 response"))
    with caplog.at_level(logging.INFO):
        assert spider.page_failed(not_found) is None
    assert "Ignoring response <404 http://a.example/2>" in caplog.text  # as Scrapy logs it without an errback
    with caplog.at_level(logging.ERROR):
        assert spider.page_failed(Failure(ConnectionRefusedError("refused"))) is None
    assert "Error downloading" in caplog.text and "refused" in caplog.text
    assert list(spider.parse(page)) == []


def test_max_depth_follows_links_as_deep_as_depth_limit_would():
    spider = EdrewSpider(urls="http://a.example/", max_depth="1")
    page = b"<html><body><a href='/next'>next</a></body></html>"
    start = HtmlResponse("http://a.example/", body=page, encoding="utf-8",
                         request=Request("http://a.example/", meta={"depth": 0}))
    assert [r.url for r in spider.parse(start)] == ["http://a.example/next"]
    deeper = HtmlResponse("http://a.example/next", body=page.replace(b"/next", b"/last"), encoding="utf-8",
                          request=Request("http://a.example/next", meta={"depth": 1}))
    assert list(spider.parse(deeper)) == []
    assert EdrewSpider(urls="http://a.example/").max_depth is None
    assert EdrewSpider(urls="http://a.example/", max_depth="0").max_depth == 0
    for bad in ("x", "-1", "1.5"):
        with pytest.raises(ValueError, match="max_depth must be"):
            EdrewSpider(urls="http://a.example/", max_depth=bad)


def test_spider_leaves_json_and_xml_pages_alone():
    spider = EdrewSpider(urls="http://a.example/")
    for cls, ctype, body in [(JsonResponse, "application/json", b'{"a": "<a href=/x>x</a>"}'),
                             (XmlResponse, "text/xml", b"<r><a href='/x'>x</a></r>")]:
        page = cls("http://a.example/data", body=body, headers={"Content-Type": ctype})
        assert list(spider.parse(page)) == []


def test_spider_reads_robots_and_sitemaps_with_relative_locations():
    spider = EdrewSpider(urls="http://a.example/")
    robots = TextResponse("http://a.example/robots.txt", body=b"User-agent: *\nSitemap: /sitemap.xml\n",
                          encoding="utf-8")
    assert [r.url for r in spider.parse_robots(robots)] == ["http://a.example/sitemap.xml"]
    sitemap = (b'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
               b"<url><loc>/news/a.html</loc></url><url><loc>http://other.example/b</loc></url></urlset>")
    out = list(spider.parse_sitemap(Response("http://a.example/sitemap.xml", body=sitemap)))
    assert [r.url for r in out] == ["http://a.example/news/a.html"]
    index = (b'<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
             b"<sitemap><loc>/sitemap-news.xml</loc></sitemap></sitemapindex>")
    out = list(spider.parse_sitemap(Response("http://a.example/sitemap.xml", body=index)))
    assert [(r.url, r.callback) for r in out] == [("http://a.example/sitemap-news.xml", spider.parse_sitemap)]
