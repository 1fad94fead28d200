"""How each labelled set counts an article's headline, byline and dateline lines, and what a model keeps of them.

Issue #35 (bylines out of `text`). Reads the cached pages and scores of snippet_leaks.py / dragnet_precision.py
(`--out`, each `SET.pkl`: pages as `edrew evaluate` loads them, models/default's node scores) and, per set, finds
on every page:

- **headline**: the page's headline node (rules.headline_node: the first `<h1>` node whose words lie in the
  `<title>`);
- **byline** / **dateline**: the nodes metadata.byline_lines finds (the "By ..." lines the `author` field is read
  from, the short texts near the first `<h1>` that show the day `date_published` is read from);
- **byline markup** (for comparison, not a rule): a node of at most 12 words, not a heading, within 20 nodes of
  the first `<h1>`, whose own class or id or its nearest ancestors' classes name an author or a byline (metadata's
  byline markup), and not already a byline / dateline line;
- **numeric dateline** (for comparison): a short text near the `<h1>` with a numeric day (`06.11.2025`,
  `3/4/2025`) that byline_lines does not read.

For each kind: pages with one, lines, words; the share of those words the reference counts (the node labels of
the evaluation's alignment; dragnet also against its full reference, the headline line kept, aligned again);
the share models/default keeps (rules.explain on the cached scores), and kept words outside the reference /
dropped words in it. trafilatura-eval-pages: how many lines hold or lie in a must-keep or a must-drop snippet
and how many of those the model keeps.

    python experiments/byline_convention.py table --out output/np [--sets holdout,train,dragnet,...] [--show KIND]
    python experiments/byline_convention.py judge --out output/np --sets dragnet-tune,train,trafeval [--full-reference]

`judge`: per set, word P / R / F1 (trafeval: must-keep kept, must-drop leaked per half) with the rule `byline-lines`
as shipped (`branch`), without it (`main`), and with each subset of its kinds (rules.BYLINE_KINDS), paired on the
same pages and scores; `--full-reference` scores dragnet against its whole reference (headline line kept).
"""
from __future__ import annotations

import argparse
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import snippet_leaks as sl  # noqa: E402

KINDS = ("headline", "byline", "dateline", "byline markup", "numeric dateline")
_WORD = re.compile(r"\w+")
_MARKUP = re.compile(r"byline|author(?!ity|iz|is)")
_NUMERIC_DAY = re.compile(r"\b\d{1,2}[./]\d{1,2}[./](?:19|20)?\d\d\b")
NEAR = 20


def words(text: str) -> int:
    return len(_WORD.findall(text))


def lines_of(page) -> dict:
    """{node index: kind} of one page (KINDS)."""
    from edrew_scrapy import metadata, rules

    out = {}
    head = rules.headline_node(page)
    if head >= 0:
        out[head] = "headline"
    for k, kind in metadata.byline_lines(page).items():
        out.setdefault(k, kind)
    nodes = page.nodes
    h1 = next((k for k, n in enumerate(nodes[:metadata.SHOWN_DATE_NODES]) if n.tag == "h1" and not n.hidden), None)
    if h1 is None:
        return out
    for k in range(max(0, h1 - NEAR), min(len(nodes), h1 + NEAR + 1)):
        n = nodes[k]
        if k in out or n.hidden or n.boilerplate or n.tag in rules.settings._HEADINGS:
            continue
        if words(n.content) <= 12 and any(_MARKUP.search(w) for w in rules.nodes._near_classes(n)[:8]):
            out[k] = "byline markup"
        elif len(n.content) <= metadata.SHOWN_DATE_CHARS and _NUMERIC_DAY.search(n.content):
            out[k] = "numeric dateline"
    return out


def _groups(name: str, lp) -> list:
    ds = lp.meta.get("dataset") or name
    if ds == "dragnet":
        ds = name
    out = [ds]
    if ds == "wcxb-dev":
        out.append(f"wcxb-dev/{'article' if lp.page_type_or_site == 'article' else 'other types'}")
    return out


def table(args) -> None:
    from edrew_scrapy import rules
    from edrew_scrapy.data.align import align_reference
    from edrew_scrapy.training.snippets import count_snippets, snippets_of

    out = Path(args.out)
    stats = defaultdict(Counter)  # (group, kind) -> counts
    pages_of = Counter()
    for name in args.sets.split(","):
        rec = sl._read(out, name)
        for lp, sc in zip(rec["pages"], rec["scores"]):
            page = lp.page
            groups = _groups(name, lp)
            for g in groups:
                pages_of[g] += 1
            found = lines_of(page)
            if not found:
                continue
            d = sl.decide(rec, lp, sc)
            kept = [r == rules.KEPT for r in d.reasons] if d is not None else [False] * len(page.nodes)
            full = None
            if name.startswith("dragnet"):
                record = (lp.meta.get("record") or {}).get("main_content") or ""
                full = align_reference([n.content for n in page.nodes], record).labels
            keep_s, drop_s = snippets_of(lp) if name == "trafeval" else ([], [])
            seen = set()
            for k, kind in sorted(found.items()):
                n = page.nodes[k]
                w = words(n.content)
                in_ref = bool(lp.labels[k]) if lp.labels is not None else False
                for g in groups:
                    st = stats[(g, kind)]
                    if (g, kind) not in seen:
                        st["pages"] += 1
                    st["lines"] += 1
                    st["words"] += w
                    st["ref words"] += w * in_ref
                    st["kept words"] += w * kept[k]
                    st["kept not ref"] += w * (kept[k] and not in_ref)
                    st["dropped in ref"] += w * (in_ref and not kept[k])
                    if full is not None:
                        st["full ref words"] += w * bool(full[k])
                    if name == "trafeval":
                        in_keep = any(count_snippets(n.content, [s]) or count_snippets(s, [n.content]) for s in keep_s)
                        in_drop = any(count_snippets(n.content, [s]) or count_snippets(s, [n.content]) for s in drop_s)
                        st["in keep"] += in_keep
                        st["in keep kept"] += in_keep and kept[k]
                        st["in drop"] += in_drop
                        st["in drop kept"] += in_drop and kept[k]
                seen.update((g, kind) for g in groups)
                if args.show and args.show == kind and len(stats[(groups[0], kind)]) and args.shown < args.limit:
                    args.shown += 1
                    print(f"  [{groups[0]} ref={int(in_ref)} kept={int(kept[k])}] {n.tag} :: {n.content[:110]}")
    print("| set (pages) | line | pages with it | lines | words | in reference | kept | kept, not in ref | "
          "dropped, in ref | full ref (dragnet) | trafeval in keep / kept | in drop / kept |")
    print("|---" * 12 + "|")
    for g in sorted(pages_of):
        for kind in KINDS:
            st = stats.get((g, kind))
            if not st:
                continue
            wd = max(1, st["words"])
            full = f"{st['full ref words'] / wd:.2f}" if g.startswith("dragnet") else ""
            tk = f"{st['in keep']} / {st['in keep kept']}" if g == "trafeval" else ""
            td = f"{st['in drop']} / {st['in drop kept']}" if g == "trafeval" else ""
            print(f"| {g} ({pages_of[g]}) | {kind} | {st['pages']} | {st['lines']} | {st['words']} | "
                  f"{st['ref words'] / wd:.2f} | {st['kept words'] / wd:.2f} | {st['kept not ref']} | "
                  f"{st['dropped in ref']} | {full} | {tk} | {td} |")


VARIANTS = {"main": (), "byline": ("byline",), "dateline": ("dateline",), "headline": ("headline",),
            "byline+dateline": ("byline", "dateline")}


def judge(args) -> None:
    from edrew_scrapy import rules

    shipped = rules.BYLINE_KINDS
    variants = {"branch": shipped, **{k: v for k, v in VARIANTS.items() if v != shipped}}

    def text(rec, lp, sc, v):
        kinds = variants[v]
        rules.BYLINE_KINDS = kinds
        try:
            return sl.text_of(lp, sl.decide(rec, lp, sc, () if kinds else ("byline-lines",)))
        finally:
            rules.BYLINE_KINDS = shipped

    out = Path(args.out)
    for name in args.sets.split(","):
        rec = sl._read(out, name)
        if args.full_reference and name.startswith("dragnet"):
            for lp in rec["pages"]:
                lp.meta["main_content"] = (lp.meta.get("record") or {}).get("main_content") or ""
        sl.judge_variants(name, rec, variants, lambda lp, sc, v, rec=rec: text(rec, lp, sc, v), args.halves,
                          "branch", prefix=f"{name}{' (full reference)' if args.full_reference else ''}:")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("table")
    t.add_argument("--out", required=True)
    t.add_argument("--sets", default="holdout,train,dragnet-tune,dragnet,dragnet-rest,trafeval")
    t.add_argument("--show", default="", help="print the lines of this kind")
    t.add_argument("--limit", type=int, default=60)
    j = sub.add_parser("judge")
    j.add_argument("--out", required=True)
    j.add_argument("--sets", default="dragnet-tune,train,trafeval")
    j.add_argument("--halves", default="tuning", help="trafeval's halves to report")
    j.add_argument("--full-reference", action="store_true")
    args = p.parse_args()
    args.shown = 0
    {"table": table, "judge": judge}[args.cmd](args)


if __name__ == "__main__":
    main()
