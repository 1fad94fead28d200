"""Training smoke test: a few hand-written labelled pages, seconds, reproducible."""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from _model_helpers import TINY

from edrew_scrapy.model.elmo import default_options
from edrew_scrapy.model.scorer import load_model
from edrew_scrapy.serializer import serialize
from edrew_scrapy.training.pretrain import build_vocab, sequences_from_html
from edrew_scrapy.training.thresholds import choose_threshold
from edrew_scrapy.training.train import TrainConfig, check_config, split_by_group, train

torch.set_num_threads(1)

ARTICLE = "<p>{}</p>"
PAGE = """<html><head><title>Site {i}</title></head><body>
<nav class="menu"><ul><li><a href="/">Home</a></li><li><a href="/news">News</a></li>\
<li><a href="/about">About us</a></li></ul></nav>
<main><article class="post-content"><h1>Story number {i} about rivers</h1>{paras}</article></main>
<footer class="site-footer"><p>Copyright 2026 Example</p><a href="/privacy">Privacy</a></footer>
</body></html>"""


def write_dataset(root, n=8):
    records = []
    for i in range(n):
        paras = [f"Paragraph {k} of story {i}: the river rose by {k + i} metres and the town watched it all night."
                 for k in range(3)]
        html = PAGE.format(i=i, paras="".join(ARTICLE.format(p) for p in paras))
        (root / f"p{i}.html").write_text(html, encoding="utf-8")
        records.append({"file": f"p{i}.html", "url": f"http://site{i}.test/story",
                        "relevant": [f"Story number {i} about rivers"] + paras})
    (root / "labels.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")


def config(tmp_path, out, variants=("a", "d")):
    return TrainConfig(dataset="simple", path=tmp_path / "data", out=tmp_path / out, variants=variants,
                       pretrain_steps=4, pretrain_minutes=1, max_minutes=2, epochs=3, seed=5,
                       val_fraction=0.25, test_fraction=0.25, options=default_options(**TINY), progress=False)


def test_training_writes_loadable_models_reproducibly(tmp_path):
    (tmp_path / "data").mkdir()
    write_dataset(tmp_path / "data")
    summary = train(config(tmp_path, "run1"))
    assert set(summary["variants"]) == {"a", "d"}
    model_dir = tmp_path / "run1" / "variant-d"
    assert (model_dir / "training.png").stat().st_size > 0
    scorer = load_model(model_dir)
    card = scorer.card
    assert 0 < card["threshold"] < 1 and card["metrics"]["validation"]["pages"] == 2
    assert card["training"]["dataset"] == "user dataset"
    assert card["region_share"] is None and scorer.region_share is None  # node metric: values anywhere
    page = serialize((tmp_path / "data" / "p0.html").read_bytes())
    first = scorer.score([page])[0]
    assert first.shape == (len(page.nodes),)
    # the same seed gives the same model
    train(config(tmp_path, "run2", variants=("d",)))
    again = load_model(tmp_path / "run2").score([page])[0]
    assert np.allclose(first, again, atol=1e-6)


def test_region_share_follows_the_metric_unless_given(tmp_path):
    from edrew_scrapy.rules import MAIN_REGION_SHARE
    from edrew_scrapy.training.train import _region_share

    cfg = config(tmp_path, "x")
    assert _region_share(cfg, "word") == MAIN_REGION_SHARE and _region_share(cfg, "node") is None
    cfg.region_share = 0.9
    assert _region_share(cfg, "node") == 0.9
    cfg.region_share = None
    assert _region_share(cfg, "word") is None


def train_main_content(tmp_path, variant, skip_settled=False):
    """A main-content model (word metric, automatic region share) in tmp_path/region."""
    (tmp_path / "data").mkdir()
    write_dataset(tmp_path / "data")
    cfg = config(tmp_path, "region", variants=(variant,))
    cfg.metric, cfg.region_share, cfg.skip_settled = "word", "auto", skip_settled
    train(cfg)
    return load_model(tmp_path / "region")


def test_head_with_a_region_share_writes_it_to_the_card(tmp_path):
    scorer = train_main_content(tmp_path, "c")
    assert scorer.card["region_share"] == 0.7 == scorer.region_share
    assert scorer.card["threshold_metric"] == "word"


def test_main_content_threshold_is_chosen_on_the_scores_extract_computes(tmp_path):
    # score_pages leaves the settled nodes (here the <nav> and the page <footer>) unscored, and the head then
    # reads the page without them: the card's threshold and validation metrics come from those scores
    from edrew_scrapy.data import simple
    from edrew_scrapy.training.evaluate import reference_text
    from edrew_scrapy.training.thresholds import choose_threshold_within_noise, page_word_f1s
    from edrew_scrapy.training.train import shipped_probs

    card = train_main_content(tmp_path, "d").card
    assert card["training"]["threshold_scores"].startswith("extract.score_pages")
    labelled = [lp for lp in simple.iter_pages(tmp_path / "data") if lp.page.nodes]
    _train, val_idx, _test = split_by_group([lp.domain for lp in labelled], 0.25, 0.25, seed=5)
    val = [labelled[i] for i in val_idx]
    probs = shipped_probs(tmp_path / "region", [lp.page for lp in val])
    assert all(float(p[n.index]) == 0.0 for lp, p in zip(val, probs) for n in lp.page.nodes if n.boilerplate)
    refs = [reference_text(lp) for lp in val]
    best, score = choose_threshold_within_noise(lambda t: page_word_f1s(probs, [lp.page for lp in val], refs, t, 0.7))
    assert card["threshold"] == best
    assert card["training"]["threshold_rule"].startswith("the grid value nearest 0.5 within one standard error")
    assert abs(card["metrics"]["validation"]["word_f1"] - round(score, 4)) < 1e-4


def test_pretraining_corpus_from_a_folder(tmp_path):
    write_dataset(tmp_path, n=2)
    seqs = sequences_from_html(tmp_path, progress=False)
    assert seqs and all(seq for seq in seqs)
    vocab = build_vocab(seqs)
    assert vocab[:3] == ["<UNK>", "<S>", "</S>"] and "<#CNT>" in vocab


def test_split_keeps_groups_together():
    groups = ["a", "a", "b", "c", "c", "c", "d", "e"]
    train_idx, val_idx, test_idx = split_by_group(groups, 0.2, 0.2, seed=1)
    assert sorted(train_idx + val_idx + test_idx) == list(range(len(groups)))
    sides = [{groups[i] for i in part} for part in (train_idx, val_idx, test_idx)]
    assert not (sides[0] & sides[1]) and not (sides[0] & sides[2]) and not (sides[1] & sides[2])


def test_threshold_choice():
    best, score = choose_threshold(lambda t: 1.0 - abs(t - 0.3))
    assert best == 0.3 and score == 1.0


def test_head_only_training_reuses_a_biLM_unchanged(tmp_path):
    from edrew_scrapy.model import files

    (tmp_path / "data").mkdir()
    write_dataset(tmp_path / "data")
    train(config(tmp_path, "first", variants=("c",)))
    cfg = config(tmp_path, "second", variants=("d",))
    cfg.bilm_from = tmp_path / "first"
    cfg.pretrain_steps = 10_000  # ignored: nothing is pre-trained when a biLM is reused
    train(cfg)
    with open(tmp_path / "first" / files.WEIGHTS, "rb") as a, open(tmp_path / "second" / files.WEIGHTS, "rb") as b:
        assert a.read() == b.read()
    card = load_model(tmp_path / "second").card
    assert card["head"]["variant"] == "d"
    assert card["training"]["pretrain"]["reused_from"] == str(tmp_path / "first")
    assert card["training"]["pretrain"]["steps"] == 4 and card["training"]["device"] == "cpu"


def test_head_only_training_refuses_a_broken_biLM(tmp_path):
    import pytest

    (tmp_path / "data").mkdir()
    write_dataset(tmp_path / "data")
    cfg = config(tmp_path, "out", variants=("d",))
    cfg.bilm_from = tmp_path / "missing"
    with pytest.raises(ValueError, match="cannot reuse the biLM"):
        train(cfg)


def test_a_head_can_train_on_pages_as_it_scores_them(tmp_path):
    # extract() scores a page without the nodes its rules settle (Scorer.score(skip=settled)); with
    # skip_settled the head is trained on the same node sequences, and predict() realigns with page.nodes
    from edrew_scrapy.data import simple
    from edrew_scrapy.model.scorer import load_head
    from edrew_scrapy.rules import settled
    from edrew_scrapy.training.head_training import encode_pages, predict
    from edrew_scrapy.training.train import reuse_bilm, shipped_probs

    scorer = train_main_content(tmp_path, "d", skip_settled=True)
    assert scorer.card["training"]["head_pages"] == "without the nodes extract.settled marks"
    labelled = [lp for lp in simple.iter_pages(tmp_path / "data") if lp.page.nodes]
    pages = [lp.page for lp in labelled]
    _options, bilm, _info = reuse_bilm(tmp_path / "region")
    enc = encode_pages(bilm, pages, [lp.labels for lp in labelled], progress=False, skip=settled)
    for page, item in zip(pages, enc.pages):
        kept = [n.index for n in page.nodes if not settled(n)]
        assert 0 < len(kept) < len(page.nodes)  # the <nav> and the page <footer> are left out
        assert item["at"].tolist() == kept and len(item["y"]) == len(kept) == item["feats"].shape[0]
    probs = predict(load_head(tmp_path / "region", scorer.card), enc, range(len(pages)))
    expected = shipped_probs(tmp_path / "region", pages)
    for page, p, e in zip(pages, probs, expected):
        assert p.shape == (len(page.nodes),)
        assert all(p[n.index] == 0.0 for n in page.nodes if settled(n))
        assert np.allclose(p, e, atol=5e-3)  # training's encodings are stored in float16


def test_heads_train_on_whole_pages_by_default(tmp_path):
    assert train_main_content(tmp_path, "c").card["training"]["head_pages"] == "whole pages"


def train_d(tmp_path, out, **changes):
    """Variant d on the hand-written pages (written once per test), with `changes` to the config."""
    if not (tmp_path / "data").exists():
        (tmp_path / "data").mkdir()
        write_dataset(tmp_path / "data")
    cfg = config(tmp_path, out, variants=("d",))
    for key, value in changes.items():
        setattr(cfg, key, value)
    train(cfg)
    return load_model(tmp_path / out)


def test_a_head_can_read_fewer_features_as_older_models_do(tmp_path):
    # `edrew train --features 16` reproduces models/default's head, trained before the declared-kind features
    from edrew_scrapy.data import simple
    from edrew_scrapy.model.features import N_FEATURES, page_features

    scorer = train_d(tmp_path, "f16", n_features=16)
    assert scorer.card["head"]["n_features"] == 16 < N_FEATURES
    pages = [lp.page for lp in simple.iter_pages(tmp_path / "data") if lp.page.nodes]
    assert page_features(pages[0], 16).shape[1] == 16
    scores = scorer.score(pages)
    assert all(s.shape == (len(p.nodes),) and np.all((s >= 0) & (s <= 1)) for s, p in zip(scores, pages))
    with pytest.raises(ValueError, match="--features must be"):
        train_d(tmp_path, "f27", n_features=N_FEATURES + 1)


def test_a_head_reads_the_container_features_when_told(tmp_path):
    # `edrew train --features 26`: the six container features after the first 20; the default stays 20
    from edrew_scrapy.data import simple
    from edrew_scrapy.model.features import DEFAULT_FEATURES, N_FEATURES
    from edrew_scrapy.training.train import TrainConfig

    assert TrainConfig.n_features == DEFAULT_FEATURES == 20 < N_FEATURES == 26
    scorer = train_d(tmp_path, "f26", n_features=N_FEATURES)
    assert scorer.card["head"]["n_features"] == 26
    pages = [lp.page for lp in simple.iter_pages(tmp_path / "data") if lp.page.nodes]
    scores = scorer.score(pages)
    assert all(s.shape == (len(p.nodes),) and np.all((s >= 0) & (s <= 1)) for s, p in zip(scores, pages))


def test_the_card_records_the_epochs_that_retrain_the_same_head(tmp_path):
    # A budget in minutes ends training wherever the machine has got to; the card says which epoch was
    # kept, so that `--epochs <best>` with fixed pre-training steps gives the same model anywhere.
    run = train_d(tmp_path, "long", epochs=6).card["training"]["head_epochs"]
    assert run["epochs_run"] == 6 and run["stopped_by"] == "epochs" and run["best_epoch_whole"] is True
    # on these pages and seed the validation score peaks before the last epoch (at 4 of 6), so the
    # short run below does not merely repeat the long one
    assert 1 <= run["best_epoch"] < run["epochs_run"]
    short = train_d(tmp_path, "short", epochs=run["best_epoch"]).card["training"]["head_epochs"]
    assert short["best_epoch"] == short["epochs_run"] == run["best_epoch"]
    page = serialize((tmp_path / "data" / "p3.html").read_bytes())
    assert np.array_equal(load_model(tmp_path / "long").score([page])[0],
                          load_model(tmp_path / "short").score([page])[0])


def test_page_share_weights_each_page_alike_and_each_node_by_its_words(tmp_path):
    from edrew_scrapy.commands.options import NODE_WEIGHTS as CHOICES
    from edrew_scrapy.training.head_training import NODE_WEIGHTS, _node_weights

    assert CHOICES == NODE_WEIGHTS  # the command lines offer what training accepts

    short, long = _node_weights([0, 9], "page-share"), _node_weights([1, 1, 1, 96, 1], "page-share")
    assert float(short.sum()) == pytest.approx(1.0) and float(long.sum()) == pytest.approx(1.0)
    assert float(long[3] / long[0]) == pytest.approx(96.1 / 1.1)
    assert _node_weights([0, 1000], "log").tolist() == pytest.approx([0.5, 0.5 + np.log1p(1000)])
    card = train_d(tmp_path, "shares", node_weights="page-share", epochs=2).card
    assert card["training"]["node_weights"] == "page-share"
    assert train_d(tmp_path, "logs", epochs=2).card["training"]["node_weights"] == "log"


def test_a_wider_head_is_written_loaded_and_scores_as_trained(tmp_path):
    # the widths reach the card, and a scorer built from the card rebuilds the same head
    scorer = train_d(tmp_path, "wide", node_dim=64, context_dim=48, dropout=0.4, epochs=2)
    assert (scorer.card["head"]["node_dim"], scorer.card["head"]["context_dim"]) == (64, 48)
    assert scorer.card["head"]["dropout"] == 0.4 and scorer.head.node[0].p == 0.4
    assert scorer.head.context.hidden_size == 48 and scorer.head.node[1].out_features == 64
    page = serialize((tmp_path / "data" / "p3.html").read_bytes())
    scores = scorer.score([page])[0]
    assert len(scores) == len(page.nodes) and np.all((scores >= 0) & (scores <= 1))


@pytest.mark.parametrize("change, message", [
    ({"variants": ("z",)}, "--variant: unknown 'z'"),
    ({"epochs": 0}, "--epochs must be at least 1"),
    ({"pretrain_steps": 0}, "--pretrain-steps must be at least 1"),
    ({"val_fraction": 1.5}, "--val-fraction"),
    ({"val_fraction": 0.0}, "--val-fraction"),
    ({"val_fraction": 0.5, "test_fraction": 0.5}, "their sum below 1"),
    ({"limit": 2}, "--limit must be at least 3"),
    ({"n_features": 0}, "--features must be 1..26"),
    ({"node_weights": "linear"}, "--node-weights must be one of log, page-share"),
    ({"node_dim": 0}, "--node-dim must be 1..1024"),
    ({"context_dim": 4096}, "--context-dim must be 1..1024"),
    ({"node_dim": True}, "--node-dim must be 1..1024"),
    ({"average_epochs": -1}, "--average-epochs must be 0 or a positive number"),
    ({"average_epochs": 1.5}, "--average-epochs must be 0 or a positive number"),
    ({"average_epochs": True}, "--average-epochs must be 0 or a positive number"),
    ({"lr_schedule": "linear"}, "--lr-schedule must be one of constant, cosine"),
    ({"dropout": 1.0}, r"--dropout must be a number in \[0, 1\)"),
    ({"dropout": -0.1}, r"--dropout must be a number in \[0, 1\)"),
    ({"dropout": float("nan")}, r"--dropout must be a number in \[0, 1\)"),
])
def test_bad_options_fail_before_any_page_is_read(tmp_path, change, message):
    # the dataset folder does not exist: the option is named before anything is loaded or pre-trained
    cfg = config(tmp_path, "never")
    for key, value in change.items():
        setattr(cfg, key, value)
    with pytest.raises(ValueError, match=message):
        train(cfg)
    assert not (tmp_path / "never").exists()


def test_labels_that_match_no_node_are_refused(tmp_path):
    (tmp_path / "data").mkdir()
    write_dataset(tmp_path / "data")
    records = [dict(json.loads(line), relevant=["words on no page at all"])
               for line in (tmp_path / "data" / "labels.jsonl").read_text().splitlines()]
    (tmp_path / "data" / "labels.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n")
    with pytest.raises(ValueError, match="no node matches the labels; nothing to learn from"):
        train(config(tmp_path, "none"))


def test_pretraining_needs_text_nodes(tmp_path):
    # a pre-training folder whose pages hold no text used to crash formatting the loss of zero steps
    (tmp_path / "data").mkdir()
    write_dataset(tmp_path / "data")
    (tmp_path / "html").mkdir()
    (tmp_path / "html" / "empty.html").write_text("<html><body><img src=x></body></html>")
    cfg = config(tmp_path, "out", variants=("d",))
    cfg.pretrain_html = tmp_path / "html"
    with pytest.raises(ValueError, match=f"^{tmp_path / 'html'}: no text nodes to pre-train the biLM on"):
        train(cfg)


def test_pages_of_one_domain_leave_nothing_to_train_on(tmp_path):
    # the only domain goes whole to validation: said so, not a crash on an empty pre-training corpus
    (tmp_path / "data").mkdir()
    write_dataset(tmp_path / "data", n=4)
    labels = tmp_path / "data" / "labels.jsonl"
    labels.write_text("".join(json.dumps(dict(json.loads(line), url="http://one.test/story")) + "\n"
                              for line in labels.read_text().splitlines()))
    with pytest.raises(ValueError, match="no pages left to train on: .* the 4 pages come from 1 domain"):
        train(config(tmp_path, "out", variants=("d",)))


def test_hosts_of_one_registrable_domain_are_one_group(tmp_path):
    # uk.one.test and us.one.test are one site: by registrable domain (the default) nothing is left to
    # train on, by host (as the shipped models were trained) the split is made and the refusal is not
    (tmp_path / "data").mkdir()
    write_dataset(tmp_path / "data", n=4)
    labels = tmp_path / "data" / "labels.jsonl"
    labels.write_text("".join(json.dumps(dict(json.loads(line), url=f"http://h{i}.one.test/story")) + "\n"
                              for i, line in enumerate(labels.read_text().splitlines())))
    with pytest.raises(ValueError, match="no pages left to train on: .* the 4 pages come from 1 domain"):
        train(config(tmp_path, "out", variants=("a",)))
    cfg = config(tmp_path, "out", variants=("a",))
    cfg.group_by = "host"
    cfg.pretrain_steps = 1
    cfg.epochs = 1
    train(cfg)
    card = load_model(tmp_path / "out").card
    assert card["training"]["split_rule"] == "pages grouped by host, seeded shuffle of groups"


def test_group_by_is_checked_before_anything_runs(tmp_path):
    cfg = config(tmp_path, "out")
    cfg.group_by = "site"
    with pytest.raises(ValueError, match="--group-by must be domain or host, got 'site'"):
        check_config(cfg)


def test_swde_pages_that_leave_nothing_to_train_on_are_a_value_error(tmp_path):
    # the message counts the sites; it used the WCXB branch's group keys and raised UnboundLocalError
    from pathlib import Path

    swde = Path(__file__).parent / "fixtures" / "data" / "swde"
    cfg = TrainConfig(dataset="swde", path=swde, out=tmp_path / "out", variants=("a",), limit=3,
                      val_fraction=0.5, test_fraction=0.4, pretrain_steps=1, epochs=1,
                      options=default_options(**TINY), progress=False)
    with pytest.raises(ValueError, match="no pages left to train on: .* the 3 pages come from"):
        train(cfg)


def test_threshold_within_noise_stays_at_the_middle_when_the_gain_is_noise():
    # one page gains a lot at 0.1, the others lose a little: the best mean, but not beyond its noise
    from edrew_scrapy.training.thresholds import choose_threshold_within_noise

    def scores(t):
        if t == 0.1:
            return np.array([0.9, 0.78, 0.79, 0.8, 0.8])
        return np.array([0.5, 0.8, 0.8, 0.8, 0.8]) - abs(t - 0.5) * 0.01
    best, _ = choose_threshold(lambda t: float(scores(t).mean()))
    assert best == 0.1
    chosen, score = choose_threshold_within_noise(scores)
    assert chosen == 0.5 and score == pytest.approx(0.74)


def test_threshold_within_noise_follows_a_consistent_gain():
    from edrew_scrapy.training.thresholds import choose_threshold_within_noise

    base = np.linspace(0.6, 0.9, 40)
    chosen, score = choose_threshold_within_noise(lambda t: base + (0.05 if t == 0.3 else 0.0) - abs(t - 0.3) * 0.01)
    assert chosen == 0.3 and score == pytest.approx(float(base.mean()) + 0.05)


def test_threshold_within_noise_with_one_page_takes_the_best():
    from edrew_scrapy.training.thresholds import choose_threshold_within_noise

    chosen, _ = choose_threshold_within_noise(lambda t: np.array([1.0 - abs(t - 0.2)]))
    assert chosen == 0.2


def test_a_head_with_dom_context_trains_loads_and_scores_as_it_trained(tmp_path):
    # tree_levels: the head pools over ancestor groups; training (padded batches of pages) and the scorer
    # (one page, the settled nodes left out) must group the same nodes alike
    from edrew_scrapy.data import simple
    from edrew_scrapy.model.scorer import load_head
    from edrew_scrapy.rules import settled
    from edrew_scrapy.training.head_training import encode_pages, predict
    from edrew_scrapy.training.train import reuse_bilm, shipped_probs

    (tmp_path / "data").mkdir()
    write_dataset(tmp_path / "data")
    cfg = config(tmp_path, "tree", variants=("d",))
    cfg.metric, cfg.region_share, cfg.tree_levels = "word", "auto", 3
    train(cfg)
    scorer = load_model(tmp_path / "tree")
    assert scorer.card["head"]["tree_levels"] == 3 and scorer.head.tree_levels == 3
    labelled = [lp for lp in simple.iter_pages(tmp_path / "data") if lp.page.nodes]
    pages = [lp.page for lp in labelled]
    _options, bilm, _info = reuse_bilm(tmp_path / "tree")
    enc = encode_pages(bilm, pages, [lp.labels for lp in labelled], progress=False, skip=settled)
    probs = predict(load_head(tmp_path / "tree", scorer.card), enc, range(len(pages)))
    for p, e in zip(probs, shipped_probs(tmp_path / "tree", pages)):
        assert np.allclose(p, e, atol=5e-3)  # training's encodings are stored in float16
    # a batch of pages of different lengths scores each page as it scores alone
    from edrew_scrapy.training.head_training import _batch, head_logits

    head = load_head(tmp_path / "tree", scorer.card)
    items = [enc.pages[i] for i in range(3)]
    with torch.inference_mode():
        together = torch.sigmoid(head_logits(head, enc, _batch(enc, items, torch.device("cpu"))))
        for r, item in enumerate(items):
            alone = torch.sigmoid(head_logits(head, enc, _batch(enc, [item], torch.device("cpu"))))[0]
            assert torch.allclose(together[r, : len(alone)], alone, atol=1e-5)


def test_tree_levels_out_of_range_are_refused_before_training(tmp_path):
    cfg = config(tmp_path, "x")
    cfg.tree_levels = 5
    with pytest.raises(ValueError, match="--tree-levels"):
        check_config(cfg)


def _tiny_head_run(tmp_path):
    """train_head on four hand-written pages (one batch an epoch) and a TINY biLM: run(epochs, **options)."""
    from edrew_scrapy.data import simple
    from edrew_scrapy.model.elmo import ElmoBiLm
    from edrew_scrapy.model.head import Head, head_config
    from edrew_scrapy.training.head_training import encode_pages, train_head

    (tmp_path / "data").mkdir()
    write_dataset(tmp_path / "data", n=4)
    labelled = [lp for lp in simple.iter_pages(tmp_path / "data") if lp.page.nodes]
    torch.manual_seed(0)
    bilm = ElmoBiLm(default_options(**TINY))
    enc = encode_pages(bilm, [lp.page for lp in labelled], [lp.labels for lp in labelled], progress=False)

    def run(epochs, minutes=5.0, average_epochs=0, lr_schedule="constant"):
        torch.manual_seed(3)
        head = Head(head_config("d", bilm.output_dim, bilm.num_layers, TINY["projection_dim"]))
        rising = iter(range(100))  # every epoch validates better than the last: without averaging the last is kept
        return train_head(head, enc, [0, 1, 2], [3], lambda probs: next(rising), epochs=epochs, minutes=minutes,
                          seed=1, progress=False, average_epochs=average_epochs,
                          lr_schedule=lr_schedule)
    return run


def test_weight_averaging_keeps_the_mean_of_the_last_epochs_weights(tmp_path):
    # average_epochs: the head kept is the uniform mean of its weights after every step of the last N
    # epochs, on the trajectory the same seed gives without averaging. With one batch an epoch, the mean of
    # the last two epochs is the mean of the heads that 3 and 4 epochs end with.
    run = _tiny_head_run(tmp_path)
    three, _, _ = run(3)
    four, plain_curves, plain = run(4)
    mean, curves, info = run(4, average_epochs=2)
    assert plain["best_epoch"] == 4 and "kept" not in plain
    assert info["kept"] == "average" and info["average_epochs"] == [3, 4] and info["average_steps"] == 2
    assert curves["train_loss"].values == plain_curves["train_loss"].values  # the same trajectory
    assert curves["val_average"].steps == [3, 4]
    assert set(mean) == set(four)
    for key in four:
        assert torch.allclose(mean[key], (three[key] + four[key]) / 2, atol=1e-6), key


def test_averaging_that_never_began_keeps_the_best_epoch(tmp_path):
    # the minute budget can end training before the last N epochs; the head is then the best epoch's
    run = _tiny_head_run(tmp_path)
    first, _, _ = run(1)
    state, _, info = run(3, minutes=1e-9, average_epochs=2)
    assert info["epochs_run"] == 1 and info["kept"] == "best epoch" and info["average_epochs"] is None
    assert all(torch.equal(state[k], first[k]) for k in first)


def test_average_epochs_reach_the_card(tmp_path):
    card = train_d(tmp_path, "avg", epochs=3, average_epochs=2).card
    assert card["training"]["head_epochs"]["kept"] == "average"
    assert card["training"]["average_epochs"] == 2


def test_cosine_schedule_decays_the_rate_from_whole_to_nothing(tmp_path):
    from edrew_scrapy.commands.options import LR_SCHEDULES as CHOICES
    from edrew_scrapy.training.head_training import LR_SCHEDULES, cosine_factor

    assert CHOICES == LR_SCHEDULES  # the command lines offer what training accepts
    assert cosine_factor(0, 10) == 1.0 and cosine_factor(5, 10) == pytest.approx(0.5)
    assert cosine_factor(10, 10) == pytest.approx(0.0) and cosine_factor(12, 10) == pytest.approx(0.0)
    assert cosine_factor(2, 10) > cosine_factor(3, 10) > cosine_factor(7, 10)
    # the first step runs at the whole rate, so one epoch of one batch is the constant schedule's epoch
    run = _tiny_head_run(tmp_path)
    constant, _, _ = run(1)
    cosine, _, _ = run(1, lr_schedule="cosine")
    assert all(torch.equal(constant[k], cosine[k]) for k in constant)
    later, _, _ = run(3, lr_schedule="cosine")
    assert any(not torch.equal(constant[k], later[k]) for k in constant)
    card = train_d(tmp_path, "cosine", epochs=2, lr_schedule="cosine").card
    assert card["training"]["lr_schedule"] == "cosine"


def test_pages_without_a_reference_can_be_left_out_of_the_head(tmp_path):
    # a page whose annotation holds no text is unannotated rather than all boilerplate: with
    # skip_empty_references it neither trains nor validates the head; by default it trains with every node
    # negative, as the shipped models did. The card says how many such pages there were and what was done.
    from edrew_scrapy.data import simple

    root = tmp_path / "data"
    root.mkdir()
    write_dataset(root, n=10)
    records = [json.loads(line) for line in (root / "labels.jsonl").read_text(encoding="utf-8").splitlines()]
    for r in records[::3]:  # p0, p3, p6, p9: annotated with nothing
        r["relevant"] = []
    (root / "labels.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    labelled = [lp for lp in simple.iter_pages(root) if lp.page.nodes]
    train_idx, val_idx, _test = split_by_group([lp.domain for lp in labelled], 0.25, 0.25, seed=5)
    empty = [i for i in train_idx + val_idx if not any(labelled[i].labels)]
    assert empty and any(i in train_idx for i in empty)  # the seed puts some on the training side

    kept = train_d(tmp_path, "kept").card["training"]
    left = train_d(tmp_path, "left", skip_empty_references=True).card["training"]
    assert kept["empty_references"] == {"pages": len(empty), "use": "every node negative"}
    assert left["empty_references"] == {"pages": len(empty), "use": "left out"}
    assert left["split"]["train"] == kept["split"]["train"] - sum(i in train_idx for i in empty)
    assert left["split"]["val"] == kept["split"]["val"] - sum(i in val_idx for i in empty)
    assert left["pretrain"]["source"] == kept["pretrain"]["source"]  # the biLM still reads every training page


def test_scripts_redraw_the_validation_pages_that_training_drew(tmp_path, monkeypatch):
    # experiments/threshold_choice.py and empty_references.py score a fold model on its own validation pages:
    # commands.evaluate.validation_pages must draw the pages train() chose its epoch and threshold on
    from edrew_scrapy.commands.evaluate import validation_pages
    from edrew_scrapy.data import simple
    from edrew_scrapy.training import train as training

    root = tmp_path / "data"
    root.mkdir()
    write_dataset(root, n=10)
    (root / "empty.html").write_text("<html><body></body></html>", encoding="utf-8")  # no node: left out
    with (root / "labels.jsonl").open("a", encoding="utf-8") as f:
        f.write(json.dumps({"file": "empty.html", "url": "http://site99.test/", "relevant": []}) + "\n")

    class Stop(Exception):
        pass

    seen = {}
    encode = training.encode_pages

    def keep_pages(bilm, pages, *args, **kwargs):
        seen["pages"] = list(pages)
        return encode(bilm, pages, *args, **kwargs)

    def stop(head, enc, train_idx, val_idx, *args, **kwargs):
        seen["val"] = [seen["pages"][i].url for i in val_idx]
        raise Stop

    monkeypatch.setattr(training, "encode_pages", keep_pages)
    monkeypatch.setattr(training, "train_head", stop)
    with pytest.raises(Stop):
        train(TrainConfig(dataset="simple", path=root, out=tmp_path / "m", variants=("d",), pretrain_steps=2,
                          pretrain_minutes=1, max_minutes=2, epochs=1, seed=7, val_fraction=0.3,
                          options=default_options(**TINY), progress=False))
    pages = list(simple.iter_pages(root))
    redrawn = validation_pages(pages, range(len(pages)), "domain", 0.3, seed=7)
    assert seen["val"] and [lp.page.url for lp in redrawn] == seen["val"]
    assert validation_pages(pages, range(len(pages)), "domain", 0.3, seed=8) != redrawn  # the seed decides
