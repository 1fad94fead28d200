"""Weak labels from must-keep / must-drop snippets (data.snippets): the reader, the split that follows the
labelled sets, the masked loss, and training and evaluating a mix with a snippet set, on invented pages."""
from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
from _model_helpers import TINY
from conftest import cli

from edrew_scrapy.data import snippets
from edrew_scrapy.data.mix import DatasetSpec, load_mixed, parse_spec, split_per_dataset
from edrew_scrapy.data.splits import by_domain
from edrew_scrapy.model.elmo import default_options

torch.set_num_threads(1)

PAGE = """<html><head><title>{title}</title></head><body>
<nav><a href="/">Home</a> <a href="/news">News</a> <a href="/sport">Sport</a></nav>
<article><h1>{title}</h1>
<p>The town council of {town} voted on Tuesday to keep the old harbour lights burning through the winter.</p>
<p>Repairs to the north lamp of {town} will cost about four thousand pounds from the harbour fund.</p>
<p>The keeper, who has tended the lamps for thirty years, said she would start on the lenses next week.</p>
</article>
<aside><h2>Latest news</h2><p>Ferry timetable changes for the spring season</p></aside>
<footer><p>Copyright the {town} Gazette. All rights reserved.</p></footer>
</body></html>"""


def _record(i: int, **extra) -> dict:
    return dict({"file": f"p{i}.html", "url": f"https://town{i}.example/story", "group": f"town{i}.example",
                 "with_snippets": ["voted on Tuesday to keep", "the keeper, who has tended"],
                 "without_snippets": ["All rights reserved", "Ferry timetable changes"]}, **extra)


def write_snippet_set(root: Path, records) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for r in records:
        name = r["file"]
        town = name.split(".")[0]
        (root / name).write_text(PAGE.format(title=f"Harbour lights of {town}", town=town), encoding="utf-8")
    path = root / "pages.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_a_node_holding_a_snippet_is_labelled_and_every_other_node_unlabelled():
    texts = ["Home", "The keeper, who has tended the lamps.", "All rights reserved.", "Ferry timetable",
             "keep it, then: all rights reserved"]
    labels, known, unmatched, conflicts = snippets.snippet_labels(
        texts, keep=["the keeper who has tended", "keep it then", "not on the page"],
        drop=["All rights reserved", "  ...  "])
    assert known == [0, 1, 1, 0, 0]  # node 4 holds one of each kind: unlabelled
    assert labels[:3] == [0, 1, 0]
    assert (unmatched, conflicts) == (1, 1)  # a snippet without a word is no snippet


def test_a_snippet_with_soft_hyphens_finds_the_node_the_serializer_wrote_without_them():
    from edrew_scrapy.serializer import serialize

    texts = [n.content for n in serialize("<body><p>Home</p><p>Der Klima&shy;wandel trifft alle.</p></body>").nodes]
    labels, known, unmatched, _ = snippets.snippet_labels(texts, keep=["Kli\u00adma\u00adwandel trifft"], drop=[])
    assert (labels, known, unmatched) == ([0, 1], [0, 1], 0)


def test_reader_labels_snippet_nodes_and_skips_pages_whose_snippet_matches_no_node(tmp_path):
    records = [_record(0), _record(1, with_snippets=["voted on Tuesday to keep", "a sentence on no page"]),
               _record(2, with_snippets=[], without_snippets=[])]
    path = write_snippet_set(tmp_path / "set", records)
    stats = snippets.SnippetStats()
    pages = list(snippets.iter_pages(tmp_path / "set", path, stats=stats))
    assert [p.page_id for p in pages] == ["p0.html", "p1.html", "p2.html"]
    first = pages[0]
    assert first.meta["weak"] and not first.meta["weak_skipped"] and first.group == "town0.example"
    marked = {n.content: (y, k) for n, y, k in zip(first.page.nodes, first.labels, first.known)}
    assert marked["The keeper, who has tended the lamps for thirty years, said she would start on the lenses "
                  "next week."] == (1, 1)
    assert marked["Ferry timetable changes for the spring season"] == (0, 1)
    assert marked["Home"] == (0, 0)  # said nothing about: unlabelled
    assert sum(first.known) == 4 and sum(first.labels) == 2
    assert pages[1].meta["weak_skipped"] and not any(pages[1].known)  # kept for splits, labels none
    assert not any(pages[2].known)
    assert stats.as_dict() == {"pages": 3, "labelled_pages": 1, "skipped_unmatched": 1, "without_snippets": 1,
                               "positive_nodes": 2, "negative_nodes": 2, "conflicting_nodes": 0}


def test_reader_names_a_record_whose_snippets_are_not_strings(tmp_path):
    path = write_snippet_set(tmp_path / "set", [_record(0, with_snippets="one string")])
    with pytest.raises(ValueError, match="with_snippets must be a list of strings"):
        list(snippets.iter_pages(tmp_path / "set", path))


def test_a_mix_reads_a_snippet_set_and_counts_it(tmp_path):
    path = write_snippet_set(tmp_path / "set", [_record(0), _record(1)])
    spec = parse_spec(f"weak=snippets:{path}")
    assert (spec.kind, spec.labels, spec.name) == ("snippets", path, "weak")
    stats = {}
    pages = load_mixed([spec], progress=False, stats=stats)
    assert {p.meta["dataset"] for p in pages} == {"weak"} and all(p.known is not None for p in pages)
    assert stats["weak"].labelled_pages == 2


def _pages(spec, weak=()):
    return [SimpleNamespace(meta={"dataset": d, "weak": d in weak}, group="", domain=h) for d, h in spec]


def test_a_weak_set_moves_no_page_of_the_labelled_sets_and_follows_their_sides():
    labelled = [("a", f"a{i}.test") for i in range(40)] + [("b", f"b{i}.test") for i in range(10)]
    before = split_per_dataset(_pages(labelled), by_domain, 0.1, 0.2, seed=1)
    test_hosts = {labelled[i][1] for i in before[2]}
    train_hosts = {labelled[i][1] for i in before[0]}
    shared_test, shared_train = sorted(test_hosts)[0], sorted(train_hosts)[:3]
    weak = [("w", f"w{i}.test") for i in range(50)] + [("w", shared_test)] + [("w", h) for h in shared_train]
    pages = _pages(labelled + weak, weak={"w"})
    train, val, test = split_per_dataset(pages, by_domain, 0.1, 0.2, seed=1)
    n = len(labelled)
    assert [[i for i in side if i < n] for side in (train, val, test)] == [list(s) for s in before]
    side = {pages[i].domain: name for name, idx in (("train", train), ("val", val), ("test", test)) for i in idx}
    assert side[shared_test] == "test" and all(side[h] == "train" for h in shared_train)
    held = sum(i >= n for i in test)
    assert 0.2 * len(weak) <= held <= 0.2 * len(weak) + 1
    assert sum(i >= n for i in val) >= 0.1 * len(weak)
    assert split_per_dataset(pages, by_domain, 0.1, 0.2, seed=1) == (train, val, test)


def test_unlabelled_nodes_weigh_nothing_in_the_head_loss(tmp_path):
    # the same pages with the labels of their unlabelled nodes flipped train exactly the same head
    from edrew_scrapy.model.elmo import ElmoBiLm
    from edrew_scrapy.model.head import Head, head_config
    from edrew_scrapy.training.head_training import encode_pages, train_head

    path = write_snippet_set(tmp_path / "set", [_record(i) for i in range(4)])
    pages = list(snippets.iter_pages(tmp_path / "set", path))
    torch.manual_seed(0)
    bilm = ElmoBiLm(default_options(**TINY))

    def run(labels):
        enc = encode_pages(bilm, [p.page for p in pages], labels, progress=False, known=[p.known for p in pages])
        torch.manual_seed(3)
        head = Head(head_config("d", bilm.output_dim, bilm.num_layers, TINY["projection_dim"]))
        state, curves, _ = train_head(head, enc, [0, 1, 2], [3], lambda probs: 0.5, epochs=2, minutes=5, seed=1,
                                      progress=False)
        return state, curves["train_loss"].values

    as_read, loss = run([p.labels for p in pages])
    flipped = [[y if k else 1 - y for y, k in zip(p.labels, p.known)] for p in pages]
    again, loss_again = run(flipped)
    assert loss == loss_again and all(torch.equal(as_read[k], again[k]) for k in as_read)
    full = encode_pages(bilm, [p.page for p in pages], flipped, progress=False)  # no mask: every node counts
    assert all(bool((item["w"] > 0).all()) for item in full.pages)


def _mix_with_weak_set(tmp_path):
    from test_model_train import write_dataset

    (tmp_path / "full").mkdir()
    write_dataset(tmp_path / "full", n=10)
    path = write_snippet_set(tmp_path / "weak", [_record(i) for i in range(10)]
                             + [_record(10, with_snippets=["on no page whatsoever"])])
    return (DatasetSpec("full", "simple", tmp_path / "full", tmp_path / "full" / "labels.jsonl"),
            parse_spec(f"weak=snippets:{path}"))


def _train_mix(tmp_path):
    """(model folder, specs, summary) of a head trained on a labelled set and a snippet set."""
    from edrew_scrapy.training.train import TrainConfig, train

    specs = _mix_with_weak_set(tmp_path)
    cfg = TrainConfig(dataset="mix", path=tmp_path, out=tmp_path / "model", variants=("d",), datasets=specs,
                      pretrain_steps=4, pretrain_minutes=1, max_minutes=2, epochs=2, seed=5, val_fraction=0.2,
                      test_fraction=0.2, options=default_options(**TINY), progress=False)
    return tmp_path / "model", specs, train(cfg)


def test_training_on_a_mix_with_weak_labels_holds_out_but_never_scores_them(tmp_path):
    _model, _specs, summary = _train_mix(tmp_path)
    card = json.loads((tmp_path / "model" / "card.json").read_text())
    training = card["training"]
    assert set(training["test_pages"]) == {"full", "weak"} and training["test_pages"]["weak"]["pages"] >= 2
    weak = training["weak_labels"]["weak"]
    assert (weak["pages"], weak["skipped_unmatched"], weak["labelled_pages"]) == (11, 1, 10)
    assert "left out of the loss" in weak["rule"]
    assert [s["name"] for s in training["datasets"]] == ["full", "weak"]
    assert sum(training["datasets"][1][side] for side in ("train", "val", "test")) == 11
    # no weak page in the card's metrics: they have no reference text
    assert not any(key.endswith("/weak") for key in card["metrics"])
    assert card["metrics"]["test"]["pages"] == training["test_pages"]["full"]["pages"]
    assert summary["variants"]["d"]["threshold"] == card["threshold"]


def test_evaluate_scores_snippets_on_the_pages_a_model_held_out(tmp_path, capsys):
    model, (full, weak), _summary = _train_mix(tmp_path)
    card = json.loads((model / "card.json").read_text())
    sets = ["--dataset", f"full=simple:{full.labels}", "--dataset", f"weak=snippets:{weak.labels}"]
    out = tmp_path / "out"
    status, err = cli(capsys, "evaluate", *sets, "--snippets", "--split", "holdout", "--model", str(model),
                      "--test-fraction", "0.2", "--val-fraction", "0.2", "--seed", "5", "--extractors", "all-nodes",
                      "--out", str(out), "--no-progress")
    assert status == 0, err
    rows = {r["extractor"]: r for r in json.loads((out / "snippets.json").read_text())["snippets"]}
    assert rows["edrew"]["pages"] == card["training"]["test_pages"]["weak"]["pages"]
    # another seed holds out other pages than the model did: refused rather than scored on its training pages
    status, err = cli(capsys, "evaluate", *sets, "--snippets", "--split", "holdout", "--model", str(model),
                      "--test-fraction", "0.2", "--val-fraction", "0.2", "--seed", "6", "--extractors", "none",
                      "--out", str(tmp_path / "out2"), "--no-progress")
    assert status == 2 and "other pages" in err
    # word-F1 against a weak set's few snippet nodes would say nothing
    status, err = cli(capsys, "evaluate", *sets, "--split", "none", "--model", str(model), "--extractors", "none",
                      "--out", str(tmp_path / "out3"), "--no-progress")
    assert status == 2 and "weak labels have no reference text" in err
