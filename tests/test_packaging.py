"""The wheel: it installs the shipped models under share/edrew-scrapy, and `pip uninstall` takes the whole
folder away again (it left share/edrew-scrapy/models behind, empty); it asks for torch only through an extra."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
import venv
import zipfile

from conftest import ROOT


def test_wheel_installs_the_models_and_uninstall_leaves_no_folder(tmp_path):
    source = tmp_path / "src"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(
        ".git", ".venv*", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache", ".hypothesis",
        "output", "tests", "benchmarks", "fuzz", "demo", "docs"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w",
                    str(tmp_path / "dist"), str(source)], check=True, capture_output=True)
    wheel = next((tmp_path / "dist").glob("edrew_scrapy-*.whl"))
    # torch only through an extra: the default install crawls and extracts on the numpy backend
    with zipfile.ZipFile(wheel) as archive:
        metadata = archive.read(next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA")))
    requires = re.findall(r"^Requires-Dist: (.*)$", metadata.decode("utf-8"), re.M)
    torch = [r for r in requires if re.match(r"torch\b", r)]
    assert torch and all(re.search(r'extra == "(train|eval)"', r) for r in torch), torch
    assert any('extra == "train"' in r for r in torch), torch
    env = tmp_path / "env"
    venv.create(env, with_pip=True)
    pip = [str(env / "bin" / "python"), "-m", "pip", "-q", "--disable-pip-version-check"]
    subprocess.run([*pip, "install", "--no-deps", "--no-index", str(wheel)], check=True, capture_output=True)
    share = env / "share" / "edrew-scrapy"
    assert sorted(p.name for p in (share / "models").iterdir()) == ["default", "swde-book"]
    assert (share / "models" / "default" / "card.json").is_file()
    subprocess.run([*pip, "uninstall", "-y", "edrew-scrapy"], check=True, capture_output=True)
    assert not share.exists(), sorted(str(p.relative_to(env)) for p in share.rglob("*"))


def test_the_allennlp_install_in_the_docs_lists_what_the_script_installs():
    """docs/scrapy.md gives pip users the AllenNLP environment as commands; scripts/allennlp-env.sh builds
    it in a clone. Their package lists must not drift apart."""
    import re

    script = (ROOT / "scripts" / "allennlp-env.sh").read_text("utf-8")
    wanted = set()
    for name in ("ALLENNLP", "IMPORT_DEPS"):
        body = re.search(rf"^{name}=\((.*?)\)", script, re.S | re.M).group(1)
        wanted.update(word for word in body.split() if not word.startswith("#") and word != "\\")
    docs = (ROOT / "docs" / "scrapy.md").read_text("utf-8")
    section = docs[docs.index("## The allennlp backend"):]
    section = section[:section.index("\n## ", 1)] if "\n## " in section[1:] else section
    listed = set(re.findall(r"pip install --no-deps ((?:[^\n]*\\\n)*[^\n]*)", section))
    listed = {word for block in listed for word in block.split() if word != "\\"}
    assert wanted and listed == wanted, (wanted - listed, listed - wanted)
