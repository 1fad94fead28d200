"""Redraw docs/img/inspect-*.png: `edrew inspect` and a crawl report of the bundled demo site, screenshot in
headless chromium, shrunk to a small palette PNG.

    python docs/img/inspect_screenshots.py      # needs chromium (apt-get install chromium) and pillow
"""
from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from parsel import Selector
from PIL import Image

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
from conftest import LocalServer, run_scrapy  # noqa: E402 (the tests' local server and scrapy runner)

IMG = ROOT / "docs" / "img"
ARTICLE = ROOT / "demo" / "site" / "news" / "council-approves-riverside-bike-lanes.html"
WIDTH = 900  # pixels of the docs images


def shot(html: Path, png: Path, work: Path, height: int, fragment: str = "") -> None:
    raw = work / "raw.png"
    subprocess.run([shutil.which("chromium") or "chromium", "--headless", "--no-sandbox", "--disable-gpu",
                    "--hide-scrollbars", "--force-device-scale-factor=1", f"--user-data-dir={work / 'profile'}",
                    f"--screenshot={raw}", f"--window-size=1200,{height}", html.resolve().as_uri() + fragment],
                   check=True, capture_output=True, timeout=120)
    with Image.open(raw) as image:
        image = image.convert("RGB")
        image = image.resize((WIDTH, round(image.height * WIDTH / image.width)), Image.LANCZOS)
        image.quantize(colors=128, method=Image.Quantize.FASTOCTREE).save(png, optimize=True)
    print(png.relative_to(ROOT), png.stat().st_size, "bytes")


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        report = work / "article.html"
        subprocess.run([sys.executable, "-m", "edrew_scrapy.cli", "inspect", str(ARTICLE), "--compare", "trafilatura",
                        "-o", str(report)], check=True, cwd=ROOT)
        shot(report, IMG / "inspect-article.png", work, 1250)
        # the page view alone: the report's sandboxed frame's document
        view = work / "view.html"
        view.write_text(Selector(text=report.read_text("utf-8")).css("iframe.view::attr(srcdoc)").get(), "utf-8")
        shot(view, IMG / "inspect-view.png", work, 760)
        # the node list from a few nodes before the first kept one, which is opened as a click would: its
        # rule, XPath and reTPS (headless chromium does not scroll to a #fragment before its screenshot)
        text = report.read_text("utf-8")
        head, body = text.split("<body>", 1)
        start = body.index("<h2>Text nodes in document order</h2>")
        legend, nodes = body[start:].split('<div class="nodes">', 1)
        parts = nodes.split("<details ")
        first_kept = next(i for i, part in enumerate(parts) if part.startswith('class="node kept'))
        parts[first_kept] = "open " + parts[first_kept]
        shown = "<details ".join([""] + parts[max(1, first_kept - 3):])
        excerpt = work / "nodes.html"
        excerpt.write_text(f'{head}<body><main>{legend}<div class="nodes">{shown}', "utf-8")
        shot(excerpt, IMG / "inspect-nodes.png", work, 560)
        with LocalServer(ROOT / "demo" / "site") as server:
            proc = run_scrapy(["crawl", "edrew", "-a", f"urls={server.url}/", "-O", str(work / "items.jsonl"),
                               "-s", f"EDREW_REPORT_DIR={work / 'crawl'}", "-s", "EDREW_REPORT_PAGES=5"])
        if proc.returncode != 0:
            raise SystemExit(proc.stderr[-3000:])
        shot(work / "crawl" / "index.html", IMG / "inspect-crawl.png", work, 730)


if __name__ == "__main__":
    main()
