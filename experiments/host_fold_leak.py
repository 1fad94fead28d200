"""Which test pages of the host-grouped WCXB folds (edrew evaluate --group-by host) have a sister host of
their registrable domain among their fold's training pages, and, for one fold, the two training sets that
measure what that flatters (docs/evaluation.md, "Folds by registrable domain").

    python experiments/host_fold_leak.py --wcxb "$EDREW_WCXB" [--fold 1] [--out output/cv-site]
    python experiments/host_fold_leak.py --wcxb "$EDREW_WCXB" --fold 1 --score   # once both models are trained

Prints the leaked test pages per fold; writes OUT/host_folds.json and, for --fold K, OUT/data-fKA (the fold's
training pages) and OUT/data-fKB (the same without the leaked pages' registrable domains), as WCXB folders of
links to the dataset's files, for `edrew train --dataset wcxb OUT/data-fKA --out OUT/model-fKA ...`. With
--score: the fold's test pages scored by OUT/model-fKA and OUT/model-fKB, mean word-F1 of the leaked pages
and of the others.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from types import SimpleNamespace


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wcxb", default=os.environ.get("EDREW_WCXB"), help="WCXB folder (default $EDREW_WCXB)")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--fold", type=int, default=None, help="write the two training sets of this fold")
    parser.add_argument("--out", type=Path, default=Path("output/cv-site"))
    parser.add_argument("--score", action="store_true", help="score --fold's test pages with its two models")
    args = parser.parse_args()
    if not args.wcxb:
        parser.error("give --wcxb or set EDREW_WCXB")

    from edrew_scrapy.data import domain_of, read_json, registrable_domain, wcxb
    from edrew_scrapy.data.splits import by_host, group_kfold

    root = Path(args.wcxb)
    # the folds need only each page's host, as LabelledPage.domain holds it: no page is serialised
    pages = [SimpleNamespace(page_id=i, domain=domain_of(read_json(root / "ground-truth" / f"{i}.json").get("url")),
                             group="") for i in wcxb.page_ids(root)]
    folds = {}
    for k, (train, test) in enumerate(group_kfold(pages, k=args.folds, key=by_host, seed=args.seed), 1):
        seen = {registrable_domain(pages[i].domain) for i in train if pages[i].domain}
        leaked = [i for i in test if pages[i].domain and registrable_domain(pages[i].domain) in seen]
        domains = sorted({registrable_domain(pages[i].domain) for i in leaked})
        clean = [i for i in train if registrable_domain(pages[i].domain) not in set(domains)]
        folds[str(k)] = {"train": [pages[i].page_id for i in train], "test": [pages[i].page_id for i in test],
                         "leaked": [pages[i].page_id for i in leaked],
                         "train_clean": [pages[i].page_id for i in clean], "domains": domains}
        print(f"fold{k}: {len(test)} test pages, {len(leaked)} with a sister host in training "
              f"({len(domains)} registrable domains); training without them: {len(clean)} of {len(train)}")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "host_folds.json").write_text(json.dumps(folds))
    if args.fold is not None:
        fold = folds[str(args.fold)]
        for name, ids in (("A", fold["train"]), ("B", fold["train_clean"])):
            dest = args.out / f"data-f{args.fold}{name}"
            for sub, suffix in (("html", ".html.gz"), ("ground-truth", ".json")):
                (dest / sub).mkdir(parents=True, exist_ok=True)
                for i in ids:
                    link = dest / sub / f"{i}{suffix}"
                    if not link.exists():
                        link.symlink_to((root / sub / f"{i}{suffix}").resolve())
            print(f"wrote {dest} ({len(ids)} pages)")
        if args.score:
            score(root, fold, args.out, args.fold)
    return 0


def score(root: Path, fold: dict, out: Path, k: int) -> None:
    from edrew_scrapy.data import wcxb
    from edrew_scrapy.model.scorer import load_model
    from edrew_scrapy.training.evaluate import evaluate_pages, scorer_extractor

    pages = list(wcxb.iter_pages(root, fold["test"]))
    models = {m: scorer_extractor(load_model(out / f"model-f{k}{m}")) for m in "AB"}
    f1 = {}
    for r in evaluate_pages(pages, models, progress=False):
        f1.setdefault(r.page_id, {})[r.extractor] = r.word_f1
    leaked = set(fold["leaked"])
    for name, ids in (("leaked", [p for p in f1 if p in leaked]), ("others", [p for p in f1 if p not in leaked])):
        a, b = (sum(f1[p][m] for p in ids) / len(ids) for m in "AB")
        print(f"fold{k} {name}: {len(ids)} pages, word-F1 A {a:.4f}, B {b:.4f}, A - B {a - b:+.4f}")


if __name__ == "__main__":
    sys.exit(main())
