"""rules: the `byline-lines` rule drops an article's headline, byline and dateline lines from its text (the item's
`headline`, `author` and `date_published` hold them, read from the same lines by metadata.byline_lines), and
keeps body prose that opens like a byline or names a day. Pages written for these tests."""
from __future__ import annotations

import datetime as dt

import numpy as np
import pytest

from edrew_scrapy import metadata
from edrew_scrapy.extract import extract
from edrew_scrapy.pagetype import default_classifier
from edrew_scrapy.rules import OPTIONAL_RULES, REASONS, byline_line_nodes, explain, relevant_mask
from edrew_scrapy.serializer import serialize

TODAY = dt.date(2026, 1, 10)
BODY = "".join(f"<p>{s}</p>" for s in (
    "The harbour board agreed on Monday to dredge the eastern basin before the summer season begins in June.",
    "Fishing boats had run aground twice this winter, and the ferry company warned it would cancel crossings.",
    "The dredging costs four million and the board will borrow half of it from the regional development bank.",
    "Sand from the basin goes to the beach north of the town, which lost much of its width in the storms.",
    "Work is done at night so that the ferries keep their timetable, the harbour master told the council.",
    "Residents of the quay asked for a noise limit, and the board promised to stop the pumps at midnight.",
))

PAGE = """<html><head><title>Harbour to be dredged | Coast Times</title>{head}</head><body><main><article>
<h1>Harbour to be dredged</h1>{top}
{body}{extra}</article></main></body></html>"""

TOP = '<div class="meta"><span>By Jane van Doe, City desk</span><time>Updated Dec 4, 2025</time></div>'


def _html(top: str = TOP, extra: str = "", head: str = "") -> str:
    return PAGE.format(top=top, body=BODY, extra=extra, head=head)


def _kept(page, off=()):
    scores = np.full(len(page.nodes), 0.9, dtype=np.float32)
    return [n.content for n, k in zip(page.nodes, relevant_mask(page, scores, 0.5, region_share=0.7, off=off)) if k]


def test_the_rule_is_optional_and_explained():
    assert "byline-lines" in OPTIONAL_RULES and "byline-lines" in REASONS


def test_byline_dateline_and_headline_leave_the_text_and_stay_in_the_fields():
    html = _html()
    page = serialize(html, url="https://coast.example/harbour")
    kept = _kept(page)
    for line in ("Harbour to be dredged", "By Jane van Doe, City desk", "Updated Dec 4, 2025"):
        assert line not in kept and line in _kept(page, off=("byline-lines",))
    assert BODY.split("</p>")[0][3:] in kept
    scores = np.full(len(page.nodes), 0.9, dtype=np.float32)
    reasons = {n.content: r for n, r in zip(page.nodes, explain(page, scores, 0.5, region_share=0.7).reasons)}
    assert reasons["By Jane van Doe, City desk"] == "byline-lines"
    # the item's fields read the same lines
    declared = metadata.read_declared(html, url=page.url, today=TODAY, dates=False)
    meta = metadata.describe(declared, page, page_type="article", today=TODAY)
    assert meta.author == ["Jane van Doe"]
    assert meta.date_published == "2025-12-04"
    assert meta.headline == "Harbour to be dredged"


def test_a_cue_alone_and_its_name_are_one_byline():
    page = serialize(_html(top="<div><span>Written by</span><a href='/jane'>Jane Roe</a></div>"))
    assert "Written by" not in _kept(page) and "Jane Roe" not in _kept(page)


@pytest.mark.parametrize("prose", [
    "By Jane Doe's count, the harbour lost forty boats.",   # opens like a byline, goes on as a sentence
    "By March 2026 the basin will be dredged.",             # "By" and a month, no name
    "The board met on March 3, 2025 to vote on it.",        # a short sentence near the <h1> with a day in it
])
def test_byline_like_prose_in_the_body_is_kept(prose):
    page = serialize(_html(top=f"<p>{prose}</p>"))
    assert prose in _kept(page)
    assert not any(byline_line_nodes(page)[1:])  # the headline alone


def test_only_the_first_byline_and_not_on_a_product_page():
    teasers = "<ul>" + "".join(f"<li><p>By John Roe</p><p>Another story number {i} about boats.</p></li>"
                               for i in range(3)) + "</ul>"
    page = serialize(_html(extra=teasers))
    lines = [n.content for n, b in zip(page.nodes, byline_line_nodes(page)) if b]
    assert lines == ["Harbour to be dredged", "By Jane van Doe, City desk", "Updated Dec 4, 2025"]
    product = _html(head='<script type="application/ld+json">{"@type": "Product", "name": "Dredger"}</script>')
    assert not any(byline_line_nodes(serialize(product)))


def test_the_shipped_model_leaves_the_byline_to_the_author_field():
    html = _html()
    page = serialize(html, url="https://coast.example/harbour", tree_reader=metadata.read_tree)
    [extraction] = extract(page)
    meta = metadata.page_metadata(html, page, extraction, classifier=default_classifier(), today=TODAY)
    assert "Jane van Doe" not in extraction.text and "dredge the eastern basin" in extraction.text
    assert meta.author == ["Jane van Doe"] and meta.date_published == "2025-12-04"
