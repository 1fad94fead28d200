"""Alignment of node texts to a reference text (WCXB labels) and value matching (SWDE labels)."""
from edrew_scrapy.data.align import AlignConfig, align_reference, match_values, word_f1

REFERENCE = """Why tomatoes split after heavy rain

Tomatoes split when the fruit takes up water faster than the skin can stretch.

Water evenly

Deep watering twice a week keeps the soil moisture steady. Bring the harvest home before a storm."""

LONG_1 = "Tomatoes split when the fruit takes up water faster than the skin can stretch."
LONG_2 = "Deep watering twice a week keeps the soil moisture steady. Bring the harvest home before a storm."


def test_content_nodes_in_order_are_relevant():
    nodes = ["Why tomatoes split after heavy rain", LONG_1, "Water evenly", LONG_2]
    assert align_reference(nodes, REFERENCE).labels == [1, 1, 1, 1]


def test_generic_short_strings_do_not_match_by_accident():
    # "home" occurs inside the main content, but the menu's "Home" is far from any match
    nodes = ["Home", "News", "Why tomatoes split after heavy rain", LONG_1, "Share", "Water evenly",
             LONG_2, "Home", "Contact"]
    labels = align_reference(nodes, REFERENCE).labels
    assert labels == [0, 0, 1, 1, 0, 1, 1, 0, 0]


def test_of_two_copies_the_one_next_to_the_content_is_labelled():
    # the menu's copy of the heading ties with the article's own: the chain goes through the copy
    # nearest to the text that follows it (on WCXB page 0693 the nav copy was labelled instead)
    nodes = ["Home", "Why tomatoes split after heavy rain", "Pricing", "Why tomatoes split after heavy rain",
             LONG_1, "Water evenly", LONG_2, "Share"]
    assert align_reference(nodes, REFERENCE).labels == [0, 0, 0, 1, 1, 1, 1, 0]
    # a copy after the content (a related-stories box) does not take the label from the heading
    nodes = ["Why tomatoes split after heavy rain", LONG_1, "Water evenly", LONG_2,
             "Why tomatoes split after heavy rain"]
    assert align_reference(nodes, REFERENCE).labels == [1, 1, 1, 1, 0]


def test_short_node_must_follow_a_match_closely():
    ref = "intro words here " + "filler " * 50 + "read more"
    cfg = AlignConfig(short_slack=5)
    nodes = ["intro words here", "read more"]
    assert align_reference(nodes, ref, config=cfg).labels == [1, 0]
    assert align_reference(nodes, ref, config=AlignConfig(short_slack=60)).labels == [1, 1]


def test_long_node_out_of_order_is_relevant_but_short_one_is_not():
    # the page shows the second paragraph and heading before the first paragraph
    nodes = ["Why tomatoes split after heavy rain", LONG_2, "Water evenly", LONG_1]
    labels = align_reference(nodes, REFERENCE).labels
    assert labels[0] == 1 and labels[1] == 1 and labels[3] == 1
    assert labels[2] == 0


def test_duplicated_block_is_counted_once():
    nodes = [LONG_1, LONG_1]
    assert align_reference(nodes, LONG_1).labels == [1, 0]


def test_partial_node_needs_half_of_its_words():
    nodes = [LONG_1 + " Read more", "Deep watering twice a week plus many other words that are not in the text at all"]
    labels = align_reference(nodes, REFERENCE).labels
    assert labels == [1, 0]


def test_without_snippets_are_negative_evidence():
    ref = "Share this article with your friends and family today please. Then the story begins here."
    nodes = ["Share this article with your friends and family today please.", "Then the story begins here."]
    assert align_reference(nodes, ref).labels == [1, 1]
    negatives = ["Share this article with your friends and family today please."]
    labels = align_reference(nodes, ref, negatives=negatives).labels
    assert labels == [0, 1]


def test_punctuation_and_case_do_not_matter():
    nodes = ["WHY Tomatoes split — after heavy rain!"]
    assert align_reference(nodes, REFERENCE).labels == [1]


def test_empty_inputs():
    assert align_reference([], REFERENCE).labels == []
    assert align_reference(["Home", ""], "").labels == [0, 0]
    assert align_reference(["…"], REFERENCE).labels == [0]


def test_match_values_equal_and_contains_rules():
    nodes = ["ISBN-13: 9780316125581", "Pub. Date: June 2010", "Game Over",
             "Copyright 2008, all rights reserved by the authors of this book", "12008", "by Fern Michaels"]
    values = {"isbn_13": [": 9780316125581"], "publication_date": [": June 2010"], "title": ["Game Over"],
              "year": ["2008"], "author": ["Fern Michaels"]}
    labels, attrs = match_values(nodes, values)
    assert labels == [1, 1, 1, 0, 0, 1]
    assert attrs[0] == ["isbn_13"] and attrs[1] == ["publication_date"] and attrs[2] == ["title"]
    assert attrs[5] == ["author"]


def test_match_values_ratio_rule_and_exact_only():
    from edrew_scrapy.data.align import ValueMatchConfig

    nodes = ["by Glenn Beck and Kevin Balfe and Emily Bestler and Jack Henderson"]
    values = {"author": ["Glenn Beck", "Kevin Balfe", "Emily Bestler", "Jack Henderson"]}
    # four values, 48 of 64 characters (>= 60 %) although 4 other words remain
    assert match_values(nodes, values)[0] == [1]
    assert match_values(nodes, values, ValueMatchConfig(min_ratio=0.8))[0] == [0]
    # one value inside a sentence is a mention, however much of the text it is
    mention = ['Read all Questions/Answers for "Know Your Bible: All 66 Books Explained and Applied"']
    assert match_values(mention, {"title": ["Know Your Bible: All 66 Books Explained and Applied"]})[0] == [0]
    assert match_values(["ISBN-13: 9780316125581"], {"isbn": ["9780316125581"]},
                        ValueMatchConfig(allow_contains=False))[0] == [0]


def test_a_value_before_a_colon_heads_the_node():
    # SWDE's booksamillion gives a title without its subtitle; its heading shows both. A value inside
    # other text, or followed by a colon at a word's middle, is still not a match.
    nodes = ["Eat, Pray, Love : One Woman's Search for Everything Across Italy, India and Indonesia (Paperback)",
             "Fit to Be Tied: Making Marriage Last a Lifetime, a study guide for couples and groups",
             "Readers of Eat, Pray, Love : One Woman's Search for Everything also bought these books",
             "Eat, Pray, Loveless: a parody of the book", "Eat, Pray, Love :",
             "What Difference Do It Make? : Stories of Hope and Healing (Hardcover)",
             "Game Over (Audio Compact Disc - Unabridged)", "Game Over (the sequel) and three more books by the author"]
    values = {"title": ["Eat, Pray, Love", "Fit to Be Tied", "What Difference Do It Make?", "Game Over"]}
    assert match_values(nodes, values)[0] == [1, 1, 0, 0, 1, 1, 1, 0]


def test_a_value_that_ends_in_punctuation_heads_the_node_too():
    # the value's key loses its closing ")" or quote with the edge punctuation; the node still has it
    nodes = ["Plum Boxed Set 2 (4, 5, 6): Four to Score, High Five, Hot Six",
             '"Wait!" : a novel of the sea', "Plum Boxed Set 2 (4, 5, 6) (Paperback)",
             "Plum Boxed Set 2 (4, 5, 6)x: not a subtitle", "C#: A Beginner's Guide",
             "C++ : The Complete Reference for Programmers"]
    values = {"title": ["Plum Boxed Set 2 (4, 5, 6)", '"Wait!"', "C"]}
    # only closing marks: "C#" and "C++" are other words than the title "C"
    assert match_values(nodes, values)[0] == [1, 1, 1, 0, 0, 0]


def test_the_share_rule_counts_distinct_values_not_repeats():
    # one title named twice in a link is still one value: a mention, as with one occurrence
    title = "Know Your Bible: All 66 Books Explained and Applied"
    twice = [f'Read all Questions/Answers for "{title}" and "{title}"']
    assert match_values(twice, {"title": [title]})[0] == [0]


def test_match_values_unescapes_and_ignores_null():
    labels, attrs = match_values(["Lantern & Sons", "<NULL>", "x"],
                                 {"publisher": ["Lantern &amp; Sons"], "date": ["<NULL>", ""]})
    assert labels == [1, 0, 0]
    assert attrs == [["publisher"], [], []]


def test_node_carrying_two_attributes_keeps_both():
    labels, attrs = match_values(["Northwind"], {"publisher": ["Northwind"], "brand": ["northwind"]})
    assert labels == [1] and attrs == [["publisher", "brand"]]


def test_word_f1_multiset():
    assert word_f1("a a b", "a b b") == (2 / 3, 2 / 3, 2 / 3)
    assert word_f1("", "") == (1.0, 1.0, 1.0)
    assert word_f1("x", "") == (0.0, 0.0, 0.0)
    assert word_f1("Hello, WORLD!", "hello world") == (1.0, 1.0, 1.0)
    p, r, f = word_f1("the cat", "the cat sat down")
    assert (p, r) == (1.0, 0.5) and abs(f - 2 / 3) < 1e-12


def test_match_values_several_values_and_fields():
    labels, attrs = match_values(
        ["by Glenn Beck and Kevin Balfe and Emily Bestler", "Value Books / 2008 / Paperback",
         "Foreign Influence : A Thriller (Hardcover)",
         "Value Books sells many books about the events of 2008 and more"],
        {"author": ["Glenn Beck", "Kevin Balfe", "Emily Bestler"], "publisher": ["Value Books"],
         "date": ["2008"], "title": ["Foreign Influence"]})
    assert labels == [1, 1, 1, 0]
    assert attrs[0] == ["author"] and attrs[1] == ["publisher", "date"] and attrs[2] == ["title"]


def test_match_values_label_value_lists_but_not_urls():
    nodes = ["Dimensions: 6.88 X 4.19 (inches) ISBN: 1602600155 ISBN-13: 9781602600157 Availability: In Stock",
             "http://www.christianbook.com/know-your-bible/paul-kent/9781602600157/pd/600150",
             "Format: Paperback Number of Pages: 96 Vendor: Value Books Publication Date: 2008"]
    labels, attrs = match_values(nodes, {"isbn_13": ["9781602600157"], "publisher": ["Value Books"],
                                         "date": ["2008"]})
    assert labels == [1, 0, 1]
    assert attrs[2] == ["publisher", "date"]


def test_a_year_is_not_the_date_of_a_full_date():
    # christianbook's customer reviews are dated "October 28, 2010"; the book's publication_date is "2010"
    nodes = ["October 28, 2010", "28 Oct 2010", "Reviewed 2010-10-28", "Published October 2010",
             "Value Books / 2010 / Paperback", "Publication Date: 2010", "2010"]
    labels, _ = match_values(nodes, {"publication_date": ["2010"]})
    assert labels == [0, 0, 0, 1, 1, 1, 1]
    # a full date as the value still matches itself
    assert match_values(["October 28, 2010"], {"publication_date": ["October 28, 2010"]})[0] == [1]
