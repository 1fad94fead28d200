"""edrew_scrapy.pdf on PDFs written here with a known structure (tests/_pdf_helpers.py): structure,
sentences, XML against the shipped schema, and the typed errors for what is no usable PDF."""
from __future__ import annotations

import random
from collections import Counter

import pytest
from _pdf_helpers import (
    ABSTRACT,
    AUTHORS,
    CAPTION,
    EQUATION,
    FOOTNOTE,
    HEADER,
    LIST_ITEMS,
    REFERENCES,
    SECTIONS,
    TITLE,
    article_pdf,
    blank_pdf,
)
from lxml import etree

from edrew_scrapy.pdf import PdfError, is_pdf, parse_pdf, schema_path, split_sentences, to_xml
from edrew_scrapy.pdf.article import Article, Block, Section


@pytest.fixture(scope="module", params=[1, 2], ids=["one-column", "two-columns"])
def article(request):
    return parse_pdf(article_pdf(columns=request.param))


@pytest.fixture(scope="module")
def schema():
    return etree.RelaxNG(etree.parse(str(schema_path())))


def blocks_of(article, kind):
    return [b for s in article.all_sections() for b in s.blocks if b.kind == kind] + \
        [b for b in article.preamble if b.kind == kind]


def test_front_matter(article):
    assert article.title == TITLE
    assert article.authors == AUTHORS
    assert [s for b in article.abstract for s in b.sentences] == split_sentences(ABSTRACT)
    assert len(split_sentences(ABSTRACT)) == 3
    assert article.pages >= 2  # the article crosses pages: the joins below are tested


def test_sections_numbers_titles_levels_and_nesting(article):
    found = [(s.number, s.title, s.level) for s in article.all_sections()]
    assert found == [(number, title, level) for number, title, level, _ in SECTIONS]
    method = article.sections[1]
    assert method.sections[0].title == "Layout Analysis"
    assert method.sections[0].sections[0].title == "Font Sizes"


def test_paragraphs_joined_across_lines_columns_and_pages_with_hyphenation_undone(article):
    for section, (_, _, _, paragraphs) in zip(article.all_sections(), SECTIONS):
        assert [b.text for b in section.blocks if b.kind == "paragraph"] == paragraphs, section.title
    assert "experiments" in " ".join(b.text for b in blocks_of(article, "paragraph"))


def test_lists_footnotes_captions_equations_kept_out_of_paragraphs(article):
    assert [b.items for b in blocks_of(article, "list")] == [LIST_ITEMS]
    assert [b.text for b in blocks_of(article, "footnote")] == [FOOTNOTE]
    assert [b.text for b in blocks_of(article, "caption")] == [CAPTION]
    assert [b.text for b in blocks_of(article, "equation")] == [EQUATION]
    text = " ".join(b.text for b in blocks_of(article, "paragraph"))
    for kept_out in (FOOTNOTE, CAPTION, EQUATION, *LIST_ITEMS):
        assert kept_out not in text


def test_running_headers_and_page_numbers_dropped(article):
    everything = to_xml(article).decode("utf-8")
    assert HEADER not in everything
    texts = [b.text for s in article.all_sections() for b in s.blocks] + article.references
    assert not any(t.strip().isdigit() for t in texts)


def test_references_one_per_entry(article):
    assert article.references == REFERENCES


def test_xml_validates_and_carries_the_structure(article, schema):
    data = to_xml(article, source="paper.pdf")
    root = etree.fromstring(data)
    assert schema.validate(root), schema.error_log
    assert data.startswith(b"<?xml version='1.0' encoding='utf-8'?>")
    assert root.findtext("front/title") == TITLE
    assert [s.get("title") for s in root.iter("section")] == [t for _, t, _, _ in SECTIONS]
    assert root.find(".//section[@number='2.1.1']").get("level") == "3"
    assert len(root.findall("back/references/reference")) == len(REFERENCES)
    sentences = [s.text for s in root.iter("sentence")]
    assert "Smith et al. [2] describe an early system for this task." in sentences


def test_xml_escapes_markup_and_drops_characters_xml_cannot_hold(schema):
    article = Article(title="A <b> & \"c\"\x00\x1b", authors=["Zoë Ünal"], year=2021, pages=1,
                      sections=[Section(title="R&D <1>", level=1, number="1", blocks=[
                          Block(kind="paragraph", text="x", sentences=["a < b & c > d.", "\x0c"]),
                          Block(kind="list", items=["", "one"]), Block(kind="equation", text="a<b")])],
                      references=["[1] A & B."])
    root = etree.fromstring(to_xml(article))
    assert schema.validate(root), schema.error_log
    assert root.findtext("front/title") == 'A <b> & "c"'
    assert root.findtext("front/authors/author") == "Zoë Ünal"
    assert [s.text for s in root.iter("sentence")] == ["a < b & c > d."]
    assert [i.text for i in root.iter("item")] == ["one"]
    assert root.get("year") == "2021"


def test_an_empty_article_still_validates(schema):
    assert schema.validate(etree.fromstring(to_xml(Article())))


@pytest.mark.parametrize("data, reason", [
    (b"<html><body>not a pdf</body></html>", "not-pdf"),
    (b"", "not-pdf"),
    (article_pdf(1)[:2000], "broken"),
    (b"%PDF-1.4\n" + b"\x00garbage" * 50, "broken"),
    (article_pdf(1, encrypt=True), "encrypted"),
    (blank_pdf(), "no-text"),
], ids=["html", "empty", "truncated", "garbage", "encrypted", "no-text"])
def test_unusable_pdfs_raise_a_typed_error(data, reason):
    with pytest.raises(PdfError) as caught:
        parse_pdf(data)
    assert caught.value.reason == reason


def test_pdf_magic():
    assert is_pdf(b"%PDF-1.7\n...") and is_pdf(b"\n\n%PDF-1.4")
    assert not is_pdf(b"<!doctype html>") and not is_pdf(b"x" * 2000 + b"%PDF-1.4")


@pytest.mark.parametrize("text, sentences", [
    ("We use a CNN, e.g. ResNet, as in Fig. 3 of Smith et al. The accuracy is 93.5 percent. J. R. Smith agreed.",
     ["We use a CNN, e.g. ResNet, as in Fig. 3 of Smith et al.", "The accuracy is 93.5 percent.",
      "J. R. Smith agreed."]),
    ("As shown in Table 2, results improve (see Sec. 4.1). This is new. Eq. (3) holds for i.e. all n.",
     ["As shown in Table 2, results improve (see Sec. 4.1).", "This is new.", "Eq. (3) holds for i.e. all n."]),
    ("The method of Wang et al. [12] fails. It takes approx. 3.2 ms vs. 5 ms. Finally, we conclude.",
     ["The method of Wang et al. [12] fails.", "It takes approx. 3.2 ms vs. 5 ms.", "Finally, we conclude."]),
    ("Results are in Figs. 3 and 4. The U.S. Army tested it. It worked! Did it? yes, it did.",
     ["Results are in Figs. 3 and 4.", "The U.S. Army tested it.", "It worked!", "Did it? yes, it did."]),
    ('He said "stop." Then he left. (This is bracketed.) Next.',
     ['He said "stop."', "Then he left.", "(This is bracketed.)", "Next."]),
    ("No final stop here", ["No final stop here"]),
    ("Data Ψ1, . . . , Ψn are given. Next.", ["Data Ψ1, . . . , Ψn are given.", "Next."]),
    ("  ", []),
])
def test_sentences(text, sentences):
    assert split_sentences(text) == sentences


def test_damaged_pdfs_give_an_article_or_a_typed_error(schema):
    # bytes changed at random places and bodies cut short, as a broken server or disk gives them
    base = article_pdf(2)
    rng = random.Random(5)
    reasons = Counter()
    for _ in range(40):
        data = bytearray(base)
        for _ in range(rng.choice([1, 5, 20])):
            data[rng.randrange(len(data))] = rng.randrange(256)
        if rng.random() < 0.3:
            del data[rng.randrange(len(data)):]
        try:
            article = parse_pdf(bytes(data))
            reasons["parsed"] += 1
            assert schema.validate(etree.fromstring(to_xml(article))), schema.error_log
        except PdfError as exc:
            reasons[exc.reason] += 1
    assert reasons["parsed"] and reasons["broken"]  # both outcomes occur in this draw
