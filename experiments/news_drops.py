"""What the news head keeps differently from the other model, by kind of line, on dragnet and on WCXB articles.

Issue #35: the news head (models/default's recipe on fundus-news + mozilla-readability only) gains on dragnet
against models/default and loses on WCXB's own articles against WCXB's domain-fold heads. This asks whether
the lines it keeps differently are ones each dataset's reference counts differently (captions, bylines,
datelines, standfirsts, headings, related lists, comments) or ones one head gets wrong whatever the reference.

    python experiments/news_drops.py run --out DIR \
        --dragnet-news E/dragnet-seed1/pages.csv:control --dragnet-news E/dragnet-seed2/pages.csv:control \
        --dragnet-base E/dragnet-seed2/pages.csv:default \
        --wcxb-news E/wcxb-seed1/pages.csv:control --wcxb-news E/wcxb-seed2/pages.csv:control \
        --wcxb-fold H/m-cv1/pages.csv:edrew=H/models/cv1 ... \
        --news-model M1 --news-model M2 --pages 40
    python experiments/news_drops.py table DIR/lines.csv

`run` picks, from per-page results other runs wrote, the pages where every news head's word-F1 is above the
other model's (dragnet) or below it (WCXB, pages WCXB types `article`), the `--pages` largest mean differences
of each; scores them again with every news head and the other model (WCXB: the page's own fold head, by the
fold whose pages.csv lists it), and writes every node that the news heads (all of them agreeing) keep and the
other drops, or the other keeps and they drop, with what the kind rules read (tag, nearest ancestors' tags and
classes from the node's reTPS, link share, text) and whether the node aligns to the page's reference (the
evaluation's own node labels; dragnet's reference without its headline line, as `--reference-title drop`).
`table` classifies each line by kind (`kind_of`: the first matching rule) and prints lines and words by kind x
dataset x side (news drops / news keeps) x in reference or not. Classification is by rules on markup and text,
so `table` also prints a sample per kind to check the rules by eye.
"""
from __future__ import annotations

import argparse
import csv
import re
import sys
from collections import defaultdict
from pathlib import Path

WORD = re.compile(r"\w+")
MONTHS = ("jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|january|february|march|april|june|july|august|"
          "september|october|november|december")
DATE_TEXT = re.compile(rf"(\b({MONTHS})\.?\s+\d{{1,2}}\b|\b\d{{1,2}}\s+({MONTHS})\b|\b\d{{4}}-\d{{2}}-\d{{2}}\b|"
                       r"\b\d{1,2}[/.]\d{1,2}[/.]\d{2,4}\b|\b\d{1,2}:\d{2}\s*(am|pm)?\b|\b(updated|published|posted)\b)",
                       re.I)
KINDS = ("comment", "caption", "heading", "byline", "dateline", "standfirst", "related", "chrome", "list/table item",
         "body", "other")
ITEM_TAGS = {"li", "td", "th", "dd", "dt"}

# Ancestor context: the node's own tag and classes and those of its nearest ancestors (reTPS reads outwards).
CTX = {
    "comment": re.compile(r"comment|disqus|reply|replies|respond", re.I),
    "caption": re.compile(r"caption|credit|photo|image|img|media|gallery|figure|wp-caption", re.I),
    "byline": re.compile(r"byline|author|contributor|writer|reporter|by-line|\bby\b", re.I),
    "dateline": re.compile(r"\bdate|time(stamp)?\b|published|posted|dateline|pubdate|updated", re.I),
    "standfirst": re.compile(r"standfirst|\bdek\b|summary|subtitle|sub-?head|\blede\b|\blead\b|intro|excerpt|"
                             r"strapline|description|deck|kicker|abstract", re.I),
    "related": re.compile(r"related|recommend|more-?(stories|news|from)|also|popular|trending|teaser|promo|"
                          r"read-?more|most-?read|next|previous|prev|widget|outbrain|taboola|sidebar", re.I),
    "chrome": re.compile(r"share|social|\bnav|menu|footer|header|breadcrumb|\btags?\b|subscribe|newsletter|"
                         r"\bad\b|ads|advert|sponsor|login|signup|cookie|print|email|tweet|facebook|follow", re.I),
}
CHROME_TEXT = re.compile(r"^(share|tweet|email|print|comments?|follow|subscribe|advertisement|read more|"
                         r"sign up|log ?in|related|more)\b", re.I)


def words(text: str) -> int:
    return len(WORD.findall(text))


def context(retps: str, tag: str, depth: int = 4) -> str:
    """The node's tag and classes and those of its `depth` nearest ancestors, from the reTPS tokens."""
    out, tags = [tag], 0
    for tok in retps.split("<#SEP>"):
        if tok.startswith("<#"):
            continue
        if "|" in tok:  # an ancestor's "tag|bucket" token closes that ancestor's classes
            tags += 1
            out.append(tok.split("|")[0])
            if tags >= depth:
                break
        else:
            out.append(tok)
    return " ".join(out)


def kind_of(row: dict) -> str:
    """First matching rule; markup (tag, ancestors' tags and classes) before text."""
    tag, ctx, text = row["tag"], row["context"], row["text"]
    n, link = int(row["words"]), float(row["link_share"])
    tags = set(ctx.split())
    if CTX["comment"].search(ctx):
        return "comment"
    if tag == "figcaption" or "figcaption" in tags or "figure" in tags or (n < 40 and CTX["caption"].search(ctx)):
        return "caption"
    if re.fullmatch(r"h[1-6]", tag):
        return "heading"
    if n <= 15 and (CTX["byline"].search(ctx) or re.match(r"^\s*(by|von|par|por)\s+\w", text, re.I)):
        return "byline"
    if n <= 15 and (tag == "time" or "time" in tags or CTX["dateline"].search(ctx) or DATE_TEXT.search(text)):
        return "dateline"
    if CTX["standfirst"].search(ctx) and n >= 5:
        return "standfirst"
    if CTX["related"].search(ctx) or (link >= 0.6 and ("li" in tags or n <= 20)):
        return "related"
    if row["boilerplate"] or CTX["chrome"].search(ctx) or (n <= 6 and CHROME_TEXT.match(text)):
        return "chrome"
    if (tag in ITEM_TAGS or tags & ITEM_TAGS) and link < 0.6:
        return "list/table item"
    if (tag == "p" or "p" in tags or n >= 15) and link < 0.5:
        return "body"
    return "other"


# ---- picking pages ------------------------------------------------------------------------------------------

def _rows(spec: str):
    """{page_id: row} of one `pages.csv:EXTRACTOR`."""
    path, _, name = spec.rpartition(":")
    with open(path, newline="") as fh:
        return {r["page_id"]: r for r in csv.DictReader(fh) if r["extractor"] == name and not r.get("failed")}


def pick(news_specs, base_specs, n: int, sign: int, group: str = ""):
    """Page ids where every news head's word-F1 differs from the base's in the direction `sign`, the `n` with the
    largest mean |difference|; base_specs may be several files (one per fold), each page taken where it is."""
    news = [_rows(s) for s in news_specs]
    base = {}
    for spec in base_specs:
        for pid, r in _rows(spec).items():
            base[pid] = (r, spec)
    picked = []
    for pid, (b, spec) in base.items():
        if group and b["group"] != group:
            continue
        if not all(pid in rows for rows in news):
            continue
        diffs = [float(rows[pid]["word_f1"]) - float(b["word_f1"]) for rows in news]
        if all(d * sign > 0 for d in diffs):
            picked.append((sum(diffs) / len(diffs), pid, spec))
    picked.sort(key=lambda t: -t[0] * sign)
    return picked[:n]


# ---- scoring ------------------------------------------------------------------------------------------------

def _kept(scorer, page):
    from edrew_scrapy.extract import extract

    return {n.index for n in extract(page, scorer=scorer)[0].nodes}


def run(args) -> None:
    from edrew_scrapy.data import simple, wcxb
    from edrew_scrapy.data.align import align_reference
    from edrew_scrapy.data.mix import drop_title_line
    from edrew_scrapy.model.base import load_model

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    news = [load_model(m) for m in args.news_model]
    fold_models = {}
    for spec in args.wcxb_fold:
        csv_spec, _, model = spec.partition("=")
        fold_models[csv_spec] = model
    d_pick = pick(args.dragnet_news, args.dragnet_base, args.pages, +1)
    w_pick = pick(args.wcxb_news, list(fold_models), args.pages, -1, group="article")
    print(f"dragnet: {len(d_pick)} pages (mean gain {sum(p[0] for p in d_pick) / max(1, len(d_pick)):+.4f}); "
          f"WCXB articles: {len(w_pick)} pages (mean loss {sum(p[0] for p in w_pick) / max(1, len(w_pick)):+.4f})",
          file=sys.stderr)
    with open(out / "pages.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["dataset", "page_id", "mean_diff", "base"])
        for name, picks in (("dragnet", d_pick), ("wcxb", w_pick)):
            for diff, pid, spec in picks:
                w.writerow([name, pid, f"{diff:.4f}", spec])
    fields = ["dataset", "page_id", "index", "side", "in_ref", "tag", "context", "link_share", "boilerplate",
              "words", "text"]
    default = load_model(args.dragnet_model)
    scorers = {}
    with open(out / "lines.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=fields)
        w.writeheader()
        ids = [p[1] for p in d_pick]
        for lp in simple.iter_pages(args.dragnet, ids=ids):
            reference = lp.meta["record"].get("main_content") or ""
            shorter = drop_title_line(reference, lp.page.title)
            labels = align_reference([n.content for n in lp.page.nodes], shorter).labels
            _write(w, "dragnet", lp, labels, news, default)
        folds = {p[1]: fold_models[p[2]] for p in w_pick}
        for lp in wcxb.iter_pages(args.wcxb, ids=[p[1] for p in w_pick]):
            model = folds[lp.page_id]
            if model not in scorers:
                scorers[model] = load_model(model)
            _write(w, "wcxb", lp, lp.labels, news, scorers[model])
            fh.flush()


def _write(w, dataset, lp, labels, news, other) -> None:
    page = lp.page
    kept_news = [_kept(s, page) for s in news]
    agree = set.intersection(*kept_news)
    anyk = set.union(*kept_news)
    kept_other = _kept(other, page)
    for node in page.nodes:
        i = node.index
        if i in agree and i not in kept_other:
            side = "news keeps"
        elif i not in anyk and i in kept_other:
            side = "news drops"
        else:
            continue
        w.writerow(_node_row(dataset, lp.page_id, node, labels[i], side))


def _node_row(dataset, page_id, node, in_ref, side) -> dict:
    text = node.content
    return {"dataset": dataset, "page_id": page_id, "index": node.index, "side": side, "in_ref": int(in_ref),
            "tag": node.tag, "context": context(node.retps, node.tag),
            "link_share": f"{node.link_chars / max(1, len(text)):.2f}", "boilerplate": node.boilerplate,
            "words": words(text), "text": text[:300]}


def conventions(args) -> None:
    """Every node of the first `--pages` dragnet pages and WCXB articles (no model): the share of each kind's
    lines and words that the reference counts, i.e. each dataset's convention per kind whatever a head keeps."""
    from edrew_scrapy.data import simple, wcxb
    from edrew_scrapy.data.align import align_reference
    from edrew_scrapy.data.mix import drop_title_line

    fields = ["dataset", "page_id", "index", "side", "in_ref", "tag", "context", "link_share", "boilerplate",
              "words", "text"]
    with open(args.out, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=fields)
        w.writeheader()
        for count, lp in enumerate(simple.iter_pages(args.dragnet)):
            if count >= args.pages:
                break
            shorter = drop_title_line(lp.meta["record"].get("main_content") or "", lp.page.title)
            labels = align_reference([n.content for n in lp.page.nodes], shorter).labels
            for node in lp.page.nodes:
                w.writerow(_node_row("dragnet", lp.page_id, node, labels[node.index], "all"))
        ids = [i for i in wcxb.page_ids(args.wcxb)
               if ((wcxb.load_truth(args.wcxb, i).get("_internal") or {}).get("page_type") or {}).get("primary")
               == "article"][:args.pages]
        for lp in wcxb.iter_pages(args.wcxb, ids=ids):
            for node in lp.page.nodes:
                w.writerow(_node_row("wcxb", lp.page_id, node, lp.labels[node.index], "all"))


# ---- table --------------------------------------------------------------------------------------------------

def table(args) -> None:
    with open(args.lines, newline="") as fh:
        rows = list(csv.DictReader(fh))
    cells = defaultdict(lambda: [0, 0, set()])
    samples = defaultdict(list)
    for r in rows:
        k = kind_of(r)
        cell = cells[(r["dataset"], r["side"], k, r["in_ref"] == "1")]
        cell[0] += 1
        cell[1] += int(r["words"])
        cell[2].add(r["page_id"])
        if len(samples[k]) < args.samples:
            samples[k].append(f"{r['dataset']} {r['page_id']} {r['side']} ref={r['in_ref']} <{r['tag']}> "
                              f"[{r['context'][:70]}] {r['text'][:90]!r}")
    pages = {(r["dataset"], r["page_id"]) for r in rows}
    print(f"{len(rows)} lines on {len(pages)} pages; each cell: lines / words (pages)\n")
    sides = sorted({r["side"] for r in rows})
    cols = [(d, s, ref) for d in ("dragnet", "wcxb") for s in sides for ref in (True, False)]
    print("| kind | " + " | ".join(f"{d}, {s}, {'in ref' if ref else 'not in ref'}" for d, s, ref in cols)
          + (" | in ref, words: dragnet / wcxb |" if sides == ["all"] else " |"))
    print("|---" * (len(cols) + 1 + (sides == ["all"])) + "|")
    for k in (*KINDS, None):
        line = []
        for d, s, ref in cols:
            got = [cells[(d, s, kk, ref)] for kk in (KINDS if k is None else (k,))]
            n, wds, pg = sum(c[0] for c in got), sum(c[1] for c in got), len(set().union(*(c[2] for c in got)))
            line.append(f"{n} / {wds} ({pg})")
        if sides == ["all"]:
            shares = []
            for d in ("dragnet", "wcxb"):
                kinds = KINDS if k is None else (k,)
                yes = sum(cells[(d, "all", kk, True)][1] for kk in kinds)
                no = sum(cells[(d, "all", kk, False)][1] for kk in kinds)
                shares.append(f"{yes / max(1, yes + no):.2f}")
            line.append(" / ".join(shares))
        print(f"| {k or '**all**'} | " + " | ".join(line) + " |")
    if args.samples:
        print()
        for k in KINDS:
            for s in samples[k]:
                print(f"{k:10s} {s}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--out", required=True)
    r.add_argument("--dragnet", default="/work/shared/datasets/dragnet")
    r.add_argument("--wcxb", default="/work/shared/datasets/wcxb-dev")
    r.add_argument("--dragnet-news", action="append", required=True)
    r.add_argument("--dragnet-base", action="append", required=True)
    r.add_argument("--dragnet-model", default="default", help="the model dragnet-base's rows are from")
    r.add_argument("--wcxb-news", action="append", required=True)
    r.add_argument("--wcxb-fold", action="append", required=True, help="PAGES.CSV:EXTRACTOR=MODEL_DIR per fold")
    r.add_argument("--news-model", action="append", required=True, help="one per news head, in --*-news order")
    r.add_argument("--pages", type=int, default=40)
    t = sub.add_parser("table")
    t.add_argument("lines")
    t.add_argument("--samples", type=int, default=0, help="lines to print per kind, to check the rules")
    c = sub.add_parser("conventions")
    c.add_argument("--out", required=True, help="lines.csv of every node, for `table`")
    c.add_argument("--dragnet", default="/work/shared/datasets/dragnet")
    c.add_argument("--wcxb", default="/work/shared/datasets/wcxb-dev")
    c.add_argument("--pages", type=int, default=100)
    args = ap.parse_args(argv)
    {"run": run, "table": table, "conventions": conventions}[args.cmd](args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
