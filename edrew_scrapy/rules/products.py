"""Pages that declare a product, and the customer reviews on them."""
from __future__ import annotations

from ..declared import declared_kinds
from ..page import Page


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
