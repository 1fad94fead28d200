"""The EDREW method's constants: special tokens, keyword table, tag sets, Fibonacci buckets.

Defaults are the dissertation's values (Nunes 2024, Table 3 and Algorithms 3-12); every one of them
can be overridden through :class:`SerializerConfig`. Where the thesis is ambiguous the choice made
here is written next to the constant and in docs/method-choices.md.
"""
from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from typing import Mapping, Tuple

SEP = "<#SEP>"
CLSS = "<#CLSS>"
PROP = "<#PROP>"
ID = "<#ID>"
CNT = "<#CNT>"
MONEY = "<#>"
HIDE = "<#HIDE>"
WT_PREFIX = "#WT"


_BUCKET = re.compile(r"\|\d+")


def retps_shape(retps: str) -> str:
    """The reTPS without its position buckets ("div|34" -> "div"): what the nodes of one repeated template
    share, and what two renderings of one text in different layouts do not."""
    return _BUCKET.sub("", retps)


# Table 3's keyword tokens. The thesis says "14 tokens" but lists 13 and names `price` among the
# keywords without a token: `<#PRICE>` is that 14th token (our choice).
DEFAULT_KEYWORD_TOKENS: Mapping[str, str] = {
    "price": "<#PRICE>",
    "value": "<#VAL>",
    "description": "<#DESC>",
    "name": "<#NAME>",
    "date": "<#DATE>",
    "content": "<#CONT>",
    "detail": "<#DET>",  # matches "detail" and "details"
}

# Skipped with everything inside them: script and style (the thesis), and `template`, inert markup a
# browser never shows (our addition). The thesis also skips noscript; we read its content, because a
# crawler is a client without scripts and some sites (Discourse forums) serve all their text there:
# measured on WCXB, skipping it left 19 forum pages without a single node.
SKIP_WITH_CONTENT = frozenset({"script", "style", "template"})
# The thesis's SKIP_TAGS (less noscript, see above); link, meta, base, input and area are void, so
# skipping the tag is enough. The noscript element itself is transparent: its children are nodes.
SKIP_TAGS = frozenset({"link", "meta", "noscript", "base", "style", "input", "area"})
WRAPPER_TAGS = frozenset({"span", "a", "b", "strong", "i", "em", "mark", "small", "del", "ins", "sub", "sup"})
FORMATTER_TAGS = frozenset({"b", "strong", "i", "em", "mark", "small", "del", "ins", "sub", "sup"})
REPEATING_TAG_STRUCTURE = frozenset(
    {"li", "ol", "ul", "option", "p", "dd", "dl", "dt", "br", "th", "tr", "td", "menuitem"}
)
# Inline tags merged into a parent that has text of its own (mixed content), so that
# "see <a>this link</a> here" stays one sentence. Beyond the thesis, which merges formatters only.
INLINE_TAGS = frozenset(
    WRAPPER_TAGS
    | {"abbr", "bdi", "bdo", "cite", "code", "data", "dfn", "font", "kbd", "q", "s", "samp", "time",
       "tt", "u", "var", "big", "label", "nobr", "wbr"}
)
# Blocks that hold a sentence: when all their children are inline and two or more carry text, the children
# are one sentence ("<p><span>The words </span><em>yellow</em><span> and</span>…</p>", as editors such as
# Substack's write paragraphs) and merge into the block, as they do when it has text of its own. Not <li> or
# <div>: a list item's linked title and its excerpt (<strong><a>…</a></strong><span>…</span>) stay apart.
SENTENCE_TAGS = frozenset({"p", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "figcaption"})
VOID_TAGS = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source",
     "track", "wbr", "keygen", "frame", "basefont", "bgsound", "command"}
)
# Raw-text elements: their content is text up to the matching end tag, never markup.

FIBONACCI_BUCKETS: Tuple[int, ...] = (1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 100)
DEFAULT_RETPS_MAX_TOKENS = 20
DEFAULT_CURRENCY_SYMBOLS: Tuple[str, ...] = ("$", "€", "£", "¥", "₹", "R$")


def fibonacci_bucket(position: int, count_tags: int, buckets: Tuple[int, ...] = FIBONACCI_BUCKETS) -> int:
    """Algorithm 12: the largest bucket value <= 100*position/count_tags (at least the first bucket)."""
    if count_tags <= 0:
        return buckets[0]
    pct = 100.0 * position / count_tags
    i = bisect.bisect_right(buckets, pct) - 1
    return buckets[max(i, 0)]


@dataclass(frozen=True)
class SerializerConfig:
    """Every constant of the method, with the thesis's values as defaults."""

    retps_max_tokens: int = DEFAULT_RETPS_MAX_TOKENS
    keyword_tokens: Mapping[str, str] = field(default_factory=lambda: dict(DEFAULT_KEYWORD_TOKENS))
    skip_tags: frozenset = SKIP_TAGS
    skip_with_content: frozenset = SKIP_WITH_CONTENT
    wrapper_tags: frozenset = WRAPPER_TAGS
    formatter_tags: frozenset = FORMATTER_TAGS
    repeating_tags: frozenset = REPEATING_TAG_STRUCTURE
    inline_tags: frozenset = INLINE_TAGS
    sentence_tags: frozenset = SENTENCE_TAGS
    merge_inline_in_mixed_content: bool = True
    fibonacci_buckets: Tuple[int, ...] = FIBONACCI_BUCKETS
    currency_symbols: Tuple[str, ...] = DEFAULT_CURRENCY_SYMBOLS
    max_classes: int = 4          # class names kept per element (whole names, as the thesis says)
    max_token_chars: int = 40     # a class name longer than this is cut: keeps the vocabulary bounded
    max_path_depth: int = 100     # deeper elements get a document-order XPath, keeping paths O(1)
    max_image_bubble: int = 3     # an <img> attaches to a text node at most this many levels up
    # Past this many elements (real pages have a few thousand) the rest of the page is read as
    # text only, bounding the time a hostile page costs; Page.truncated says so.
    max_elements: int = 300_000
    # A page with more text (characters, markup and scripts not counted) or more nodes than this is
    # skipped ("too-much-text", "too-many-nodes"): its nodes, their scoring and its output would take
    # memory in proportion. Real pages stay far below both (docs/reliability.md). 0: no limit.
    max_text_chars: int = 2_000_000
    max_nodes: int = 20_000


DEFAULT_CONFIG = SerializerConfig()
