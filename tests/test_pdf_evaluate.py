"""The labelled PDF set: its generator (LaTeX source and truth, without compiling), the metrics of
edrew_scrapy.training.pdf_evaluate on hand-made structures, and `edrew evaluate --dataset pdf` end to end
on an fpdf2 article whose truth is written from the constants it is made from (no LaTeX needed)."""
from __future__ import annotations

import dataclasses
import json
import re

import pytest
from _pdf_helpers import ABSTRACT, AUTHORS, CAPTION, FOOTNOTE, SECTIONS, TITLE, article_pdf

from edrew_scrapy.cli import main
from edrew_scrapy.pdf import corpus
from edrew_scrapy.pdf.article import Article, Block, Section
from edrew_scrapy.training import pdf_evaluate as pe

# The fixture's sentences end at ". " or ": " before a capital (it has no "Dr. X" or "A. Smith" in it).
_SPLIT = re.compile(r"(?<=[.:])\s+(?=[A-Z])")


def _truth_of_fixture() -> dict:
    paragraphs = [{"section": n, "text": p, "sentences": _SPLIT.split(p)} for n, _, _, ps in SECTIONS for p in ps]
    return {"name": "fixture", "layout": "fpdf2", "title": TITLE, "authors": AUTHORS,
            "abstract": [{"text": ABSTRACT, "sentences": _SPLIT.split(ABSTRACT)}],
            "sections": [{"number": n, "title": t, "level": lv} for n, t, lv, _ in SECTIONS],
            "paragraphs": paragraphs, "footnotes": [FOOTNOTE[2:]], "captions": [{"text": CAPTION.split(": ", 1)[1]}]}


def _hand_truth() -> dict:
    return {"name": "hand", "layout": "x", "title": "A Title", "authors": ["Ann Lee", "Bo Chen"],
            "abstract": [{"text": "Short abstract. It has two sentences.",
                          "sentences": ["Short abstract.", "It has two sentences."]}],
            "sections": [{"number": "1", "title": "Introduction", "level": 1},
                         {"number": "1.1", "title": "Scope", "level": 2}],
            "paragraphs": [{"section": "1", "text": "One two three four. Five six seven eight.",
                            "sentences": ["One two three four.", "Five six seven eight."]},
                           {"section": "1.1", "text": "Nine ten eleven twelve thirteen.",
                            "sentences": ["Nine ten eleven twelve thirteen."]}],
            "footnotes": ["A footnote with enough words in it."], "captions": [{"text": "Caption words go here."}]}


def _article(paragraphs, headings=(("Introduction", 1), ("Scope", 2)), title="A Title", authors=("Ann Lee", "Bo Chen")):
    sections = [Section(title=t, level=lv) for t, lv in headings]
    abstract = [Block("paragraph", "Short abstract. It has two sentences.",
                      sentences=["Short abstract.", "It has two sentences."])]
    sections[0].blocks = [Block("paragraph", " ".join(s), sentences=list(s)) for s in paragraphs]
    return Article(title=title, authors=list(authors), abstract=abstract, sections=sections)


def test_metrics_perfect_structure():
    article = _article([["One two three four.", "Five six seven eight."], ["Nine ten eleven twelve thirteen."]])
    summary = pe.summarize([pe.score_document(article, _hand_truth())])
    assert summary == {"documents": 1, "headings_f1": 1.0, "paragraphs": 1.0, "sentences_f1": 1.0,
                       "title": 1.0, "authors": 1.0, "kept_out": 1.0}


def test_metrics_count_each_kind_of_miss():
    # two paragraphs merged (and the footnote inside them), one boundary missed, a heading at the wrong
    # level, an author missing
    merged = ["One two three four. Five six seven eight.", "Nine ten eleven twelve thirteen.",
              "A footnote with enough words in it."]
    article = _article([merged], headings=(("Introduction", 1), ("Scope", 3)), authors=("Ann Lee",))
    row = pe.score_document(article, _hand_truth())
    assert row["headings"] == [1, 2, 2]
    assert row["paragraphs"] == [1, 3]  # only the abstract is matched
    # reference ends: abstract 2 + 2 + 1 = 5; predicted: abstract 2 + 3 ends, one of them inside the footnote
    # text, which has no reference word to fall on; "four." is missed
    assert row["sentences"] == [4, 4, 5]
    assert row["kept_out"] == [1, 2]
    assert (row["title"], row["authors"]) == (1, 0)
    summary = pe.summarize([row])
    assert summary["headings_f1"] == pytest.approx(0.5)
    assert summary["sentences_f1"] == pytest.approx(8 / 9)


def test_word_f1_and_paragraph_matching_is_one_to_one():
    assert pe.word_f1(["a", "b"], ["a", "b"]) == 1.0
    assert pe.word_f1([], ["a"]) == 0.0
    ref = [{"text": "alpha beta gamma delta"}, {"text": "alpha beta gamma delta"}]
    assert pe.paragraph_matches([Block("paragraph", "Alpha beta gamma delta")], ref) == 1


@pytest.mark.parametrize("layout", list(corpus.LAYOUTS))
def test_generator_truth_comes_from_the_source(layout):
    doc = corpus.make_document(7, layout)
    source = corpus.to_latex(doc)
    truth = corpus.truth(doc)
    assert corpus.truth(corpus.make_document(7, layout)) == truth  # a seed gives one document
    assert truth["title"] in source and all(a in source for a in truth["authors"])
    assert {s["level"] for s in truth["sections"]} <= {1, 2, 3} and truth["sections"][0]["level"] == 1
    assert truth["sections"][-1] == {"number": None, "title": "Acknowledgments", "level": 1}
    assert len(truth["references"]) >= 6 and source.count(r"\bibitem") == len(truth["references"])
    assert source.count(r"\footnote{") == len(truth["footnotes"]) >= 1
    assert source.count(r"\caption{") == len(truth["captions"])
    for paragraph in truth["paragraphs"]:
        assert " ".join(paragraph["sentences"]) == paragraph["text"]
        assert all("\\" not in s and "~" not in s for s in paragraph["sentences"])  # plain text, no LaTeX
    numbered = [s["number"] for s in truth["sections"] if s["level"] == 1 and s["number"]]
    assert numbered[0] == ("I" if layout in ("ieeetran", "revtex") else "1")


def test_revtex_truth_lists_authors_as_grouped_addresses_print_them():
    # REVTeX prints the authors of one affiliation together, under its first appearance
    doc = dataclasses.replace(corpus.make_document(7, "revtex"), authors=["Ann One", "Bo Two", "Cy Three", "Di Four"],
                              affiliations=["KTH Stockholm", "ETH Zurich", "University of Porto", "KTH Stockholm"])
    assert corpus.truth(doc)["authors"] == ["Ann One", "Di Four", "Bo Two", "Cy Three"]
    source_order = dataclasses.replace(doc, layout="article")
    assert corpus.truth(source_order)["authors"] == ["Ann One", "Bo Two", "Cy Three", "Di Four"]


def test_generator_sentences_hold_the_hard_cases():
    text = " ".join(s for seed in range(20) for p in corpus.truth(corpus.make_document(seed, "article"))["paragraphs"]
                    for s in p["sentences"])
    for case in ("e.g.", "et al.", "Fig. ", "Eq. (", "vs.", "i.e.", "Sec. "):
        assert case in text
    assert re.search(r"\b[A-Z]\. [A-Z]\. [A-Z][a-z]+", text)  # initials
    assert re.search(r"\d\.\d", text)  # decimals


def test_unknown_layout_is_a_value_error():
    with pytest.raises(ValueError, match="unknown layout"):
        corpus.make_document(1, "nature")


def test_evaluate_command_on_an_fpdf2_article(tmp_path, capsys):
    data = tmp_path / "set"
    data.mkdir()
    (data / "fixture.pdf").write_bytes(article_pdf(columns=2))
    (data / "fixture.json").write_text(json.dumps(_truth_of_fixture()), encoding="utf-8")
    (data / "orphan.json").write_text("{}", encoding="utf-8")  # no PDF beside it: not part of the set
    out = tmp_path / "out"
    assert main(["evaluate", "--dataset", "pdf", str(data), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "1 documents" in printed and ">= 0.97" in printed and "pdfminer-plain" in printed
    summary = json.loads((out / "summary.json").read_text())
    ours = summary["all"]["edrew"]
    assert summary["targets"] == pe.TARGETS
    assert ours["title"] == ours["authors"] == ours["kept_out"] == 1.0
    assert ours["headings_f1"] == 1.0 and ours["paragraphs"] >= 0.9 and ours["sentences_f1"] >= 0.95
    assert (out / "documents.csv").read_text().count("\n") == 3  # header, edrew, peer


def test_evaluate_command_errors(tmp_path, capsys):
    assert main(["evaluate", "--dataset", "pdf", str(tmp_path)]) != 0
    assert "no labelled PDFs" in capsys.readouterr().err
    assert main(["evaluate", "--dataset", "pdf", str(tmp_path), "--pdf-parsers", "pymupdf"]) != 0
    assert "unknown pymupdf" in capsys.readouterr().err
