"""The biLM over prefix/suffix tries (inference) gives the numbers of the padded biLM it replaces."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from _model_helpers import RETPS, TINY, make_page, tiny_model

from edrew_scrapy.model.elmo import ElmoBiLm, char_tensor, default_options, pool_sequences
from edrew_scrapy.model.head import Head, head_config
from edrew_scrapy.model.scorer import load_model
from edrew_scrapy.model.trie import encode_distinct
from edrew_scrapy.model.trieplan import build_trie, reversed_rows

torch.set_num_threads(1)

# shared prefixes and suffixes, a sequence that is another's prefix, one token, repeated tokens
SEQUENCES = [
    ["<#CNT>", "p|34", "main", "div|34", "body|1"],
    ["<#CNT>", "a|89", "li|89", "ul|89", "body|1"],
    ["<#CNT>", "p|34", "main"],
    ["<#CNT>", "p|34", "main", "div|34", "body|1", "html"],
    ["<#CNT>"],
    ["span|2", "nav|1", "body|1"],
    ["<#CNT>", "h1|21", "div|34", "body|1"],
    ["x", "x", "x", "x"],
    ["x", "x"],
]


def _padded_reference(bilm: ElmoBiLm, head: Head, sequences) -> torch.Tensor:
    """What the scorer computed before the tries: every sequence padded through forward_embedded."""
    vocab = sorted({t for s in sequences for t in s})
    table = bilm.token_embedder(char_tensor(vocab))
    width = max(map(len, sequences))
    ids = torch.tensor([[vocab.index(t) for t in s] + [0] * (width - len(s)) for s in sequences])
    layers, mask = bilm.forward_embedded(table[ids], torch.tensor([len(s) for s in sequences]))
    return head.mix(pool_sequences(layers, mask)).view(len(sequences), 2, -1)


def _model(n_layers: int, clip: float, seed: int = 5):
    torch.manual_seed(seed)
    options = default_options(**dict(TINY, cell_clip=clip, proj_clip=clip, n_layers=n_layers))
    bilm = ElmoBiLm(options).eval()
    for p in bilm.parameters():  # large weights, so that clipping and every gate matter
        torch.nn.init.normal_(p, std=0.5)
    head = Head(head_config("d", bilm.output_dim, bilm.num_layers, TINY["projection_dim"]))
    with torch.no_grad():
        for k, p in enumerate(head.scalar_mix.scalar_parameters):
            p.fill_(0.4 * k - 0.3)
        head.scalar_mix.gamma.fill_(1.3)
    return bilm, head


def test_trie_nodes_and_paths():
    ids = np.array([[0, 1, 2], [0, 1, -1], [0, 3, 2], [4, -1, -1]])
    trie = build_trie(ids, boundary=9)
    assert [len(p) for p in trie.parents] == [1, 2, 2, 2]   # <S>; 0 4; 01 03; 012 032
    assert trie.tokens[0].tolist() == [9]
    paths = [tuple(trie.path[r, : (trie.path[r] >= 0).sum()]) for r in range(4)]
    assert paths[0][:2] == paths[1][:2] and paths[0][0] == paths[2][0] and paths[0][1] != paths[2][1]
    assert trie.path[3, 1:].tolist() == [-1, -1]
    back = reversed_rows(ids, np.array([3, 2, 3, 1]))
    assert back.tolist() == [[2, 1, 0], [1, 0, -1], [2, 3, 0], [4, -1, -1]]


@pytest.mark.parametrize("n_layers,clip", [(2, 0.0), (2, 0.3), (1, 0.3), (3, 0.3)])
def test_trie_encoding_matches_the_padded_bilm(n_layers, clip):
    bilm, head = _model(n_layers, clip)
    with torch.inference_mode():
        expected = _padded_reference(bilm, head, SEQUENCES)
        boundary = torch.stack(bilm.boundary_embeddings())
        got = encode_distinct(bilm, SEQUENCES, lambda words: bilm.token_embedder(char_tensor(words)), boundary,
                              head.scalar_mix.weights(), head.scalar_mix.gamma)
        alone = encode_distinct(bilm, SEQUENCES[2:3], lambda words: bilm.token_embedder(char_tensor(words)),
                                boundary, head.scalar_mix.weights(), head.scalar_mix.gamma)
    assert got.shape == expected.shape
    assert (got - expected).abs().max().item() < 1e-5
    assert (alone[0] - expected[2]).abs().max().item() < 1e-5  # a sequence does not depend on its batch
    assert encode_distinct(bilm, [], None, boundary, head.scalar_mix.weights(), head.scalar_mix.gamma).shape[0] == 0


def test_scores_match_the_padded_bilm(tmp_path):
    # the whole scorer, on pages whose reTPS share prefixes and suffixes, against the padded encoding
    tiny_model(tmp_path)
    pages = [make_page(9), make_page(5, url="http://example.test/q")]
    fast = load_model(tmp_path).score(pages)
    scorer = load_model(tmp_path)
    encoder = scorer.encoder
    encoder.encode = lambda sequences: _padded_reference(encoder.bilm, encoder.head, sequences)
    slow = scorer.score(pages)
    assert len({tuple(n.tokens) for n in pages[0].nodes}) == len(RETPS)
    for a, b in zip(fast, slow):
        assert np.abs(a - b).max() < 1e-5


@pytest.mark.parametrize("n_layers", [2, 3])
def test_many_random_sequences_match_the_padded_bilm(n_layers):
    # wide tries: many cells per step, levels of very different sizes in the two directions
    bilm, head = _model(n_layers, 0.3, seed=11)
    rng = np.random.default_rng(4)
    words = [f"t{k}" for k in range(12)]
    sequences = [list(rng.choice(words, size=int(rng.integers(1, 9)))) for _ in range(150)]
    sequences = [list(s) for s in dict.fromkeys(map(tuple, sequences))]
    with torch.inference_mode():
        expected = _padded_reference(bilm, head, sequences)
        got = encode_distinct(bilm, sequences, lambda ws: bilm.token_embedder(char_tensor(ws)),
                              torch.stack(bilm.boundary_embeddings()), head.scalar_mix.weights(),
                              head.scalar_mix.gamma)
    assert (got - expected).abs().max().item() < 1e-5
