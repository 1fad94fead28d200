"""Tiny models and pages for the model tests (built in tmp dirs in milliseconds)."""
from __future__ import annotations

import gzip
import json
import shutil

import torch

from edrew_scrapy.model import files
from edrew_scrapy.model.elmo import ElmoBiLm, default_options
from edrew_scrapy.model.head import Head, head_config
from edrew_scrapy.model.scorer import save_model
from edrew_scrapy.page import Node, Page
from edrew_scrapy.serializer import serialize

TINY = dict(char_dim=4, filters=((1, 4), (2, 4), (3, 8)), n_highway=1, projection_dim=8, cell_dim=16,
            cell_clip=3.0, proj_clip=3.0)


def tiny_model(directory, variant="d", seed=0, threshold=0.5, noisy=True):
    """Write a random tiny model to `directory`; returns (options, bilm, head)."""
    torch.manual_seed(seed)
    options = default_options(**TINY)
    bilm = ElmoBiLm(options)
    if noisy:
        for p in bilm.parameters():
            torch.nn.init.normal_(p, std=0.3)
        with torch.no_grad():
            bilm.token_embedder.char_embedding.weight[0].zero_()
    head = Head(head_config(variant, bilm.output_dim, bilm.num_layers, options["lstm"]["projection_dim"]))
    save_model(directory, options, bilm, head, {"threshold": threshold, "training": {"dataset": "test"}})
    return options, bilm, head


def second_head(base, target, seed, variant="d", **config):
    """A single-head folder on `base`'s biLM files with a head of its own (random, seeded)."""
    shutil.copytree(base, target)
    card = json.loads((target / files.CARD).read_text("utf-8"))
    torch.manual_seed(seed)
    head = Head(dict(head_config(variant, card["head"]["elmo_dim"], card["head"]["n_layers"],
                                 card["head"]["token_dim"]), **config))
    files.write_head(target / files.HEAD, head.state_dict())
    files.write_card(target, dict(card, head=head.config, training={"dataset": "second", "seed": seed}))
    return target


RETPS = [
    "<#CNT><#SEP>p|34<#SEP>main-content<#SEP><#CLSS><#SEP>div|34<#SEP>body|1",
    "<#CNT><#SEP>a|89<#SEP>li|89<#SEP>ul|89<#SEP>footer|89<#SEP>body|1",
    "<#CNT><#SEP>h1|21<#SEP>article|21<#SEP>body|1",
    "<#CNT><#SEP>span|2<#SEP>nav|1<#SEP>body|1",
]


def make_page(n=6, url="http://example.test/p"):
    nodes = []
    for i in range(n):
        retps = RETPS[i % len(RETPS)]
        content = f"Node {i} says something rather long about the topic." if i % 2 else f"Menu {i}"
        nodes.append(Node(index=i, tag="p", content=content, retps=retps, bucket=21, parent=-1,
                          path=f"/html/body/p[{i + 1}]", depth=3, position=i, link_chars=0,
                          images=[f"http://example.test/{i}.png"] if i == 1 else []))
    return Page(url=url, nodes=nodes, title="A page", count_tags=max(n, 1))


def serialized_files(paths):
    """The pages of HTML files (gzipped where the name ends in .gz) serialised as the model tests read them,
    those without text nodes left out."""
    pages = []
    for path in paths:
        body = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
        page = serialize(body, url=f"http://fixture.test/{path.name}")
        if page.nodes:
            pages.append(page)
    return pages
