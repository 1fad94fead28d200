"""The decision rules after scoring: which of a page's scored nodes are its relevant content.

The model gives each node a probability; these rules turn the probabilities into the kept nodes: the
threshold (capped per page at a share of the page's best score), boilerplate markup, form controls,
text for screen readers only, customer reviews on product pages, the page's main region and text
repeated in another layout. extract.py applies them (`relevant_mask`); training applies the same ones
to choose a model's threshold. Evidence for each rule: docs/method-choices.md and docs/evaluation.md.
Pure: no Scrapy, no torch.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Dict, List, Optional, Sequence

import numpy as np

from .declared import declared_kinds
from .page import Page
from .tokens import retps_shape
from .words import count_words

__all__ = ["FALLBACK_SHARE", "FORM_CONTROL_TAGS", "MAIN_REGION_SHARE", "PAGE_BEST_SHARE", "SCREEN_READER_CLASSES",
           "for_screen_readers_only", "in_customer_reviews", "in_form_control", "is_product_page", "is_relevant",
           "layout_duplicates", "main_region", "relevant_mask", "settled"]


def is_relevant(node, score: float, threshold: float) -> bool:
    """The decision for one node: its score reaches the threshold and it is not in boilerplate markup.

    Node.boilerplate marks text inside dialog boxes (consent banners, terms of service, sign-up boxes that
    sit closed in the HTML: a WCXB product page held a whole terms of service), <nav>, <aside> and
    page-level <footer>, or an element with their ARIA role (navigation, complementary, contentinfo). The
    reTPS is cut at 20 tokens, so the model rarely sees these ancestors; dropping their text raised
    cross-validated word-F1 on every page type (docs/evaluation.md).
    """
    return score >= threshold and not node.boilerplate


# The share of a page's kept words that its main region must hold. 0.7 and 0.8 gave the same
# cross-validated word-F1 on WCXB (0.824 and 0.826 with two head seeds, against 0.818 and 0.819 without the
# step; 0.5 loses service and collection pages that spread their content, 0.9 gains less); 0.7 was better
# on the shipped default's own validation pages (0.859 vs 0.855; 0.853 without the step).
# docs/evaluation.md, "Main region".
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
    # nodes is visited once rather than once per node below it (300 WCXB pages, 90 % of nodes kept: 2.9 -> 1.7 ms
    # a page; the same regions).
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
# its name when it applied only to pages where nothing reached the threshold (before 24 Nov 2026)
FALLBACK_SHARE = PAGE_BEST_SHARE


def relevant_mask(page: Page, scores: Sequence[float], threshold: float, region_share: Optional[float] = None,
                  best_share: Optional[float] = PAGE_BEST_SHARE) -> List[bool]:
    """Which nodes of a page are relevant content: `is_relevant` per node, then (region_share given:
    a main-content model) without text for screen readers only or of form controls (`in_form_control`),
    without customer reviews on a product page, only the nodes inside the page's main region
    (`main_region`), and each text once where the page repeats it in another layout (`layout_duplicates`:
    in cross-validation on WCXB, 8 % of the falsely kept words were such a repeat, 15 % on forums; 80 % of
    the words it drops are not main content).

    Form controls (FORM_CONTROL_TAGS): drop-down options, buttons, field labels. On WCXB 3 % of the words
    in such nodes are labelled relevant; in cross-validation they were 4.5 % of the falsely kept words,
    13-15 % on collection and service pages (filters, sign-up forms), 5 % on product pages (a shop's
    list of countries to ship to).

    Screen-reader-only text (SCREEN_READER_CLASSES): 97 % of its words on WCXB are not main content (737
    relevant against 26,932), and one product page carried 9,000 words of it; attribute models keep it
    (a shop's price for screen readers is still its price).

    Customer reviews are what most of the wrong text on WCXB product pages was (22 % of the falsely kept
    words in cross-validation); their paragraphs look like body text, and on articles and services the
    same "review" classes mark content (62-66 % of such nodes relevant), so the model, which sees few
    product pages, keeps them. What the page declares tells the two apart (docs/evaluation.md).

    For a main-content model the threshold on a page is at most PAGE_BEST_SHARE of the page's best score
    (outside the `settled` nodes): scores are not calibrated alike on every kind of page. On listings and
    shop pages the model is unsure of every node (the best scoring 0.4-0.6), so a fixed threshold kept a
    few items or nothing (an empty item for the user), while the ranking within the page was right. In
    cross-validation on WCXB, with each fold's threshold chosen on its validation pages either way, this
    gave 0.858 instead of 0.848 (collections +0.05, listings +0.07; docs/evaluation.md). Before, the
    page's best applied only where nothing reached the threshold. A probability is below 1, so with a
    threshold of 0.5 or more (the shipped default's is 0.5) the cap binds on every page and the rule is
    purely relative: keep what scores at least half the page's best. `best_share` None (or 0) turns the cap
    off: extract() does so for a threshold the caller gives, which then holds on every page. Attribute
    models keep nothing when nothing qualifies: a page need not hold the attribute.
    """
    if region_share is not None and best_share:
        best = _best_unsettled(page.nodes, scores)
        if best > 0.0:
            threshold = min(threshold, best_share * best)
    return _decide(page, scores, threshold, region_share)


def _best_unsettled(nodes: Sequence, scores: Sequence[float]) -> float:
    """The highest score of a node that is not `settled`, 0.0 if none scores above 0."""
    values = np.asarray(scores, dtype=np.float64)
    # highest first, so that `settled` is asked of one node or a few rather than every node of the page
    # (score_pages gives settled nodes 0.0): 0.02 ms a WCXB page instead of 0.5 ms
    for i in np.argsort(-values, kind="stable"):
        if values[i] <= 0.0:
            break
        if not settled(nodes[i]):
            return float(values[i])
    return 0.0


def _decide(page: Page, scores: Sequence[float], threshold: float, region_share: Optional[float]) -> List[bool]:
    """relevant_mask at one threshold, without the page's best score."""
    nodes = page.nodes
    keep = [is_relevant(n, s, threshold) for n, s in zip(nodes, scores)]
    if region_share is None:
        return keep
    # the same rules that let score_pages leave these nodes unscored (is_relevant already dropped boilerplate)
    keep = [k and not settled(n) for n, k in zip(nodes, keep)]
    if is_product_page(page):
        keep = [k and not in_customer_reviews(n) for n, k in zip(nodes, keep)]
    region = main_region(nodes, keep, region_share)
    if region is not None:
        region = _holding_best(region, nodes, scores, keep)
        inside = region + "/"
        keep = [k and (not n.path.startswith("/") or n.path == region or n.path.startswith(inside))
                for n, k in zip(nodes, keep)]
    return [k and not d for k, d in zip(keep, layout_duplicates(nodes, keep))]


def _holding_best(region: str, nodes: Sequence, scores: Sequence[float], keep: Sequence[bool]) -> str:
    """The main region, widened to the nearest element that also holds the page's most confident kept
    node when it lies outside.

    The region follows the kept words, and on a shop page where the model is unsure of everything but the
    description (0.4-0.6 against 0.73 on an unseen bookshop), a long list of recommended products holds
    more words than the description and the details together: the region was the list, and the one node
    the model was sure of was cut. In cross-validation on WCXB this happened on 49 of 1,497 pages; widening
    gave +0.0007 to +0.0012 word-F1 on three sets of fold models, no page type lower by more than 0.0001
    (docs/evaluation.md, "The main region widens"). Widening keeps what the region held.
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
    a, b = region.split("/"), path.split("/")
    common = 0
    while common < min(len(a), len(b)) and a[common] == b[common]:
        common += 1
    return "/".join(a[:common])  # "" (no element in common) keeps the whole document
