"""The decision rules after scoring: which of a page's scored nodes are its relevant content.

The model gives each node a probability; these rules turn the probabilities into the kept nodes: the
threshold (capped per page at a share of the page's best score), boilerplate markup, form controls,
text for screen readers only, customer reviews on product pages, reader comments on pages whose content
they are not (given apart: reader_comment_nodes), share, print and gallery controls and share bars' headings,
boxes of related posts, newsletter sign-up boxes, photo credits and copyright lines, consent notices, a paywall's
pitch, author boxes, photo captions (not on a photo story), an article's headline, byline and dateline
lines (the item's metadata holds them), the page's main region (never one paragraph, with the
standfirst beside it) and text repeated in another layout. extract.py applies them (`relevant_mask`);
training applies the same ones to choose a model's threshold. Evidence for each rule: docs/method-choices.md
and docs/evaluation.md.
Pure: no Scrapy, no torch.
"""
from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Collection, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .declared import declared_kinds
from .metadata import byline_lines
from .page import Page
from .tokens import SEP, retps_shape
from .words import count_words

__all__ = ["ARTICLE_WORDS", "AUTHOR_BOX_WORDS", "BYLINE_KINDS", "CAPTION_WORDS", "CHROME_WORDS", "COMMENT_FORM_WORDS",
           "COMMENT_WORDS", "CONSENT_WORDS", "CREDIT_WORDS", "FALLBACK_SHARE", "FORM_CONTROL_TAGS", "KEPT",
           "LEAD_WORDS", "LIKE_WORDS", "MAIN_REGION_SHARE", "OPTIONAL_RULES", "PAGE_BEST_SHARE", "PAYWALL_WORDS",
           "REASONS", "RELATED_WORDS", "SCREEN_READER_CLASSES", "SIGNUP_WORDS", "STANDFIRST_WORDS", "TEASER_ITEMS",
           "Decision", "byline_line_nodes", "comments_are_content", "explain", "for_screen_readers_only",
           "headline_node", "in_author_box", "in_caption", "in_comment_form", "in_comments", "in_consent_notice",
           "in_credit_line", "in_customer_reviews", "in_form_control", "in_like_button", "in_page_chrome",
           "in_paywall_prompt", "in_related_box", "in_signup_box", "is_product_page", "is_relevant", "is_share_heading",
           "layout_duplicates", "main_region", "reader_comment_nodes", "relevant_mask", "settled", "standfirst_nodes"]


def is_relevant(node, score: float, threshold: float) -> bool:
    """The decision for one node: its score reaches the threshold and it is not in boilerplate markup.

    Node.boilerplate marks text inside dialog boxes, <nav>, <aside> and page-level <footer> (or their ARIA
    roles): the reTPS, cut at 20 tokens, rarely shows the model these ancestors. Evidence:
    docs/method-choices.md, "Decision rules after scoring".
    """
    return score >= threshold and not node.boilerplate


# The share of a page's kept words that its main region must hold; why 0.7: docs/method-choices.md,
# "Decision rules after scoring".
MAIN_REGION_SHARE = 0.7


def main_region(nodes: Sequence, keep: Sequence[bool], share: float) -> Optional[str]:
    """The path of the deepest element whose subtree holds at least `share` of the kept words
    (words.count_words: a Chinese or Japanese paragraph counts as many words as it holds, not one).

    With share > 0.5 the elements that qualify lie on one chain from the root, so the deepest is
    unique. Nodes whose path has the document-order form of very deep elements ("(//div)[7]/...")
    have no known ancestors and are left out of the count. None when nothing is kept.
    """
    words: Dict[str, int] = defaultdict(int)
    total = 0
    for node, kept in zip(nodes, keep):
        if kept and node.path.startswith("/"):
            n = count_words(node.content)
            words[node.path] += n
            total += n
    if total == 0:
        return None
    # Each element's words go to its parent once, deepest elements first, so an ancestor shared by many
    # nodes is visited once rather than once per node below it.
    by_depth: Dict[int, List[str]] = defaultdict(list)
    for path in words:
        by_depth[path.count("/")].append(path)
    need = share * total
    deepest = None
    for depth in range(max(by_depth), 0, -1):
        for path in by_depth.get(depth, ()):
            if deepest is None and words[path] >= need:
                deepest = path
            parent = path[:path.rfind("/")]
            if parent:
                if parent not in words:
                    by_depth[depth - 1].append(parent)
                words[parent] += words[path]
    return deepest


def is_product_page(page: Page) -> bool:
    """The page declares itself a product (schema.org / Open Graph, declared.py) and not an article: a
    review article names the product it reviews in its markup too."""
    product, article, _discussion, _collection = declared_kinds(page.declared)
    return product and not article


def in_customer_reviews(node) -> bool:
    """A class (or custom tag) on the node's reTPS names reviews ("reviews", "spr-review-content"; not
    "preview"). The reTPS holds the node's nearest ancestors only (about 20 tokens), so a class on a
    page-wide wrapper far above rarely counts. (Classes and tag names are lower-case in the reTPS.)"""
    return "review" in node.retps and any("review" in t and "preview" not in t for t in node.tokens)


# Words that name a reader-comment section in a class, id or custom tag name (WordPress "comment-list",
# "comment-body" and its #respond form, Disqus, "user-comments"); "commentary" (an opinion column) and
# "no-comments" are not sections.
COMMENT_WORDS = ("comment", "disqus", "respond")
_COMMENT_TOKEN = re.compile(r"comment(?!ary)|disqus|^respond$|^replies$")
_NOT_COMMENT = re.compile(r"no-?comments?|comments?-?(?:count|link|number|num)|commentary")


def _comment_token(token: str) -> bool:
    return bool(_COMMENT_TOKEN.search(token)) and not _NOT_COMMENT.search(token)


def in_comments(node) -> bool:
    """The node sits in a reader-comment section: a class or custom tag on its reTPS (the nearest ancestors,
    about 20 tokens) or its own class or id names one (COMMENT_WORDS). Classes are lower-case in the reTPS."""
    return _retps_in_comments(node.retps) or _own_in_comments(_own_words(node))


def _retps_in_comments(retps: str) -> bool:
    """in_comments' test of the reTPS."""
    return (any(w in retps for w in COMMENT_WORDS)
            and any(_comment_token(t.split("|", 1)[0]) for t in retps.split(SEP)))


def _own_in_comments(own: str) -> bool:
    """in_comments' test of the node's own id and class (_own_words)."""
    return any(w in own for w in COMMENT_WORDS) and any(_comment_token(t) for t in own.split())


# An article's own text before its reader comments: this many kept words outside the comment section, ahead
# of the thread's first comment, make the page an article with a thread, however long the thread. A link
# aggregator's or a forum's thread opens with a title, a link and a line before the posts its markup calls
# comments; a blog post of one or two paragraphs (a photo, a quote, a workout) already says more, and a forum
# whose opening post stands apart from the replies' markup has that post for its text, not the replies.
ARTICLE_WORDS = 50
# Comment-marked nodes this short do not start the thread: a "23" comment-count link in a byline, a
# "Comments" feed icon, a "57 Comments" heading or a commenter's name.
_THREAD_START_WORDS = 5


def comments_are_content(page: Page, nodes: Sequence, keep: Sequence[bool], comments: Sequence[bool]) -> bool:
    """Whether the page's comment-marked nodes are its content: the page declares a forum post or Q&A page
    (declared.py), or they hold at least half of its kept words (a forum thread or a link aggregator whose
    markup calls each post a comment, whatever type it declares: such pages often say "article") and fewer
    than ARTICLE_WORDS kept words come before them (a blog post whose thread outgrew it is still an article)."""
    if declared_kinds(page.declared)[2]:  # discussion
        return True
    return _word_share(nodes, keep, comments) >= 0.5 and _words_before(nodes, keep, comments) < ARTICLE_WORDS


def _words_before(nodes: Sequence, keep: Sequence[bool], comments: Sequence[bool]) -> int:
    """The kept words outside `comments` that come before the thread's first comment (the first kept comment
    node of at least _THREAD_START_WORDS words), in document order."""
    words = 0
    for node, kept, c in zip(nodes, keep, comments):
        if not kept:
            continue
        n = count_words(node.content)
        if not c:
            words += n
        elif n >= _THREAD_START_WORDS:
            break
    return words


_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})


# How far up the chrome rule looks: the node's element and its two nearest ancestors. A class on a whole
# post's wrapper further up ("social-article") says nothing about one button.
_NEAR_ELEMENTS = 3


def _near_classes(node) -> List[str]:
    """The node's own id and class words and the class tokens of its reTPS up to _NEAR_ELEMENTS elements (the
    reTPS lists each element's classes, nearest first, then its "tag|bucket"), lower-case."""
    return _own_words(node).split() + _retps_classes(node.retps)


def _has_own(node) -> bool:
    """The node has an id or a class of its own (_own_words is not blank)."""
    return bool(node.attrs) and bool(node.attrs.get("id") or node.attrs.get("class"))


def _own_words(node) -> str:
    """The node's own id and class, lower-case, space-separated."""
    attrs = node.attrs or {}
    return f"{attrs.get('id') or ''} {attrs.get('class') or ''}".lower()


def _retps_classes(retps: str) -> List[str]:
    """_near_classes' words from the reTPS: its class tokens up to _NEAR_ELEMENTS elements."""
    words = []
    elements = 0
    for token in (retps.split(SEP) if retps else ()):
        if "|" in token:
            elements += 1
            if elements >= _NEAR_ELEMENTS:
                break
        elif not token.startswith("<#"):
            words.append(token)
    return words


# Class words of the chrome around an article that is not its text: share and print bars ("share-bar",
# "social", AddThis, Shariff, "article-tools", "actionbar") and a photo gallery's controls ("gallery",
# "slideshow", "lightbox", PhotoSwipe's "pswp", "carousel": "Image 1 of 4", "Close", "Next").
_CHROME_TOKEN = re.compile(r"(?:^|[-_])(?:share|shares|sharing|sharebar|social|socials|addthis|sharethis|shariff|"
                           r"print|tools|toolbar|actionbar|gallery|slideshow|lightbox|pswp|carousel|"
                           r"slider|swiper)(?:[-_]|$)")
_NOT_CHROME = re.compile(r"share-?price")  # a stock's price on a finance page
# Chrome is a button or a counter: a caption of five words or more under a gallery class is left to the model.
CHROME_WORDS = 4


def in_page_chrome(node) -> bool:
    """The node is a short text (at most CHROME_WORDS words, not a heading) in share, print or photo-gallery
    markup (_CHROME_TOKEN on a class of its own or of its two nearest ancestors)."""
    if node.tag in _HEADINGS or count_words(node.content) > CHROME_WORDS:
        return False
    return any(_chrome_word(t) for t in _near_classes(node))


def _chrome_word(word: str) -> bool:
    """A class word of share, print or gallery chrome (not a share price)."""
    return bool(_CHROME_TOKEN.search(word)) and not _NOT_CHROME.search(word)


# Class words of the boxes that point away from an article: related, recommended and recent posts (WordPress's
# Jetpack "jp-relatedposts", YARPP's "yarpp-related", "related-coverage", "widget_recent_entries").
_RELATED_TOKEN = re.compile(r"(?:^|[-_])(?:related|relatedposts|yarpp|recommended|recommendations|recent|"
                            r"more-stories|morestories|also-read)(?:[-_]|$)")
# A related box's heading or a teaser's linked title is short; a text longer than this is left to the model.
RELATED_WORDS = 12


def in_related_box(node) -> bool:
    """The node is a short text (at most RELATED_WORDS words) in a box of related, recommended or recent posts
    (_RELATED_TOKEN on a class of its own or of its two nearest ancestors): the box's heading ("Ähnliche
    Beiträge", "Related Coverage") and its teasers' titles."""
    return _short_in_box(node, _RELATED_TOKEN, RELATED_WORDS)


def _short_in_box(node, token: "re.Pattern", most_words: int) -> bool:
    """The node has at most `most_words` words and `token` matches a class of its own or of its two nearest
    ancestors."""
    if count_words(node.content) > most_words:
        return False
    return any(token.search(t) for t in _near_classes(node))


# Class words of a reader-comment reply form (WordPress's "comment-respond" / "comment-reply-title" / "comment-form",
# the "respond" anchor): its heading ("Leave a Comment", "Kommentieren") and its notes ("Your email address will not
# be published") are no one's text, even on a page whose comments are its content.
_COMMENT_FORM_TOKEN = re.compile(r"comment-?respond|comment-?form|reply-?title|^respond$")
# A reply form's heading and notes are short; a longer text under such a class is left to the other rules.
COMMENT_FORM_WORDS = 30


def in_comment_form(node) -> bool:
    """The node is a text of at most COMMENT_FORM_WORDS words in a comment reply form (_COMMENT_FORM_TOKEN on a
    class of its own or of its two nearest ancestors)."""
    return _short_in_box(node, _COMMENT_FORM_TOKEN, COMMENT_FORM_WORDS)


# Class words of a like button or a likes counter (Jetpack's "likes-text" / "wpl-likebox", a "like-button"):
# "%d Bloggern gefällt das:", "Like this:", "12 likes".
_LIKE_TOKEN = re.compile(r"(?:^|[-_])(?:likes?|likebox|like-?button|wpl-likebox)(?:[-_]|$)")
# A like line is a few words; a longer text under such a class is left to the model.
LIKE_WORDS = 6


def in_like_button(node) -> bool:
    """The node is a text of at most LIKE_WORDS words in a like button or likes counter (_LIKE_TOKEN on a class of
    its own or of its two nearest ancestors)."""
    return _short_in_box(node, _LIKE_TOKEN, LIKE_WORDS)


# Class words of a newsletter or subscription sign-up box ("newsletter-box", WordPress.com's "blog-subscribe",
# "optin-form"): its pitch, its consent line and its messages are not the article.
_SIGNUP_TOKEN = re.compile(r"(?:^|[-_])(?:newsletter|newsletters|newsletterbox|subscribe|subscription|signup|sign-up|"
                           r"optin|opt-in)(?:[-_]|$)")
# A sign-up box says little; a longer text under such a class (a newsletter's own issue) is left to the model.
SIGNUP_WORDS = 30


def in_signup_box(node) -> bool:
    """The node is a text of at most SIGNUP_WORDS words in a newsletter or subscription sign-up box (_SIGNUP_TOKEN
    on a class of its own or of its two nearest ancestors)."""
    return _short_in_box(node, _SIGNUP_TOKEN, SIGNUP_WORDS)


# Class words of a photo's credit line and of copyright lines ("image-credit", "bi-content-image-copyright",
# "media-caption__source", "Bildquelle"): an agency's or photographer's name, never the article's words.
_CREDIT_TOKEN = re.compile(r"(?:^|[-_])(?:copyright|copyrights|credit|credits|captioncredit|photocredit|imagecredit|"
                           r"fotocredit|bildquelle|bildnachweis|(?:picture|image|photo|foto|bild|img|caption)[-_]*"
                           r"(?:source|quelle))(?:[-_]|$)")
# A credit line names a few people and agencies; a longer text under such a class is left to the model.
CREDIT_WORDS = 20


def in_credit_line(node) -> bool:
    """The node is a text of at most CREDIT_WORDS words in a photo credit or copyright line (_CREDIT_TOKEN on a
    class of its own or of its two nearest ancestors): "Foto: dpa", "© Frankfurter Allgemeine Zeitung GmbH"."""
    return _short_in_box(node, _CREDIT_TOKEN, CREDIT_WORDS)


# Class words of a consent notice or of the placeholder that stands for an embed until the reader agrees
# ("oembed-placeholder", "sourcepoint__social-placeholder", Borlabs' "_brlbs-content-blocker", "cookie-notice").
_CONSENT_TOKEN = re.compile(r"(?:^|[-_])(?:consent|gdpr|cookie-?(?:banner|notice|consent|bar|policy|law|message|"
                            r"popup|hint)|content-?blocker|_?brlbs|embed-?privacy|two-?click|(?:oembed|embed|social|"
                            r"external|iframe|privacy)-?placeholder)(?:[-_]|$)")
# A consent text explains what is sent where, often at length; an article's text is not under these classes.
CONSENT_WORDS = 120


def in_consent_notice(node) -> bool:
    """The node is a text of at most CONSENT_WORDS words in a consent notice or an embed's consent placeholder
    (_CONSENT_TOKEN on a class of its own or of its two nearest ancestors)."""
    return _short_in_box(node, _CONSENT_TOKEN, CONSENT_WORDS)


# Class words of a paywall's or a registration wall's own parts ("ia-paywall__checkout", "tagespresse-paywall-footer",
# "registration-banner"): the pitch, the price and the log-in link. A class "paywall" alone is not here: sites put
# it on the article's body that the wall covers.
_PAYWALL_TOKEN = re.compile(r"(?:paywall|regwall|premium|subscriber|registration|register)[-_]+(?:header|footer|title|"
                            r"headline|description|checkout|form|button|login|cta|offer|box|banner|promo|message|"
                            r"prompt|modal|overlay|benefits?)")
# A wall's pitch is short; a longer text is left to the model.
PAYWALL_WORDS = 40


def in_paywall_prompt(node) -> bool:
    """The node is a text of at most PAYWALL_WORDS words in a paywall's or registration wall's own parts
    (_PAYWALL_TOKEN on a class of its own or of its two nearest ancestors)."""
    return _short_in_box(node, _PAYWALL_TOKEN, PAYWALL_WORDS)


# Class words of an author box under or beside an article ("saboxplugin-desc", "author-bio", "about-the-author",
# "autor_short_desc"): who wrote it, not what it says.
_AUTHOR_BOX_TOKEN = re.compile(r"(?:^|[-_])(?:(?:author|autor|autorin|writer)[-_]*(?:bio|box|info|desc|description|"
                               r"about|profile|details|short[-_]desc|card)|about[-_]*(?:the[-_]*)?author|saboxplugin|"
                               r"sabox)(?:[-_]|$)")
# An author box holds a short biography; a longer text under such a class is left to the model.
AUTHOR_BOX_WORDS = 80


def in_author_box(node) -> bool:
    """The node is a text of at most AUTHOR_BOX_WORDS words in an author box (_AUTHOR_BOX_TOKEN on a class of its
    own or of its two nearest ancestors)."""
    return _short_in_box(node, _AUTHOR_BOX_TOKEN, AUTHOR_BOX_WORDS)


# Class words of a photo's caption ("wp-caption-text", "image-caption", "media-caption", "Bildunterschrift"); a
# <figcaption> is one by its tag.
_CAPTION_TOKEN = re.compile(r"(?:^|[-_])(?:caption|captions|figcaption|figure-?caption|image-?caption|wp-caption-text|"
                            r"bildunterschrift|legende|legend)(?:[-_]|$)")
# A caption under a caption class says what a photo shows in a sentence or two; a longer text is left to the model.
CAPTION_WORDS = 60


def in_caption(node) -> bool:
    """The node is a <figcaption>'s text, or a text of at most CAPTION_WORDS words under a caption class
    (_CAPTION_TOKEN on a class of its own or of its two nearest ancestors)."""
    return node.tag == "figcaption" or _short_in_box(node, _CAPTION_TOKEN, CAPTION_WORDS)


# The lines of an article's top that the item gives in fields of their own (`headline`, `author`,
# `date_published`, read from the same lines) and that news sets' references leave out of its text; the
# kinds this rule drops (evidence: docs/method-choices.md, "Decision rules after scoring").
BYLINE_KINDS = ("headline", "byline", "dateline")


def byline_line_nodes(page: Page, kinds: Collection[str] = BYLINE_KINDS) -> List[bool]:
    """The page's headline node (headline_node) and its byline and dateline lines as the metadata reads them
    (metadata.byline_lines: the first short "By ..." line, short texts by the `<h1>` that show a day), of
    `kinds`; none on a page that declares a product, a discussion or a collection (an article's top only)."""
    out = [False] * len(page.nodes)
    product, _article, discussion, collection = declared_kinds(page.declared)
    if product or discussion or collection:
        return out
    if "headline" in kinds:
        head = headline_node(page)
        if head >= 0:
            out[head] = True
    for i, kind in byline_lines(page).items():
        if kind in kinds:
            out[i] = True
    return out


def _byline_lines(page: Page, keep: Sequence[bool]) -> Optional[List[bool]]:
    """Which kept nodes are the article's headline, byline or dateline lines (byline_line_nodes)."""
    lines = byline_line_nodes(page, BYLINE_KINDS)
    drop = [k and b for k, b in zip(keep, lines)]
    return drop if any(drop) else None


def _captions(page: Page, keep: Sequence[bool], facts: "_Facts") -> Optional[List[bool]]:
    """Which kept nodes are photo captions to drop (in_caption), or None when there are none or when they hold at
    least half of the kept words: a photo story or a gallery page is its captions (as comments_are_content reads
    a thread that holds half of a page)."""
    captions = [k and (page.nodes[i].tag == "figcaption" or facts.in_box("captions", i)) for i, k in enumerate(keep)]
    if not any(captions) or _word_share(page.nodes, keep, captions) >= 0.5:
        return None
    return captions


# Class words of share bars whose heading the chrome rule leaves alone (it spares headings): Jetpack's
# "sharedaddy" / "sd-block" ("Share this:", "Teilen mit:", "Bewerten:") and the share words of _CHROME_TOKEN.
_SHARE_TOKEN = re.compile(r"(?:^|[-_])(?:share|shares|sharing|sharebar|sharedaddy|social|socials|addthis|sharethis|"
                          r"shariff|sd-block)(?:[-_]|$)")


def is_share_heading(node) -> bool:
    """The node is a heading of at most CHROME_WORDS words in share markup (_SHARE_TOKEN on a class of its own
    or of its two nearest ancestors): a share bar's title, never an article's section heading."""
    if node.tag not in _HEADINGS or count_words(node.content) > CHROME_WORDS:
        return False
    return any(_share_word(t) for t in _near_classes(node))


def _share_word(word: str) -> bool:
    """A class word of share markup (not a share price)."""
    return bool(_SHARE_TOKEN.search(word)) and not _NOT_CHROME.search(word)


# Utility classes that hide text from the eye and keep it for screen readers (Bootstrap 3 and 5, WordPress,
# Drupal, Amazon, Korean sites' "blind"; and, taken from the design systems' own documentation rather
# than from the data, Stack Exchange's Stacks, Foundation, the US and UK government systems, Angular CDK,
# Salesforce Lightning): the text is not on the page a reader sees. Matched as whole class names on the
# node's reTPS.
SCREEN_READER_CLASSES = frozenset({
    "sr-only", "visually-hidden", "visuallyhidden", "screen-reader-text", "screen-reader-only",
    "screenreader-only", "sr-text", "a11y-hidden", "u-visually-hidden", "hidden-visually", "element-invisible",
    "assistive-text", "offscreen", "a-offscreen", "blind",
    "sr-only-focusable", "visually-hidden-focusable", "is-visually-hidden", "v-visible-sr", "show-for-sr",
    "usa-sr-only", "govuk-visually-hidden", "cdk-visually-hidden", "slds-assistive-text",
})


def for_screen_readers_only(node) -> bool:
    """A class on the node's reTPS is one of SCREEN_READER_CLASSES."""
    return not SCREEN_READER_CLASSES.isdisjoint(node.tokens)


def _for_screen_readers_only(retps: str, seen: Dict[str, bool]) -> bool:
    """for_screen_readers_only of a node with this reTPS, remembered in `seen`."""
    hit = seen.get(retps)
    if hit is None:
        hit = seen[retps] = not SCREEN_READER_CLASSES.isdisjoint(retps.split(SEP) if retps else ())
    return hit


def layout_duplicates(nodes: Sequence, keep: Sequence[bool]) -> List[bool]:
    """Which kept nodes repeat the text of an earlier kept node in another layout: the same words
    (whitespace and case aside) under a reTPS of another shape (retps_shape: tags and classes, position
    buckets aside).

    Responsive pages render one description twice, one copy for small screens and one for large
    ("product-description hidden-md-up" and "product-description-spacing-mobile hidden-up-md"), and a
    reader sees one of them; a reply that quotes a post repeats it inside a quote box. Text repeated in
    the same shape (code samples in several language tabs, a price on every card of a listing) is
    left alone: that is a template's own repetition, and WCXB's references keep it.
    """
    # shapes are computed only for texts that come again: most texts come once
    first: Dict[str, object] = {}     # text -> the first kept node that had it
    shapes: Dict[str, set] = {}       # text seen twice or more -> the shapes it came in
    out = []
    for node, kept in zip(nodes, keep):
        repeat = False
        if kept:
            key = node.content.lower()  # the serializer collapsed its whitespace
            if key not in first:
                first[key] = node
            else:
                seen = shapes.get(key)
                if seen is None:
                    seen = shapes[key] = {retps_shape(first[key].retps)}
                shape = retps_shape(node.retps)
                repeat = shape not in seen
                seen.add(shape)
        out.append(repeat)
    return out


# Form controls: a reader does not read a drop-down's options (a shop's list of countries), the
# caption of a button or the label of a field as the page's content. <textarea> is not here: forum pages
# put the text of a post being quoted or edited in one.
FORM_CONTROL_TAGS = frozenset({"select", "option", "optgroup", "button", "label", "legend"})


def in_form_control(node) -> bool:
    """The node is a form control's text (FORM_CONTROL_TAGS), or sits inside a <select>."""
    return node.tag in FORM_CONTROL_TAGS or (
        "select|" in node.retps and any(t.startswith("select|") for t in node.tokens))


def settled(node) -> bool:
    """A main-content model's rules keep the node out whatever its score: boilerplate markup
    (`is_relevant`), a form control (`in_form_control`) or text for screen readers only."""
    return bool(node.boilerplate) or in_form_control(node) or for_screen_readers_only(node)


# A main-content model's threshold on a page is never above this share of the page's best score: what
# scores at least half as high as the page's best node is kept (see relevant_mask). With a card threshold
# of 0.5 or more, as the shipped default's, that is the decision on every page.
PAGE_BEST_SHARE = 0.5
# PAGE_BEST_SHARE's former name, for code that still imports it
FALLBACK_SHARE = PAGE_BEST_SHARE


def relevant_mask(page: Page, scores: Sequence[float], threshold: float, region_share: Optional[float] = None,
                  best_share: Optional[float] = PAGE_BEST_SHARE, off: Collection[str] = ()) -> List[bool]:
    """Which nodes of a page are relevant content.

    `is_relevant` per node; then, for a main-content model (`region_share` given): the threshold capped at
    `best_share` of the page's best score outside the `settled` nodes (scores are not calibrated alike on
    every kind of page; None or 0 turns the cap off, as extract() does for a threshold the caller gives), no
    `settled` node, no customer reviews on a declared product page, no reader comments where they are not the
    page's content and the page declares no product or collection (`in_comments`, `comments_are_content`),
    no share, print or gallery chrome (`in_page_chrome`), no text in the boxes ARTICLE_RULES names (credits,
    consent notices, paywall pitches, author boxes; captions unless they hold half of the kept words),
    only the nodes of the page's main region (`main_region`) and each text once where the page repeats it in
    another layout (`layout_duplicates`). Attribute models keep nothing when nothing qualifies: a page need
    not hold the attribute. `off` names OPTIONAL_RULES left out (ablations: `edrew evaluate --rules-off`).
    Why each rule, with its measurements: docs/method-choices.md, "Decision rules after scoring".
    """
    if region_share is not None and best_share:
        best = _best_unsettled(page.nodes, scores)
        if best > 0.0:
            threshold = min(threshold, best_share * best)
    return _decide(page, scores, threshold, region_share, _check_off(off))


def _best_unsettled(nodes: Sequence, scores: Sequence[float]) -> float:
    """The highest score of a node that is not `settled`, 0.0 if none scores above 0."""
    values = np.asarray(scores, dtype=np.float64)
    # highest first, so that `settled` is asked of one node or a few rather than every node of the page
    # (score_pages gives settled nodes 0.0)
    for i in np.argsort(-values, kind="stable"):
        if values[i] <= 0.0:
            break
        if not settled(nodes[i]):
            return float(values[i])
    return 0.0


def _decide(page: Page, scores: Sequence[float], threshold: float, region_share: Optional[float],
            off: Collection[str] = ()) -> List[bool]:
    """relevant_mask at one threshold, without the page's best score."""
    nodes = page.nodes
    keep = [is_relevant(n, s, threshold) for n, s in zip(nodes, scores)]
    if region_share is None:
        return keep
    # the same rules that let score_pages leave these nodes unscored (is_relevant already dropped boilerplate)
    keep = [k and not settled(n) for n, k in zip(nodes, keep)]
    if is_product_page(page):
        keep = [k and not in_customer_reviews(n) for n, k in zip(nodes, keep)]
    for _reason, drop in _article_rules(page, keep, off):
        keep = [k and not d for k, d in zip(keep, drop)]
    region, lead = _region(page, scores, keep, region_share, off)
    if region is not None:
        inside = region + "/"
        keep = [k and (not n.path.startswith("/") or n.path == region or n.path.startswith(inside) or i in lead)
                for i, (n, k) in enumerate(zip(nodes, keep))]
    return [k and not d for k, d in zip(keep, layout_duplicates(nodes, keep))]


def _word_share(nodes: Sequence, keep: Sequence[bool], marked: Sequence[bool]) -> float:
    """The share of the kept words that lie in `marked` nodes (0.0 when nothing is kept)."""
    inside = total = 0
    for node, kept, m in zip(nodes, keep, marked):
        if kept:
            n = count_words(node.content)
            total += n
            inside += n if m else 0
    return inside / total if total else 0.0


def _reader_comments(page: Page, keep: Sequence[bool], facts: "_Facts") -> Optional[List[bool]]:
    """Which kept nodes are reader comments to drop (in_comments), or None when there are none, when they
    are the page's content (comments_are_content) or when the page declares a product or a collection
    (a course page's "testimonials-comment" quotes; customer reviews have their own rule there)."""
    product, _article, _discussion, collection = declared_kinds(page.declared)
    if product or collection:
        return None
    comments = [k and facts.in_comments(i) for i, k in enumerate(keep)]
    if not any(comments) or comments_are_content(page, page.nodes, keep, comments):
        return None
    return comments


# The rules that relevant_mask(off=...) and explain(off=...) can leave out: the article rules by the reason
# they give, the main region's widening to the text after the headline (_holding_lead) and the standfirst
# kept beside the region (standfirst_nodes).
ARTICLE_RULES = ("reader-comments", "comment-forms", "page-chrome", "like-buttons", "share-headings", "related-boxes",
                 "signup-boxes", "credit-lines", "consent-notices", "paywall-prompts", "author-boxes", "captions",
                 "byline-lines")
OPTIONAL_RULES = ARTICLE_RULES + ("headline-lead", "standfirst", "paragraph-region")


def _check_off(off: Collection[str]) -> frozenset:
    off = frozenset(off or ())
    unknown = off - set(OPTIONAL_RULES)
    if unknown:
        raise ValueError(f"unknown rule(s) {', '.join(sorted(unknown))}; choose from {', '.join(OPTIONAL_RULES)}")
    return off


# The box rules of ARTICLE_RULES (each also a per-node test: in_related_box, in_page_chrome, ...) and the
# caption class, as _Facts reads them: (the test of one class word, the most words a node may have); page-chrome
# also wants a node that is not a heading, share-headings one that is.
_BOX_RULES = {
    "comment-forms": (_COMMENT_FORM_TOKEN.search, COMMENT_FORM_WORDS), "page-chrome": (_chrome_word, CHROME_WORDS),
    "like-buttons": (_LIKE_TOKEN.search, LIKE_WORDS), "share-headings": (_share_word, CHROME_WORDS),
    "related-boxes": (_RELATED_TOKEN.search, RELATED_WORDS), "signup-boxes": (_SIGNUP_TOKEN.search, SIGNUP_WORDS),
    "credit-lines": (_CREDIT_TOKEN.search, CREDIT_WORDS), "consent-notices": (_CONSENT_TOKEN.search, CONSENT_WORDS),
    "paywall-prompts": (_PAYWALL_TOKEN.search, PAYWALL_WORDS),
    "author-boxes": (_AUTHOR_BOX_TOKEN.search, AUTHOR_BOX_WORDS), "captions": (_CAPTION_TOKEN.search, CAPTION_WORDS),
}


def _boxes_named(word: str) -> frozenset:
    """The _BOX_RULES whose class-word test `word` passes."""
    return frozenset(r for r, (test, _most) in _BOX_RULES.items() if test(word))


class _Facts:
    """What the article rules read of one page's nodes, each worked out once a page rather than once a node and
    rule: a node's words, the boxes (_BOX_RULES) its near class words (_near_classes) name and whether it is in a
    comment section, each class word and each distinct reTPS (siblings share theirs) looked at once.
    in_box and in_comments answer as the per-node tests (in_related_box, in_page_chrome, ..., in_comments) do."""

    __slots__ = ("nodes", "_words", "_boxes", "_comments", "_by_word", "_boxes_of", "_comments_of")

    def __init__(self, nodes: Sequence):
        self.nodes = nodes
        self._words: List[Optional[int]] = [None] * len(nodes)
        self._boxes: List[Optional[frozenset]] = [None] * len(nodes)
        self._comments: List[Optional[bool]] = [None] * len(nodes)
        self._by_word: Dict[str, frozenset] = {}
        # [0] of a reTPS, [1] of a node's own id and class (_own_words): its boxes; whether in_comments' test of
        # it passes
        self._boxes_of: Tuple[Dict[str, frozenset], Dict[str, frozenset]] = ({}, {})
        self._comments_of: Tuple[Dict[str, bool], Dict[str, bool]] = ({}, {})

    def _named(self, own: bool, text: str) -> frozenset:
        boxes = self._boxes_of[own].get(text)
        if boxes is None:
            boxes = frozenset()
            for w in (text.split() if own else _retps_classes(text)):
                of_word = self._by_word.get(w)
                if of_word is None:
                    of_word = self._by_word[w] = _boxes_named(w)
                boxes |= of_word
            self._boxes_of[own][text] = boxes
        return boxes

    def _commented(self, own: bool, text: str) -> bool:
        comments = self._comments_of[own].get(text)
        if comments is None:
            comments = self._comments_of[own][text] = (_own_in_comments if own else _retps_in_comments)(text)
        return comments

    def words(self, i: int) -> int:
        """count_words of node i's text."""
        n = self._words[i]
        if n is None:
            n = self._words[i] = count_words(self.nodes[i].content)
        return n

    def boxes(self, i: int) -> frozenset:
        """The _BOX_RULES whose class words node i's near classes hold, whatever its words and tag."""
        boxes = self._boxes[i]
        if boxes is None:
            node = self.nodes[i]
            boxes = self._named(False, node.retps)
            if _has_own(node):
                boxes = boxes | self._named(True, _own_words(node))
            self._boxes[i] = boxes
        return boxes

    def in_box(self, reason: str, i: int) -> bool:
        """Node i is a short text in the box `reason` (a key of _BOX_RULES) names."""
        if reason not in self.boxes(i):
            return False
        tag = self.nodes[i].tag
        if reason == "page-chrome" and tag in _HEADINGS:
            return False
        if reason == "share-headings" and tag not in _HEADINGS:
            return False
        return self.words(i) <= _BOX_RULES[reason][1]

    def in_comments(self, i: int) -> bool:
        """in_comments(node i)."""
        comments = self._comments[i]
        if comments is None:
            node = self.nodes[i]
            comments = self._commented(False, node.retps) or (_has_own(node)
                                                               and self._commented(True, _own_words(node)))
            self._comments[i] = comments
        return comments


def _article_rules(page: Page, keep: Sequence[bool], off: Collection[str]):
    """(reason, nodes to drop) of the rules against an article's surroundings, in order, each on what the
    one before left kept: reader comments, comment reply forms, share and gallery chrome, like buttons, share bars'
    headings, related posts, sign-up boxes, credit lines, consent notices, paywall pitches, author boxes, captions."""
    keep = list(keep)
    facts = _Facts(page.nodes)
    # the boxes any kept node is in: a rule whose box no kept node is in drops nothing (keep only shrinks)
    named = frozenset().union(*(facts.boxes(i) for i, k in enumerate(keep) if k))
    for reason in ARTICLE_RULES:
        if reason in off:
            continue
        if reason == "reader-comments":
            drop = _reader_comments(page, keep, facts)
        elif reason == "captions":
            drop = _captions(page, keep, facts)
        elif reason == "byline-lines":
            drop = _byline_lines(page, keep)
        elif reason in named:
            drop = [k and facts.in_box(reason, i) for i, k in enumerate(keep)]
        else:
            continue
        if drop is not None and any(drop):
            keep = [k and not d for k, d in zip(keep, drop)]
            yield reason, drop


def reader_comment_nodes(page: Page, decision: "Decision") -> List[bool]:
    """The page's reader comments, given apart from its text (an item's `comments`): every node in a
    reader-comment section (in_comments) that no markup rule settles, whatever its score (the model learnt
    to score comments low), on a page where the reader-comment rule applies: none where they are the
    page's content (then they are in its text), where the page declares a product or a collection, or where
    `decision` (explain's, for a main-content model) left the rule off."""
    nodes = page.nodes
    if decision.region_share is None or "reader-comments" in decision.off:
        return [False] * len(nodes)
    product, _article, discussion, collection = declared_kinds(page.declared)
    if product or collection or discussion:
        return [False] * len(nodes)
    facts = _Facts(nodes)
    candidates = [r not in _SETTLED_REASONS and facts.in_comments(i) for i, r in enumerate(decision.reasons)]
    if not any(candidates):
        return candidates
    # the share of comment words among the nodes that passed the threshold, as _reader_comments measures it
    passed = [r not in _SETTLED_REASONS and r != "below-threshold" for r in decision.reasons]
    if any(c and p for c, p in zip(candidates, passed)) and comments_are_content(page, nodes, passed, candidates):
        return [False] * len(nodes)
    return candidates


# Elements that hold one paragraph of text: a main region is the element around paragraphs, never one of them.
_PARAGRAPH_TAGS = frozenset({"p", "blockquote", "li", "dd", "pre", "figcaption"}) | _HEADINGS


def _region(page: Page, scores: Sequence[float], keep: Sequence[bool], region_share: float,
            off: Collection[str]) -> Tuple[Optional[str], set]:
    """(the page's main region, the indices of the kept nodes outside it that stay): main_region, never one
    paragraph, widened to hold the best kept node and, from a list of teasers, the lead; then the standfirst
    beside it. (None, empty) when the page has no main region. Both relevant_mask and explain read it."""
    region = main_region(page.nodes, keep, region_share)
    if region is None:
        return None, set()
    if "paragraph-region" not in off:
        region = _beyond_paragraph(region, page.nodes)
    region = _holding_best(region, page.nodes, scores, keep)
    if "headline-lead" not in off:
        region = _holding_lead(region, page, keep)
    return region, (set() if "standfirst" in off else standfirst_nodes(region, page, keep))


def _beyond_paragraph(region: str, nodes: Sequence) -> str:
    """The main region, widened to its parent when it is one paragraph (a node of its own with a _PARAGRAPH_TAGS
    tag): a post of three paragraphs whose first holds 70 % of its words is the post, not its first paragraph."""
    if region.rsplit("/", 1)[-1].split("[", 1)[0] not in _PARAGRAPH_TAGS:
        return region
    if not any(n.path == region for n in nodes):
        return region
    parent = region[:region.rfind("/")]
    return parent or region


def _holding_best(region: str, nodes: Sequence, scores: Sequence[float], keep: Sequence[bool]) -> str:
    """The main region, widened to the nearest element that also holds the page's most confident kept
    node when it lies outside.

    The region follows the kept words, and on a shop page a long list of recommended products can outweigh
    the description the model was surest of. Widening keeps what the region held (docs/method-choices.md,
    "Decision rules after scoring").
    """
    inside = region + "/"
    best_in, best_out, path = -1.0, -1.0, ""
    for node, s, k in zip(nodes, scores, keep):
        if not k:
            continue
        if not node.path.startswith("/") or node.path == region or node.path.startswith(inside):
            best_in = max(best_in, float(s))
        elif s > best_out:
            best_out, path = float(s), node.path
    # a tie is not a reason to widen: the region already holds a node the model is as sure of
    if best_out <= best_in:
        return region
    return _common_ancestor(region, path)


def _common_ancestor(a: str, b: str) -> str:
    """The path of the nearest element that holds both paths; "" (no element in common) is the whole document."""
    x, y = a.split("/"), b.split("/")
    common = 0
    while common < min(len(x), len(y)) and x[common] == y[common]:
        common += 1
    return "/".join(x[:common])


# A kept node of at least this many words is the start of the text a page's headline introduces (the lead).
LEAD_WORDS = 20
_TITLE_WORD = re.compile(r"\w+")


def headline_node(page: Page) -> int:
    """The index of the page's headline: the first node inside an <h1> whose words lie at least 80 % in the
    page's <title> (which adds the site's name); -1 when there is none."""
    title = set(_TITLE_WORD.findall(page.title.lower()))
    if not title:
        return -1
    for node in page.nodes:
        if "/h1[" in node.path or node.tag == "h1":
            w = _TITLE_WORD.findall(node.content.lower())
            if w and sum(t in title for t in w) >= 0.8 * len(w):
                return node.index
    return -1


def _holding_lead(region: str, page: Page, keep: Sequence[bool]) -> str:
    """The main region, widened to the nearest element that also holds the lead, when the region is a list of
    other pages (teasers: TEASER_ITEMS or more of its children hold a kept linked heading) and leaves out the
    lead: the first kept node of LEAD_WORDS words or more after the page's headline (headline_node).

    On an article with a short text, a list of teasers after it (headline, summary, "read the rest", five
    times over) outweighs the article in words, and the region chose the list alone. The text that follows
    the headline is what the page is about; widening keeps what the region held (docs/method-choices.md). A
    region that is not such a list stays as it is: a standfirst above an article's body is not its lead."""
    head = headline_node(page)
    if head < 0:
        return region
    inside = region + "/"
    for node, kept in zip(page.nodes[head + 1:], keep[head + 1:]):
        if kept and node.path.startswith("/") and count_words(node.content) >= LEAD_WORDS:
            if node.path == region or node.path.startswith(inside) or not _lists_teasers(region, page, keep):
                return region
            return _common_ancestor(region, node.path)
    return region


# A region with kept linked headings in this many of its children is a list of other pages (teasers).
TEASER_ITEMS = 3
_HEADING = re.compile(r"/h[2-6]\[")


def _lists_teasers(region: str, page: Page, keep: Sequence[bool]) -> bool:
    """TEASER_ITEMS or more children of the region hold a kept node that is all link text inside an <h2>-<h6>."""
    inside = region + "/"
    items = set()
    for node, kept in zip(page.nodes, keep):
        if (kept and node.path.startswith(inside) and node.link_chars >= len(node.content)
                and _HEADING.search(node.path, len(region))):
            items.add(node.path[len(inside):].split("/", 1)[0])
    return len(items) >= TEASER_ITEMS


# A kept node between the headline and the main region with this many words is prose (a standfirst), not a
# byline or a dateline ("By Ann Smith · March 3, 2026"): the lead's length (LEAD_WORDS).
STANDFIRST_WORDS = LEAD_WORDS


def standfirst_nodes(region: str, page: Page, keep: Sequence[bool]) -> set:
    """The indices of the kept nodes that the main region leaves out but that stay: the prose between the page's
    headline (headline_node) and the region's first kept node, in document order (the standfirst, or a short
    article above a footer of related items), each of STANDFIRST_WORDS words or more and mostly not link text.

    News pages put the standfirst in the article's header, beside the body that holds most of the words, and
    the region is the body alone. Only long prose is kept: a byline, a share bar or a date between the
    headline and the body stays out, and the region itself is not widened (docs/method-choices.md)."""
    head = headline_node(page)
    if head < 0:
        return set()
    inside = region + "/"
    nodes = page.nodes
    first = next((i for i, (n, k) in enumerate(zip(nodes, keep))
                  if k and (n.path == region or n.path.startswith(inside))), -1)
    return {i for i in range(head + 1, first) if keep[i] and nodes[i].path.startswith("/")
            and 2 * nodes[i].link_chars < len(nodes[i].content) and count_words(nodes[i].content) >= STANDFIRST_WORDS}


# Why a node was kept or dropped (explain): the first rule, in the order the rules apply, that decided it.
KEPT = "kept"
REASONS = {
    KEPT: "kept: scores at or above the page's threshold and no rule drops it",
    "boilerplate": "dropped: inside boilerplate markup (<nav>, a page <footer>, <aside>, a dialog)",
    "form-control": "dropped: a form control's text (a button, a label, a drop-down)",
    "screen-reader-only": "dropped: text for screen readers only (a class such as sr-only)",
    "below-threshold": "dropped: scores below the page's threshold",
    "customer-reviews": "dropped: customer reviews on a page that declares a product",
    "reader-comments": "dropped: a reader-comment section on a page whose content it is not",
    "comment-forms": "dropped: a comment reply form's heading or note",
    "page-chrome": "dropped: a share, print or photo-gallery control",
    "like-buttons": "dropped: a like button or likes counter",
    "share-headings": "dropped: the heading of a share bar",
    "related-boxes": "dropped: a short text in a box of related, recommended or recent posts",
    "signup-boxes": "dropped: a newsletter or subscription sign-up box",
    "credit-lines": "dropped: a photo credit or copyright line",
    "consent-notices": "dropped: a consent notice or an embed's consent placeholder",
    "paywall-prompts": "dropped: a paywall's or registration wall's pitch, price or log-in",
    "author-boxes": "dropped: an author box (a short biography)",
    "captions": "dropped: a caption",
    "byline-lines": "dropped: the article's headline, byline or dateline line (the item's headline, author, date)",
    "outside-main-region": "dropped: outside the page's main region",
    "layout-duplicate": "dropped: repeats a kept text in another layout",
}


# explain's reasons for nodes that markup settles whatever their score (`settled`)
_SETTLED_REASONS = frozenset({"boilerplate", "form-control", "screen-reader-only"})


@dataclass(frozen=True)
class Decision:
    """What relevant_mask decided on one page, and why: `reasons[i]` is KEPT or the rule (a key of REASONS)
    that dropped node i; `threshold` is the one applied on this page (`given` capped at the page's best
    score when `capped`); `region` is the main region's path (None: step off or nothing kept); `off` the
    OPTIONAL_RULES left out."""

    threshold: float
    given: float
    capped: bool
    region: Optional[str]
    region_share: Optional[float]
    reasons: List[str]
    off: frozenset = frozenset()  # the OPTIONAL_RULES left out

    @property
    def kept(self) -> List[bool]:
        return [r == KEPT for r in self.reasons]


def explain(page: Page, scores: Sequence[float], threshold: float, region_share: Optional[float] = None,
            best_share: Optional[float] = PAGE_BEST_SHARE, off: Collection[str] = ()) -> Decision:
    """relevant_mask's decision with the rule that decided each node, for reports (`edrew inspect`).

    The same rules in the same order as relevant_mask and _decide, so `explain(...).kept` equals
    `relevant_mask(...)` (tests/test_rules_explain.py checks it); a node that several rules drop gets the
    first: boilerplate markup, form control and screen-reader text before the threshold, since a main-content
    model leaves those nodes unscored (score_pages).
    """
    off = _check_off(off)
    given = float(threshold)
    cut = given
    if region_share is not None and best_share:
        best = _best_unsettled(page.nodes, scores)
        if best > 0.0:
            cut = min(cut, best_share * best)
    nodes = page.nodes
    reasons: List[str] = []
    screen_reader: Dict[str, bool] = {}  # reTPS -> for_screen_readers_only: siblings share their reTPS
    for node, score in zip(nodes, scores):
        if node.boilerplate:
            reasons.append("boilerplate")
        elif region_share is not None and in_form_control(node):
            reasons.append("form-control")
        elif region_share is not None and _for_screen_readers_only(node.retps, screen_reader):
            reasons.append("screen-reader-only")
        elif not score >= cut:
            reasons.append("below-threshold")
        else:
            reasons.append(KEPT)
    region = None
    if region_share is not None:
        if is_product_page(page):
            reasons = [("customer-reviews" if r == KEPT and in_customer_reviews(n) else r)
                       for n, r in zip(nodes, reasons)]
        for reason, drop in _article_rules(page, [r == KEPT for r in reasons], off):
            reasons = [reason if d else r for r, d in zip(reasons, drop)]
        keep = [r == KEPT for r in reasons]
        region, lead = _region(page, scores, keep, region_share, off)
        if region is not None:
            inside = region + "/"
            reasons = [("outside-main-region" if r == KEPT and n.path.startswith("/") and n.path != region
                        and not n.path.startswith(inside) and i not in lead else r)
                       for i, (n, r) in enumerate(zip(nodes, reasons))]
        duplicates = layout_duplicates(nodes, [r == KEPT for r in reasons])
        reasons = ["layout-duplicate" if d else r for r, d in zip(reasons, duplicates)]
    return Decision(threshold=cut, given=given, capped=cut < given, region=region, region_share=region_share,
                    reasons=reasons, off=off)
