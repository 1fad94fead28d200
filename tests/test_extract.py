"""extract() and `edrew extract`: input order, thresholds, the jsonl contract, errors per input."""
from __future__ import annotations

import json

import pytest
import torch

from edrew_scrapy.cli import main
from edrew_scrapy.extract import extract
from edrew_scrapy.model.scorer import load_model
from edrew_scrapy.page import Page

from _model_helpers import make_page, tiny_model

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
    nothing = extract(pages, scorer=scorer, threshold=1.01)
    assert all(e.text == "" and not e.nodes for e in nothing)
    default_cut = extract(make_page(5), scorer=scorer)[0]
    assert all(n.score >= scorer.threshold for n in default_cut.nodes)


def test_nodes_inside_a_dialog_are_never_relevant(model_dir):
    from edrew_scrapy.extract import is_relevant
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
    assert first["text"] == "\n".join(n["content"] for n in first["nodes"])
    assert {"content", "score", "path"} <= set(first["nodes"][0])


def test_cli_text_format(model_dir, tmp_path, capsys):
    good = tmp_path / "page.html"
    good.write_text(HTML, encoding="utf-8")
    assert main(["extract", str(good), "--model", str(model_dir), "--format", "text", "--threshold", "0"]) == 0
    assert "Second paragraph." in capsys.readouterr().out


def test_cli_bad_model_is_one_line(tmp_path, capsys):
    code = main(["extract", str(tmp_path / "x.html"), "--model", str(tmp_path / "nomodel")])
    err = capsys.readouterr().err
    assert code == 2 and "nomodel" in err and "Traceback" not in err
