"""The leased queue, the lease bookkeeping, the feed side and the merge, against a real redis-server
(tests/_redis_helpers.py) and without a crawl; the crawls are in tests/test_distributed_crawl.py."""
from __future__ import annotations

import json
import time
from contextlib import contextmanager

import pytest
import scrapy
from _redis_helpers import RedisServer, require_redis_server
from scrapy.settings import Settings
from scrapy.utils.test import get_crawler

from edrew_scrapy.distributed import LeaseQueue, RedisAddon
from edrew_scrapy.distributed.feeds import (
    INNER_FILTER_OPTION,
    TOKEN_OPTION,
    ExportedOnceFilter,
    FlushingFileFeedStorage,
)
from edrew_scrapy.distributed.leases import TOKEN_SETTING, book_for, export_key
from edrew_scrapy.distributed.merge import merge_feeds
from edrew_scrapy.distributed.queue import LEASE_META
from edrew_scrapy.distributed.settings import RedisSettings
from edrew_scrapy.scrapy import NodeItem, PageItem


class Spider(scrapy.Spider):
    name = "s"

    def follow_up(self, failure):
        """An errback with output of its own: an item and a request."""
        yield page(failure.request.url)
        yield scrapy.Request("http://a/2", meta=dict(failure.request.meta))

    def retry(self, failure):
        """An errback that tries its request again, the usual way."""
        yield failure.request.replace(dont_filter=True)

    def fail(self, failure):
        raise ValueError("errback failed")

    async def follow_up_async(self, failure):
        yield page(failure.request.url)
        yield scrapy.Request("http://a/2")

    async def follow_up_coroutine(self, failure):
        return [page(failure.request.url), scrapy.Request("http://a/2")]


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory):
    with RedisServer(require_redis_server(), tmp_path_factory.mktemp("redis")) as server:
        yield server


@pytest.fixture
def redis(redis_server):
    client = redis_server.client()
    client.flushall()
    return client


def queue(redis, lease_ms=60_000) -> LeaseQueue:
    q = LeaseQueue(redis, Spider(), "%(spider)s:requests")
    q.lease_ms = lease_ms
    return q


def page(url: str) -> PageItem:
    return PageItem(url=url, title="T", text="text", nodes=[{"content": "text", "score": 0.9, "path": "/p[1]"}])


@contextmanager
def _leasing_scheduler(redis_server):
    """A crawler wired as Scrapy wires it (the Redis add-on, its spider) and its leasing scheduler, open
    on the test's redis-server; closed at the end."""
    from edrew_scrapy.distributed.scheduler import LeasingScheduler

    crawler = get_crawler(Spider, {"REDIS_URL": redis_server.url, "ADDONS": {RedisAddon: 510}})
    spider = Spider.from_crawler(crawler)
    crawler.spider = spider
    scheduler = LeasingScheduler.from_crawler(crawler)
    scheduler.open(spider)
    try:
        yield crawler, spider, scheduler
    finally:
        scheduler.close("finished")


# ------------------------------------------------------------------ the queue

def test_a_leased_request_is_held_not_popped_and_priority_comes_first(redis):
    q = queue(redis)
    for i, priority in enumerate((0, 5, -3)):
        q.push(scrapy.Request(f"http://a/{i}", priority=priority))
    first = q.pop()
    assert first.url == "http://a/1" and first.meta[LEASE_META]
    assert q.counts().pending == 2 and q.counts().leased == 1 and len(q) == 2
    assert redis.hexists(q.leased_key, first.meta[LEASE_META])  # the request itself is kept in Redis
    assert q.ack(first.meta[LEASE_META], [export_key(page("http://a/1"))], "s:exported")
    assert q.counts().leased == 0 and not redis.hlen(q.leased_key) and not redis.hlen(q.scores_key)
    assert redis.smembers("s:exported") == {b"page\x1fhttp://a/1"}
    assert [q.pop().url for _ in range(2)] == ["http://a/0", "http://a/2"] and q.pop() is None


def test_an_expired_lease_goes_back_with_its_priority_and_a_late_ack_says_so(redis):
    q = queue(redis, lease_ms=1500)
    q.push(scrapy.Request("http://a/low", priority=-1))
    q.push(scrapy.Request("http://a/high", priority=3))
    taken = q.pop()
    assert q.requeue_expired() == 0  # not expired yet
    deadline = time.monotonic() + 10
    while not q.requeue_expired():
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert q.counts().pending == 2 and q.counts().leased == 0
    assert q.pop().url == "http://a/high"  # back in its place
    assert q.ack(taken.meta[LEASE_META]) is False  # it had gone back: the page may be fetched again


def test_renewal_keeps_a_lease_and_release_gives_it_back_now(redis):
    q = queue(redis, lease_ms=3000)
    q.push(scrapy.Request("http://a/1"))
    q.push(scrapy.Request("http://a/2"))
    one, two = q.pop(), q.pop()
    first_deadline = redis.zscore(q.leases_key, one.meta[LEASE_META])
    time.sleep(0.01)
    assert q.renew([one.meta[LEASE_META]]) == 1
    assert redis.zscore(q.leases_key, one.meta[LEASE_META]) > first_deadline
    deadline = time.monotonic() + 60
    while q.counts().pending == 0:  # renew `one` until `two` has expired and gone back
        assert time.monotonic() < deadline
        q.renew([one.meta[LEASE_META]])
        q.requeue_expired()
        time.sleep(0.05)
    assert q.counts().leased == 1 and q.pop().url == "http://a/2"
    assert q.release([one.meta[LEASE_META]]) == 1 and q.counts().pending == 1
    assert q.renew([one.meta[LEASE_META], two.meta[LEASE_META]]) == 0  # neither is held any more
    assert q.release([]) == 0 and q.renew([]) == 0


def test_two_consumers_never_get_the_same_request(redis):
    a, b = queue(redis), queue(redis)
    for i in range(200):
        a.push(scrapy.Request(f"http://a/{i}"))
    got_a, got_b = [], []
    while True:
        ra, rb = a.pop(), b.pop()
        if ra is None and rb is None:
            break
        got_a += [ra.url] if ra else []
        got_b += [rb.url] if rb else []
    assert not set(got_a) & set(got_b) and len(got_a) + len(got_b) == 200
    assert a.counts().leased == 200 and a.started()
    a.clear()
    assert not a.started() and a.counts().drained


def test_a_pushed_request_keeps_its_fields_through_redis(redis):
    q = queue(redis)
    q.push(scrapy.Request("http://a/x", method="POST", body=b"q=1", headers={"X-A": "b"},
                          meta={"depth": 2}, priority=1, dont_filter=True, callback=None))
    got = q.pop()
    assert (got.method, got.body, got.headers[b"X-A"], got.meta["depth"], got.dont_filter) == \
        ("POST", b"q=1", b"b", 2, True)


# ------------------------------------------------------------------ settings and the add-on

def test_settings_are_checked_with_the_setting_named():
    assert RedisSettings.from_settings(Settings()).lease_timeout == 60
    for name, value in (("EDREW_REDIS_LEASE_TIMEOUT", "0"), ("EDREW_REDIS_LEASE_TIMEOUT", "soon"),
                        ("EDREW_REDIS_POLL_INTERVAL", "-1"), ("EDREW_REDIS_EXPORTED_KEY", "")):
        with pytest.raises(ValueError, match=name):
            RedisSettings.from_settings(Settings({name: value}))
    with pytest.raises(ValueError, match="must not exceed"):
        RedisSettings.from_settings(Settings({"EDREW_REDIS_LEASE_TIMEOUT": 1, "EDREW_REDIS_POLL_INTERVAL": 2}))


def test_the_addon_sets_the_scheduler_middlewares_and_feed_side_and_the_project_wins():
    settings = Settings({"FEEDS": {"out.jsonl": {"format": "jsonlines", "item_filter": "my.Filter"}},
                         "EDREW_REDIS_LEASE_TIMEOUT": 9})
    RedisAddon().update_settings(settings)
    assert settings["SCHEDULER"].endswith("LeasingScheduler")
    assert settings["DUPEFILTER_CLASS"] == "scrapy_redis.dupefilter.RFPDupeFilter"
    assert settings.getbool("SCHEDULER_PERSIST") and settings.getint("EDREW_REDIS_LEASE_TIMEOUT") == 9
    feed = settings.getdict("FEEDS")["out.jsonl"]
    assert feed["item_filter"] is ExportedOnceFilter and feed[INNER_FILTER_OPTION] == "my.Filter"
    assert feed[TOKEN_OPTION] == settings[TOKEN_SETTING]
    assert settings.getdict("FEED_STORAGES")["file"] is FlushingFileFeedStorage
    assert any("LeaseSpiderMiddleware" in str(k) for k in settings.getdict("SPIDER_MIDDLEWARES"))
    own = Settings({"FEED_STORAGES": {"file": "my.Storage"}, "EDREW_REDIS_ENABLED": False})
    RedisAddon().update_settings(own)
    assert own.get("SCHEDULER") != "edrew_scrapy.distributed.scheduler.LeasingScheduler"
    on = Settings({"FEED_STORAGES": {"file": "my.Storage"}})
    RedisAddon().update_settings(on)
    assert on.getdict("FEED_STORAGES")["file"] == "my.Storage"


def test_a_feed_write_reaches_the_file_before_the_feed_is_closed(tmp_path):
    path = tmp_path / "sub" / "feed.jsonl"
    handle = FlushingFileFeedStorage(str(path)).open(Spider())
    handle.write(b'{"url": "http://a/1"}\n')
    assert path.read_bytes() == b'{"url": "http://a/1"}\n'  # no close, no flush by the caller
    handle.close()


# ------------------------------------------------------------------ the book and the feed filter

def crawler_with_book(redis_server, redis):
    settings = {"REDIS_URL": redis_server.url, TOKEN_SETTING: f"t{time.monotonic_ns()}"}
    crawler = get_crawler(Spider, settings)
    book = book_for(crawler)
    q = queue(redis)
    book.queue, book.server, book.exported_key = q, redis, "s:exported"
    return crawler, book, q, settings[TOKEN_SETTING]


def test_a_lease_ends_when_its_items_are_out_and_adds_their_keys(redis_server, redis):
    crawler, book, q, _ = crawler_with_book(redis_server, redis)
    q.push(scrapy.Request("http://a/1"))
    request = q.pop()
    book.taken(request)
    response = scrapy.http.HtmlResponse("http://a/1", body=b"<p>x</p>", request=request)
    lease = book.lease_of(response)
    book.item_yielded(lease)
    book.item_yielded(lease)
    book.output_done(lease)
    book.item_done(page("http://a/1"), response)
    assert q.counts().leased == 1  # one item still in the pipelines
    book.item_done({"own": 1}, response, exception=ValueError())  # dropped
    assert q.counts().leased == 0 and crawler.stats.get_value("edrew/redis/leases/acked") == 1
    assert redis.smembers("s:exported") == {b"page\x1fhttp://a/1"}


def test_a_redirect_carrying_the_lease_ends_it_and_idle_ends_the_rest(redis_server, redis):
    crawler, book, q, _ = crawler_with_book(redis_server, redis)
    for i in range(2):
        q.push(scrapy.Request(f"http://a/{i}"))
    first, second = q.pop(), q.pop()
    book.taken(first)
    book.taken(second)
    book.continued(first.meta[LEASE_META])
    assert q.counts().leased == 1
    assert crawler.stats.get_value("edrew/redis/leases/continued") == 1
    child = scrapy.Request("http://a/child", meta=dict(second.meta))
    book.child(child, book.held[second.meta[LEASE_META]])
    assert LEASE_META not in child.meta  # a copied meta must not carry the lease on
    book.spider_idle(Spider())  # drained and started: no DontCloseSpider, the process may close
    assert q.counts().drained and not book.held
    assert crawler.stats.get_value("edrew/redis/leases/acked-when-idle") == 1


def test_the_feed_filter_holds_back_what_another_process_exported(redis_server, redis):
    crawler, book, q, token = crawler_with_book(redis_server, redis)
    redis.sadd("s:exported", export_key(page("http://a/1")))
    feed = ExportedOnceFilter({TOKEN_OPTION: token, INNER_FILTER_OPTION: None, "item_classes": []})
    assert not feed.accepts(page("http://a/1"))
    assert feed.accepts(page("http://a/2"))
    assert feed.accepts({"url": "http://a/1", "title": "the spider's own item"})
    assert crawler.stats.get_value("edrew/redis/already-exported") == 1
    node = NodeItem(url="http://a/3", title="T", content="c", score=0.9, path="/p[1]", index=4)
    assert export_key(node) == "node\x1fhttp://a/3\x1f4\x1f/p[1]"


def test_a_restarted_process_writes_an_item_to_its_feed_before_the_ack_marks_it_exported(redis_server, redis,
                                                                                        tmp_path):
    """A process restarted on its feed (appended to) makes its lease book while Scrapy builds the
    FeedExporter, which reads the feed back. The book must still acknowledge an item's lease after the
    feed has written the item: acknowledged first, the item's key would already be in the exported set
    when the feed's filter looks, and the item would reach no feed at all (issue #38)."""
    from scrapy import signals
    from scrapy.extensions.feedexport import FeedExporter

    from edrew_scrapy.distributed.scheduler import LeasingScheduler

    feed = tmp_path / "p0.jsonl"
    feed.write_bytes(json.dumps({"url": "http://a/0", "title": "T", "text": "t", "nodes": [{"content": "t"}]}).encode()
                     + b"\n")
    crawler = get_crawler(Spider, {"REDIS_URL": redis_server.url, "ADDONS": {RedisAddon: 510},
                                   "FEEDS": {str(feed): {"format": "jsonlines"}}})
    spider = Spider.from_crawler(crawler)
    crawler.spider = spider
    exporter = next(e for e in crawler.extensions.middlewares if isinstance(e, FeedExporter))
    scheduler = LeasingScheduler.from_crawler(crawler)
    scheduler.open(spider)
    try:
        exporter.open_spider(spider)
        scheduler.enqueue_request(scrapy.Request("http://a/1"))
        request = scheduler.next_request()
        response = scrapy.http.HtmlResponse("http://a/1", body=b"<p>x</p>", request=request)
        book = book_for(crawler)
        lease = book.lease_of(response)
        book.item_yielded(lease)
        book.output_done(lease)
        crawler.signals.send_catch_log(signals.item_scraped, item=page("http://a/1"), response=response, spider=spider)
        assert [record["url"] for record in map(json.loads, feed.read_bytes().splitlines())] == ["http://a/0",
                                                                                               "http://a/1"]
        assert redis.smembers("s:edrew:exported") == {b"page\x1fhttp://a/0", b"page\x1fhttp://a/1"}
        assert scheduler.queue.counts().drained and not book.held
        assert crawler.stats.get_value("edrew/redis/already-exported") is None
    finally:
        scheduler.close("finished")
        for slot in exporter.slots:
            if slot.file is not None:
                slot.file.close()


def test_the_items_of_a_callback_that_raised_hold_its_lease_until_they_are_out(redis_server, redis):
    """The page items of a callback that raised before any output reach the item pipelines from the
    EDREW middleware's process_spider_exception, announced by page_items_sent, not in the spider's
    output: the lease waits for them as for yielded items (issue #38: it ended with the exception)."""
    from scrapy import signals

    from edrew_scrapy.distributed.spidermiddleware import LeaseSpiderMiddleware
    from edrew_scrapy.scrapy.signals import page_items_sent

    with _leasing_scheduler(redis_server) as (crawler, spider, scheduler):
        scheduler.enqueue_request(scrapy.Request("http://a/1"))
        response = scrapy.http.HtmlResponse("http://a/1", body=b"<p>x</p>", request=scheduler.next_request())
        items = [page("http://a/1"), {"own": 1}]
        crawler.signals.send_catch_log(page_items_sent, items=items, response=response, spider=spider)
        LeaseSpiderMiddleware.from_crawler(crawler).process_spider_exception(response, ValueError("boom"), spider)
        assert scheduler.queue.counts().leased == 1  # both items still in the pipelines
        crawler.signals.send_catch_log(signals.item_scraped, item=items[0], response=response, spider=spider)
        assert scheduler.queue.counts().leased == 1
        crawler.signals.send_catch_log(signals.item_dropped, item=items[1], response=response, spider=spider,
                                       exception=ValueError("dropped"))
        assert scheduler.queue.counts().drained
        assert redis.smembers("s:edrew:exported") == {b"page\x1fhttp://a/1"}
        assert crawler.stats.get_value("edrew/redis/leases/acked") == 1


def test_the_output_of_an_errback_holds_the_lease_of_its_failed_download(redis_server, redis):
    """A failed download's errback output goes straight to the engine (no spider middleware sees it):
    its lease waits for the errback's items to leave the pipelines and its requests to be pushed
    (issue #38: it ended in process_exception, before the errback ran)."""
    from scrapy import signals
    from twisted.python.failure import Failure

    from edrew_scrapy.distributed.downloadermiddleware import LeaseDownloaderMiddleware

    with _leasing_scheduler(redis_server) as (crawler, spider, scheduler):
        scheduler.enqueue_request(scrapy.Request("http://a/1", errback=spider.follow_up))
        request = scheduler.next_request()
        error = ConnectionRefusedError("refused")
        assert LeaseDownloaderMiddleware.from_crawler(crawler).process_exception(request, error, spider) is None
        assert scheduler.queue.counts().leased == 1  # the errback has not run yet
        failure = Failure(error)
        failure.request = request  # as Scrapy's call_spider_async does
        output = iter(request.errback(failure))
        item = next(output)
        assert scheduler.queue.counts().leased == 1  # its item is in the pipelines
        crawler.signals.send_catch_log(signals.item_scraped, item=item, response=failure, spider=spider)
        follow_up = next(output)
        assert LEASE_META not in follow_up.meta  # a copied meta does not carry the lease on
        assert scheduler.queue.counts().leased == 1  # its request is not in Redis yet
        assert list(output) == []
        scheduler.enqueue_request(follow_up)
        counts = scheduler.queue.counts()
        assert (counts.leased, counts.pending) == (0, 1)
        assert redis.smembers("s:edrew:exported") == {b"page\x1fhttp://a/1"}
        assert crawler.stats.get_value("edrew/redis/leases/acked") == 1


def test_a_retry_from_an_errback_carries_the_spiders_errback_into_redis(redis_server, redis):
    """The lease's wrapper is the request's errback only until it runs: a retry the errback makes with
    request.replace() carries the spider's own method, which Redis can store (a closure could not be)."""
    from twisted.python.failure import Failure

    from edrew_scrapy.distributed.downloadermiddleware import LeaseDownloaderMiddleware

    with _leasing_scheduler(redis_server) as (crawler, spider, scheduler):
        scheduler.enqueue_request(scrapy.Request("http://a/1", errback=spider.retry))
        request = scheduler.next_request()
        LeaseDownloaderMiddleware.from_crawler(crawler).process_exception(request, TimeoutError(), spider)
        failure = Failure(TimeoutError())
        failure.request = request
        [again] = list(request.errback(failure))
        assert again.errback == spider.retry
        assert scheduler.enqueue_request(again)
        assert scheduler.queue.counts().leased == 0
        stored = scheduler.next_request()
        assert stored.url == "http://a/1" and stored.errback == spider.retry


@pytest.mark.parametrize("errback", ["follow_up_async", "follow_up_coroutine"])
def test_the_output_of_an_async_errback_holds_the_lease_too(redis_server, redis, errback):
    """An async generator or coroutine errback is followed as a generator one is."""
    import asyncio

    from scrapy import signals
    from scrapy.utils.spider import iterate_spider_output
    from twisted.python.failure import Failure

    from edrew_scrapy.distributed.downloadermiddleware import LeaseDownloaderMiddleware

    with _leasing_scheduler(redis_server) as (crawler, spider, scheduler):
        scheduler.enqueue_request(scrapy.Request("http://a/1", errback=getattr(spider, errback)))
        request = scheduler.next_request()
        LeaseDownloaderMiddleware.from_crawler(crawler).process_exception(request, TimeoutError(), spider)
        failure = Failure(TimeoutError())
        failure.request = request

        async def run():
            output = request.errback(failure)
            if asyncio.iscoroutine(output):
                output = iterate_spider_output(await output)
            return [out async for out in output] if hasattr(output, "__aiter__") else list(output)

        item, follow_up = asyncio.run(run())
        assert scheduler.queue.counts().leased == 1  # the item is in the pipelines, the request not pushed
        scheduler.enqueue_request(follow_up)
        assert scheduler.queue.counts().leased == 1
        crawler.signals.send_catch_log(signals.item_scraped, item=item, response=failure, spider=spider)
        assert scheduler.queue.counts().leased == 0
        assert redis.smembers("s:edrew:exported") == {b"page\x1fhttp://a/1"}


def test_an_errback_that_raises_or_a_request_without_one_ends_the_lease(redis_server, redis):
    """Without an errback the lease ends with the failed download; an errback that raises ends it
    too (nothing of it reaches the engine)."""
    from twisted.python.failure import Failure

    from edrew_scrapy.distributed.downloadermiddleware import LeaseDownloaderMiddleware

    with _leasing_scheduler(redis_server) as (crawler, spider, scheduler):
        middleware = LeaseDownloaderMiddleware.from_crawler(crawler)
        scheduler.enqueue_request(scrapy.Request("http://a/1"))
        scheduler.enqueue_request(scrapy.Request("http://a/2", errback=spider.fail))
        plain, with_errback = scheduler.next_request(), scheduler.next_request()
        middleware.process_exception(plain, ConnectionRefusedError("refused"), spider)
        assert scheduler.queue.counts().leased == 1
        middleware.process_exception(with_errback, ConnectionRefusedError("refused"), spider)
        assert scheduler.queue.counts().leased == 1
        with pytest.raises(ValueError):
            with_errback.errback(Failure(ConnectionRefusedError("refused")))
        assert scheduler.queue.counts().drained
        assert crawler.stats.get_value("edrew/redis/leases/acked") == 2


# ------------------------------------------------------------------ merging the feeds

def test_merge_keeps_each_page_once_every_own_record_and_skips_a_cut_line(tmp_path):
    def line(record):
        return json.dumps(record).encode() + b"\n"
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    p1, p2 = (json.loads(json.dumps(page(u).__dict__)) for u in ("http://a/1", "http://a/2"))
    a.write_bytes(line(p1) + line({"url": "http://a/1", "own": 1}) + line(p2)[:20])
    b.write_bytes(line(p1) + line(p2) + b"not json\n" + line({"url": "http://a/1", "own": 1}))
    result = merge_feeds([a, b], tmp_path / "out" / "all.jsonl")
    merged = [json.loads(x) for x in (tmp_path / "out" / "all.jsonl").read_text().splitlines()]
    assert [m["url"] for m in merged if "nodes" in m] == ["http://a/1", "http://a/2"]
    assert sum(1 for m in merged if "own" in m) == 2
    assert (result.records, result.duplicates, result.partial_lines, result.unreadable_lines) == (4, 1, 1, 1)


def test_edrew_merge_command(tmp_path, capsys):
    from conftest import cli
    feed = tmp_path / "a.jsonl"
    feed.write_text(json.dumps({"url": "u", "text": "t", "nodes": [1]}) + "\n")
    status, err = cli(capsys, "merge", "-o", str(tmp_path / "all.jsonl"), str(feed), str(feed))
    assert status == 0 and "1 duplicate" in err and (tmp_path / "all.jsonl").read_text().count("\n") == 1
    assert cli(capsys, "merge", "-o", str(feed), str(feed))[0] == 2
    assert cli(capsys, "merge", "-o", str(tmp_path / "x.jsonl"), str(tmp_path / "missing.jsonl"))[0] == 2


# ------------------------------------------------------------------ Redis away

DUPEFILTER = "scrapy_redis.dupefilter.RFPDupeFilter"  # as RedisAddon sets it

def test_no_redis_at_start_is_one_clear_error(caplog):
    import socket

    import redis as redis_py

    from edrew_scrapy.distributed import LeasingScheduler
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    crawler = get_crawler(Spider, {"REDIS_URL": f"redis://127.0.0.1:{port}/0", "DUPEFILTER_CLASS": DUPEFILTER,
                                   "REDIS_PARAMS": {"socket_connect_timeout": 2}})
    with pytest.raises(redis_py.ConnectionError):
        LeasingScheduler.from_crawler(crawler)
    errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert len(errors) == 1 and errors[0].startswith(f"EDREW cannot start: no Redis server at redis://127.0.0.1:{port}/0")
    caplog.clear()
    crawler = get_crawler(Spider, {"REDIS_URL": f"redis://:s3cret@127.0.0.1:{port}/0", "DUPEFILTER_CLASS": DUPEFILTER,
                                   "REDIS_PARAMS": {"socket_connect_timeout": 2}})
    with pytest.raises(redis_py.ConnectionError):
        LeasingScheduler.from_crawler(crawler)
    assert "s3cret" not in caplog.text and f"redis://***@127.0.0.1:{port}/0" in caplog.text


def test_a_push_while_redis_is_away_waits_and_the_lease_with_it(tmp_path):
    """redis-server stopped (SIGSTOP) under a leased response: the request it yields is kept, the
    scheduler takes nothing and reports work pending (the crawl neither ends nor crashes); once the
    server runs again the request is pushed and the lease ends."""
    import signal

    from edrew_scrapy.distributed import LeasingScheduler
    with RedisServer(require_redis_server(), tmp_path / "redis") as server:
        crawler = get_crawler(Spider, {"REDIS_URL": server.url, "DUPEFILTER_CLASS": DUPEFILTER,
                                       "REDIS_PARAMS": {"socket_timeout": 0.5, "socket_connect_timeout": 0.5,
                                                        "retry_on_timeout": False}})
        scheduler = LeasingScheduler.from_crawler(crawler)
        spider = Spider.from_crawler(crawler)
        scheduler.open(spider)
        try:
            assert scheduler.enqueue_request(scrapy.Request("http://a/1"))
            parent = scheduler.next_request()
            lease = scheduler.book.held[parent.meta[LEASE_META]]
            child = scrapy.Request("http://a/2")
            scheduler.book.child(child, lease)
            scheduler.book.output_done(lease)
            server.proc.send_signal(signal.SIGSTOP)
            try:
                assert scheduler.enqueue_request(child)  # kept, not lost
                assert scheduler.next_request() is None and scheduler.has_pending_requests()
                assert list(scheduler.book.unpushed) == [child] and lease.token in scheduler.book.held
            finally:
                server.proc.send_signal(signal.SIGCONT)
            scheduler.book.beat()
            assert not scheduler.book.unpushed and lease.token not in scheduler.book.held
            assert scheduler.next_request().url == "http://a/2"
            assert crawler.stats.get_value("edrew/redis/push-failed") == 1
        finally:
            scheduler.close("finished")


# ------------------------------------------------------------------ the edrew-redis spider

def test_edrew_redis_start_urls_as_pushed_and_bad_ones_counted(redis_server):
    from edrew_scrapy.spiders.edrew_redis import EdrewRedisSpider
    crawler = get_crawler(EdrewRedisSpider, {"REDIS_URL": redis_server.url})
    spider = EdrewRedisSpider.from_crawler(crawler)
    assert spider.redis_key == "edrew-redis:start_urls"
    assert spider.make_request_from_data(b" https://a.example/x\n").url == "https://a.example/x"
    request = spider.make_request_from_data(b'{"url": "http://b.example/"}')
    assert request.url == "http://b.example/" and not request.dont_filter  # the dupefilter sees start URLs
    for bad in (b"ftp://a.example/", b"not a url", b'{"url": 3}', b"{broken", b"http:///nohost"):
        assert spider.make_request_from_data(bad) is None
    assert crawler.stats.get_value("edrew/redis/bad-start-urls") == 5


def test_edrew_redis_follows_links_within_the_page_host_or_the_allowed_domains(redis_server):
    from scrapy.http import HtmlResponse

    from edrew_scrapy.spiders.edrew_redis import EdrewRedisSpider
    body = (b"<a href='/a'>a</a><a href='http://other.example/b'>b</a><a href='file:///etc/passwd'>c</a>"
            b"<a href='http://sub.site.example/d'>d</a>")
    response = HtmlResponse("http://site.example/", body=body)
    for domains, expected in ((None, ["http://site.example/a", "http://sub.site.example/d"]),
                              ("other.example", ["http://other.example/b"])):
        crawler = get_crawler(EdrewRedisSpider, {"REDIS_URL": redis_server.url})
        spider = EdrewRedisSpider.from_crawler(crawler, allowed_domains=domains)
        assert [r.url for r in spider.parse(response)] == expected


def test_without_the_redis_extra_the_project_still_loads_and_says_what_is_missing():
    """scrapy-redis not installed: Scrapy's spider loader still imports edrew_scrapy.spiders (so
    `scrapy crawl edrew` works), `edrew merge` works, and the Redis add-on names the extra to install."""
    import subprocess
    import sys
    from pathlib import Path

    code = """
import sys
sys.modules["scrapy_redis"] = None  # as if not installed
from scrapy.spiderloader import SpiderLoader
from scrapy.utils.project import get_project_settings
import json
print(json.dumps(SpiderLoader.from_settings(get_project_settings()).list()))
from edrew_scrapy.distributed.merge import merge_feeds
from scrapy.utils.misc import load_object
try:
    load_object("edrew_scrapy.distributed.RedisAddon")
except ImportError as exc:
    print(exc)
"""
    root = Path(__file__).resolve().parent.parent
    proc = subprocess.run([sys.executable, "-c", code], cwd=str(root), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    listed, error = proc.stdout.splitlines()[-2:]
    assert {"edrew", "edrew-redis"} <= set(json.loads(listed))
    assert "pip install 'edrew-scrapy[redis]'" in error


def test_a_feed_appended_to_is_read_back_its_cut_record_removed_and_its_pages_marked_exported(redis_server, redis,
                                                                                              tmp_path):
    crawler, book, q, _ = crawler_with_book(redis_server, redis)
    feed = tmp_path / "p0.jsonl"
    whole = (json.dumps({"url": "http://a/1", "title": "T", "text": "t", "nodes": [{"content": "t"}]}) + "\n"
             + json.dumps({"url": "http://a/1", "own": "a spider's item"}) + "\n").encode()
    feed.write_bytes(whole + b'{"url": "http://a/2", "title": "cut sh')
    storage = FlushingFileFeedStorage.from_crawler(crawler, str(feed), feed_options={"format": "jsonlines"})
    assert redis.smembers("s:exported") == {b"page\x1fhttp://a/1"}  # before any item reaches the feed filter
    handle = storage.open(Spider())
    handle.write(b'{"url": "http://a/3"}\n')
    handle.close()
    assert feed.read_bytes() == whole + b'{"url": "http://a/3"}\n'  # the next record is not glued to the cut one
    assert crawler.stats.get_value("edrew/redis/partial-records-removed") == 1
    assert crawler.stats.get_value("edrew/redis/feed-items-read-back") == 1
    # overwritten feeds (-O) start empty: nothing read back
    fresh = FlushingFileFeedStorage.from_crawler(crawler, str(feed), feed_options={"format": "jsonlines",
                                                                                  "overwrite": True})
    fresh.open(Spider()).close()
    assert feed.read_bytes() == b""
