"""The scoring stage in process, with the shipped model: items, builder, threshold, errors, batching."""
from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import asdict

import pytest
from conftest import DEMO_SITE
from scrapy import Request
from scrapy.http import HtmlResponse
from scrapy.utils.test import get_crawler

from edrew_scrapy.extract import extract, override_region_share
from edrew_scrapy.model.files import ModelError
from edrew_scrapy.model.scorer import load_model
from edrew_scrapy.scrapy import EdrewDownloaderMiddleware, EdrewSpiderMiddleware, NodeItem, PageContext, PageItem
from edrew_scrapy.scrapy.meta import EXTRACTION_KEY, ITEMS_SENT_KEY, META_KEY
from edrew_scrapy.scrapy.scoring import ScoringService
from edrew_scrapy.scrapy.settings import EdrewSettings
from edrew_scrapy.serializer import serialize

PAGES = ["news/council-approves-riverside-bike-lanes.html", "blog/how-we-built-our-flood-map.html",
         "shop/riverside-through-the-seasons.html", "help/managing-your-subscription.html"]


@pytest.fixture(scope="module")
def scorer():
    return load_model()


def middleware(scorer, **settings):
    crawler = get_crawler(settings_dict=settings)
    conf = EdrewSettings.from_settings(crawler.settings)
    return crawler, EdrewSpiderMiddleware(crawler, conf, ScoringService(crawler, conf, scorer))


def responses(paths=PAGES):
    out = []
    for path in paths:
        url = f"http://demo.test/{path}"
        body = (DEMO_SITE / path).read_bytes() if (DEMO_SITE / path).exists() else path.encode()
        request = Request(url)
        request.meta[META_KEY] = serialize(body, url=url)
        out.append(HtmlResponse(url, body=body, encoding="utf-8", request=request))
    return out


def run(mw, resps, own=()):
    """Each response through the downloader middleware (which scores it) and then process_spider_output,
    concurrently, as Scrapy does; its outputs."""
    downloader = EdrewDownloaderMiddleware(mw.crawler, mw.conf, mw.scoring)

    async def spider_output():
        for item in own:
            yield item

    async def one(resp):
        assert await downloader.process_response(resp.request, resp) is resp
        mw.process_spider_input(resp)  # the response reaches its callback
        return [out async for out in mw.process_spider_output(resp, spider_output())]

    async def main():
        return await asyncio.gather(*(one(r) for r in resps))

    return asyncio.run(main())


def stat(crawler, key):
    return crawler.stats.get_value("edrew/" + key)


def test_page_items_hold_what_extract_keeps(scorer):
    crawler, mw = middleware(scorer)
    resps = responses()
    own = {"mine": 1}
    results = run(mw, resps, own=[own])
    expected = extract([r.meta[META_KEY] for r in resps], scorer=scorer)
    for outputs, resp, ext in zip(results, resps, expected):
        assert outputs[0] is own  # the spider's output first, untouched
        assert len(outputs) == 2 and isinstance(outputs[1], PageItem)
        item = outputs[1]
        assert item.url == resp.url and item.title == ext.title
        assert item.text == "\n".join(n.content for n in ext.nodes)
        assert [n["path"] for n in item.nodes] == [n.path for n in ext.nodes]
    assert stat(crawler, "items") == len(resps)
    assert stat(crawler, "nodes") == sum(len(r.meta[META_KEY].nodes) for r in resps)
    assert stat(crawler, "relevant_nodes") == sum(len(e.nodes) for e in expected)
    article = results[0][1]
    assert "Riverside council voted nine to four" in article.text
    assert "Accept all cookies" not in article.text
    # EDREW_METADATA (on by default), in this process's threads as EDREW_WORKERS = 0 does it
    assert article.headline == "Council approves protected bike lanes on Quay Road"
    assert article.title.endswith("| The Riverside Gazette")  # the raw <title> stays
    assert (article.date_published, article.language, article.author) == ("2026-03-03", "en", ["Maya Okonkwo"])
    assert article.description.startswith("Riverside council voted 9-4") and article.page_type == "article"
    assert 0 < article.page_type_probability <= 1
    assert not any(key.startswith("edrew/metadata/") for key in crawler.stats.get_stats())


def test_metadata_off_leaves_the_fields_empty(scorer):
    _, mw = middleware(scorer, EDREW_METADATA=False)
    [[item]] = run(mw, responses(PAGES[:1]))
    assert item.text and item.headline is None and item.author == [] and item.page_type is None


def test_pages_reach_the_spider_scored_and_its_output_never_waits(scorer):
    # Scrapy feeds each response's output to CONCURRENT_ITEMS workers: an output that waited for the
    # model would keep all of them waiting, so the downloader middleware scores the page before.
    crawler, mw = middleware(scorer)
    [resp] = responses(PAGES[:1])
    run(mw, [resp])
    assert resp.meta[EXTRACTION_KEY].nodes and stat(crawler, "items") == 1

    async def nothing():
        return
        yield

    resp.meta.pop(ITEMS_SENT_KEY)  # a page's items leave once: run() above already sent them
    outputs, output = [], mw.process_spider_output(resp, nothing())
    while True:
        step = output.__anext__()
        try:
            step.send(None)
        except StopIteration as done:
            outputs.append(done.value)
            continue
        except StopAsyncIteration:
            break
        step.close()
        raise AssertionError("process_spider_output waited for something")
    assert len(outputs) == 1 and isinstance(outputs[0], PageItem)


def test_node_items_scored_on_the_event_loop_thread(scorer):
    crawler, mw = middleware(scorer, EDREW_ITEMS="node", EDREW_THREADS=0)
    [outputs] = run(mw, responses(PAGES[:1]))
    assert outputs and all(isinstance(item, NodeItem) for item in outputs)
    assert len(outputs) == stat(crawler, "relevant_nodes") == stat(crawler, "items")
    assert any("Riverside council voted nine to four" in item.content for item in outputs)
    assert set(asdict(outputs[0])) == {"url", "title", "content", "score", "path", "index", "images", "page_type"}
    assert {item.page_type for item in outputs} == {"article"}


def test_threshold_zero_keeps_every_node_outside_boilerplate(scorer):
    crawler, mw = middleware(override_region_share(load_model(), 0), EDREW_ITEMS="node", EDREW_THRESHOLD=0.0)
    resp = responses(PAGES[:1])[0]
    [outputs] = run(mw, [resp])
    nodes = resp.meta[META_KEY].nodes
    # the demo article has a cookie-consent dialog, a menu, a sidebar and a site footer: never relevant,
    # whatever the threshold
    boiler = [n for n in nodes if n.boilerplate]
    assert {n.boilerplate for n in boiler} == {"dialog", "nav", "footer", "aside"}
    assert "cookie" in " ".join(n.content for n in boiler if n.boilerplate == "dialog").lower()
    assert len(outputs) == len(nodes) - len(boiler) and stat(crawler, "nodes") == len(nodes)
    assert not {o.index for o in outputs} & {n.index for n in boiler}


def test_builder_gets_contents_and_context(scorer):
    calls = []

    def builder(contents, context):
        calls.append((contents, context))
        if "flood-map" in context.url:
            return None
        if "shop" in context.url:
            return [{"part": i, "text": c} for i, c in enumerate(contents[:2])]
        return {"url": context.url, "first": contents[0], "n": len(contents)}

    crawler, mw = middleware(scorer, EDREW_BUILDER=builder)
    resps = responses(PAGES[:3])
    results = run(mw, resps)
    assert len(calls) == 3
    contents, context = calls[0]
    assert isinstance(context, PageContext) and context.response is resps[0]
    assert context.page is resps[0].meta[META_KEY]
    assert contents == [n.content for n in context.extraction.nodes]
    assert results[0] == [{"url": resps[0].url, "first": contents[0], "n": len(contents)}]
    assert results[1] == []
    assert [item["part"] for item in results[2]] == [0, 1]
    assert stat(crawler, "items") == 3 and stat(crawler, "skipped/builder-empty") == 1


def test_a_failing_builder_costs_one_page(scorer, caplog):
    def builder(contents, context):
        if "flood-map" in context.url:
            raise RuntimeError("builder bug")
        if "shop" in context.url:
            return "not an item"
        return {"url": context.url}

    crawler, mw = middleware(scorer, EDREW_BUILDER=builder)
    with caplog.at_level(logging.ERROR):
        results = run(mw, responses(PAGES[:3]))
    assert results[0] == [{"url": "http://demo.test/" + PAGES[0]}] and results[1] == results[2] == []
    assert stat(crawler, "errors") == 2
    logged = " ".join(r.getMessage() for r in caplog.records)
    assert "flood-map" in logged and "builder bug" in logged and "riverside-through-the-seasons" in logged


def test_an_error_page_sent_to_its_errback_gets_no_item(scorer):
    # HttpErrorMiddleware (or any input check before ours) rejected the response: process_spider_input
    # never ran for it, and the errback's output still comes through process_spider_output.
    crawler, mw = middleware(scorer)
    [resp] = responses(PAGES[:1])
    downloader = EdrewDownloaderMiddleware(mw.crawler, mw.conf, mw.scoring)

    async def errback_output():
        yield {"failed": resp.url}

    async def main():
        await downloader.process_response(resp.request, resp)
        return [out async for out in mw.process_spider_output(resp, errback_output())]

    assert asyncio.run(main()) == [{"failed": resp.url}]
    assert resp.meta[EXTRACTION_KEY].nodes and stat(crawler, "items") is None


def test_a_callback_that_raises_keeps_its_page_item(scorer):
    crawler, mw = middleware(scorer)
    [resp] = responses(PAGES[:1])
    downloader = EdrewDownloaderMiddleware(mw.crawler, mw.conf, mw.scoring)

    async def callback_output():
        yield {"own": 1}
        raise KeyError("spider bug")

    async def main():
        await downloader.process_response(resp.request, resp)
        mw.process_spider_input(resp)
        outputs = []
        with pytest.raises(KeyError, match="spider bug"):  # still Scrapy's to handle and log
            async for out in mw.process_spider_output(resp, callback_output()):
                outputs.append(out)
        return outputs

    outputs = asyncio.run(main())
    assert outputs[0] == {"own": 1} and isinstance(outputs[1], PageItem) and len(outputs) == 2
    assert stat(crawler, "items") == 1


def test_the_same_error_on_every_page_logs_one_traceback(scorer, caplog):
    def builder(contents, context):
        raise RuntimeError("builder bug")

    crawler, mw = middleware(scorer, EDREW_BUILDER=builder)
    with caplog.at_level(logging.ERROR):
        results = run(mw, responses())
    assert results == [[]] * len(PAGES) and stat(crawler, "errors") == len(PAGES)
    errors = [r for r in caplog.records if "builder bug" in r.getMessage()]
    assert len(errors) == len(PAGES)  # each page named
    assert sum(r.exc_info is not None for r in errors) == 1


def test_the_downloader_middleware_finds_the_scoring_service_through_the_crawler():
    # No module-level registry (one kept every finished crawler, its stats and its model alive): the
    # downloader middleware asks the crawler for the spider middleware once the engine exists.
    async def build():  # as Crawler.crawl builds them, in a running loop
        crawler = get_crawler(settings_dict={"ADDONS": {"edrew_scrapy.Addon": 500}, "EDREW_WORKERS": 0})
        crawler._apply_settings()
        crawler.spider = crawler._create_spider()
        crawler.engine = crawler._create_engine()
        return crawler

    crawler = asyncio.run(build())
    downloader = crawler.get_downloader_middleware(EdrewDownloaderMiddleware)
    spider_mw = crawler.get_spider_middleware(EdrewSpiderMiddleware)
    assert downloader.scoring() is spider_mw.scoring and spider_mw.scoring.scorer is not None
    [resp] = responses(PAGES[:1])
    resp.request.meta.clear()
    assert asyncio.run(downloader.process_response(resp.request, resp)) is resp
    assert resp.meta[EXTRACTION_KEY].nodes
    spider_mw.scoring.spider_closed(None)


class BreaksOnOnePage:
    """The shipped scorer, except that any batch holding the page named `bad` raises."""

    def __init__(self, scorer, bad):
        self.scorer, self.bad, self.batches = scorer, bad, []

    def __getattr__(self, name):
        return getattr(self.scorer, name)

    def score(self, pages, **options):
        self.batches.append(len(pages))
        if any(self.bad in (p.url or "") for p in pages):
            raise ValueError("model exploded")
        return self.scorer.score(pages, **options)


def test_one_bad_page_loses_only_its_own_item(scorer, caplog):
    broken = BreaksOnOnePage(scorer, "flood-map")
    crawler, mw = middleware(broken)
    with caplog.at_level(logging.ERROR):
        results = run(mw, responses())
    assert [len(outputs) for outputs in results] == [1, 0, 1, 1]
    assert stat(crawler, "errors") == 1 and stat(crawler, "items") == 3
    [record] = [r for r in caplog.records if "EDREW could not score" in r.getMessage()]
    assert "blog/how-we-built-our-flood-map.html" in record.getMessage()
    assert "model exploded" in record.getMessage()


class HoldsTheFirstBatch(BreaksOnOnePage):
    """Keeps the first model call busy until the other pages wait in the queue: on a loaded machine
    the serializer thread could otherwise hand them over one by one, each in a batch of its own."""

    def __init__(self, scorer, total):
        super().__init__(scorer, "no page has this name")
        self.total, self.batcher = total, None

    def score(self, pages, **options):
        if not self.batches:  # the first batch may hold one page or more, as they arrived
            deadline = time.monotonic() + 30
            while len(self.batcher._queue) < self.total - len(pages) and time.monotonic() < deadline:
                time.sleep(0.01)
        return super().score(pages, **options)


def test_pages_are_scored_in_batches(scorer):
    many = responses(PAGES + PAGES[:3])
    spy = HoldsTheFirstBatch(scorer, total=len(many))
    crawler, mw = middleware(spy, EDREW_BATCH_PAGES=3)
    spy.batcher = mw.scoring.batcher
    results = run(mw, many)
    assert all(len(outputs) == 1 for outputs in results)
    # Whatever the first batch took, the pages that waited behind it went in full batches of 3.
    assert sum(spy.batches) == len(many) and len(spy.batches) == 3 and spy.batches[1] == 3, spy.batches


def test_a_model_that_cannot_load_raises_in_from_crawler(tmp_path, caplog):
    # In process; the same with a worker process is in test_scrapy_workers.py.
    crawler = get_crawler(settings_dict={"EDREW_MODEL": str(tmp_path / "missing"), "EDREW_WORKERS": 0})
    with caplog.at_level(logging.ERROR), pytest.raises(ModelError):
        EdrewSpiderMiddleware.from_crawler(crawler)
    [record] = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert str(tmp_path / "missing") in record.getMessage()


def test_pages_waiting_for_the_model_hold_no_concurrent_request(scorer):
    """While pages are serialised and scored, Scrapy's downloader may start as many more requests (up to
    CONCURRENT_REQUESTS more), and its limit is back once they are done."""
    from scrapy.core.engine import ExecutionEngine

    crawler, mw = middleware(scorer, CONCURRENT_REQUESTS=2)

    async def main():
        crawler.engine = ExecutionEngine(crawler, lambda _: None)  # in a running loop, as a crawl builds it
        downloader = crawler.engine.downloader
        before = downloader.total_concurrency
        dmw = EdrewDownloaderMiddleware(crawler, mw.conf, mw.scoring)
        tasks = [asyncio.ensure_future(dmw.process_response(r.request, r)) for r in responses()]
        await asyncio.sleep(0)  # each task runs up to its first await: all four pages are waiting
        during = downloader.total_concurrency
        done = await asyncio.gather(*tasks)
        return before, during, downloader.total_concurrency, done

    before, during, after, done = asyncio.run(main())
    assert (before, during, after) == (2, 4, 2)  # four pages waiting, raised by at most CONCURRENT_REQUESTS
    assert all(EXTRACTION_KEY in r.meta for r in done)
