"""What a page says it is: the schema.org types and the Open Graph type its markup declares.

Shops, news sites, blogs and forums mark their pages up for search engines (JSON-LD `"@type":
"Product"`, microdata `itemtype="https://schema.org/DiscussionForumPosting"`, `<meta property="og:type"
content="article">`). Which parts of a page are its main content depends on what kind of page it is
(customer reviews are content on a review article, not on the product page that shows them), and the
reTPS of a node cannot tell; the page's own declaration often can: on WCXB dev 94 of 119 product pages
declare a product kind, 607 of 793 articles an article, 73 of 113 forums a discussion (docs/evaluation.md).

Found by scanning the decoded text rather than in the tokenizer: the serializer skips script bodies,
and a type named in a broken JSON-LD block is still what the page says about itself. Each scan is a
str.find for a literal, then a regex matched where it was found: a regex searching the whole text
itself took 8x longer (0.28 against 0.04 ms on a WCXB page for `"@type"`); the three scans cost about
0.4 ms a page. Pure function, no Scrapy or model import.
"""
from __future__ import annotations

import re
from typing import Iterator, Tuple

from .tokenizer import parse_attributes

# at most this many distinct types are kept: a page that names more is hostile or a catalogue
MAX_TYPES = 64

_LD_TYPE = re.compile(r'"@type"\s*:\s*(\[[^\]]{0,400}\]|"[^"]{1,100}")')
_LD_NAME = re.compile(r'"(?:https?://schema\.org/)?([A-Za-z][A-Za-z0-9]{0,60})"')
_ITEMTYPE = re.compile(r'itemtype\s*=\s*["\']?\s*https?://schema\.org/([A-Za-z][A-Za-z0-9]{0,60})')


def declared_types(text: str) -> Tuple[str, ...]:
    """The types `text` declares, lower-case, in order of first appearance: schema.org type names
    ("product", "newsarticle") from JSON-LD and microdata, and the Open Graph type as "og:" + its
    value ("og:article", "og:product.group")."""
    seen: dict = {}
    for match in _matches(text, '"@type"', _LD_TYPE):
        for name in _LD_NAME.findall(match.group(1)):
            seen.setdefault(name.lower(), None)
        if len(seen) >= MAX_TYPES:
            return tuple(seen)[:MAX_TYPES]
    # lower-case only: browsers and React's server rendering write the attribute so; a scan for
    # "itemType" as well cost another 0.1 ms a page
    for match in _matches(text, "itemtype", _ITEMTYPE):
        seen.setdefault(match.group(1).lower(), None)
        if len(seen) >= MAX_TYPES:
            return tuple(seen)[:MAX_TYPES]
    og = _og_type(text)
    if og:
        seen.setdefault("og:" + og, None)
    return tuple(seen)[:MAX_TYPES]


def _matches(text: str, literal: str, pattern: "re.Pattern[str]") -> Iterator["re.Match[str]"]:
    """`pattern`'s matches at each place `literal` (its start) occurs in `text`."""
    at = text.find(literal)
    while at >= 0:
        match = pattern.match(text, at)
        if match:
            yield match
        at = text.find(literal, at + len(literal))


def _og_type(text: str) -> str:
    """The content of the first <meta property|name="og:type" content=...> (lower-case, stripped)."""
    at = text.find("og:type")
    while at >= 0:
        start = text.rfind("<", max(0, at - 500), at)
        end = text.find(">", at, at + 500)
        at = text.find("og:type", at + 7)
        if start < 0 or end < 0 or text[start + 1: start + 5].lower() != "meta":
            continue
        attrs = parse_attributes(text[start + 5: end])
        if "og:type" in (attrs.get("property", "").strip().lower(), attrs.get("name", "").strip().lower()):
            value = attrs.get("content", "").strip().lower()
            if value and len(value) <= 60:
                return value
    return ""


# The kinds of page the model is told about (features.py: one 0/1 feature each). Grouped because
# WCXB dev has too few pages of each single type to learn them apart; the groups are those a reader
# would make, not tuned to the data.
KINDS = {
    "product": frozenset({"product", "productgroup", "productmodel", "individualproduct", "someproducts",
                          "vehicle", "car", "og:product", "og:product.item"}),
    "article": frozenset({"article", "newsarticle", "blogposting", "techarticle", "scholarlyarticle",
                          "report", "analysisnewsarticle", "opinionnewsarticle", "reportagenewsarticle",
                          "reviewnewsarticle", "backgroundnewsarticle", "liveblogposting", "recipe",
                          "howto", "og:article"}),
    "discussion": frozenset({"discussionforumposting", "qapage", "socialmediaposting"}),
    "collection": frozenset({"itemlist", "collectionpage", "searchresultspage", "offercatalog",
                             "og:product.group"}),
}


def declared_kinds(types: Tuple[str, ...]) -> Tuple[bool, ...]:
    """For each of KINDS in order: whether `types` names one of its types."""
    names = set(types)
    return tuple(not names.isdisjoint(members) for members in KINDS.values())
