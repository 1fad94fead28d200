"""ELMo modules: AllenNLP character ids, shapes, and the fast inference path against the plain one."""
from __future__ import annotations

import pytest
import torch
from _model_helpers import TINY

from edrew_scrapy.model.elmo import (
    BOS_IDS,
    EOS_IDS,
    MAX_WORD_LENGTH,
    ElmoBiLm,
    char_ids,
    char_tensor,
    default_options,
    pool_sequences,
)

torch.set_num_threads(1)


def test_char_ids_follow_allennlp_mapper():
    ids = char_ids("div|34")
    assert len(ids) == MAX_WORD_LENGTH
    # BOW=258, bytes, EOW=259, padding=260, all shifted by one
    assert ids[:8] == [259, ord("d") + 1, ord("i") + 1, ord("v") + 1, ord("|") + 1, ord("3") + 1, ord("4") + 1, 260]
    assert ids[8:] == [261] * (MAX_WORD_LENGTH - 8)
    assert BOS_IDS[:3] == [259, 257, 260] and EOS_IDS[:3] == [259, 258, 260]


def test_char_tensor_is_char_ids_of_each_word():
    words = ["div|34", "", "x" * 48, "y" * 49, "z" * 100, "é" * 30, "<#CNT>", "a b", "\x00"]
    assert char_tensor(words).tolist() == [char_ids(w) for w in words]
    assert char_tensor(words).dtype == torch.long and char_tensor([]).shape == (0, MAX_WORD_LENGTH)


def test_char_ids_cut_long_words_and_encode_utf8():
    long = char_ids("x" * 100)
    assert long[0] == 259 and long[49] == 260 and long[1:49] == [ord("x") + 1] * 48
    accented = char_ids("é")
    assert accented[1:4] == [0xC3 + 1, 0xA9 + 1, 260]
    assert char_ids("<#CNT>")[1] == ord("<") + 1


def test_character_encoder_cut_is_exact():
    torch.manual_seed(1)
    bilm = ElmoBiLm(default_options(**TINY)).eval()
    for p in bilm.parameters():
        torch.nn.init.normal_(p, std=0.5)
    enc = bilm.token_embedder
    ids = char_tensor(["div|34", "<#CNT>", "a", "main-content-wrapper-long"])
    fast = enc(ids)
    emb = enc.char_embedding(ids).transpose(1, 2)
    full = torch.cat([enc.activation(c(emb).max(dim=-1).values) for c in enc.convolutions], dim=-1)
    assert torch.allclose(fast, enc.projection(enc.highways(full)), atol=1e-6)


@pytest.mark.parametrize("words", [["div|34", "<#CNT>", "a", "ünïcödé"], ["a", "x" * 47, "y" * 70, "div|34"]])
def test_character_encoder_lookup_matches_the_convolutions(words):
    # inference sums per-character table rows instead of convolving (cut columns, and the no-cut
    # case where windows past the last column must not count)
    torch.manual_seed(4)
    bilm = ElmoBiLm(default_options(**TINY)).eval()
    for p in bilm.parameters():
        torch.nn.init.normal_(p, std=0.5)
    enc = bilm.token_embedder
    ids = char_tensor(words)
    emb = enc.char_embedding(ids).transpose(1, 2)
    full = torch.cat([enc.activation(c(emb).max(dim=-1).values) for c in enc.convolutions], dim=-1)
    with torch.inference_mode():
        fast = enc(ids)
        with torch.no_grad():
            enc.convolutions[0].bias.add_(1.0)  # a weight change rebuilds the table
        moved = enc(ids)
    assert torch.allclose(fast, enc.projection(enc.highways(full)).detach(), atol=1e-5)
    assert not torch.allclose(fast, moved)


@pytest.mark.parametrize("clip", [0.0, 0.2])
def test_sorted_fast_path_matches_masked_path(clip):
    torch.manual_seed(2)
    options = default_options(**dict(TINY, cell_clip=clip, proj_clip=clip))
    bilm = ElmoBiLm(options).eval()
    for p in bilm.parameters():
        torch.nn.init.normal_(p, std=0.5)
    lengths = torch.tensor([5, 3, 3, 1])
    emb = torch.randn(4, 5, options["lstm"]["projection_dim"])
    with torch.no_grad():
        fast, mask = bilm.forward_embedded(emb, lengths)
    with torch.enable_grad():
        slow, _ = bilm.forward_embedded(emb, lengths)
    assert len(fast) == 3 and fast[0].shape == (4, 7, 2 * options["lstm"]["projection_dim"])
    for a, b in zip(fast, slow):
        assert torch.allclose(a, b.detach(), atol=1e-5)
    # outputs past each sequence's end (plus its </S>) are zero, as in AllenNLP
    assert mask.sum(dim=1).tolist() == [7, 5, 5, 3]
    assert float(fast[2][3, 3:].abs().sum()) == 0.0


def test_a_row_does_not_depend_on_its_batch():
    torch.manual_seed(3)
    bilm = ElmoBiLm(default_options(**TINY)).eval()
    emb = torch.randn(3, 4, TINY["projection_dim"])
    with torch.no_grad():
        together, _ = bilm.forward_embedded(emb, torch.tensor([4, 2, 1]))
        alone, _ = bilm.forward_embedded(emb[1:2, :2], torch.tensor([2]))
    assert torch.allclose(together[2][1, :4], alone[2][0], atol=1e-6)


def test_pool_sequences_shape():
    bilm = ElmoBiLm(default_options(**TINY)).eval()
    with torch.no_grad():
        layers, mask = bilm.forward_embedded(torch.randn(2, 3, TINY["projection_dim"]), torch.tensor([3, 1]))
    pooled = pool_sequences(layers, mask)
    assert pooled.shape == (2, 3, 2, 2 * TINY["projection_dim"])


def test_options_without_skip_connections_are_refused():
    options = default_options(**TINY)
    options["lstm"]["use_skip_connections"] = False
    with pytest.raises(ValueError, match="skip"):
        ElmoBiLm(options)


def test_pooling_ignores_padding_and_boundaries():
    torch.manual_seed(4)
    bilm = ElmoBiLm(default_options(**TINY)).eval()
    emb = torch.randn(2, 4, TINY["projection_dim"])
    with torch.no_grad():
        layers, mask = bilm.forward_embedded(emb, torch.tensor([4, 1]))
        together = pool_sequences(layers, mask)
        layers1, mask1 = bilm.forward_embedded(emb[1:, :1], torch.tensor([1]))
        alone = pool_sequences(layers1, mask1)
    assert torch.allclose(together[1], alone[0], atol=1e-6)


def test_the_character_embedding_is_filled_as_nn_embedding_fills_it():
    # the same draws as nn.Embedding's own initialisation (seeded trainings stay byte for byte), row 0 zero
    options = default_options()
    torch.manual_seed(7)
    built = ElmoBiLm(options).token_embedder.char_embedding.weight
    torch.manual_seed(7)
    plain = torch.nn.Embedding(*built.shape, padding_idx=0).weight
    assert torch.equal(built, plain) and not built[0].any()
    with torch.device("meta"):
        assert ElmoBiLm(options).token_embedder.char_embedding.weight.is_meta


def test_loading_a_model_does_not_import_torchs_compiler_stack():
    # building the biLM on the meta device used to pull in torch._dynamo and sympy (74 MB, 0.8 s a process)
    import subprocess
    import sys

    code = ("import sys; from edrew_scrapy.model.scorer import load_model; load_model(); "
            "print(sorted(m for m in ('torch._dynamo', 'sympy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_wide_options_scale_every_width_and_build_a_working_bilm():
    from edrew_scrapy.model.elmo import ElmoBiLm, char_tensor, default_options, wide_options

    assert wide_options(1) == default_options()
    wide, base = wide_options(2), default_options()
    assert wide["lstm"]["dim"] == 2 * base["lstm"]["dim"]
    assert wide["lstm"]["projection_dim"] == 2 * base["lstm"]["projection_dim"]
    assert [n for _, n in wide["char_cnn"]["filters"]] == [2 * n for _, n in base["char_cnn"]["filters"]]
    bilm = ElmoBiLm(wide).eval()
    assert bilm.output_dim == 2 * ElmoBiLm(base).output_dim
    with torch.inference_mode():
        vectors = bilm.token_embedder(char_tensor(["div|3", "<#CNT>"]))
    assert vectors.shape == (2, wide["lstm"]["projection_dim"]) and torch.isfinite(vectors).all()
