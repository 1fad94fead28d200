"""The serializer's fixed rules and limits, in one place: which characters are invisible, what hides an
element, which attributes give no keywords, HTML's implied end tags (for our tokenizer), the boilerplate
containers and ARIA landmarks, the sizes of the per-process caches and when a page is too deep for lexbor.

What a user may change is in tokens.SerializerConfig (tag sets, special tokens, limits of a page); these are
the serializer's own. Each table's comment says why it holds what it holds.
"""
from __future__ import annotations

import re

from ..tokens import VOID_TAGS

# Characters a reader never sees that pages put inside words and between them: the soft hyphen (`&shy;`, a
# line-break hint that German and Dutch sites set in long words), zero-width space, word joiner, the
# invisible math operators, zero-width no-break space (a BOM). In a node's text they cut "Ver&shy;waltung"
# into two words for everything that reads words, and users got them in their text. The zero-width
# (non-)joiner and the direction marks stay: they change the glyphs or order a reader sees (emoji
# sequences, Persian and Indic letters, right-to-left text).
INVISIBLE = re.compile("[\u00ad\u200b\u2060-\u2064\ufeff]")

# Inline styles that hide an element and its text (Node.hidden).
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.I)
# Attributes whose values are URLs or code: words in them ("wp-content") say nothing about the element.
_NO_KEYWORD_ATTRS = frozenset({"href", "src", "srcset", "action", "style", "data-src", "poster", "cite",
                               "background", "formaction", "xmlns", "content"})
_IMG_SRC_ATTRS = ("src", "data-src", "data-lazy-src", "data-original")
# Implied end tags (HTML's "optional end tags"), simplified: opening KEY closes an open element of
# the listed names if it is found before a scope boundary, looking at most _SCOPE_LOOKBACK levels down.
_CLOSES_P = frozenset(
    {"address", "article", "aside", "blockquote", "center", "details", "dialog", "dir", "div", "dl",
     "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header",
     "hgroup", "hr", "main", "menu", "nav", "ol", "p", "pre", "section", "summary", "table", "ul", "li",
     "dd", "dt", "listing", "plaintext", "xmp"}
)
_IMPLIED = {
    # as in HTML's tree construction, a <div> (or <p>) between two <li> does not stop the close
    "li": (frozenset({"li"}), frozenset({"ul", "ol", "menu", "table", "nav", "section", "body"})),
    "dt": (frozenset({"dt", "dd"}), frozenset({"dl", "table", "body"})),
    "dd": (frozenset({"dt", "dd"}), frozenset({"dl", "table", "body"})),
    "option": (frozenset({"option"}), frozenset({"select", "datalist", "optgroup", "body"})),
    "optgroup": (frozenset({"option", "optgroup"}), frozenset({"select", "body"})),
    "tr": (frozenset({"tr", "td", "th"}), frozenset({"table", "tbody", "thead", "tfoot", "body"})),
    "td": (frozenset({"td", "th"}), frozenset({"tr", "table", "body"})),
    "th": (frozenset({"td", "th"}), frozenset({"tr", "table", "body"})),
    "tbody": (frozenset({"tbody", "thead", "tfoot", "tr", "td", "th"}), frozenset({"table", "body"})),
    "thead": (frozenset({"tbody", "thead", "tfoot", "tr", "td", "th"}), frozenset({"table", "body"})),
    "tfoot": (frozenset({"tbody", "thead", "tfoot", "tr", "td", "th"}), frozenset({"table", "body"})),
}
_P_SCOPE = frozenset({"table", "td", "th", "button", "html", "body", "caption", "object", "applet", "marquee"})
_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
_HEAD_CONTENT = frozenset({"title", "meta", "link", "style", "script", "base", "noscript", "template", "head"})
# names for which _close_implied can close something (besides an open <head>)
_IMPLIES = _CLOSES_P | _HEADINGS | frozenset(_IMPLIED)
_SCOPE_LOOKBACK = 12
_MAX_MERGE_HEIGHT = 8  # inline subtrees deeper than this stay separate nodes (bounds text copying)
_NO_NODE = frozenset({"title", "head", "#document"})


# Containers whose text is never the page's main content (HTML semantics); `footer` only outside an
# <article>/<main>. See docs/method-choices.md for the measurements behind each.
_BOILERPLATE_TAGS = {"dialog": "dialog", "nav": "nav", "footer": "footer", "aside": "aside"}
# Custom elements (a name with a hyphen, as web components have) whose last word names a menu or
# navigation: `<pp-navigation>`, `<site-nav>`, `<mega-menu>` are what a <nav> is, in the page's own words.
_NAV_ELEMENT = re.compile(r"[a-z][a-z0-9-]*-(?:nav|navigation|navbar|menu|menubar)\Z")


# The ARIA landmark roles of the same containers, for pages that mark them on a <div>: on WCXB dev as
# served cross-validated word-F1 stayed 0.8588 (most such elements are <nav>, <footer> or <aside>
# already); with every HTML5 landmark written as <div> they won back 0.003 of the 0.009 lost
# (docs/evaluation.md, "Markup the model never saw").
_ARIA_BOILERPLATE = {"navigation": "nav", "contentinfo": "footer", "complementary": "aside"}
# the roles _open looks for: those above, and main and article, which are <main> and <article> for the
# footer exception
_ARIA_WORDS = ("navigation", "contentinfo", "complementary", "main", "article")
# WAI-ARIA 1.2's concrete roles (and 1.3's image, comment, suggestion): an element's role is the first
# token of its role attribute that names one, as browsers read it ("region contentinfo" is a region).
_ARIA_ROLES = frozenset("""
    alert alertdialog application article banner blockquote button caption cell checkbox code columnheader
    combobox comment complementary contentinfo definition deletion dialog directory document emphasis feed
    figure form generic grid gridcell group heading image img insertion link list listbox listitem log main
    mark marquee math menu menubar menuitem menuitemcheckbox menuitemradio meter navigation none note option
    paragraph presentation progressbar radio radiogroup region row rowgroup rowheader scrollbar search
    searchbox separator slider spinbutton status strong subscript suggestion superscript switch tab table
    tablist tabpanel term textbox time timer toolbar tooltip tree treegrid treeitem""".split())


# The per-process caches of what pages repeat (groups._SHARED: token-group tails and parsed attributes;
# images._IMAGE_URLS and _ORIGINS): entries for texts longer than _SHARED_MAX_CHARS are not kept, and a cache
# is emptied when it passes _SHARED_MAX_ENTRIES.
_SHARED_MAX_CHARS = 256
_SHARED_MAX_ENTRIES = 10_000


# lexbor's tree construction searches its stack of open elements for many tags, so its time grows with
# depth x tags (20,000 nested <div> 0.5 s, unclosed <b class=N> 2.9 s). Pages with few tags go to lexbor
# whatever their shape (worst case measured ~0.13 s at 5,000 tags); for the others a linear estimate of
# the depth decides, and a page that would nest deeper than browsers go (Chromium caps at 512) is read
# with our own tokenizer (build()). See docs/method-choices.md.
_LEXBOR_ANY_SHAPE_TAGS = 5000
_LEXBOR_MAX_DEPTH = 512
_CHECK_CHUNK = 1 << 20  # characters
# Start tags that never stay open below a sibling of their kind: void elements, those HTML closes when
# the next of their kind (or a block) opens, and the ones a document has once.
_FLAT_TAGS = VOID_TAGS | frozenset(
    {"p", "li", "dd", "dt", "option", "optgroup", "tr", "td", "th", "tbody", "thead", "tfoot", "colgroup",
     "caption", "rb", "rt", "rp", "rtc", "html", "head", "body", "image"})
