"""The decision rules' names and thresholds, in one place: the reasons explain() gives and the rules that can
be left out, the page-level shares and word counts, the markup that settles a node, and the class words and
word limits of each rule against an article's surroundings. Evidence for each value: docs/method-choices.md,
"Decision rules after scoring", and the entries of docs/experiments/ it names.
"""
from __future__ import annotations

import re

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


# The rules that relevant_mask(off=...) and explain(off=...) can leave out: the article rules by the reason
# they give, the main region's widening to the text after the headline (_holding_lead) and the standfirst
# kept beside the region (standfirst_nodes).
ARTICLE_RULES = ("reader-comments", "comment-forms", "page-chrome", "like-buttons", "share-headings", "related-boxes",
                 "signup-boxes", "credit-lines", "consent-notices", "paywall-prompts", "author-boxes", "captions",
                 "byline-lines")
OPTIONAL_RULES = ARTICLE_RULES + ("headline-lead", "standfirst", "paragraph-region")


# A main-content model's threshold on a page is never above this share of the page's best score: what
# scores at least half as high as the page's best node is kept (see relevant_mask). With a card threshold
# of 0.5 or more, as the shipped default's, that is the decision on every page.
PAGE_BEST_SHARE = 0.5
# PAGE_BEST_SHARE's former name, for code that still imports it
FALLBACK_SHARE = PAGE_BEST_SHARE
# The share of a page's kept words that its main region must hold; why 0.7: docs/method-choices.md,
# "Decision rules after scoring".
MAIN_REGION_SHARE = 0.7
# Headings: each one paragraph to the main region; the chrome rule spares them, the share-heading rule wants them.
_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
# Elements that hold one paragraph of text: a main region is the element around paragraphs, never one of them.
_PARAGRAPH_TAGS = frozenset({"p", "blockquote", "li", "dd", "pre", "figcaption"}) | _HEADINGS
# A kept node of at least this many words is the start of the text a page's headline introduces (the lead).
LEAD_WORDS = 20
# A region with kept linked headings in this many of its children is a list of other pages (teasers).
TEASER_ITEMS = 3
# A kept node between the headline and the main region with this many words is prose (a standfirst), not a
# byline or a dateline ("By Ann Smith · March 3, 2026"): the lead's length (LEAD_WORDS).
STANDFIRST_WORDS = LEAD_WORDS


# Form controls: a reader does not read a drop-down's options (a shop's list of countries), the
# caption of a button or the label of a field as the page's content. <textarea> is not here: forum pages
# put the text of a post being quoted or edited in one.
FORM_CONTROL_TAGS = frozenset({"select", "option", "optgroup", "button", "label", "legend"})
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


# Words that name a reader-comment section in a class, id or custom tag name (WordPress "comment-list",
# "comment-body" and its #respond form, Disqus, "user-comments"); "commentary" (an opinion column) and
# "no-comments" are not sections.
COMMENT_WORDS = ("comment", "disqus", "respond")
_COMMENT_TOKEN = re.compile(r"comment(?!ary)|disqus|^respond$|^replies$")
_NOT_COMMENT = re.compile(r"no-?comments?|comments?-?(?:count|link|number|num)|commentary")
# An article's own text before its reader comments: this many kept words outside the comment section, ahead
# of the thread's first comment, make the page an article with a thread, however long the thread. A link
# aggregator's or a forum's thread opens with a title, a link and a line before the posts its markup calls
# comments; a blog post of one or two paragraphs (a photo, a quote, a workout) already says more, and a forum
# whose opening post stands apart from the replies' markup has that post for its text, not the replies.
ARTICLE_WORDS = 50
# Comment-marked nodes this short do not start the thread: a "23" comment-count link in a byline, a
# "Comments" feed icon, a "57 Comments" heading or a commenter's name.
_THREAD_START_WORDS = 5


# The lines of an article's top that the item gives in fields of their own (`headline`, `author`,
# `date_published`, read from the same lines) and that news sets' references leave out of its text; the
# kinds this rule drops (evidence: docs/method-choices.md, "Decision rules after scoring").
BYLINE_KINDS = ("headline", "byline", "dateline")


# How far up the chrome rule looks: the node's element and its two nearest ancestors. A class on a whole
# post's wrapper further up ("social-article") says nothing about one button.
_NEAR_ELEMENTS = 3
# Class words of the chrome around an article that is not its text: share and print bars ("share-bar",
# "social", AddThis, Shariff, "article-tools", "actionbar") and a photo gallery's controls ("gallery",
# "slideshow", "lightbox", PhotoSwipe's "pswp", "carousel": "Image 1 of 4", "Close", "Next").
_CHROME_TOKEN = re.compile(r"(?:^|[-_])(?:share|shares|sharing|sharebar|social|socials|addthis|sharethis|shariff|"
                           r"print|tools|toolbar|actionbar|gallery|slideshow|lightbox|pswp|carousel|"
                           r"slider|swiper)(?:[-_]|$)")
_NOT_CHROME = re.compile(r"share-?price")  # a stock's price on a finance page
# Chrome is a button or a counter: a caption of five words or more under a gallery class is left to the model.
CHROME_WORDS = 4
# Class words of the boxes that point away from an article: related, recommended and recent posts (WordPress's
# Jetpack "jp-relatedposts", YARPP's "yarpp-related", "related-coverage", "widget_recent_entries").
_RELATED_TOKEN = re.compile(r"(?:^|[-_])(?:related|relatedposts|yarpp|recommended|recommendations|recent|"
                            r"more-stories|morestories|also-read)(?:[-_]|$)")
# A related box's heading or a teaser's linked title is short; a text longer than this is left to the model.
RELATED_WORDS = 12
# Class words of a reader-comment reply form (WordPress's "comment-respond" / "comment-reply-title" / "comment-form",
# the "respond" anchor): its heading ("Leave a Comment", "Kommentieren") and its notes ("Your email address will not
# be published") are no one's text, even on a page whose comments are its content.
_COMMENT_FORM_TOKEN = re.compile(r"comment-?respond|comment-?form|reply-?title|^respond$")
# A reply form's heading and notes are short; a longer text under such a class is left to the other rules.
COMMENT_FORM_WORDS = 30
# Class words of a like button or a likes counter (Jetpack's "likes-text" / "wpl-likebox", a "like-button"):
# "%d Bloggern gefällt das:", "Like this:", "12 likes".
_LIKE_TOKEN = re.compile(r"(?:^|[-_])(?:likes?|likebox|like-?button|wpl-likebox)(?:[-_]|$)")
# A like line is a few words; a longer text under such a class is left to the model.
LIKE_WORDS = 6
# Class words of a newsletter or subscription sign-up box ("newsletter-box", WordPress.com's "blog-subscribe",
# "optin-form"): its pitch, its consent line and its messages are not the article.
_SIGNUP_TOKEN = re.compile(r"(?:^|[-_])(?:newsletter|newsletters|newsletterbox|subscribe|subscription|signup|sign-up|"
                           r"optin|opt-in)(?:[-_]|$)")
# A sign-up box says little; a longer text under such a class (a newsletter's own issue) is left to the model.
SIGNUP_WORDS = 30
# Class words of a photo's credit line and of copyright lines ("image-credit", "bi-content-image-copyright",
# "media-caption__source", "Bildquelle"): an agency's or photographer's name, never the article's words.
_CREDIT_TOKEN = re.compile(r"(?:^|[-_])(?:copyright|copyrights|credit|credits|captioncredit|photocredit|imagecredit|"
                           r"fotocredit|bildquelle|bildnachweis|(?:picture|image|photo|foto|bild|img|caption)[-_]*"
                           r"(?:source|quelle))(?:[-_]|$)")
# A credit line names a few people and agencies; a longer text under such a class is left to the model.
CREDIT_WORDS = 20
# Class words of a consent notice or of the placeholder that stands for an embed until the reader agrees
# ("oembed-placeholder", "sourcepoint__social-placeholder", Borlabs' "_brlbs-content-blocker", "cookie-notice").
_CONSENT_TOKEN = re.compile(r"(?:^|[-_])(?:consent|gdpr|cookie-?(?:banner|notice|consent|bar|policy|law|message|"
                            r"popup|hint)|content-?blocker|_?brlbs|embed-?privacy|two-?click|(?:oembed|embed|social|"
                            r"external|iframe|privacy)-?placeholder)(?:[-_]|$)")
# A consent text explains what is sent where, often at length; an article's text is not under these classes.
CONSENT_WORDS = 120
# Class words of a paywall's or a registration wall's own parts ("ia-paywall__checkout", "tagespresse-paywall-footer",
# "registration-banner"): the pitch, the price and the log-in link. A class "paywall" alone is not here: sites put
# it on the article's body that the wall covers.
_PAYWALL_TOKEN = re.compile(r"(?:paywall|regwall|premium|subscriber|registration|register)[-_]+(?:header|footer|title|"
                            r"headline|description|checkout|form|button|login|cta|offer|box|banner|promo|message|"
                            r"prompt|modal|overlay|benefits?)")
# A wall's pitch is short; a longer text is left to the model.
PAYWALL_WORDS = 40
# Class words of an author box under or beside an article ("saboxplugin-desc", "author-bio", "about-the-author",
# "autor_short_desc"): who wrote it, not what it says.
_AUTHOR_BOX_TOKEN = re.compile(r"(?:^|[-_])(?:(?:author|autor|autorin|writer)[-_]*(?:bio|box|info|desc|description|"
                               r"about|profile|details|short[-_]desc|card)|about[-_]*(?:the[-_]*)?author|saboxplugin|"
                               r"sabox)(?:[-_]|$)")
# An author box holds a short biography; a longer text under such a class is left to the model.
AUTHOR_BOX_WORDS = 80
# Class words of a photo's caption ("wp-caption-text", "image-caption", "media-caption", "Bildunterschrift"); a
# <figcaption> is one by its tag.
_CAPTION_TOKEN = re.compile(r"(?:^|[-_])(?:caption|captions|figcaption|figure-?caption|image-?caption|wp-caption-text|"
                            r"bildunterschrift|legende|legend)(?:[-_]|$)")
# A caption under a caption class says what a photo shows in a sentence or two; a longer text is left to the model.
CAPTION_WORDS = 60
# Class words of share bars whose heading the chrome rule leaves alone (it spares headings): Jetpack's
# "sharedaddy" / "sd-block" ("Share this:", "Teilen mit:", "Bewerten:") and the share words of _CHROME_TOKEN.
_SHARE_TOKEN = re.compile(r"(?:^|[-_])(?:share|shares|sharing|sharebar|sharedaddy|social|socials|addthis|sharethis|"
                          r"shariff|sd-block)(?:[-_]|$)")
