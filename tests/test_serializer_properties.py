"""Property-based tests: the serializer never raises and only reports text that is in the page."""
import html as html_lib

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from edrew_scrapy.serializer import INVISIBLE, serialize

TAGS = ["div", "p", "span", "a", "b", "li", "ul", "script", "style", "br", "img", "td", "tr", "table",
        "x-custom", "title", "textarea", "h1", "noscript", "template"]
FRAGMENTS = st.one_of(
    st.sampled_from(TAGS).map(lambda t: f"<{t}>"),
    st.sampled_from(TAGS).map(lambda t: f"</{t}>"),
    st.sampled_from(['<div class="a b">', '<p id="x" style="display:none">', '<a href="/y">',
                     "<!--", "-->", "<![CDATA[", "]]>", '"', "'", "<", ">", "&amp;", "&#x41;", "&bogus;",
                     "<br/>", '<img src="i.png">', "<!DOCTYPE html>", "=", "<?x?>", "\x00", "\r\n"]),
    st.text(max_size=12),
)
DOCUMENTS = st.lists(FRAGMENTS, max_size=60).map("".join)
# Fragments joined by spaces, so that words never join across tags: browsers render "a</div>b" as
# "ab", and so do we, which a word-by-word check could not follow.
SPACED_DOCUMENTS = st.lists(FRAGMENTS, max_size=60).map(" ".join)
SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _normal(text: str) -> str:
    # the text as a reader sees it: the serializer leaves out soft hyphens, zero-width spaces and the like
    return " ".join(INVISIBLE.sub("", html_lib.unescape(text.replace("\x00", ""))).split())


@SETTINGS
@given(DOCUMENTS)
def test_never_raises_on_markup_soup(doc):
    page = serialize(doc)
    for n in page.nodes:
        assert n.content and n.content == " ".join(n.content.split())


@SETTINGS
@given(st.binary(max_size=2000))
def test_never_raises_on_bytes(data):
    serialize(data)


@SETTINGS
@given(st.text(max_size=2000))
def test_never_raises_on_text(text):
    serialize(text)


@SETTINGS
@given(st.lists(st.text(alphabet="abcdefgh ", min_size=1, max_size=10), min_size=1, max_size=20),
       st.lists(st.sampled_from(["div", "p", "span", "b", "li", "section"]), min_size=1, max_size=20))
def test_node_words_come_from_the_page_text(words, tags):
    doc = "".join(f"<{t}> {w} " for t, w in zip(tags * 20, words))
    page_words = set(" ".join(words).split())
    for n in serialize(doc).nodes:
        assert set(n.content.split()) <= page_words


@SETTINGS
@given(SPACED_DOCUMENTS)
def test_contents_are_substrings_of_the_decoded_text(doc):
    # every node is text of the page: each of its words occurs in the decoded, whitespace-normalised
    # document (merging moves text between nodes, it never invents any)
    normal = _normal(doc)
    for n in serialize(doc).nodes:
        for word in n.content.split():
            assert word in normal
