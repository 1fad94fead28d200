"""Hostile model directories: special files, links out of the directory, JSON that breaks decoders.

Each model is built by the test (tests/fixtures/reliability build_tiny_model) and then damaged; the CLI
runs as a real `python -m edrew_scrapy.cli extract` subprocess and the crawl as `scrapy crawl edrew`,
with subprocess timeouts that only guard against the hangs these tests are about.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "fixtures" / "reliability"))
from reliability_support import ROOT, RecordingServer, build_tiny_model, crawl_env, run_crawl  # noqa: E402

from edrew_scrapy.model import files  # noqa: E402
from edrew_scrapy.model.files import ModelError  # noqa: E402
from edrew_scrapy.model.scorer import load_model  # noqa: E402

PAGE = (b"<!DOCTYPE html><html><head><title>A page</title></head><body><article><h1>A heading</h1>"
        b"<p>A paragraph with enough words in it to count as the content of the page.</p></article>"
        b"</body></html>")
# how long a refused model may take to be reported: generous, it only tells a refusal from a hang
GUARD_S = 120


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "model")


def copy_model(source: Path, target: Path) -> Path:
    shutil.copytree(source, target)
    return target


def set_card(directory: Path, change) -> None:
    card = json.loads((directory / files.CARD).read_text("utf-8"))
    change(card)
    (directory / files.CARD).write_text(json.dumps(card), "utf-8")


def run_extract(tmp_path: Path, model: Path, timeout: float = GUARD_S) -> subprocess.CompletedProcess:
    page = tmp_path / "page.html"
    page.write_bytes(PAGE)
    return subprocess.run([sys.executable, "-m", "edrew_scrapy.cli", "extract", str(page), "--model", str(model)],
                          cwd=str(ROOT), env=crawl_env(), capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


def assert_one_line_exit_2(proc: subprocess.CompletedProcess, *words: str) -> str:
    lines = proc.stderr.splitlines()
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert len(lines) == 1 and lines[0].startswith("edrew extract: "), proc.stderr[-3000:]
    for word in words:
        assert word in lines[0], lines[0]
    assert proc.stdout == ""
    return lines[0]


# ------------------------------------------------------------------ case 1: special files and links

def link_weights_to_pagemap(model: Path) -> None:
    """The issue's recipe: weights linked to /proc/self/pagemap (stat size 0, reads without end), the card
    saying 0 bytes for them, so that the size comparison passes."""
    (model / files.WEIGHTS).unlink()
    os.symlink("/proc/self/pagemap", model / files.WEIGHTS)
    set_card(model, lambda card: card["files"][files.WEIGHTS].update(bytes=0))


@pytest.mark.skipif(not os.path.exists("/proc/self/pagemap"), reason="needs Linux's /proc/self/pagemap")
def test_weights_linked_to_proc_pagemap_are_refused_by_the_cli(tiny, tmp_path):
    model = copy_model(tiny, tmp_path / "m")
    link_weights_to_pagemap(model)
    line = assert_one_line_exit_2(run_extract(tmp_path, model), str(model / files.WEIGHTS),
                                  "links outside the model directory")
    assert "/proc/self/pagemap" in line or "/proc/" in line


@pytest.mark.parametrize("special", ["fifo", "device", "directory"])
@pytest.mark.parametrize("name", [files.WEIGHTS, files.HEAD, files.OPTIONS, files.CARD])
def test_special_files_in_the_model_directory_are_refused(tiny, tmp_path, special, name):
    model = copy_model(tiny, tmp_path / "m")
    if name != files.CARD:
        set_card(model, lambda card: card["files"][name].update(bytes=0))
    target = model / name
    target.unlink()
    if special == "fifo":
        os.mkfifo(target)  # opening it to read would wait for a writer forever
    elif special == "device":
        os.symlink("/dev/zero", target)  # endless; outside the directory too
    else:
        target.mkdir()
    with pytest.raises(ModelError) as raised:
        load_model(model)
    message = str(raised.value)
    assert str(target) in message and "\n" not in message
    assert ("not a regular file" in message if special != "device" else "links outside the model directory" in message)


def test_a_link_within_the_model_directory_still_loads(tiny, tmp_path):
    model = copy_model(tiny, tmp_path / "m")
    (model / "weights").mkdir()
    (model / files.WEIGHTS).rename(model / "weights" / files.WEIGHTS)
    os.symlink(Path("weights") / files.WEIGHTS, model / files.WEIGHTS)
    assert load_model(model).threshold == 0.5
    # the same file reached through a link to outside the directory is refused
    outside = copy_model(tiny, tmp_path / "other")
    (outside / files.WEIGHTS).unlink()
    os.symlink(model / "weights" / files.WEIGHTS, outside / files.WEIGHTS)
    with pytest.raises(ModelError, match="links outside the model directory"):
        load_model(outside)


@pytest.mark.skipif(not os.path.exists("/proc/self/pagemap"), reason="needs Linux's /proc/self/pagemap")
def test_a_file_whose_size_says_nothing_is_read_no_further_than_the_limit():
    # /proc/self/pagemap: stat() says 0 bytes, reading gives 8 bytes per page of the address space (TBs)
    with pytest.raises(ModelError, match="pagemap: larger than 15 bytes"):
        files.read_limited(Path("/proc/self"), "pagemap", 15)


@pytest.mark.crawl
@pytest.mark.skipif(not os.path.exists("/proc/self/pagemap"), reason="needs Linux's /proc/self/pagemap")
def test_the_crawl_refuses_weights_linked_to_proc_pagemap(tiny, tmp_path):
    model = copy_model(tiny, tmp_path / "m")
    link_weights_to_pagemap(model)
    with RecordingServer({"/": (200, {"Content-Type": "text/html"}, PAGE)}) as site:
        proc, _ = run_crawl(site.url + "/", tmp_path, "-s", f"EDREW_MODEL={model}", timeout=GUARD_S)
        fetched = site.paths()
    assert proc.returncode == 1, proc.stderr[-3000:]
    errors = [line for line in proc.stderr.splitlines() if "ERROR: EDREW" in line]
    assert len(errors) == 1 and "links outside the model directory" in errors[0], proc.stderr[-3000:]
    assert fetched == []


# ------------------------------------------------------------------ case 2: hostile JSON

HOSTILE_JSON = {
    "nested": "[" * 200_000,                         # RecursionError in json's decoder
    "long-integer": '{"format": ' + "9" * 5000 + "}",  # ValueError: over the int conversion limit
    "nan": '{"threshold": NaN}',
    "not-utf8": b'{"name": "\xff"}',
    "huge": " " * ((1 << 20) + 10) + "{}",         # over files.MAX_JSON_BYTES
}


@pytest.mark.parametrize("what", sorted(HOSTILE_JSON))
@pytest.mark.parametrize("name", [files.CARD, files.OPTIONS])
def test_hostile_json_gives_one_line_and_exit_2(tiny, tmp_path, what, name):
    model = copy_model(tiny, tmp_path / "m")
    data = HOSTILE_JSON[what]
    (model / name).write_bytes(data if isinstance(data, bytes) else data.encode())
    if name == files.OPTIONS:
        from edrew_scrapy.model.files import write_card

        write_card(model, json.loads((model / files.CARD).read_text("utf-8")))  # size and sha256 agree again
    assert_one_line_exit_2(run_extract(tmp_path, model), str(model / name))


def test_hostile_json_is_a_model_error_in_process(tiny, tmp_path):
    model = copy_model(tiny, tmp_path / "m")
    (model / files.CARD).write_text("[" * 200_000, "utf-8")
    with pytest.raises(ModelError, match=r"card\.json: model card is not valid JSON \(RecursionError"):
        load_model(model)
    (model / files.CARD).write_text('{"a": ' + "1" * 5000 + "}", "utf-8")
    with pytest.raises(ModelError, match=r"card\.json: model card is not valid JSON \(ValueError"):
        load_model(model)


@pytest.mark.parametrize("change, problem", [
    (lambda card: card["head"].update(variant="z"), "head.variant: 'z' is not one of"),
    (lambda card: card.update(variant="e"), "variant: 'e' is not one of"),
    (lambda card: card["head"].update(unknown_layer=3), "head: Additional properties are not allowed"),
    (lambda card: card.update(name=["a"]), "name: ['a'] is not of type 'string'"),
    (lambda card: card.update(metrics="good"), "metrics: 'good' is not of type 'object'"),
    (lambda card: card["files"][files.HEAD].update(sha256="ABC"), "files.head.safetensors.sha256"),
    (lambda card: card["head"].update(tree_levels=-1), "head.tree_levels"),
])
def test_the_whole_card_is_checked_against_its_schema(tiny, tmp_path, change, problem):
    model = copy_model(tiny, tmp_path / "m")
    set_card(model, change)
    with pytest.raises(ModelError) as raised:
        load_model(model)
    message = str(raised.value)
    assert message.startswith(f"{model / files.CARD}: ") and problem in message and "\n" not in message, message


@pytest.mark.parametrize("change, problem", [
    (lambda options: options["lstm"].update(use_skip_connections="yes"), "lstm.use_skip_connections"),
    (lambda options: options["char_cnn"].update(n_characters=-1), "char_cnn.n_characters"),
    (lambda options: options.update(lstm=[]), "lstm"),
])
def test_the_whole_options_file_is_checked_against_its_schema(tiny, tmp_path, change, problem):
    model = copy_model(tiny, tmp_path / "m")
    options = json.loads((model / files.OPTIONS).read_text("utf-8"))
    change(options)
    files.write_options(model / files.OPTIONS, options)
    files.write_card(model, json.loads((model / files.CARD).read_text("utf-8")))
    with pytest.raises(ModelError) as raised:
        load_model(model)
    assert str(raised.value).startswith(f"{model / files.OPTIONS}: ") and problem in str(raised.value)


def test_schema_variants_are_the_heads():
    from edrew_scrapy.model.head import VARIANTS
    from edrew_scrapy.model.schema import VARIANT_NAMES

    assert tuple(VARIANTS) == VARIANT_NAMES


def test_the_shipped_models_fit_the_schemas():
    for card in sorted((ROOT / "models").glob("*/card.json")):
        files.read_card(card.parent, verify=False)
        files.read_options(card.parent / files.OPTIONS)


@pytest.mark.parametrize("special", ["fifo", "outside-link"])
def test_a_special_page_type_file_is_refused(tiny, tmp_path, special):
    from edrew_scrapy.pagetype import FILE_NAME, PageTypeError, default_classifier

    model = copy_model(tiny, tmp_path / "m")
    if special == "fifo":
        os.mkfifo(model / FILE_NAME)
    else:
        os.symlink("/dev/zero", model / FILE_NAME)
    with pytest.raises(PageTypeError, match="not a regular file|links outside the model directory"):
        default_classifier(str(model))
