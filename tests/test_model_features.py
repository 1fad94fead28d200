"""page_features (vectorised) must equal node_features (the readable definition) exactly."""
from __future__ import annotations

import numpy as np
import pytest

from edrew_scrapy.model.features import N_FEATURES, node_features, page_features
from edrew_scrapy.serializer import serialize

PAGES = [
    "<html><body><nav><a href='/'>Home</a> | <a href='/a'>About us</a></nav>"
    "<article><h1>ÀÉÎ Title, with PUNCTUATION!</h1><p>Digits 12345 and ½ ² ٣ (not all decimal).</p>"
    "<p>Greek ΑΒΓ δεζ, Cyrillic ЖЖж, «quotes» — dashes… and_underscores.</p>"
    "<p>Astral: emoji 😀, math 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𝐀𝐁, a lone surrogate \ud800 here.</p></article>"
    "<div hidden>hidden text</div><p><img src='x.png'>with an image</p>"
    "<footer>© 2026 — all rights reserved</footer></body></html>",
    "plain text only, no tags at all.",
    "<p>one</p>",
    "<div><p></p><p>   </p></div>",
    # Chinese and Japanese: words counted in pieces (words.py), their own punctuation and sentence ends
    "<p>河畔市议会周二晚上以九票对四票通过决议，将沿码头路全线修建。</p><p>记者 王美玲 · 2026年3月3日</p>"
    "<p>通り沿いの駐車スペース１０６台分のうち４２台分が廃止される。</p>"
    "<p>「引用」</p><p>\U00020000\U00020001 astral</p>"
    "<p>Go to Site 前往中文网站</p><p>English only, as before？</p>",
    '<script type="application/ld+json">{"@type": "Product"}</script><meta property="og:type" content="article">'
    "<p>A kettle.</p><p>Five stars, says a reviewer.</p>",
]


@pytest.mark.parametrize("html", PAGES)
def test_vectorised_features_equal_the_definition(html):
    page = serialize(html)
    expected = np.asarray([node_features(node, page) for node in page.nodes], dtype=np.float32)
    got = page_features(page, N_FEATURES)
    assert got.shape == (len(page.nodes), N_FEATURES)
    assert got.dtype == np.float32
    if len(page.nodes):
        np.testing.assert_array_equal(got, expected)


def test_every_code_point_class_matches_the_regexes():
    # The table is built from the regexes; this checks the astral fallback agrees with it too.
    from edrew_scrapy.model import features

    table = features._class_table()
    for cp in (0x41, 0x61, 0x5F, 0x31, 0xBD, 0x663, 0x2014, 0xFF21, 0xD800):
        assert table[cp] == features._class_bits(chr(cp)), hex(cp)


def test_models_that_read_fewer_features_get_the_first_ones():
    # models trained before the template-repetition features read 14
    page = serialize(PAGES[0])
    np.testing.assert_array_equal(page_features(page, 14), page_features(page, N_FEATURES)[:, :14])


def test_template_repetition_features():
    page = serialize("<ul><li><a href=/a>One</a></li><li><a href=/b>Two</a></li><li><a href=/c>Six</a></li></ul>"
                     "<p>" + "word " * 30 + "</p>")
    feats = page_features(page, N_FEATURES)
    items = [k for k, n in enumerate(page.nodes) if n.content in ("One", "Two", "Six")]
    para = [k for k, n in enumerate(page.nodes) if n.content.startswith("word")][0]
    assert len(items) == 3
    assert all(feats[k, 14] == pytest.approx(np.log1p(3) / 6.0) for k in items)
    assert feats[para, 14] == pytest.approx(np.log1p(1) / 6.0)
    total = sum(len(n.content) for n in page.nodes)
    assert feats[para, 15] == pytest.approx(len(page.nodes[para].content) / total)


def test_declared_kind_features_are_the_same_for_every_node():
    page = serialize(PAGES[-1])
    feats = page_features(page, 20)
    assert feats.shape[1] == 20
    # declares_product, declares_article, declares_discussion, declares_collection
    np.testing.assert_array_equal(feats[:, 16:20], np.tile([1.0, 1.0, 0.0, 0.0], (len(page.nodes), 1)))
    assert not page_features(serialize(PAGES[2]), N_FEATURES)[:, 16:20].any()
    np.testing.assert_array_equal(page_features(page, 16), feats[:, :16])  # models trained before them


def test_chinese_text_counts_its_words_and_ends_its_sentences():
    import math

    page = serialize("<p>河畔市议会周二晚上以九票对四票通过决议。</p><p>one two three</p>")
    feats = page_features(page, N_FEATURES)
    assert feats[0, 1] == pytest.approx(math.log1p(11) / 6.0)  # 19 characters in 10 pieces, and "。"
    assert feats[0, 11] == 1.0 and feats[1, 11] == 0.0     # ends_sentence: "。" ends a sentence
    assert feats[0, 3] == pytest.approx(1 / 20)             # punct_ratio: "。" is punctuation


def test_word_counts_follow_str_split_on_every_kind_of_space():
    # page_features counts words without splitting; contents straight from a Page, not the serializer,
    # so leading/trailing and unusual whitespace reach it too
    from edrew_scrapy.page import Node, Page

    contents = ["", "   ", " a  b ", "a\u00a0b", "x\u2028y\x1cz\x85w", "\tone\ntwo\r\n", "😀 𝐀𝐁", "end.", "last "]
    nodes = [Node(index=i, tag="p", content=c, retps="<#CNT><#SEP>p|1", bucket=1, parent=-1,
                  path=f"/p[{i}]", depth=1, position=i, link_chars=0) for i, c in enumerate(contents)]
    page = Page(url=None, nodes=nodes, count_tags=len(nodes))
    expected = np.asarray([node_features(node, page) for node in page.nodes], dtype=np.float32)
    np.testing.assert_array_equal(page_features(page, N_FEATURES), expected)


def test_ancestor_groups_follow_the_element_tree():
    from edrew_scrapy.model.features import ancestor_groups

    page = serialize("<html><body><div><p>one</p><ul><li>a</li><li>b</li></ul></div><div>tail</div></body></html>")
    groups = ancestor_groups([n.path for n in page.nodes], 3)
    assert [n.content for n in page.nodes] == ["one", "a", "b", "tail"]
    # parent: the two items share the <ul>; the <p> sits in the first <div>, "tail" in <body>
    assert groups[0].tolist() == [0, 1, 1, 2]
    # grandparent: the items' is the first <div>, the <p>'s and "tail"'s differ (<body>, <html>)
    assert groups[1].tolist() == [0, 1, 1, 2]
    assert groups[2, 1] == groups[2, 2] and groups.shape == (3, 4)
    assert ancestor_groups([], 2).shape == (2, 0)


def test_ancestor_groups_of_document_order_paths_keep_their_slashes_in_one_step():
    from edrew_scrapy.model.features import ancestor_groups

    paths = ["(//div)[7]", "(//div)[7]/*[last()]", "(//div)[8]", "/html[1]/body[1]/p[1]"]
    groups = ancestor_groups(paths, 2)
    # level 1: the truncated rest's parent is (//div)[7]; the document-order elements' is the root
    assert groups[0, 0] == groups[0, 2] != groups[0, 1] and groups[0, 3] not in groups[0, :3]
    assert groups[1, 1] == groups[1, 0]


CONTAINER_PAGE = ("<html><body><div><article><p>aaaa, bbbb.</p><p>cc <a href=x>dd</a></p></article>"
                  "<ul><li><a href=1>ee</a></li><li><a href=2>ff</a></li></ul></div></body></html>")


def test_container_features_on_a_page_computed_by_hand():
    import math

    from edrew_scrapy.model.features import CONTAINER_FEATURES, DEFAULT_FEATURES, FEATURE_NAMES

    page = serialize(CONTAINER_PAGE)
    assert [n.content for n in page.nodes] == ["aaaa, bbbb.", "cc dd", "ee", "ff"]  # 20 characters, 6 in links
    feats = page_features(page, N_FEATURES)
    assert N_FEATURES == DEFAULT_FEATURES + CONTAINER_FEATURES == len(FEATURE_NAMES)
    assert FEATURE_NAMES[DEFAULT_FEATURES:] == (
        "parent_text_share", "parent_link_density", "grandparent_text_share", "grandparent_link_density",
        "grandparent_log_nodes", "levels_to_core")
    got = feats[:, DEFAULT_FEATURES:]
    # the paragraphs: parent <article> 16 chars (2 in a link), grandparent <div> all 20 (6), 4 nodes under it;
    # the first holds 11 of 20 characters itself (>= 0.3: 0 levels), the second 5, its <article> 16 (1 level)
    para = [0.8, 2 / 16, 1.0, 6 / 20, math.log1p(4) / 6.0]
    np.testing.assert_allclose(got[0], para + [0.0], rtol=1e-6)
    np.testing.assert_allclose(got[1], para + [0.1], rtol=1e-6)
    # the list's links: parent <li> 2 chars all link, grandparent <ul> 4 chars all link, 2 nodes; the <a>
    # (0.1), <li> (0.1), <ul> (0.2) hold less than 0.3 of the page, the <div> all of it: 3 levels
    item = [0.1, 1.0, 0.2, 1.0, math.log1p(2) / 6.0, 0.3]
    np.testing.assert_allclose(got[2], item, rtol=1e-6)
    np.testing.assert_allclose(got[3], item, rtol=1e-6)


def test_container_features_of_short_and_document_order_paths():
    # a path of one or two steps has no parent or grandparent element: the whole page stands for it; a
    # document-order path (a very deep element) keeps its slashes in one step
    from edrew_scrapy.page import Node, Page

    paths = ["/p[1]", "(//div)[7]", "(//div)[7]/*[last()]", "/html[1]/body[1]/div[1]/p[1]"]
    nodes = [Node(index=i, tag="p", content="x" * (i + 1) * 3, retps="<#CNT><#SEP>p|1", bucket=1, parent=-1,
                  path=path, depth=1, position=i, link_chars=i) for i, path in enumerate(paths)]
    page = Page(url=None, nodes=nodes, count_tags=len(nodes))
    expected = np.asarray([node_features(node, page) for node in page.nodes], dtype=np.float32)
    np.testing.assert_array_equal(page_features(page, N_FEATURES), expected)
    got = page_features(page, N_FEATURES)[:, 20:]
    # "/p[1]": its parent is the document (all 30 characters, 6 in links), its grandparent the whole page
    np.testing.assert_allclose(got[0, :4], [1.0, 6 / 30, 1.0, 6 / 30], rtol=1e-6)
    # "(//div)[7]/*[last()]": its parent is (//div)[7], which holds it and itself: 6 + 9 characters
    np.testing.assert_allclose(got[2, 0:2], [15 / 30, 3 / 15], rtol=1e-6)


def test_models_that_read_16_or_20_features_are_unchanged():
    # the container features come after the first 20: models that read 16 or 20 see what they saw before
    from edrew_scrapy.model.features import DEFAULT_FEATURES
    from edrew_scrapy.model.head import head_config

    for html in PAGES + [CONTAINER_PAGE]:
        page = serialize(html)
        if not page.nodes:
            continue
        every = page_features(page, N_FEATURES)
        before = np.asarray([node_features(node, page)[:DEFAULT_FEATURES] for node in page.nodes], dtype=np.float32)
        for n in (14, 16, 20):
            np.testing.assert_array_equal(page_features(page, n), before[:, :n])
            np.testing.assert_array_equal(every[:, :n], before[:, :n])
    assert head_config("d", 64, 3, 32)["n_features"] == DEFAULT_FEATURES == 20  # what a retrain reads by default
