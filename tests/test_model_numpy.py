"""The numpy backend (model/numpy_backend.py) against the PyTorch modules: the same scores, no torch."""
from __future__ import annotations

import json
import logging
import subprocess
import sys

import numpy as np
import pytest
import torch
from _model_helpers import TINY, make_page, serialized_files
from conftest import DEMO_SITE, ROOT

from edrew_scrapy.commands import options as cli_options
from edrew_scrapy.extract import extract, score_pages
from edrew_scrapy.model import base, files, numpy_backend
from edrew_scrapy.model.base import load_model
from edrew_scrapy.model.chars import char_array
from edrew_scrapy.model.elmo import ElmoBiLm, default_options
from edrew_scrapy.model.files import ModelError
from edrew_scrapy.model.head import Head, head_config
from edrew_scrapy.model.scorer import save_model
from edrew_scrapy.serializer import serialize

FIXTURES = ROOT / "tests" / "fixtures" / "data"
TOLERANCE = 1e-5  # float32: the two backends sum and round in different orders


def fixture_pages():
    """Serialised pages of every kind the tests keep: the demo site, WCXB-style and SWDE book pages."""
    paths = sorted(DEMO_SITE.rglob("*.html")) + sorted((FIXTURES / "wcxb" / "html").glob("*.html.gz"))
    paths += sorted((FIXTURES / "swde").rglob("*.htm*"))
    pages = serialized_files(paths)
    assert len(pages) >= 10
    return pages


@pytest.fixture(scope="module")
def pages():
    return fixture_pages()


@pytest.mark.parametrize("model", ["default", "swde-book"])
def test_the_shipped_models_score_alike_on_both_backends(pages, model):
    directory = ROOT / "models" / model
    torch_scorer, numpy_scorer = load_model(directory, backend="native"), load_model(directory, backend="numpy")
    assert numpy_scorer.backend == "numpy" and numpy_scorer.threshold == torch_scorer.threshold
    # one page a call and the pages in groups (the numpy head steps through a group's pages together)
    for size in (1, 4):
        for start in range(0, len(pages), size):
            group = pages[start: start + size]
            for a, b in zip(score_pages(torch_scorer, group), score_pages(numpy_scorer, group)):
                assert a.dtype == b.dtype == np.float32 and a.shape == b.shape
                assert float(np.abs(a - b).max()) <= TOLERANCE
    texts = [e.text for e in extract(pages, scorer=torch_scorer)]
    assert [e.text for e in extract(pages, scorer=numpy_scorer)] == texts and any(texts)


def _save(directory, options, variant="d", tree_levels=0, seed=0):
    torch.manual_seed(seed)
    bilm = ElmoBiLm(options)
    for p in bilm.parameters():
        torch.nn.init.normal_(p, std=0.3)
    with torch.no_grad():
        bilm.token_embedder.char_embedding.weight[0].zero_()
    head = Head(head_config(variant, bilm.output_dim, bilm.num_layers, options["lstm"]["projection_dim"],
                            tree_levels=tree_levels))
    for p in head.parameters():
        torch.nn.init.normal_(p, std=0.3)
    save_model(directory, options, bilm, head, {"threshold": 0.5, "training": {"dataset": "test"}})


RANDOM_MODELS = {
    "variant-a": (dict(TINY), "a", 0),
    "variant-b": (dict(TINY), "b", 0),
    "variant-c": (dict(TINY), "c", 0),
    "variant-d-tree-levels": (dict(TINY), "d", 2),
    "three-layers-no-clipping": (dict(TINY, n_layers=3, cell_clip=None, proj_clip=None), "d", 0),
    "tight-clipping-two-highways": (dict(TINY, cell_clip=0.5, proj_clip=0.2, n_highway=2), "d", 1),
}


@pytest.mark.parametrize("name", sorted(RANDOM_MODELS))
def test_random_models_with_large_weights_score_alike(tmp_path, name):
    settings, variant, levels = RANDOM_MODELS[name]
    options = default_options(**settings)
    if name == "three-layers-no-clipping":
        options["char_cnn"]["activation"] = "tanh"
    _save(tmp_path, options, variant, levels)
    group = [make_page(n, url=f"http://example.test/{n}") for n in (1, 5, 9, 23)]
    group.append(serialize((DEMO_SITE / "index.html").read_bytes()))
    torch_scores = load_model(tmp_path, backend="native").score(group)
    numpy_scorer = load_model(tmp_path, backend="numpy")
    for a, b in zip(torch_scores, numpy_scorer.score(group)):
        assert float(np.abs(a - b).max()) <= TOLERANCE
    # alone, and again from the caches
    for page, a in zip(group, torch_scores):
        assert float(np.abs(numpy_scorer.score([page])[0] - a).max()) <= TOLERANCE


def test_the_character_cnn_windows_match_the_lookup():
    """Every word length, including those that leave no window of padding (48 bytes and more) and the
    sentence boundaries, with and without a long word in the same call (the columns cut or not)."""
    torch.manual_seed(3)
    options = default_options()
    bilm = ElmoBiLm(options)
    for p in bilm.parameters():
        torch.nn.init.normal_(p, std=0.5)
    with torch.no_grad():
        bilm.token_embedder.char_embedding.weight[0].zero_()
    arrays = files.elmo_arrays(bilm)
    cnn = numpy_backend.CharacterCnn(options, arrays)
    words = ["", "a", "div|34", "<#CNT>", "naïve", "日本語", "x" * 40, "y" * 45, "z" * 48, "w" * 60]
    encoder = bilm.token_embedder
    with torch.inference_mode():
        for group in (words[:5], words, words[-1:], ["q" * n for n in range(52)]):
            ids = char_array(group)
            # the windows' maxima: the same sums of the same table rows (the weights are large here, so the
            # vectors after the highway and projection are compared relative to their size)
            cut = ids[:, : min(50, int((ids != 261).sum(axis=1).max()) + encoder.max_width)]
            maxima = encoder._window_max_lookup(torch.from_numpy(cut)).numpy()
            np.testing.assert_allclose(cnn._window_max(ids), maxima, rtol=1e-6, atol=1e-6)
            expected = encoder(torch.from_numpy(ids)).numpy()
            np.testing.assert_allclose(cnn(ids), expected, rtol=TOLERANCE, atol=TOLERANCE)
    assert cnn(char_array([])).shape == (0, options["lstm"]["projection_dim"])


def test_the_shapes_from_the_options_are_those_of_the_modules():
    for options in (default_options(), default_options(**TINY), default_options(n_layers=3, n_highway=2)):
        assert files.elmo_shapes_of_options(options) == files.elmo_shapes(ElmoBiLm(options))
        config = head_config("d", 2 * options["lstm"]["projection_dim"], options["lstm"]["n_layers"] + 1,
                             options["lstm"]["projection_dim"], tree_levels=2)
        wanted = {name: tuple(t.shape) for name, t in Head(config).state_dict().items()}
        assert numpy_backend.head_shapes(config) == wanted


def test_a_head_file_that_does_not_fit_the_card_is_a_model_error(tmp_path):
    _save(tmp_path, default_options(**TINY), "d")
    card = json.loads((tmp_path / files.CARD).read_text())
    card["head"]["node_dim"] = 40  # the file holds a head of 48
    (tmp_path / files.CARD).write_text(json.dumps(card))
    with pytest.raises(ModelError, match="head.safetensors: tensors do not match the card's head configuration"):
        load_model(tmp_path, backend="numpy", verify=False)


def test_the_backend_names_agree_everywhere():
    from edrew_scrapy.scrapy import settings

    assert cli_options.BACKENDS == base.BACKENDS == settings.BACKENDS
    assert cli_options.DEFAULT_BACKEND == base.DEFAULT_BACKEND == settings.DEFAULTS["EDREW_BACKEND"]
    with pytest.raises(ValueError, match="unknown backend 'onnx'"):
        load_model(None, backend="onnx")


NO_TORCH = """
import sys
from edrew_scrapy.extract import extract
from edrew_scrapy.model import load_model
from edrew_scrapy.serializer import serialize
scorer = load_model()
html = open(sys.argv[1], "rb").read()
text = extract([serialize(html)], scorer=scorer)[0].text
print(scorer.backend, bool(text), "torch" in sys.modules)
"""


def test_scoring_with_the_default_backend_never_imports_torch():
    out = subprocess.run([sys.executable, "-c", NO_TORCH, str(DEMO_SITE / "index.html")], cwd=ROOT,
                         capture_output=True, text=True, timeout=300, check=True).stdout
    assert out.split() == ["numpy", "True", "False"]


def test_the_cli_extracts_without_torch_and_alike_with_it():
    """`edrew extract` with the default backend and with --backend native: the same texts."""
    pages = [str(p) for p in sorted(DEMO_SITE.rglob("*.html"))[:4]]
    runs = {}
    for backend in ("numpy", "native"):
        out = subprocess.run([sys.executable, "-m", "edrew_scrapy.cli", "extract", "--no-metadata", "--backend",
                              backend, *pages], cwd=ROOT, capture_output=True, text=True, timeout=300, check=True)
        runs[backend] = [json.loads(line) for line in out.stdout.splitlines()]
    assert [r["text"] for r in runs["numpy"]] == [r["text"] for r in runs["native"]]
    for a, b in zip(runs["numpy"], runs["native"]):
        assert [n["score"] for n in a["nodes"]] == pytest.approx([n["score"] for n in b["nodes"]], abs=TOLERANCE)


def test_a_crawl_worker_scores_without_torch():
    """A real worker process (spawned by the crawl's ProcessPool, default settings) serialises and scores
    a batch, and torch is still not among its modules afterwards."""
    from scrapy.utils.test import get_crawler

    from edrew_scrapy.scrapy import worker
    from edrew_scrapy.scrapy.processpool import ProcessPool
    from edrew_scrapy.scrapy.settings import EdrewSettings
    from edrew_scrapy.scrapy.stats import EdrewStats

    crawler = get_crawler(settings_dict={"EDREW_WORKERS": 1})
    workers = ProcessPool(EdrewSettings.from_settings(crawler.settings),
                          EdrewStats(crawler.stats, logging.getLogger("test")))
    try:
        loaded = workers.start()
        batch = [(path.read_bytes(), "text/html; charset=utf-8", f"http://demo.test/{path.name}")
                 for path in sorted(DEMO_SITE.rglob("*.html"))[:3]]
        outcomes = workers._executor.submit(worker.process, batch).result(timeout=300)
        after = workers._executor.submit(worker.ready).result(timeout=60)
    finally:
        workers.close()
    assert loaded["backend"] == "numpy" and not loaded["torch_imported"]
    assert all(o.error is None and o.extraction.nodes for o in outcomes)
    assert after["pid"] == loaded["pid"] and not after["torch_imported"] and after["torch_threads"] == 1
