"""The article rules' class words in languages other than English: how often each names noise, and the rules
with and without them judged on cached scores (issue #35).

    # pages and models/default's scores: snippet_leaks' caches (trafeval, holdout, dragnet), fundus-news' training side
    python experiments/snippet_leaks.py cache --out DIR --shared S --mozilla-labels FILE
    python experiments/multilingual_words.py cache-fundus-train --out DIR --shared S --mozilla-labels FILE
    # each class-word part (class words cut at - and _) on the tuning pages (fundus-news' training pages, trafeval's
    # tuning half): node words the reference keeps / drops, per language; --words: those words inside class words
    python experiments/multilingual_words.py count --out DIR [--words kommentar,teilen,...]
    # what an arm changes on the tuning pages: the nodes it newly drops, relevant or not
    python experiments/multilingual_words.py tune --out DIR --arm words|headings
    # judging: main against each arm, paired on the same scores
    python experiments/multilingual_words.py judge --out DIR --names holdout,dragnet,trafeval

Arms (ARMS), each the same code on the same scores: "main" (main's rules), "words" (main + OTHER_WORDS patched
into the class-word patterns of rules/settings.py), "headings" (main + the boxes' headings by their text,
BOX_HEADINGS, dropped after main's article rules).
"""
from __future__ import annotations

import argparse
import collections
import gzip
import re
import sys
from contextlib import contextmanager
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import snippet_leaks as sl  # noqa: E402

# fundus-news' `country` to the language its publishers write in (one language a country in this set)
_COUNTRY_LANG = {"de": "de", "at": "de", "ch": "de", "li": "de", "lu": "de", "us": "en", "uk": "en", "za": "en",
                 "ca": "en", "au": "en", "ind": "en", "ls": "en", "na": "en", "tz": "en", "my": "en", "es": "es",
                 "mx": "es", "py": "es", "fr": "fr", "be": "fr", "it": "it", "pt": "pt", "pl": "pl", "jp": "ja",
                 "no": "no", "tr": "tr", "kr": "ko", "cz": "cs", "se": "sv", "dk": "da", "cn": "zh", "tw": "zh",
                 "ru": "ru", "ua": "uk", "vn": "vi", "id": "id", "il": "he", "lt": "lt", "lb": "ar", "gl": "kl",
                 "isl": "is"}
_LANG = re.compile(rb"<html[^>]*?\blang\s*=\s*[\"']?([a-zA-Z]{2,3})", re.I)
_PARTS = re.compile(r"[-_\s\d]+")


def language(lp) -> str:
    """The page's language: fundus' country, else the `<html lang>` of its source, else "?"."""
    rec = lp.meta.get("record") or {}
    if rec.get("country") in _COUNTRY_LANG:
        return _COUNTRY_LANG[rec["country"]]
    src = lp.meta.get("source")
    try:
        with (gzip.open if str(src).endswith(".gz") else open)(src, "rb") as f:
            m = _LANG.search(f.read(200_000))
    except OSError:
        m = None
    return m.group(1).decode("ascii").lower()[:2] if m else "?"


def node_labels(name, lp):
    """Each node's label: 1 relevant, 0 not, None unknown. trafeval's pages have no reference text: a node that
    holds a must-keep snippet is relevant, one that holds a must-drop snippet is not, the others unknown."""
    if name.startswith("trafeval"):
        from edrew_scrapy.training.snippets import count_snippets, snippets_of

        keep, drop = snippets_of(lp)
        out = []
        for node in lp.page.nodes:
            k, d = count_snippets(node.content, keep), count_snippets(node.content, drop)
            out.append(1 if k and not d else 0 if d and not k else None)
        return out
    return list(lp.labels)


def _tuning(out: Path):
    """(set name, labelled page, scores, its cache) of the tuning pages: fundus-news' training side and trafeval's
    tuning half (labels: node_labels)."""
    rec = sl._read(out, "fundus-train")
    for lp, s in zip(rec["pages"], rec["scores"]):
        yield "fundus-train", lp, s, rec
    if not (out / "trafeval.pkl").exists():
        return
    rec = sl._read(out, "trafeval")
    tune, _judge = sl.halves(rec["pages"])
    for i in tune:
        yield "trafeval-tune", rec["pages"][i], rec["scores"][i], rec


def cache_fundus_train(args) -> None:
    """fundus-news' pages on the training side of the holdout split, scored by models/default (DIR/fundus-train.pkl)."""
    pages, train = sl.holdout_training_side(args.shared, args.mozilla_labels)
    chosen = [pages[i] for i in train if pages[i].meta.get("dataset") == "fundus-news"]
    sl.write_cache(args.out, "fundus-train", chosen)
    print(f"fundus-train: {len(chosen)} pages", file=sys.stderr)


def count(args) -> None:
    from edrew_scrapy.rules.nodes import _near_classes
    from edrew_scrapy.words import count_words

    wanted = set(args.words.split(",")) if args.words else None
    # (language, part) -> [relevant words, not relevant words, pages]
    tally: dict = collections.defaultdict(lambda: [0, 0, set()])
    langs = collections.Counter()
    for name, lp, _s, _rec in _tuning(Path(args.out)):
        lang = language(lp)
        langs[(name, lang)] += 1
        labels = node_labels(name, lp)
        for i, node in enumerate(lp.page.nodes):
            if labels[i] is None:
                continue
            near = _near_classes(node)
            if wanted is not None:  # a wanted word anywhere inside a class word
                parts = {w for w in wanted if any(w in word for word in near)}
            else:
                parts = {p for word in near for p in _PARTS.split(word) if len(p) > 2}
            n = count_words(node.content)
            for p in parts:
                t = tally[(lang, p)]
                t[0 if labels[i] else 1] += n
                t[2].add(lp.page_id)
    print("pages:", dict(sorted(langs.items())))
    rows = []
    for (lang, p), (rel, irr, pages) in tally.items():
        if len(pages) >= args.min_pages or wanted is not None:
            rows.append((lang, p, rel, irr, len(pages)))
    rows.sort(key=lambda r: (r[0], -(r[3] + r[2])))
    for lang, p, rel, irr, n in rows:
        if wanted is not None or irr >= args.noise_share * (rel + irr):
            print(f"{lang}\t{p}\trelevant {rel}\tnot {irr}\tpages {n}\tnoise {irr / max(1, rel + irr):.2f}")


# The class words of other languages tried (the "words" arm), each added to the English words of the pattern
# that rules/settings.py names: reader comments anywhere in a class word (as "comment"), the others as a part of
# one (between - and _). "Kommentar" alone is not here: German sites call an opinion column so.
OTHER_WORDS = {
    "_COMMENT_TOKEN": ("kommentare", "comentarios", "reacties", "komentarze"),
    "_CHROME_TOKEN": ("teilen", "partage", "partager", "compartir", "condividi", "delen", "udostepnij", "compartilhar"),
    "_SHARE_TOKEN": ("teilen", "partage", "partager", "compartir", "condividi", "delen", "udostepnij", "compartilhar"),
    "_RELATED_TOKEN": ("verwandte", "aehnliche", "empfehlungen", "weitere-artikel", "mehr-zum-thema", "lesetipps",
                       "articles-lies", "a-lire-aussi", "relacionados", "relacionadas", "correlati", "gerelateerd",
                       "powiazane"),
    "_SIGNUP_TOKEN": ("abonnieren", "nieuwsbrief", "infolettre"),
    "_CAPTION_TOKEN": ("didascalia", "pie-de-foto", "leyenda", "bijschrift", "bildtext", "legenda"),
}
_PART_END = r")(?:[-_]|$)"

# The headings of the boxes around an article, as their text says in several languages (the "headings" arm): a
# kept text of at most BOX_HEADING_WORDS words that is one of them, or opens with one of two words or more (end
# punctuation cut, case folded), is dropped after main's article rules, before the main region.
BOX_HEADINGS = frozenset({
    # German
    "auch interessant", "das könnte sie auch interessieren", "das könnte dich auch interessieren", "lesen sie auch",
    "lies auch", "mehr zum thema", "verwandte beiträge", "verwandte artikel", "ähnliche beiträge", "ähnliche artikel",
    "weitere artikel", "weitere beiträge", "kommentare", "kommentieren", "kommentar schreiben", "keine kommentare",
    "artikel teilen", "beitrag teilen", "teilen mit", "teilen", "entdecke weitere",
    # French
    "à lire aussi", "a lire aussi", "lire aussi", "sur le même sujet", "articles similaires", "articles liés",
    "vous aimerez aussi", "commentaires", "laisser un commentaire", "partager", "partager cet article",
    # Spanish
    "te puede interesar", "también te puede interesar", "noticias relacionadas", "artículos relacionados",
    "lee también", "comentarios", "deja un comentario", "compartir", "compartir esta noticia",
    # Italian
    "leggi anche", "articoli correlati", "ti potrebbe interessare", "potrebbe interessarti", "commenti",
    "lascia un commento", "condividi",
    # Portuguese
    "leia também", "veja também", "notícias relacionadas", "artigos relacionados", "comentários",
    "deixe um comentário", "compartilhe", "compartilhar",
    # Dutch
    "lees ook", "gerelateerde artikelen", "reacties", "reageer", "delen", "deel dit artikel",
    # Polish
    "czytaj także", "czytaj też", "zobacz także", "zobacz też", "komentarze", "udostępnij", "podobne artykuły",
    # English
    "related posts", "related articles", "related stories", "you may also like", "you might also like", "read also",
    "also read", "more stories", "recommended for you", "share this", "share this article", "share this post",
    "leave a reply", "leave a comment", "no comments",
})
BOX_HEADING_WORDS = 6
_HEADING_ENDS = " \t\n:!?.…»«\"'()[]–—-"


def is_box_heading(text: str) -> bool:
    """The text is a box's heading (BOX_HEADINGS): one of them, or at most BOX_HEADING_WORDS words that open with
    one of two words or more ("Mehr zum Thema auf UEPO.de"; "Teilen und herrschen" may be the article's)."""
    words = text.strip(_HEADING_ENDS).casefold().split()
    if not words or len(words) > BOX_HEADING_WORDS:
        return False
    if " ".join(words) in BOX_HEADINGS:
        return True
    return any(" ".join(words[:n]).strip(_HEADING_ENDS) in BOX_HEADINGS for n in range(2, len(words)))


# the arms: (class words of other languages added, box headings dropped)
ARMS = {"main": (False, False), "words": (True, False), "headings": (False, True)}


def _with_other(pattern: "re.Pattern", name: str) -> "re.Pattern":
    alternatives = "".join("|" + re.escape(w) for w in OTHER_WORDS[name])
    src = pattern.pattern
    if name == "_COMMENT_TOKEN":
        return re.compile(src + alternatives)
    assert src.endswith(_PART_END), name
    return re.compile(src[:-len(_PART_END)] + alternatives + _PART_END)


@contextmanager
def other_words(on: bool = True):
    """The rules with OTHER_WORDS added to their patterns (patched into the modules that bound them at import)."""
    from edrew_scrapy.rules import boxes, comments, facts, settings

    if not on:
        yield
        return
    patched = {name: _with_other(getattr(settings, name), name) for name in OTHER_WORDS}
    patched["COMMENT_WORDS"] = settings.COMMENT_WORDS + OTHER_WORDS["_COMMENT_TOKEN"]
    saved = {}
    try:
        for mod in (settings, boxes, comments, facts):
            for key, value in patched.items():
                if hasattr(mod, key):
                    saved[(mod, key)] = getattr(mod, key)
                    setattr(mod, key, value)
        saved[(facts, "_BOX_RULES")] = facts._BOX_RULES
        rules = dict(facts._BOX_RULES)
        for reason, key in (("related-boxes", "_RELATED_TOKEN"), ("signup-boxes", "_SIGNUP_TOKEN"),
                            ("captions", "_CAPTION_TOKEN")):
            rules[reason] = (patched[key].search, rules[reason][1])
        facts._BOX_RULES = rules
        yield
    finally:
        for (mod, key), value in saved.items():
            setattr(mod, key, value)


@contextmanager
def box_headings(on: bool = True):
    """main's article rules, then the box headings (is_box_heading) among what they left kept, as one more
    article rule (patched into rules.decision, which runs them before the main region)."""
    from edrew_scrapy.rules import decision

    if not on:
        yield
        return
    article_rules = decision._article_rules

    def with_headings(page, keep, off):
        keep = list(keep)
        for reason, drop in article_rules(page, keep, off):
            keep = [k and not d for k, d in zip(keep, drop)]
            yield reason, drop
        drop = [k and is_box_heading(n.content) for n, k in zip(page.nodes, keep)]
        if any(drop):
            yield "box-headings", drop

    decision._article_rules = with_headings
    try:
        yield
    finally:
        decision._article_rules = article_rules


def arm_decision(arm: str, rec, lp, scores):
    words, headings = ARMS[arm]
    with other_words(words), box_headings(headings):
        return sl.decide(rec, lp, scores)


def _reasons(arm, rec, lp, scores):
    d = arm_decision(arm, rec, lp, scores)
    return None if d is None else d.reasons


def tune(args) -> None:
    """The nodes an arm (ARMS) newly drops on the tuning pages: per language and rule, node words the
    reference keeps / drops / says nothing of (node_labels)."""
    from edrew_scrapy.words import count_words

    tally: dict = collections.defaultdict(lambda: [0, 0, 0, 0])  # relevant, not, unknown words, nodes
    shown = 0
    for name, lp, s, rec in _tuning(Path(args.out)):
        if s is None:
            continue
        old = _reasons("main", rec, lp, s)
        new = _reasons(args.arm, rec, lp, s)
        lang = language(lp)
        labels = node_labels(name, lp) if old != new else None
        for i, (a, b) in enumerate(zip(old, new)):
            if a == b:
                continue
            n = count_words(lp.page.nodes[i].content)
            key = (name, lang, f"{a}->{b}")
            k = 2 if labels[i] is None else (0 if labels[i] else 1)
            tally[key][k] += n
            tally[key][3] += 1
            if args.show and shown < args.show:
                shown += 1
                y = "?" if k == 2 else ("REL" if k == 0 else "not")
                print(f"  {name} {lang} {lp.page_id} {a}->{b} {y}: {lp.page.nodes[i].content[:90]!r}")
    for (name, lang, change), (rel, irr, unk, nodes) in sorted(tally.items()):
        print(f"{name}\t{lang}\t{change}\tnodes {nodes}\trelevant {rel}\tnot {irr}\tunknown {unk}")


def judge(args) -> None:
    from edrew_scrapy.data.align import word_f1
    from edrew_scrapy.training.evaluate import reference_text
    from edrew_scrapy.training.snippets import count_snippets

    for name in args.names.split(","):
        rec = sl._read(Path(args.out), name)
        pages = rec["pages"]
        if name == "trafeval":
            _tune, judging = sl.halves(pages)
            for half, idx in (("tuning", _tune), ("judging", judging)):
                tot = {arm: [0, 0, 0, 0] for arm in ARMS}
                by_lang = collections.defaultdict(lambda: [0, 0, 0, 0])
                for i, keep, drop in sl.snippet_pages(pages, idx):
                    lp = pages[i]
                    texts = {arm: sl.text_of(lp, arm_decision(arm, rec, lp, rec["scores"][i])) for arm in ARMS}
                    lang = language(lp) if len(set(texts.values())) > 1 else None
                    for arm, text in texts.items():
                        k, d = count_snippets(text, keep), count_snippets(text, drop)
                        t = tot[arm]
                        t[0], t[1], t[2], t[3] = t[0] + k, t[1] + len(keep), t[2] + d, t[3] + len(drop)
                        if lang is not None:
                            by_lang[(lang, arm)][0] += k
                            by_lang[(lang, arm)][1] += d
                for arm, (k, nk, d, nd) in tot.items():
                    print(f"trafeval {half}\t{arm}\tkept {k}/{nk} ({k / nk:.3f})\tleaked {d}/{nd} ({d / nd:.3f})")
                for (lang, arm), (k, d, _x, _y) in sorted(by_lang.items()):
                    print(f"  pages where the arms differ, {lang}, {arm}: kept {k}, leaked {d}")
            continue
        by = collections.defaultdict(list)  # group -> [(P, R, F1) of each arm]
        for lp, sc in zip(pages, rec["scores"]):
            if sc is None:
                continue
            ref = reference_text(lp)
            f1 = [word_f1(sl.text_of(lp, arm_decision(arm, rec, lp, sc)), ref) for arm in ARMS]
            lang = language(lp)
            ds = lp.meta.get("dataset", name)
            kind = f"{ds}:{lp.page_type_or_site}" if ds == "wcxb-dev" else ds  # WCXB by page type too
            for g in {ds, kind, f"{ds}/{'en' if lang == 'en' else 'non-en'}", f"{ds}/{lang}"}:
                by[g].append(f1)
        for g in sorted(by):
            v = np.asarray(by[g])  # pages x arms x (P, R, F1)
            line = [f"{name}\t{g}\tpages {len(v)}\tmain F1 {v[:, 0, 2].mean():.4f} "
                    f"(P {v[:, 0, 0].mean():.3f} / R {v[:, 0, 1].mean():.3f})"]
            for a, arm in enumerate(ARMS):
                if a == 0:
                    continue
                d = v[:, a, 2] - v[:, 0, 2]
                up, down = int((d > 1e-9).sum()), int((d < -1e-9).sum())
                line.append(f"{arm} {d.mean():+.4f} (SE {sl._se(d):.4f}; {up} up / {down} down; "
                            f"P {v[:, a, 0].mean():.3f})")
            print("\t".join(line))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("cache-fundus-train")
    f.add_argument("--out", required=True)
    f.add_argument("--shared", default="../shared/datasets")
    f.add_argument("--mozilla-labels", default="output/mix/mozilla-readability.jsonl")
    c = sub.add_parser("count")
    c.add_argument("--out", required=True)
    c.add_argument("--words", default="")
    c.add_argument("--min-pages", type=int, default=3)
    c.add_argument("--noise-share", type=float, default=0.8)
    t = sub.add_parser("tune")
    t.add_argument("--out", required=True)
    t.add_argument("--show", type=int, default=0)
    t.add_argument("--arm", default="headings", choices=[a for a in ARMS if a != "main"])
    j = sub.add_parser("judge")
    j.add_argument("--out", required=True)
    j.add_argument("--names", default="holdout,dragnet,trafeval")
    a = p.parse_args()
    {"cache-fundus-train": cache_fundus_train, "count": count, "tune": tune, "judge": judge}[a.cmd](a)


if __name__ == "__main__":
    main()
