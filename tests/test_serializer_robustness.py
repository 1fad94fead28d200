"""Malformed, hostile and non-HTML input: the serializer never raises and never goes quadratic.

Sizes here are large enough that a quadratic algorithm would take minutes, small enough that the
linear one takes well under a second; there are no timing assertions (see benchmarks/serializer.py).
"""
import codecs

import pytest

from edrew_scrapy.serializer import serialize
from edrew_scrapy.tokenizer import END, START, TEXT, parse_attributes, tokenize
from edrew_scrapy.tokens import SerializerConfig


def contents(html):
    return [n.content for n in serialize(html).nodes]


def test_deep_nesting_200k_keeps_the_text_and_a_short_path():
    n = 200_000
    page = serialize("<html><body>" + "<div>" * n + "deep text" + "</div>" * n + "<p>after</p></body></html>")
    deep, after = page.nodes
    assert deep.content == "deep text" and after.content == "after"
    assert deep.depth == n + 2
    assert len(deep.path) < 40  # document-order XPath beyond max_path_depth
    assert len(deep.tokens) == 20


def test_deep_nesting_path_is_a_valid_xpath():
    parsel = pytest.importorskip("parsel")
    html = "<div>" * 120 + "x" + "</div>" * 120
    n = serialize(html).nodes[0]
    assert n.path.startswith("(//div)[")
    # lxml cannot hold 120 levels? it can (limit 256): the path finds the same element
    assert parsel.Selector(html).xpath(n.path + "/text()").get() == "x"


# the parser's robustness, not the page budget (max_nodes, test_reliability_memory.py): no node limit
NO_NODE_LIMIT = SerializerConfig(max_nodes=0)


def test_many_unclosed_tags():
    page = serialize("<div>x" * 50_000, config=NO_NODE_LIMIT)
    assert len(page.nodes) == 50_000


def test_many_unclosed_inline_tags_do_not_copy_text_quadratically():
    page = serialize("<p>" + "<span>word " * 50_000)
    assert sum(len(n.content) for n in page.nodes) < 50_000 * 10


def test_stray_end_tags_are_ignored():
    assert contents("</div></span><p>a</p></li></td></table><p>b</p>") == ["a", "b"]
    page = serialize("<div>" * 1000 + "</span>" * 50_000 + "x")
    assert [n.content for n in page.nodes] == ["x"]


def test_unterminated_comment_swallows_the_rest_like_browsers():
    assert contents("<p>a</p><!-- never closed <p>b</p>") == ["a"]
    assert contents("<p>a</p><!-- c --><p>b</p><!--><p>c</p>") == ["a", "b", "c"]


def test_unterminated_cdata_ends_at_the_next_gt_like_browsers():
    # the bogus comment "<![CDATA[ x >" ends at its first ">"; the rest of the page is kept
    assert contents("<p>a<![CDATA[ x ></p><p>after</p>") == ["a", "after"]


def test_cdata_doctype_and_processing_instructions_are_not_text():
    assert contents('<!DOCTYPE html><?xml version="1.0"?><p>a<![CDATA[ hidden ]]>b</p>') == ["ab"]


def test_attribute_with_gt_inside_quotes():
    page = serialize('<div title="a > b" data-x=\'<p>not a tag</p>\'>text</div>')
    assert [n.content for n in page.nodes] == ["text"]
    assert page.nodes[0].attrs["title"] == "a > b"


def test_unterminated_attribute_quote_does_not_hang_or_lose_everything():
    html = '<div class="oops>first</div>' + "<p>para</p>" * 20_000
    page = serialize(html, config=NO_NODE_LIMIT)
    assert len(page.nodes) >= 19_000


def test_many_unterminated_quotes_stay_linear():
    serialize('<a b="' * 30_000 + "<p>x</p>")
    serialize("<a b='" * 30_000)
    serialize('<a "' * 30_000)


def test_many_lone_lt_and_tags_without_gt():
    assert contents("a < b <3 <<<< c") == ["a < b <3 <<<< c"]
    serialize("<a " * 100_000)
    serialize("</a " * 100_000)
    serialize("<!x" * 100_000)
    serialize("<!--" * 100_000)


def test_megabyte_attribute():
    value = "x" * 2_000_000
    page = serialize(f'<div data-blob="{value}" class="c">text</div>')
    assert page.nodes[0].content == "text"
    assert "<#CLSS>" in page.nodes[0].tokens


def test_script_and_style_holding_html_strings():
    html = ("<style>.a:after{content:'</div><p>no</p>'}</style><p>yes</p>"
            "<script>document.write('<p>no</p><script>inner<\\/script>')</script><p>also</p>")
    assert contents(html) == ["yes", "also"]


@pytest.mark.parametrize("data,reason", [
    (b"", "empty"), (b"   \n\t ", "empty"), ("", "empty"),
    (bytes(range(256)) * 40, "binary"), (b"\x89PNG\r\n\x1a\n" + bytes(5000), "binary"),
    ("<html><head><title>t</title></head><body></body></html>", "no-text"),
])
def test_non_html_gives_an_empty_page_with_a_reason(data, reason):
    page = serialize(data)
    assert page.nodes == [] and page.skipped == reason


def test_plain_text_page_is_one_node():
    page = serialize("Just some words, no markup at all.")
    assert [n.content for n in page.nodes] == ["Just some words, no markup at all."]
    assert page.skipped is None


def test_wrong_type_is_a_type_error():
    with pytest.raises(TypeError):
        serialize(42)


# --- decoding ----------------------------------------------------------------------------------

def test_utf16_with_bom():
    data = codecs.BOM_UTF16_LE + "<p>olá mundo</p>".encode("utf-16-le")
    page = serialize(data)
    assert page.encoding.startswith("utf-16") and page.nodes[0].content == "olá mundo"


def test_utf8_bom_wins_over_a_wrong_header():
    data = codecs.BOM_UTF8 + "<p>café</p>".encode("utf-8")
    assert serialize(data, encoding="text/html; charset=iso-8859-1").nodes[0].content == "café"


def test_header_charset_then_meta_then_utf8_then_cp1252():
    latin = "<p>café</p>".encode("cp1252")
    assert serialize(latin, encoding="text/html; charset=windows-1252").nodes[0].content == "café"
    assert serialize(b'<meta charset="latin1">' + latin).nodes[0].content == "café"
    assert serialize("<p>café</p>".encode("utf-8")).nodes[0].content == "café"
    assert serialize(latin).nodes[0].content == "café"  # not UTF-8: windows-1252 fallback


def test_unknown_or_wrong_charset_never_raises():
    utf8 = "<p>naïve</p>".encode("utf-8")
    assert serialize(utf8, encoding="text/html; charset=x-no-such-charset").nodes[0].content == "naïve"
    assert serialize(b'<meta charset="bogus-42">' + utf8).nodes[0].content == "naïve"
    # declared UTF-16 without a BOM on ASCII bytes is a mislabel
    assert serialize(utf8, encoding="utf-16").nodes[0].content == "naïve"
    # a mostly UTF-8 page with one broken byte stays UTF-8
    page = serialize("<p>ção</p>".encode() + b"\xff" + ("<p>x</p>" * 100).encode())
    assert page.encoding == "utf-8" and "ção" in [n.content for n in page.nodes]


# --- tokenizer -----------------------------------------------------------------------------------

def test_tokenizer_events():
    events = list(tokenize('<p class="a">x<br/>y</p><script>if (a<b) {}</script>'))
    assert events == [
        (START, "p", ' class="a"', False), (TEXT, "x", "", False), (START, "br", "", True),
        (TEXT, "y", "", False), (END, "p", "", False), (START, "script", "", False),
        (TEXT, "if (a<b) {}", "", False), (END, "script", "", False),
    ]


def test_parse_attributes():
    attrs = parse_attributes(' a=1 B="two words" c=\'3\' d e = "5" a="dup" @click="go()" _ng-c1=""')
    assert attrs == {"a": "1", "b": "two words", "c": "3", "d": "", "e": "5", "@click": "go()", "_ng-c1": ""}


def test_a_malformed_image_or_base_url_costs_the_page_nothing():
    # urljoin raises ValueError on a malformed host: that once made serialize() raise, and the whole
    # page was lost (an error in a crawl, no item). Now an image keeps its src as written, and a base
    # href that is no URL is ignored, as browsers do.
    page = serialize(b'<html><body><p>Some text here <img src="http://[x/a.png"></p>'
                     b'<p>More text <img src="b.png"></p></body></html>', url="http://e.com/d/")
    assert page.skipped is None and [n.content for n in page.nodes] == ["Some text here", "More text"]
    assert page.images == ["http://[x/a.png", "http://e.com/d/b.png"]
    page = serialize(b'<html><head><base href="http://[bad"></head><body><p>Some text <img src="b.png">'
                     b'</p></body></html>', url="http://e.com/d/")
    assert page.images == ["http://e.com/d/b.png"] and page.nodes[0].content == "Some text"
