"""EDREW_WORKERS >= 1: pages serialised and scored in worker processes; the same items as in process,
a worker that dies costs no page and no crawl, and a model that cannot load still stops the crawl."""
from __future__ import annotations

import asyncio
import json
import logging
import re
import sys
import textwrap
from pathlib import Path

import _worker_helpers
import pytest
from conftest import DEMO_SITE, run_scrapy
from scrapy.utils.test import get_crawler

from edrew_scrapy.model.files import ModelError
from edrew_scrapy.model.scorer import CACHE_SHARES
from edrew_scrapy.scrapy import EdrewSpiderMiddleware
from edrew_scrapy.scrapy.processpool import ProcessPool, worker_cache_mb
from edrew_scrapy.scrapy.scoring import ScoringService
from edrew_scrapy.scrapy.settings import EdrewSettings
from edrew_scrapy.scrapy.stats import EdrewStats

PAGES = ["news/council-approves-riverside-bike-lanes.html", "blog/how-we-built-our-flood-map.html",
         "shop/riverside-through-the-seasons.html", "help/managing-your-subscription.html",
         "news/volunteers-clear-two-tons-from-river.html", "index.html"]

SPIDER = textwrap.dedent('''
    import scrapy

    class Pages(scrapy.Spider):
        name = "pages"
        custom_settings = {"ADDONS": {"edrew_scrapy.Addon": 500}, "TELNETCONSOLE_ENABLED": False,
                           "ROBOTSTXT_OBEY": False}

        def __init__(self, base, paths, **kw):
            super().__init__(**kw)
            self.start_urls = [base + "/" + p for p in paths.split(",")]

        def parse(self, response):
            page = response.meta.get("edrew_page")
            yield {"own": response.url, "nodes_seen": len(page.nodes) if page is not None else None}
''')


def crawl(tmp_path, base, workers, *extra):
    spider = tmp_path / "pages.py"
    spider.write_text(SPIDER)
    feed = tmp_path / f"items-{workers}-{len(extra)}.jsonl"
    proc = run_scrapy(["runspider", str(spider), "-a", f"base={base}", "-a", "paths=" + ",".join(PAGES),
                       "-O", str(feed), "-s", f"EDREW_WORKERS={workers}", *extra], cwd=tmp_path, timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    items = [json.loads(line) for line in feed.read_text().splitlines() if line.strip()]
    stats = {k: int(v) for k, v in re.findall(r"'(edrew/[^']+)': (\d+)", proc.stderr)}
    return items, stats, proc.stderr


def by_url(items, key):
    return {item[key]: item for item in items if key in item}


@pytest.mark.crawl
def test_workers_export_what_the_crawl_process_exports(serve, tmp_path):
    base = serve(DEMO_SITE)
    in_process, stats0, _ = crawl(tmp_path, base, 0)
    in_workers, stats1, log1 = crawl(tmp_path, base, 1)
    assert "in 1 worker process(es)" in log1 and "EDREW could not" not in log1
    pages0, pages1 = by_url(in_process, "url"), by_url(in_workers, "url")
    assert len(pages0) == len(PAGES) - 1 or len(pages0) == len(PAGES)  # the front page may have nothing
    assert set(pages0) == set(pages1)
    for url, item in pages0.items():
        other = pages1[url]
        assert (item["title"], item["text"], item["images"]) == (other["title"], other["text"], other["images"])
        assert [(n["content"], n["path"]) for n in item["nodes"]] == [(n["content"], n["path"]) for n in other["nodes"]]
        assert [n["score"] for n in item["nodes"]] == pytest.approx([n["score"] for n in other["nodes"]], abs=2e-4)
    # The spider's own items, and the Page it read from meta in its callback, are the same too.
    assert by_url(in_process, "own") == by_url(in_workers, "own")
    assert all(item["nodes_seen"] for item in by_url(in_workers, "own").values())
    # The page metadata (on by default) was read in the crawl process, on its idle thread, not in the worker,
    # from what the worker read in its serializer's tree (no page parsed again here)
    assert stats1.pop("edrew/metadata/read_in_crawl_process") == len(pages1)
    assert "edrew/metadata/parsed_in_crawl_process" not in stats1
    assert {k: v for k, v in stats0.items()} == {k: v for k, v in stats1.items()}
    # The scorer's caches, reported from the worker as from the crawl process (the same pages fill them)
    for name in ("tokens", "sequences", "texts"):
        assert stats1[f"edrew/cache/{name}/entries"] > 0 and stats1[f"edrew/cache/{name}/bytes"] > 0
    # With EDREW_THREADS = 0 the crawl process has no thread for it (it would run on the reactor's), and
    # the worker reads the metadata: every field of every item is the same wherever it was read.
    in_worker, stats2, _ = crawl(tmp_path, base, 1, "-s", "EDREW_THREADS=0")
    assert "edrew/metadata/read_in_crawl_process" not in stats2
    pages2 = by_url(in_worker, "url")
    assert set(pages2) == set(pages1)
    for url, item in pages1.items():
        assert item.get("headline") or item.get("page_type")  # metadata was read at all
        for other in (pages0[url], pages2[url]):
            assert {k: v for k, v in item.items() if k != "nodes"} == {k: v for k, v in other.items() if k != "nodes"}


@pytest.mark.crawl
def test_two_workers_share_one_cache_budget(serve, tmp_path):
    # EDREW_CACHE_MB bounds the crawl's caches together: each of 2 workers gets half (the log line), and
    # the caches, full after a few pages of a tiny budget, hold no more than the budget in all, whichever
    # worker (the first one ready often takes every page of so short a crawl) filled them.
    budget = 0.2
    items, stats, log = crawl(tmp_path, serve(DEMO_SITE), 2, "-s", f"EDREW_CACHE_MB={budget}",
                              "-s", "EDREW_BATCH_PAGES=1")
    assert "in 2 worker process(es), caches 0.1 MiB each" in log and "EDREW could not" not in log
    assert len(by_url(items, "url")) >= len(PAGES) - 1
    for name, share in CACHE_SHARES.items():
        assert 0 < stats[f"edrew/cache/{name}/bytes"] <= budget * 2**20 * share


def test_each_worker_gets_its_share_of_the_cache_budget():
    assert worker_cache_mb(128.0, 1) == 128.0 and worker_cache_mb(128.0, 2) == 64.0
    assert worker_cache_mb(None, 2) is None  # entry limits only, in every worker
    two = pool(get_crawler(settings_dict={"EDREW_WORKERS": 2, "EDREW_CACHE_MB": 96}))
    try:
        assert two.cache_mb == 48.0 and 48.0 in two._initargs
    finally:
        two.close()


@pytest.mark.crawl
def test_a_model_that_cannot_load_in_a_worker_stops_the_crawl(serve, tmp_path):
    spider = tmp_path / "pages.py"
    spider.write_text(SPIDER)
    proc = run_scrapy(["runspider", str(spider), "-a", f"base={serve(DEMO_SITE)}", "-a", "paths=index.html",
                       "-s", "EDREW_WORKERS=1", "-s", f"EDREW_MODEL={tmp_path / 'missing'}"],
                      cwd=tmp_path, timeout=120)
    assert proc.returncode == 1
    assert "EDREW cannot load its model" in proc.stderr and str(tmp_path / "missing") in proc.stderr


def test_from_crawler_raises_the_workers_model_error(tmp_path, caplog):
    crawler = get_crawler(settings_dict={"EDREW_MODEL": str(tmp_path / "missing"), "EDREW_WORKERS": 1})
    with caplog.at_level(logging.ERROR), pytest.raises(ModelError, match="missing"):
        EdrewSpiderMiddleware.from_crawler(crawler)
    [record] = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert str(tmp_path / "missing") in record.getMessage()


def pool(crawler, **kw):
    conf = EdrewSettings.from_settings(crawler.settings)
    return ProcessPool(conf, EdrewStats(crawler.stats, logging.getLogger("test")),
                       task=_worker_helpers.echo_or_die, initializer=_worker_helpers.no_model, **kw)


def batch(*urls):
    return [(b"<html></html>", None, url) for url in urls]


@pytest.mark.parametrize("metadata", [True, False])
def test_the_crawl_process_reads_the_metadata_while_its_backlog_has_room(metadata):
    crawler = get_crawler(settings_dict={"EDREW_WORKERS": 1, "EDREW_BATCH_PAGES": 2, "EDREW_METADATA": metadata})
    conf = EdrewSettings.from_settings(crawler.settings)
    workers = ProcessPool(conf, EdrewStats(crawler.stats, logging.getLogger("test")),
                          task=_worker_helpers.echo_metadata_wanted, initializer=_worker_helpers.no_model)
    service = ScoringService(crawler, conf, None, workers)

    async def pages(n):
        return await asyncio.gather(*(service.process(b"<html></html>", None, f"http://a/{i}") for i in range(n)))

    try:
        # Room here: every batch goes to the worker without its metadata, and the backlog is given back
        # page by page once done. Without EDREW_METADATA there is nothing to read here.
        outcomes = asyncio.run(pages(4))
        assert [o.page for o in outcomes] == [(f"http://a/{i}", not metadata) for i in range(4)]
        assert all(o.metadata_here is metadata for o in outcomes) and service._here == 0
        # A full backlog here (many workers, or this thread slowed down): the worker reads it
        service._here = service._here_limit
        outcomes = asyncio.run(pages(4))
        assert [o.page for o in outcomes] == [(f"http://a/{i}", True) for i in range(4)]
        assert not any(o.metadata_here for o in outcomes) and service._here == service._here_limit
    finally:
        workers.close()


def test_a_worker_that_dies_is_replaced_and_its_pages_sent_again(tmp_path, caplog):
    crawler = get_crawler(settings_dict={"EDREW_WORKERS": 1})
    workers = pool(crawler)
    marker = tmp_path / "die-once"
    marker.touch()
    pages = batch("http://a/1", f"http://a/2?once&die={marker}", "http://a/3")
    try:
        with caplog.at_level(logging.ERROR):
            outcomes = asyncio.run(workers.run(pages))
            again = asyncio.run(workers.run(batch("http://a/4")))
    finally:
        workers.close()
    assert [o.page for o in outcomes] == [url for _, _, url in pages] and all(o.error is None for o in outcomes)
    assert again[0].page == "http://a/4"
    assert crawler.stats.get_value("edrew/workers/died") == 1
    assert crawler.stats.get_value("edrew/workers/restarts") == 1
    assert "EDREW worker process died" in caplog.text


def test_a_page_that_always_kills_its_worker_costs_only_itself(tmp_path):
    crawler = get_crawler(settings_dict={"EDREW_WORKERS": 1})
    workers = pool(crawler)
    marker = tmp_path / "die-always"
    marker.touch()
    pages = batch("http://a/1", f"http://a/2?die={marker}", "http://a/3")
    try:
        outcomes = asyncio.run(workers.run(pages))
    finally:
        workers.close()
    assert [o.page for o in outcomes] == ["http://a/1", None, "http://a/3"]
    assert outcomes[1].stage == "score" and "lost with its worker process" in outcomes[1].error
    # Died with the batch, alone, and alone once more (in case another page in flight killed it).
    assert not workers.failed and crawler.stats.get_value("edrew/workers/died") == 3


def test_a_killer_page_costs_only_itself_with_two_batches_in_flight(tmp_path):
    # Batcher keeps workers + 1 batches in flight: both die with the pool, and both send their pages
    # again alone; the other batch's lone page must not be in the pool when the bad page kills it again.
    crawler = get_crawler(settings_dict={"EDREW_WORKERS": 1})
    workers = pool(crawler)
    marker = tmp_path / "die-always"
    marker.touch()
    first = batch(f"http://a/1?die={marker}", "http://a/2", "http://a/3")
    second = batch("http://b/1", "http://b/2", "http://b/3")

    async def both():
        return await asyncio.gather(workers.run(first), workers.run(second))

    try:
        a, b = asyncio.run(both())
    finally:
        workers.close()
    assert [o.page for o in a] == [None, "http://a/2", "http://a/3"] and "lost with" in a[0].error
    assert [o.page for o in b] == ["http://b/1", "http://b/2", "http://b/3"] and all(o.error is None for o in b)
    assert not workers.failed and crawler.stats.get_value("edrew/workers/died") == 3


def test_a_worker_that_never_answers_is_terminated_and_costs_only_its_page(caplog):
    # EDREW_WORKER_TIMEOUT: the batch is given up, the pool killed and restarted, and the hung page,
    # alone twice, is lost; the crawl goes on (before, it waited for ever, and could not even exit)
    crawler = get_crawler(settings_dict={"EDREW_WORKERS": 1, "EDREW_WORKER_TIMEOUT": 5})
    conf = EdrewSettings.from_settings(crawler.settings)
    assert conf.worker_timeout == 5
    workers = ProcessPool(conf, EdrewStats(crawler.stats, logging.getLogger("test")),
                          task=_worker_helpers.echo_or_hang, initializer=_worker_helpers.no_model)
    try:
        with caplog.at_level(logging.ERROR):
            [lost] = asyncio.run(workers.run(batch("http://a/1?hang")))
            [after] = asyncio.run(workers.run(batch("http://a/2")))
    finally:
        workers.close()
    assert lost.page is None and "lost with its worker process: TimeoutError" in lost.error
    assert after.page == "http://a/2" and after.error is None
    assert crawler.stats.get_value("edrew/workers/timeouts") == 2
    assert crawler.stats.get_value("edrew/workers/died") == 2 and not workers.failed
    assert "gave no result for 1 page(s) in 5 s (EDREW_WORKER_TIMEOUT)" in caplog.text


def test_after_the_restarts_the_pages_are_done_in_process(tmp_path, caplog):
    from test_scrapy_scoring import responses, run

    crawler = get_crawler(settings_dict={"EDREW_WORKERS": 1})
    conf = EdrewSettings.from_settings(crawler.settings)
    marker = tmp_path / "die-always"
    marker.touch()
    workers = pool(crawler, max_restarts=1)
    mw = EdrewSpiderMiddleware(crawler, conf, ScoringService(crawler, conf, None, workers))
    resps = responses()
    for resp in resps:  # every page kills its worker: the pool gives up, the pages are done here
        resp.request.meta.clear()
        resp._set_url(resp.url + f"?die={marker}")
    try:
        with caplog.at_level(logging.ERROR):
            results = run(mw, resps)
    finally:
        workers.close()
    assert workers.failed and crawler.stats.get_value("edrew/workers/fallback") == 1
    assert [len(outputs) for outputs in results] == [1] * len(resps)
    assert crawler.stats.get_value("edrew/items") == len(resps)
    assert crawler.stats.get_value("edrew/errors") is None
    assert "stops using worker processes" in caplog.text


def test_close_never_waits_and_terminates_a_stuck_worker(monkeypatch):
    import time

    from edrew_scrapy.scrapy import processpool

    monkeypatch.setattr(processpool, "SHUTDOWN_GRACE_S", 1.0)
    crawler = get_crawler(settings_dict={"EDREW_WORKERS": 1})
    conf = EdrewSettings.from_settings(crawler.settings)
    workers = ProcessPool(conf, EdrewStats(crawler.stats, logging.getLogger("test")),
                          task=_worker_helpers.sleep_forever, initializer=_worker_helpers.no_model)

    async def main():
        pending = asyncio.ensure_future(workers.run(batch("http://a/1")))
        while not workers._executor._processes:  # the worker has started and holds the batch
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.5)
        [process] = list(workers._executor._processes.values())
        started = time.monotonic()
        workers.close()
        assert time.monotonic() - started < 0.5  # close() returns at once
        outcomes = await asyncio.wait_for(pending, 30)
        return process, outcomes, time.monotonic() - started

    process, outcomes, waited = asyncio.run(main())
    deadline = time.monotonic() + 10
    while process.is_alive() and time.monotonic() < deadline:  # the reaper joins it after terminate()
        time.sleep(0.1)
    assert not process.is_alive() and waited < 15
    assert outcomes[0].error == "the EDREW worker pool was shut down"
    assert crawler.stats.get_value("edrew/workers/died") is None


@pytest.mark.parametrize("source, safe", [
    ('import scrapy\nif __name__ == "__main__":\n    run()\n', True),
    ("if '__main__' == __name__:\n    run()\n", True),
    ("from scrapy.crawler import CrawlerProcess\nprocess = CrawlerProcess()\nprocess.start()\n", False),
])
def test_a_main_script_without_a_guard_is_not_spawned(tmp_path, monkeypatch, source, safe):
    import types

    from edrew_scrapy.scrapy.processpool import main_module_problem

    script = tmp_path / "run.py"
    script.write_text(source)
    main = types.ModuleType("__main__")
    main.__file__ = str(script)
    main.__spec__ = None
    monkeypatch.setitem(sys.modules, "__main__", main)
    problem = main_module_problem()
    assert (problem is None) is safe
    if not safe:
        assert str(script) in problem and "guard" in problem


def test_workers_are_not_used_under_an_unguarded_main_script(tmp_path, monkeypatch):
    import types

    script = tmp_path / "run.py"
    script.write_text("process.start()\n")
    main = types.ModuleType("__main__")
    main.__file__, main.__spec__ = str(script), None
    monkeypatch.setitem(sys.modules, "__main__", main)
    crawler = get_crawler(settings_dict={"EDREW_WORKERS": 1})
    mw = EdrewSpiderMiddleware.from_crawler(crawler)
    assert mw.scoring.processes is None and mw.scoring.scorer is not None
    assert crawler.stats.get_value("edrew/workers/not-used") == 1


def test_in_the_worker_one_page_that_raises_costs_only_itself(monkeypatch):
    from edrew_scrapy.model.scorer import load_model
    from edrew_scrapy.scrapy import worker as workers

    scorer = load_model()

    class Breaks:
        threshold = scorer.threshold

        def score(self, pages):
            if any("flood-map" in (p.url or "") for p in pages):
                raise ValueError("model exploded")
            return scorer.score(pages)

    monkeypatch.setattr(workers, "_state", {"scorer": Breaks(), "threshold": None})
    inputs = [((DEMO_SITE / p).read_bytes(), "text/html; charset=utf-8", f"http://demo.test/{p}") for p in PAGES[:3]]
    inputs.append((b"", None, "http://demo.test/empty"))
    outcomes = workers.process(inputs)
    assert [o.error is None for o in outcomes] == [True, False, True, True]
    assert outcomes[1].stage == "score" and "model exploded" in outcomes[1].error and outcomes[1].page.nodes
    assert outcomes[0].extraction.nodes and outcomes[2].extraction.nodes
    assert outcomes[3].page.skipped == "empty" and outcomes[3].extraction is None


def test_a_worker_sends_the_page_types_features_only_with_a_page_whose_metadata_the_crawl_process_reads(monkeypatch):
    import pickle

    from edrew_scrapy.metadata import declared_from_json, page_metadata
    from edrew_scrapy.model.scorer import load_model
    from edrew_scrapy.pagetype import default_classifier
    from edrew_scrapy.scrapy import worker as workers

    classifier = default_classifier()
    monkeypatch.setattr(workers, "_state", {"scorer": load_model(), "threshold": None, "metadata": True,
                                            "classifier": classifier})
    body = (DEMO_SITE / PAGES[0]).read_bytes()
    url = f"http://demo.test/{PAGES[0]}"
    here, there = workers.process([(body, "utf-8", url), (body, "utf-8", url, False)])
    # read in the worker: the features kept by the scorer's page type are dropped before the page is sent
    assert here.extraction.metadata is not None and here.page.type_features is None
    # read in the crawl process: the page goes with them, and its metadata is what the worker's would be
    assert there.extraction.metadata is None and there.page.type_features is not None
    sent = pickle.loads(pickle.dumps(there.page))
    assert sent.type_features[0] is sent.nodes and sent.type_features[3] == there.page.type_features[3]
    sent.from_tree = declared_from_json(there.declared)
    assert page_metadata(body, sent, there.extraction, classifier, encoding="utf-8", url=url) == \
        here.extraction.metadata


@pytest.mark.parametrize("region_share,expected", [(None, 0.7), (0, None), (0.9, 0.9)])
def test_a_worker_loads_the_model_with_the_torch_threads_and_region_settings(region_share, expected):
    crawler = get_crawler(settings_dict={"EDREW_WORKERS": 1, "EDREW_TORCH_THREADS": 1,
                                         "EDREW_REGION_SHARE": region_share})
    workers = ProcessPool(EdrewSettings.from_settings(crawler.settings),
                          EdrewStats(crawler.stats, logging.getLogger("test")))
    try:
        loaded = workers.start()
    finally:
        workers.close()
    assert loaded["torch_threads"] == 1 and loaded["directory"].endswith("default") and 0 < loaded["threshold"] < 1
    assert loaded["region_share"] == expected  # None: the shipped card's 0.7; 0: off


def test_a_worker_exits_when_the_crawl_process_is_killed(tmp_path):
    import os
    import signal
    import subprocess
    import time

    from conftest import ROOT, scrapy_env

    script = tmp_path / "parent.py"
    script.write_text(textwrap.dedent(f'''
        import asyncio, logging, sys, time
        sys.path[:0] = [{str(ROOT)!r}, {str(ROOT / "tests")!r}]
        from scrapy.utils.test import get_crawler
        import _worker_helpers
        from edrew_scrapy.scrapy.processpool import ProcessPool
        from edrew_scrapy.scrapy.settings import EdrewSettings
        from edrew_scrapy.scrapy.stats import EdrewStats

        if __name__ == "__main__":
            crawler = get_crawler(settings_dict={{"EDREW_WORKERS": 1}})
            pool = ProcessPool(EdrewSettings.from_settings(crawler.settings),
                               EdrewStats(crawler.stats, logging.getLogger()),
                               task=_worker_helpers.echo_or_die, initializer=_worker_helpers.no_model)
            asyncio.run(pool.run([(b"", None, "http://a/1")]))
            print(*pool._executor._processes, flush=True)
            time.sleep(120)
    '''))
    parent = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True, env=scrapy_env())
    try:
        [worker] = [int(pid) for pid in parent.stdout.readline().split()]
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait(10)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            try:
                os.kill(worker, 0)
            except ProcessLookupError:
                break
            if Path(f"/proc/{worker}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                break  # exited; a zombie until init reaps it
            time.sleep(0.2)
        else:
            os.kill(worker, signal.SIGKILL)
            raise AssertionError("the worker outlived its killed parent by 15 s")
    finally:
        if parent.poll() is None:
            parent.kill()


KILLER = textwrap.dedent('''
    import os, signal
    from pathlib import Path
    import scrapy

    def spawned_workers():
        me = os.getpid()
        kids = []
        for task in Path(f"/proc/{me}/task").iterdir():
            kids += (task / "children").read_text().split()
        return [int(k) for k in kids if b"spawn_main" in Path(f"/proc/{k}/cmdline").read_bytes()]

    class Killer(scrapy.Spider):
        """Kills its EDREW worker process from the first callback, then asks for the other pages."""
        name = "killer"
        custom_settings = {"ADDONS": {"edrew_scrapy.Addon": 500}, "TELNETCONSOLE_ENABLED": False,
                           "ROBOTSTXT_OBEY": False, "EDREW_WORKERS": 1}

        def __init__(self, base, paths, **kw):
            super().__init__(**kw)
            self.base, self.paths = base, paths.split(",")
            self.start_urls = [base + "/" + self.paths[0]]

        def parse(self, response):
            if response.url.endswith(self.paths[0]):
                workers = spawned_workers()
                assert len(workers) == 1, workers
                os.kill(workers[0], signal.SIGKILL)
                for path in self.paths[1:]:
                    yield scrapy.Request(self.base + "/" + path)
''')


@pytest.mark.crawl
def test_a_worker_killed_mid_crawl_costs_no_page(serve, tmp_path):
    spider = tmp_path / "killer.py"
    spider.write_text(KILLER)
    feed = tmp_path / "items.jsonl"
    base = serve(DEMO_SITE)
    proc = run_scrapy(["runspider", str(spider), "-a", f"base={base}", "-a", "paths=" + ",".join(PAGES),
                       "-O", str(feed)], cwd=tmp_path, timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    items = [json.loads(line) for line in feed.read_text().splitlines() if line.strip()]
    stats = {k: int(v) for k, v in re.findall(r"'(edrew/[^']+)': (\d+)", proc.stderr)}
    assert stats["edrew/workers/died"] == 1 and stats["edrew/workers/restarts"] == 1, stats
    assert "edrew/errors" not in stats and "edrew/workers/fallback" not in stats
    assert "EDREW worker process died" in proc.stderr
    # Every page after the kill was still serialised and scored: an item for each content page.
    assert stats["edrew/pages"] == len(PAGES)
    assert {f"{base}/{p}" for p in PAGES if "/" in p} <= {item["url"] for item in items}


class _FakeExecutor:
    """An executor whose futures the test settles by hand; `live` lists what is in the pool."""

    def __init__(self, live):
        self.live, self._processes = live, {}

    def submit(self, task, pages):
        from concurrent.futures import Future

        future = Future()
        future.urls = [url for _, _, url in pages]
        self.live.append(future)
        return future

    def shutdown(self, wait=True, cancel_futures=False):
        pass


def _fake_pool():
    live = []

    class FakePool(ProcessPool):
        def _new_executor(self):
            return _FakeExecutor(live)

    crawler = get_crawler(settings_dict={"EDREW_WORKERS": 1})
    stats = EdrewStats(crawler.stats, logging.getLogger("t"))
    return FakePool(EdrewSettings.from_settings(crawler.settings), stats), live


def _in_pool(live):
    return [f.urls for f in live if not f.done()]


async def _ticks(n=10):
    for _ in range(n):
        await asyncio.sleep(0)


def _finish(live, prefix):
    from edrew_scrapy.scrapy.worker import Outcome

    for f in list(live):
        if not f.done() and f.urls[0].startswith(prefix):
            f.set_result([Outcome(page=u) for u in f.urls])


def test_lone_turns_survive_a_cancelled_waiter_and_keep_new_batches_out():
    from concurrent.futures.process import BrokenProcessPool

    workers, live = _fake_pool()

    async def main():
        a = asyncio.ensure_future(workers.run(batch("a1", "a2")))
        c = asyncio.ensure_future(workers.run(batch("c1", "c2")))
        await _ticks()
        live[0].set_exception(BrokenProcessPool("died"))  # a fails first (its timeout, say)
        await _ticks()
        d = asyncio.ensure_future(workers.run(batch("d1")))  # a new batch, queued before c's failure
        await _ticks()
        live[1].set_exception(BrokenProcessPool("died"))
        await _ticks()
        c.cancel()  # a waiter on the turn gate cancelled (a forced stop): the gate stays shut
        await _ticks()
        assert _in_pool(live) == [["a1"]]
        _finish(live, "a")
        await _ticks()
        assert _in_pool(live) == [["a2"]]  # still a's turn; d waits for every lone turn to end
        _finish(live, "a")
        await _ticks()
        assert [o.page for o in a.result()] == ["a1", "a2"] and c.cancelled()
        assert _in_pool(live) == [["d1"]]
        _finish(live, "d")
        await _ticks()
        assert [o.page for o in d.result()] == ["d1"]

    asyncio.run(main())


FORCED_STOP = textwrap.dedent('''
    import asyncio, gc, logging, sys

    if __name__ == "__main__":
        sys.path.insert(0, sys.argv[1])
        from scrapy.utils.test import get_crawler

        import _worker_helpers
        from edrew_scrapy.scrapy.processpool import ProcessPool
        from edrew_scrapy.scrapy.scoring import terminate_at_shutdown
        from edrew_scrapy.scrapy.settings import EdrewSettings
        from edrew_scrapy.scrapy.stats import EdrewStats

        async def main():
            crawler = get_crawler(settings_dict={"EDREW_WORKERS": 1, "EDREW_WORKER_TIMEOUT": 0})
            workers = ProcessPool(EdrewSettings.from_settings(crawler.settings),
                                  EdrewStats(crawler.stats, logging.getLogger("t")),
                                  task=_worker_helpers.sleep_forever, initializer=_worker_helpers.no_model)
            terminate_at_shutdown(workers)
            workers.cycle = workers  # reachable only through a cycle once main() returns, as a crawl's objects
            asyncio.ensure_future(workers.run([(b"<p>x</p>", None, "http://a/1")]))
            while not workers._executor._processes:
                await asyncio.sleep(0.05)
            await asyncio.sleep(0.5)

        asyncio.run(main())  # ends as a forced stop ends the loop: the pool neither closed nor done
        gc.collect()  # the crawl's objects are gone; the workers must still be killed at exit
        print("loop ended", flush=True)
''')


def test_a_forced_stop_without_a_reactor_still_exits(tmp_path):
    # TWISTED_REACTOR_ENABLED=False has no reactor shutdown trigger: the interpreter's exit joined the
    # executor's processes, and a worker that never answers held the process for ever (rc 124 under
    # `timeout 40` before the exit hook)
    import subprocess

    script = tmp_path / "forced.py"
    script.write_text(FORCED_STOP)
    proc = subprocess.run([sys.executable, str(script), str(Path(__file__).parent)], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout == "loop ended\n"


def test_a_drain_cancelled_by_a_forced_stop_is_no_unhandled_error():
    # without a reactor a forced stop cancels every asyncio task: each drainer's Deferred then logged a
    # CRITICAL "Unhandled error in Deferred" traceback; other failures still propagate
    from twisted.internet.defer import CancelledError, Deferred
    from twisted.python.failure import Failure

    from edrew_scrapy.scrapy.scoring import Batcher

    async def run(pages):
        return pages

    batcher = Batcher(run, 8)
    for cancelled in (asyncio.CancelledError(), CancelledError()):
        task = Deferred()
        batcher._tasks.add(task)
        assert batcher._forget(Failure(cancelled), task) is None and task not in batcher._tasks
    other = Failure(ValueError("a real error"))
    assert batcher._forget(other, Deferred()) is other


def test_a_cancelled_drainer_answers_its_pages():
    # asyncio.CancelledError is no Exception: the batch in hand got no result and its pages waited for ever
    from twisted.internet.defer import Deferred

    from edrew_scrapy.scrapy.scoring import Batcher

    async def never(pages):
        await asyncio.Event().wait()

    async def main():
        batcher = Batcher(never, 8)
        waiters = [Deferred(), Deferred()]
        batcher._queue.extend(zip(["p1", "p2"], waiters))
        batcher._drainers = 1
        task = asyncio.ensure_future(batcher._drain())
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return batcher, waiters

    batcher, waiters = asyncio.run(main())
    results = []
    for waiter in waiters:
        waiter.addCallback(results.append)
    assert [str(r) for r in results] == ["EDREW scoring was cancelled"] * 2
    assert all(isinstance(r, RuntimeError) for r in results) and batcher._drainers == 0
