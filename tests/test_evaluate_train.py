"""`edrew evaluate --train-model`: per-split training through edrew train's entry point."""
import json
from pathlib import Path

import pytest
from conftest import cli

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
    assert main(common + ["--only-split", "nosuch"]) == 2
    assert "no split named 'nosuch' (the splits: test=inkwell, test=paperhouse)" in capsys.readouterr().err


def test_cli_head_only_folds_reuse_each_splits_biLM(tmp_path):
    pytest.importorskip("torch")
    from edrew_scrapy.cli import main

    base = ["evaluate", "--dataset", "swde", str(DATA / "swde"), "--split", "cross-site", "--extractors", "none",
            "--train-model", "--train-minutes", "0.05", "--no-progress", "--only-split", "test=inkwell"]
    assert main(base + ["--out", str(tmp_path / "a")]) == 0
    assert main(base + ["--out", str(tmp_path / "b"), "--train-bilm", str(tmp_path / "a" / "models" / "{split}"),
                        "--train-features", "16", "--train-node-weights", "page-share",
                        "--train-node-dim", "40", "--train-context-dim", "24", "--train-dropout", "0.3",
                        "--train-skip-empty-references"]) == 0
    card = json.loads((tmp_path / "b" / "models" / "test_inkwell" / "card.json").read_text())
    assert card["training"]["pretrain"]["reused_from"] == str(tmp_path / "a" / "models" / "test_inkwell")
    # the head reads models/default's 16 features; the first run's head all of them
    assert card["head"]["n_features"] == 16 and card["training"]["node_weights"] == "page-share"
    assert (card["head"]["node_dim"], card["head"]["context_dim"]) == (40, 24) and card["head"]["dropout"] == 0.3
    assert card["training"]["empty_references"]["use"] == "left out"
    first = json.loads((tmp_path / "a" / "models" / "test_inkwell" / "card.json").read_text())
    assert first["head"]["n_features"] > 16 and first["training"]["node_weights"] == "log"
    assert first["training"]["empty_references"]["use"] == "every node negative"


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
    (["--train-features", "30"], "--train-features must be 1..26"),
])
def test_cli_bad_training_options_stop_before_any_split(tmp_path, option, message, monkeypatch, capsys):
    # once, named as this command names them, instead of "model not trained" for every split
    pytest.importorskip("torch")
    from edrew_scrapy.cli import main
    from edrew_scrapy.commands import evaluate as command

    monkeypatch.setattr(command, "load_pages", lambda args: pytest.fail("pages read"))
    assert main(["evaluate", "--dataset", "swde", str(DATA / "swde"), "--split", "cross-site", "--extractors", "none",
                 "--train-model", "--no-progress", "--out", str(tmp_path)] + option) == 2
    assert message in capsys.readouterr().err


def test_cli_reuse_models_names_a_corrupt_model(tmp_path, capsys, monkeypatch):
    pytest.importorskip("torch")
    from edrew_scrapy.commands import evaluate as command

    (tmp_path / "models" / "fold1").mkdir(parents=True)
    (tmp_path / "models" / "fold1" / "card.json").write_text("{")
    monkeypatch.setattr(command, "train_on", lambda *a, **k: pytest.fail("trained"))
    status, err = cli(capsys, "evaluate", "--dataset", "wcxb", str(DATA / "wcxb"), "--folds", "2",
                      "--extractors", "none", "--train-model", "--reuse-models", "--only-split", "fold1",
                      "--no-progress", "--out", str(tmp_path))
    card = tmp_path / "models" / "fold1" / "card.json"
    assert status == 2 and err.startswith(f"edrew evaluate: {card}: model card is not valid JSON")
    assert err.count("\n") == 1


def _train(capsys, tmp_path, *argv, dataset="simple", path=None):
    """(status, stderr) of edrew train into tmp_path/out/model, which must not be left behind."""
    status, err = cli(capsys, "train", "--dataset", dataset, str(path or DATA / dataset), "--out",
                      str(tmp_path / "out" / "model"), "--no-progress", *argv)
    assert not (tmp_path / "out").exists()
    return status, err


@pytest.mark.parametrize("argv, message", [
    (["--threads", "0"], "argument --threads: must be at least 1, not 0"),
    (["--threads", "-1"], "argument --threads: must be at least 1, not -1"),
    (["--limit", "0"], "edrew train: --limit must be at least 3 pages, got 0\n"),
    (["--epochs", "0"], "edrew train: --epochs must be at least 1, got 0\n"),
    (["--pretrain-html", "{tmp}/nosuch"], "edrew train: --pretrain-html {tmp}/nosuch: folder does not exist\n"),
    (["--pretrain-html", "{tmp}"],
     "edrew train: --pretrain-html {tmp}: no .html, .htm, .xhtml or .gz HTML files in it\n"),
    (["--labels", "{tmp}/nosuch.jsonl"], "edrew train: --labels {tmp}/nosuch.jsonl: no such file\n"),
    (["--bilm", "{tmp}/nosuch"], "edrew train: --bilm: {tmp}/nosuch: model directory does not exist\n"),
])
def test_cli_train_usage_errors_exit_2_before_any_work(tmp_path, capsys, monkeypatch, argv, message):
    pytest.importorskip("torch")
    from edrew_scrapy.training import train as training

    monkeypatch.setattr(training, "load_labelled", lambda *a, **k: pytest.fail("pages read"))
    status, err = _train(capsys, tmp_path, *[a.format(tmp=tmp_path) for a in argv])
    assert status == 2 and message.format(tmp=tmp_path) in err


def test_cli_train_checks_the_dataset_and_out_first(tmp_path, capsys):
    pytest.importorskip("torch")
    status, err = _train(capsys, tmp_path, dataset="wcxb", path=tmp_path / "nosuch")
    assert (status, err) == (2, f"edrew train: {tmp_path / 'nosuch'}: dataset folder does not exist\n")
    status, err = _train(capsys, tmp_path, "--attrs", "nosuch", dataset="swde")
    assert status == 2 and err == (f"edrew train: --attrs: no attribute nosuch in {DATA / 'swde'} "
                                   "(it has author, isbn_13, publisher, title)\n")
    (tmp_path / "file").write_text("x")
    status, err = cli(capsys, "train", "--dataset", "simple", str(DATA / "simple"), "--out", str(tmp_path / "file"))
    assert (status, err) == (2, f"edrew train: --out {tmp_path / 'file'}: a file, not a folder\n")


def test_cli_train_one_line_for_a_bad_page_and_no_empty_out(tmp_path, capsys):
    pytest.importorskip("torch")
    import shutil

    root = tmp_path / "data"
    shutil.copytree(DATA / "wcxb", root)
    (root / "ground-truth" / "0002.json").write_text('{"ground_truth": "oops"}')
    status, err = _train(capsys, tmp_path, dataset="wcxb", path=root)
    assert (status, err) == (1, f"edrew train: {root}/ground-truth/0002.json: ground_truth must be an object, "
                                'not a string "oops"\n')


@pytest.mark.parametrize("group_by", ["domain", "host"])
def test_group_by_reaches_the_training_split(tmp_path, monkeypatch, group_by):
    # edrew train --group-by and edrew evaluate --group-by both decide the key of the validation split
    pytest.importorskip("torch")
    from edrew_scrapy.cli import build_parser, main
    from edrew_scrapy.commands import evaluate as command
    from edrew_scrapy.training import train as training

    class Stop(Exception):
        pass

    seen = []

    def fake_train(config):  # the config edrew train built; no training
        seen.append(config.group_by)
        raise Stop

    monkeypatch.setattr(training, "train", fake_train)
    with pytest.raises(Stop):
        main(["train", "--dataset", "simple", str(DATA / "simple"), "--out", str(tmp_path / "m"),
              "--group-by", group_by])
    args = build_parser().parse_args(["evaluate", "--dataset", "wcxb", str(DATA / "wcxb"), "--train-model",
                                      "--group-by", group_by])
    config = command.train_config(args, tmp_path, tmp_path / "models" / "fold1", "fold1")
    assert seen == [group_by] and config.group_by == group_by


def test_command_defaults_are_the_training_defaults(tmp_path, monkeypatch):
    # edrew train's and edrew evaluate's parsers spell their defaults out (building them imports no torch), so
    # they could drift from TrainConfig's and head_config's: the configs they build with no option given must
    # be TrainConfig's own, but for what each says on purpose (evaluate's per-split budget, the command line)
    pytest.importorskip("torch")
    import dataclasses
    import inspect

    from edrew_scrapy.cli import build_parser, main
    from edrew_scrapy.commands import evaluate as command
    from edrew_scrapy.model.head import head_config
    from edrew_scrapy.training import train as training

    class Stop(Exception):
        pass

    seen = []

    def fake_train(config):
        seen.append(config)
        raise Stop

    def differences(config):
        default = training.TrainConfig(dataset=config.dataset, path=config.path, out=config.out)
        return {f.name for f in dataclasses.fields(config) if getattr(config, f.name) != getattr(default, f.name)}

    monkeypatch.setattr(training, "train", fake_train)
    with pytest.raises(Stop):
        main(["train", "--dataset", "simple", str(DATA / "simple"), "--out", str(tmp_path / "m")])
    assert differences(seen[0]) == {"command"}
    args = build_parser().parse_args(["evaluate", "--dataset", "wcxb", str(DATA / "wcxb"), "--train-model"])
    config = command.train_config(args, tmp_path, tmp_path / "models" / "fold1", "fold1")
    assert differences(config) == {"max_minutes", "command"} and config.max_minutes == 10.0
    widths = inspect.signature(head_config).parameters
    for name in ("node_dim", "context_dim", "dropout", "n_features", "tree_levels"):
        assert widths[name].default == getattr(seen[0], name), name


def test_a_reused_model_must_hold_out_this_splits_pages(tmp_path, capsys):
    # a fold model of other folds (another --group-by, --seed or --folds) would be scored on pages it was
    # trained on: refused; a card from before the check is used with a warning
    pytest.importorskip("torch")
    import shutil

    from edrew_scrapy.cli import main

    common = ["evaluate", "--dataset", "swde", str(DATA / "swde"), "--split", "cross-site", "--extractors", "none",
              "--train-model", "--train-minutes", "0.05", "--out", str(tmp_path), "--no-progress"]
    assert main(common + ["--only-split", "test=inkwell"]) == 0
    model = tmp_path / "models" / "test_inkwell"
    card = json.loads((model / "card.json").read_text())
    held = card["training"]["held_out"]
    assert held["split"] == "test=inkwell" and held["pages"] == 2 and len(held["sha1"]) == 40
    shutil.copytree(model, tmp_path / "models" / "test_paperhouse")  # inkwell's model, paperhouse's split
    capsys.readouterr()
    assert main(common + ["--only-split", "test=paperhouse", "--reuse-models"]) == 2
    assert "was trained for other test pages (test=inkwell" in capsys.readouterr().err
    del card["training"]["held_out"]
    (model / "card.json").write_text(json.dumps(card))
    assert main(common + ["--only-split", "test=inkwell", "--reuse-models"]) == 0
    assert "its card does not say which pages it held out" in capsys.readouterr().err
