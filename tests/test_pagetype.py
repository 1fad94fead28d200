"""The page-type classifier (edrew_scrapy/pagetype.py): features, weights files, training, the shipped one."""
from __future__ import annotations

import json

import numpy as np
import pytest

from edrew_scrapy.pagetype import (
    FEATURE_VERSION,
    FORMAT,
    PAGE_TYPES,
    PageTypeClassifier,
    PageTypeError,
    check_listed,
    choose_c,
    default_classifier,
    fit_spec,
    page_features,
)
from edrew_scrapy.serializer import serialize

PRODUCT = """<html><head><title>Trail shoe X2 | Shop</title>
<script type="application/ld+json">{"@type": "Product", "name": "Trail shoe X2", "offers": {"price": "89.00"}}</script>
</head><body><h1>Trail shoe X2</h1><p class="price">$89.00</p><button>Add to cart</button>
<ul><li>Size 42</li><li>Size 43</li></ul><p>A light shoe for muddy trails, with a grippy sole.</p></body></html>"""

ARTICLE = """<html><head><title>Council backs bike lanes</title><meta property="og:type" content="article"></head>
<body><article><h1>Council backs bike lanes</h1><p class="byline">By Maya Okonkwo, March 3, 2026</p>
<p>Riverside council voted nine to four on Tuesday night to build a two-way protected cycle track.</p>
<p>Forty-two of the road's parking spaces will be removed, and the work starts in spring.</p></article></body></html>"""

FORUM = """<html><head><title>Chain keeps slipping - Cycling Forum</title></head><body>
<div class="post"><span class="author">rider42</span><p>My chain keeps slipping on the small cog. Any ideas?</p>
<a href="/reply">Reply</a><a href="/quote">Quote</a></div>
<div class="post"><span class="author">wrench</span><p>Check the derailleur hanger first, it is often bent.</p>
<a href="/reply">Reply</a><a href="/quote">Quote</a></div></body></html>"""


def test_features_read_the_url_the_declared_types_and_the_nodes():
    page = serialize(PRODUCT, url="https://shop.example.com/products/trail-shoe-x2?colour=red")
    feats = page_features(page)
    assert feats["u:products"] == 1.0 and feats["host:shop"] == 1.0 and feats["url_query"] == 1.0
    assert feats["t:product"] == 1.0 and feats["k:product"] == 1.0
    assert feats["prices"] > 0 and feats["tag_n:li"] > 0 and "h:trail" in feats
    article = page_features(serialize(ARTICLE, url="https://news.example.com/2026/03/03/bike-lanes"))
    assert article["u:year"] == 1.0 and article["t:og:article"] == 1.0 and article["dates"] > 0
    assert page_features(serialize("", url=None)) is not None
    # a page without a URL (read from a file) has no URL features: it is not a site's root page
    assert not any(name.startswith(("url_", "u:", "host:")) for name in page_features(serialize(ARTICLE)))


def test_the_word_features_are_each_read_nodes_first_words_as_a_search_of_each_node_finds_them():
    import re

    from edrew_scrapy.pagetype import MAX_WORDS
    from edrew_scrapy.words import split_words

    long_text = " ".join(f"Wordy{chr(97 + i % 26)}{chr(97 + i // 26 % 26)}" for i in range(150))
    html = ("<html><head><title>ΣΟΦΙΑΣ Title here</title></head><body><h1>Big\u00a0Heading\tWords</h1>"
            f"<p>{long_text}</p><h2>河畔市议会 voted news</h2><p>Ordinary words, twice twice; x1y and 42 apples</p>"
            + "".join(f"<p>filler{i % 7} text{'s' * (i % 3)} of paragraph {i}</p>" for i in range(400))
            + "<footer><p>boilerplate words footer</p></footer></body></html>")
    page = serialize(html, url="https://example.com/a")
    # the reading node by node: each non-boilerplate node's first 100 words, lower-cased, until MAX_WORDS
    expected, read = {}, 0
    for node in page.nodes:
        if node.boilerplate or read >= MAX_WORDS:
            continue
        found = split_words(node.content.lower(), 100)
        read += len(found)
        prefix = "h:" if node.tag in ("h1", "h2", "h3", "title") else "w:"
        for word in re.findall(r"(?<!\S)[^\W\d_]{3,20}(?!\S)", " ".join(found)):
            expected[prefix + word] = 1.0
    feats = page_features(page)
    assert {k: v for k, v in feats.items() if k[:2] in ("h:", "w:")} == expected
    assert "w:wordyvd" in feats and "w:wordywd" not in feats  # a long node's first 100 words (of 150)
    assert "h:heading" in feats and "h:voted" in feats and "w:twice" in feats and "w:apples" in feats


def test_what_a_page_declares_is_read_as_evidence_of_its_type():
    from edrew_scrapy.metadata import read_declared

    html = ARTICLE.replace(", March 3, 2026", "").replace("</head>", '<meta name="author" content="Maya Okonkwo">'
                           '<meta property="article:published_time" content="2026-03-03T08:00:00Z"></head>')
    declared = read_declared(html, url="https://news.example.com/bike-lanes", dates=False)
    feats = page_features(serialize(html, url="https://news.example.com/bike-lanes"), declared=declared)
    assert feats["d:author"] == 1.0 and feats["d:byline"] == 1.0 and feats["d:date"] == 1.0
    assert feats["m:og:type"] == 1.0 and feats["m:article:published_time"] == 1.0 and feats["d:h1s"] == 1.0
    assert "d:modified" not in feats and "d:posters" not in feats
    # a forum's poster markup; nothing declared on a page that declares nothing
    forum = FORUM.replace('class="author"', 'class="username"')
    feats = page_features(serialize(forum), declared=read_declared(forum, dates=False))
    assert feats["d:posters"] > 0 and "d:author" not in feats and feats["d:title_parts"] == 2.0
    bare = page_features(serialize("<p>just text</p>"), declared=read_declared("<p>just text</p>", dates=False))
    assert not any(name.startswith(("d:author", "d:date", "m:")) for name in bare)
    # without what the page declares, only the serialised page's features
    assert not any(name.startswith(("d:", "m:")) for name in page_features(serialize(html)))


def _training_rows():
    urls = {"product": "https://s{}.example/products/item-{}", "article": "https://n{}.example/2026/03/story-{}",
            "forum": "https://f{}.example/threads/topic-{}"}
    html = {"product": PRODUCT, "article": ARTICLE, "forum": FORUM}
    rows, labels, groups = [], [], []
    for kind in urls:
        for i in range(12):
            rows.append(page_features(serialize(html[kind], url=urls[kind].format(i, i))))
            labels.append(kind)
            groups.append(f"{kind}{i}")
    return rows, labels, groups


def test_a_classifier_trained_on_feature_rows_predicts_their_types(tmp_path):
    rows, labels, groups = _training_rows()
    spec = fit_spec(rows, labels, c=1.0, min_pages=3, groups=groups)
    assert spec["format"] == FORMAT and spec["feature_version"] == FEATURE_VERSION
    path = tmp_path / "pagetype.json"
    path.write_text(json.dumps(spec))
    classifier = PageTypeClassifier.load(path)
    for html, url, kind in ((PRODUCT, "https://other.example/products/z", "product"),
                            (FORUM, "https://talk.example/threads/chain", "forum")):
        label, p = classifier.predict(serialize(html, url=url))
        assert label == kind and 0.34 < p <= 1.0
    probs = classifier.probabilities(page_features(serialize(ARTICLE, url="https://x.example/a")))
    assert probs.shape == (3,) and abs(float(probs.sum()) - 1.0) < 1e-9


def test_maxabs_scaling_keeps_binary_features_0_or_1_and_types_the_pages():
    rows, labels, groups = _training_rows()
    spec = fit_spec(rows, labels, c=1.0, min_pages=3, groups=groups, scaling="maxabs")
    classifier = PageTypeClassifier(spec)
    assert not any(spec["mean"])  # nothing centred: a feature the page lacks stays 0
    i = classifier.index["u:products"]
    assert spec["scale"][i] == 1.0  # a URL token: 1 where present
    j = classifier.index["n_words"]
    # a count: divided by its largest value (weights are written to 6 significant digits)
    assert spec["scale"][j] == pytest.approx(max(r["n_words"] for r in rows), rel=1e-5)
    z = classifier.vector(rows[0])
    assert z.min() >= 0.0 and z.max() <= 1.0 + 1e-5
    for html, url, kind in ((PRODUCT, "https://other.example/products/z", "product"),
                            (FORUM, "https://talk.example/threads/chain", "forum")):
        assert classifier.predict(serialize(html, url=url))[0] == kind
    with pytest.raises(ValueError, match="scaling 'minmax'"):
        fit_spec(rows, labels, c=1.0, min_pages=3, groups=groups, scaling="minmax")


def test_choose_c_cross_validates_each_candidate_by_group_and_keeps_the_best():
    rows, labels, groups = _training_rows()
    best, accuracy = choose_c(rows, labels, groups, [1.0, 1e-6], min_pages=2, scaling="maxabs", folds=3)
    assert set(accuracy) == {1.0, 1e-6} and all(0.0 <= a <= 1.0 for a in accuracy.values())
    # C 1e-6 leaves the weights ~0, too little to tell the three types apart on every page, while C 1 types
    # every held-out page right
    assert accuracy[1.0] == 1.0 and accuracy[1e-6] < 1.0 and best == 1.0
    tied, _ = choose_c(rows, labels, groups, [2.0, 1.0], min_pages=2, scaling="maxabs", folds=3)
    assert tied == 1.0  # equal accuracy: the stronger regularisation


def test_forum_needs_forum_markup_or_a_forum_url_token_when_trained_so():
    from edrew_scrapy.metadata import read_declared
    from edrew_scrapy.pagetype import FORUM_MARKUP, forum_evidence

    rows, labels, groups = _training_rows()
    evidence = forum_evidence(rows, labels, groups, 3)
    # the declared forum markup, and the URL tokens of the forums of 3+ domains that mostly forums have
    assert evidence[:len(FORUM_MARKUP)] == list(FORUM_MARKUP)
    assert "u:threads" in evidence and "u:topic" in evidence
    assert not {"u:products", "u:year", "u:num"} & set(evidence)  # other types' tokens, or every page's
    assert "u:threads" not in forum_evidence(rows, labels, groups, 13)  # the forums of 12 domains have it
    free = PageTypeClassifier(fit_spec(rows, labels, c=1.0, min_pages=3, groups=groups, scaling="maxabs"))
    spec = fit_spec(rows, labels, c=1.0, min_pages=3, groups=groups, scaling="maxabs", forum_domains=3)
    assert spec["requires"] == {"forum": evidence} and "requires" not in free.card
    gated = PageTypeClassifier(json.loads(json.dumps(spec)))
    k = gated.classes.index("forum")
    # a forum URL: a forum, as without the requirement
    page = serialize(FORUM, url="https://talk.example/threads/chain")
    assert gated.predict(page) == free.predict(page) and gated.predict(page)[0] == "forum"
    # read from a file (no URL), nothing declared: its words alone make it no forum, the others keep their odds
    bare = page_features(serialize(FORUM))
    p, q = gated.probabilities(bare), free.probabilities(bare)
    others = [i for i in range(len(p)) if i != k]
    assert q[k] > 0 and p[k] == 0 and abs(float(p.sum()) - 1.0) < 1e-9
    assert np.allclose(p[others], q[others] / q[others].sum())
    # forum software's poster markup (what the metadata reads) is evidence: then the forum stands
    forum = FORUM.replace('class="author"', 'class="username"')
    declared = read_declared(forum, dates=False)
    with_posters = gated.page_probabilities(serialize(forum), declared)
    assert with_posters[k] > 0
    assert np.allclose(with_posters, gated.probabilities(page_features(serialize(forum), declared=declared)))
    assert gated.page_probabilities(serialize(forum))[k] == 0  # the scorer's call, without what is declared


def test_a_classifier_of_two_types_gives_the_same_odds_as_scikit_learns():
    from sklearn.linear_model import LogisticRegression

    rows, labels, groups = _training_rows()
    keep = [i for i, label in enumerate(labels) if label in ("product", "forum")]
    rows, labels, groups = [rows[i] for i in keep], [labels[i] for i in keep], [groups[i] for i in keep]
    spec = fit_spec(rows, labels, c=1.0, min_pages=3, groups=groups)
    classifier = PageTypeClassifier(spec)  # one coefficient row per type, as with three or more
    assert len(spec["coef"]) == 2 and classifier.classes == ("forum", "product")
    x = np.array([classifier.vector(r) for r in rows])
    reference = LogisticRegression(C=1.0, max_iter=3000).fit(x, labels).predict_proba(x)[:, 1]
    ours = np.array([classifier.probabilities(r)[1] for r in rows])
    assert np.allclose(ours, reference, atol=1e-3)


def _good_spec():
    return {"format": FORMAT, "feature_version": FEATURE_VERSION, "classes": ["a", "b"], "features": ["x", "y"],
            "mean": [0.0, 0.0], "scale": [1.0, 1.0], "coef": [[1.0, 0.0], [0.0, 1.0]], "intercept": [0.0, 0.0]}


@pytest.mark.parametrize("change,message", [
    ({"format": "pickle"}, "format"),
    ({"feature_version": 999}, "feature_version"),
    ({"coef": [[1.0, 0.0]]}, "shapes"),
    ({"scale": [1.0, 0.0]}, "not finite, or a scale"),
    ({"intercept": [float("nan"), 0.0]}, "not finite"),
    ({"mean": "x"}, "ValueError|shapes"),
    ({"classes": None}, "TypeError"),
    ({"requires": ["x"]}, "requires is not an object"),
    ({"requires": {"c": ["x"]}}, "requires"),
    ({"requires": {"a": "x"}}, "requires"),
])
def test_a_broken_weights_file_is_a_page_type_error(tmp_path, change, message):
    spec = {**_good_spec(), **change}
    path = tmp_path / "pagetype.json"
    path.write_text(json.dumps(spec))
    with pytest.raises(PageTypeError, match=message):
        PageTypeClassifier.load(path)


def test_a_file_that_is_no_json_or_differs_from_the_card_is_named(tmp_path):
    path = tmp_path / "pagetype.json"
    path.write_bytes(b"\x80not json")
    with pytest.raises(PageTypeError, match="pagetype.json: cannot read"):
        PageTypeClassifier.load(path)
    path.write_text(json.dumps(_good_spec()))
    (tmp_path / "card.json").write_text(json.dumps({"files": {"pagetype.json": {"bytes": 3, "sha256": "0"}}}))
    with pytest.raises(PageTypeError, match="does not match the card"):
        check_listed(path)


def test_the_shipped_classifier_is_listed_in_the_card_and_tells_pages_apart():
    classifier = default_classifier(None)
    assert classifier is not None and set(classifier.classes) == set(PAGE_TYPES)
    assert classifier.card["card"]["cross_validated_accuracy"] > 0.5
    label, p = classifier.predict(serialize(PRODUCT, url="https://shop.example.com/products/trail-shoe-x2"))
    assert label == "product" and p > 1 / len(PAGE_TYPES)
    label, _ = classifier.predict(serialize(ARTICLE, url="https://news.example.com/2026/03/03/council-backs-bike-lanes"))
    assert label == "article"
    assert np.isfinite(classifier.coef).all()


def _fresh(page):
    """The page as the serializer gives it, without the page type's kept features."""
    from edrew_scrapy.page import Page

    return Page(*(getattr(page, name) for name in Page.__dataclass_fields__ if name != "type_features"))


def test_a_pages_second_classification_reuses_the_first_ones_features_with_the_same_probabilities():
    import pickle

    from edrew_scrapy.metadata import read_declared

    classifier = default_classifier()
    for html, url in ((ARTICLE, "https://news.example.com/2026/03/03/bike-lanes"),
                      (PRODUCT, "https://shop.example.com/products/trail-shoe-x2"), (FORUM, None)):
        page = serialize(html, url=url)
        declared = read_declared(html, url=url, dates=False)
        expected = classifier.probabilities(page_features(_fresh(page), declared=declared))
        expected_plain = classifier.probabilities(page_features(_fresh(page)))
        assert page.type_features is None
        # the scorer's classification (nothing declared) keeps the features read from the nodes, and the vector
        assert np.array_equal(classifier.page_probabilities(page), expected_plain)
        nodes, count, kept_url, feats, (index, vector) = page.type_features
        assert nodes is page.nodes and count == len(page.nodes) and kept_url == (url or "")
        assert index is classifier.index
        assert not vector.flags.writeable
        # the metadata's, with what the page declares, from them: the same values, bit for bit
        assert np.array_equal(classifier.page_probabilities(page, declared), expected)
        assert classifier.predict(page, declared) == classifier.predict(_fresh(page), declared)
        assert page.type_features[3] is feats  # read once
        # a page whose Declared is None (none read): the page's own features alone, from what was kept
        assert np.array_equal(classifier.page_probabilities(page, None), expected_plain)
        assert page_features(page) == page_features(_fresh(page))
        # pickled as a worker sends it: the features go with the page, the vector is computed again
        sent = pickle.loads(pickle.dumps(page))
        assert sent.type_features[0] is sent.nodes and sent.type_features[3] == feats and sent.type_features[4] is None
        assert np.array_equal(classifier.page_probabilities(sent, declared), expected)
        assert sent == page  # the kept features are not compared


def test_the_kept_features_are_read_again_when_the_nodes_or_the_url_change():
    classifier = default_classifier()
    page = serialize(ARTICLE, url="https://news.example.com/2026/03/03/bike-lanes")
    classifier.predict(page)
    kept = page.type_features
    page.url = "https://shop.example.com/products/bike-lanes"  # another URL: read again
    assert classifier.predict(page) == classifier.predict(_fresh(page))
    assert page.type_features[3] is not kept[3] and page.type_features[2] == page.url
    page.nodes = page.nodes[:2]  # another list
    assert page_features(page) == page_features(_fresh(page)) and page.type_features[1] == 2
    page.nodes.append(serialize(PRODUCT).nodes[1])  # the same list, longer
    assert page_features(page) == page_features(_fresh(page)) and page.type_features[1] == 3
    # features for a URL other than the page's own are read again (and kept in place of the page's)
    kept, other = page.type_features, "https://f.example/threads/x"
    assert page_features(page, url=other) == page_features(_fresh(page), url=other)
    assert page.type_features is not kept and page.type_features[2] == other
    # a page-like object without the field is classified as before, nothing kept
    from types import SimpleNamespace

    plain = SimpleNamespace(url=page.url, nodes=list(page.nodes), declared=page.declared)
    assert classifier.predict(plain) == classifier.predict(_fresh(page))


def test_one_classifier_object_a_weights_file_whichever_name_the_folder_is_given_by():
    from edrew_scrapy.model.files import model_directory

    assert default_classifier(None) is default_classifier(str(model_directory(None))) is default_classifier("default")
