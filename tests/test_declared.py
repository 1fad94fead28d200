"""declared.py: the schema.org and Open Graph types a page declares, and the kinds the model reads."""
from __future__ import annotations

from edrew_scrapy.declared import KINDS, MAX_TYPES, declared_kinds, declared_types
from edrew_scrapy.serializer import serialize

PRODUCT_PAGE = """<html><head>
<meta property="og:type" content=" Product ">
<script type="application/ld+json">{"@context": "https://schema.org", "@type": "Product", "name": "Kettle",
 "offers": {"@type" : "Offer", "price": "20"}, "review": [{"@type": ["Review", "CreativeWork"]}]}</script>
</head><body><h1>Kettle</h1><p>Boils water.</p></body></html>"""


def test_json_ld_types_in_order_with_arrays_and_spacing():
    assert declared_types(PRODUCT_PAGE) == ("product", "offer", "review", "creativework", "og:product")


def test_microdata_itemtype_and_og_type_with_attributes_in_any_order():
    html = ('<meta content="article" property="og:type">'
            '<div itemscope itemtype="https://schema.org/NewsArticle"><p>x</p></div>'
            "<div itemtype='http://schema.org/Person'></div>")
    assert declared_types(html) == ("newsarticle", "person", "og:article")


def test_full_schema_org_urls_in_json_ld():
    assert declared_types('{"@type": "http://schema.org/BlogPosting"}') == ("blogposting",)


def test_og_type_outside_a_meta_tag_is_not_a_declaration():
    html = '<p>we set og:type to "product"</p><meta name="og:type" content="website">'
    assert declared_types(html) == ("og:website",)


def test_nothing_declared():
    assert declared_types("<p>plain page</p>") == ()
    assert declared_types("") == ()
    assert declared_kinds(()) == (False,) * len(KINDS)


def test_broken_or_hostile_markup_is_bounded_and_never_raises():
    assert declared_types('{"@type": "Prod') == ()
    assert declared_types('<meta property="og:type" content="' + "x" * 1000 + '">') == ()
    many = "".join(f'{{"@type": "Type{i}"}}' for i in range(500))
    assert len(declared_types(many)) == MAX_TYPES
    assert declared_types('"@type": ' + "[" + '"A",' * 10_000) == ()  # an array too long to be one


def test_kinds():
    assert dict(zip(KINDS, declared_kinds(("product", "offer")))) == {
        "product": True, "article": False, "discussion": False, "collection": False}
    assert dict(zip(KINDS, declared_kinds(("og:product.group", "discussionforumposting", "og:article")))) == {
        "product": False, "article": True, "discussion": True, "collection": True}


def test_serialize_records_what_the_page_declares():
    assert serialize(PRODUCT_PAGE).declared == ("product", "offer", "review", "creativework", "og:product")
    assert serialize(PRODUCT_PAGE.encode("utf-8")).declared[0] == "product"
    assert serialize("<p>plain</p>").declared == ()
