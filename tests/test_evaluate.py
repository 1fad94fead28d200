"""Metrics, baselines and `edrew evaluate` on the tiny fixtures (trafilatura and readability included)."""
import json
import re
from pathlib import Path

import numpy as np
import pytest
from conftest import cli

from edrew_scrapy.data import swde, wcxb
from edrew_scrapy.training import evaluate as ev
from edrew_scrapy.training.baselines import ReTPSBaseline, split_retps

DATA = Path(__file__).parent / "fixtures" / "data"


def test_node_counts_and_prf():
    assert ev.node_counts([1, 1, 0, 0, 1], [1, 0, 1, 0, 1]) == (2, 1, 1)
    p, r, f = ev.prf(2, 1, 1)
    assert (p, r) == (2 / 3, 2 / 3) and abs(f - 2 / 3) < 1e-12
    assert ev.prf(0, 0, 0) == (1.0, 1.0, 1.0)
    assert ev.prf(0, 3, 0) == (0.0, 0.0, 0.0)
    with pytest.raises(ValueError):
        ev.node_counts([1, 0], [1])


def test_summarize_micro_nodes_and_mean_words():
    rs = [ev.PageResult("1", "article", "x", 1.0, 1.0, 1.0, 2, 0, 0, 5),
          ev.PageResult("2", "article", "x", 0.5, 0.5, 0.5, 0, 2, 2, 5),
          ev.PageResult("3", "forum", "x", 0.0, 0.0, 0.0, 0, 0, 1, 5)]
    rows = {(r["group"], r["extractor"]): r for r in ev.summarize(rs)}
    art = rows[("article", "x")]
    assert art["pages"] == 2 and art["word_f1"] == 0.75
    assert (art["node_p"], art["node_r"]) == (0.5, 0.5)
    assert rows[("ALL", "x")]["pages"] == 3 and rows[("ALL", "x")]["fn"] == 3
    assert list(ev.summarize(rs))[-1]["group"] == "ALL"


def test_split_retps_tokens():
    assert split_retps("<#CNT><#SEP>p|34<#SEP>div|21") == ["<#CNT>", "p|34", "div|21"]


@pytest.mark.parametrize("name", ["svm", "tree", "nb", "knn"])
def test_baselines_fit_and_predict(name):
    pages = list(wcxb.iter_pages(DATA / "wcxb"))
    model = ReTPSBaseline(name, min_df=1).fit(pages)
    pred = model.predict(pages[0].page)
    assert pred.shape == (len(pages[0].page.nodes),)
    assert set(np.unique(pred)) <= {0, 1}


def test_baseline_with_one_class_predicts_it():
    pages = list(wcxb.iter_pages(DATA / "wcxb", ids=["0001"]))
    pages[0].labels = [0] * len(pages[0].labels)
    assert ReTPSBaseline("svm").fit(pages).predict(pages[0].page).sum() == 0


def test_evaluate_pages_with_trafilatura_readability_and_oracle():
    pytest.importorskip("trafilatura")
    pytest.importorskip("readability")
    pages = list(wcxb.iter_pages(DATA / "wcxb"))
    extractors = {"oracle": ev.oracle_extractor, "trafilatura": ev.trafilatura_extractor,
                  "readability": ev.readability_extractor}
    results = ev.evaluate_pages(pages, extractors, progress=False)
    assert len(results) == 9
    rows = {(r["group"], r["extractor"]): r for r in ev.summarize(results)}
    assert rows[("ALL", "oracle")]["node_f1"] == 1.0
    assert rows[("ALL", "oracle")]["word_f1"] > 0.95
    for name in ("trafilatura", "readability"):
        row = rows[("ALL", name)]
        assert 0.0 <= row["word_f1"] <= 1.0 and 0.0 <= row["node_f1"] <= 1.0
    # trafilatura finds the article's body on this simple page
    assert rows[("article", "trafilatura")]["word_r"] > 0.5


def test_reference_text_per_dataset():
    lp = next(swde.iter_pages(DATA / "swde"))
    ref = ev.reference_text(lp)
    assert "River Maps" in ref and "Ines Vale" in ref
    w = next(wcxb.iter_pages(DATA / "wcxb"))
    assert ev.reference_text(w) == w.meta["main_content"]


def test_scorer_extractor_thresholds_probabilities():
    lp = next(wcxb.iter_pages(DATA / "wcxb"))

    class FakeScorer:
        threshold = 0.5

        def score(self, pages):
            return [np.array([0.9 if y else 0.1 for y in lp.labels], dtype=np.float32)]

    text, pred = ev.scorer_extractor(FakeScorer())(lp)
    assert pred == lp.labels and text == lp.relevant_text
    _, none = ev.scorer_extractor(FakeScorer(), threshold=0.95)(lp)
    assert sum(none) == 0


def test_cli_evaluate_wcxb_writes_table_json_csv_and_chart(tmp_path, capsys):
    from edrew_scrapy.cli import main

    out = tmp_path / "out"
    rc = main(["evaluate", "--dataset", "wcxb", str(DATA / "wcxb"), "--folds", "2", "--baselines", "nb,tree",
               "--out", str(out), "--no-progress"])
    assert rc == 0
    printed = capsys.readouterr().out
    for word in ("trafilatura", "readability", "oracle", "nb", "tree", "article", "ALL"):
        assert word in printed
    summary = json.loads((out / "summary.json").read_text())
    extractors = {r["extractor"] for r in summary["summary"]}
    assert extractors == {"oracle", "trafilatura", "readability", "nb", "tree"}
    assert (out / "summary.csv").read_text().startswith("extractor,group,pages")
    assert (out / "pages.csv").exists()
    assert (out / "chart.png").read_bytes()[:4] == b"\x89PNG"


def test_cli_evaluate_swde_cross_site_from_env(tmp_path, capsys, monkeypatch):
    from edrew_scrapy.cli import main

    monkeypatch.setenv("EDREW_SWDE", str(DATA / "swde"))
    rc = main(["evaluate", "--dataset", "swde", "--split", "cross-site", "--extractors", "oracle",
               "--baselines", "svm", "--out", str(tmp_path), "--no-progress"])
    assert rc == 0
    rows = json.loads((tmp_path / "summary.json").read_text())["summary"]
    groups = {r["group"] for r in rows}
    assert groups == {"inkwell", "paperhouse", "ALL"}


def test_cli_evaluate_needs_a_path(monkeypatch, capsys, tmp_path):
    monkeypatch.delenv("EDREW_WCXB", raising=False)
    status, err = cli(capsys, "evaluate", "--dataset", "wcxb", "--out", str(tmp_path))
    assert status == 2 and err == "edrew evaluate: give the wcxb folder or set EDREW_WCXB\n"


def test_cli_evaluate_refuses_more_folds_than_domains(tmp_path, capsys):
    status, err = cli(capsys, "evaluate", "--dataset", "wcxb", str(DATA / "wcxb"), "--folds", "50",
                      "--extractors", "oracle", "--no-progress", "--out", str(tmp_path))
    assert status == 2 and "groups cannot fill 50 folds" in err


@pytest.mark.parametrize("dataset, message", [
    ("wcxb", r"no wcxb pages found in .*empty \(expected html/ and ground-truth/\)"),
    ("swde", r"no swde pages found in .*empty \(expected pages/"),
    ("simple", r"empty: no labels.jsonl or labels.json \(give the label file with --labels\)"),
])
def test_cli_evaluate_says_where_it_found_no_pages(tmp_path, dataset, message, capsys):
    # a wrong folder is the commonest mistake: one line naming it, not a traceback
    (tmp_path / "empty").mkdir()
    status, err = cli(capsys, "evaluate", "--dataset", dataset, str(tmp_path / "empty"), "--no-progress",
                      "--out", str(tmp_path / "o"))
    assert status == 1 and err.startswith("edrew evaluate: ") and err.count("\n") == 1 and re.search(message, err)


def test_all_nodes_extractor_keeps_every_node():
    lp = next(wcxb.iter_pages(DATA / "wcxb"))
    text, pred = ev.all_nodes_extractor(lp)
    assert pred == [1] * len(lp.page.nodes)
    assert "Home" in text and "Why tomatoes split" in text
    result = ev.evaluate_pages([lp], {"all-nodes": ev.all_nodes_extractor}, progress=False)[0]
    assert result.word_r == 1.0 and result.word_p < 1.0 and result.fn == 0


def test_cli_evaluate_names_a_model_it_cannot_load(tmp_path, capsys):
    pytest.importorskip("torch")
    status, err = cli(capsys, "evaluate", "--dataset", "wcxb", str(DATA / "wcxb"), "--model", str(tmp_path / "nosuch"),
                      "--extractors", "none", "--no-progress", "--out", str(tmp_path / "o"))
    assert (status, err) == (2, f"edrew evaluate: {tmp_path / 'nosuch'}: model directory does not exist\n")


@pytest.mark.parametrize("out", ["file", "file/sub"])
def test_cli_evaluate_checks_out_before_any_work(tmp_path, capsys, monkeypatch, out):
    # not after a whole evaluation, which then could not be written
    from edrew_scrapy.commands import evaluate as command

    (tmp_path / "file").write_text("x")
    monkeypatch.setattr(command, "load_pages", lambda args: pytest.fail("pages read"))
    status, err = cli(capsys, "evaluate", "--dataset", "wcxb", str(DATA / "wcxb"), "--extractors", "oracle",
                      "--no-progress", "--out", str(tmp_path / out))
    assert status == 2 and err.startswith(f"edrew evaluate: --out {tmp_path / out}: ") and "a file, not a folder" in err
    assert (tmp_path / "file").read_text() == "x"


@pytest.mark.parametrize("limit", ["0", "-3", "x"])
def test_cli_evaluate_limit_is_a_positive_integer(tmp_path, capsys, limit):
    # 0 used to mean no limit at all, -3 "no pages found"
    status, err = cli(capsys, "evaluate", "--dataset", "wcxb", str(DATA / "wcxb"), "--limit", limit,
                      "--extractors", "oracle", "--no-progress", "--out", str(tmp_path))
    assert status == 2 and "argument --limit:" in err
    assert cli(capsys, "evaluate", "--dataset", "wcxb", str(DATA / "wcxb"), "--limit", "1", "--split", "none",
               "--extractors", "oracle", "--no-progress", "--out", str(tmp_path))[0] == 0


@pytest.mark.parametrize("argv, message", [
    (["--extractors", "bogus"], "unknown bogus; choose from oracle"),
    (["--extractors", "none"], "nothing to evaluate"),
    (["--folds", "1"], "argument --folds: must be at least 2"),
    (["--only-split", "fold9", "--folds", "2"], "no split named 'fold9' (the splits: fold1, fold2)"),
])
def test_cli_evaluate_usage_errors_exit_2(tmp_path, capsys, argv, message):
    status, err = cli(capsys, "evaluate", "--dataset", "wcxb", str(DATA / "wcxb"), "--no-progress",
                      "--out", str(tmp_path), *argv)
    assert status == 2 and message in err


def test_cli_evaluate_dataset_that_does_not_exist(tmp_path, capsys):
    status, err = cli(capsys, "evaluate", "--dataset", "swde", str(tmp_path / "nosuch"), "--extractors", "oracle",
                      "--no-progress", "--out", str(tmp_path / "o"))
    assert (status, err) == (2, f"edrew evaluate: {tmp_path / 'nosuch'}: dataset folder does not exist\n")
    status, err = cli(capsys, "evaluate", "--dataset", "simple", str(DATA / "simple"), "--labels",
                      str(tmp_path / "nosuch.jsonl"), "--extractors", "oracle", "--no-progress", "--out", str(tmp_path))
    assert status == 2 and "--labels" in err and "no such file" in err


@pytest.mark.parametrize("argv, message", [
    (["--sites", "nosuchsite"], "--sites: no site nosuchsite in {} (it has inkwell, paperhouse)"),
    (["--attrs", "title,nosuchattr"],
     "--attrs: no attribute nosuchattr in {} (it has author, isbn_13, publisher, title)"),
])
def test_cli_evaluate_swde_names_the_sites_and_attributes_it_has(tmp_path, capsys, argv, message):
    # instead of the layout message, or a run that scores every page 0.000
    status, err = cli(capsys, "evaluate", "--dataset", "swde", str(DATA / "swde"), "--extractors", "oracle",
                      "--no-progress", "--out", str(tmp_path), *argv)
    assert (status, err) == (2, "edrew evaluate: " + message.format(DATA / "swde") + "\n")


@pytest.mark.parametrize("dataset, breaks, message", [
    ("wcxb", lambda root: (root / "ground-truth" / "0002.json").write_text("[]"),
     "ground-truth/0002.json: the ground truth must be an object"),
    ("wcxb", lambda root: (root / "html" / "0003.html.gz").write_bytes(b"\x1f\x8b\x08\x00truncated"),
     "html/0003.html.gz: broken gzip file"),
    ("simple", lambda root: (root / "labels.jsonl").write_text('{"file": "a.html"}\n{"file": 5}\n'),
     "labels.jsonl:2: file must be a string, not a number 5"),
])
def test_cli_evaluate_one_line_for_a_bad_dataset_file(tmp_path, capsys, dataset, breaks, message):
    import shutil

    root = tmp_path / dataset
    shutil.copytree(DATA / dataset, root)
    breaks(root)
    status, err = cli(capsys, "evaluate", "--dataset", dataset, str(root), "--extractors", "oracle", "--split", "none",
                      "--no-progress", "--out", str(tmp_path / "o"))
    assert status == 1 and err.startswith(f"edrew evaluate: {root}/{message}")
    assert err.count("\n") == 1 and not (tmp_path / "o").exists()


@pytest.mark.parametrize("argv, message", [
    (["--split", "none", "--baselines", "nb"], "split all has no training pages for --train-model or --baselines"),
    (["--split", "swde"], "has no test pages: 3 pages are too few for this split"),
])
def test_cli_evaluate_refuses_empty_splits(tmp_path, capsys, argv, message):
    # an empty table, or a baseline fitted on no page reported as 0.000, looked like a result
    status, err = cli(capsys, "evaluate", "--dataset", "wcxb", str(DATA / "wcxb"), "--extractors", "oracle",
                      "--no-progress", "--out", str(tmp_path), *argv)
    assert status == 2 and message in err and err.count("\n") == 1


def test_cli_evaluate_swde_without_ground_truth_is_an_error(tmp_path, capsys):
    import shutil

    root = tmp_path / "swde"
    shutil.copytree(DATA / "swde", root)
    shutil.rmtree(root / "groundtruth")  # the oracle scored 1.000 on every row against no values
    status, err = cli(capsys, "evaluate", "--dataset", "swde", str(root), "--extractors", "oracle",
                      "--split", "none", "--no-progress", "--out", str(tmp_path / "o"))
    assert status == 1 and "has a relevant node to score against" in err
    (root / "groundtruth").mkdir()
    (root / "groundtruth" / "book-inkwell-title.txt").write_text("garbage\n")
    status, err = cli(capsys, "evaluate", "--dataset", "swde", str(root), "--extractors", "oracle",
                      "--split", "none", "--no-progress", "--out", str(tmp_path / "o"))
    assert status == 1 and "book-inkwell-title.txt: line 1 must be 'vertical<TAB>site<TAB>attribute'" in err


@pytest.mark.parametrize("dataset", ["wcxb", "simple"])
def test_cli_swde_filters_are_refused_for_other_datasets(tmp_path, capsys, dataset):
    status, err = cli(capsys, "evaluate", "--dataset", dataset, str(DATA / dataset), "--sites", "nosuch",
                      "--extractors", "oracle", "--no-progress", "--out", str(tmp_path))
    assert (status, err) == (2, f"edrew evaluate: --sites filter SWDE datasets only, not --dataset {dataset}\n")


@pytest.mark.parametrize("group_by, sites", [("domain", ["a.com", "b.com", "shop.com"]),
                                              ("host", ["a.com", "b.com", "shop.com", "uk.shop.com"])])
def test_splits_group_by_registrable_domain_or_host(group_by, sites):
    from argparse import Namespace
    from types import SimpleNamespace

    from edrew_scrapy.commands.evaluate import make_splits

    pages = [SimpleNamespace(domain=h, group="", page_type_or_site="article")
             for h in ["uk.shop.com", "shop.com", "a.com", "b.com"]]
    args = Namespace(split="cross-site", dataset="wcxb", folds=2, seed=1, group_by=group_by)
    assert [name for name, _train, _test in make_splits(pages, args)] == [f"test={s}" for s in sites]
    args.split = None  # k-fold: uk.shop.com and shop.com share a fold by domain
    folds = {i: name for name, _train, test in make_splits(pages, args) for i in test}
    assert sorted(folds) == [0, 1, 2, 3]
    if group_by == "domain":
        assert folds[0] == folds[1]
