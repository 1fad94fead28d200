"""`edrew evaluate --also-model NAME=DIR` and `--paired`: other model folders scored on the same pages as
--model (a leave-one-dataset-out head beside the shipped default), with paired word-F1 differences."""
from __future__ import annotations

import csv
import hashlib
import json
import shutil

import pytest
from conftest import cli

from edrew_scrapy.model.files import model_directory

STORY = ["The council voted on Tuesday to rebuild the old bridge over the river by next spring.",
         "Work starts in March and the road stays open to buses and bicycles during the works.",
         "The mayor said the cost would be shared with the region and the national rail company."]
TEASERS = ["Read more: the new tram line opens", "Most read: weather warning for the weekend",
           "Sport: the city club wins again"]
PAGE = """<html><head><title>Bridge</title></head><body><div class="page">
<nav><ul>""" + "".join(f'<li><a href="/t{i}">{t}</a></li>' for i, t in enumerate(TEASERS)) + """</ul></nav>
<article class="post"><h1>Council rebuilds the bridge</h1>""" + "".join(f"<p>{s}</p>" for s in STORY) + """
</article><footer><p>Copyright the city paper, all rights reserved.</p></footer></div></body></html>"""


@pytest.fixture
def dataset(tmp_path):
    root = tmp_path / "news"
    root.mkdir()
    records = []
    for i in range(3):
        (root / f"{i}.html").write_text(PAGE, "utf-8")
        records.append({"file": f"{i}.html", "url": f"https://paper{i}.example/bridge",
                        "main_content": "\n".join(STORY)})
    (root / "labels.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    return root


@pytest.fixture
def inverted_model(tmp_path):
    """The shipped model with every head's output layer negated (card checksums updated): it ranks the
    page's nodes upside down, so on the same pages it keeps other text than the shipped model."""
    from safetensors.numpy import load_file, save_file

    folder = tmp_path / "inverted"
    shutil.copytree(model_directory("default"), folder)
    card = json.loads((folder / "card.json").read_text("utf-8"))
    for name in [entry["file"] for entry in card.get("heads", [])] or ["head.safetensors"]:
        head = folder / name
        weights = load_file(head)
        weights["out.3.weight"], weights["out.3.bias"] = -weights["out.3.weight"], -weights["out.3.bias"]
        save_file(weights, head)
        data = head.read_bytes()
        card["files"][name] = {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    (folder / "card.json").write_text(json.dumps(card), "utf-8")
    return folder


def _pages(out):
    with open(out / "pages.csv", encoding="utf-8") as f:
        return {(r["page_id"], r["extractor"]): float(r["word_f1"]) for r in csv.DictReader(f)}


def test_also_model_scored_beside_the_model_with_paired_differences(dataset, inverted_model, tmp_path, capsys):
    out = tmp_path / "out"
    status, err = cli(capsys, "evaluate", "--dataset", "simple", str(dataset), "--split", "none", "--model",
                      "default", "--also-model", "same=default", "--also-model", f"inverted={inverted_model}",
                      "--extractors", "trafilatura", "--paired", "--no-progress", "--out", str(out))
    assert status == 0, err
    pages = _pages(out)
    assert {e for _, e in pages} == {"edrew", "same", "inverted", "trafilatura"}
    for i in range(3):  # the same folder twice: the same text on every page
        assert pages[(f"{i}.html", "same")] == pages[(f"{i}.html", "edrew")]
    paired = {(r["base"], r["group"]): r for r in json.loads((out / "paired.json").read_text())
              if r["group"] == "ALL"}
    assert set(paired) == {("same", "ALL"), ("inverted", "ALL"), ("trafilatura", "ALL")}
    same = paired[("same", "ALL")]
    assert same["pages"] == 3 and same["mean"] == 0.0 and same["up"] == same["down"] == 0
    inverted = paired[("inverted", "ALL")]
    expected = sum(pages[(f"{i}.html", "edrew")] - pages[(f"{i}.html", "inverted")] for i in range(3)) / 3
    assert inverted["mean"] == pytest.approx(expected)
    assert inverted["mean"] > 0 and inverted["up"] == 3  # upside down it keeps the teasers, not the story
    assert paired[("trafilatura", "ALL")]["pages"] == 3


def test_without_paired_only_the_also_models_are_compared(dataset, tmp_path, capsys):
    out = tmp_path / "out"
    status, err = cli(capsys, "evaluate", "--dataset", "simple", str(dataset), "--split", "none", "--model",
                      "default", "--also-model", "shipped=default", "--extractors", "trafilatura", "--no-progress",
                      "--out", str(out))
    assert status == 0, err
    assert {r["base"] for r in json.loads((out / "paired.json").read_text())} == {"shipped"}


@pytest.mark.parametrize("argv, message", [
    (["--also-model", "shipped=default"], "compare with the --model given"),
    (["--paired"], "compare with the --model given"),
    (["--model", "default", "--also-model", "default"], "give NAME=DIR"),
    (["--model", "default", "--also-model", "a b=default"], "give NAME=DIR"),
    (["--model", "default", "--also-model", "trafilatura=default"], "is taken"),
    (["--model", "default", "--also-model", "edrew-x=default"], "is taken"),
    (["--model", "default", "--also-model", "a=default", "--also-model", "a=default"], "is taken"),
])
def test_bad_also_model_options_are_usage_errors(dataset, capsys, argv, message):
    status, err = cli(capsys, "evaluate", "--dataset", "simple", str(dataset), "--split", "none",
                      "--extractors", "trafilatura", "--no-progress", *argv)
    assert status == 2 and message in err


def test_a_missing_also_model_folder_is_named_before_any_page_is_read(dataset, tmp_path, capsys):
    out = tmp_path / "out"
    status, err = cli(capsys, "evaluate", "--dataset", "simple", str(dataset), "--split", "none", "--model",
                      "default", "--also-model", f"gone={tmp_path / 'missing'}", "--extractors", "none",
                      "--no-progress", "--out", str(out))
    assert status == 2 and "missing" in err
    assert not out.exists()
