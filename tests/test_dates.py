"""The publication day's candidates and the learned chooser (edrew_scrapy/dates.py)."""
from __future__ import annotations

import datetime as dt
import json
import pickle
import shutil

import numpy as np
import pytest

from edrew_scrapy import dates
from edrew_scrapy.dates import FEATURES, DateChooser, DateChooserError, default_chooser, fit_chooser
from edrew_scrapy.metadata import page_metadata
from edrew_scrapy.model.files import model_directory
from edrew_scrapy.serializer import serialize

TODAY = dt.date(2026, 11, 27)
URL = "https://seo.example/academy/predictions"

# declares its first publication (shown nowhere) and its update, and shows only the update by its heading
PAGE = """<html><head><title>Seven SEO predictions</title><script type="application/ld+json">{"@type": "Article",
"headline": "Seven SEO predictions", "datePublished": "2024-04-10T19:30:39Z", "dateModified": "2025-09-04"}
</script></head><body><nav><a href="/">Home</a></nav><h1>Seven SEO predictions</h1><p>Updated Sep 4, 2025</p>
<p>Search changes every year, and this is a long paragraph of the article's body with enough words in it.</p>
</body></html>"""


def spec_of(weights, **kw):
    return {"format": dates.FORMAT, "feature_version": dates.FEATURE_VERSION, "features": list(weights),
            "weights": list(weights.values()), **kw}


class Typed:
    """A page-type classifier of one's own: the chooser weighs the page's type (a page without one keeps the
    rules' day)."""

    def __init__(self, kind="article"):
        self.kind = kind

    def predict(self, page):
        return self.kind, 0.9


def meta(chooser, kind="article"):
    return page_metadata(PAGE, serialize(PAGE, url=URL), None, Typed(kind), url=URL, today=TODAY,
                         date_chooser=chooser)


def test_a_chooser_that_trusts_the_declared_publication_differs_from_the_rules():
    # the rules: the declared day is shown nowhere, the one dateline by the <h1> is the day
    rules = meta(None)
    assert rules.date_published == "2025-09-04"
    found = rules.date_candidates
    assert found.days == ("2024-04-10", "2025-09-04") and found.rules == "2025-09-04"
    declared = DateChooser(spec_of({"src:declared": 2.0, "src:rules": 1.0}))
    assert meta(declared).date_published == "2024-04-10"
    assert meta(DateChooser(spec_of({"src:rules": 1.0}))).date_published == "2025-09-04"
    # without a page type the rules' day stands
    untyped = page_metadata(PAGE, serialize(PAGE, url=URL), url=URL, today=TODAY, date_chooser=declared)
    assert untyped.date_published == "2025-09-04"


def test_on_a_page_type_it_does_not_date_the_chooser_keeps_the_rules_day():
    declared = {"src:declared": 2.0, "src:rules": 1.0}
    assert DateChooser(spec_of(declared, page_types=["article"])).choose(meta(None).date_candidates) == "2024-04-10"
    service = meta(None, "service").date_candidates
    assert DateChooser(spec_of(declared, page_types=["article"])).choose(service) == "2025-09-04"
    assert DateChooser(spec_of(declared)).choose(service) == "2024-04-10"  # every type by default
    with pytest.raises(DateChooserError, match="page_types"):
        DateChooser(spec_of(declared, page_types=["blog"]))


def test_the_no_date_option_needs_its_margin_over_the_best_day_off_articles():
    undated = {"none": 3.0, "src:rules": 1.0}
    found = meta(None, "service").date_candidates
    assert DateChooser(spec_of(undated, none_margin=1.0)).choose(found) is None
    assert DateChooser(spec_of(undated, none_margin=4.0)).choose(found) == "2025-09-04"
    assert DateChooser(spec_of(undated)).choose(found) == "2025-09-04"  # no margin: never
    # an article, or a page whose URL gives its day, is never left undated by the chooser
    assert DateChooser(spec_of(undated, none_margin=1.0)).choose(meta(None).date_candidates) == "2025-09-04"
    dated = dates.candidates([("url", "2025-09-04")], None, [], "2025-09-04", "service", 0.9)
    assert DateChooser(spec_of(undated, none_margin=1.0)).choose(dated) == "2025-09-04"


def test_a_page_the_rules_leave_undated_stays_undated():
    html = "<html><head><title>Shop</title></head><body><h1>Shop</h1><p>Great prices every day.</p></body></html>"
    m = page_metadata(html, serialize(html, url="https://shop.example/"), None, Typed(), url="https://shop.example/",
                      today=TODAY, date_chooser=DateChooser(spec_of({"src:rules": 1.0, "none": -10.0})))
    assert m.date_published is None and m.date_candidates.days == ()


def test_candidate_features():
    found = meta(None).date_candidates
    row = dict(zip(FEATURES, found.vectors[0]))  # 2024-04-10: declared, shown nowhere, the earliest
    assert row["src:declared"] == 1.0 and row["src:rules"] == 0.0 and row["earliest"] == 1.0
    assert row["h1_distance"] == 1.0 and row["shown_count"] == 0.0
    row = dict(zip(FEATURES, found.vectors[1]))  # 2025-09-04: declared as modified, the dateline after "Updated"
    assert row["src:modified"] == 1.0 and row["src:near_updated"] == 1.0 and row["src:rules"] == 1.0
    assert row["latest"] == 1.0 and row["gap"] == 0.0 and 0 < row["h1_distance"] < 0.1
    none = dict(zip(FEATURES, found.vectors[2]))
    assert none["none"] == 1.0 and none["none:declared"] == 1.0 and none["none:declares_article"] == 1.0
    assert not any(none[f"src:{s}"] for s in dates.SOURCES)


def test_fit_learns_the_labelled_source():
    # on each page the labelled day is the declared one, the rules chose the other
    pages = []
    for k in range(20):
        found = dates.candidates([("declared", f"2020-01-{k + 1:02d}"), ("modified", f"2024-02-{k + 1:02d}")],
                                 None, [], f"2024-02-{k + 1:02d}", "article", 0.9)
        pages.append((found, f"2020-01-{k + 1:02d}"))
    pages.append((dates.candidates([("url", "2021-05-05")], None, [], "2021-05-05"), ""))  # undated
    pages.append((dates.candidates([("url", "2021-05-05")], None, [], "2021-05-05"), "1999-09-09"))  # no candidate
    spec = fit_chooser(pages, l2=0.1)
    assert spec["pages"] == 21 and spec["none_margin"] is None and spec["page_types"] == ["article", "forum"]
    chooser = DateChooser(json.loads(json.dumps(spec)))
    assert all(chooser.choose(found) == label for found, label in pages[:20])


def test_fit_without_a_usable_page_is_a_value_error():
    with pytest.raises(ValueError):
        fit_chooser([(dates.candidates([("url", "2021-05-05")], None, [], "2021-05-05"), "1999-09-09")])


@pytest.mark.parametrize("spec,message", [
    ([], "not a JSON object"),
    ({"format": "other"}, "format"),
    ({"format": dates.FORMAT, "feature_version": 99}, "feature_version"),
    ({"format": dates.FORMAT, "feature_version": dates.FEATURE_VERSION, "features": ["src:url"], "weights": []},
     "one length"),
    ({"format": dates.FORMAT, "feature_version": dates.FEATURE_VERSION, "features": ["src:moon"], "weights": [1]},
     "does not compute"),
    ({"format": dates.FORMAT, "feature_version": dates.FEATURE_VERSION, "features": ["src:url"], "weights": ["x"]},
     "not numbers"),
    ({"format": dates.FORMAT, "feature_version": dates.FEATURE_VERSION, "features": ["src:url"],
      "weights": [float("nan")]}, "finite"),
    ({"format": dates.FORMAT, "feature_version": dates.FEATURE_VERSION, "features": [], "weights": [],
      "none_margin": "4"}, "none_margin"),
    ({"format": dates.FORMAT, "feature_version": dates.FEATURE_VERSION, "features": [], "weights": [],
      "none_margin": float("inf")}, "none_margin"),
])
def test_a_bad_weights_spec_is_a_typed_error(spec, message):
    with pytest.raises(DateChooserError, match=message):
        DateChooser(spec)


def test_a_bad_weights_file_is_a_typed_error(tmp_path):
    path = tmp_path / dates.FILE_NAME
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(DateChooserError, match="cannot read"):
        DateChooser.load(path)
    with pytest.raises(DateChooserError, match="cannot read"):
        default_chooser(str(tmp_path))
    # a file that differs from what its folder's card lists
    shipped = model_directory(None) / dates.FILE_NAME
    shutil.copy(shipped, path)
    with open(path, "a", encoding="utf-8") as f:
        f.write(" ")
    shutil.copy(model_directory(None) / "card.json", tmp_path / "card.json")
    with pytest.raises(DateChooserError, match="sha256"):
        default_chooser(str(tmp_path))


def test_a_broken_shipped_chooser_costs_the_page_only_the_chooser(monkeypatch):
    def broken(directory=None):
        raise DateChooserError("dates.json: broken")

    monkeypatch.setattr("edrew_scrapy.metadata.default_chooser", broken)
    m = meta("default")
    assert m.date_published == "2025-09-04" and "date-chooser" in m.skipped  # the rules' day, counted


def test_without_a_chooser_file_the_rules_day_stands(tmp_path, monkeypatch):
    # a model folder of one's own without dates.json uses the shipped one; where neither has one, the rules
    assert default_chooser(str(tmp_path / "own")) is not None
    monkeypatch.setattr("edrew_scrapy.model.files.DEFAULT_MODEL_DIR", tmp_path)
    assert default_chooser(None) is None and default_chooser(str(tmp_path / "other")) is None
    assert meta("default").date_published == meta(None).date_published == "2025-09-04"


def test_the_shipped_chooser_loads_and_picks_a_candidate():
    chooser = default_chooser(None)
    assert isinstance(chooser, DateChooser) and chooser.card.get("card", {}).get("cross_validated")
    found = meta(None).date_candidates
    assert chooser.choose(found) in found.days + (None,)
    assert np.isfinite(chooser.weights).all()


def test_a_pickled_metadata_leaves_the_candidates_behind():
    # a crawl's worker pickles each page's Metadata to the crawl process: the candidates stay in the worker
    m = meta(None)
    back = pickle.loads(pickle.dumps(m))
    assert back.date_candidates is None and m.date_candidates is not None
    assert back.fields() == m.fields() and m.fields()["author"] is not m.author  # a copy, as before
