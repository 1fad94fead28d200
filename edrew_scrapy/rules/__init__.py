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

The modules: the decision on a page (decision: relevant_mask, explain) over the markup that settles a node
(markup), product pages (products), reader comments (comments), the boxes around an article (boxes, read
once a page by facts, applied in order by articles), an article's top lines (bylines), the main region
(region) and layout duplicates (duplicates); what the rules read of a node (nodes); and every rule's name
and threshold (settings).
"""
from __future__ import annotations

from .articles import reader_comment_nodes
from .boxes import (
    in_author_box,
    in_caption,
    in_comment_form,
    in_consent_notice,
    in_credit_line,
    in_like_button,
    in_page_chrome,
    in_paywall_prompt,
    in_related_box,
    in_signup_box,
    is_share_heading,
)
from .bylines import byline_line_nodes, headline_node
from .comments import comments_are_content, in_comments
from .decision import Decision, explain, relevant_mask
from .duplicates import layout_duplicates
from .markup import for_screen_readers_only, in_form_control, is_relevant, settled
from .products import in_customer_reviews, is_product_page
from .region import main_region, standfirst_nodes
from .settings import (
    ARTICLE_RULES,
    ARTICLE_WORDS,
    AUTHOR_BOX_WORDS,
    BYLINE_KINDS,
    CAPTION_WORDS,
    CHROME_WORDS,
    COMMENT_FORM_WORDS,
    COMMENT_WORDS,
    CONSENT_WORDS,
    CREDIT_WORDS,
    FALLBACK_SHARE,
    FORM_CONTROL_TAGS,
    KEPT,
    LEAD_WORDS,
    LIKE_WORDS,
    MAIN_REGION_SHARE,
    OPTIONAL_RULES,
    PAGE_BEST_SHARE,
    PAYWALL_WORDS,
    REASONS,
    RELATED_WORDS,
    SCREEN_READER_CLASSES,
    SIGNUP_WORDS,
    STANDFIRST_WORDS,
    TEASER_ITEMS,
)

__all__ = ["ARTICLE_RULES", "ARTICLE_WORDS", "AUTHOR_BOX_WORDS", "BYLINE_KINDS", "CAPTION_WORDS", "CHROME_WORDS",
           "COMMENT_FORM_WORDS", "COMMENT_WORDS", "CONSENT_WORDS", "CREDIT_WORDS", "FALLBACK_SHARE",
           "FORM_CONTROL_TAGS", "KEPT", "LEAD_WORDS", "LIKE_WORDS", "MAIN_REGION_SHARE", "OPTIONAL_RULES",
           "PAGE_BEST_SHARE", "PAYWALL_WORDS", "REASONS", "RELATED_WORDS", "SCREEN_READER_CLASSES", "SIGNUP_WORDS",
           "STANDFIRST_WORDS", "TEASER_ITEMS", "Decision", "byline_line_nodes", "comments_are_content", "explain",
           "for_screen_readers_only", "headline_node", "in_author_box", "in_caption", "in_comment_form", "in_comments",
           "in_consent_notice", "in_credit_line", "in_customer_reviews", "in_form_control", "in_like_button",
           "in_page_chrome", "in_paywall_prompt", "in_related_box", "in_signup_box", "is_product_page", "is_relevant",
           "is_share_heading", "layout_duplicates", "main_region", "reader_comment_nodes", "relevant_mask", "settled",
           "standfirst_nodes"]
