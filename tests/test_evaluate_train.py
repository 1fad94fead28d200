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
