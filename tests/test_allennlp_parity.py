"""Both backends read the same model files and give the same scores, single-head and mixed models alike
(needs AllenNLP: see scripts/allennlp-env.sh, which builds an environment with it and runs this file)."""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch

pytest.importorskip("allennlp.modules.elmo", reason="AllenNLP is not installed (scripts/allennlp-env.sh)")

from _model_helpers import make_page, second_head, serialized_files, tiny_model  # noqa: E402
from conftest import DEMO_SITE, ROOT  # noqa: E402

from edrew_scrapy.model import files  # noqa: E402
from edrew_scrapy.model.combine import combine  # noqa: E402
from edrew_scrapy.model.elmo import ElmoBiLm, default_options  # noqa: E402
from edrew_scrapy.model.head import Head, head_config  # noqa: E402
from edrew_scrapy.model.scorer import load_model, save_model  # noqa: E402
from edrew_scrapy.page import Node, Page  # noqa: E402

pytestmark = pytest.mark.allennlp
TOLERANCE = 1e-5  # float32: the two compute and round in different orders


def _node(i, retps, content):
    return Node(index=i, tag="p", content=content, retps=retps, bucket=21, parent=-1,
                path=f"/html/body/p[{i + 1}]", depth=3, position=i, link_chars=0)


def _pages():
    rows = [
        ("<#CNT><#SEP>p|34<#SEP>main-content<#SEP><#CLSS><#SEP>div|34<#SEP>body|1", "A long paragraph of text, here."),
        ("<#CNT><#SEP>a|89<#SEP>li|89<#SEP>ul|89<#SEP>footer|89<#SEP>body|1", "Contact"),
        ("<#CNT><#SEP>h1|21<#SEP>article|21<#SEP>body|1", "Título con acentos ünïcödé"),
        ("<#CNT><#SEP><#><#SEP>span|55<#SEP><#PRICE><#SEP>price<#SEP><#CLSS><#SEP>div|55<#SEP>body|1", "$ 19.99"),
        ("<#CNT><#SEP>td|13", "x"),
    ]
    page1 = Page(url="http://example.test/a", nodes=[_node(i, r, c) for i, (r, c) in enumerate(rows)], count_tags=100)
    page2 = Page(url="http://example.test/b", nodes=[_node(i, r, c) for i, (r, c) in enumerate(reversed(rows))],
                 count_tags=50)
    return [page1, page2, Page(url=None, nodes=[])]


@pytest.mark.parametrize("variant", ["a", "d"])
def test_native_and_allennlp_give_the_same_scores(tmp_path, variant):
    torch.manual_seed(3)
    options = default_options(cell_clip=1.0, proj_clip=1.0)
    bilm = ElmoBiLm(options)
    for p in bilm.parameters():  # large random weights so that clipping and every gate matter
        torch.nn.init.normal_(p, std=0.3)
    with torch.no_grad():
        bilm.token_embedder.char_embedding.weight[0].zero_()
    head = Head(head_config(variant, bilm.output_dim, bilm.num_layers, options["lstm"]["projection_dim"]))
    with torch.no_grad():
        for k, p in enumerate(head.scalar_mix.scalar_parameters):
            p.fill_(0.3 * k - 0.2)
        head.scalar_mix.gamma.fill_(1.7)
    save_model(tmp_path, options, bilm, head, {"threshold": 0.5})
    pages = _pages()
    native = load_model(tmp_path, backend="native").score(pages)
    allen = load_model(tmp_path, backend="allennlp").score(pages)
    for a, b in zip(native, allen):
        assert a.shape == b.shape
        if a.size:
            assert np.abs(a - b).max() < TOLERANCE
    # the ELMo vectors themselves, not only the squashed scores
    nat = load_model(tmp_path, backend="native").encoder
    aln = load_model(tmp_path, backend="allennlp").encoder
    seqs = [n.tokens for n in pages[0].nodes]
    with torch.inference_mode():
        diff = (nat.encode(seqs) - aln.encode(seqs)).abs().max().item()
        words = ["hello", "div|34", "ünïcödé", "x" * 70]
        wdiff = (nat.token_vectors(words) - aln.token_vectors(words)).abs().max().item()
    assert diff < TOLERANCE and wdiff < TOLERANCE


def _set_mix(folder, values, gamma):
    """Give a single-head folder's head its own scalar mix over the biLM's layers and gamma."""
    state = files.read_head(folder / files.HEAD)
    for k, value in enumerate(values):
        state[f"scalar_mix.scalar_parameters.{k}"].fill_(value)
    state["scalar_mix.gamma"].fill_(gamma)
    files.write_head(folder / files.HEAD, state)
    card = json.loads((folder / files.CARD).read_text("utf-8"))
    files.write_card(folder, {k: v for k, v in card.items() if k not in ("format", "format_version", "files")})


def _assert_same(native, allen, pages):
    """The same scores page by page, and the same ELMo vectors for every head (N, heads, 2, dim)."""
    for a, b in zip(native.score(pages), allen.score(pages)):
        assert a.shape == b.shape
        if a.size:
            assert np.abs(a - b).max() < TOLERANCE
    seqs = [n.tokens for page in pages for n in page.nodes]
    with torch.inference_mode():
        nat, aln = native.encoder.encode(seqs), allen.encoder.encode(seqs)
    assert nat.shape == aln.shape == (len(seqs), len(native.heads), 2, nat.shape[-1])
    assert (nat - aln).abs().max().item() < TOLERANCE


def test_a_mixed_model_scores_the_same_through_allennlp(tmp_path):
    # two random heads, each mixing the biLM's layers its own way: each gets its own Elmo output
    tiny_model(tmp_path / "a", seed=0)
    second_head(tmp_path / "a", tmp_path / "b", seed=5, variant="a")
    _set_mix(tmp_path / "a", [0.9, -0.4, 0.1], 1.7)
    _set_mix(tmp_path / "b", [-0.6, 0.2, 0.8], 0.6)
    combine(tmp_path / "a", [("other", tmp_path / "b")], [0.3], tmp_path / "mixed")
    pages = [make_page(9), make_page(5, url="http://example.test/q"), Page(url=None, nodes=[])]
    native = load_model(tmp_path / "mixed", backend="native")
    allen = load_model(tmp_path / "mixed", backend="allennlp")
    assert len(allen.heads) == 2 and allen.backend == "allennlp"
    _assert_same(native, allen, pages)
    # and the mix is the heads' weighted probabilities, each head read through its own output
    singles = [load_model(tmp_path / name, backend="allennlp").score(pages) for name in ("a", "b")]
    for m, x, y in zip(allen.score(pages), *singles):
        np.testing.assert_allclose(m, 0.7 * x + 0.3 * y, atol=TOLERANCE)
    assert max(np.abs(x - y).max() for x, y in zip(*singles) if x.size) > 1e-3  # the heads do differ
    with torch.inference_mode():  # and so do their mixes of the layers
        vectors = allen.encoder.encode([n.tokens for n in pages[0].nodes])
    assert (vectors[:, 0] - vectors[:, 1]).abs().max().item() > 0.1


def _fixture_pages(limit):
    """Real serialised pages: the demo site's and WCXB-style fixtures."""
    paths = sorted(DEMO_SITE.rglob("*.html"))[: limit // 2]
    paths += sorted((ROOT / "tests" / "fixtures" / "data" / "wcxb" / "html").glob("*.html.gz"))[: limit // 2]
    pages = serialized_files(paths)
    assert len(pages) >= limit // 2
    return pages


def test_the_shipped_mixed_model_scores_the_same_through_allennlp():
    shipped = ROOT / "models" / "default"
    card = json.loads((shipped / files.CARD).read_text("utf-8"))
    assert len(card["heads"]) == 2
    _assert_same(load_model(shipped, backend="native"), load_model(shipped, backend="allennlp"), _fixture_pages(6))
