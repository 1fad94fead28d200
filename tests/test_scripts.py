"""The experiment scripts that need no dataset: what their pieces do (experiments/ is not a package)."""
from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _script(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "experiments" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_markup_transforms_change_only_what_they_name():
    t = _script("markup_robustness").TRANSFORMS
    html = (b"<article class='post main' id=top><nav class=\"menu\"><a href=/ class=menu>Home</a></nav>"
            b"<p class=\"post\">Text <param name=x></p><section><P>More</P></section><header>H</header></article>")
    assert t["none"](html) == html
    hashed = t["classes"](html)
    assert b"post" not in hashed and b"menu" not in hashed and b"id=top" in hashed
    # the same name gets the same hash wherever it is: a page's template still repeats
    assert hashed.count(t["classes"](b'<p class="post">')[len(b'<p class="'):-2]) == 2
    assert b"top" not in t["classes-ids"](html) and b"href=/" in t["classes-ids"](html)
    assert t["p-div"](html).count(b"<div") == 2 and b"<param" in t["p-div"](html)
    # text is not markup: a code sample that shows a class, or "id =42" in a sentence, stays as written
    text = b"<p>Set the user id =42</p><code>&lt;nav class=menu&gt;</code><code>&lt;div class=\"warning\"&gt;</code>"
    assert t["classes-ids"](text) == text
    landmarks = t["landmarks-div"](html)
    assert not any(tag in landmarks for tag in (b"<article", b"<nav", b"<section", b"<header", b"</article"))
    assert b"<p class" in landmarks


def test_translated_pages_prints_a_row_per_language(capsys):
    assert _script("translated_pages").main([]) == 0
    rows = capsys.readouterr().out.splitlines()
    langs = [r.split()[1] for r in rows[1:]]
    assert sorted(langs) == ["ar", "de", "en", "ja", "ko", "pt", "ru", "th", "zh"]
    # every version keeps all of the English page's nodes and misses none; one extra node at most, the
    # standfirst, which the standfirst rule keeps where a translation gives it STANDFIRST_WORDS (tests/test_words.py)
    english = next(r.split() for r in rows[1:] if r.split()[1] == "en")
    for r in rows[1:]:
        kept, as_en, missing = (int(v) for v in r.split()[2:5])
        assert as_en == int(english[2]) and missing == 0 and kept - as_en <= 1, r


def test_compare_curves_reads_epoch_lines_and_plots_each_fold(tmp_path, capsys):
    compare = _script("compare_curves")
    log = tmp_path / "run.log"
    log.write_text("[01:00:00] loaded 10 pages\n[01:00:05]   epoch 1: train loss 1.0, validation 0.80\n"
                   "noise\n[01:00:09]   epoch 2: train loss 0.7, validation 0.85\n"
                   "[01:01:00]   epoch 1: train loss 0.9, validation 0.82\n", encoding="utf-8")
    # a run restarted in the same log keeps its last pass at each epoch
    assert compare.read_curve(log) == [(1, 0.82), (2, 0.85)]
    out = tmp_path / "curves.png"
    assert compare.main(["--out", str(out), f"a:fold1:{log}", f"b:fold1:{log}", f"a:fold2:{log}"]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    printed = capsys.readouterr().out
    assert "best validation 0.8500 (epoch 2)" in printed and printed.count("fold1") == 2
    # a weight-averaged run's log adds its average's curve, which the epochs' own curve does not read
    averaged = tmp_path / "avg.log"
    averaged.write_text("[01:00:05]   epoch 1: train loss 1.0, validation 0.80\n"
                        "[01:00:06]   epoch 1: validation of the average of epochs 1-1 0.83\n", encoding="utf-8")
    assert compare.read_curve(averaged) == [(1, 0.80)] and compare.read_curve(averaged, average=True) == [(1, 0.83)]
    assert compare.main(["--out", str(out), f"swa:fold1:{averaged}"]) == 0
    assert "swa, weight average" in capsys.readouterr().out
    import pytest

    with pytest.raises(SystemExit):
        compare.main(["--out", str(out), "no-fold-given"])


def test_empty_references_splits_the_mean_at_the_pages_without_a_reference(tmp_path, capsys):
    import gzip
    import json

    root = tmp_path / "wcxb"
    (root / "html").mkdir(parents=True)
    (root / "ground-truth").mkdir()
    for pid, content in (("0001", "Rivers rose all night."), ("0002", ""), ("0003", "  \n "), ("0004", "Text.")):
        with gzip.open(root / "html" / f"{pid}.html.gz", "wt", encoding="utf-8") as f:
            f.write(f"<html><body><p>page {pid}</p></body></html>")
        truth = {"url": f"https://site{pid}.test/", "_internal": {"page_type": {"primary": "article"}},
                 "ground_truth": {"title": "", "main_content": content, "with": [], "without": []}}
        (root / "ground-truth" / f"{pid}.json").write_text(json.dumps(truth), encoding="utf-8")
    first, later = tmp_path / "a.csv", tmp_path / "b.csv"
    header = "page_id,group,extractor,word_p,word_r,word_f1\n"
    first.write_text(header + "".join(f"{p},article,x,0,0,{v}\n" for p, v in
                                      (("0001", 0.8), ("0002", 0.0), ("0003", 1.0), ("0004", 0.4))), encoding="utf-8")
    later.write_text(header + "0004,article,x,0,0,0.6\n", encoding="utf-8")  # replaces the first file's row
    script = _script("empty_references")
    assert script.reference_less(root) == ["0002", "0003"]
    m = script.means(script.read_scores([first, later]), ["0002", "0003"])["x"]
    assert m["pages"] == 4 and abs(m["all"] - 0.6) < 1e-9 and abs(m["with_reference"] - 0.7) < 1e-9
    assert m["reference_less_scored_1"] == 1
    assert script.main(["--wcxb", str(root), "--pages", str(first)]) == 0
    assert "2 pages without a reference text" in capsys.readouterr().out


def test_empty_references_floor_keeps_nothing_only_under_it():
    from edrew_scrapy.serializer import serialize

    page = serialize(b"<html><body><main><p>Rivers rose all night in the valley town.</p>"
                     b"<p>The bridge held.</p></main></body></html>")
    script = _script("empty_references")
    low = [0.2] * len(page.nodes)  # every node at 0.2: the cap keeps what reaches half of it
    f1s = script.page_f1s(page, low, "", 0.5, 0.7, (0.1, 0.3))
    assert f1s == [0.0, 0.0, 1.0]  # kept text against an empty reference; under the 0.3 floor, nothing
    f1s = script.page_f1s(page, low, "Rivers rose all night in the valley town. The bridge held.", 0.5, 0.7, (0.3,))
    assert f1s[0] > 0.5 and f1s[1] == 0.0  # what extract() keeps matches; under the floor, nothing does


def test_head_ensemble_averages_each_nodes_probability():
    import numpy as np

    mean = _script("head_ensemble").mean_probs([[np.array([0.2, 0.8]), np.array([1.0])],
                                                [np.array([0.4, 0.6]), np.array([0.0])]])
    assert np.allclose(mean[0], [0.3, 0.7]) and np.allclose(mean[1], [0.5])


def test_plot_sets_draws_each_model_and_each_peer_once(tmp_path, capsys):
    import json

    def report(name, f1):
        rows = [{"extractor": e, "group": g, "pages": 3, "word_p": f, "word_r": f, "word_f1": f}
                for g in ("fundus-news", "dragnet", "ALL") for e, f in (("edrew", f1), ("trafilatura", 0.9),
                                                                       ("oracle", 1.0))]
        path = tmp_path / name / "summary.json"
        path.parent.mkdir()
        path.write_text(json.dumps({"summary": rows}))
        return str(path)

    out = tmp_path / "sets.png"
    assert _script("plot_sets").main([str(out), f"default={report('a', 0.8)}", report("cand", 0.85),
                                      "--groups", "fundus-news,dragnet"]) == 0
    assert out.stat().st_size > 0 and "wrote" in capsys.readouterr().out


def test_honest_metric_validation_is_page_word_f1s(monkeypatch):
    """The heads' faster per-epoch validation gives exactly thresholds.page_word_f1s, page by page, at every
    threshold of the grid; its remembered per-node rule tests are put back after the test."""
    import numpy as np

    from edrew_scrapy import rules
    from edrew_scrapy.data import simple, wcxb
    from edrew_scrapy.training.evaluate import reference_text
    from edrew_scrapy.training.thresholds import THRESHOLDS, page_word_f1s

    script = _script("honest_metric")
    for module in script.rule_modules():  # the rules' modules each hold their own name for these
        for name in ("settled", "count_words"):
            if hasattr(module, name):
                monkeypatch.setattr(module, name, getattr(module, name))
    data = ROOT / "tests" / "fixtures" / "data"
    labelled = [*wcxb.iter_pages(data / "wcxb"), *simple.iter_pages(data / "simple")]
    labelled = [lp for lp in labelled if lp.page.nodes]
    pages, refs = [lp.page for lp in labelled], [reference_text(lp) for lp in labelled]
    rng = np.random.default_rng(3)
    # uniform scores, scores near 0 and 1, and one page's best score below every threshold
    runs = [[rng.random(len(p.nodes)).astype(np.float32) ** power for p in pages] for power in (1, 4, 0.2)]
    runs.append([np.full(len(p.nodes), 0.04, dtype=np.float32) for p in pages])
    expected = [[page_word_f1s(probs, pages, refs, t, rules.MAIN_REGION_SHARE) for t in THRESHOLDS] for probs in runs]
    fast = script.validation_scorer(pages, refs, rules.MAIN_REGION_SHARE)
    for probs, want in zip(runs, expected):
        for t, scores in zip(THRESHOLDS, want):
            assert np.array_equal(fast(probs, t), scores), t
    assert len(pages) >= 4 and len({float(s.mean()) for want in expected for s in want}) > 2


def test_news_route_takes_the_news_row_on_confident_articles_only(tmp_path):
    import json

    head = "page_id,group,extractor,word_p,word_r,word_f1,tp,fp,fn,nodes,dataset,failed\n"
    rows = {"a": ("article", 0.9, 0.5), "b": ("article", 0.6, 0.5), "c": ("listing", 0.99, 0.9)}
    news = {"a": 0.9, "b": 0.8, "c": 0.1}
    (tmp_path / "runs.csv").write_text(head + "".join(
        f"{p},art,{name},{f1},{f1},{f1},3,1,1,10,d,\n" for p, (_, _, base) in rows.items()
        for name, f1 in (("news", news[p]), ("base", base))), encoding="utf-8")
    (tmp_path / "types.csv").write_text("page_id,label,type,prob,fold_type,fold_prob\n" + "".join(
        f"{p},,{kind},{prob},,\n" for p, (kind, prob, _) in rows.items()), encoding="utf-8")
    out = tmp_path / "out.json"
    assert _script("news_route").main(["route", "--news", f"{tmp_path}/runs.csv:news", "--base",
                                       f"{tmp_path}/runs.csv:base", "--types", str(tmp_path / "types.csv"),
                                       "--json", str(out)]) == 0
    got = json.loads(out.read_text())["thresholds"]
    # everywhere: (0.4 + 0.3 - 0.8) / 3; at 0.5 a and b routed; at 0.8 only a; c is no article at any threshold
    for key, mean, routed in (("news", -0.1 / 3, 3), ("0.5", 0.7 / 3, 2), ("0.8", 0.4 / 3, 1)):
        assert abs(got[key]["all"]["diff_word_f1"][0] - mean) < 1e-9 and got[key]["all"]["to_news"] == routed
    assert got["0.8"]["all"]["up"] == 1 and got["0.8"]["all"]["down"] == 0
