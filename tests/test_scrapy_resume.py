"""The resume guard's pure parts, without a crawl: reading feeds back, removing a record cut short,
the unclean-stop marker, the feed filter, and how the add-on wires them. The crawls killed and
resumed for real are in tests/test_reliability_faults.py."""
from __future__ import annotations

import csv
import io
import json

import pytest
from scrapy import Spider
from scrapy.settings import Settings
from scrapy.utils.test import get_crawler

from edrew_scrapy.scrapy import Addon, NodeItem, PageItem
from edrew_scrapy.scrapy.resume import (
    _STATES,
    FEED_STORAGE,
    INNER_FILTER_OPTION,
    MARKER,
    RESUME_SCHEDULER,
    SCRAPY_SCHEDULER,
    TOKEN_OPTION,
    URI_OPTION,
    ExportedItemFilter,
    ResumeGuard,
    ResumeState,
    clear_scheduler_state,
    item_key,
    read_csv,
    read_jsonlines,
    record_key,
    remove_marker,
    unclean_stop,
    write_marker,
)


def page(url: str, text: str = "Some text\nmore text") -> PageItem:
    return PageItem(url=url, title="T", text=text, nodes=[{"content": text, "score": 0.9, "path": "/p[1]"}])


def node(url: str, index: int, path: str = "/html[1]/body[1]/p[1]") -> NodeItem:
    return NodeItem(url=url, title="T", content="text", score=0.9, path=path, index=index)


def jsonline(item) -> bytes:
    from itemadapter import ItemAdapter
    return json.dumps(ItemAdapter(item).asdict()).encode() + b"\n"


# ------------------------------------------------------------------ keys

def test_keys_of_items_and_of_the_records_they_become():
    assert item_key(page("http://a/1")) == ("page", "http://a/1")
    assert item_key(node("http://a/1", 3)) == ("node", "http://a/1", "3", "/html[1]/body[1]/p[1]")
    # not ours: no key here (the feed filter holds such a dict back only against an earlier run's feed)
    assert item_key({"url": "http://a/1", "text": "x", "nodes": [1]}) is None
    from itemadapter import ItemAdapter
    for item in (page("http://a/1"), node("http://a/1", 3)):
        assert record_key(ItemAdapter(item).asdict()) == item_key(item)
    # CSV gives every value as text
    assert record_key({"url": "http://a/1", "content": "t", "path": "/p[1]", "index": "3"}) == \
        ("node", "http://a/1", "3", "/p[1]")
    # records that only look a little like ours (a spider's own item; a feed without the nodes field)
    assert record_key({"url": "http://a/1", "title": "x"}) is None
    assert record_key({"url": "http://a/1", "text": "x"}) is None
    assert record_key({"url": "http://a/1", "text": "", "nodes": ""}) is None  # empty CSV columns
    assert record_key({"text": "x", "nodes": [1]}) is None


# ------------------------------------------------------------------ JSON Lines

def test_jsonlines_keeps_complete_lines_and_cuts_the_partial_last_one(tmp_path):
    feed = tmp_path / "feed.jsonl"
    whole = jsonline(page("http://a/1")) + jsonline({"url": "http://a/2", "title": "spider's own"}) \
        + jsonline(node("http://a/3", 0))
    feed.write_bytes(whole + jsonline(page("http://a/4"))[:25])
    contents = read_jsonlines(feed)
    assert contents.keys == {("page", "http://a/1"), ("node", "http://a/3", "0", "/html[1]/body[1]/p[1]")}
    assert contents.records == 3 and contents.removed_bytes == 25
    assert feed.read_bytes() == whole
    # read again: nothing more to cut
    again = read_jsonlines(feed)
    assert again.keys == contents.keys and again.removed_bytes == 0


def test_jsonlines_without_truncate_leaves_the_file_alone_and_skips_a_broken_middle_line(tmp_path):
    feed = tmp_path / "feed.jsonl"
    data = jsonline(page("http://a/1")) + b"{not json\n" + jsonline(page("http://a/2")) + b'{"url": "http'
    feed.write_bytes(data)
    contents = read_jsonlines(feed, truncate=False)
    assert contents.keys == {("page", "http://a/1"), ("page", "http://a/2")}
    assert feed.read_bytes() == data


def test_missing_or_empty_feed(tmp_path):
    assert read_jsonlines(tmp_path / "none.jsonl").keys == set()
    (tmp_path / "empty.csv").write_bytes(b"")
    contents = read_csv(tmp_path / "empty.csv")
    assert contents.keys == set() and contents.removed_bytes == 0


# ------------------------------------------------------------------ CSV

def csv_feed(*runs) -> bytes:
    """What CsvItemExporter appends run after run: a header line each run, then the rows."""
    out = io.StringIO(newline="")
    for rows in runs:
        writer = csv.writer(out, lineterminator="\r\n")
        writer.writerow(["url", "title", "text", "nodes", "images"])
        for row in rows:
            writer.writerow(row)
    return out.getvalue().encode("utf-8")


def test_csv_reads_multiline_fields_and_the_header_of_each_run(tmp_path):
    feed = tmp_path / "feed.csv"
    data = csv_feed([["http://a/1", "T", "line one\nline two", "[{'content': 'x'}]", ""]],
                    [["http://a/2", "T", "text", "[{'content': 'y'}]", ""],
                     ["http://a/3", "T", "", "", ""]])  # a spider's own item with the page columns empty
    feed.write_bytes(data)
    contents = read_csv(feed)
    assert contents.keys == {("page", "http://a/1"), ("page", "http://a/2")}
    assert contents.records == 3 and contents.removed_bytes == 0 and not contents.problem


@pytest.mark.parametrize("cut", ["inside-quotes", "no-line-end", "inside-quotes-after-newline"])
def test_csv_cuts_a_record_cut_short(tmp_path, cut):
    feed = tmp_path / "feed.csv"
    whole = csv_feed([["http://a/1", "T", "one\ntwo", "[1]", ""]])
    tail = {"inside-quotes": b'http://a/2,T,"first line',
            "no-line-end": b"http://a/2,T,text,[1],",
            "inside-quotes-after-newline": b'http://a/2,T,"first line\n'}[cut]
    feed.write_bytes(whole + tail)
    contents = read_csv(feed)
    assert contents.keys == {("page", "http://a/1")}
    assert contents.removed_bytes == len(tail)
    assert feed.read_bytes() == whole


def test_csv_malformed_in_the_middle_is_not_cut(tmp_path):
    feed = tmp_path / "feed.csv"
    data = csv_feed([["http://a/1", "T", "x", "[1]", ""]]) + b'http://a/2,"T"x,y\r\n' + \
        b"http://a/3,T,x,[1],\r\n"
    feed.write_bytes(data)
    contents = read_csv(feed)
    assert contents.problem and contents.removed_bytes == 0
    assert ("page", "http://a/1") in contents.keys
    assert feed.read_bytes() == data


# ------------------------------------------------------------------ the marker and the scheduler state

def test_marker_and_scheduler_state(tmp_path):
    jobdir = tmp_path / "job"
    assert not unclean_stop(jobdir)
    write_marker(jobdir)
    assert unclean_stop(jobdir) and (jobdir / MARKER).is_file()
    (jobdir / "requests.queue" / "p0").mkdir(parents=True)
    (jobdir / "requests.queue" / "p0" / "q00000").write_bytes(b"x")
    (jobdir / "requests.seen").write_bytes(b"\x00" * 22)
    (jobdir / "spider.state").write_bytes(b"kept")
    assert clear_scheduler_state(jobdir) == ["requests.queue", "requests.seen"]
    assert sorted(p.name for p in jobdir.iterdir()) == sorted([MARKER, "spider.state"])
    assert clear_scheduler_state(jobdir) == []
    remove_marker(jobdir)
    remove_marker(jobdir)  # twice is fine
    assert not unclean_stop(jobdir)


# ------------------------------------------------------------------ the feed filter

class OnlyPages:
    def __init__(self, feed_options):
        self.options = feed_options

    def accepts(self, item):
        return isinstance(item, PageItem)


def test_filter_refuses_what_the_feed_held_at_start_only():
    token = "t-filter"
    _STATES[token] = state = ResumeState()
    state.exported["feed.jsonl"] = {("page", "http://a/1")}
    try:
        f = ExportedItemFilter({TOKEN_OPTION: token, URI_OPTION: "feed.jsonl", INNER_FILTER_OPTION: OnlyPages})
        assert not f.accepts(page("http://a/1"))          # exported before the stop
        assert f.accepts(page("http://a/2"))
        # the same URL again in this run (POST paging, dont_filter): another page, as without JOBDIR
        assert f.accepts(page("http://a/2"))
        assert not f.accepts(node("http://a/3", 0))       # the feed's own filter says no
        plain = ExportedItemFilter({TOKEN_OPTION: token, URI_OPTION: "other.jsonl"})
        assert plain.accepts({"url": "http://a/1"}) and plain.accepts({"url": "http://a/1"})
        assert plain.accepts(node("http://a/3", 0)) and plain.accepts(node("http://a/3", 0))
    finally:
        _STATES.pop(token, None)


def test_page_items_an_item_pipeline_turned_into_dicts_are_held_back_too():
    # ItemAdapter(item).asdict() in a user's pipeline: the feed gets dicts, and reads them back as ours
    from itemadapter import ItemAdapter

    token = "t-dicts"
    _STATES[token] = state = ResumeState()
    state.exported["feed.jsonl"] = {("page", "http://a/1"), ("node", "http://a/3", "0", "/html[1]/body[1]/p[1]")}
    try:
        f = ExportedItemFilter({TOKEN_OPTION: token, URI_OPTION: "feed.jsonl"})
        assert not f.accepts(ItemAdapter(page("http://a/1")).asdict())    # exported before the stop
        assert not f.accepts(ItemAdapter(node("http://a/3", 0)).asdict())
        assert f.accepts(ItemAdapter(page("http://a/2")).asdict())
        # what this run exports is not tracked: a dict of that shape may be the spider's own item
        assert f.accepts(page("http://a/2"))
        assert f.accepts({"url": "http://a/1", "title": "x"})             # not of that shape
        assert state.stats is None  # counted through the crawler's stats only when there is one
    finally:
        _STATES.pop(token, None)


# ------------------------------------------------------------------ the add-on

def test_addon_adds_the_guard_and_wraps_feeds_only_with_jobdir(tmp_path):
    feeds = {"out.jsonl": {"format": "jsonlines", "item_filter": OnlyPages}, tmp_path / "x.csv": {"format": "csv"}}
    settings = Settings({"FEEDS": feeds})
    Addon().update_settings(settings)
    assert ResumeGuard not in settings.getdict("EXTENSIONS")
    assert settings.getdict("FEEDS") == feeds

    settings = Settings({"FEEDS": feeds, "JOBDIR": str(tmp_path / "job")})
    Addon().update_settings(settings)
    assert settings.getdict("EXTENSIONS")[ResumeGuard] == 500
    wrapped = settings.getdict("FEEDS")
    assert wrapped["out.jsonl"]["item_filter"] is ExportedItemFilter
    assert wrapped["out.jsonl"][INNER_FILTER_OPTION] is OnlyPages
    assert wrapped[tmp_path / "x.csv"][URI_OPTION] == str(tmp_path / "x.csv")
    Addon().update_settings(settings)  # a second call does not wrap twice
    assert settings.getdict("FEEDS")["out.jsonl"][INNER_FILTER_OPTION] is OnlyPages

    settings = Settings({"FEEDS": feeds, "JOBDIR": str(tmp_path / "job"), "EDREW_RESUME": False})
    Addon().update_settings(settings)
    assert ResumeGuard not in settings.getdict("EXTENSIONS") and settings.getdict("FEEDS") == feeds


class NamedSpider(Spider):
    name = "named"


def crawler_with(tmp_path, feeds, **settings):
    crawler = get_crawler(NamedSpider, settings_dict={
        "ADDONS": {"edrew_scrapy.Addon": 500}, "JOBDIR": str(tmp_path / "job"), "FEEDS": feeds, **settings})
    crawler._apply_settings()
    return crawler


def test_guard_after_an_unclean_stop_clears_the_queue_and_reads_the_feeds(tmp_path, caplog):
    jobdir = tmp_path / "job"
    write_marker(jobdir)
    (jobdir / "requests.seen").write_bytes(b"\x00" * 22)
    (jobdir / "requests.queue").mkdir()
    jsonl = tmp_path / "named.jsonl"
    jsonl.write_bytes(jsonline(page("http://a/1")) + b'{"url": ')
    plain = tmp_path / "plain.csv"
    plain.write_bytes(csv_feed([["http://a/2", "T", "x", "[1]", ""]]))
    feeds = {str(tmp_path / "%(name)s.jsonl"): {"format": "jsonlines"},
             f"file://{plain}": {"format": "csv"},
             str(tmp_path / "out.json"): {"format": "json"},
             str(tmp_path / "over.jsonl"): {"format": "jsonlines", "overwrite": True},
             str(tmp_path / "%(time)s.jsonl"): {"format": "jsonlines"}}
    with caplog.at_level("INFO", logger="edrew_scrapy.scrapy.resume"):
        crawler = crawler_with(tmp_path, feeds)
    guard = crawler.get_extension(ResumeGuard)
    assert guard is not None
    assert not (jobdir / "requests.seen").exists() and not (jobdir / "requests.queue").exists()
    stats = crawler.stats.get_stats()
    assert stats["edrew/resume/unclean-stop"] == 1
    assert "edrew/resume/unclean-restart" not in stats  # ResumeScheduler continues the crawl
    assert stats["edrew/resume/partial-records-removed"] == 1
    assert stats["edrew/resume/feed-records"] == 2
    assert jsonl.read_bytes() == jsonline(page("http://a/1"))
    state = _STATES[guard.token]
    assert state.exported[str(tmp_path / "%(name)s.jsonl")] == {("page", "http://a/1")}
    assert state.exported[f"file://{plain}"] == {("page", "http://a/2")}
    assert len(state.exported) == 2
    messages = caplog.text
    assert "did not close cleanly" in messages and "continues from its journal" in messages
    assert "only JSON Lines and CSV" in messages and "new file each run" in messages
    guard.spider_opened(None)
    assert unclean_stop(jobdir)
    guard.spider_closed(None, "finished")
    assert not unclean_stop(jobdir) and guard.token not in _STATES


def test_guard_after_a_clean_stop_keeps_the_queue(tmp_path):
    jobdir = tmp_path / "job"
    (jobdir / "requests.queue").mkdir(parents=True)
    (jobdir / "requests.seen").write_bytes(b"\x00" * 22)
    crawler = crawler_with(tmp_path, {})
    assert crawler.get_extension(ResumeGuard) is not None
    assert (jobdir / "requests.seen").exists() and (jobdir / "requests.queue").exists()
    assert "edrew/resume/unclean-stop" not in crawler.stats.get_stats()


def test_guard_with_another_scheduler_restarts_after_an_unclean_stop(tmp_path, caplog):
    write_marker(tmp_path / "job")
    with caplog.at_level("WARNING", logger="edrew_scrapy.scrapy.resume"):
        # Scrapy's own scheduler, set in the project: the add-on leaves it, and it keeps no journal
        crawler = crawler_with(tmp_path, {}, SCHEDULER=SCRAPY_SCHEDULER)
    assert crawler.settings["SCHEDULER"] == SCRAPY_SCHEDULER
    assert crawler.stats.get_value("edrew/resume/unclean-restart") == 1
    assert "restarting from the start URLs" in caplog.text


def test_addon_sets_the_journaling_scheduler_and_flushed_feed_storage_only_over_scrapys_own(tmp_path):
    settings = Settings({"JOBDIR": str(tmp_path / "job")})
    Addon().update_settings(settings)
    assert settings["SCHEDULER"] == RESUME_SCHEDULER
    assert settings.getdict("FEED_STORAGES") == {"": FEED_STORAGE, "file": FEED_STORAGE}
    settings = Settings({"JOBDIR": str(tmp_path / "job"), "SCHEDULER": "myproject.Scheduler",
                         "FEED_STORAGES": {"file": "myproject.Storage"}})
    Addon().update_settings(settings)
    assert settings["SCHEDULER"] == "myproject.Scheduler"
    assert settings.getdict("FEED_STORAGES") == {"": FEED_STORAGE, "file": "myproject.Storage"}
    settings = Settings()
    Addon().update_settings(settings)
    assert settings["SCHEDULER"] != RESUME_SCHEDULER and not settings.getdict("FEED_STORAGES")


# ------------------------------------------------------------------ the journal

def test_journal_replay_keeps_queued_unfinished_requests_and_cuts_a_partial_last_line(tmp_path):
    from edrew_scrapy.scrapy.scheduler import Journal, read_journal

    path = tmp_path / "job" / "edrew-requests.jl"
    journal = Journal(path)
    journal.queued(0, "aa", {"url": "http://a/0"})
    journal.queued(1, "bb", {"url": "http://a/1"})
    journal.finished([0])
    journal.queued(2, "bb", {"url": "http://a/1"})  # a retry of 1: same fingerprint, its own entry
    journal.queued(3, "cc", None)                   # a request that is not JSON
    journal.close()
    whole = path.read_bytes()
    path.write_bytes(whole + b'{"d":[1')
    state = read_journal(path)
    assert state.seen == {"aa", "bb", "cc"}
    assert state.pending == {1: ("bb", {"url": "http://a/1"}), 2: ("bb", {"url": "http://a/1"}), 3: ("cc", None)}
    assert state.next_id == 4 and state.removed_bytes == 7 and state.unreadable == 0
    assert path.read_bytes() == whole
    path.write_bytes(whole + b'["not a record"]\n{"d": [2, 3]}\n')
    state = read_journal(path)
    assert state.unreadable == 1 and set(state.pending) == {1}
    assert read_journal(tmp_path / "missing.jl").pending == {}


def test_requests_round_trip_through_the_journal_format(tmp_path):
    import json

    from scrapy import FormRequest, Request

    from edrew_scrapy.scrapy.scheduler import decode_request, encode_request

    class Cb(Spider):
        name = "cb"

        def parse_item(self, response):
            pass

    spider = Cb()
    for request in (Request("http://a/\u00e9?x=1", callback=spider.parse_item, headers={"X": "\u00ff"},
                            meta={"depth": 2}, priority=-3, cb_kwargs={"k": [1]}, dont_filter=True),
                    FormRequest("http://a/f", formdata={"q": "caf\u00e9"})):
        data = json.loads(json.dumps(encode_request(request, spider)))
        back = decode_request(data, spider)
        assert type(back) is type(request) and back.to_dict(spider=spider) == request.to_dict(spider=spider)
    assert encode_request(Request("http://a/", meta={"obj": object()}), spider) is None
    # the page a spider passes on with meta=response.meta is EDREW's, dropped on arrival: not journaled
    from edrew_scrapy.serializer import serialize
    carried = Request("http://a/next", meta={"edrew_page": serialize(b"<p>x</p>"), "depth": 1})
    assert encode_request(carried, spider)["meta"] == {"depth": 1}


def test_guard_is_off_without_jobdir_or_with_edrew_resume_false(tmp_path):
    crawler = get_crawler(NamedSpider, settings_dict={"ADDONS": {"edrew_scrapy.Addon": 500}})
    crawler._apply_settings()
    assert crawler.get_extension(ResumeGuard) is None
    write_marker(tmp_path / "job")
    crawler = crawler_with(tmp_path, {}, EDREW_RESUME=False)
    assert crawler.get_extension(ResumeGuard) is None
    assert unclean_stop(tmp_path / "job")
