"""Scoring PDF article parsers against a labelled set (the truth JSON of `edrew_scrapy.pdf.corpus`).

Metrics, per document, summed or averaged over a set (issue #37's targets in TARGETS):
- headings: F1 of (title, level) pairs, titles compared by their lower-cased words; numbers left aside.
- paragraphs: the share of reference paragraphs (abstract and body) that some predicted paragraph
  matches with word-F1 >= 0.9, each predicted paragraph matching one reference paragraph at most.
- sentences: boundary F1. Both sides' sentences become one stream of words with a boundary after each
  sentence's last word; the streams are aligned (difflib), and a predicted boundary counts where it falls
  on an aligned word. Reference boundaries in text the parser lost count as missed.
- title and authors: exact (lower-cased words; authors as an ordered list).
- footnotes and captions kept out: the share of reference footnotes and captions whose words do not
  run inside any predicted paragraph (a run of at least 80 % of them, in order).

Pure functions over `Article` (edrew_scrapy.pdf.article) and plain dicts; no Scrapy, no files but
`evaluate_folder`'s reading of the set. The peer parser is a deliberately simple one (pdfminer.six's
plain text split on blank lines, regex headings, a one-regex sentence split) shown beside ours.
"""
from __future__ import annotations

import difflib
import json
import re
from collections import Counter
from pathlib import Path
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from ..pdf.article import Article, Block, Section

TARGETS = {"headings_f1": 0.95, "paragraphs": 0.95, "sentences_f1": 0.97, "title": 0.95, "authors": 0.95,
           "kept_out": 0.95}
LABELS = {"headings_f1": "section headings F1 (title, level)", "paragraphs": "paragraphs matched (word-F1 >= 0.9)",
          "sentences_f1": "sentence boundary F1", "title": "title exact", "authors": "authors exact",
          "kept_out": "footnotes/captions kept out of paragraphs"}
_WORD = re.compile(r"\w+")

Parser = Callable[[bytes], Article]


def words(text: str) -> List[str]:
    return _WORD.findall((text or "").lower())


def word_f1(a: Sequence[str], b: Sequence[str]) -> float:
    """Multiset word overlap F1 of two word lists (1.0 for two empty ones)."""
    if not a and not b:
        return 1.0
    common = sum((Counter(a) & Counter(b)).values())
    if not common:
        return 0.0
    p, r = common / len(a), common / len(b)
    return 2 * p * r / (p + r)


def f1(tp: int, n_pred: int, n_ref: int) -> float:
    if not n_pred and not n_ref:
        return 1.0
    return 2 * tp / (n_pred + n_ref) if (n_pred + n_ref) else 0.0


def predicted_paragraphs(article: Article) -> List[Block]:
    """The paragraphs a parser found, in reading order: abstract, text before the first heading, sections."""
    blocks = list(article.abstract) + list(article.preamble)
    blocks += [b for s in article.all_sections() for b in s.blocks]
    return [b for b in blocks if b.kind == "paragraph"]


def reference_paragraphs(truth: dict) -> List[dict]:
    return list(truth["abstract"]) + list(truth["paragraphs"])


def heading_counts(sections: Iterable[Section], truth: dict) -> Tuple[int, int, int]:
    """(matched, predicted, reference) (title words, level) pairs."""
    pred = Counter((" ".join(words(s.title)), s.level) for s in sections)
    ref = Counter((" ".join(words(s["title"])), s["level"]) for s in truth["sections"])
    return sum((pred & ref).values()), sum(pred.values()), sum(ref.values())


def paragraph_matches(pred: Sequence[Block], ref: Sequence[dict], threshold: float = 0.9) -> int:
    """Reference paragraphs matched one-to-one by a predicted paragraph with word-F1 >= threshold."""
    pred_words = [words(b.text) for b in pred]
    pairs = []
    for i, r in enumerate(ref):
        rw = words(r["text"])
        for j, pw in enumerate(pred_words):
            if abs(len(pw) - len(rw)) > 0.25 * max(len(rw), 1) + 2:
                continue  # F1 >= 0.9 needs lengths within about 20 % of each other
            score = word_f1(pw, rw)
            if score >= threshold:
                pairs.append((score, i, j))
    used_r, used_p = set(), set()
    for _, i, j in sorted(pairs, reverse=True):
        if i not in used_r and j not in used_p:
            used_r.add(i)
            used_p.add(j)
    return len(used_r)


def _stream(sentence_lists: Iterable[Sequence[str]]) -> Tuple[List[str], set]:
    """Words of the sentences in order, and the indexes of the words that end a sentence."""
    stream: List[str] = []
    ends = set()
    for sentences in sentence_lists:
        for sentence in sentences:
            w = words(sentence)
            if not w:
                continue
            stream += w
            ends.add(len(stream) - 1)
    return stream, ends


def sentence_counts(pred: Sequence[Block], ref: Sequence[dict]) -> Tuple[int, int, int]:
    """(matched, predicted, reference) sentence boundaries, over the aligned word streams."""
    p_stream, p_ends = _stream(b.sentences or [b.text] for b in pred)
    r_stream, r_ends = _stream(r["sentences"] for r in ref)
    matcher = difflib.SequenceMatcher(None, r_stream, p_stream, autojunk=False)
    p_to_r: Dict[int, int] = {}
    for block in matcher.get_matching_blocks():
        for k in range(block.size):
            p_to_r[block.b + k] = block.a + k
    mapped = {p_to_r[e] for e in p_ends if e in p_to_r}
    return len(mapped & r_ends), len(mapped), len(r_ends)


def _contains_run(haystack: Sequence[str], needle: Sequence[str], share: float = 0.8) -> bool:
    if not needle or not haystack:
        return False
    matcher = difflib.SequenceMatcher(None, haystack, needle, autojunk=False)
    longest = matcher.find_longest_match(0, len(haystack), 0, len(needle))
    return longest.size >= max(3, share * len(needle))


def kept_out_counts(pred: Sequence[Block], truth: dict) -> Tuple[int, int]:
    """(kept out, total) reference footnotes and captions."""
    items = list(truth["footnotes"]) + [c["text"] for c in truth["captions"]]
    para_words = [words(b.text) for b in pred]
    kept = sum(1 for item in items if not any(_contains_run(pw, words(item)) for pw in para_words))
    return kept, len(items)


def score_document(article: Article, truth: dict) -> dict:
    """The counts of one document; `summarize` turns a list of them into the metrics."""
    pred = predicted_paragraphs(article)
    ref = reference_paragraphs(truth)
    h = heading_counts(article.all_sections(), truth)
    s = sentence_counts(pred, ref)
    kept, items = kept_out_counts(pred, truth)
    title_ok = words(article.title or "") == words(truth["title"])
    authors_ok = [words(a) for a in article.authors] == [words(a) for a in truth["authors"]]
    return {"name": truth.get("name"), "layout": truth.get("layout"),
            "headings": list(h), "paragraphs": [paragraph_matches(pred, ref), len(ref)],
            "sentences": list(s), "title": int(title_ok), "authors": int(authors_ok), "kept_out": [kept, items]}


def summarize(rows: Sequence[dict]) -> dict:
    """The metrics over documents: F1 from summed counts, shares from summed counts, exact over documents."""
    if not rows:
        return {k: None for k in TARGETS} | {"documents": 0}

    def total(key, i):
        return sum(r[key][i] for r in rows)

    return {"documents": len(rows),
            "headings_f1": f1(total("headings", 0), total("headings", 1), total("headings", 2)),
            "paragraphs": total("paragraphs", 0) / max(1, total("paragraphs", 1)),
            "sentences_f1": f1(total("sentences", 0), total("sentences", 1), total("sentences", 2)),
            "title": sum(r["title"] for r in rows) / len(rows),
            "authors": sum(r["authors"] for r in rows) / len(rows),
            "kept_out": total("kept_out", 0) / max(1, total("kept_out", 1))}


# --- the simple peer ---------------------------------------------------------------------------------

_PEER_HEADING = re.compile(r"^((?:\d+\.){0,2}\d+\.?|[IVX]+\.|[A-H]\.)\s+([A-Z][^.]{1,80})$")
_PEER_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z\[(])")


def peer_parse(data: bytes) -> Article:
    """pdfminer.six's plain text: the first line the title, the second its authors (split at commas and
    'and'), blocks at blank lines, a short block "2.1 Title" a heading (level = numbers), sentences
    split after . ! ? before a capital. What a quick script would do; no layout, fonts or positions."""
    import io

    from pdfminer.high_level import extract_text

    text = extract_text(io.BytesIO(data))
    blocks = [" ".join(b.split()) for b in re.split(r"\n\s*\n", text)]
    blocks = [b for b in blocks if b]
    article = Article()
    if blocks:
        article.title = blocks[0]
    if len(blocks) > 1:
        article.authors = [a.strip() for a in re.split(r",|\band\b", blocks[1]) if a.strip()]
    current: Optional[Section] = None
    for block in blocks[2:]:
        m = _PEER_HEADING.match(block)
        if m and len(block.split()) <= 12:
            number = m.group(1).rstrip(".")
            level = number.count(".") + 1 if number[0].isdigit() else (1 if number[0] in "IVX" else 2)
            current = Section(title=m.group(2), level=min(level, 3), number=number)
            article.sections.append(current)
            continue
        para = Block("paragraph", block, sentences=_PEER_SPLIT.split(block))
        (current.blocks if current else article.preamble).append(para)
    return article


def ours_parse(data: bytes) -> Article:
    from ..pdf import parse_pdf

    return parse_pdf(data)


PARSERS: Dict[str, Parser] = {"edrew": ours_parse, "pdfminer-plain": peer_parse}


def load_set(folder: Path) -> List[Tuple[Path, dict]]:
    """(PDF path, truth) of every NAME.json with its NAME.pdf in `folder`, by name."""
    pairs = []
    for path in sorted(Path(folder).glob("*.json")):
        pdf = path.with_suffix(".pdf")
        if pdf.is_file():
            pairs.append((pdf, json.loads(path.read_text(encoding="utf-8"))))
    return pairs


def evaluate_folder(folder: Path, parsers: Dict[str, Parser], layouts: Optional[Sequence[str]] = None
                    ) -> Dict[str, List[dict]]:
    """parser name -> per-document rows; a parser's error on a document is a row with `error` and zero
    counts, so that it costs the document rather than the run."""
    out: Dict[str, List[dict]] = {name: [] for name in parsers}
    for pdf, truth in load_set(folder):
        if layouts and truth.get("layout") not in layouts:
            continue
        data = pdf.read_bytes()
        for name, parse in parsers.items():
            try:
                row = score_document(parse(data), truth)
            except Exception as exc:  # noqa: BLE001 (any parser failure is that document's score of zero)
                row = score_document(Article(), truth) | {"error": f"{type(exc).__name__}: {exc}"}
            out[name].append(row)
    return out


def format_table(summaries: Dict[str, dict]) -> str:
    """Metrics as rows, parsers as columns, the target beside them."""
    names = list(summaries)
    head = f"{'metric':<44}{'target':>8}" + "".join(f"{n:>16}" for n in names)
    lines = [head, "-" * len(head)]
    for key in TARGETS:
        cells = "".join(f"{summaries[n][key]:>16.3f}" if summaries[n][key] is not None else f"{'-':>16}"
                        for n in names)
        lines.append(f"{LABELS[key]:<44}{'>= ' + format(TARGETS[key], '.2f'):>8}{cells}")
    lines.append(f"{'documents':<44}{'':>8}" + "".join(f"{summaries[n]['documents']:>16}" for n in names))
    return "\n".join(lines)
