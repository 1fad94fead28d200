"""How much do cross-validated models lean on a site's markup habits? WCXB word-F1 with the markup changed.

Every WCXB page is scored by the cross-validation fold model that did not see its domain, as
`edrew evaluate --train-model` scores it, once as served and once per transformation of its HTML:

- classes: every class name replaced by a hash of itself ("article-body" -> "c1f3a9b"), as sites built
  with CSS-in-JS or CSS modules ship them; the same name always gets the same hash, so a page's
  template still repeats;
- classes-ids: the same for class names and ids;
- p-div: every <p> written as <div> (pages built of divs; a <div> closes no open paragraph, so
  unclosed paragraphs now nest);
- landmarks-div: <article>, <main>, <nav>, <aside>, <footer>, <header> and <section> written as <div>
  (pages without HTML5 landmarks: the nav/aside/footer rule and the article exception then see none).

The bytes are changed before decoding (read as latin-1 and written back, so only ASCII markup
changes), then go through `serialize` and `extract`. Prints word-F1 per page type for each.

    python experiments/markup_robustness.py --wcxb "$EDREW_WCXB" --models output/eval-wcxb-cv-holdbest/models

--models holds fold1 ... fold5 from an `edrew evaluate --train-model` run with the same --folds and
--seed. About 2 minutes a transformation on one core.
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import os
import re
import sys
from collections import defaultdict
from pathlib import Path

from edrew_scrapy.data.splits import GROUP_KEYS

# attributes are rewritten only inside start tags (_START_TAG), not in text such as a code sample
# that shows "&lt;div class=...&gt;"
_START_TAG = re.compile(rb"<[A-Za-z][^<>]*>")
_CLASS = re.compile(rb"""(\sclass\s*=\s*)("[^"]*"|'[^']*'|[^\s>"']+)""", re.I)
_CLASS_ID = re.compile(rb"""(\s(?:class|id)\s*=\s*)("[^"]*"|'[^']*'|[^\s>"']+)""", re.I)
_P = re.compile(rb"<(/?)p(?=[\s>/])", re.I)
_LANDMARKS = re.compile(rb"<(/?)(?:article|main|nav|aside|footer|header|section)(?=[\s>/])", re.I)


def _hashed(match: re.Match) -> bytes:
    value = match.group(2)
    quote = value[:1] if value[:1] in (b'"', b"'") else b""
    inner = value[1:-1] if quote else value
    names = b" ".join(b"c" + hashlib.sha1(n).hexdigest()[:6].encode() for n in inner.split())
    return match.group(1) + quote + names + quote


def _in_start_tags(attribute: re.Pattern):
    return lambda html: _START_TAG.sub(lambda tag: attribute.sub(_hashed, tag.group()), html)


TRANSFORMS = {
    "none": lambda html: html,
    "classes": _in_start_tags(_CLASS),
    "classes-ids": _in_start_tags(_CLASS_ID),
    "p-div": lambda html: _P.sub(rb"<\1div", html),
    "landmarks-div": lambda html: _LANDMARKS.sub(rb"<\1div", html),
}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--wcxb", default=os.environ.get("EDREW_WCXB"), help="WCXB dev folder (default $EDREW_WCXB)")
    ap.add_argument("--models", required=True, help="folder holding the fold models fold1 ... foldK")
    ap.add_argument("--transforms", default=",".join(TRANSFORMS), help="comma list of %(default)s")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--group-by", choices=GROUP_KEYS, default="domain",
                    help="the folds' key, as edrew evaluate --group-by (host for fold models trained before "
                         "27 Nov 2026)")
    ap.add_argument("--region-share", type=float, default=0.7)
    args = ap.parse_args(argv)
    names = [t.strip() for t in args.transforms.split(",") if t.strip()]
    unknown = [t for t in names if t not in TRANSFORMS]
    if unknown or not args.wcxb:
        ap.error(f"unknown transform {', '.join(unknown)}" if unknown else "give --wcxb or set EDREW_WCXB")

    import numpy as np
    import torch
    from tqdm import tqdm

    from edrew_scrapy.commands.evaluate import check_held_out, held_out
    from edrew_scrapy.data import splits, wcxb
    from edrew_scrapy.extract import extract, override_region_share
    from edrew_scrapy.model.scorer import load_model
    from edrew_scrapy.serializer import serialize
    from edrew_scrapy.training.evaluate import reference_text, word_f1

    # one thread: two of these (or anything else) on two cores with torch's default of one thread per
    # core ran ten times slower
    torch.set_num_threads(1)
    pages = list(wcxb.iter_pages(args.wcxb, wcxb.page_ids(args.wcxb)))
    folds = splits.group_kfold(pages, k=args.folds, key=splits.group_key(args.group_by), seed=args.seed)
    scores = {t: defaultdict(list) for t in names}
    for f, (_train, test) in enumerate(folds, 1):
        # a fold model of other folds would be scored on pages it was trained on
        model_dir = Path(args.models) / f"fold{f}"
        check_held_out(model_dir, held_out(args, f"fold{f}", [pages[i] for i in test]))
        scorer = override_region_share(load_model(model_dir), args.region_share)
        for i in tqdm(test, desc=f"fold{f}", unit="page"):
            lp = pages[i]
            raw = Path(lp.meta["source"]).read_bytes()
            if lp.meta["source"].endswith(".gz"):
                raw = gzip.decompress(raw)
            reference = reference_text(lp)
            for t in names:
                [result] = extract([serialize(TRANSFORMS[t](raw), url=lp.page.url)], scorer=scorer)
                f1 = word_f1(result.text, reference)[2]
                scores[t][lp.page_type_or_site].append(f1)
                scores[t]["ALL"].append(f1)
    groups = sorted(k for k in scores[names[0]] if k != "ALL") + ["ALL"]
    print(f"{'transform':14s} " + " ".join(f"{g[:13]:>13s}" for g in groups))
    for t in names:
        print(f"{t:14s} " + " ".join(f"{np.mean(scores[t][g]):13.4f}" for g in groups))
    return 0


if __name__ == "__main__":
    sys.exit(main())
