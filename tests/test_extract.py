"""extract() and `edrew extract`: input order, thresholds, the jsonl contract, errors per input."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from _model_helpers import make_page, tiny_model

from edrew_scrapy.cli import main
from edrew_scrapy.extract import extract
from edrew_scrapy.model.scorer import load_model
from edrew_scrapy.page import Page

torch.set_num_threads(1)

HTML = """<html><head><title>T</title></head><body><nav><a href="/">Home</a></nav>
<article><h1>Heading here</h1><p>First paragraph with words.</p><p>Second paragraph.</p></article></body></html>"""


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    path = tmp_path_factory.mktemp("model")
    tiny_model(path)
    return path


def test_extract_keeps_order_and_threshold(model_dir):
    scorer = load_model(model_dir)
    pages = [make_page(5, url="http://a.test/"), Page(url="http://empty.test/", nodes=[], skipped="empty"), HTML]
    everything = extract(pages, scorer=scorer, threshold=0.0)
    assert [e.url for e in everything[:2]] == ["http://a.test/", "http://empty.test/"]
    assert [n.content for n in everything[0].nodes] == [n.content for n in pages[0].nodes]
    assert everything[0].text == "\n".join(n.content for n in pages[0].nodes)
    assert everything[0].images == ["http://example.test/1.png"]
    assert everything[1].nodes == [] and everything[1].skipped == "empty"
    assert "First paragraph with words." in everything[2].text and everything[2].title == "T"
    nothing = extract(pages, scorer=scorer, threshold=1.0)  # nothing this untrained model scores reaches 1
    assert all(e.text == "" and not e.nodes for e in nothing)
    default_cut = extract(make_page(5), scorer=scorer)[0]
    assert all(n.score >= scorer.threshold for n in default_cut.nodes)


@pytest.mark.parametrize("threshold,error", [(2, ValueError), (-0.1, ValueError), (float("nan"), ValueError),
                                             ("high", ValueError)])
def test_extract_refuses_a_threshold_that_is_no_probability(model_dir, threshold, error):
    with pytest.raises(error):
        extract("<p>Some text here.</p>", scorer=load_model(model_dir), threshold=threshold)


def test_extract_says_what_it_takes(model_dir):
    with pytest.raises(TypeError, match="a Page, HTML str/bytes or a list of them, not int"):
        extract(123, scorer=load_model(model_dir))
    assert extract([], scorer=load_model(model_dir)) == []


def test_nodes_inside_a_dialog_are_never_relevant(model_dir):
    from edrew_scrapy.rules import is_relevant
    from edrew_scrapy.serializer import serialize

    scorer = load_model(model_dir)
    page = serialize("<body><article><p>The story itself.</p></article>"
                     '<div role="dialog" aria-modal="true"><p>Accept all cookies?</p></div></body>')
    kept = extract(page, scorer=scorer, threshold=0.0)[0]
    assert kept.text == "The story itself."
    assert is_relevant(page.nodes[0], 0.9, 0.5) and not is_relevant(page.nodes[1], 0.9, 0.5)


def test_cli_jsonl_contract_and_errors(model_dir, tmp_path, capsys):
    good = tmp_path / "page.html"
    good.write_text(HTML, encoding="utf-8")
    code = main(["extract", str(good), str(tmp_path / "missing.html"), str(good), "--model", str(model_dir),
                 "--threshold", "0"])
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert code == 1
    assert [r["path"] for r in out] == [str(good), str(tmp_path / "missing.html"), str(good)]
    assert "error" in out[1] and "text" not in out[1]
    first = out[0]
    assert first["comments"] == ""  # a page without reader comments
    assert first["text"] == "\n".join(n["content"] for n in first["nodes"])
    assert {"content", "score", "path"} <= set(first["nodes"][0])


def test_cli_a_url_that_serves_no_html_is_skipped_in_its_place(model_dir, tmp_path, capsys, serve):
    good = tmp_path / "page.html"
    good.write_text(HTML, encoding="utf-8")
    base = serve(tmp_path, {"/doc.pdf": (200, {"Content-Type": "application/pdf"}, b"%PDF-1.4 <html><body>x")})
    code = main(["extract", base + "/doc.pdf", base + "/page.html", "--model", str(model_dir), "--threshold", "0"])
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert code == 0 and [r["path"] for r in out] == [base + "/doc.pdf", base + "/page.html"]
    assert out[0]["skipped"] == "not-html" and out[0]["text"] == "" and out[0]["nodes"] == []
    assert "Second paragraph." in out[1]["text"]


def test_cli_text_format(model_dir, tmp_path, capsys):
    good = tmp_path / "page.html"
    good.write_text(HTML, encoding="utf-8")
    assert main(["extract", str(good), "--model", str(model_dir), "--format", "text", "--threshold", "0"]) == 0
    assert "Second paragraph." in capsys.readouterr().out
    empty, missing = tmp_path / "empty.html", tmp_path / "missing.html"
    empty.write_bytes(b"")
    assert main(["extract", str(good), str(missing), str(empty), "--model", str(model_dir), "--format", "text"]) == 1
    headers = [line for line in capsys.readouterr().out.splitlines() if line.startswith("# ")]
    assert headers == [f"# {good}", f"# {missing} (error: see stderr)", f"# {empty} (skipped: empty)"]
    assert main(["extract", str(empty), "--model", str(model_dir), "--format", "text"]) == 0
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("\n", f"edrew extract: {empty}: skipped (empty)\n")


def test_default_names_the_shipped_model_wherever_a_model_is_read():
    from edrew_scrapy.model.files import DEFAULT_MODEL_DIR, model_directory

    assert model_directory(None) == model_directory("default") == DEFAULT_MODEL_DIR
    assert model_directory("./default") == Path("default")  # a folder of that name, written as a path


def _shipped_copy(models: Path) -> Path:
    """A models/ folder as a wheel or a clone holds it (the card is what marks it ours)."""
    (models / "default").mkdir(parents=True)
    (models / "default" / "card.json").write_text('{"format": "edrew-model"}', encoding="utf-8")
    return models


def test_shipped_models_are_found_in_a_clone_a_prefix_or_the_user_base(tmp_path, monkeypatch):
    import sys

    from edrew_scrapy.model.files import _shipped_models_dir

    monkeypatch.setattr(sys, "prefix", str(tmp_path / "venv"))
    monkeypatch.setattr("site.getuserbase", lambda: str(tmp_path / "user"))
    share = ("share", "edrew-scrapy", "models")

    def module_in(folder: Path) -> str:
        return str(folder / "edrew_scrapy" / "model" / "scorer.py")

    venv_site = tmp_path / "venv" / "lib" / "python3.11" / "site-packages"
    user_site = tmp_path / "user" / "lib" / "python3.11" / "site-packages"
    # pip install into the running environment; then a --user install of its own, which shadows it
    venv_models = _shipped_copy(tmp_path.joinpath("venv", *share))
    assert _shipped_models_dir(module_in(venv_site)) == venv_models
    user_models = _shipped_copy(tmp_path.joinpath("user", *share))
    assert _shipped_models_dir(module_in(user_site)) == user_models
    assert _shipped_models_dir(module_in(venv_site)) == venv_models
    # pip install --prefix P (P/lib/python3.11/site-packages on PYTHONPATH) and pip install --target T
    prefix_models = _shipped_copy(tmp_path.joinpath("pfx", *share))
    assert _shipped_models_dir(module_in(tmp_path / "pfx" / "lib" / "python3.11" / "site-packages")) == prefix_models
    target_models = _shipped_copy(tmp_path.joinpath("tgt", *share))
    assert _shipped_models_dir(module_in(tmp_path / "tgt")) == target_models
    # another package's top-level models/default in the same site-packages is not ours
    (venv_site / "models" / "default").mkdir(parents=True)
    (venv_site / "models" / "default" / "card.json").write_text('{"name": "other"}', encoding="utf-8")
    assert _shipped_models_dir(module_in(venv_site)) == venv_models
    # a clone (or an editable install) reads models/ in place
    clone = tmp_path / "clone"
    clone_models = _shipped_copy(clone / "models")
    assert _shipped_models_dir(module_in(clone)) == clone_models
    # nothing anywhere: the clone's path, which the "does not exist" error then names
    monkeypatch.setattr(sys, "prefix", str(tmp_path / "empty"))
    monkeypatch.setattr("site.getuserbase", lambda: str(tmp_path / "empty"))
    assert _shipped_models_dir(module_in(tmp_path / "bare" / "x")) == tmp_path / "bare" / "x" / "models"


def test_cli_scores_on_one_torch_thread_unless_told(model_dir, tmp_path, capsys):
    # torch's default is a thread per core, which on a busy machine made scoring many times slower
    good = tmp_path / "page.html"
    good.write_text(HTML, encoding="utf-8")
    try:
        for given, expected in (([], 1), (["--threads", "2"], 2), (["--threads", "1"], 1)):
            torch.set_num_threads(3)
            assert main(["extract", str(good), "--model", str(model_dir), "--no-metadata", "--threshold", "0",
                         *given]) == 0
            assert torch.get_num_threads() == expected
            assert "Second paragraph." in capsys.readouterr().out
    finally:
        torch.set_num_threads(1)
    with pytest.raises(SystemExit) as exit_info:
        main(["extract", str(good), "--threads", "0"])
    assert exit_info.value.code == 2 and "--threads: must be at least 1" in capsys.readouterr().err


def test_cli_inputs_scored_in_groups_keep_their_order_errors_and_texts(model_dir, tmp_path, capsys):
    pages = []
    for i in range(5):
        page = tmp_path / f"p{i}.html"
        page.write_text(HTML.replace("Second paragraph.", f"Paragraph number {i} here."), encoding="utf-8")
        pages.append(str(page))
    empty = tmp_path / "empty.html"
    empty.write_bytes(b"")
    inputs = [pages[0], str(tmp_path / "missing.html"), pages[1], str(empty), pages[2], pages[3], pages[4]]
    runs = {}
    for batch in ("1", "2", "8"):
        code = main(["extract", *inputs, "--model", str(model_dir), "--no-metadata", "--threshold", "0",
                     "--batch", batch])
        runs[batch] = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
        assert code == 1  # the missing file
    one = runs["1"]
    assert [r["path"] for r in one] == inputs
    assert "error" in one[1] and one[3]["skipped"] == "empty"
    assert [f"Paragraph number {i} here." in one[k]["text"] for i, k in enumerate((0, 2, 4, 5, 6))] == [True] * 5
    for batch in ("2", "8"):
        assert [(r["path"], r.get("text"), r.get("error")) for r in runs[batch]] == [
            (r["path"], r.get("text"), r.get("error")) for r in one]
        scores = [n["score"] for r in runs[batch] for n in r.get("nodes", [])]
        assert scores == pytest.approx([n["score"] for r in one for n in r.get("nodes", [])], abs=1e-5)
    with pytest.raises(SystemExit) as exit_info:
        main(["extract", pages[0], "--batch", "0"])
    assert exit_info.value.code == 2 and "--batch: must be at least 1" in capsys.readouterr().err


def test_cli_bad_model_is_one_line(tmp_path, capsys):
    code = main(["extract", str(tmp_path / "x.html"), "--model", str(tmp_path / "nomodel")])
    err = capsys.readouterr().err
    assert code == 2 and "nomodel" in err and "Traceback" not in err


@pytest.mark.parametrize("value", ["2", "-0.1", "half"])
def test_cli_threshold_is_a_probability(tmp_path, capsys, value):
    # above 1 nothing could ever be kept: refused at the command line, not an empty result
    with pytest.raises(SystemExit) as exit_info:
        main(["extract", str(tmp_path / "x.html"), "--threshold", value])
    assert exit_info.value.code == 2 and "--threshold" in capsys.readouterr().err


REGION_HTML = """<html><body><div id="main"><article><h1>Council votes on the river bridge</h1>
<p>The council voted nine to four on Tuesday to rebuild the old river bridge next spring.</p>
<p>Work starts in April and the crossing stays open to walkers while the new deck goes in.</p></article></div>
<div class="side"><h2>Related</h2><p>Another story somebody might also want to read today.</p></div></body></html>"""
# (a <div>, not an <aside>: text in an <aside> is boilerplate whatever the region)


def _serialized(html):
    from edrew_scrapy.serializer import serialize

    return serialize(html)


def test_main_region_is_the_deepest_element_holding_the_share():
    from edrew_scrapy.rules import main_region

    page = _serialized(REGION_HTML)
    everything = [True] * len(page.nodes)
    article = main_region(page.nodes, everything, 0.7)
    assert article.endswith("/article[1]") and "/div[1]/" in article
    # only the side box kept: the region is its paragraph itself
    aside = [n.content.startswith("Another") for n in page.nodes]
    assert main_region(page.nodes, aside, 0.7) == next(n.path for n in page.nodes if n.content.startswith("Another"))
    assert main_region(page.nodes, [False] * len(page.nodes), 0.7) is None


def test_main_region_counts_the_words_of_chinese_text():
    # one Chinese paragraph of 34 characters (17 words: words.split_words) against two links of three
    # words: split on spaces the paragraph was one word and the links' box was the region
    from edrew_scrapy.rules import main_region

    page = _serialized("<body><div id=a><p>" + "河畔市议会周二晚上以九票对四票通过决议"
                       + "将沿码头路全线修建一条自行车道</p></div>"
                       "<div id=b><a href=/1>one two three</a><a href=/2>four five six</a></div></body>")
    region = main_region(page.nodes, [True] * len(page.nodes), 0.7)
    assert region == next(n.path for n in page.nodes if n.content.startswith("河畔"))


def test_relevant_mask_keeps_only_the_main_region_when_asked():
    from edrew_scrapy.rules import is_relevant, relevant_mask

    page = _serialized(REGION_HTML)
    scores = [0.9] * len(page.nodes)
    plain = relevant_mask(page, scores, 0.5)
    assert plain == [is_relevant(n, s, 0.5) for n, s in zip(page.nodes, scores)] and all(plain)
    region = relevant_mask(page, scores, 0.5, 0.7)
    kept = [n.content for n, k in zip(page.nodes, region) if k]
    assert kept[0] == "Council votes on the river bridge" and len(kept) == 3
    assert not any("Another story" in c or c == "Related" for c in kept)
    # a share of 1 still finds the body, which holds every word: nothing dropped
    assert all(relevant_mask(page, scores, 0.5, 1.0))


def test_nodes_with_document_order_paths_are_never_dropped_by_the_region():
    from edrew_scrapy.rules import relevant_mask

    page = make_page(4)
    page.nodes[3].path = "(//div)[40]/p[1]"   # beyond the serializer's path depth: ancestors unknown
    page.nodes[0].path = "/html/body/aside[1]/p[1]"
    for i in (1, 2):
        page.nodes[i].path = f"/html/body/main[1]/p[{i}]"
    mask = relevant_mask(page, [0.9] * 4, 0.5, 0.7)
    assert mask == [False, True, True, True]


@pytest.fixture
def sure_of_the_article(monkeypatch):
    """Scores that prefer the article's nodes, so that which nodes the region keeps does not hang on the
    random tiny model (whose scores differ in the third decimal, and whose most confident node the region
    would widen to hold)."""
    import numpy as np

    from edrew_scrapy.model.base import ScorerBase

    def score(self, pages, skip=None):
        return [np.array([0.6 if "Another" in n.content or n.content == "Related" else 0.9 for n in page.nodes],
                         dtype=np.float32) for page in pages]

    monkeypatch.setattr(ScorerBase, "score", score)  # every backend's scorer


def test_extract_uses_the_models_region_share_and_it_can_be_turned_off(model_dir, sure_of_the_article):
    from edrew_scrapy.extract import override_region_share

    scorer = load_model(model_dir)
    assert scorer.region_share is None  # the tiny model's card has none
    assert "Another story" in extract(REGION_HTML, scorer=scorer, threshold=0.0)[0].text
    override_region_share(scorer, 0.7)
    text = extract(REGION_HTML, scorer=scorer, threshold=0.0)[0].text
    assert "rebuild the old river bridge" in text and "Another story" not in text
    assert override_region_share(scorer, 0).region_share is None


def test_a_card_with_a_bad_region_share_is_a_model_error(tmp_path):
    from edrew_scrapy.model.files import ModelError

    tiny_model(tmp_path)
    card_path = tmp_path / "card.json"
    card = json.loads(card_path.read_text())
    for bad in (0.3, "0.7", True, 1.5):
        card["region_share"] = bad
        card_path.write_text(json.dumps(card))
        with pytest.raises(ModelError, match="region_share"):
            load_model(tmp_path)
    card["region_share"] = 0.7
    card_path.write_text(json.dumps(card))
    assert load_model(tmp_path).region_share == 0.7


def test_cli_region_share_option(model_dir, tmp_path, capsys, sure_of_the_article):
    page = tmp_path / "page.html"
    page.write_text(REGION_HTML, encoding="utf-8")
    args = ["extract", str(page), "--model", str(model_dir), "--threshold", "0", "--format", "text"]
    assert main(args) == 0 and "Another story" in capsys.readouterr().out
    assert main(args + ["--region-share", "0.7"]) == 0 and "Another story" not in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(args + ["--region-share", "0.4"])
    assert "(0.5, 1]" in capsys.readouterr().err


PRODUCT_WITH_REVIEWS = """<html><head><script type="application/ld+json">{"@type": "Product"}</script>
{extra}</head><body><main><div class="product"><h1>Kettle</h1>
<div class="description"><p>A steel kettle that boils a litre in three minutes, with a cord store.</p></div>
<div class="preview-pane"><p>Preview of the kettle in three colours and two sizes.</p></div>
<section class="reviews"><div class="review-body">\
<p>Great kettle, boils fast and looks good on the counter.</p></div></section>
</div></main></body></html>"""


def test_customer_reviews_are_dropped_on_product_pages_only():
    from edrew_scrapy.rules import in_customer_reviews, is_product_page, relevant_mask
    from edrew_scrapy.serializer import serialize

    product = serialize(PRODUCT_WITH_REVIEWS.replace("{extra}", ""))
    review_article = serialize(PRODUCT_WITH_REVIEWS.replace("{extra}", '<meta property="og:type" content="article">'))
    assert is_product_page(product) and not is_product_page(review_article)
    flagged = {n.content[:5] for n in product.nodes if in_customer_reviews(n)}
    assert flagged == {"Great"}  # "preview-pane" is not a review
    for page, kept_review in ((product, False), (review_article, True)):
        keep = relevant_mask(page, [1.0] * len(page.nodes), 0.5, region_share=0.7)
        kept = {n.content[:5] for n, k in zip(page.nodes, keep) if k}
        assert ("Great" in kept) is kept_review
        assert {"A ste", "Previ"} <= kept
    # attribute models (no region share) keep reviews wherever they are
    assert all(relevant_mask(product, [1.0] * len(product.nodes), 0.5))


def test_a_main_content_models_threshold_is_at_most_half_the_pages_best_score():
    from edrew_scrapy.rules import FALLBACK_SHARE, PAGE_BEST_SHARE, relevant_mask

    page = _serialized(REGION_HTML)
    scores = [0.30, 0.25, 0.20, 0.10, 0.14]
    assert len(scores) == len(page.nodes) == 5
    # nothing reaches 0.5: the nodes scoring at least PAGE_BEST_SHARE of the best (0.30) stay, and the
    # main region still applies (the side box's 0.10 and 0.14 are under 0.15 anyway)
    kept = [n.content[:7] for n, k in zip(page.nodes, relevant_mask(page, scores, 0.5, 0.7)) if k]
    assert PAGE_BEST_SHARE == FALLBACK_SHARE == 0.5 and kept == ["Council", "The cou", "Work st"]
    # attribute models (no region share) keep nothing; so does a page where every score is 0
    assert not any(relevant_mask(page, scores, 0.5))
    assert not any(relevant_mask(page, [0.0] * 5, 0.5, 0.7))
    # the best node reaches the threshold but scores under twice it: the threshold is half the best (0.35)
    assert relevant_mask(page, [0.7, 0.4, 0.38, 0.3, 0.02], 0.5, 0.7) == [True, True, True, False, False]
    # a best node of twice the threshold or more leaves the threshold as it is (never raises it)
    assert relevant_mask(page, [0.99, 0.45, 0.42, 0.3, 0.02], 0.4, 0.7) == [True, True, True, False, False]
    # settled nodes do not set the page's best: with the <nav>'s 0.9 counted the threshold would be 0.45
    nav = _serialized("<html><body><nav><a href='/'>Home page of the council</a></nav>"
                      "<main><p>The council met on Monday.</p><p>Budget notes follow here.</p></main></body></html>")
    assert [n.boilerplate for n in nav.nodes] == ["nav", "", ""]
    assert relevant_mask(nav, [0.9, 0.3, 0.2], 0.5, 0.7) == [False, True, True]


def test_text_for_screen_readers_only_is_not_main_content():
    from edrew_scrapy.rules import for_screen_readers_only, relevant_mask

    page = _serialized("<main><article><div class='visually-hidden'>Skip to the recipe</div><h1>Kettle</h1>"
                       "<p>A steel kettle that boils a litre in three minutes.</p>"
                       "<p class='blinds'>Window blinds are a class name, not a utility.</p></article></main>")
    hidden = [n.content for n in page.nodes if for_screen_readers_only(n)]
    assert hidden == ["Skip to the recipe"]
    kept = [n.content for n, k in zip(page.nodes, relevant_mask(page, [0.9] * len(page.nodes), 0.5, 0.7)) if k]
    assert "Skip to the recipe" not in kept and len(kept) == len(page.nodes) - 1
    assert all(relevant_mask(page, [0.9] * len(page.nodes), 0.5))  # attribute models keep it


def test_design_systems_screen_reader_classes_count_too():
    from edrew_scrapy.rules import for_screen_readers_only

    page = _serialized("<main><div class='answer'><p>Press Ctrl+Tab to move between the panes.</p>"
                       "<span class='v-visible-sr'>silver badges</span>"
                       "<div class='show-for-sr'>Opens a dialog</div>"
                       "<span class='govuk-visually-hidden'>Step 2 of 4</span>"
                       "<p class='show-for-small'>Shown on phones, seen by everyone who uses one.</p></div></main>")
    hidden = [n.content for n in page.nodes if for_screen_readers_only(n)]
    assert hidden == ["silver badges", "Opens a dialog", "Step 2 of 4"]


RESPONSIVE_HTML = """<html><body><main><div class="product">
<h1>Speckled mug</h1>
<div class="product-description hidden-md-up"><p>A wheel-thrown mug in speckled white glaze.</p></div>
<div class="product-description-desktop hidden-sm-down"><p>A wheel-thrown   mug in speckled WHITE glaze.</p></div>
<ul class="variants"><li><span>In stock</span></li><li><span>In stock</span></li></ul>
</div></main></body></html>"""


def test_text_repeated_in_another_layout_is_kept_once():
    from edrew_scrapy.rules import layout_duplicates, relevant_mask

    page = _serialized(RESPONSIVE_HTML)
    texts = [n.content for n in page.nodes]
    assert texts.count("In stock") == 2 and len(texts) == 5
    repeats = [n.content for n, d in zip(page.nodes, layout_duplicates(page.nodes, [True] * 5)) if d]
    # the desktop copy of the description (other classes; case and spacing aside) goes, the mobile copy
    # (first in the document) stays; "In stock" repeats in the same shape (a template's list) and stays
    assert repeats == [texts[2]]
    kept = [n.content for n, k in zip(page.nodes, relevant_mask(page, [0.9] * 5, 0.5, 0.7)) if k]
    assert kept == ["Speckled mug", texts[1], "In stock", "In stock"]
    # a copy counts only against a kept first copy
    assert not any(layout_duplicates(page.nodes, [True, False, True, True, True]))
    assert all(relevant_mask(page, [0.9] * 5, 0.5))  # attribute models keep both copies


def test_form_controls_are_not_main_content():
    from edrew_scrapy.rules import in_form_control, relevant_mask

    page = _serialized("<main><article><h1>Linen sheets</h1><p>Stonewashed linen, softer with every wash.</p>"
                       "<form><label for='c'>Deliver to</label><select id='c'><option>Antigua and Barbuda</option>"
                       "<option>Bosnia and Herzegovina</option></select><button>Add to bag</button>"
                       "<fieldset><legend>Gift options</legend></fieldset>"
                       "<textarea>Quoted text being edited</textarea></form></article></main>")
    controls = [n.content for n in page.nodes if in_form_control(n)]
    assert controls == ["Deliver to", "Antigua and Barbuda", "Bosnia and Herzegovina", "Add to bag", "Gift options"]
    scores = [0.9] * len(page.nodes)
    kept = [n.content for n, k in zip(page.nodes, relevant_mask(page, scores, 0.5, 0.7)) if k]
    assert kept == ["Linen sheets", "Stonewashed linen, softer with every wash.", "Quoted text being edited"]
    assert all(relevant_mask(page, scores, 0.5))  # attribute models keep them


def test_main_content_models_do_not_score_settled_nodes(model_dir):
    from edrew_scrapy.extract import override_region_share, score_pages
    from edrew_scrapy.rules import settled
    from edrew_scrapy.serializer import serialize

    page = serialize("<html><body><nav><a href='/'>Home</a></nav><main><h1>Kettles</h1>"
                     "<p>A steel kettle that boils a litre in three minutes.</p><button>Add to bag</button>"
                     "<span class='sr-only'>Opens in a new window</span></main></body></html>")
    assert [n.content for n in page.nodes if settled(n)] == ["Home", "Add to bag", "Opens in a new window"]
    calls = []

    class Spy:
        def __init__(self, scorer):
            self.scorer = scorer

        def __getattr__(self, name):
            return getattr(self.scorer, name)

        def score(self, pages, **options):
            calls.append(options.get("skip"))
            return self.scorer.score(pages, **options)

    scorer = override_region_share(load_model(model_dir), 0.7)
    [probs] = score_pages(Spy(scorer), [page])
    assert calls == [settled]
    assert [p == 0 for p in probs] == [settled(n) for n in page.nodes]
    # an attribute model (no region share) scores every node
    score_pages(Spy(override_region_share(scorer, 0)), [page])
    assert calls[-1] is None
    [result] = extract(page, scorer=Spy(override_region_share(scorer, 0.7)))
    assert calls[-1] is settled and "Home" not in result.text


class _FixedScorer:
    """A main-content model stand-in: fixed scores, the card's threshold 0.5, region share 0.7."""

    threshold = 0.5
    region_share = 0.7

    def __init__(self, scores):
        self.scores = scores

    def score(self, pages, skip=None):
        import numpy as np

        return [np.asarray(self.scores, dtype=np.float32) for _ in pages]


def test_a_threshold_the_caller_gives_holds_on_every_page():
    from edrew_scrapy.extract import extract

    scorer = _FixedScorer([0.45, 0.4, 0.38, 0.1, 0.02])
    # the model's own threshold (0.5) is capped at half the page's best (0.225): the article's three nodes
    capped = extract(REGION_HTML, scorer=scorer)[0]
    assert [n.content[:7] for n in capped.nodes] == ["Council", "The cou", "Work st"]
    # a threshold the caller gives is taken as given: nothing reaches 0.5 here, nor 0.42 beyond the title
    assert extract(REGION_HTML, scorer=scorer, threshold=0.5)[0].nodes == []
    assert [n.content[:7] for n in extract(REGION_HTML, scorer=scorer, threshold=0.42)[0].nodes] == ["Council"]


SHOP_HTML = """<html><body><div class="product"><h1>The River Bridge</h1>
<p>A history of the old river bridge, from the first ferry to the new deck, told by the people who crossed it.</p></div>
<ul class="recommended">""" + "".join(
    f"<li>Another book in the series number {i} with a long title that readers also bought</li>" for i in range(12)
) + "</ul></body></html>"


def test_the_region_widens_to_hold_the_most_confident_node():
    # The list of recommendations holds more than 70 % of the kept words, so the region alone would be the
    # list and would cut the description, the one node the model is sure of (an unseen bookshop did this).
    from edrew_scrapy.rules import main_region, relevant_mask

    page = _serialized(SHOP_HTML)
    scores = [0.9 if n.content.startswith("A history") else 0.6 for n in page.nodes]
    everything = [True] * len(page.nodes)
    assert "/ul[1]" in main_region(page.nodes, everything, 0.7)
    kept = [n.content for n, k in zip(page.nodes, relevant_mask(page, scores, 0.5, 0.7)) if k]
    assert any(c.startswith("A history") for c in kept)
    assert any(c.startswith("Another book") for c in kept)  # widened, not moved: the list stays
    # the most confident node inside the list: the region is the list, as before
    scores = [0.9 if n.content.startswith("Another book in the series number 3 ") else 0.6 for n in page.nodes]
    kept = [n.content for n, k in zip(page.nodes, relevant_mask(page, scores, 0.5, 0.7)) if k]
    assert kept and all(c.startswith("Another book") for c in kept)


TEASERS_HTML = """<html><head><title>Hating the young, again / Weblog</title></head><body><div id="wrap">
<div class="byline">Jo Writer / 10:08 am Fri Jul 19, 2013</div>
<div class="headline"><h1>Hating the young, again</h1></div>
<div class="post"><p>A cartoonist got a spot on the news for his sharp critique of the story told about the young, which
has gone well beyond grumbling and into plain prejudice. Click through for the whole thing.</p></div>
<div class="more">""" + "".join(
    f'<div class="teaser"><h2><a href="/p{i}">Another story number {i} with a long headline</a></h2><p>The summary of '
    f'another story number {i}, two sentences long, which the reader may follow to its own page if it looks '
    f'interesting enough to read on, or skip.</p><h3><a href="/p{i}">READ THE REST</a></h3></div>' for i in range(5)
) + "</div></div></body></html>"


def test_the_region_widens_to_hold_the_text_after_the_headline():
    # Five teasers outweigh a short post in words, so the region alone would be the teaser list and would cut
    # the post (a weblog among trafilatura's test pages did this): the text after the headline comes back.
    from edrew_scrapy.rules import explain, headline_node, main_region, relevant_mask

    page = _serialized(TEASERS_HTML)
    assert page.nodes[headline_node(page)].content == "Hating the young, again"
    scores = [0.6] * len(page.nodes)
    everything = [True] * len(page.nodes)
    assert main_region(page.nodes, everything, 0.7).endswith("/div[4]")  # the teasers
    mask = relevant_mask(page, scores, 0.5, 0.7)
    kept = [n.content for n, k in zip(page.nodes, mask) if k]
    assert any(c.startswith("A cartoonist") for c in kept)
    assert any(c.startswith("The summary of another story number 4") for c in kept)  # widened, not moved
    assert explain(page, scores, 0.5, 0.7).kept == mask
    # left out (edrew evaluate --rules-off headline-lead): the region is the teaser list alone, and the post between
    # the headline and the list stays by the standfirst rule; with both left out it is cut
    kept = [n.content for n, k in zip(page.nodes, relevant_mask(page, scores, 0.5, 0.7, off=("headline-lead",))) if k]
    assert any(c.startswith("A cartoonist") for c in kept)
    off = ("headline-lead", "standfirst")
    kept = [n.content for n, k in zip(page.nodes, relevant_mask(page, scores, 0.5, 0.7, off=off)) if k]
    assert not any(c.startswith("A cartoonist") for c in kept)
    # a standfirst above the body is no lead to widen to: the region (the body) is no list of teasers; the
    # standfirst rule keeps it beside the region (tests/test_rules_boxes.py)
    dek = ("<html><head><title>Bridge reopens / Gazette</title></head><body><article><header><h1>Bridge reopens</h1>"
           "<p>" + "The standfirst sums the story up in one long sentence for readers in a hurry today. " * 2 +
           "</p></header><div class=body>" + "<p>The body of the story goes on at length about the bridge.</p>" * 12 +
           "</div></article></body></html>")
    page = _serialized(dek)
    scores_dek = [0.6] * len(page.nodes)
    kept = [n.content for n, k in zip(page.nodes, relevant_mask(page, scores_dek, 0.5, 0.7, off=("standfirst",))) if k]
    assert not any(c.startswith("The standfirst") for c in kept) and len(kept) == 12
    kept = [n.content for n, k in zip(page.nodes, relevant_mask(page, scores_dek, 0.5, 0.7)) if k]
    assert kept[0].startswith("The standfirst") and len(kept) == 13 and "Bridge reopens" not in kept
    # no headline in the <title>: the region is the teaser list, as before
    page = _serialized(TEASERS_HTML.replace("Hating the young, again / Weblog", "Weblog"))
    assert headline_node(page) == -1
    kept = [n.content for n, k in zip(page.nodes, relevant_mask(page, scores, 0.5, 0.7)) if k]
    assert not any(c.startswith("A cartoonist") for c in kept)


def test_a_sentence_written_in_spans_is_one_line_of_the_text():
    # the shipped model on a newsletter page whose paragraphs are runs of <span>, <em> and <a> (Substack's
    # markup): each paragraph is one line of `text`, its words in reading order
    page = (Path(__file__).parent / "fixtures" / "pages" / "newsletter-spans.html").read_bytes()
    [result] = extract(page)
    lines = result.text.split("\n")
    assert ("The words lantern and harbour keeper tend to appear together in old stories, but that does not mean "
            "this particular reader who likes lanterns keeps a harbour.") in lines
    assert any(line.startswith("A model that has read the stories will still guess it, because nearness in text is")
               for line in lines)
    assert all(len(line.split()) > 5 for line in lines)


def test_cli_a_file_named_as_no_html_is_skipped_as_the_same_url_would_be(model_dir, tmp_path, capsys):
    import gzip

    (tmp_path / "data.json").write_text('{"html": "<p>not a page</p>"}', encoding="utf-8")
    (tmp_path / "notes.txt").write_text("Just a text file.\nNot HTML at all.\n", encoding="utf-8")
    (tmp_path / "saved.txt").write_text(HTML, encoding="utf-8")  # starts like a page: read as one
    (tmp_path / "page.html.gz").write_bytes(gzip.compress(HTML.encode("utf-8")))
    (tmp_path / "noext").write_text(HTML, encoding="utf-8")
    (tmp_path / "index.php").write_text(HTML, encoding="utf-8")  # a saved page: its extension says nothing
    names = ["data.json", "notes.txt", "saved.txt", "page.html.gz", "noext", "index.php"]
    code = main(["extract", *(str(tmp_path / n) for n in names), "--model", str(model_dir), "--threshold", "0"])
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert code == 0
    assert [r.get("skipped") for r in out] == ["not-html", "not-html", None, None, None, None]
    assert all("Second paragraph." in r["text"] for r in out[2:])
