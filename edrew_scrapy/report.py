"""HTML reports of what the model kept: one page (`edrew inspect`, a crawl's first pages) and a crawl summary.

A report is one self-contained file: inline CSS and inline SVG charts, no script, no external request, a
Content-Security-Policy that forbids everything but inline styles, and every string that comes from a page
(text, title, URL, reTPS, XPath) escaped with html.escape, so that a page's markup can never run in it.
The core view needs no JavaScript: each node is a <details> element whose summary shows its text
coloured by score and whose body shows its XPath, reTPS and the rule that decided it (rules.explain).
Pure: no Scrapy, no torch.
"""
from __future__ import annotations

import heapq
import html
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from .page import Page
from .rules import KEPT, REASONS, Decision, explain
from .words import count_words, split_words

__all__ = ["CSP", "CrawlSummary", "crawl_summary_html", "page_report", "page_report_html", "page_view", "report_name"]

# Nothing may load or run: no script, no image, no font, no frame, no form target; inline styles only.
CSP = "default-src 'none'; style-src 'unsafe-inline'"
# A report shows at most this many characters of one XPath or reTPS (a hostile page can make either huge).
MAX_DETAIL_CHARS = 2000
# The page map (one column per node) draws at most this many columns; longer pages are binned.
MAP_COLUMNS = 600

KEPT_COLOUR = "#1a7f37"
DROPPED_COLOUR = "#afb8c1"
THRESHOLD_COLOUR = "#cf222e"

_STYLE = """
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1f2328;background:#fff}
header{background:#f6f8fa;border-bottom:1px solid #d0d7de;padding:14px 22px}
h1{font-size:20px;margin:0 0 6px}h2{font-size:16px;margin:22px 0 8px}
main{padding:4px 22px 30px;max-width:1400px}
.meta{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;font-size:13px;margin:0}
.meta dt{color:#59636e}.meta dd{margin:0;overflow-wrap:anywhere}
.counts{display:flex;gap:12px;flex-wrap:wrap;margin:10px 0 0}
.count{background:#fff;border:1px solid #d0d7de;border-radius:6px;padding:6px 12px;min-width:90px}
.count b{display:block;font-size:22px}.count.kept b{color:#1a7f37}.count.dropped b{color:#6e7781}
.charts{display:flex;gap:26px;flex-wrap:wrap;align-items:flex-start}.charts figure{margin:0}
figcaption{font-size:12px;color:#59636e}
table{border-collapse:collapse;font-size:13px}td,th{padding:3px 10px;border-bottom:1px solid #eaeef2;text-align:left}
td.n{text-align:right;font-variant-numeric:tabular-nums}
.legend span{display:inline-block;padding:1px 8px;margin-right:8px;border-radius:4px;font-size:13px}
.nodes{margin-top:6px}
details.node{border-left:4px solid #d0d7de;margin:2px 0;border-radius:0 4px 4px 0}
details.node>summary{list-style:none;cursor:pointer;padding:3px 8px;display:flex;gap:10px;align-items:baseline}
details.node>summary::-webkit-details-marker{display:none}
.node .sc{font:12px ui-monospace,monospace;min-width:3.2em;color:#59636e}
.node .tx{flex:1;overflow-wrap:anywhere;white-space:pre-wrap}
.node .why{font-size:11px;color:#59636e;white-space:nowrap}
details.kept{border-left-color:#1a7f37;background:#dafbe1}
details.kept.s3{background:#aceebb}details.kept.s2{background:#c8f5d2}
details.dropped{color:#8c959f;background:#fff}
details.dropped.near{border-left-color:#d4a72c}
details.dropped .tx{text-decoration-color:#d0d7de}
.node dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:0;padding:6px 12px 8px 62px;
font-size:12px;color:#1f2328;background:#f6f8fa}
.node dd{margin:0;font-family:ui-monospace,monospace;overflow-wrap:anywhere}
.cols{display:grid;grid-template-columns:1fr 1fr;gap:20px}
.cols pre{white-space:pre-wrap;overflow-wrap:anywhere;font:13px/1.45 system-ui,sans-serif;background:#f6f8fa;
padding:10px;border-radius:6px;margin:0;max-height:26em;overflow:auto}
iframe.view{width:100%;height:760px;border:1px solid #d0d7de;border-radius:6px}
.skipped{background:#fff8c5;border:1px solid #d4a72c;padding:8px 12px;border-radius:6px}
"""


def _e(value) -> str:
    """Escape anything for HTML text and attribute values (quotes included)."""
    return html.escape("" if value is None else str(value), quote=True)


def _cut(text: str, limit: int = MAX_DETAIL_CHARS) -> str:
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text) - limit} more characters)"


def _document(title: str, body: str) -> str:
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">"
            "<meta name=\"referrer\" content=\"no-referrer\">"
            "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
            f"<title>{_e(title)}</title><style>{_STYLE}</style></head><body>{body}</body></html>\n")


def _fmt(value: Optional[float], digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


# ---- charts (inline SVG) ------------------------------------------------------------------------------

def _svg(width: int, height: int, label: str, parts: Iterable[str]) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" role="img" aria-label="{_e(label)}">'
            f'<title>{_e(label)}</title>{"".join(parts)}</svg>')


def page_map_svg(scores: Sequence[float], kept: Sequence[bool], threshold: float, width: int = 760,
                 height: int = 90) -> str:
    """One column per node in document order (binned to MAP_COLUMNS: a bin shows its best score and is
    green when it holds a kept node), its height the node's score, and the page's threshold as a line."""
    n = len(scores)
    if n == 0:
        return ""
    columns = min(n, MAP_COLUMNS)
    step = width / columns
    parts = [f'<rect width="{width}" height="{height}" fill="#f6f8fa"/>']
    for c in range(columns):
        lo, hi = c * n // columns, max(c * n // columns + 1, (c + 1) * n // columns)
        best = max(_finite(s) for s in scores[lo:hi])
        any_kept = any(kept[lo:hi])
        h = max(1.0, best * (height - 4))
        parts.append(f'<rect x="{c * step:.2f}" y="{height - h:.2f}" width="{max(step - 0.3, 0.6):.2f}" '
                     f'height="{h:.2f}" fill="{KEPT_COLOUR if any_kept else DROPPED_COLOUR}"/>')
    y = height - _finite(threshold) * (height - 4)
    parts.append(f'<line x1="0" x2="{width}" y1="{y:.2f}" y2="{y:.2f}" stroke="{THRESHOLD_COLOUR}" '
                 f'stroke-dasharray="4 3"/>')
    return _svg(width, height, "score of each node in document order; kept in green, threshold dashed", parts)


def histogram_svg(values: Sequence[float], kept: Optional[Sequence[bool]] = None, bins: int = 20,
                  width: int = 320, height: int = 110, label: str = "", marker: Optional[float] = None) -> str:
    """A histogram of values in [0, 1], stacked kept (green) over dropped (grey) when `kept` is given."""
    return histogram_counts_svg(_bin(values, kept, bins), width, height, label, marker)


def _bin(values: Sequence[float], kept: Optional[Sequence[bool]], bins: int) -> List[Tuple[int, int]]:
    counts = [[0, 0] for _ in range(bins)]
    for i, v in enumerate(values):
        b = min(bins - 1, max(0, int(_finite(v) * bins)))
        counts[b][0 if kept is None or kept[i] else 1] += 1
    return [(a, b) for a, b in counts]


def histogram_counts_svg(counts: Sequence[Tuple[int, int]], width: int = 320, height: int = 110, label: str = "",
                         marker: Optional[float] = None) -> str:
    """Bars over [0, 1]: each bin a (green, grey) pair of counts stacked; `marker` a dashed line at x."""
    top = max((a + b for a, b in counts), default=0) or 1
    plot = height - 16
    step = width / max(1, len(counts))
    parts = [f'<rect width="{width}" height="{plot}" fill="#f6f8fa"/>']
    for i, (a, b) in enumerate(counts):
        x = i * step + 1
        ha, hb = a / top * (plot - 2), b / top * (plot - 2)
        if hb:
            parts.append(f'<rect x="{x:.1f}" y="{plot - hb:.1f}" width="{step - 2:.1f}" height="{hb:.1f}" '
                         f'fill="{DROPPED_COLOUR}"/>')
        if ha:
            parts.append(f'<rect x="{x:.1f}" y="{plot - hb - ha:.1f}" width="{step - 2:.1f}" height="{ha:.1f}" '
                         f'fill="{KEPT_COLOUR}"/>')
    if marker is not None:
        x = _finite(marker) * width
        parts.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="0" y2="{plot}" stroke="{THRESHOLD_COLOUR}" '
                     f'stroke-dasharray="4 3"/>')
    for tick in (0, 0.5, 1):
        anchor = "start" if tick == 0 else "end" if tick == 1 else "middle"
        parts.append(f'<text x="{tick * width:.0f}" y="{height - 3}" font-size="10" fill="#59636e" '
                     f'text-anchor="{anchor}">{tick:g}</text>')
    parts.append(f'<text x="{width - 2}" y="11" font-size="10" fill="#59636e" text-anchor="end">max {top}</text>')
    return _svg(width, height, label, parts)


def bars_svg(rows: Sequence[Tuple[str, float]], width: int = 420, unit: str = "") -> str:
    """Horizontal bars, one per (label, value), labels on the left."""
    if not rows:
        return ""
    top = max(v for _, v in rows) or 1
    row_h, label_w = 18, 200
    parts = []
    for i, (name, value) in enumerate(rows):
        y = i * row_h
        w = value / top * (width - label_w - 60)
        short = name if len(name) <= 30 else "…" + name[-29:]
        parts.append(f'<text x="{label_w - 6}" y="{y + 13}" font-size="11" text-anchor="end" fill="#1f2328">'
                     f'{_e(short)}</text>')
        parts.append(f'<rect x="{label_w}" y="{y + 3}" width="{max(w, 1):.1f}" height="{row_h - 6}" fill="#8250df"/>')
        parts.append(f'<text x="{label_w + w + 4:.1f}" y="{y + 13}" font-size="11" fill="#59636e">'
                     f'{_e(_number(value))}{_e(unit)}</text>')
    return _svg(width, row_h * len(rows) + 2, "bar chart", parts)


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.2f}"


def _finite(value) -> float:
    v = float(value)
    return min(1.0, max(0.0, v)) if math.isfinite(v) else 0.0


# ---- the page itself, with the decisions drawn on it --------------------------------------------------

# Elements the view keeps (without any attribute but VIEW_ATTRIBUTES); the others' content goes into a
# <div>, and VIEW_DROPPED elements go with their content. Nothing here can load or run anything.
VIEW_TAGS = frozenset(
    "a abbr address article aside b bdi bdo big blockquote body br button caption center cite code col colgroup dd del "
    "details dfn dialog div dl dt em fieldset figcaption figure font footer h1 h2 h3 h4 h5 h6 header hgroup hr "
    "i ins kbd label legend li main mark menu nav ol optgroup option p pre q s samp section select small span "
    "strong sub summary sup table tbody td tfoot th thead time tr tt u ul var".split())
VIEW_DROPPED = frozenset(
    "script style template noscript iframe frame frameset object embed applet svg math canvas video audio "
    "source track picture head title meta link base param portal input textarea xmp plaintext noembed "
    "noframes".split())
VIEW_ATTRIBUTES = frozenset({"class", "id", "lang", "dir", "colspan", "rowspan", "hidden"})
# A page's own CSS is kept (inline <style> and style attributes; linked sheets are not fetched) unless it
# could end its element or load something; the CSP forbids the loading anyway.
_UNSAFE_CSS = ("<", "url(", "@import", "expression", "\\", "javascript:")
_VIEW_STYLE = (
    "[data-edrew=kept]{outline:2px solid #1a7f37!important;background-color:rgba(46,160,67,.22)!important}"
    "[data-edrew=dropped]{outline:1px dashed #8c959f!important}"
    ".edrew-img{display:inline-block;border:1px dashed #8c959f;color:#59636e;font:11px sans-serif;padding:0 3px}")


def page_view(data, encoding: str, page: Page, scores, reasons: Sequence[str]) -> Optional[str]:
    """The page re-built from a whitelist (VIEW_TAGS, VIEW_ATTRIBUTES, its safe CSS) with each node's element
    outlined (green: kept, dashed grey: dropped) and its score, rule and XPath as a tooltip; a whole HTML
    document, meant for a sandboxed <iframe srcdoc>. None when the page cannot be parsed (lxml)."""
    try:
        import lxml.etree
        import lxml.html
    except ImportError:
        return None
    text = data.decode(encoding or "utf-8", "replace") if isinstance(data, (bytes, bytearray)) else data
    # characters an XML tree cannot hold (NUL, controls, lone surrogates) would stop lxml; as UTF-8 bytes
    # with the encoding given, an XHTML page's own <?xml encoding=...?> declaration does not matter
    clean = _NOT_XML.sub("", text).encode("utf-8")
    try:
        root = lxml.html.document_fromstring(clean, parser=lxml.html.HTMLParser(encoding="utf-8"))
    except (lxml.etree.LxmlError, ValueError):  # "Document is empty", ...
        return None
    marks: Dict[object, Tuple[int, str]] = {}
    for i, node in enumerate(page.nodes):
        try:
            found = root.getroottree().xpath(node.path)
        except lxml.etree.XPathError:
            continue
        if found and isinstance(found[0], lxml.etree._Element):
            marks.setdefault(found[0], (i, reasons[i]))
    css = [el.text or "" for el in root.iter("style")]
    out = lxml.html.Element("html")
    head = lxml.etree.SubElement(out, "head")
    lxml.etree.SubElement(head, "meta", charset="utf-8")
    lxml.etree.SubElement(head, "meta", {"http-equiv": "Content-Security-Policy", "content": CSP})
    style = lxml.etree.SubElement(head, "style")
    style.text = "\n".join(c for c in css if _safe_css(c)) + "\n" + _VIEW_STYLE
    body = root.find("body")
    try:
        out.append(_view_copy(body if body is not None else root, marks, scores, page))
    except RecursionError:  # nested past Python's stack: the report goes without the view
        return None
    return "<!DOCTYPE html>" + lxml.html.tostring(out, encoding="unicode", method="html")


_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _safe_css(css: str) -> bool:
    lowered = css.lower()
    return not any(bad in lowered for bad in _UNSAFE_CSS)


def _view_copy(el, marks, scores, page):
    """A copy of `el` with only what VIEW_TAGS and VIEW_ATTRIBUTES allow (text is text: lxml escapes it)."""
    import lxml.etree
    import lxml.html

    tag = el.tag.lower() if isinstance(el.tag, str) else ""
    copy = lxml.html.Element(tag if tag in VIEW_TAGS else "div")
    for name in VIEW_ATTRIBUTES:
        value = el.get(name)
        if value is not None:
            copy.set(name, value[:200])
    inline = el.get("style")
    if inline and len(inline) < 2000 and _safe_css(inline):
        copy.set("style", inline)
    mark = marks.get(el)
    if mark is not None:
        i, reason = mark
        score = f"{_finite(scores[i]):.2f}" if scores is not None else "—"
        copy.set("data-edrew", "kept" if reason == KEPT else "dropped")
        copy.set("title", f"{score} · {reason} · {_cut(page.nodes[i].path, 300)}")
    copy.text = el.text
    for child in el:
        if not isinstance(child.tag, str):  # a comment or processing instruction: its tail is text
            _append_text(copy, child.tail)
            continue
        name = child.tag.lower()
        if name == "img":
            placeholder = lxml.etree.SubElement(copy, "span", {"class": "edrew-img"})
            placeholder.text = "image" + (f": {child.get('alt')[:80]}" if child.get("alt") else "")
        elif name not in VIEW_DROPPED:
            copy.append(_view_copy(child, marks, scores, page))
        else:
            _append_text(copy, child.tail)
            continue
        copy[-1].tail = child.tail
    return copy


def _append_text(el, text: Optional[str]) -> None:
    if not text:
        return
    if len(el):
        el[-1].tail = (el[-1].tail or "") + text
    else:
        el.text = (el.text or "") + text


# ---- one page --------------------------------------------------------------------------------------------

@dataclass
class PageSummary:
    """The numbers of one page's report, for the crawl summary."""

    nodes: int
    kept_nodes: int
    kept_words: int
    dropped_words: int

    @property
    def kept_share(self) -> float:
        total = self.kept_words + self.dropped_words
        return self.kept_words / total if total else 0.0


def page_report(page: Page, scores: Optional[Sequence[float]], decision: Optional[Decision], *,
                source: Optional[str] = None, model: Optional[dict] = None,
                compare: Optional[Tuple[str, str]] = None, seconds: Optional[float] = None,
                note: Optional[str] = None, view: Optional[str] = None) -> Tuple[str, PageSummary]:
    """The report of one page and its numbers. `scores` and `decision` are None for a page that was not
    scored (no text, not HTML: `page.skipped` says why). `model`: {"directory", "name", "threshold",
    "region_share"} as far as known; `compare`: (extractor name, its text) shown beside the kept text; `view`:
    page_view's document, shown in a sandboxed frame."""
    nodes = page.nodes
    reasons = decision.reasons if decision is not None else ["not scored"] * len(nodes)
    kept = [r == KEPT for r in reasons]
    words = [count_words(n.content) for n in nodes]
    summary = PageSummary(nodes=len(nodes), kept_nodes=sum(kept),
                          kept_words=sum(w for w, k in zip(words, kept) if k),
                          dropped_words=sum(w for w, k in zip(words, kept) if not k))
    title = page.title or page.url or source or "page"
    body = [f"<header><h1>{_e(_cut(title, 300))}</h1>", _page_meta(page, decision, source, model, seconds, note),
            _counts(summary), "</header><main>"]
    if page.skipped or not nodes:
        body.append(f'<p class="skipped">Not scored: {_e(page.skipped or "no text")}.</p>')
    if decision is not None and scores is not None and nodes:
        body.append("<h2>Scores</h2><div class=\"charts\">")
        body.append(f"<figure>{page_map_svg(scores, kept, decision.threshold)}<figcaption>Each node's score in "
                    f"document order (green: kept; dashed: the page's threshold "
                    f"{_e(_fmt(decision.threshold))}).</figcaption></figure>")
        body.append(f"<figure>{histogram_svg(scores, kept, label='scores of the nodes', marker=decision.threshold)}"
                    "<figcaption>Nodes by score, kept in green.</figcaption></figure></div>")
        body.append(_reasons_table(reasons, words))
    if compare is not None:
        body.append(_compare(nodes, kept, compare))
    if view is not None:
        # sandbox="" (no scripts, forms or same origin) on top of the view's own CSP and whitelist
        body.append('<h2>The page, with the decisions drawn on it</h2><p>Its text and inline styles only (no '
                    "script, image or linked stylesheet); kept nodes outlined in green, dropped ones dashed; hover "
                    f'for a node\'s score, rule and XPath.</p><iframe class="view" sandbox="" title="the page" '
                    f'srcdoc="{_e(view)}"></iframe>')
    if nodes:
        body.append(_nodes(nodes, scores, reasons, decision))
    body.append("</main>")
    return _document(f"edrew inspect: {_cut(title, 120)}", "".join(body)), summary


def page_report_html(page: Page, extraction=None, data=None, **kwargs) -> Tuple[str, PageSummary]:
    """page_report for a page and its extract.Extraction (None: not scored), the decision recomputed from
    the scores and rule the Extraction carries (rules.explain); with the page's bytes (`data`), the view of
    the page with the decisions drawn on it (page_view)."""
    scores = getattr(extraction, "scores", None)
    rule = getattr(extraction, "rule", None)
    decision = None
    if scores is not None and rule is not None and page.nodes:
        decision = explain(page, scores, *rule)
    else:
        scores = None
    view = None
    if data is not None and decision is not None:
        view = page_view(data, page.encoding, page, scores, decision.reasons)
    return page_report(page, scores, decision, view=view, **kwargs)


def _page_meta(page: Page, decision: Optional[Decision], source, model, seconds, note) -> str:
    rows: List[Tuple[str, str]] = []
    if page.url:
        rows.append(("URL", page.url))
    if source and source != page.url:
        rows.append(("input", source))
    model = model or {}
    if model:
        name = model.get("name")
        where = model.get("directory") or "models/default"
        rows.append(("model", f"{name} ({where})" if name else where))
    if decision is not None:
        rule = f"{_fmt(decision.threshold)}"
        if decision.capped:
            rule += f" (the model's {_fmt(decision.given)}, capped at half the page's best score)"
        rows.append(("threshold", rule))
        if decision.region_share is not None:
            rows.append(("main region", f"{decision.region or 'none (nothing kept)'} (the deepest element holding "
                                        f"{decision.region_share:g} of the kept words)"))
        else:
            rows.append(("main region", "off: relevant text anywhere, no main-content rules"))
    rows.append(("nodes", f"{len(page.nodes)} text nodes, {page.n_elements} elements"
                          + (" (truncated: the rest of the page is one node)" if page.truncated else "")))
    rows.append(("encoding", page.encoding))
    if page.declared:
        rows.append(("declares", ", ".join(page.declared)))
    if seconds is not None:
        rows.append(("time", f"{seconds:.3f} s to serialise and score"))
    if note:
        rows.append(("note", note))
    return '<dl class="meta">' + "".join(f"<dt>{_e(k)}</dt><dd>{_e(_cut(v))}</dd>" for k, v in rows) + "</dl>"


def _counts(summary: PageSummary) -> str:
    dropped = summary.nodes - summary.kept_nodes
    items = [("kept", "kept words", summary.kept_words), ("dropped", "dropped words", summary.dropped_words),
             ("kept", "kept nodes", summary.kept_nodes), ("dropped", "dropped nodes", dropped),
             ("", "kept share", f"{summary.kept_share:.0%}")]
    return '<div class="counts">' + "".join(
        f'<div class="count {cls}" data-count="{_e(key)}"><b>{_e(value)}</b>{_e(key)}</div>'
        for cls, key, value in items) + "</div>"


def _reasons_table(reasons: Sequence[str], words: Sequence[int]) -> str:
    by: Dict[str, List[int]] = {}
    for r, w in zip(reasons, words):
        entry = by.setdefault(r, [0, 0])
        entry[0] += 1
        entry[1] += w
    rows = "".join(f'<tr><td>{_e(r)}</td><td class="n">{n}</td><td class="n">{w}</td><td>{_e(REASONS.get(r, ""))}'
                   f"</td></tr>" for r, (n, w) in sorted(by.items(), key=lambda kv: (kv[0] != KEPT, -kv[1][1])))
    return ("<h2>Decisions</h2><table><tr><th>rule</th><th>nodes</th><th>words</th><th>what it means</th></tr>"
            f"{rows}</table>")


def _compare(nodes, kept, compare: Tuple[str, str]) -> str:
    name, text = compare
    ours = "\n".join(n.content for n, k in zip(nodes, kept) if k)
    a, b = Counter(w.lower() for w in split_words(ours)), Counter(w.lower() for w in split_words(text))
    shared = sum((a & b).values())
    agree = (f"{shared} words in common: {shared / max(1, sum(a.values())):.0%} of EDREW's words are in "
             f"{name}'s text, {shared / max(1, sum(b.values())):.0%} of {name}'s in EDREW's.")
    return (f'<h2>Side by side</h2><p>{_e(agree)}</p><div class="cols"><section><h3>EDREW ({sum(a.values())} '
            f"words)</h3><pre>{_e(ours)}</pre></section><section><h3>{_e(name)} ({sum(b.values())} words)</h3>"
            f"<pre>{_e(text)}</pre></section></div>")


def _nodes(nodes, scores, reasons, decision: Optional[Decision]) -> str:
    out = ['<h2>Text nodes in document order</h2><p class="legend"><span style="background:#aceebb">kept</span>'
           '<span style="color:#8c959f;border:1px solid #d0d7de">dropped</span>'
           '<span style="border-left:4px solid #d4a72c">dropped, scoring at least half the threshold</span>'
           "Click a node for its XPath, reTPS and the rule that decided it.</p><div class=\"nodes\">"]
    cut = decision.threshold if decision is not None else None
    for i, node in enumerate(nodes):
        reason = reasons[i]
        score = _finite(scores[i]) if scores is not None else None
        if reason == KEPT:
            cls = "kept " + ("s3" if score is not None and score >= 0.9 else "s2" if score and score >= 0.7 else "s1")
        else:
            near = score is not None and cut and reason == "below-threshold" and score >= cut / 2
            cls = "dropped" + (" near" if near else "")
        flags = [f for f, on in (("hidden", node.hidden), (f"boilerplate: {node.boilerplate}", node.boilerplate))
                 if on]
        meaning = REASONS.get(reason, "").split(": ", 1)[-1]
        detail = [("rule", f"{reason}: {meaning}" if meaning else reason), ("XPath", node.path), ("tag", node.tag),
                  ("reTPS", " ".join(node.tokens)), ("position bucket", str(node.bucket)),
                  ("words", str(count_words(node.content)))]
        if flags:
            detail.append(("flags", ", ".join(flags)))
        if node.images:
            detail.append(("images", " ".join(node.images[:5])))
        out.append(f'<details class="node {cls}" id="n{i}" data-reason="{_e(reason)}"><summary>'
                   f'<span class="sc">{_e(_fmt(score, 2))}</span><span class="tx">{_e(node.content)}</span>'
                   f'<span class="why">{_e(reason)}</span></summary><dl>'
                   + "".join(f"<dt>{_e(k)}</dt><dd>{_e(_cut(v))}</dd>" for k, v in detail) + "</dl></details>")
    out.append("</div>")
    return "".join(out)


def report_name(index: int, url: Optional[str]) -> str:
    """A safe file name for the index-th page report of a crawl: digits and a slug of the URL's path."""
    slug = "".join(c if c.isalnum() else "-" for c in (url or "").split("://", 1)[-1])[:60].strip("-")
    return f"page-{index:04d}-{slug or 'page'}.html"


# ---- a crawl ---------------------------------------------------------------------------------------------

@dataclass
class CrawlSummary:
    """What a crawl report sums up, in bounded memory: counts, a histogram of kept shares, the slowest
    pages (a heap of `slowest` entries) and the page reports written (at most the crawl's N)."""

    slowest: int = 10
    bins: int = 20
    pages: int = 0
    share_counts: List[int] = field(default_factory=list)
    _slow: List[Tuple[float, int, str]] = field(default_factory=list)
    reports: List[Tuple[str, str, float, int]] = field(default_factory=list)  # (url, file, kept share, words)

    def __post_init__(self):
        if not self.share_counts:
            self.share_counts = [0] * self.bins

    def add(self, url: str, summary: PageSummary, seconds: Optional[float]) -> None:
        self.pages += 1
        self.share_counts[min(self.bins - 1, int(summary.kept_share * self.bins))] += 1
        if seconds is not None and math.isfinite(seconds):
            entry = (float(seconds), self.pages, url)
            if len(self._slow) < self.slowest:
                heapq.heappush(self._slow, entry)
            else:
                heapq.heappushpop(self._slow, entry)

    def slowest_pages(self) -> List[Tuple[float, str]]:
        return [(s, url) for s, _, url in sorted(self._slow, reverse=True)]


def crawl_summary_html(summary: CrawlSummary, stats: Dict[str, object], *, model: Optional[dict] = None,
                       spider: str = "", reason: str = "", report_limit: int = 0) -> str:
    """The crawl's summary page: pages scored, items, skip reasons with their counts (the edrew/ stats),
    the distribution of kept share per page, the slowest pages and links to the page reports."""
    edrew = {k[len("edrew/"):]: v for k, v in stats.items() if k.startswith("edrew/")}
    skips = sorted(((k[len("skipped/"):], v) for k, v in edrew.items() if k.startswith("skipped/")),
                   key=lambda kv: -_as_number(kv[1]))
    model = model or {}
    rows = [("spider", spider), ("finish reason", reason),
            ("model", (f"{model.get('name')} ({model.get('directory') or 'models/default'})"
                       if model.get("name") else model.get("directory") or "models/default")),
            ("responses", stats.get("downloader/response_count", 0)),
            ("items scraped", stats.get("item_scraped_count", 0))]
    counts = [("kept", "pages scored", summary.pages), ("kept", "EDREW items", edrew.get("items", 0)),
              ("dropped", "pages skipped", _number(sum(_as_number(v) for _, v in skips))),
              ("dropped", "errors", edrew.get("errors", 0)),
              ("", "relevant nodes", f"{edrew.get('relevant_nodes', 0)} of {edrew.get('nodes', 0)}")]
    body = [f"<header><h1>EDREW crawl report{(': ' + _e(spider)) if spider else ''}</h1>",
            '<dl class="meta">' + "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in rows) + "</dl>",
            '<div class="counts">' + "".join(f'<div class="count {c}" data-count="{_e(k)}"><b>{_e(v)}</b>{_e(k)}</div>'
                                             for c, k, v in counts) + "</div></header><main>"]
    body.append('<div class="charts">')
    chart = histogram_counts_svg([(c, 0) for c in summary.share_counts], label="pages by kept share")
    body.append(f"<figure><h2>Kept share per page</h2>{chart}"
                "<figcaption>Pages by the share of their words that EDREW kept.</figcaption></figure>")
    if skips:
        body.append(f"<figure><h2>Skipped pages</h2>{bars_svg([(k, _as_number(v)) for k, v in skips])}"
                    "<figcaption>edrew/skipped/&lt;reason&gt; counts.</figcaption></figure>")
    slow = summary.slowest_pages()
    if slow:
        body.append(f"<figure><h2>Slowest pages</h2>{bars_svg([(_path(u), s) for s, u in slow], unit=' s')}"
                    "<figcaption>Seconds from the response to its scores (queueing included).</figcaption></figure>")
    body.append("</div>")
    if skips:
        body.append("<h2>Skip reasons</h2><table><tr><th>reason</th><th>pages</th></tr>" + "".join(
            f'<tr><td>{_e(k)}</td><td class="n">{_e(v)}</td></tr>' for k, v in skips) + "</table>")
    if slow:
        body.append("<h2>The slowest pages</h2><table><tr><th>seconds</th><th>URL</th></tr>" + "".join(
            f'<tr><td class="n">{s:.3f}</td><td>{_e(_cut(u, 300))}</td></tr>' for s, u in slow) + "</table>")
    body.append(f"<h2>Page reports</h2><p>The first {report_limit} pages scored.</p>" if report_limit else "")
    if summary.reports:
        # file names are ours (report_name), never the page's; relative links within the folder
        body.append("<table><tr><th>page</th><th>kept share</th><th>kept words</th></tr>" + "".join(
            f'<tr><td><a href="{_e(f)}">{_e(_cut(u, 200))}</a></td><td class="n">{s:.0%}</td>'
            f'<td class="n">{w}</td></tr>'
            for u, f, s, w in summary.reports) + "</table>")
    body.append("<h2>edrew/ stats</h2><table>" + "".join(
        f'<tr><td>edrew/{_e(k)}</td><td class="n">{_e(v)}</td></tr>' for k, v in sorted(edrew.items())) + "</table>")
    body.append("</main>")
    return _document("EDREW crawl report", "".join(body))


def _path(url: str) -> str:
    """A URL without its scheme and host, for a chart's labels."""
    rest = url.split("://", 1)[-1]
    return "/" + rest.split("/", 1)[1] if "/" in rest else rest


def _as_number(value) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return 0.0
