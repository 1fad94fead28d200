"""Which tokenizer should the serializer stand on? Ours (regular expressions, as the thesis) against
lxml (libxml2) and selectolax (lexbor), on malformed HTML and on deep nesting, in one run.

    python benchmarks/tokenizers.py

For each case it prints whether the parser keeps the expected text (and custom names), and the
time for deep nesting. Speed on real pages is in benchmarks/serializer.py.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from edrew_scrapy.serializer import serialize  # noqa: E402

CASES = {
    "unclosed tags": ("<div><p>one<p>two<li>three", ["one", "two", "three"]),
    "stray end tags": ("</span></div><p>a</p></td><p>b</p>", ["a", "b"]),
    "comments": ("<p>a</p><!-- <p>no</p> --><p>b</p>", ["a", "b"]),
    "unterminated comment": ("<p>a</p><!-- <p>no</p>", ["a"]),
    "CDATA in HTML": ("<p>a</p><![CDATA[<p>no</p>]]><p>b</p>", ["a", "b"]),
    "script holding </div>": ('<div><p>a</p><script>var s="</div><p>no</p>";</script><p>b</p></div>', ["a", "b"]),
    "'>' inside quoted attribute": ('<div title="x > y"><p>a</p></div>', ["a"]),
    "custom element + attributes": (
        '<dhi-new-typeahead-input _ngcontent-vmk-c53="" formcontrolname="keyword" '
        'data-cy="search-term-input">a</dhi-new-typeahead-input>', ["a"]),
}


def texts_edrew(html: str):
    return [n.content for n in serialize(html).nodes]


def texts_lxml(html: str):
    import lxml.etree as etree
    root = etree.fromstring(html, etree.HTMLParser(huge_tree=True))
    if root is None:
        return []
    out = []
    for el in root.iter():
        if el.tag in ("script", "style") or not isinstance(el.tag, str):
            continue
        t = " ".join((el.text or "").split())
        if t:
            out.append(t)
    return out


def texts_lexbor(html: str):
    from selectolax.lexbor import LexborHTMLParser
    tree = LexborHTMLParser(html)
    out = []
    for node in tree.root.traverse(include_text=True) if tree.root else ():
        if node.tag == "-text" and node.parent is not None and node.parent.tag not in ("script", "style"):
            t = " ".join((node.text_content or "").split())
            if t:
                out.append(t)
    return out


def custom_names_lxml(html: str) -> bool:
    import lxml.etree as etree
    root = etree.fromstring(html, etree.HTMLParser())
    el = root.find(".//dhi-new-typeahead-input")
    return el is not None and "_ngcontent-vmk-c53" in el.attrib


def main() -> int:
    parsers = {"edrew (regex)": texts_edrew}
    try:
        import lxml.etree  # noqa: F401
        parsers["lxml"] = texts_lxml
    except ImportError:
        pass
    try:
        import selectolax  # noqa: F401
        parsers["selectolax/lexbor"] = texts_lexbor
    except ImportError:
        pass
    print(f"{'case':<32}" + "".join(f"{p:>20}" for p in parsers))
    for case, (html, expected) in CASES.items():
        row = f"{case:<32}"
        for fn in parsers.values():
            got = fn(html)
            row += f"{'ok' if got == expected else 'differs: ' + str(got)[:10]:>20}"
        print(row)
    for depth in (2_000, 20_000, 200_000):
        html = "<html><body>" + "<div>" * depth + "deep" + "</div>" * depth + "<p>after</p></body></html>"
        row = f"{'nesting ' + format(depth, ','):<32}"
        for name, fn in parsers.items():
            if name.startswith("selectolax") and depth > 20_000:
                row += f"{'skipped (>60 s)':>20}"
                continue
            t0 = time.perf_counter()
            got = fn(html)
            dt = time.perf_counter() - t0
            kept = "deep" in got and "after" in got
            row += f"{('keeps' if kept else 'LOSES') + f' text {dt:.2f}s':>20}"
        print(row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
