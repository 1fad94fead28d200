"""`edrew evaluate --rules-off`, `--comments` and `--reference-field`: each rule's paired effect on the same
pages, scored once, and the item's `comments` measured against a separated comments reference (dragnet's)."""
from __future__ import annotations

import json

import pytest
from conftest import cli

from edrew_scrapy.training import evaluate as ev

STORY = ["The council voted on Tuesday to rebuild the old bridge over the river by next spring.",
         "Work starts in March and the road stays open to buses and bicycles during the works.",
         "The mayor said the cost would be shared with the region and the national rail company."]
COMMENTS = ["About time, the old bridge has been shaking for years when the lorries cross it.",
            "Who pays for the buses while the works go on, the region or the town itself?"]
PAGE = """<html><head><title>Bridge</title>
<script type="application/ld+json">{"@type": "NewsArticle", "headline": "Bridge"}</script></head><body>
<div class="page"><article class="post"><h1>Council rebuilds the bridge</h1>
<p class="byline">By Ann Smith, city desk</p>""" + "".join(f"<p>{s}</p>" for s in STORY) + """</article>
<div id="comments" class="comments-area"><ol class="comment-list">""" + "".join(
    f'<li class="comment"><div class="comment-body"><p>{c}</p></div></li>' for c in COMMENTS) + """</ol></div>
</div></body></html>"""


@pytest.fixture
def dataset(tmp_path):
    root = tmp_path / "news"
    root.mkdir()
    records = []
    for i in range(3):
        (root / f"{i}.html").write_text(PAGE, "utf-8")
        records.append({"file": f"{i}.html", "url": f"https://paper{i}.example/bridge",
                        "main_content": "\n".join(STORY), "comments": "\n".join(COMMENTS) if i else ""})
    (root / "labels.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    return root


def test_rules_off_gives_paired_differences(dataset, tmp_path, capsys):
    from edrew_scrapy.model.scorer import load_model

    calls = []
    real = load_model("default")

    class Counting:  # the shipped model, counting its calls: the variants share one scoring per page
        threshold, region_share = real.threshold, real.region_share

        def score(self, pages, **kwargs):
            calls.append(len(pages))
            return real.score(pages, **kwargs)

    scorer = ev.ScoresOnce(Counting())
    extractors = {"edrew": ev.scorer_extractor(scorer),
                  "edrew-no-reader-comments": ev.scorer_extractor(scorer, rules_off=("reader-comments",)),
                  "edrew-comments": ev.scorer_extractor(scorer, comments=True)}
    from edrew_scrapy.data import simple

    pages = list(simple.iter_pages(dataset))
    results = ev.evaluate_pages(pages, extractors, progress=False)
    assert calls == [1, 1, 1]
    [row, overall] = ev.paired_differences(results, "edrew-no-reader-comments", "edrew")
    assert overall["group"] == "ALL" and overall["pages"] == 3 and overall["up"] == 3 and overall["down"] == 0
    assert overall["mean"] > 0 and overall["se"] >= 0

    out = tmp_path / "out"
    from edrew_scrapy.cli import main

    assert main(["evaluate", "--dataset", "simple", str(dataset), "--split", "none", "--model", "default",
                 "--extractors", "none", "--rules-off", "all", "--no-progress", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "edrew - edrew-no-reader-comments" in printed and "edrew - edrew-no-page-chrome" in printed
    paired = json.loads((out / "paired.json").read_text())
    assert {(r["base"], r["group"]) for r in paired} >= {("edrew-no-page-chrome", "ALL"),
                                                         ("edrew-no-reader-comments", "ALL")}
    summary = {r["extractor"]: r for r in json.loads((out / "summary.json").read_text())["summary"]
               if r["group"] == "ALL"}
    assert summary["edrew"]["word_p"] > summary["edrew-no-reader-comments"]["word_p"]


def test_comments_against_a_separated_reference(dataset, tmp_path, capsys):
    out = tmp_path / "out"
    status, err = cli(capsys, "evaluate", "--dataset", "simple", str(dataset), "--split", "none", "--model",
                      "default", "--extractors", "trafilatura-comments", "--comments", "--reference-field", "comments",
                      "--no-progress", "--out", str(out))
    assert status == 0 and "--reference-field comments: 2 of 3 pages have one" in err
    pages = {(r.split(",")[0], r.split(",")[2]): float(r.split(",")[5])
             for r in (out / "pages.csv").read_text().splitlines()[1:]}
    # the comments reference's pages: their comments found; the page without: its text is not comments
    assert pages[("1.html", "edrew-comments")] == pytest.approx(1.0)
    assert pages[("1.html", "edrew")] < 0.5  # the article's text shares only common words with its comments
    assert pages[("0.html", "edrew-comments")] == 0.0  # comments where the reference has none
    assert pages[("1.html", "trafilatura-comments")] > 0.5  # the peer: trafilatura's include_comments


def test_rules_off_and_comments_need_a_model(dataset, capsys):
    status, err = cli(capsys, "evaluate", "--dataset", "simple", str(dataset), "--rules-off", "page-chrome",
                      "--no-progress")
    assert status == 2 and "--rules-off and --comments score the --model given" in err
    status, err = cli(capsys, "evaluate", "--dataset", "simple", str(dataset), "--model", "default",
                      "--rules-off", "byline", "--no-progress")
    assert status == 2 and "unknown byline" in err
