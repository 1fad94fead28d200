"""Splits: folds by domain, the thesis's 70/20/10 protocol, leave-one-site-out."""
from dataclasses import dataclass, field

import pytest

from edrew_scrapy.data import registrable_domain
from edrew_scrapy.data.splits import by_domain, by_host, cross_site_splits, group_kfold, swde_split
from edrew_scrapy.page import Node, Page


@dataclass
class P:
    domain: str
    page_type_or_site: str = "site"
    page: Page = field(default_factory=lambda: Page(url=None, nodes=[]))


def _pages():
    sizes = {"a.com": 7, "b.com": 1, "c.com": 3, "d.com": 2, "e.com": 5, "f.com": 1, "g.com": 4}
    return [P(d) for d, n in sizes.items() for _ in range(n)]


def test_group_kfold_never_splits_a_domain():
    pages = _pages()
    folds = group_kfold(pages, k=3, seed=7)
    assert len(folds) == 3
    seen = {}
    for f, (train, test) in enumerate(folds):
        assert sorted(train + test) == list(range(len(pages)))
        test_domains = {pages[i].domain for i in test}
        assert not test_domains & {pages[i].domain for i in train}
        for d in test_domains:
            assert d not in seen
            seen[d] = f
    assert set(seen) == {p.domain for p in pages}


def test_group_kfold_is_deterministic_and_balanced():
    pages = _pages()
    assert group_kfold(pages, k=3, seed=7) == group_kfold(pages, k=3, seed=7)
    sizes = [len(test) for _, test in group_kfold(pages, k=3, seed=7)]
    assert max(sizes) - min(sizes) <= 2


def test_group_kfold_rejects_too_few_groups():
    with pytest.raises(ValueError):
        group_kfold([P("a.com"), P("a.com")], k=2)


def _node(text):
    return Node(index=0, tag="p", content=text, retps="<#CNT><#SEP>p|1", bucket=1, parent=-1, path="/p")


def test_swde_split_ratios_seed_and_duplicates():
    pages = [P("s", page=Page(url=None, nodes=[_node(f"page {i}")])) for i in range(100)]
    pages.append(P("s", page=Page(url=None, nodes=[_node("page 3")])))  # duplicate of page 3
    train, val, test = swde_split(pages, seed=1)
    assert (len(train), len(val), len(test)) == (70, 20, 10)
    assert 100 not in train + val + test
    assert not set(train) & set(test) and not set(val) & set(test)
    assert swde_split(pages, seed=1) == (train, val, test)
    assert swde_split(pages, seed=2) != (train, val, test)


def test_cross_site_splits_leave_one_site_out():
    pages = [P("x", "alpha"), P("x", "beta"), P("x", "alpha"), P("x", "gamma")]
    out = cross_site_splits(pages)
    assert [s for s, _, _ in out] == ["alpha", "beta", "gamma"]
    site, train, test = out[0]
    assert test == [0, 2] and train == [1, 3]
    assert [s for s, _, _ in cross_site_splits(pages, test_sites=["beta"])] == ["beta"]


@pytest.mark.parametrize("host, site", [
    ("uk.glossier.com", "glossier.com"), ("glossier.com", "glossier.com"),
    ("news.bbc.co.uk", "bbc.co.uk"), ("shop.example.com.au", "example.com.au"),
    ("x.gov.uk", "x.gov.uk"),           # gov.uk is a suffix: x.gov.uk is what its owner registered
    ("a.substack.com", "substack.com"),  # one platform's template: one group, stricter than the PSL
    ("arlo.co", "arlo.co"), ("a.b.online.fr", "online.fr"),
    ("WWW.Example.COM.", "example.com"), ("localhost", "localhost"), ("10.0.0.7", "10.0.0.7"),
    ("::1", "::1"), ("", ""),
    ("shop.bücher.de", "xn--bcher-kva.de"), ("xn--bcher-kva.de", "xn--bcher-kva.de"),
    ("a..b.com", "b.com"),  # an empty label is no IDNA: compared as written
])
def test_registrable_domain(host, site):
    assert registrable_domain(host) == site


@dataclass
class G(P):
    group: str = ""


def test_folds_keep_the_hosts_of_one_registrable_domain_together():
    # a shop's country sites and a platform's blogs share their templates: never on both sides
    hosts = ["glossier.com", "uk.glossier.com", "buy.glossier.com", "a.substack.com", "b.substack.com",
             "c.com", "d.com", "e.com", "f.com", "g.com"]
    pages = [G(h) for h in hosts]
    for _train, test in group_kfold(pages, k=3, seed=1):
        for group in ({0, 1, 2}, {3, 4}):
            assert group <= set(test) or not group & set(test)
    # by host (the measurements before 27 Nov 2026) they may be split
    by_host_folds = group_kfold(pages, k=3, key=by_host, seed=1)
    assert any(0 < len({0, 1, 2} & set(test)) < 3 for _, test in by_host_folds)


def test_a_dataset_named_group_is_the_key_as_given():
    # the simple format's `group` is the user's own key: not cut down to a registrable domain
    pages = [G("a.x.com", group="a.x.com"), G("b.x.com", group="b.x.com")]
    assert [by_domain(p) for p in pages] == ["a.x.com", "b.x.com"]
    assert [by_host(p) for p in pages] == ["a.x.com", "b.x.com"]
