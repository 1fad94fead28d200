"""`edrew evaluate --train-model`: per-split training through edrew train's entry point."""
import json
from pathlib import Path

import pytest

from edrew_scrapy.commands.evaluate import write_subset
from edrew_scrapy.data import simple, swde, wcxb

DATA = Path(__file__).parent / "fixtures" / "data"


@pytest.mark.parametrize("dataset,reader", [("wcxb", wcxb), ("swde", swde), ("simple", simple)])
def test_write_subset_reads_back_the_same_pages(tmp_path, dataset, reader):
    pages = list(reader.iter_pages(DATA / dataset))
    chosen = pages[::2]
    folder = write_subset(dataset, chosen, tmp_path / "subset")
    again = list(reader.iter_pages(folder))
    assert [p.page_id for p in again] == [p.page_id for p in chosen]
    assert [p.labels for p in again] == [p.labels for p in chosen]


def test_cli_train_model_per_split(tmp_path, capsys):
    pytest.importorskip("torch")
    from edrew_scrapy.cli import main

    rc = main(["evaluate", "--dataset", "swde", str(DATA / "swde"), "--split", "cross-site",
               "--extractors", "oracle", "--train-model", "--train-minutes", "0.05", "--out", str(tmp_path),
               "--no-progress"])
    assert rc == 0
    err = capsys.readouterr().err
    # inkwell has 2 pages: too few to train on, reported and skipped
    assert "test=paperhouse: model not trained" in err
    rows = json.loads((tmp_path / "summary.json").read_text())["summary"]
    cv = {r["group"]: r for r in rows if r["extractor"] == "edrew-cv"}
    assert set(cv) == {"inkwell", "ALL"} and cv["inkwell"]["pages"] == 2
    assert (tmp_path / "models" / "test_inkwell" / "card.json").exists()


def test_cli_one_split_then_reuse_its_model(tmp_path, capsys, monkeypatch):
    pytest.importorskip("torch")
    from edrew_scrapy.cli import main
    from edrew_scrapy.commands import evaluate as command

    common = ["evaluate", "--dataset", "swde", str(DATA / "swde"), "--split", "cross-site", "--extractors", "none",
              "--train-model", "--train-minutes", "0.05", "--out", str(tmp_path), "--no-progress"]
    assert main(common + ["--only-split", "test=inkwell"]) == 0
    model = tmp_path / "models" / "test_inkwell"
    assert (model / "card.json").exists() and not (tmp_path / "models" / "test_paperhouse").exists()
    report = tmp_path / "splits" / "test_inkwell" / "summary.json"
    first = json.loads(report.read_text())["summary"]
    # another split into the same OUT (as folds run in parallel) keeps its own report; this one scores
    # nothing (inkwell's 2 pages are too few to train on): an empty report, no chart, no crash
    assert main(common + ["--only-split", "test=paperhouse"]) == 0
    other = tmp_path / "splits" / "test_paperhouse"
    assert json.loads((other / "summary.json").read_text())["summary"] == []
    assert (other / "pages.csv").exists() and not (other / "chart.png").exists()
    assert json.loads(report.read_text())["summary"] == first and not (tmp_path / "summary.json").exists()

    # a second run reuses the stored model (as trained on another machine) instead of training one
    monkeypatch.setattr(command, "train_on", lambda *a, **k: pytest.fail("trained again"))
    assert main(common + ["--only-split", "test=inkwell", "--reuse-models"]) == 0
    assert json.loads(report.read_text())["summary"] == first
    with pytest.raises(SystemExit, match="no split named"):
        main(common + ["--only-split", "nosuch"])


def test_cli_head_only_folds_reuse_each_splits_biLM(tmp_path):
    pytest.importorskip("torch")
    from edrew_scrapy.cli import main

    base = ["evaluate", "--dataset", "swde", str(DATA / "swde"), "--split", "cross-site", "--extractors", "none",
            "--train-model", "--train-minutes", "0.05", "--no-progress", "--only-split", "test=inkwell"]
    assert main(base + ["--out", str(tmp_path / "a")]) == 0
    assert main(base + ["--out", str(tmp_path / "b"), "--train-bilm", str(tmp_path / "a" / "models" / "{split}"),
                        "--train-features", "16", "--train-node-weights", "page-share"]) == 0
    card = json.loads((tmp_path / "b" / "models" / "test_inkwell" / "card.json").read_text())
    assert card["training"]["pretrain"]["reused_from"] == str(tmp_path / "a" / "models" / "test_inkwell")
    # the head reads models/default's 16 features; the first run's head all of them
    assert card["head"]["n_features"] == 16 and card["training"]["node_weights"] == "page-share"
    first = json.loads((tmp_path / "a" / "models" / "test_inkwell" / "card.json").read_text())
    assert first["head"]["n_features"] > 16 and first["training"]["node_weights"] == "log"


def test_cli_names_a_device_it_cannot_train_on(tmp_path, capsys):
    pytest.importorskip("torch")
    import torch

    from edrew_scrapy.cli import main

    assert main(["train", "--dataset", "simple", str(tmp_path), "--out", str(tmp_path / "m"),
                 "--device", "nosuchdevice"]) == 2
    assert "--device nosuchdevice" in capsys.readouterr().err
    if not torch.cuda.is_available():
        assert main(["train", "--dataset", "simple", str(tmp_path), "--out", str(tmp_path / "m"),
                     "--device", "cuda"]) == 2
        assert "no CUDA device" in capsys.readouterr().err


def test_cli_train_seed_changes_the_training_not_the_folds(tmp_path):
    pytest.importorskip("torch")
    from edrew_scrapy.cli import main

    base = ["evaluate", "--dataset", "swde", str(DATA / "swde"), "--split", "cross-site", "--extractors", "none",
            "--train-model", "--train-minutes", "0.05", "--no-progress", "--only-split", "test=inkwell"]
    assert main(base + ["--out", str(tmp_path / "a"), "--train-seed", "7"]) == 0
    card = json.loads((tmp_path / "a" / "models" / "test_inkwell" / "card.json").read_text())
    assert card["training"]["seed"] == 7
    pages = json.loads((tmp_path / "a" / "splits" / "test_inkwell" / "summary.json").read_text())["summary"]
    assert {r["group"] for r in pages} == {"inkwell", "ALL"}


@pytest.mark.parametrize("option, message", [
    (["--train-variant", "z"], "--train-variant: unknown 'z'"),
    (["--train-epochs", "0"], "--train-epochs must be at least 1"),
    (["--train-features", "30"], "--train-features must be 1..20"),
])
def test_cli_bad_training_options_stop_before_any_split(tmp_path, option, message, monkeypatch):
    # once, named as this command names them, instead of "model not trained" for every split
    pytest.importorskip("torch")
    from edrew_scrapy.cli import main
    from edrew_scrapy.commands import evaluate as command

    monkeypatch.setattr(command, "load_pages", lambda args: pytest.fail("pages read"))
    with pytest.raises(SystemExit, match=message):
        main(["evaluate", "--dataset", "swde", str(DATA / "swde"), "--split", "cross-site", "--extractors", "none",
              "--train-model", "--no-progress", "--out", str(tmp_path)] + option)
