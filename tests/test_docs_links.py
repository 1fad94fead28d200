"""The front page stays short and every relative link in README.md and docs/ points at a file that exists.

Docs move often (reference pages, the lab log in docs/experiments/); a broken link is a newcomer's dead end.
"""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README_LIMIT = 10240  # bytes: the README is a front page; details live in docs/

# [text](target) and ![alt](target); the target ends at whitespace or the closing parenthesis
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^(```|~~~)")


def markdown_files():
    return [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").rglob("*.md"))]


def relative_links(path):
    """(line number, target) of every relative link outside fenced code blocks."""
    in_fence = False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if FENCE.match(line.strip()):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        for target in LINK.findall(re.sub(r"`[^`]*`", "", line)):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("#"):
                continue  # a URL (https:, mailto:) or an anchor on the same page
            yield number, target


def test_readme_is_a_front_page():
    size = (ROOT / "README.md").stat().st_size
    assert size <= README_LIMIT, f"README.md is {size} bytes; keep it <= {README_LIMIT}, details in docs/"


@pytest.mark.parametrize("path", markdown_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(path):
    assert path.exists(), f"{path.relative_to(ROOT)} is missing"
    broken = [
        f"{path.relative_to(ROOT)}:{number}: {target}"
        for number, target in relative_links(path)
        if not (path.parent / target.split("#", 1)[0]).exists()
    ]
    assert not broken, "broken relative links:\n" + "\n".join(broken)


def test_every_experiment_entry_is_dated_indexed_and_decided():
    folder = ROOT / "docs" / "experiments"
    index = (folder / "README.md").read_text(encoding="utf-8")
    entries = sorted(p for p in folder.glob("*.md") if p.name != "README.md")
    assert entries
    for entry in entries:
        assert re.match(r"^\d{4}-\d{2}-\d{2}-[a-z0-9-]+\.md$", entry.name), entry.name
        assert f"({entry.name})" in index, f"{entry.name} is not in docs/experiments/README.md"
        assert re.search(r"^Decision: (kept|not kept)\b", entry.read_text(encoding="utf-8"), re.M), (
            f"{entry.name} does not end in its decision"
        )
