"""Security: nothing is ever unpickled, and the bundled spider obeys robots.txt and its allowed domains.

The crawl test proves what was *not* fetched from the servers' own access logs, and routes every
request for a host other than 127.0.0.1 through a recording proxy on 127.0.0.1, so that a crawler that
strayed would be caught without the test touching the internet.
"""
from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "fixtures" / "reliability"))
from reliability_support import ROOT, RecordingServer, run_crawl, without_scoring_unless_model  # noqa: E402

# Code that can run arbitrary code while reading a file.
UNSAFE_MODULES = {"pickle", "_pickle", "cPickle", "dill", "cloudpickle", "joblib", "shelve", "marshal", "jsonpickle"}
UNSAFE_CALLS = {("torch", "load"), ("torch.jit", "load"), ("pd", "read_pickle"), ("pandas", "read_pickle"),
                ("yaml", "unsafe_load"), ("yaml", "full_load")}
SOURCES = sorted((ROOT / "edrew_scrapy").rglob("*.py"))  # the bundled project lives inside it


def _dotted(node) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def unsafe_uses(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in UNSAFE_MODULES:
                    yield node.lineno, f"import {alias.name}"
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in UNSAFE_MODULES:
            yield node.lineno, f"from {node.module} import ..."
        elif isinstance(node, ast.ImportFrom) and node.module == "torch" and any(a.name == "load" for a in node.names):
            yield node.lineno, "from torch import load"
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner, name = _dotted(node.func.value), node.func.attr
            if (owner, name) in UNSAFE_CALLS:
                yield node.lineno, f"{owner}.{name}()"
            keywords = {k.arg: k.value for k in node.keywords}
            if name == "load" and owner in ("np", "numpy"):
                allow = keywords.get("allow_pickle")
                if (isinstance(allow, ast.Constant) and allow.value is True
                        or (allow is not None and not isinstance(allow, ast.Constant))):
                    yield node.lineno, f"{owner}.load(allow_pickle=...)"
            if name == "load" and owner == "yaml" and "Loader" not in keywords and len(node.args) < 2:
                yield node.lineno, "yaml.load() without a safe Loader"


def test_the_scanner_finds_unsafe_loading():
    sample = ("import pickle\nfrom joblib import load\nimport torch\nx = torch.load('m.pt')\n"
              "import numpy as np\ny = np.load('a.npy', allow_pickle=True)\nz = np.load('a.npy')\n")
    found = [what for _, what in unsafe_uses(ast.parse(sample))]
    assert found == ["import pickle", "from joblib import ...", "torch.load()", "np.load(allow_pickle=...)"]


def test_package_never_unpickles_anything():
    assert len(SOURCES) > 10
    found = [f"{path.relative_to(ROOT)}:{line}: {what}"
             for path in SOURCES for line, what in unsafe_uses(ast.parse(path.read_text("utf-8"), str(path)))]
    assert not found, found


def test_model_files_are_json_hdf5_and_safetensors_only():
    import json

    from edrew_scrapy.model import files

    assert set(files.DATA_FILES) | {files.CARD} == {"card.json", "elmo_options.json", "elmo_weights.hdf5",
                                                    "head.safetensors"}
    model = ROOT / "models" / "default"
    if not model.is_dir():
        return
    card = json.loads((model / files.CARD).read_text("utf-8"))
    assert {Path(name).suffix for name in card["files"]} <= {".json", ".hdf5", ".safetensors"}
    # Nothing in the directory that a pickle-based loader would read (plots and notes are fine).
    pickled = {".pkl", ".pickle", ".pt", ".pth", ".ckpt", ".bin", ".joblib", ".npy", ".npz", ".tar"}
    assert not [p.name for p in model.iterdir() if p.suffix in pickled]


# ------------------------------------------------------------------ robots.txt and allowed domains

@pytest.mark.crawl
def test_spider_obeys_robots_txt_and_never_leaves_its_domain(tmp_path):
    other = RecordingServer({"/": (200, {"Content-Type": "text/html"}, b"<html><body><p>other</p></body></html>"),
                             "/page": (200, {"Content-Type": "text/html"}, b"<html><body><p>other</p></body></html>")},
                            host="127.0.0.2")
    proxy = RecordingServer(lambda path: (502, {"Content-Type": "text/plain"}, b"the test proxy never forwards"))
    with other, proxy:
        def page(links: str) -> tuple:
            return (200, {"Content-Type": "text/html; charset=utf-8"},
                    f"<html><head><title>Site</title></head><body><article><p>A page of the allowed site "
                    f"with some words in it.</p>{links}</article></body></html>".encode())

        routes = {
            "/robots.txt": (200, {"Content-Type": "text/plain"},
                            b"User-agent: *\nDisallow: /private/\nDisallow: /drafts.html\n"),
            "/": page(f"<a href='/public.html'>public</a> <a href='/private/secret.html'>secret</a> "
                      f"<a href='/drafts.html'>drafts</a> <a href='{other.url}/page'>other host</a> "
                      f"<a href='http://example.com/escape'>the internet</a> "
                      f"<a href='http://sub.example.org:8080/escape'>more internet</a>"),
            "/public.html": page("<a href='/private/also-secret.html'>secret too</a>"
                                 f"<a href='{other.url}/'>other host again</a>"),
            "/private/secret.html": page(""),
            "/private/also-secret.html": page(""),
            "/drafts.html": page(""),
        }
        with RecordingServer(routes) as site:
            proc, stats = run_crawl(
                site.url + "/", tmp_path, *without_scoring_unless_model(), timeout=180,
                # Any request for another host goes to the recording proxy, never out.
                env={"http_proxy": proxy.url, "https_proxy": proxy.url, "no_proxy": "127.0.0.1"})
            fetched = site.paths()
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert {"/robots.txt", "/", "/public.html"} <= set(fetched), fetched
    forbidden = {"/private/secret.html", "/private/also-secret.html", "/drafts.html"}
    assert not forbidden & set(fetched), fetched
    assert stats.get("robotstxt/forbidden") == len(forbidden), stats  # requested by the spider, refused
    assert other.paths() == [], other.paths()
    # Checked by hand the other way round: with those hosts allowed, the proxy logs both requests.
    assert proxy.paths() == [], proxy.paths()
