"""The scorer's caches: bounded by entries and by bytes (EDREW_CACHE_MB), right values after evictions,
and their sizes reported as crawl stats (edrew/cache/<name>/entries, /bytes), also from a worker."""
from __future__ import annotations

import inspect
import random
import sys
from collections import OrderedDict

import numpy as np
import pytest
import torch
from _model_helpers import make_page, tiny_model
from scrapy.utils.test import get_crawler

from edrew_scrapy.model.scorer import CACHE_SHARES, DEFAULT_CACHE_MB, ENTRY_OVERHEAD, LRU, load_model
from edrew_scrapy.scrapy import worker as workers
from edrew_scrapy.scrapy.scoring import ScoringService
from edrew_scrapy.scrapy.settings import DEFAULTS, EdrewSettings

DIM = 16


def value(key: str) -> list:
    n = float(key[1:])
    return [n + i / 100 for i in range(DIM)]


def compute(keys):
    return torch.tensor([value(k) for k in keys])


def test_the_byte_budget_is_honoured_and_the_newest_entries_kept():
    budget = 20_000
    cache = LRU(10_000, max_bytes=budget)
    keys = [f"k{i:05d}" for i in range(2000)]
    for start in range(0, len(keys), 50):
        chunk = keys[start:start + 50]
        out = cache.get_many(chunk, compute)
        assert torch.equal(out, compute(chunk))
        assert cache.nbytes <= budget
    per_entry = DIM * 4 + sys.getsizeof(keys[-1]) + ENTRY_OVERHEAD
    assert budget // per_entry - 1 <= len(cache) <= budget // per_entry
    newest = keys[-len(cache):]
    assert all(k in cache for k in newest) and keys[-len(cache) - 1] not in cache
    out = cache.get_many(newest, lambda missing: pytest.fail(f"recomputed {missing}"))
    assert torch.equal(out, compute(newest))


def test_nbytes_counts_rows_keys_and_bookkeeping():
    cache = LRU(100)
    assert cache.stats() == {"entries": 0, "bytes": 0}
    cache.get_many(["a", "bb"], lambda m: torch.zeros(len(m), DIM))
    expected = 2 * (DIM * 4 + ENTRY_OVERHEAD) + sys.getsizeof("a") + sys.getsizeof("bb")
    assert cache.stats() == {"entries": 2, "bytes": expected}


def test_an_entry_larger_than_the_budget_is_returned_not_kept():
    cache = LRU(10, max_bytes=DIM * 4 + ENTRY_OVERHEAD + 60)
    big = "k" + "0" * 200
    assert torch.equal(cache.get_many([big], compute), compute([big]))
    assert len(cache) == 0 and cache.nbytes <= cache.max_bytes
    cache.get_many(["k1"], compute)
    assert len(cache) == 1


def test_evicted_rows_are_reused_without_mixing_values_up():
    # Against a reference LRU: the same keys computed, the same values returned, at most `capacity` kept.
    rng = random.Random(7)
    cache = LRU(12, max_bytes=12 * (DIM * 4 + ENTRY_OVERHEAD + 60))
    reference: "OrderedDict[str, None]" = OrderedDict()
    for _ in range(400):
        keys = list(dict.fromkeys(f"k{rng.randrange(30)}" for _ in range(rng.randint(1, 8))))
        computed = []
        out = cache.get_many(keys, lambda missing, seen=computed: seen.extend(missing) or compute(missing))
        assert torch.equal(out, compute(keys))
        assert computed == [k for k in keys if k not in reference]
        # the hits become the most recent (in the call's order), then the new keys after them
        for k in [k for k in keys if k in reference] + [k for k in keys if k not in reference]:
            reference[k] = None
            reference.move_to_end(k)
        while len(reference) > len(cache):
            reference.popitem(last=False)
        assert list(reference) == list(cache._slot) and len(cache) <= 12


def test_gather_and_one_dimensional_values():
    cache = LRU(3)
    out = cache.gather(["a", "b", "a"], lambda keys: torch.arange(len(keys), dtype=torch.float32))
    assert out.tolist() == [0.0, 1.0, 0.0] and len(cache) == 2


def test_the_cache_budget_is_shared_out_and_reported(tmp_path):
    tiny_model(tmp_path)
    scorer = load_model(tmp_path, cache_mb=8)
    mib = 2**20
    assert scorer.encoder.tokens.max_bytes == 8 * mib * CACHE_SHARES["tokens"]
    assert scorer.sequences.max_bytes == 8 * mib * CACHE_SHARES["sequences"]
    assert scorer.texts.max_bytes == 8 * mib * CACHE_SHARES["texts"]
    assert sum(CACHE_SHARES.values()) == 1
    assert load_model(tmp_path).sequences.max_bytes == DEFAULT_CACHE_MB * mib * CACHE_SHARES["sequences"]
    assert load_model(tmp_path, cache_mb=None).texts.max_bytes is None
    assert load_model(tmp_path, cache_mb=0).texts.max_bytes is None  # as EDREW_CACHE_MB=0
    assert load_model(tmp_path, cache_mb=np.int64(8)).texts.max_bytes == scorer.texts.max_bytes
    scorer.score([make_page(5), make_page(3, url="http://example.test/q")])
    stats = scorer.cache_stats()
    assert set(stats) == {"tokens", "sequences", "texts"}
    assert all(s["entries"] > 0 and s["bytes"] > 0 for s in stats.values())
    assert stats["texts"]["bytes"] == scorer.texts.nbytes


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -1, "64", True])
def test_a_bad_budget_is_a_value_error_before_the_model_is_read(tmp_path, bad):
    # tmp_path holds no model: the budget is refused first, not the folder
    with pytest.raises(ValueError, match="cache_mb must be None or a number of MiB >= 0"):
        load_model(tmp_path, cache_mb=bad)


def test_a_tiny_budget_gives_the_same_scores(tmp_path):
    tiny_model(tmp_path)
    pages = [make_page(6 + i, url=f"http://example.test/{i}") for i in range(5)]
    roomy, tiny = load_model(tmp_path), load_model(tmp_path, cache_mb=0.002)
    for _ in range(2):
        for a, b in zip(roomy.score(pages), tiny.score(pages)):
            assert a.tolist() == pytest.approx(b.tolist(), abs=1e-6)
    assert all(s["bytes"] <= 0.002 * 2**20 * CACHE_SHARES[name] for name, s in tiny.cache_stats().items())


def test_the_setting():
    assert DEFAULTS["EDREW_CACHE_MB"] == DEFAULT_CACHE_MB == EdrewSettings.cache_mb
    assert inspect.signature(workers.init).parameters["cache_mb"].default == DEFAULT_CACHE_MB

    def conf(**settings):
        return EdrewSettings.from_settings(get_crawler(settings_dict=settings).settings)

    assert conf().cache_mb == DEFAULT_CACHE_MB
    assert conf(EDREW_CACHE_MB="48").cache_mb == 48.0
    assert conf(EDREW_CACHE_MB=0).cache_mb is None
    with pytest.raises(ValueError, match="EDREW_CACHE_MB"):
        conf(EDREW_CACHE_MB=-1)


def test_a_worker_sends_its_cache_sizes_with_each_batch(monkeypatch):
    from conftest import DEMO_SITE

    scorer = load_model(cache_mb=4)
    monkeypatch.setattr(workers, "_state", {"scorer": scorer, "threshold": None})
    page = "news/council-approves-riverside-bike-lanes.html"
    outcomes = workers.process([((DEMO_SITE / page).read_bytes(), "text/html", f"http://demo.test/{page}")] * 2)
    pid, caches = outcomes[0].caches
    assert outcomes[1].caches is None
    import os

    assert pid == os.getpid() and caches == scorer.cache_stats() and caches["texts"]["entries"] > 0


class FakePool:
    size = 1

    def __init__(self, pids):
        self._pids = set(pids)

    def pids(self):
        return self._pids


def test_cache_stats_are_summed_over_the_live_workers():
    crawler = get_crawler(settings_dict={"EDREW_WORKERS": 1})
    conf = EdrewSettings.from_settings(crawler.settings)
    mw = ScoringService(crawler, conf, None, FakePool({11, 12}))
    one = {"texts": {"entries": 3, "bytes": 300}, "tokens": {"entries": 1, "bytes": 100}}
    mw.report_caches(11, one)
    mw.report_caches(12, one)
    get = crawler.stats.get_value
    assert get("edrew/cache/texts/entries") == 6 and get("edrew/cache/texts/bytes") == 600
    assert get("edrew/cache/tokens/bytes") == 200
    mw.processes = FakePool({12, 13})  # 11 died and 13 replaced it
    mw.report_caches(13, {"texts": {"entries": 1, "bytes": 10}, "tokens": {"entries": 0, "bytes": 0}})
    assert get("edrew/cache/texts/entries") == 4 and get("edrew/cache/texts/bytes") == 310
