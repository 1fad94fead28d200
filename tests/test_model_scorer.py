"""Scoring: every variant's shapes, caching that changes nothing, pages without nodes."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from _model_helpers import make_page, tiny_model

from edrew_scrapy.model.head import Head, head_config
from edrew_scrapy.model.scorer import LRU, load_model, pool_words
from edrew_scrapy.page import Page

torch.set_num_threads(1)


@pytest.mark.parametrize("variant", ["a", "b", "c", "d"])
def test_variants_score_every_node(tmp_path, variant):
    tiny_model(tmp_path, variant=variant)
    scorer = load_model(tmp_path)
    pages = [make_page(7), Page(url=None, nodes=[]), make_page(3)]
    scores = scorer.score(pages)
    assert [s.shape for s in scores] == [(7,), (0,), (3,)]
    assert all(s.dtype == np.float32 and ((s >= 0) & (s <= 1)).all() for s in scores)


@pytest.mark.parametrize("variant", ["a", "b", "c", "d"])
def test_head_forward_shapes(variant):
    head = Head(head_config(variant, elmo_dim=16, n_layers=3, token_dim=8))
    n_feat = head.config["n_features"]
    logits = head(torch.randn(2, 5, 32), torch.randn(2, 5, 16), torch.randn(2, 5, n_feat), torch.tensor([5, 3]))
    assert logits.shape == (2, 5)
    assert head.mix(torch.randn(4, 3, 2, 16)).shape == (4, 32)


def test_scores_do_not_depend_on_batching_or_cache(tmp_path):
    tiny_model(tmp_path)
    a, b = make_page(6), make_page(9, url="http://example.test/q")
    together = load_model(tmp_path).score([a, b])
    scorer = load_model(tmp_path)
    alone = [scorer.score([a])[0], scorer.score([b])[0]]
    again = scorer.score([b, a])
    for x, y in zip(together, alone):
        assert np.allclose(x, y, atol=1e-6)
    assert np.allclose(again[0], together[1], atol=1e-6) and np.allclose(again[1], together[0], atol=1e-6)


def test_lru_is_bounded():
    cache = LRU(3)
    out = cache.get_many(["a", "b", "c", "d"], lambda keys: torch.arange(len(keys), dtype=torch.float32))
    assert out.tolist() == [0.0, 1.0, 2.0, 3.0] and len(cache) == 3
    calls = []
    cache.get_many(["a"], lambda keys: calls.append(keys) or torch.zeros(len(keys)))
    assert calls == [["a"]]  # "a" was the least recently used, so it had been dropped


def test_unknown_backend_is_refused(tmp_path):
    tiny_model(tmp_path)
    with pytest.raises(ValueError, match="backend"):
        load_model(tmp_path, backend="tensorflow")


def test_concurrent_calls_give_the_same_scores(tmp_path):
    import threading

    tiny_model(tmp_path)
    scorer = load_model(tmp_path)
    pages = [make_page(5 + i, url=f"http://example.test/{i}") for i in range(6)]
    expected = load_model(tmp_path).score(pages)
    results = {}

    def work(i):
        results[i] = scorer.score([pages[i]])[0]

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(pages))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, exp in enumerate(expected):
        assert np.allclose(results[i], exp, atol=1e-6)


def test_pool_words_is_mean_and_max_of_each_list():
    lists = [["a", "b", "a"], ["c"], ["b", "c", "d", "e"]]
    vectors = {w: torch.randn(5) for w in "abcde"}
    seen = []

    def token_vectors(words):
        seen.append(list(words))
        return torch.stack([vectors[w] for w in words])

    pooled = pool_words(lists, token_vectors)
    expected = torch.stack([torch.cat([torch.stack([vectors[w] for w in ws]).mean(0),
                                       torch.stack([vectors[w] for w in ws]).max(0).values]) for ws in lists])
    assert torch.allclose(pooled, expected, atol=1e-6)
    assert seen == [["a", "b", "c", "d", "e"]]  # each distinct word looked up once


def test_head_inference_context_matches_the_bidirectional_lstm():
    # the inference path pads each direction to a recurring length (head._context_inference)
    torch.manual_seed(3)
    head = Head(head_config("d", elmo_dim=16, n_layers=3, token_dim=8)).eval()
    for n in (1, 7, 32, 33, 100, 300):
        for batch in (1, 2):
            x = torch.randn(batch, n, head.config["node_dim"])
            with torch.no_grad():
                expected = head.context(x)[0]
                got = head._context_inference(x)
            assert got.shape == expected.shape
            assert (got - expected).abs().max().item() < 1e-6
    args = (torch.randn(1, 9, 32), torch.randn(1, 9, 16), torch.randn(1, 9, head.config["n_features"]))
    with torch.no_grad():
        fast = head(*args)
    assert torch.allclose(head(*args), fast, atol=1e-6)  # with gradients: nn.LSTM itself


def test_skipped_nodes_are_not_scored_and_leave_the_page_sequence(tmp_path):
    tiny_model(tmp_path)  # variant d: the head's page BiLSTM reads the nodes in order
    scorer = load_model(tmp_path)
    a, b = make_page(8), make_page(5, url="http://example.test/q")
    menu = lambda node: node.content.startswith("Menu")  # noqa: E731
    full = scorer.score([a, b])
    assert all(np.array_equal(x, y) for x, y in zip(full, scorer.score([a, b], skip=lambda node: False)))
    skipped = scorer.score([a, b], skip=menu)
    for page, s, f in zip((a, b), skipped, full):
        is_menu = np.array([menu(n) for n in page.nodes])
        assert (s[is_menu] == 0).all() and (s[~is_menu] > 0).all()
        # the others are scored in a shorter sequence, so their context (and score) differs
        assert not np.allclose(s[~is_menu], f[~is_menu], atol=1e-6)
    # one page at a time gives the same as the batch; skipping every node scores nothing
    for page, s in zip((a, b), skipped):
        assert np.allclose(load_model(tmp_path).score([page], skip=menu)[0], s, atol=1e-6)
    assert not load_model(tmp_path).score([a], skip=lambda node: True)[0].any()


def test_tree_pool_is_the_mean_over_each_nodes_ancestor_group():
    import torch

    from edrew_scrapy.model.head import tree_pool

    torch.manual_seed(0)
    x = torch.randn(2, 5, 3)
    groups = torch.tensor([[[0, 0, 1, 1, 1], [0, 0, 0, 0, 0]],
                           [[0, 1, 1, -1, -1], [0, 0, 1, -1, -1]]])  # page 2: three nodes and padding
    out = tree_pool(x, groups)
    assert out.shape == (2, 5, 2 * 3 + 2)
    for b in range(2):
        for i in range(5):
            if groups[b, 0, i] < 0:
                continue
            for level in range(2):
                members = [j for j in range(5) if groups[b, level, j] == groups[b, level, i]]
                assert torch.allclose(out[b, i, level * 3: level * 3 + 3], x[b, members].mean(0), atol=1e-6)
                assert abs(float(out[b, i, 6 + level]) - math.log1p(len(members)) / 6) < 1e-6


def test_a_card_with_a_bad_tree_level_is_refused(tmp_path):
    from edrew_scrapy.model.files import ModelError
    from edrew_scrapy.model.scorer import check_head_config

    config = {"use_text": False, "use_features": False, "use_context": False, "n_layers": 3, "elmo_dim": 8,
              "node_dim": 4, "dropout": 0.1}
    check_head_config(tmp_path / "card.json", dict(config, tree_levels=2))
    for bad in (9, -1, "2", True, 1.5):
        with pytest.raises(ModelError, match="tree_levels"):
            check_head_config(tmp_path / "card.json", dict(config, tree_levels=bad))
