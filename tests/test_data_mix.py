"""Several datasets at once: `--dataset NAME=KIND:PATH` for edrew train and edrew evaluate, the split per
dataset, the per-dataset report and the headline convention (data.mix). Small pages written here."""
from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from edrew_scrapy.cli import main
from edrew_scrapy.data.mix import DatasetSpec, credit_of, drop_title_line, parse_spec, split_per_dataset
from edrew_scrapy.data.splits import by_domain
from edrew_scrapy.training.evaluate import PageResult, summarize

torch.set_num_threads(1)

PAGE = """<html><head><title>{title} - {site}</title></head><body>
<nav class="menu"><ul><li><a href="/">Home</a></li><li><a href="/news">News</a></li></ul></nav>
<main><article><h1>{title}</h1>{paras}</article></main>
<aside class="related"><h3>Latest news</h3><ul><li><a href="/x">Other story one</a></li>
<li><a href="/y">Other story two</a></li></ul></aside>
<footer class="site-footer"><p>Copyright 2026 {site}</p><a href="/privacy">Privacy</a></footer>
</body></html>"""


def write_set(root: Path, prefix: str, n: int = 10, title_in_reference: bool = False, shared_host: str = ""):
    """A simple-format dataset of n article pages on n hosts (`shared_host`: the first page's host)."""
    root.mkdir(parents=True)
    records = []
    for i in range(n):
        host = shared_host if (shared_host and i == 0) else f"{prefix}{i}.test"
        title = f"Story {i} of {prefix} about the river"
        paras = [f"Paragraph {k} of story {i}: the river rose by {k + i} metres and the town of {prefix} "
                 f"watched it all night long." for k in range(3)]
        html = PAGE.format(title=title, site=host, paras="".join(f"<p>{p}</p>" for p in paras))
        (root / f"p{i}.html").write_text(html, encoding="utf-8")
        reference = "\n".join(([title] if title_in_reference else []) + paras)
        records.append({"file": f"p{i}.html", "url": f"http://{host}/story", "main_content": reference,
                        "page_type": "article" if i % 3 else "blog"})
    (root / "labels.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return root


def test_a_spec_names_its_kind_folder_and_label_file(tmp_path):
    assert parse_spec(f"wcxb:{tmp_path}") == DatasetSpec(tmp_path.name, "wcxb", tmp_path)
    assert parse_spec(f"news=simple:{tmp_path}") == DatasetSpec("news", "simple", tmp_path)
    spec = parse_spec(f"simple:{tmp_path}/real-pages.jsonl")
    assert (spec.name, spec.path, spec.labels) == ("real-pages", tmp_path, tmp_path / "real-pages.jsonl")
    assert parse_spec(f"simple:{tmp_path}/labels.jsonl").name == tmp_path.name
    for bad in ("wcxb", "swde:/x", "=simple:/x", "simple:"):
        with pytest.raises(ValueError):
            parse_spec(bad)


def test_known_sets_carry_their_licence_and_dragnet_may_not_train():
    assert credit_of(DatasetSpec("fundus-news", "simple", Path("/d/fundus-news")))["licence"] == "MIT"
    dragnet = credit_of(DatasetSpec("dragnet", "simple", Path("/d/dragnet")))
    assert (dragnet["licence"], dragnet["may_train_a_shipped_model"]) == ("AGPL-3.0", False)
    mine = credit_of(DatasetSpec("mine", "simple", Path("/d/mine")))
    assert mine["licence"] == "as given by the dataset's owner" and mine["may_train_a_shipped_model"]


def _pages(spec):
    """(dataset, host) pairs as pages split_per_dataset can read."""
    return [SimpleNamespace(meta={"dataset": d}, group="", domain=h) for d, h in spec]


def test_each_dataset_holds_out_its_own_share_and_no_domain_sits_on_two_sides():
    pages = _pages([("a", f"a{i}.test") for i in range(40)] + [("b", f"b{i}.test") for i in range(10)]
                   + [("a", "both.test"), ("b", "both.test"), ("b", "news.both.test")])
    train, val, test = split_per_dataset(pages, by_domain, 0.1, 0.2, seed=1)
    assert sorted(train + val + test) == list(range(len(pages)))
    for name, n in (("a", 41), ("b", 12)):
        held = sum(pages[i].meta["dataset"] == name for i in test)
        assert 0.2 * n <= held <= 0.2 * n + 3, (name, held)
        assert sum(pages[i].meta["dataset"] == name for i in val) >= 1
    sides = {}
    for side, idx in (("train", train), ("val", val), ("test", test)):
        for i in idx:
            sides.setdefault(by_domain(pages[i]), set()).add(side)
    assert all(len(s) == 1 for s in sides.values())  # both.test and news.both.test: one side together
    assert split_per_dataset(pages, by_domain, 0.1, 0.2, seed=1) == (train, val, test)
    assert split_per_dataset(pages, by_domain, 0.1, 0.2, seed=2) != (train, val, test)


def test_the_headline_line_is_dropped_only_where_the_reference_has_it():
    title = "Latest Amelia Earhart search falls short - CBS News"
    ref = "July 24, 2012 12:11 AM\nLatest Amelia Earhart search falls short\nThe expedition is on its way back."
    assert drop_title_line(ref, title) == "July 24, 2012 12:11 AM\nThe expedition is on its way back."
    body = "The expedition is on its way back.\nIt found no wreckage.\nMore next year."
    assert drop_title_line(body, title) == body
    assert drop_title_line(ref, "") == ref


def test_summaries_of_a_mix_give_each_dataset_and_its_page_types_a_row():
    def r(dataset, group, f1):
        return PageResult("p", group, "x", f1, f1, f1, 1, 0, 0, 1, dataset)

    rows = summarize([r("a", "article", 1.0), r("a", "forum", 0.0), r("b", "article", 0.5)])
    by = {row["group"]: row for row in rows}
    assert set(by) == {"a", "a/article", "a/forum", "b", "ALL"}  # b has one type: no repeated row
    assert (by["a"]["word_f1"], by["b"]["word_f1"], by["a/forum"]["pages"]) == (0.5, 0.5, 1)
    assert by["ALL"]["pages"] == 3


def test_training_on_a_mix_holds_out_each_set_and_evaluate_scores_exactly_those_pages(tmp_path, capsys):
    a = write_set(tmp_path / "a", "alpha", shared_host="shared.test")
    b = write_set(tmp_path / "b", "beta", shared_host="www.shared.test")
    extra = tmp_path / "unlabelled"
    extra.mkdir()
    (extra / "x.html").write_text(PAGE.format(title="Unlabelled", site="z.test", paras="<p>Only markup.</p>"))
    out = tmp_path / "model"
    assert main(["train", "--dataset", f"alpha=simple:{a}", "--dataset", f"simple:{b}/labels.jsonl",
                 "--out", str(out), "--test-fraction", "0.2", "--pretrain-steps", "2", "--epochs", "1",
                 "--features", "16", "--pretrain-extra", str(extra), "--no-progress"]) == 0
    card = json.loads((out / "card.json").read_text())
    sets = {d["name"]: d for d in card["training"]["datasets"]}
    assert set(sets) == {"alpha", "b"} and sets["b"]["path"] == str(b / "labels.jsonl")
    assert all(d["train"] and d["val"] and d["test"] for d in sets.values())
    assert {"test/alpha", "test/b", "validation/alpha", "validation/b"} <= set(card["metrics"])
    assert f"distinct reTPS of the HTML under {extra}" in card["training"]["pretrain"]["source"]
    [html] = card["training"]["pretrain"]["html"]  # the unlabelled folder, its pages and its owner's terms
    assert (html["path"], html["pages"], html["sequences"] > 0) == (str(extra), 1, True)
    assert html["licence"] == "as given by the pages' owners" and html["may_train_a_shipped_model"]
    assert set(card["training"]["test_pages"]) == {"alpha", "b"}
    capsys.readouterr()

    report = tmp_path / "report"
    common = ["evaluate", "--dataset", f"alpha=simple:{a}", "--dataset", f"simple:{b}/labels.jsonl",
              "--split", "holdout", "--model", str(out), "--extractors", "oracle", "--no-progress"]
    assert main(common + ["--out", str(report)]) == 0
    rows = json.loads((report / "summary.json").read_text())["summary"]
    pages = {(r["group"], r["extractor"]): r["pages"] for r in rows}
    assert pages[("alpha", "edrew")] == sets["alpha"]["test"] and pages[("b", "oracle")] == sets["b"]["test"]
    import csv

    with open(report / "pages.csv", encoding="utf-8") as f:
        tested = [row for row in csv.DictReader(f) if row["extractor"] == "edrew"]
    for name in ("alpha", "b"):  # a row per page type wherever a dataset's test pages hold two
        types = {row["group"] for row in tested if row["dataset"] == name}
        assert {g for g, e in pages if g.startswith(name + "/")} == ({f"{name}/{t}" for t in types}
                                                                     if len(types) > 1 else set())
    capsys.readouterr()
    # another seed holds out other pages: the model would be scored on pages it learnt from
    assert main(common + ["--out", str(tmp_path / "r2"), "--seed", "2"]) == 2
    assert "held out" in capsys.readouterr().err


def test_a_split_seed_holds_out_the_same_pages_for_heads_of_other_seeds(tmp_path, capsys):
    a = write_set(tmp_path / "a", "alpha", n=12)
    common = ["train", "--dataset", f"alpha=simple:{a}", "--test-fraction", "0.3", "--pretrain-steps", "2",
              "--epochs", "1", "--features", "16", "--no-progress"]
    cards = {}
    for name, seeds in (("s1", []), ("s2", ["--seed", "2", "--split-seed", "1"]), ("other", ["--seed", "2"])):
        assert main(common + ["--out", str(tmp_path / name)] + seeds) == 0
        cards[name] = json.loads((tmp_path / name / "card.json").read_text())["training"]
    assert cards["s2"]["test_pages"] == cards["s1"]["test_pages"] and cards["s2"]["split_seed"] == 1
    assert cards["other"]["test_pages"] != cards["s1"]["test_pages"] and "split_seed" not in cards["other"]
    # the held-out pages of the split seed are the ones evaluate draws with that seed
    assert main(["evaluate", "--dataset", f"alpha=simple:{a}", "--split", "holdout", "--test-fraction", "0.3",
                 "--model", str(tmp_path / "s2"), "--extractors", "none", "--no-progress",
                 "--out", str(tmp_path / "report")]) == 0
    capsys.readouterr()


def test_the_headline_convention_is_aligned_when_asked(tmp_path, capsys):
    from edrew_scrapy.commands.evaluate import drop_reference_titles
    from edrew_scrapy.data import simple
    from edrew_scrapy.training.evaluate import reference_text

    root = write_set(tmp_path / "titled", "gamma", n=4, title_in_reference=True)
    pages = list(simple.iter_pages(root))
    headline = [[n.content for n in lp.page.nodes].index(f"Story {i} of gamma about the river")
                for i, lp in enumerate(pages)]
    assert all(lp.labels[h] == 1 for lp, h in zip(pages, headline))
    assert drop_reference_titles(pages) == 4
    assert all(lp.labels[h] == 0 and reference_text(lp).startswith("Paragraph 0") for lp, h in zip(pages, headline))
    assert drop_reference_titles(pages) == 0  # the references now start with their text
    out = tmp_path / "report"
    assert main(["evaluate", "--dataset", f"simple:{root}", "--split", "none", "--extractors", "oracle",
                 "--reference-title", "drop", "--out", str(out), "--no-progress"]) == 0
    assert "left out of 4 of 4 references" in capsys.readouterr().err
    rows = {r["group"]: r for r in json.loads((out / "summary.json").read_text())["summary"]}
    assert rows["titled"]["word_f1"] == 1.0


@pytest.mark.parametrize("argv, message", [
    (["--dataset", "wcxb", "--dataset", "simple:{a}"], "a mix names each dataset as [NAME=]KIND:PATH"),
    (["--dataset", "simple:{a}", "{a}"], "the PATH argument goes with one --dataset KIND"),
    (["--dataset", "swde:{a}"], "unknown kind 'swde'"),
    (["--dataset", "simple:{a}/nosuch"], "is not a dataset folder"),
    (["--dataset", "x=simple:{a}", "--dataset", "x=simple:{a}"], "two datasets named 'x'"),
    (["--dataset", "simple:{a}", "--labels", "{a}/labels.jsonl"], "--labels do not apply to a mix"),
    (["--dataset", "nosuch"], "--dataset nosuch: choose from wcxb, swde, simple"),
])
def test_bad_dataset_options_are_usage_errors_before_any_work(tmp_path, capsys, argv, message):
    a = write_set(tmp_path / "a", "alpha", n=3)
    argv = [v.replace("{a}", str(a)) for v in argv]
    for command in (["train", "--out", str(tmp_path / "m")], ["evaluate", "--out", str(tmp_path / "e")]):
        assert main(command + argv + ["--no-progress"]) == 2
        assert message in capsys.readouterr().err
    assert not (tmp_path / "m").exists()


def test_evaluate_refuses_to_cross_validate_a_mix(tmp_path, capsys):
    a = write_set(tmp_path / "a", "alpha", n=3)
    assert main(["evaluate", "--dataset", f"simple:{a}", "--train-model", "--out", str(tmp_path / "e"),
                 "--no-progress"]) == 2
    assert "--split holdout --model" in capsys.readouterr().err


def test_a_limit_samples_each_dataset_before_reading_it(tmp_path, capsys):
    a = write_set(tmp_path / "a", "alpha", n=9)
    b = write_set(tmp_path / "b", "beta", n=4)
    (a / "p8.html").unlink()  # never read: the sample of three is p0, p3 and p6
    out = tmp_path / "report"
    assert main(["evaluate", "--dataset", f"simple:{a}", "--dataset", f"simple:{b}", "--limit", "3", "--split",
                 "none", "--extractors", "oracle", "--out", str(out), "--no-progress"]) == 0
    rows = {r["group"]: r["pages"] for r in json.loads((out / "summary.json").read_text())["summary"]}
    assert (rows["a"], rows["b"], rows["ALL"]) == (3, 3, 6)


def test_the_table_keeps_long_dataset_names_apart_from_the_extractor():
    from edrew_scrapy.training.evaluate import format_table

    row = {"group": "mozilla-readability/article", "extractor": "readability", "pages": 3, "word_p": 1.0,
           "word_r": 1.0, "word_f1": 1.0, "node_p": 1.0, "node_r": 1.0, "node_f1": 1.0}
    assert format_table([row]).splitlines()[2].split()[:3] == ["mozilla-readability/article", "readability", "3"]


def test_pretraining_html_folders_are_credited_by_their_set():
    from edrew_scrapy.data.mix import credit_of_folder

    shared = Path("/data/shared/datasets")
    assert credit_of_folder(shared / "trafilatura-eval-pages" / "html")["licence"] == "Apache-2.0"
    dragnet = credit_of_folder(shared / "dragnet" / "html")  # AGPL-3.0: a shipped biLM may not read it
    assert (dragnet["licence"], dragnet["may_train_a_shipped_model"]) == ("AGPL-3.0", False)
    assert credit_of_folder(shared / "fundus-news")["credit"].startswith("fundus")
    other = credit_of_folder(Path("/crawl/html"))  # an unknown set: its owners' terms, named by its folder
    assert (other["dataset"], other["licence"]) == ("html", "as given by the pages' owners")
