"""The demo's council article in other languages, built from tests/fixtures/translated/<code>.json.

Each table maps every visible English string of the page (`>Home<` with its brackets where the word
alone is not unique; entities as the page writes them) to its translation, and gives the <html>
element's language attributes. Built rather than stored, so the versions share the demo page's markup
and cannot drift from it: a string the page no longer holds is an error.
"""
from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENGLISH = ROOT / "demo/site/news/council-approves-riverside-bike-lanes.html"
TABLES = Path(__file__).resolve().parent / "fixtures" / "translated"
LANGUAGES = tuple(sorted(p.stem for p in TABLES.glob("*.json")))


def translated_html(code: str) -> str:
    """The English page with each string of the table replaced, longest first (a short string such as
    ">X<" must not cut into a longer one)."""
    table = json.loads((TABLES / f"{code}.json").read_text(encoding="utf-8"))
    html = ENGLISH.read_text(encoding="utf-8")
    for english, translation in sorted(table["strings"].items(), key=lambda kv: -len(kv[0])):
        if english not in html:
            raise ValueError(f"{code}.json: {english!r} is not on {ENGLISH.name}")
        html = html.replace(english, translation)
    return html.replace('lang="en"', table["html_attributes"], 1)
