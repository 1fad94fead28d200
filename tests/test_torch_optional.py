"""torch is an extra (`edrew-scrapy[train]`): with it unimportable, `edrew extract` and a real `scrapy crawl`
with the add-on give the same items, and what needs it (training, the native backend) says which extra in
one line. Each subprocess runs with a sitecustomize.py on PYTHONPATH (inherited by worker processes) that
makes every `import torch` fail as on an install without it, and notes on stderr any attempt, even one
that a caller would catch."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from conftest import DEMO_SITE, ROOT, scrapy_env

ARTICLE = "news/council-approves-riverside-bike-lanes.html"
ARTICLE_TEXT = ["Riverside council voted nine to four on Tuesday night",
                "Forty-two of the road's one hundred and six parking spaces will be removed"]
NOISE = ["We use cookies to remember your preferences", "Most read", "All rights reserved"]
EXTRA = "pip install 'edrew-scrapy[train]'"
ATTEMPT = "edrew-test: torch import attempted"

BLOCKER = f'''
import sys
import traceback


class NoTorch:
    """A meta-path finder ahead of all others: torch and its submodules are not installed."""

    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            sys.stderr.write("{ATTEMPT}\\n" + "".join(traceback.format_stack(limit=8)))
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None


sys.meta_path.insert(0, NoTorch())
'''


@pytest.fixture
def no_torch(tmp_path):
    """The environment of a subprocess in which torch cannot be imported."""
    folder = tmp_path / "no-torch"
    folder.mkdir()
    (folder / "sitecustomize.py").write_text(textwrap.dedent(BLOCKER), "utf-8")
    env = scrapy_env()
    env["PYTHONPATH"] = f"{folder}:{env['PYTHONPATH']}"
    proc = subprocess.run([sys.executable, "-c", "import torch"], env=env, capture_output=True, text=True)
    assert proc.returncode == 1 and "No module named 'torch'" in proc.stderr, proc.stderr  # the blocker works
    return env


def _edrew(env, *args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "edrew_scrapy.cli", *args], cwd=str(cwd), env=env,
                          capture_output=True, text=True, timeout=300)


def test_extract_scores_with_numpy_without_torch_and_gives_the_same_item(no_torch):
    page = str(DEMO_SITE / ARTICLE)
    proc = _edrew(no_torch, "extract", page)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert ATTEMPT not in proc.stderr, proc.stderr[-3000:]
    [item] = [json.loads(line) for line in proc.stdout.splitlines()]
    assert all(sentence in item["text"] for sentence in ARTICLE_TEXT)
    assert not any(noise in item["text"] for noise in NOISE)
    with_torch = _edrew(scrapy_env(), "extract", page)
    assert with_torch.returncode == 0, with_torch.stderr[-3000:]
    assert [json.loads(line) for line in with_torch.stdout.splitlines()] == [item]


def test_what_needs_torch_names_the_extra_in_one_line(no_torch, tmp_path):
    labels = tmp_path / "labels.jsonl"
    labels.write_text("", "utf-8")
    out = tmp_path / "model"
    proc = _edrew(no_torch, "train", "--dataset", f"simple:{labels}", "--out", str(out))
    error = [line for line in proc.stderr.splitlines() if line.startswith("edrew ")]
    assert proc.returncode == 2 and error == [f"edrew train: training needs PyTorch, which is not importable here "
                                              f"(No module named 'torch'); install it with: {EXTRA}"], proc.stderr
    assert "Traceback" not in proc.stderr and not out.exists()
    # evaluate has no --backend: the line names the command, not a "backend 'native'" the user never chose
    (tmp_path / "html").mkdir()
    (tmp_path / "html" / "a.html").write_bytes((DEMO_SITE / ARTICLE).read_bytes())
    labels.write_text(json.dumps({"file": "html/a.html", "url": "http://x/a", "main_content": "Riverside"}), "utf-8")
    proc = _edrew(no_torch, "evaluate", "--dataset", "simple", str(tmp_path), "--out", str(tmp_path / "eval"))
    error = [line for line in proc.stderr.splitlines() if line.startswith("edrew ")]
    assert proc.returncode == 2 and error == [f"edrew evaluate: this command needs PyTorch, which is not importable "
                                              f"here (No module named 'torch'); install it with: {EXTRA}"], proc.stderr
    for backend in ("native", "allennlp"):
        proc = _edrew(no_torch, "extract", "--backend", backend, str(DEMO_SITE / ARTICLE))
        assert proc.returncode == 2 and proc.stdout == "", proc.stderr
        assert f"edrew extract: backend '{backend}' needs PyTorch" in proc.stderr and EXTRA in proc.stderr
        assert "Traceback" not in proc.stderr


def _crawl(env, base, tmp_path, *settings):
    out = tmp_path / "pages.jsonl"
    args = ["crawl", "edrew", "-a", f"urls={base}/{ARTICLE}", "-a", "max_pages=1", "-a", "sitemaps=0",
            "-O", str(out), "-s", "TELNETCONSOLE_ENABLED=False"]
    for setting in settings:
        args += ["-s", setting]
    proc = subprocess.run([sys.executable, "-m", "scrapy", *args], cwd=str(ROOT), env=env,
                          capture_output=True, text=True, timeout=300)
    return proc, out


@pytest.mark.crawl
@pytest.mark.parametrize("workers", ["0", "1"])
def test_crawl_with_the_addon_needs_no_torch(no_torch, demo_url, tmp_path, workers):
    proc, out = _crawl(no_torch, demo_url, tmp_path, f"EDREW_WORKERS={workers}")
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert ATTEMPT not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr[-4000:]
    [item] = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    assert item["url"] == f"{demo_url}/{ARTICLE}"
    assert all(sentence in item["text"] for sentence in ARTICLE_TEXT)
    assert not any(noise in item["text"] for noise in NOISE)
    assert item["headline"] == "Council approves protected bike lanes on Quay Road" and item["page_type"] == "article"


@pytest.mark.crawl
def test_crawl_on_the_native_backend_without_torch_stops_naming_the_extra(no_torch, demo_url, tmp_path):
    proc, out = _crawl(no_torch, demo_url, tmp_path, "EDREW_WORKERS=1", "EDREW_BACKEND=native")
    assert proc.returncode != 0
    error = next(line for line in proc.stderr.splitlines() if "EDREW cannot load its model" in line)
    assert error.endswith(": backend 'native' needs PyTorch, which is not importable here (No module named "
                          f"'torch'); install it with: {EXTRA}"), error
    assert not out.exists() or out.read_text("utf-8") == ""
