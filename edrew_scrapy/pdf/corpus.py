"""A labelled set of PDF articles: LaTeX sources with known structure, compiled with pdflatex.

Each document is drawn from a seed: a title, authors, an abstract, sections to three levels with
paragraphs, lists, footnotes, figure and table captions, equations and references, in one of LAYOUTS
(LaTeX classes set in one or two columns). The truth (`NAME.json`) is written from what the generator
put into the source, never from what a parser reads back, so that `edrew evaluate --dataset pdf DIR`
can score any parser against it. The sentences are made to be hard to split: "e.g.", "Fig. 3",
"et al.", decimals, initials, "Eq. (2)", "vs.", "i.e." inside them.

    python -m edrew_scrapy.pdf.corpus OUT_DIR [--documents 60] [--seed 1] [--layouts article,ieeetran]

writes OUT_DIR/NAME.tex, NAME.pdf and NAME.json per document (pdflatex must be on PATH; Debian:
texlive-latex-base for the article class, texlive-publishers for IEEEtran, llncs and REVTeX,
texlive-fonts-recommended for IEEEtran's Times).
"""
from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

# layout name -> (document class line, the LaTeX class file that must be installed)
LAYOUTS: Dict[str, Tuple[str, str]] = {
    "article": (r"\documentclass[11pt]{article}", "article.cls"),
    "article-twocolumn": (r"\documentclass[10pt,twocolumn]{article}", "article.cls"),
    "ieeetran": (r"\documentclass[conference]{IEEEtran}", "IEEEtran.cls"),
    "llncs": (r"\documentclass{llncs}", "llncs.cls"),
    "revtex": (r"\documentclass[aps,pra,twocolumn,nofootinbib]{revtex4-2}", "revtex4-2.cls"),
}
ROMAN = ["I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X"]

_FIRST = ["Anna", "Peter", "Maria", "Jonas", "Laura", "David", "Sofia", "Martin", "Elena", "Thomas", "Clara",
          "Lukas", "Nina", "Daniel", "Julia", "Felix", "Hannah", "Oliver", "Eva", "Simon"]
_LAST = ["Smith", "Keller", "Novak", "Garcia", "Brown", "Lindqvist", "Moreau", "Rossi", "Tanaka", "Weber",
         "Dubois", "Kowalski", "Fischer", "Jensen", "Silva", "Meyer", "Larsen", "Costa", "Hoffmann", "Berg"]
_PLACES = ["University of Bergen", "Technical University of Graz", "University of Lyon", "ETH Zurich",
           "University of Porto", "Aalto University", "University of Edinburgh", "KTH Stockholm"]
_NOUNS = ["parser", "layout model", "classifier", "baseline", "corpus", "tokenizer", "method", "heuristic",
          "encoder", "pipeline", "detector", "index", "sampler", "estimator", "scheduler", "cache"]
_ADJ = ["robust", "sparse", "incremental", "efficient", "adaptive", "hierarchical", "probabilistic", "compact",
        "distributed", "supervised", "state-of-the-art", "two-stage", "lightweight", "stochastic"]
_VERBS = ["improves", "reduces", "outperforms", "extends", "simplifies", "stabilizes", "approximates",
          "dominates", "complements", "generalizes"]
_OBJECTS = ["the error rate", "the running time", "the memory footprint", "the recall on long documents",
            "the precision of the alignment", "the variance of the estimate", "the number of false merges",
            "the cost of each update", "the accuracy on noisy input", "the latency of the second stage"]
_TOPICS = ["Layout Analysis", "Sentence Splitting", "Reading Order", "Column Detection", "Font Statistics",
           "Error Analysis", "Data Collection", "Model Training", "Feature Design", "Runtime Behaviour",
           "Ablation Study", "Annotation Protocol", "Search Strategy", "Implementation Details",
           "Parameter Choice", "Noise Model", "Evaluation Protocol", "Threats to Validity"]
_TOP = ["Introduction", "Background", "Method", "Experimental Setup", "Results", "Discussion"]


@dataclass
class Text:
    """A piece of running text in its LaTeX form and its plain form (what a reader sees)."""
    latex: str
    plain: str


@dataclass
class Doc:
    """What a document holds, in the order it is set; `to_latex` and `truth` read from it."""
    name: str
    layout: str
    title: str
    authors: List[str]
    affiliations: List[str]
    abstract: List[List[Text]]  # paragraphs of sentences
    body: List[dict] = field(default_factory=list)  # headings and blocks in order
    references: List[str] = field(default_factory=list)


class _Writer:
    """Sentences and headings drawn from one random generator."""

    def __init__(self, rng: random.Random, n_refs: int, authors: Sequence[str]):
        self.rng = rng
        self.n_refs = n_refs
        self.surnames = [a.split()[-1] for a in authors] + _LAST
        self.figures = 0
        self.tables = 0
        self.equations = 0

    def _cite(self) -> Text:
        n = self.rng.randint(1, self.n_refs)
        return Text(rf"\cite{{r{n}}}", f"[{n}]")

    def _np(self) -> str:
        return f"the {self.rng.choice(_ADJ)} {self.rng.choice(_NOUNS)}"

    def sentence(self) -> Text:
        r = self.rng
        kind = r.randrange(14)
        a, b, v, o = self._np(), self._np(), r.choice(_VERBS), r.choice(_OBJECTS)
        name = r.choice(self.surnames)
        x = f"{r.randint(0, 99)}.{r.randint(1, 9)}"
        if kind == 0:
            c = self._cite()
            return Text(rf"{name} et al.~{c.latex} showed that {a} {v} {o}.",
                        f"{name} et al. {c.plain} showed that {a} {v} {o}.")
        if kind == 1 and self.figures:
            f = r.randint(1, self.figures)
            return Text(rf"As Fig.~{f} shows, {a} {v} {o} by {x}%.", f"As Fig. {f} shows, {a} {v} {o} by {x}%.")
        if kind == 2:
            return Text(rf"Some choices, e.g.\ {a} or {b}, matter less than {o}.",
                        f"Some choices, e.g. {a} or {b}, matter less than {o}.")
        if kind == 3:
            i = r.choice("ABCDEFGHJKLMNPRSTW")
            j = r.choice("ABCDEFGHJKLMNPRSTW")
            return Text(rf"The idea goes back to {i}.~{j}.~{name}, who used {a} for {o}.",
                        f"The idea goes back to {i}. {j}. {name}, who used {a} for {o}.")
        if kind == 4 and self.equations:
            e = r.randint(1, self.equations)
            return Text(rf"Eq.~({e}) bounds {o}, i.e.\ it holds for {a} as well.",
                        f"Eq. ({e}) bounds {o}, i.e. it holds for {a} as well.")
        if kind == 5:
            y = f"{r.randint(0, 9)}.{r.randint(10, 99)}"
            return Text(rf"On average {a} reaches {x} vs.\ {y} for {b}.",
                        f"On average {a} reaches {x} vs. {y} for {b}.")
        if kind == 6 and self.tables:
            t = r.randint(1, self.tables)
            return Text(rf"Table~{t} lists {o} for {a} and {b}.", f"Table {t} lists {o} for {a} and {b}.")
        if kind == 7:
            c = self._cite()
            return Text(rf"This was also observed in earlier work~{c.latex} on {o}.",
                        f"This was also observed in earlier work {c.plain} on {o}.")
        if kind == 8:
            return Text(rf"Why does {a} fail on {o}?", f"Why does {a} fail on {o}?")
        if kind == 9:
            return Text(rf"We compare {a}, {b}, etc.\ against a fixed budget of {x} seconds.",
                        f"We compare {a}, {b}, etc. against a fixed budget of {x} seconds.")
        if kind == 10:
            n = r.randint(2, 6)
            return Text(rf"The same holds in Sec.~{n}, where {a} {v} {o}.",
                        f"The same holds in Sec. {n}, where {a} {v} {o}.")
        if kind == 11:
            said = f"A similar result was reported by {name} et al."
            return Text(said, said)
        return Text(f"In our experiments {a} {v} {o} when compared with {b}.",
                    f"In our experiments {a} {v} {o} when compared with {b}.")

    def caption(self) -> Text:
        """A caption in words the running text never uses, so that it can be told apart where it leaks."""
        r = self.rng
        text = (f"Measured {r.choice(_NOUNS)} throughput over {r.randint(2, 90)} synthetic {r.choice(_TOPICS).lower()} "
                f"batches, e.g. with seed {r.randint(100, 999)} and {r.randint(2, 16)}.{r.randint(0, 9)} GB budget")
        return Text(text.replace("e.g. ", r"e.g.\ "), text)

    def note(self) -> Text:
        """A footnote, in words of its own as captions are."""
        r = self.rng
        text = (f"Our implementation of the {r.choice(_NOUNS)} runs on {r.randint(2, 64)} threads; "
                f"see the appendix of version {r.randint(2, 9)}.{r.randint(0, 9)} for its licence.")
        return Text(text, text)

    def paragraph(self, lo: int = 3, hi: int = 6) -> List[Text]:
        return [self.sentence() for _ in range(self.rng.randint(lo, hi))]

    def heading(self, used: set) -> str:
        while True:
            title = self.rng.choice(_TOPICS)
            if self.rng.random() < 0.4:
                title = f"{title} for {self.rng.choice(['Long', 'Noisy', 'Scanned', 'Short'])} Documents"
            if title not in used:
                used.add(title)
                return title


def make_document(seed: int, layout: str) -> Doc:
    """The document drawn from `seed` in `layout` (one of LAYOUTS)."""
    if layout not in LAYOUTS:
        raise ValueError(f"unknown layout {layout!r} (one of {', '.join(LAYOUTS)})")
    rng = random.Random(f"{layout}:{seed}")
    authors = []
    for _ in range(rng.randint(2, 4)):
        first = rng.choice(_FIRST)
        middle = f" {rng.choice('ABCDEFGHJKLMNPRSTW')}." if rng.random() < 0.3 else ""
        name = f"{first}{middle} {rng.choice(_LAST)}"
        if name not in authors:
            authors.append(name)
    title_words = f"{rng.choice(_ADJ).capitalize()} {rng.choice(_NOUNS).title()}s for {rng.choice(_TOPICS)}"
    n_refs = rng.randint(6, 10)
    w = _Writer(rng, n_refs, authors)
    doc = Doc(name=f"{layout}-{seed:03d}", layout=layout, title=title_words, authors=authors,
              affiliations=[rng.choice(_PLACES) for _ in authors],
              abstract=[w.paragraph(3, 5)])
    used: set = set()
    top = list(_TOP)
    footnotes = rng.randint(1, 3)
    n_sections = rng.randint(4, 6)
    for s in range(n_sections):
        title = top[s] if s < len(top) else w.heading(used)
        doc.body.append({"kind": "heading", "level": 1, "title": title})
        doc.body += _blocks(w, rng, footnotes_left=footnotes)
        footnotes = max(0, footnotes - 1)
        for _ in range(rng.choice([0, 1, 2, 2])):
            doc.body.append({"kind": "heading", "level": 2, "title": w.heading(used)})
            doc.body += _blocks(w, rng, footnotes_left=0)
            for _ in range(rng.choice([0, 0, 1, 2])):
                doc.body.append({"kind": "heading", "level": 3, "title": w.heading(used)})
                doc.body.append({"kind": "paragraph", "sentences": w.paragraph()})
    doc.body.append({"kind": "heading", "level": 1, "title": "Acknowledgments", "unnumbered": True})
    thanks = f"We thank {rng.choice(_FIRST)} {rng.choice(_LAST)} for comments on an earlier draft."
    doc.body.append({"kind": "paragraph", "sentences": [Text(thanks, thanks)]})
    for _ in range(n_refs):
        who = f"{rng.choice('ABCDEFGHJKLMNPRSTW')}. {rng.choice(_LAST)} and {rng.choice('ABCDEFGHJKLMNPRSTW')}. " \
              f"{rng.choice(_LAST)}"
        doc.references.append(f"{who}. {rng.choice(_ADJ).capitalize()} {rng.choice(_NOUNS)}s for "
                              f"{rng.choice(_TOPICS).lower()}. Journal of Document Engineering, "
                              f"{rng.randint(3, 40)}({rng.randint(1, 4)}):{rng.randint(1, 90)}-{rng.randint(91, 200)}, "
                              f"{rng.randint(1995, 2025)}.")
    return doc


def _blocks(w: _Writer, rng: random.Random, footnotes_left: int) -> List[dict]:
    """The blocks of one section: paragraphs, and now and then a list, figure, table, equation, footnote."""
    out: List[dict] = []
    for i in range(rng.randint(1, 3)):
        para = {"kind": "paragraph", "sentences": w.paragraph()}
        if footnotes_left and i == 0:
            para["footnote"] = w.note()
            footnotes_left -= 1
        out.append(para)
        roll = rng.random()
        if roll < 0.15:
            w.figures += 1
            out.append({"kind": "figure", "caption": w.caption(), "number": w.figures})
        elif roll < 0.25:
            w.tables += 1
            out.append({"kind": "table", "caption": w.caption(), "number": w.tables,
                        "cells": [[f"{rng.randint(10, 99)}.{rng.randint(0, 9)}" for _ in range(3)] for _ in range(3)]})
        elif roll < 0.4:
            w.equations += 1
            out.append({"kind": "equation", "number": w.equations})
        elif roll < 0.55:
            items = [f"{rng.choice(_ADJ).capitalize()} {rng.choice(_NOUNS)}s that keep {rng.choice(_OBJECTS)} low"
                     for _ in range(rng.randint(2, 4))]
            out.append({"kind": "list", "ordered": rng.random() < 0.5, "items": items})
    return out


def _esc(text: str) -> str:
    return text.replace("%", r"\%").replace("&", r"\&")


def to_latex(doc: Doc) -> str:
    """The document's LaTeX source."""
    cls, _ = LAYOUTS[doc.layout]
    lines = [cls, r"\usepackage{amsmath}" if doc.layout != "revtex" else "", r"\begin{document}"]
    abstract = "\n\n".join(" ".join(_esc(t.latex) for t in p) for p in doc.abstract)
    if doc.layout == "ieeetran":
        lines += [rf"\title{{{doc.title}}}", r"\author{" + "\n\\and\n".join(
            rf"\IEEEauthorblockN{{{a}}}\IEEEauthorblockA{{{aff}}}" for a, aff in zip(doc.authors, doc.affiliations))
            + "}", r"\maketitle", rf"\begin{{abstract}}{abstract}\end{{abstract}}"]
    elif doc.layout == "llncs":
        lines += [rf"\title{{{doc.title}}}", r"\author{" + r" \and ".join(doc.authors) + "}",
                  r"\institute{" + doc.affiliations[0] + "}", r"\maketitle",
                  rf"\begin{{abstract}}{abstract}\end{{abstract}}"]
    elif doc.layout == "revtex":
        lines += [rf"\title{{{doc.title}}}"]
        for a, aff in zip(doc.authors, doc.affiliations):
            lines += [rf"\author{{{a}}}", rf"\affiliation{{{aff}}}"]
        lines += [rf"\begin{{abstract}}{abstract}\end{{abstract}}", r"\maketitle"]
    else:
        lines += [rf"\title{{{doc.title}}}", r"\author{" + r" \and ".join(
            rf"{a}\\ {aff}" for a, aff in zip(doc.authors, doc.affiliations)) + "}", r"\date{}", r"\maketitle",
            rf"\begin{{abstract}}{abstract}\end{{abstract}}"]
    commands = {1: "section", 2: "subsection", 3: "subsubsection"}
    for block in doc.body:
        kind = block["kind"]
        if kind == "heading":
            star = "*" if block.get("unnumbered") else ""
            lines.append(rf"\{commands[block['level']]}{star}{{{block['title']}}}")
        elif kind == "paragraph":
            text = " ".join(_esc(t.latex) for t in block["sentences"])
            if "footnote" in block:
                first, _, rest = text.partition(". ")
                text = rf"{first}.\footnote{{{_esc(block['footnote'].latex)}}} {rest}"
            lines += ["", text, ""]
        elif kind == "figure":
            lines += [r"\begin{figure}[t]\centering", r"\rule{0.6\linewidth}{0.25\linewidth}",
                      rf"\caption{{{_esc(block['caption'].latex)}}}\end{{figure}}"]
        elif kind == "table":
            rows = " \\\\\n".join(" & ".join(row) for row in block["cells"])
            lines += [r"\begin{table}[t]\centering", rf"\caption{{{_esc(block['caption'].latex)}}}",
                      r"\begin{tabular}{ccc}", rows, r"\end{tabular}\end{table}"]
        elif kind == "equation":
            lines += [r"\begin{equation}", r"f(x) = \sum_{i=1}^{n} \alpha_i x^{i} + \beta", r"\end{equation}"]
        elif kind == "list":
            env = "enumerate" if block["ordered"] else "itemize"
            lines += [rf"\begin{{{env}}}"] + [rf"\item {item}." for item in block["items"]] + [rf"\end{{{env}}}"]
    lines.append(rf"\begin{{thebibliography}}{{{len(doc.references)}}}")
    lines += [rf"\bibitem{{r{n}}} {ref}" for n, ref in enumerate(doc.references, 1)]
    lines += [r"\end{thebibliography}", r"\end{document}", ""]
    return "\n".join(line for line in lines if line is not None)


def _number(layout: str, counters: List[int], level: int) -> Optional[str]:
    """The heading number as the layout prints it (None: the layout prints none at this level)."""
    if layout == "ieeetran" or layout == "revtex":
        if level == 1:
            return ROMAN[counters[0] - 1]
        if level == 2:
            return "ABCDEFGHIJ"[counters[1] - 1]
        return str(counters[2])
    if layout == "llncs" and level == 3:
        return None
    return ".".join(str(c) for c in counters[:level])


def printed_authors(doc: Doc) -> List[str]:
    """The authors in the order the page shows them: REVTeX (grouped addresses, the APS default) prints the
    authors who share an affiliation together, under that affiliation's first appearance; the other
    layouts print them in source order."""
    if doc.layout != "revtex":
        return list(doc.authors)
    groups: Dict[str, List[str]] = {}
    for author, affiliation in zip(doc.authors, doc.affiliations):
        groups.setdefault(affiliation, []).append(author)
    return [author for group in groups.values() for author in group]


def truth(doc: Doc) -> dict:
    """The document's structure as its source sets it: what a parser should find."""
    sections, paragraphs, footnotes, captions, items = [], [], [], [], []
    counters = [0, 0, 0]
    current = None
    equations = 0
    for block in doc.body:
        kind = block["kind"]
        if kind == "heading":
            level = block["level"]
            number = None
            if not block.get("unnumbered"):
                counters[level - 1] += 1
                counters[level:] = [0] * (3 - level)
                number = _number(doc.layout, counters, level)
            current = number or block["title"]
            sections.append({"number": number, "title": block["title"], "level": level})
        elif kind == "paragraph":
            sentences = [t.plain for t in block["sentences"]]
            paragraphs.append({"section": current, "text": " ".join(sentences), "sentences": sentences})
            if "footnote" in block:
                footnotes.append(block["footnote"].plain)
        elif kind in ("figure", "table"):
            captions.append({"kind": kind, "number": block["number"], "text": block["caption"].plain})
        elif kind == "list":
            items += [f"{item}." for item in block["items"]]
        elif kind == "equation":
            equations += 1
    abstract = [{"text": " ".join(t.plain for t in p), "sentences": [t.plain for t in p]} for p in doc.abstract]
    return {"name": doc.name, "layout": doc.layout, "title": doc.title, "authors": printed_authors(doc),
            "abstract": abstract, "sections": sections, "paragraphs": paragraphs, "footnotes": footnotes,
            "captions": captions, "list_items": items, "equations": equations, "references": list(doc.references)}


def available_layouts() -> List[str]:
    """The layouts whose class file this TeX installation has (kpsewhich finds it)."""
    if not shutil.which("pdflatex") or not shutil.which("kpsewhich"):
        return []
    found = []
    for name, (_, cls) in LAYOUTS.items():
        result = subprocess.run(["kpsewhich", cls], capture_output=True, text=True)
        if result.returncode == 0 and result.stdout.strip():
            found.append(name)
    return found


def compile_pdf(source: str, timeout: float = 120) -> bytes:
    """pdflatex's PDF of `source`, run twice (citations and numbers settle); a RuntimeError with the end
    of the log when it makes none."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "doc.tex"
        path.write_text(source, encoding="utf-8")
        for _ in range(2):
            result = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "doc.tex"],
                                    cwd=tmp, capture_output=True, text=True, timeout=timeout,
                                    stdin=subprocess.DEVNULL)
            if result.returncode != 0:
                raise RuntimeError("pdflatex failed: " + result.stdout[-1500:])
        return (Path(tmp) / "doc.pdf").read_bytes()


def write_corpus(out: Path, documents: int, seed: int = 1, layouts: Optional[Sequence[str]] = None,
                 progress=None) -> List[str]:
    """Write `documents` documents, spread evenly over `layouts`, as OUT/NAME.{tex,pdf,json}; the names."""
    layouts = list(layouts or available_layouts())
    if not layouts:
        raise RuntimeError("pdflatex or the LaTeX classes are missing (Debian: apt-get install "
                           "texlive-latex-base texlive-publishers)")
    out.mkdir(parents=True, exist_ok=True)
    names = []
    for i in range(documents):
        layout = layouts[i % len(layouts)]
        doc = make_document(seed * 1000 + i // len(layouts), layout)
        source = to_latex(doc)
        (out / f"{doc.name}.tex").write_text(source, encoding="utf-8")
        try:
            pdf = compile_pdf(source)
        except RuntimeError as exc:
            raise RuntimeError(f"{doc.name} ({layout}): {exc}") from None
        (out / f"{doc.name}.pdf").write_bytes(pdf)
        (out / f"{doc.name}.json").write_text(json.dumps(truth(doc), indent=1, ensure_ascii=False) + "\n",
                                              encoding="utf-8")
        names.append(doc.name)
        if progress:
            progress(doc.name)
    return names


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m edrew_scrapy.pdf.corpus", description=__doc__.split("\n")[0])
    parser.add_argument("out", type=Path, help="folder for NAME.tex, NAME.pdf and NAME.json")
    parser.add_argument("--documents", type=int, default=60, help="documents in all (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--layouts", default=None,
                        help=f"comma list of {', '.join(LAYOUTS)} (default: every one installed)")
    args = parser.parse_args(argv)
    layouts = [x.strip() for x in args.layouts.split(",")] if args.layouts else None
    unknown = [x for x in layouts or [] if x not in LAYOUTS]
    if unknown:
        parser.error(f"unknown layout(s): {', '.join(unknown)}")
    try:
        names = write_corpus(args.out, args.documents, args.seed, layouts,
                             progress=lambda name: print(name, file=sys.stderr))
    except (RuntimeError, subprocess.TimeoutExpired) as exc:
        print(f"pdf corpus: {exc}", file=sys.stderr)
        return 1
    print(f"{len(names)} documents in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
