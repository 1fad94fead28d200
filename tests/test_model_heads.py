"""Mixed models: several heads on one biLM, their probabilities mixed per node (the card's `heads`).

The format (files.head_entries, schema), scoring on both backends against the heads loaded one by one,
and `edrew combine`, which builds such a folder from single-head folders."""
from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from _model_helpers import make_page, second_head, tiny_model
from conftest import ROOT
from test_model_numpy import TOLERANCE, fixture_pages

from edrew_scrapy.cli import main
from edrew_scrapy.extract import score_pages
from edrew_scrapy.model import files
from edrew_scrapy.model.base import load_model
from edrew_scrapy.model.combine import CombineError, combine
from edrew_scrapy.model.files import ModelError
from edrew_scrapy.pagetype import default_classifier

WEIGHT = 0.3


@pytest.fixture()
def folders(tmp_path):
    tiny_model(tmp_path / "a", seed=0)
    second_head(tmp_path / "a", tmp_path / "b", seed=5)
    combine(tmp_path / "a", [("news", tmp_path / "b")], [WEIGHT], tmp_path / "mixed")
    return tmp_path / "a", tmp_path / "b", tmp_path / "mixed"


def _pages():
    return [make_page(9), make_page(5, url="http://example.test/q"), make_page(1, url="http://example.test/r")]


def _card(directory):
    return json.loads((directory / files.CARD).read_text("utf-8"))


def _write_card(directory, card):
    (directory / files.CARD).write_text(json.dumps(card), encoding="utf-8")


def test_combine_writes_a_card_with_both_heads(folders):
    a, b, mixed = folders
    card = _card(mixed)
    assert card["format_version"] == files.MIXED_FORMAT_VERSION == 2 and _card(a)["format_version"] == 1
    assert [(h["name"], h["file"], h["weight"]) for h in card["heads"]] == [
        ("base", files.HEAD, 0.7), ("news", "head-news.safetensors", WEIGHT)]
    assert card["heads"][1]["head"] == _card(b)["head"] and card["heads"][1]["training"]["seed"] == 5
    # the base's own fields and files are unchanged; the new head file is the added folder's head
    assert {k: v for k, v in card.items() if k not in ("heads", "files", "format_version")} == {
        k: v for k, v in _card(a).items() if k not in ("files", "format_version")}
    assert (mixed / "head-news.safetensors").read_bytes() == (b / files.HEAD).read_bytes()
    assert card["files"]["head-news.safetensors"]["sha256"] == files.sha256_of(b / files.HEAD)


@pytest.mark.parametrize("backend", ["numpy", "native"])
def test_mixed_scores_are_the_weighted_heads(folders, backend):
    a, b, mixed = folders
    pages = _pages()
    got = load_model(mixed, backend=backend).score(pages)
    first, second = load_model(a, backend=backend).score(pages), load_model(b, backend=backend).score(pages)
    for m, x, y in zip(got, first, second):
        assert m.dtype == np.float32 and m.shape == x.shape
        np.testing.assert_allclose(m, 0.7 * x + WEIGHT * y, atol=TOLERANCE)
    assert max(np.abs(x - y).max() for x, y in zip(first, second)) > 0.01  # the heads do differ


def test_mixed_scores_agree_across_backends_and_skip_settled_nodes(folders):
    _, _, mixed = folders
    pages = _pages()

    def settled(node):
        return node.content.startswith("Menu")

    numpy_scores = load_model(mixed, backend="numpy").score(pages, skip=settled)
    native_scores = load_model(mixed, backend="native").score(pages, skip=settled)
    for page, a, b in zip(pages, numpy_scores, native_scores):
        np.testing.assert_allclose(a, b, atol=TOLERANCE)
        is_settled = np.array([settled(n) for n in page.nodes])
        assert (a[is_settled] == 0.0).all() and (a[~is_settled] > 0).all()


@pytest.mark.parametrize("variant, config", [
    ("d", {"n_features": 6, "tree_levels": 2}),  # page BiLSTMs of one size: they step together (numpy)
    ("d", {"context_dim": 12}),  # of two sizes: one after the other
    ("c", {}),  # one head without a page BiLSTM
    ("a", {}),  # one head without text vectors or features
])
def test_heads_of_different_configurations_mix(tmp_path, variant, config):
    # the page loop computes what any head reads; each head takes its own
    tiny_model(tmp_path / "a", seed=0)
    second_head(tmp_path / "a", tmp_path / "b", seed=7, variant=variant, **config)
    combine(tmp_path / "a", [("other", tmp_path / "b")], [0.5], tmp_path / "mixed")
    pages = _pages()
    for backend in ("numpy", "native"):
        got = load_model(tmp_path / "mixed", backend=backend).score(pages)
        first = load_model(tmp_path / "a", backend=backend).score(pages)
        second = load_model(tmp_path / "b", backend=backend).score(pages)
        for m, x, y in zip(got, first, second):
            np.testing.assert_allclose(m, 0.5 * x + 0.5 * y, atol=TOLERANCE)


def test_the_shipped_model_is_its_two_heads_mixed(tmp_path):
    # models/default against its heads as single-head folders, on real pages
    shipped = ROOT / "models" / "default"
    card = _card(shipped)
    assert [h["weight"] for h in card["heads"]] == [0.7, 0.3]
    singles = []
    for entry in card["heads"]:
        folder = tmp_path / entry["name"]
        folder.mkdir()
        for name in (files.OPTIONS, files.WEIGHTS):
            shutil.copyfile(shipped / name, folder / name)
        shutil.copyfile(shipped / entry["file"], folder / files.HEAD)
        single = {k: v for k, v in card.items() if k != "heads"}  # write_card: format version 1
        files.write_card(folder, dict(single, head=entry.get("head", card["head"])))
        singles.append(folder)
    pages = fixture_pages()[:6]
    # the news head sits out the pages typed listing, collection or product
    sits_out = card["heads"][1]["not_on_page_types"]
    assert sits_out == ["listing", "collection", "product"]
    classifier = default_classifier()
    alone = [kind in sits_out and p >= 0.5 for kind, p in map(classifier.predict, pages)]
    for backend in ("numpy", "native"):
        got = score_pages(load_model(shipped, backend=backend), pages)
        parts = [score_pages(load_model(folder, backend=backend), pages) for folder in singles]
        for m, x, y, base_alone in zip(got, *parts, alone):
            np.testing.assert_allclose(m, x if base_alone else 0.7 * x + 0.3 * y, atol=TOLERANCE)


@pytest.mark.parametrize("backend", ["numpy", "native"])
def test_a_head_sits_out_the_page_types_its_entry_names(folders, backend):
    a, b, mixed = folders
    pages = _pages()
    types = [default_classifier(str(mixed)).predict(page) for page in pages]
    first, second = load_model(a, backend=backend).score(pages), load_model(b, backend=backend).score(pages)
    card = _card(mixed)
    # the type of the first page (whatever the shipped classifier calls it) is sat out, at any probability
    card["heads"][1].update(not_on_page_types=[types[0][0]], page_type_probability=0.0)
    _write_card(mixed, card)
    got = load_model(mixed, backend=backend).score(pages)
    for m, x, y, (kind, _p) in zip(got, first, second, types):
        np.testing.assert_allclose(m, x if kind == types[0][0] else 0.7 * x + WEIGHT * y, atol=TOLERANCE)
    # below the probability asked for, the head scores the page
    card["heads"][1]["page_type_probability"] = 1.0
    _write_card(mixed, card)
    got = load_model(mixed, backend=backend).score(pages)
    for m, x, y in zip(got, first, second):
        np.testing.assert_allclose(m, 0.7 * x + WEIGHT * y, atol=TOLERANCE)


def test_the_base_head_never_sits_out_and_types_are_known(folders, tmp_path):
    a, b, mixed = folders
    card = _card(mixed)
    card["heads"][0]["not_on_page_types"] = ["listing"]
    _write_card(mixed, card)
    with pytest.raises(ModelError, match="heads\\[0\\] scores every page"):
        load_model(mixed)
    with pytest.raises(CombineError, match="not among"):
        combine(a, [("news", b)], [WEIGHT], tmp_path / "other", not_on=["blog"])
    combine(a, [("news", b)], [WEIGHT], tmp_path / "guarded", not_on=["listing", "product"])
    assert _card(tmp_path / "guarded")["heads"][1]["not_on_page_types"] == ["listing", "product"]


def test_the_sequence_cache_holds_every_heads_vectors(folders):
    a, _, mixed = folders
    pages = _pages()
    one, two = load_model(a), load_model(mixed)
    one.score(pages), two.score(pages)
    assert one.cache_stats()["sequences"]["entries"] == two.cache_stats()["sequences"]["entries"] > 0
    assert two.cache_stats()["sequences"]["bytes"] > one.cache_stats()["sequences"]["bytes"]
    again = two.score(pages)  # from the cache: the same scores
    for x, y in zip(two.score(pages), again):
        np.testing.assert_array_equal(x, y)


BAD_CARDS = [
    (lambda c: c["heads"][1].update(weight=0.4), "weights sum to 1.1"),
    (lambda c: c["heads"][1].update(weight=1.5), "heads.1.weight"),
    (lambda c: c["heads"][1].update(weight="0.3"), "heads.1.weight"),
    (lambda c: c["heads"].reverse(), "heads\\[0\\] must be the card's own head"),
    (lambda c: c["heads"][0].update(head=c["head"]), "heads\\[0\\] must be the card's own head"),
    (lambda c: c["heads"][1].pop("head"), "has no head configuration"),
    (lambda c: c["heads"][1].update(name="base"), "the same name"),
    (lambda c: c["files"].pop("head-news.safetensors"), "does not list the checksum of head-news"),
    (lambda c: c["heads"][1].update(file="../head.safetensors"), "heads.1.file"),
    (lambda c: c["heads"][1].update(file="card.json"), "heads.1.file"),
    (lambda c: c["heads"].pop(), "heads: .* is too short"),
    (lambda c: c["heads"][1]["head"].update(elmo_dim=12), "head 'news'.*head.elmo_dim is 12"),
    (lambda c: c["heads"][1]["head"].update(node_dim=40), "tensors do not match"),
    (lambda c: c["heads"][1]["head"].update(dropout=2), "heads.1.head.dropout"),
    (lambda c: c["heads"][1].update(extra=1), "Additional properties"),
    # a release that reads version 1 alone must refuse a mixed card, not score with its first head
    (lambda c: c.update(format_version=1), "a card with `heads` .* is format version 2.*this one is version 1"),
    (lambda c: c.pop("heads"), "this one is version 2"),
]


@pytest.mark.parametrize("backend", ["numpy", "native"])
@pytest.mark.parametrize("change, message", BAD_CARDS)
def test_bad_mix_entries_are_model_errors(folders, backend, change, message):
    mixed = folders[2]
    card = _card(mixed)
    change(card)
    _write_card(mixed, card)
    with pytest.raises(ModelError, match=message):
        load_model(mixed, backend=backend)


@pytest.mark.parametrize("verify", [True, False])
def test_a_missing_or_changed_second_head_is_refused(folders, verify):
    mixed = folders[2]
    data = bytearray((mixed / "head-news.safetensors").read_bytes())
    data[-1] ^= 1
    (mixed / "head-news.safetensors").write_bytes(bytes(data))
    if verify:
        with pytest.raises(ModelError, match="head-news.safetensors: sha256 checksum does not match"):
            load_model(mixed)
    (mixed / "head-news.safetensors").unlink()
    with pytest.raises(ModelError, match="head-news.safetensors: file is missing"):
        load_model(mixed, verify=verify)


def test_combine_refuses_a_head_of_another_bilm(tmp_path):
    tiny_model(tmp_path / "a", seed=0)
    tiny_model(tmp_path / "other", seed=3)
    with pytest.raises(CombineError, match="elmo_weights.hdf5 differs"):
        combine(tmp_path / "a", [("x", tmp_path / "other")], [0.3], tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_combine_refuses_bad_requests(folders, tmp_path):
    a, b, mixed = folders
    for weights in ([1.0], [0.0], [-0.2], [0.6, 0.6]):
        added = [("n", b)] * len(weights) if len(weights) == 1 else [("n", b), ("m", b)]
        with pytest.raises(CombineError, match="weights"):
            combine(a, added, weights, tmp_path / "w")
    with pytest.raises(CombineError, match="one weight for each"):
        combine(a, [("n", b)], [0.1, 0.2], tmp_path / "w")
    with pytest.raises(CombineError, match="head name 'news' is taken"):
        combine(mixed, [("news", b)], [0.1], tmp_path / "w")
    with pytest.raises(CombineError, match="head name 'a/b'"):
        combine(a, [("a/b", b)], [0.1], tmp_path / "w")
    with pytest.raises(CombineError, match="a mixed model"):
        combine(a, [("m", mixed)], [0.1], tmp_path / "w")
    with pytest.raises(CombineError, match="not an empty folder"):
        combine(a, [("n", b)], [0.1], mixed)
    with pytest.raises(ModelError, match="model directory does not exist"):
        combine(a, [("n", tmp_path / "nowhere")], [0.1], tmp_path / "w")


def test_combine_adds_a_third_head_and_works_in_place(folders, tmp_path):
    a, b, mixed = folders
    second_head(a, tmp_path / "c", seed=9)
    combine(mixed, [("third", tmp_path / "c")], [0.5], mixed)  # in place
    card = _card(mixed)
    assert [(h["name"], h["weight"]) for h in card["heads"]] == [("base", 0.35), ("news", 0.15), ("third", 0.5)]
    pages = _pages()
    got = load_model(mixed).score(pages)
    parts = [load_model(folder).score(pages) for folder in (a, b, tmp_path / "c")]
    for m, x, y, z in zip(got, *parts):
        np.testing.assert_allclose(m, 0.35 * x + 0.15 * y + 0.5 * z, atol=TOLERANCE)


def test_the_combine_command(folders, tmp_path, capsys):
    a, b, _ = folders
    out = tmp_path / "cli"
    assert main(["combine", "--base", str(a), "--add", f"news={b}", "--weight", "0.25", "--out", str(out)]) == 0
    assert "heads base 0.75 (head.safetensors), news 0.25 (head-news.safetensors)" in capsys.readouterr().err
    assert [h["weight"] for h in _card(out)["heads"]] == [0.75, 0.25]
    tiny_model(tmp_path / "other", seed=3)
    args = ["combine", "--base", str(a), "--add", f"x={tmp_path / 'other'}", "--weight", "0.25", "--out",
            str(tmp_path / "cli2")]
    assert main(args) == 2
    assert "edrew combine:" in capsys.readouterr().err and not (tmp_path / "cli2").exists()
    assert main(["combine", "--base", str(a), "--add", f"n={b}", "--add", f"m={b}", "--weight", "0.2",
                 "--out", str(tmp_path / "cli3")]) == 2
    with pytest.raises(SystemExit):
        main(["combine", "--base", str(a), "--add", f"n={b}", "--weight", "1.5", "--out", str(tmp_path / "x")])
