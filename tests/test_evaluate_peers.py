"""`edrew evaluate` with resiliparse and rs-trafilatura, the per-page peer cache, and the snippet check."""
import csv
import json
import os
import sys
from pathlib import Path

import pytest
from conftest import cli

from edrew_scrapy.training import peers
from edrew_scrapy.training.snippets import count_snippets, summarize_snippets

DATA = Path(__file__).parent / "fixtures" / "data"
ROOT = Path(__file__).resolve().parents[1]

ARTICLE = """<html><head><title>The harbour lights</title></head><body>
<nav><a href="/">Home</a> <a href="/news">News</a> <a href="/sport">Sport</a></nav>
<article><h1>The harbour lights</h1>
<p>The town council voted on Tuesday to keep the old harbour lights burning through the winter, after a
long evening of debate in the hall by the water, where fishermen and shopkeepers spoke for two hours.</p>
<p>Repairs to the north lamp will cost about four thousand pounds, which the harbour fund can pay this
year without raising the mooring fees that the small boats pay each spring.</p>
<p>The keeper, who has tended the lamps for thirty years, said she was glad and would start on the
lenses next week, weather permitting, with help from two volunteers.</p></article>
<footer><p>Copyright the Harbour Gazette. All rights reserved. Contact the newsroom.</p></footer>
</body></html>"""


def _snippet_set(tmp_path: Path) -> Path:
    (tmp_path / "a.html").write_text(ARTICLE, encoding="utf-8")
    (tmp_path / "b.html").write_text(ARTICLE.replace("harbour lights", "river bridge"), encoding="utf-8")
    records = [
        {"file": "a.html", "url": "https://gazette.example/a", "with_snippets": [
            "keep the old harbour lights burning", "Repairs to the north lamp", "not on the page at all"],
         "without_snippets": ["All rights reserved", "Home News Sport"]},
        {"file": "b.html", "url": "https://gazette.example/b", "with_snippets": ["The keeper, who has tended"],
         "without_snippets": ["Contact the newsroom"]},
        {"file": "a.html", "id": "none", "url": "https://gazette.example/c"},  # no snippets: not scored
    ]
    path = tmp_path / "pages.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_snippets_are_found_word_for_word_across_lines_and_punctuation():
    text = "The keeper, who has\ntended the lamps\u2014for thirty years.\nAll rights reserved"
    assert count_snippets(text, ["the keeper who has tended", "lamps for thirty", "All rights reserved."]) == 3
    assert count_snippets(text, ["keeper who tended", "rights reserves", "thirty years ago"]) == 0
    assert count_snippets("", ["anything"]) == 0


def test_a_snippet_may_begin_and_end_inside_a_word_as_in_trafilaturas_substring_test():
    text = "Angaben gemäß § 5 TMG. Die Verwaltung der Stadt. 1975年1月28日出生于新加坡"
    # cut from the page's text inside a word: its first and last words may be a word's end and start
    assert count_snippets(text, ["ngaben gemäß", "Die Verwal", "die verwaltung der st", "1月28日出生"]) == 4
    # where the snippet's own text begins or ends a word (a space, punctuation), that word is whole
    assert count_snippets(text, [" ngaben gemäß", "Die Verwal.", "(ie Verwaltung", "gemäß § 5 TM "]) == 0
    # soft hyphens and zero-width spaces, in the snippet or in the text, split no word
    hyphenated = "Die Ver\u00adwal\u00adtung der Stadt\u200b."
    assert count_snippets(hyphenated, ["die Verwaltung", "Ver\u00adwal\u00adtung der", "der Stadt."]) == 3
    assert count_snippets(text, ["Die Ver\u00adwaltung der"]) == 1
    # words inside the snippet are always whole
    assert count_snippets(text, ["Angaben gem § 5", "Die Verwalt der Stadt"]) == 0


def test_summary_counts_kept_and_leaked_over_all_snippets():
    from edrew_scrapy.training.snippets import SnippetResult

    results = [SnippetResult("1", "page", "x", 3, 2, 2, 1, "set"), SnippetResult("2", "page", "x", 1, 1, 0, 0, "set")]
    [row] = summarize_snippets(results)
    assert (row["keep"], row["kept"], row["drop"], row["leaked"]) == (4, 3, 2, 1)
    assert (row["kept_share"], row["leaked_share"]) == (0.75, 0.5)
    assert row["precision"] == 0.75 and row["recall"] == 0.75  # trafilatura's: kept / (kept + leaked)
    assert (row["failed_timeout"], row["failed_memory"], row["failed_crash"]) == (0, 0, 0)
    results.append(SnippetResult("3", "page", "x", 2, 0, 1, 0, "set", failed="timeout"))  # a peer over its limit
    [row] = summarize_snippets(results)
    assert (row["pages"], row["kept"], row["failed_timeout"], row["failed_memory"]) == (3, 3, 1, 0)


def test_cli_snippet_check_scores_every_extractor_in_one_run(tmp_path, capsys):
    pytest.importorskip("trafilatura")
    pytest.importorskip("resiliparse")
    labels = _snippet_set(tmp_path)
    out = tmp_path / "out"
    status, err = cli(capsys, "evaluate", "--dataset", f"gazette=simple:{labels}", "--snippets",
                      "--extractors", "trafilatura,resiliparse,all-nodes", "--out", str(out), "--no-progress")
    assert status == 0, err
    rows = {r["extractor"]: r for r in json.loads((out / "snippets.json").read_text())["snippets"]}
    assert set(rows) == {"trafilatura", "resiliparse", "all-nodes"}
    # every node: each snippet that is on the page, the must-drop ones too ("not on the page at all" never)
    everything = rows["all-nodes"]
    assert (everything["pages"], everything["keep"], everything["kept"]) == (2, 4, 3)
    assert (everything["drop"], everything["leaked"]) == (3, 3)
    assert rows["trafilatura"]["kept"] == 3 and rows["trafilatura"]["leaked"] == 0
    assert rows["resiliparse"]["kept"] == 3
    pages = list(csv.DictReader(open(out / "snippet-pages.csv", encoding="utf-8")))
    assert len(pages) == 6 and {p["page_id"] for p in pages} == {"a.html", "b.html"}


@pytest.mark.parametrize("argv, message", [
    (["--split", "kfold"], "--split none"),
    (["--extractors", "oracle"], "needs node labels"),
    (["--reference-title", "drop"], "do not apply"),
])
def test_cli_snippet_check_refuses_what_it_cannot_score(tmp_path, capsys, argv, message):
    labels = _snippet_set(tmp_path)
    status, err = cli(capsys, "evaluate", "--dataset", f"g=simple:{labels}", "--snippets", "--extractors",
                      "all-nodes", *argv, "--out", str(tmp_path / "out"))
    assert status == 2 and message in err


def test_cli_snippet_check_says_when_no_page_has_snippets(tmp_path, capsys):
    status, err = cli(capsys, "evaluate", "--dataset", "simple", str(DATA / "simple"), "--snippets",
                      "--extractors", "all-nodes", "--out", str(tmp_path / "out"), "--no-progress")
    assert status == 1 and "has with_snippets or without_snippets" in err


def test_resiliparse_scores_beside_the_others_per_dataset(tmp_path, capsys):
    pytest.importorskip("resiliparse")
    out = tmp_path / "out"
    status, err = cli(capsys, "evaluate", "--dataset", f"fixtures=simple:{DATA / 'simple'}", "--split", "none",
                      "--extractors", "oracle,resiliparse", "--out", str(out), "--no-progress")
    assert status == 0, err
    rows = json.loads((out / "summary.json").read_text())["summary"]
    mine = [r for r in rows if r["extractor"] == "resiliparse" and r["group"] == "fixtures"]
    assert mine and 0.0 < mine[0]["word_f1"] <= 1.0 and {"word_p", "word_r", "node_p"} <= set(mine[0])


def test_a_missing_peer_is_named_before_any_page_is_read(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv(peers.RS_PYTHON_ENV, raising=False)
    status, err = cli(capsys, "evaluate", "--dataset", "simple", str(DATA / "simple"), "--extractors",
                      "rs-trafilatura", "--rs-trafilatura-python", str(tmp_path / "no-python"), "--out",
                      str(tmp_path / "out"))
    assert status == 2 and "no Python at" in err and "scripts/rs-trafilatura-venv.sh" in err
    # a Python that runs but has no rs_trafilatura (this one)
    monkeypatch.setenv(peers.RS_PYTHON_ENV, sys.executable)
    status, err = cli(capsys, "evaluate", "--dataset", "simple", str(DATA / "simple"), "--extractors",
                      "rs-trafilatura", "--out", str(tmp_path / "out"))
    assert status == 2 and "rs-trafilatura cannot be imported" in err
    assert not (tmp_path / "out").exists()


def test_a_peer_module_that_is_not_installed_is_a_usage_error(tmp_path, capsys, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "resiliparse" else real(name, *a))
    status, err = cli(capsys, "evaluate", "--dataset", "simple", str(DATA / "simple"), "--extractors",
                      "resiliparse", "--out", str(tmp_path / "out"))
    assert status == 2 and "resiliparse is not installed: pip install resiliparse" in err


def _rs_python() -> str:
    """The Python 3.12 with rs-trafilatura (scripts/rs-trafilatura-venv.sh; scripts/test.sh builds it): CI fails without
    it, elsewhere the test says why it skips."""
    python = peers.rs_trafilatura_python()
    try:
        peers.RsTrafilatura.probe(python if os.path.isabs(python) else str(ROOT / python))
    except peers.PeerMissing as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"rs-trafilatura must run in CI: {exc}")
        pytest.skip(f"rs-trafilatura is not set up here: {exc}")
    return python if os.path.isabs(python) else str(ROOT / python)


def test_rs_trafilatura_runs_in_its_own_python_and_its_texts_are_cached(tmp_path, capsys):
    python = _rs_python()
    labels = _snippet_set(tmp_path)
    cache = tmp_path / "cache"
    argv = ["evaluate", "--dataset", f"g=simple:{labels}", "--snippets", "--extractors", "rs-trafilatura",
            "--rs-trafilatura-python", python, "--peer-cache", str(cache), "--no-progress"]
    status, err = cli(capsys, *argv, "--out", str(tmp_path / "one"))
    assert status == 0, err
    assert "0 texts reused, 2 extracted" in err
    [row] = json.loads((tmp_path / "one" / "snippets.json").read_text())["snippets"]
    assert row["kept"] == 3 and row["leaked"] == 0
    texts = sorted(cache.glob("rs-trafilatura-*/*/*.txt"))
    assert len(texts) == 2  # the two pages with snippets, by their bytes and URL
    assert any("harbour lights burning" in t.read_text(encoding="utf-8") for t in texts)
    # the second run reads the texts back, and scores the same
    status, err = cli(capsys, *argv, "--out", str(tmp_path / "two"))
    assert status == 0 and "2 texts reused, 0 extracted" in err
    assert json.loads((tmp_path / "two" / "snippets.json").read_text())["snippets"] == [row]


def test_the_rs_trafilatura_worker_answers_each_page_and_stops(tmp_path):
    worker = peers.RsTrafilatura(_rs_python())
    try:
        assert "harbour lights burning" in worker.extract(ARTICLE.encode(), "https://gazette.example/a")
        assert worker.extract(b"", None) == ""  # nothing to extract: an empty text, and the worker goes on
        assert worker.version
    finally:
        worker.close()
    assert worker.proc is None


def _long_article(paragraphs: int = 300) -> bytes:
    """A page of many paragraphs (about 60 kB): the same for every limit test."""
    body = "".join(f"<p>The keeper tended the harbour lamps for thirty years; note {i} of the log book.</p>"
                   for i in range(paragraphs))
    return ARTICLE.replace("</article>", body + "</article>").encode()


@pytest.mark.parametrize("limits, kind", [({"timeout": 1e-4}, "timeout"), ({"memory_mb": 1}, "memory")])
def test_a_page_over_a_peer_limit_fails_by_kind_and_the_worker_restarts(limits, kind):
    worker = peers.RsTrafilatura(_rs_python(), **limits)
    try:
        for _ in range(2):  # each page over the limit fails alone; the worker restarts for the next one
            with pytest.raises(peers.PeerFailed) as failed:
                worker.extract(_long_article(), "https://gazette.example/long")
            assert failed.value.kind == kind
            assert worker.proc is None  # killed (or dead), not left running on the page
        worker.timeout, worker.memory_mb = 60, 4096
        assert "harbour lights burning" in worker.extract(_long_article(), "https://gazette.example/long")
    finally:
        worker.close()


@pytest.mark.parametrize("option, value, column", [("--peer-timeout", "0.0001", "failed_timeout"),
                                                   ("--peer-memory-mb", "1", "failed_memory")])
def test_pages_over_a_peer_limit_are_counted_and_reported(tmp_path, capsys, option, value, column):
    python = _rs_python()
    pytest.importorskip("resiliparse")
    for name in ("a", "b"):
        (tmp_path / f"{name}.html").write_bytes(_long_article())
    records = [{"file": f"{n}.html", "url": f"https://gazette.example/{n}",
                "main_content": "The keeper tended the harbour lamps for thirty years"} for n in ("a", "b")]
    (tmp_path / "labels.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    out, cache = tmp_path / "out", tmp_path / "cache"
    from edrew_scrapy.cli import main

    status = main(["evaluate", "--dataset", f"g=simple:{tmp_path / 'labels.jsonl'}", "--split", "none",
                   "--extractors", "rs-trafilatura,resiliparse", "--rs-trafilatura-python", python, option, value,
                   "--peer-cache", str(cache), "--out", str(out), "--no-progress"])
    printed = capsys.readouterr()
    assert status == 0, printed.err
    kind = column.replace("failed_", "")
    counts = {"timeout": "over --peer-timeout 0.0001 s: 2, over --peer-memory-mb 4096 MB: 0",
              "memory": "over --peer-timeout 60 s: 0, over --peer-memory-mb 1 MB: 2"}
    assert f"rs-trafilatura: pages {counts[kind]}, crashed its worker: 0" in printed.out
    assert "resiliparse:" not in printed.out  # no line for a peer that failed on no page
    rows = {(r["extractor"], r["group"]): r for r in json.loads((out / "summary.json").read_text())["summary"]}
    mine, other = rows[("rs-trafilatura", "ALL")], rows[("resiliparse", "ALL")]
    assert mine[column] == 2 and mine["word_f1"] == 0.0  # both pages: the peer's empty text, counted
    assert sum(mine[f"failed_{k}"] for k in peers.FAILURES) == 2
    assert other[column] == 0 and other["word_r"] > 0.9  # the other peer, same pages: scored as usual
    with open(out / "summary.csv", encoding="utf-8") as f:
        assert {r["extractor"]: r[column] for r in csv.DictReader(f) if r["group"] == "ALL"}["rs-trafilatura"] == "2"
    with open(out / "pages.csv", encoding="utf-8") as f:
        failed = {(r["extractor"], r["failed"]) for r in csv.DictReader(f)}
    assert failed == {("rs-trafilatura", kind), ("resiliparse", "")}
    assert not list(cache.glob("rs-trafilatura-*/*/*.txt"))  # a failure is not kept: a later run tries again


@pytest.mark.parametrize("argv", [["--peer-timeout", "-1"], ["--peer-timeout", "inf"], ["--peer-memory-mb", "1.5"],
                                  ["--peer-memory-mb", "lots"]])
def test_a_peer_limit_that_is_not_a_number_of_0_or_more_is_a_usage_error(tmp_path, capsys, argv):
    status, err = cli(capsys, "evaluate", "--dataset", "simple", str(DATA / "simple"), "--extractors", "all-nodes",
                      *argv, "--out", str(tmp_path / "out"))
    assert status == 2 and argv[0] in err and not (tmp_path / "out").exists()
