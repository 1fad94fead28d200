"""A linear-time HTML tokenizer: yields start tags, end tags and text, nothing else.

The serializer reads lexbor's HTML5 tree; this tokenizer is its fallback for the pages lexbor would
take too long on (nesting deeper than browsers go: lexbor's time grows with depth x tags) and for
pages an unclosed attribute quote leaves without text (docs/method-choices.md). It keeps any element
and attribute name (`<dhi-new-typeahead-input _ngcontent-vmk-c53="">`),
treats `<script>` and `<style>` as raw text as browsers do, and never backtracks:

* every pattern uses possessive quantifiers (Python >= 3.11), so a match attempt reads each
  character at most once;
* the only pattern that can fail after reading far is the quoted attribute value (an unclosed
  quote). After the first such failure the rest of the document is read with a quote-blind
  pattern, so at most one long failed scan happens per document;
* comments, raw-text bodies and bogus markup are found with str.find, which is linear.
"""
from __future__ import annotations

import re
from typing import Iterator, Tuple

START, END, TEXT = 0, 1, 2
Event = Tuple[int, str, str, bool]  # (kind, name or text, raw attributes, self-closing)

# `<name attrs>`: attrs are bare words, `=value`, `="..."`, `='...'` or stray quotes/equals signs.
_START_TAG = re.compile(
    r"""<([A-Za-z][^\s/>]*+)((?:[^>"'=/]++|=\s*+"[^"]*+"|=\s*+'[^']*+'|[="']|/(?!>))*+)(/?)>"""
)
_START_TAG_QUOTE_BLIND = re.compile(r"<([A-Za-z][^\s/>]*+)([^>]*?)(/?)>")
_END_TAG = re.compile(r"</([A-Za-z][^\s/>]*+)[^>]*+>")
# The two common cases in one match call (start tag: groups 1-3; end tag: group 4); anything else,
# including a start tag that fails, goes through the dispatch below, which decides as before.
# Group 1 is the text before the tag, if any: one match call instead of a find, a slice and a match.
_TAG = re.compile(r"([^<]++)?+(?:" + _START_TAG.pattern + "|" + _END_TAG.pattern + ")")
_TAG_QUOTE_BLIND = re.compile(r"([^<]++)?+(?:" + _START_TAG_QUOTE_BLIND.pattern + "|" + _END_TAG.pattern + ")")
_RAW_END_CACHE: dict = {}

# <noscript> is not here: a client without scripts (a crawler) parses its content as markup, and
# forums such as Discourse serve the whole thread in it.
RAW_TEXT = frozenset({"script", "style", "xmp", "iframe", "noembed", "noframes", "template",
                      "title", "textarea", "plaintext"})


def _raw_end(name: str) -> "re.Pattern[str]":
    pattern = _RAW_END_CACHE.get(name)
    if pattern is None:
        pattern = _RAW_END_CACHE[name] = re.compile(r"</" + re.escape(name) + r"(?=[\s/>])[^>]*+>?", re.I)
    return pattern


def tokenize(html: str, raw_text: frozenset = RAW_TEXT) -> Iterator[Event]:
    """Yield (START, name, attrs, self_closing), (END, name, "", False) and (TEXT, text, "", False).

    Names are lower-cased; text is raw (entities not decoded). The body of a raw-text element comes
    as one TEXT event right after its START, whatever markup it holds.
    """
    n = len(html)
    pos = 0
    find = html.find
    start_tag = _START_TAG
    tag = _TAG
    quote_aware = True
    while pos < n:
        m = tag.match(html, pos)
        if m is not None:  # the common case: text (or none), then a start or an end tag
            text, name, attrs, slash, end_name = m.groups()
            if text is not None:
                yield (TEXT, text, "", False)
            pos = m.end()
            if end_name is not None:
                yield (END, end_name.lower(), "", False)
                continue
            name = name.lower()
            closed = slash == "/"
            yield (START, name, attrs, closed)
            if name in raw_text and not closed:
                if name == "plaintext":
                    yield (TEXT, html[pos:], "", False)
                    return
                start = pos
                e = _raw_end(name).search(html, pos)
                body_end, pos = (e.start(), e.end()) if e else (n, n)
                if body_end > start:
                    yield (TEXT, html[start:body_end], "", False)
                yield (END, name, "", False)
            continue
        lt = find("<", pos)
        if lt < 0:
            yield (TEXT, html[pos:], "", False)
            return
        if lt > pos:
            yield (TEXT, html[pos:lt], "", False)
        nxt = html[lt + 1:lt + 2]
        if nxt.isalpha() and nxt.isascii():
            m = start_tag.match(html, lt)
            if m is None and quote_aware:
                # An unclosed quote ran to the end of the document: read the rest quote-blind.
                quote_aware = False
                start_tag = _START_TAG_QUOTE_BLIND
                tag = _TAG_QUOTE_BLIND
                m = start_tag.match(html, lt)
            if m is None:  # no '>' left at all: the rest is text, as browsers drop the tag at EOF
                yield (TEXT, html[lt:], "", False)
                return
            name = m.group(1).lower()
            closed = m.group(3) == "/"
            yield (START, name, m.group(2), closed)
            pos = m.end()
            if name in raw_text and not closed:
                if name == "plaintext":
                    yield (TEXT, html[pos:], "", False)
                    return
                e = _raw_end(name).search(html, pos)
                body_end, pos = (e.start(), e.end()) if e else (n, n)
                if body_end > m.end():
                    yield (TEXT, html[m.end():body_end], "", False)
                yield (END, name, "", False)
        elif nxt == "/":
            m = _END_TAG.match(html, lt)
            if m is not None:
                yield (END, m.group(1).lower(), "", False)
                pos = m.end()
            else:  # `</>`, `</ x>` or `</` at EOF: a bogus comment up to the next '>'
                gt = find(">", lt)
                pos = n if gt < 0 else gt + 1
        elif nxt == "!":
            if html.startswith("<!--", lt):
                if html.startswith("<!-->", lt):
                    pos = lt + 5
                    continue
                end = find("-->", lt + 4)
                pos = n if end < 0 else end + 3
            elif html.startswith("<![CDATA[", lt):
                # Browsers end this bogus comment at the first '>', leaking "]]>" and whatever
                # followed as text; XHTML served as HTML means the whole section, which we skip.
                # Without a "]]>" we do what browsers do (XenForo pages open CDATA and never close it).
                end = find("]]>", lt + 9)
                if end >= 0:
                    pos = end + 3
                else:
                    gt = find(">", lt)
                    pos = n if gt < 0 else gt + 1
            else:  # <!DOCTYPE ...> and other bogus comments
                gt = find(">", lt)
                pos = n if gt < 0 else gt + 1
        elif nxt == "?":  # <?xml ...?>: a bogus comment
            gt = find(">", lt)
            pos = n if gt < 0 else gt + 1
        else:  # a lone '<' is text
            yield (TEXT, "<", "", False)
            pos = lt + 1


# name, then optional =value; names keep any character browsers keep (`_ngcontent-vmk-c53`, `@click`)
_ATTR = re.compile(r"""([^\s"'>/=]++)(?:\s*+=\s*+(?:"([^"]*+)"|'([^']*+)'|([^\s>]*+)))?+""")


def parse_attributes(raw: str) -> dict:
    """Raw attribute text -> {lower-cased name: value}. The first of duplicate names wins, as in
    browsers. Values keep their entities (decoded by the caller where it matters)."""
    attrs: dict = {}
    if not raw or raw.isspace():
        return attrs
    for name, dq, sq, bare in _ATTR.findall(raw):
        name = name.lower()
        if name not in attrs:
            attrs[name] = dq or sq or bare
    return attrs
