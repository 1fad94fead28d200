"""`edrew evaluate --metadata` on small written sets: WCXB-format and simple-format labels, scores, errors."""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from conftest import cli

from edrew_scrapy.training import metadata_eval as me


def article(i: int) -> str:
    return f"""<html lang="en"><head><title>Story {i} about rivers | Gazette {i}</title>
<script type="application/ld+json">{{"@type": "NewsArticle", "headline": "Story {i} about rivers",
 "author": {{"@type": "Person", "name": "Ada Quill"}}, "datePublished": "2024-05-0{1 + i % 9}"}}</script>
</head><body><article><h1>Story {i} about rivers</h1><p class="byline">By Ada Quill</p>
<p>The river rose again this week, and the town council met on Monday to talk about the flood walls.</p>
<p>Residents said the water reached the steps of the library for the first time in years.</p></article>
</body></html>"""


def product(i: int) -> str:
    return f"""<html><head><title>Blue kettle {i} - Shop {i}</title>
<script type="application/ld+json">{{"@type": "Product", "name": "Blue kettle {i}",
 "offers": {{"@type": "Offer", "price": "24.90", "priceCurrency": "USD"}}}}</script></head>
<body><h1>Blue kettle {i}</h1><p>$24.90</p><button>Add to cart</button><ul><li>1.7 litres</li>
<li>Steel</li></ul><p>In stock, ships in two days.</p></body></html>"""


def write_wcxb(root, n=12):
    """n pages on n domains, half articles (author, date) and half products (neither)."""
    (root / "html").mkdir(parents=True)
    (root / "ground-truth").mkdir()
    for i in range(n):
        kind = "article" if i % 2 == 0 else "product"
        html = article(i) if kind == "article" else product(i)
        (root / "html" / f"{i:04d}.html.gz").write_bytes(gzip.compress(html.encode("utf-8")))
        truth = {"url": f"https://site{i}.example/{kind}/{i}", "_internal": {"page_type": {"primary": kind}},
                 "ground_truth": {"title": f"Story {i} about rivers" if kind == "article" else f"Blue kettle {i}",
                                  "author": "Ada Quill" if kind == "article" else None,
                                  "publish_date": f"2024-05-0{1 + i % 9}" if kind == "article" else None,
                                  "main_content": "x"}}
        (root / "ground-truth" / f"{i:04d}.json").write_text(json.dumps(truth), encoding="utf-8")
    return root


def test_word_f1_and_score_page():
    assert me.word_f1("Council backs bike lanes", "council backs bike lanes!") == 1.0
    assert me.word_f1("", "") == 1.0 and me.word_f1("a", "") == 0.0
    assert me.word_f1("a b", "a c") == pytest.approx(0.5)
    record = me.MetaRecord("1", "set", None, headline="A title", author="", date="2024-05-01",
                           page_type="article")
    fields = {"headline": "A title", "author": ["Someone"], "date_published": "2024-05-02", "page_type": "article"}
    assert me.score_page(record, fields, "edrew") == {"headline": 1.0, "author_where_none": 1.0, "date": 0.0,
                                                     "page_type": 1.0}
    # a set that labels only the title scores only the headline; trafilatura has no page type
    titled = me.MetaRecord("2", "set", None, headline="A title")
    assert me.score_page(titled, fields, "trafilatura") == {"headline": 1.0}


def test_evaluate_metadata_on_a_wcxb_set(tmp_path, capsys):
    root = write_wcxb(tmp_path / "wcxb")
    out = tmp_path / "out"
    status, err = cli(capsys, "evaluate", "--metadata", "--dataset", "wcxb", str(root), "--folds", "2",
                      "--out", str(out), "--no-progress", "--extractors", "trafilatura")
    assert status == 0, err
    rows = {r["system"]: r for r in json.loads((out / "metadata-summary.json").read_text())["rows"]}
    ours = rows["edrew"]
    assert ours["pages"] == 12 and ours["dataset"] == "wcxb"
    assert ours["headline"] == 1.0 and ours["headline_pages"] == 12  # every page declares its headline
    assert ours["author"] == 1.0 and ours["author_pages"] == 6 and ours["author_where_none"] == 0.0
    assert ours["date"] == 1.0 and ours["date_pages"] == 6 and ours["date_where_none_pages"] == 6
    # each page typed by a classifier trained on the other fold's domains only
    assert ours["page_type_pages"] == 12 and 0.0 <= ours["page_type"] <= 1.0
    assert "trafilatura" in rows and rows["trafilatura"]["page_type"] is None
    lines = [json.loads(line) for line in (out / "metadata-pages.jsonl").read_text().splitlines()]
    assert len(lines) == 12 and lines[0]["fields"]["edrew"]["headline"] == "Story 0 about rivers"


def test_evaluate_metadata_on_a_simple_set_scores_what_it_labels(tmp_path, capsys):
    root = tmp_path / "simple"
    root.mkdir()
    records = []
    for i in range(3):
        (root / f"{i}.html").write_text(article(i), encoding="utf-8")
        records.append({"file": f"{i}.html", "url": f"https://news{i}.example/a", "title": f"Story {i} about rivers",
                        "page_type": "article"})
    (root / "labels.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    out = tmp_path / "out"
    status, err = cli(capsys, "evaluate", "--metadata", "--dataset", f"news=simple:{root}", "--out", str(out),
                      "--no-progress", "--extractors", "none")
    assert status == 0, err
    (row,) = json.loads((out / "metadata-summary.json").read_text())["rows"]
    assert row["dataset"] == "news" and row["headline"] == 1.0
    assert row["author"] is None and row["date"] is None  # not labelled: not scored
    assert row["page_type_pages"] == 3  # one type: the shipped classifier, which never saw these pages


def test_evaluate_metadata_usage_errors(tmp_path, capsys):
    status, err = cli(capsys, "evaluate", "--metadata", "--dataset", "swde", str(tmp_path))
    assert status == 2 and "SWDE" in err
    status, err = cli(capsys, "evaluate", "--metadata", "--dataset", "pdf", str(tmp_path))
    assert status == 2 and "PDF" in err
    root = write_wcxb(tmp_path / "wcxb", n=4)
    status, err = cli(capsys, "evaluate", "--metadata", "--dataset", "wcxb", str(root), "--folds", "5",
                      "--out", str(tmp_path / "o"), "--no-progress")
    assert status == 1 and "folds" in err


def test_train_pagetype_reads_what_each_page_declares(tmp_path, capsys):
    from edrew_scrapy.commands.train_pagetype import feature_rows
    from edrew_scrapy.pagetype import FEATURE_VERSION, PageTypeClassifier

    root = write_wcxb(tmp_path / "wcxb")
    rows = list(feature_rows(root))
    articles = [r["features"] for r in rows if r["label"] == "article"]
    products = [r["features"] for r in rows if r["label"] == "product"]
    # the serializer's tree is read as a crawl reads it: the declared author and day are there on articles
    assert all(f["d:author"] == 1.0 and f["d:date"] == 1.0 and f["d:byline"] == 1.0 for f in articles)
    assert not any("d:author" in f or "d:date" in f for f in products)
    out, cache = tmp_path / "pagetype.json", tmp_path / "features.jsonl"
    status, err = cli(capsys, "train-pagetype", str(root), "--out", str(out), "--cache", str(cache), "--folds", "2",
                      "--min-domains", "2", "--c", "1")
    assert status == 0, err
    classifier = PageTypeClassifier.load(out)
    assert classifier.card["feature_version"] == FEATURE_VERSION and "d:author" in classifier.index
    assert json.loads(cache.read_text().splitlines()[0])["feature_version"] == FEATURE_VERSION


def test_train_dates_writes_a_chooser_with_its_cross_validated_numbers(tmp_path, capsys):
    from edrew_scrapy.dates import DateChooser

    root = write_wcxb(tmp_path / "wcxb")
    out = tmp_path / "dates.json"
    from edrew_scrapy.cli import main

    assert main(["train-dates", str(root), "--out", str(out), "--folds", "2"]) == 0
    printed = capsys.readouterr().out
    assert "| wcxb | 1 | " in printed and "| wcxb | 2 | " in printed and "exact day 1.0000 (rules 1.0000)" in printed
    chooser = DateChooser.load(out)
    card = chooser.card["card"]
    # the six dated articles declare their day: rules and chooser agree on each; the products stay undated
    assert card["cross_validated"]["exact_day"] == card["cross_validated"]["exact_day_rules"] == 1.0
    assert card["cross_validated"]["date_where_none"] == 0.0 and len(card["per_fold_exact_day"]) == 2
    assert chooser.page_types == {"article", "forum"} and chooser.none_margin is None
    status, err = cli(capsys, "train-dates", str(tmp_path / "missing"), "--out", str(out))
    assert status == 2 and "not a WCXB folder" in err


def test_train_pagetype_chooses_c_in_inner_folds_and_evaluate_retrains_each_fold_as_the_card_says(tmp_path, capsys):
    from edrew_scrapy.data import read_source
    from edrew_scrapy.pagetype import PageTypeClassifier
    from edrew_scrapy.serializer import serialize

    root = write_wcxb(tmp_path / "wcxb", n=16)
    out, cache = tmp_path / "pagetype.json", tmp_path / "features.jsonl"
    status, err = cli(capsys, "train-pagetype", str(root), "--out", str(out), "--cache", str(cache), "--folds", "2",
                      "--min-domains", "2", "--c", "0.000001,1", "--scaling", "maxabs")
    assert status == 0, err
    card = PageTypeClassifier.load(out).card["card"]
    # C 1e-6 leaves every weight near 0: the inner folds choose C 1, which tells articles from products
    assert card["scaling"] == "maxabs" and card["c_candidates"] == [1e-06, 1.0] and card["c"] == 1.0
    assert not any(json.loads(out.read_text())["mean"])  # maxabs: nothing centred
    for bad in ("0", "x", "-1,1"):
        status, err = cli(capsys, "train-pagetype", str(root), "--out", str(out), "--cache", str(cache),
                          "--c", bad)
        assert status == 2 and "--c" in err
    # evaluate's folds follow the card: each fold's C chosen inside its training pages, maxabs scaling
    records = me.read_records("wcxb", root, "wcxb")
    pages = [serialize(read_source(r.source), url=r.url) for r in records]
    shipped = PageTypeClassifier.load(out)
    typed = me.page_type_classifiers(records, pages, 2, 1, me._group("domain"), shipped)
    assert len({id(c) for c in typed}) == 2 and all(c is not shipped for c in typed)
    assert all(not any(c.mean) for c in typed)  # trained with the card's maxabs scaling
    # --forum-domains is written to the card; forum evidence needs forums to learn from (none here)
    status, err = cli(capsys, "train-pagetype", str(root), "--out", str(out), "--cache", str(cache), "--folds", "2",
                      "--min-domains", "2", "--c", "1", "--forum-domains", "2")
    assert status == 0, err
    assert PageTypeClassifier.load(out).card["card"]["forum_domains"] == 2 and "requires" not in json.loads(
        out.read_text())
    status, err = cli(capsys, "train-pagetype", str(root), "--out", str(out), "--cache", str(cache),
                      "--forum-domains", "-1")
    assert status == 2 and "--forum-domains" in err


def test_evaluate_trains_each_folds_forum_evidence_as_the_card_says(tmp_path):
    from edrew_scrapy.pagetype import FORUM_MARKUP, PageTypeClassifier, fit_spec, page_features
    from edrew_scrapy.serializer import serialize

    forum = ("<html><body><h1>Chain slips</h1><div class='post'><p>My chain slips on the small cog, any idea?"
             "</p></div><div class='post'><p>Check the derailleur hanger, it is often bent.</p></div></body></html>")
    records, pages = [], []
    for i in range(24):
        kind = ("article", "product", "forum")[i % 3]
        html = {"article": article(i), "product": product(i), "forum": forum}[kind]
        url = f"https://site{i}.example/" + ("threads/chain-" if kind == "forum" else f"{kind}/") + str(i)
        records.append(me.MetaRecord(str(i), "set", Path("x"), url=url, page_type=kind))
        pages.append(serialize(html, url=url))
    feats = [page_features(p) for p in pages]
    spec = fit_spec(feats, [r.page_type for r in records], c=1.0, min_pages=2, groups=[r.url for r in records],
                    scaling="maxabs", forum_domains=2)
    spec["card"] = {"c": 1.0, "min_domains": 2, "scaling": "maxabs", "forum_domains": 2}
    shipped = PageTypeClassifier(spec)
    typed = me.page_type_classifiers(records, pages, 2, 1, me._group("domain"), shipped)
    assert all(c is not shipped for c in typed)
    for c in {id(c): c for c in typed}.values():  # each fold's forums learnt from its own training domains
        needed = c.requires[c.classes.index("forum")]
        assert needed[:len(FORUM_MARKUP)] == FORUM_MARKUP and "u:threads" in needed
    del spec["card"]["forum_domains"]  # an older card: no requirement in the folds either
    typed = me.page_type_classifiers(records, pages, 2, 1, me._group("domain"), PageTypeClassifier(spec))
    assert not any(c.requires for c in typed)
