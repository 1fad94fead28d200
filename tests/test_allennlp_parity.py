"""Both backends read the same model files and give the same scores (needs AllenNLP: see
scripts/allennlp-env.sh, which builds an environment with it and runs this file)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

pytest.importorskip("allennlp.modules.elmo", reason="AllenNLP is not installed (scripts/allennlp-env.sh)")

from edrew_scrapy.model.elmo import ElmoBiLm, default_options  # noqa: E402
from edrew_scrapy.model.head import Head, head_config  # noqa: E402
from edrew_scrapy.model.scorer import load_model, save_model  # noqa: E402
from edrew_scrapy.page import Node, Page  # noqa: E402

pytestmark = pytest.mark.allennlp


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
            assert np.abs(a - b).max() < 1e-5
    # the ELMo vectors themselves, not only the squashed scores
    nat = load_model(tmp_path, backend="native").encoder
    aln = load_model(tmp_path, backend="allennlp").encoder
    seqs = [n.tokens for n in pages[0].nodes]
    with torch.inference_mode():
        diff = (nat.encode(seqs)[:, 0] - aln.encode(seqs)).abs().max().item()  # native: one block a head
        words = ["hello", "div|34", "ünïcödé", "x" * 70]
        wdiff = (nat.token_vectors(words) - aln.token_vectors(words)).abs().max().item()
    assert diff < 1e-5 and wdiff < 1e-5
