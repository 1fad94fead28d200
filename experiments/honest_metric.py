"""The honest dev metric (#35 step 2): leave-one-dataset-out heads and WCXB domain-fold heads, encoded once.

Every head here is models/default's recipe (its biLM frozen, variant d, 16 features, 30 epochs, seed 1) on
another split of the three licensed sets. The biLM is the same for all, so the pages are read and encoded
once (`cache`, `encode`) and the heads train on that one encoding (`train`, several at once, on a GPU where
there is one); `finish` turns each head into a model folder, its threshold chosen on its validation pages on
extract()'s scores as `edrew train` chooses it; `folds` writes each WCXB test fold as a dataset folder, so that
`edrew evaluate --split none` scores the fold's head on exactly its test pages; `report` and `pool` print the
lab entry's tables from the evaluations.

    python experiments/honest_metric.py cache --out DIR --shared S --mozilla-labels FILE
    python experiments/honest_metric.py check-validation --cache DIR      # the fast validation == page_word_f1s
    python experiments/honest_metric.py encode --cache DIR --out ENC [--device cuda] [--features 26]
    python experiments/honest_metric.py train --cache DIR --encoded ENC --splits lodo-wcxb,cv1 --out HEADS [--device X]
        [--features N]    # the first N of the encoding's features (a 26-feature encoding serves 16 and 26)
    python experiments/honest_metric.py finish --cache DIR --heads HEADS --out MODELS [--splits lodo-wcxb]
    python experiments/honest_metric.py folds --cache DIR --shared S --out FOLDS
    python experiments/honest_metric.py report --runs EVAL1,EVAL2 [--types]
    python experiments/honest_metric.py pool --runs CV1,...,CV5 [--metric p]

Splits (each dataset's groups are registrable domains, data.mix.split_per_dataset, seed 1):
- lodo-NAME: the other two sets, each split 20 % test / 10 % validation as `edrew train --test-fraction 0.2
  --val-fraction 0.1` splits them (the leave-one-dataset-out entry's recipe); NAME is never seen.
- cvK: WCXB dev's fold K of `group_kfold(k=5, by_domain, seed=1)` (what `edrew evaluate --folds 5` draws) is
  the test; the other WCXB folds, fundus-news and mozilla-readability train, 10 % of each set's domains
  validate, and no page of a test-fold domain trains or validates, whatever its set.
"""
from __future__ import annotations

import argparse
import json
import lzma
import pickle
import subprocess
import sys
import time
from pathlib import Path

DATASETS = ("wcxb-dev", "fundus-news", "mozilla-readability")
NEWS = ("fundus-news", "mozilla-readability")
EPOCHS, SEED, FEATURES, FOLDS = 30, 1, 16, 5


def _specs(shared: str, mozilla_labels: str):
    from edrew_scrapy.data.mix import parse_spec

    return [parse_spec(f"wcxb-dev=wcxb:{shared}/wcxb-dev"), parse_spec(f"fundus-news=simple:{shared}/fundus-news"),
            parse_spec(f"mozilla-readability=simple:{mozilla_labels}")]


def news_split(datasets, groups) -> dict:
    """models/default's news head's split: the three sets split as `edrew train $MIX --test-fraction 0.2
    --val-fraction 0.1` splits them (models/default's card), then only the news sets' pages, so that none of the
    shipped model's held-out pages trains or validates either head. `datasets`, `groups`: per cached page."""
    from types import SimpleNamespace

    from edrew_scrapy.data.mix import split_per_dataset

    pages = [SimpleNamespace(meta={"dataset": d}, group=g) for d, g in zip(datasets, groups)]
    # the cached groups are by_domain's values
    sides = split_per_dataset(pages, lambda p: p.group, 0.1, 0.2, SEED)
    return dict(zip(("train", "val", "test"), ([i for i in side if datasets[i] in NEWS] for side in sides)))


def add_news_split(args) -> None:
    """A copy of a cache with the `news` split added (news_split), the pages as they were."""
    data = _load(Path(args.cache))
    data["splits"]["news"] = news_split(data["datasets"], data["groups"])
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "cache.pkl").write_bytes(pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL))
    subprocess.run(["xz", "-T2", "-3", "-f", str(out / "cache.pkl")], check=True)
    print(json.dumps({k: len(v) for k, v in data["splits"]["news"].items()}))


def make_splits(labelled, wcxb_all) -> dict:
    """{name: {"train", "val", "test"}} as indices into `labelled` (pages with nodes, in load order); the WCXB
    folds are drawn over `wcxb_all`, every WCXB page as `edrew evaluate --folds 5` reads them (nodes or not),
    and each fold's "test_ids" are all of its pages."""
    from edrew_scrapy.data.mix import dataset_of, split_per_dataset
    from edrew_scrapy.data.splits import by_domain, group_kfold

    names = [dataset_of(lp) for lp in labelled]
    out = {}
    for left in DATASETS:
        sub = [i for i, n in enumerate(names) if n != left]
        tr, va, te = split_per_dataset([labelled[i] for i in sub], by_domain, 0.1, 0.2, SEED)
        out[f"lodo-{left.split('-')[0]}"] = {"train": [sub[i] for i in tr], "val": [sub[i] for i in va],
                                             "test": [sub[i] for i in te], "left_out": left}
    position = {(n, str(lp.page_id)): i for i, (n, lp) in enumerate(zip(names, labelled))}
    for k, (_, fold) in enumerate(group_kfold(wcxb_all, k=FOLDS, key=by_domain, seed=SEED)):
        ids = [str(wcxb_all[i].page_id) for i in fold]
        test = sorted(position[("wcxb-dev", pid)] for pid in ids if ("wcxb-dev", pid) in position)
        held, tested = {by_domain(wcxb_all[i]) for i in fold}, set(test)
        pool = [i for i in range(len(labelled)) if i not in tested and by_domain(labelled[i]) not in held]
        tr, va, _ = split_per_dataset([labelled[i] for i in pool], by_domain, 0.1, 0.0, SEED)
        out[f"cv{k + 1}"] = {"train": [pool[i] for i in tr], "val": [pool[i] for i in va], "test": test,
                             "test_ids": ids, "dropped_same_domain": len(labelled) - len(test) - len(pool)}
    return out


def cache(args) -> None:
    """Read the three sets (pages with text nodes, as `edrew train` keeps them), draw the splits."""
    from edrew_scrapy.data.mix import dataset_of, load_mixed
    from edrew_scrapy.data.splits import by_domain
    from edrew_scrapy.training.evaluate import reference_text

    t0 = time.monotonic()
    loaded_all = load_mixed(_specs(args.shared, args.mozilla_labels), progress=False)
    labelled = [lp for lp in loaded_all if lp.page.nodes]
    loaded = time.monotonic() - t0
    data = {"pages": [lp.page for lp in labelled], "references": [reference_text(lp) for lp in labelled],
            "labels": [list(lp.labels) for lp in labelled], "datasets": [dataset_of(lp) for lp in labelled],
            "ids": [str(lp.page_id) for lp in labelled], "groups": [by_domain(lp) for lp in labelled],
            "types": [lp.page_type_or_site for lp in labelled],
            "splits": make_splits(labelled, [lp for lp in loaded_all if dataset_of(lp) == "wcxb-dev"])}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "cache.pkl").write_bytes(pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL))
    subprocess.run(["xz", "-T2", "-6", "-f", str(out / "cache.pkl")], check=True)  # what travels to a GPU
    summary = {name: {k: (len(v) if isinstance(v, list) else v) for k, v in split.items()}
               for name, split in data["splits"].items()}
    (out / "splits.json").write_text(json.dumps(summary, indent=1) + "\n")
    print(json.dumps(summary, indent=1))
    print(f"{len(labelled)} pages, loaded in {loaded:.0f} s")


def encode(args) -> None:
    """Every cached page through models/default's frozen biLM once (head_training.encode_pages, on --device),
    as `edrew train --bilm default --features 16` encodes its pages: the tables every head trains on."""
    import torch

    from edrew_scrapy.model import files
    from edrew_scrapy.model.scorer import build_bilm, check_bilm_weights
    from edrew_scrapy.training.head_training import Encoded, encode_pages

    torch.set_num_threads(args.threads)
    t0 = time.monotonic()
    data = _load(Path(args.cache))
    # train.reuse_bilm without the JSON schema checks (jsonschema is not on every GPU machine): the options file
    # of this repository's own model, its weights still checked against it
    folder = Path(args.bilm)
    options = json.loads((folder / files.OPTIONS).read_text(encoding="utf-8"))
    check_bilm_weights(options, folder / files.OPTIONS, folder / files.WEIGHTS)
    bilm = build_bilm(options, folder / files.OPTIONS)
    files.read_elmo_weights(folder / files.WEIGHTS, bilm)
    enc = encode_pages(bilm.to(args.device), data["pages"], data["labels"], progress=False, n_features=args.features,
                       known=[None] * len(data["pages"]))
    enc = Encoded(enc.sequence_index, enc.sequence_table.cpu(), enc.word_index, enc.word_table.cpu(), enc.pages)
    for p in enc.pages:
        del p["groups"]  # tree_levels 0: the head never reads them (train_one puts back the -1 placeholder)
    Path(args.out).write_bytes(pickle.dumps(enc, protocol=pickle.HIGHEST_PROTOCOL))
    print(f"encoded {len(enc.sequence_index)} reTPS, {len(enc.word_index)} words on {args.device} in "
          f"{time.monotonic() - t0:.0f} s", flush=True)


def _load(path: Path) -> dict:
    # our own cache, written by `cache` above on this project's machines (never a model file)
    with lzma.open(path / "cache.pkl.xz", "rb") as f:
        return pickle.load(f)


def _load_encoded(path: Path):
    return pickle.loads(Path(path).read_bytes())  # written by `encode` just before, on the same machine


_PATCHED: list = []


def _node_memo(test):
    """`test`, a pure function of one node, remembered by the node's identity (the cached pages live as long as
    the process)."""
    seen = {}

    def memo(node):
        key = id(node)
        if key not in seen:
            seen[key] = test(node)
        return seen[key]
    return memo


def rule_modules() -> list:
    """The rules package and its modules (imported with it)."""
    return [m for k, m in list(sys.modules.items()) if k == "edrew_scrapy.rules" or k.startswith("edrew_scrapy.rules.")]


def _patch_rules(name: str, fn) -> None:
    """`fn` for `name` in every module of the rules package that calls it (each holds its own name for it)."""
    for module in rule_modules():
        if hasattr(module, name):
            setattr(module, name, fn)


def validation_scorer(pages, references, region_share):
    """`probs -> page word-F1s at threshold t` equal to thresholds.page_word_f1s(probs, pages, references, t,
    region_share), but faster, for the head's per-epoch validation (19 thresholds on ~160 pages, where the
    decision rules cost most of a head's training here):

    - for one page and one set of scores, relevant_mask at t is _decide at min(t, PAGE_BEST_SHARE x the best
      unsettled score), and _decide reads the scores only through which of them reach that threshold (and
      the fixed scores themselves): the kept sets are nested, so their size names them, and each distinct one
      is decided and scored once;
    - the rules' per-node tests (settled, count_words) are pure functions of the node or its text and are
      remembered (the article rules read each page's facts once themselves: rules.facts._Facts).
    `check_validation` compares it with page_word_f1s."""
    import functools

    import numpy as np

    from edrew_scrapy import rules
    from edrew_scrapy.data.align import word_f1

    if not _PATCHED:
        _patch_rules("settled", _node_memo(rules.settled))
        _patch_rules("count_words", functools.lru_cache(maxsize=None)(rules.nodes.count_words))
        _PATCHED.append(True)
    state = {"probs": None}

    def scores(probs, t):
        if state["probs"] is not probs:  # a new epoch's scores: forget the old decisions
            state.update(probs=probs, done=[{} for _ in pages],
                         best=[rules.decision._best_unsettled(page.nodes, p) for page, p in zip(pages, probs)])
        out = []
        for k, (p, page, ref) in enumerate(zip(probs, pages, references)):
            best = state["best"][k]
            eff = min(t, rules.PAGE_BEST_SHARE * best) if best > 0.0 else t
            key = sum(1 for s in p if s >= eff)
            done = state["done"][k]
            if key not in done:
                mask = rules.relevant_mask(page, p, t, region_share)
                done[key] = word_f1("\n".join(n.content for n, m in zip(page.nodes, mask) if m), ref)[2]
            out.append(done[key])
        return np.asarray(out, dtype=float)
    return scores


def check_validation(args) -> None:
    """validation_scorer against thresholds.page_word_f1s on one split's validation pages, models/default's
    scores and random ones: every page, every grid threshold, exactly equal."""
    import numpy as np

    from edrew_scrapy.extract import score_pages
    from edrew_scrapy.model.scorer import load_model
    from edrew_scrapy.rules import MAIN_REGION_SHARE
    from edrew_scrapy.training.thresholds import THRESHOLDS, page_word_f1s

    data = _load(Path(args.cache))
    val = data["splits"][args.split]["val"][: args.pages]
    pages, refs = [data["pages"][i] for i in val], [data["references"][i] for i in val]
    scorer = load_model(args.bilm)
    real = [np.asarray(score_pages(scorer, [p])[0]) for p in pages]
    rng = np.random.default_rng(1)
    noise = [rng.random(len(p.nodes)).astype(np.float32) for p in pages]
    plain = {(n, t): page_word_f1s(probs, pages, refs, t, MAIN_REGION_SHARE)
             for n, probs in (("real", real), ("random", noise)) for t in THRESHOLDS}
    fast = validation_scorer(pages, refs, MAIN_REGION_SHARE)
    t0 = time.monotonic()
    for n, probs in (("real", real), ("random", noise)):
        for t in THRESHOLDS:
            got = fast(probs, t)
            if not np.array_equal(got, plain[(n, t)]):
                sys.exit(f"differs: {n} scores at {t}: {np.abs(got - plain[(n, t)]).max()}")
    print(f"{len(pages)} pages x {len(THRESHOLDS)} thresholds x 2 score sets: equal "
          f"({time.monotonic() - t0:.1f} s fast)")


def train_one(data: dict, name: str, out: Path, device: str, epochs: int = EPOCHS, n_features: int = FEATURES,
              seed: int = SEED) -> None:
    """One head on split `name`, as training.train.train trains it, reading the first `n_features` of the
    encoding's features (`seed`: the head's initialisation, dropout and shuffles; the splits stay seed 1's);
    the head's weights and curves to OUT/name."""
    import torch

    from edrew_scrapy.model import files
    from edrew_scrapy.model.features import MAX_TREE_LEVELS
    from edrew_scrapy.model.head import Head, head_config
    from edrew_scrapy.rules import MAIN_REGION_SHARE
    from edrew_scrapy.training.head_training import to_device, train_head
    from edrew_scrapy.training.thresholds import choose_threshold
    from edrew_scrapy.training.train import seed_everything

    torch.set_num_threads(1)
    split = data["splits"][name]
    enc = data["enc"]  # train() put it there
    if enc.pages and enc.pages[0]["feats"].shape[1] < n_features:
        raise SystemExit(f"the encoding holds {enc.pages[0]['feats'].shape[1]} features, not {n_features}")
    for p in enc.pages:
        p["groups"] = torch.full((MAX_TREE_LEVELS, len(p["y"])), -1, dtype=torch.long)
        p["feats"] = p["feats"][:, :n_features]
    pages, refs = data["pages"], data["references"]
    val = split["val"]
    val_pages, val_refs = [pages[i] for i in val], [refs[i] for i in val]

    scores = validation_scorer(val_pages, val_refs, MAIN_REGION_SHARE)
    target = out / name
    target.mkdir(parents=True, exist_ok=True)
    sys.stderr = open(out / f"{name}.log", "w", buffering=1)  # train_head's epoch lines, one file per head
    best = {"score": -1.0, "epoch": 0}

    def validate(probs):  # as training.train.train validates: the mean page word-F1 at the best threshold
        score = choose_threshold(lambda t: float(scores(probs, t).mean()) if len(val) else 0.0)[1]
        best["epoch"] += 1
        if score > best["score"]:  # train_head keeps this epoch too; saved now in case the run is cut short
            best["score"] = score
            files.write_head(target / "partial.safetensors", {k: v.cpu() for k, v in head.state_dict().items()})
            (target / "partial.json").write_text(json.dumps({"best_epoch": best["epoch"], "score": score}) + "\n")
        return score

    t0 = time.monotonic()
    seed_everything(seed)
    bilm_dim, layers, token_dim = 64, 3, 32
    head = Head(head_config("d", bilm_dim, layers, token_dim, n_features=n_features)).to(device)
    enc = to_device(enc, torch.device(device))
    _, curves, run = train_head(head, enc, split["train"], val, validate, epochs=epochs, minutes=600, seed=seed,
                                progress=False)
    files.write_head(target / files.HEAD, head.cpu().state_dict())
    (target / "run.json").write_text(json.dumps({
        "split": name, "run": run, "device": device, "seed": seed, "seconds": round(time.monotonic() - t0, 1),
        "train": len(split["train"]), "val": len(val), "test": len(split["test"]),
        "val_score": curves["val_score"].values, "train_loss": curves["train_loss"].values,
        "config": head.config}, indent=1) + "\n")
    print(f"{name}: best epoch {run['best_epoch']} of {run['epochs_run']}, {time.monotonic() - t0:.0f} s", flush=True)


def train(args) -> None:
    """Each split's head in its own process (they share nothing but the cache file)."""
    import multiprocessing as mp

    names = args.splits.split(",")
    data = _load(Path(args.cache))
    data["enc"] = _load_encoded(Path(args.encoded))
    out = Path(args.out)
    ctx = mp.get_context("fork")  # the children read `data` without copying it
    procs = [ctx.Process(target=train_one, args=(data, n, out, args.device, args.epochs, args.features, args.seed))
             for n in names]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    bad = [n for n, p in zip(names, procs) if p.exitcode]
    if bad:
        sys.exit(f"failed: {', '.join(bad)}")


def finish(args) -> None:
    """A model folder per trained head: models/default's biLM, the head, the threshold chosen on the split's
    validation pages on extract()'s scores as train._choose_on_shipped_path chooses it (the one-SE rule nearest
    0.5, region share 0.7; the page scores through validation_scorer, equal to page_word_f1s), and a card. A
    head whose run was cut short (no head.safetensors) is its best epoch so far (partial.safetensors), the
    epochs it ran counted from its log."""
    import numpy as np
    import torch

    from edrew_scrapy.model import files
    from edrew_scrapy.model.head import Head, head_config
    from edrew_scrapy.model.scorer import save_model
    from edrew_scrapy.rules import MAIN_REGION_SHARE
    from edrew_scrapy.training.thresholds import choose_threshold_within_noise, node_prf
    from edrew_scrapy.training.train import reuse_bilm, shipped_probs

    torch.set_num_threads(1)
    data = _load(Path(args.cache))
    options, bilm, pre = reuse_bilm(Path(args.bilm))
    pages, refs, labels = data["pages"], data["references"], data["labels"]
    heads = Path(args.heads)
    only = set(args.splits.split(",")) if args.splits else None
    for head_dir in sorted(p for p in heads.iterdir() if p.is_dir() and (only is None or p.name in only)):
        name = head_dir.name
        if (head_dir / files.HEAD).is_file():
            info = json.loads((head_dir / "run.json").read_text())
            state, run, config, seconds = files.read_head(head_dir / files.HEAD), info["run"], info["config"], \
                info["seconds"]
            seed = info.get("seed", SEED)
        elif (head_dir / "partial.safetensors").is_file():
            partial = json.loads((head_dir / "partial.json").read_text())
            ran = (heads / f"{name}.log").read_text().count("  epoch ")
            run = {"epochs_run": ran, "best_epoch": partial["best_epoch"], "best_epoch_whole": True,
                   "stopped_by": "minutes (the GPU run's time limit)"}
            state, config, seconds = files.read_head(head_dir / "partial.safetensors"), \
                head_config("d", 64, 3, 32, n_features=args.features), None
            seed = SEED
        else:
            continue
        split = data["splits"][name]
        head = Head(config)
        head.load_state_dict(state)
        head.eval()
        counts = {side: {n: sum(data["datasets"][i] == n for i in split[side]) for n in DATASETS}
                  for side in ("train", "val", "test")}
        card = {"name": name, "variant": "d", "threshold": 0.5, "threshold_metric": "word",
                "region_share": MAIN_REGION_SHARE,
                "training": {"dataset": " + ".join(n for n in DATASETS if counts["train"][n]),
                             "split": name, "pages_per_side": counts, "seed": seed, "device": args.device,
                             "pretrain": pre, "head_epochs": run, "head_seconds": seconds,
                             "command": "python experiments/honest_metric.py train/finish (models/default's recipe)"},
                "metrics": {}}
        target = Path(args.out) / name
        save_model(target, options, bilm, head, card)
        val = split["val"]
        val_pages, val_refs = [pages[i] for i in val], [refs[i] for i in val]
        probs = shipped_probs(target, val_pages)
        scores = validation_scorer(val_pages, val_refs, MAIN_REGION_SHARE)
        threshold, word = choose_threshold_within_noise(lambda t, scores=scores, probs=probs: scores(probs, t))
        p, r, f = node_prf(probs, [labels[i] for i in val], threshold)
        metrics = {"validation": {"pages": len(val), "node_precision": round(p, 4), "node_recall": round(r, 4),
                                  "node_f1": round(f, 4), "word_f1": round(float(np.round(word, 4)), 4)}}
        files.write_card(target, dict(card, threshold=threshold, metrics=metrics, head=head.config))
        print(f"{name}: threshold {threshold}, validation {metrics['validation']['word_f1']}, "
              f"best epoch {run['best_epoch']} of {run['epochs_run']}", flush=True)


def folds(args) -> None:
    """Each WCXB test fold as a WCXB-format folder of links (html/, ground-truth/), for edrew evaluate."""
    data = _load(Path(args.cache))
    src = Path(args.shared) / "wcxb-dev"
    for name, split in data["splits"].items():
        if not name.startswith("cv"):
            continue
        dest = Path(args.out) / name
        for sub in ("html", "ground-truth"):
            (dest / sub).mkdir(parents=True, exist_ok=True)
        for pid in split["test_ids"]:
            for sub, suffix in (("html", ".html.gz"), ("ground-truth", ".json")):
                link = dest / sub / f"{pid}{suffix}"
                if not link.exists():
                    link.symlink_to(src / sub / f"{pid}{suffix}")
        print(f"{name}: {len(split['test_ids'])} pages in {dest}")


def report(args) -> None:
    """A markdown table per `edrew evaluate` run and group: each extractor's word P / R / F1, and the model
    (`edrew`) minus it, paired on the same pages (paired.json: mean, standard error, pages up / down)."""
    for run in args.runs.split(","):
        summary = json.loads((Path(run) / "summary.json").read_text())["summary"]
        paired = json.loads((Path(run) / "paired.json").read_text())
        groups = [g for g in dict.fromkeys(r["group"] for r in summary) if args.types or "/" not in g]
        for group in groups:
            if group == "ALL" and len(groups) > 1:
                continue
            print(f"\n{run}, {group}\n")
            print("| extractor | pages | word-F1 | P | R | edrew minus it (SE; pages up / down) |")
            print("|---|---|---|---|---|---|")
            for r in (r for r in summary if r["group"] == group):
                d = next((x for x in paired if x["group"] == group and x["base"] == r["extractor"]
                          and x["other"] == "edrew"), None)
                diff = f"{d['mean']:+.3f} ({d['se']:.3f}; {d['up']} / {d['down']})" if d else ""
                print(f"| {r['extractor']} | {r['pages']} | {r['word_f1']:.3f} | {r['word_p']:.3f} | "
                      f"{r['word_r']:.3f} | {diff} |")


def pool(args) -> None:
    """The runs' pages.csv as one set (the five WCXB test folds: every page once, each scored by the head that
    never saw its domain): per extractor and page type the mean word P / R / F1, and `edrew` minus it, paired
    on the same pages (standard error of the per-page differences; pages up / down), of word F1 or of
    `--metric` p or r."""
    import csv
    import math

    by = {}
    for run in args.runs.split(","):
        with open(Path(run) / "pages.csv", encoding="utf-8") as f:
            for r in csv.DictReader(f):
                by.setdefault(r["extractor"], {})[(run, r["page_id"])] = r
    ours = by["edrew"]
    groups = ["all"] + sorted({r["group"] for r in ours.values()})
    print("| type | extractor | pages | word-F1 | P | R | edrew minus it (SE; pages up / down) |")
    print("|---|---|---|---|---|---|---|")
    for group in groups:
        keys = [k for k, r in ours.items() if group == "all" or r["group"] == group]
        for name, rows in by.items():
            vals = {m: [float(rows[k][f"word_{m}"]) for k in keys] for m in ("p", "r", "f1")}
            n = len(keys)
            line = f"| {group} | {name} | {n} | " + " | ".join(f"{sum(vals[m]) / n:.3f}" for m in ("f1", "p", "r"))
            if name != "edrew":
                d = [float(ours[k][f"word_{args.metric}"]) - float(rows[k][f"word_{args.metric}"]) for k in keys]
                mean = sum(d) / n
                se = math.sqrt(sum((x - mean) ** 2 for x in d) / (n - 1) / n) if n > 1 else 0.0
                line += (f" | {mean:+.3f} ({se:.3f}; {sum(x > 1e-9 for x in d)} / {sum(x < -1e-9 for x in d)})")
            else:
                line += " | "
            print(line + " |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("cache")
    c.add_argument("--out", required=True)
    c.add_argument("--shared", default="../shared/datasets")
    c.add_argument("--mozilla-labels", required=True)
    c.add_argument("--bilm", default="models/default")
    e = sub.add_parser("encode")
    e.add_argument("--cache", required=True)
    e.add_argument("--out", required=True)
    e.add_argument("--bilm", default="models/default")
    e.add_argument("--device", default="cpu")
    e.add_argument("--threads", type=int, default=1)
    e.add_argument("--features", type=int, default=FEATURES, help="features encoded per node (the recipe's 16; "
                   "26 with the container features)")
    t = sub.add_parser("train")
    t.add_argument("--cache", required=True)
    t.add_argument("--encoded", required=True, help="the file `encode` wrote")
    t.add_argument("--splits", required=True)
    t.add_argument("--out", required=True)
    t.add_argument("--device", default="cpu")
    t.add_argument("--epochs", type=int, default=EPOCHS, help="the recipe's 30; fewer only to try the script")
    t.add_argument("--features", type=int, default=FEATURES, help="the head reads the encoding's first N")
    t.add_argument("--seed", type=int, default=SEED, help="the head's training seed (a second training: 2)")
    f = sub.add_parser("finish")
    f.add_argument("--cache", required=True)
    f.add_argument("--heads", required=True)
    f.add_argument("--out", required=True)
    f.add_argument("--bilm", default="models/default")
    f.add_argument("--device", default="cuda", help="where the heads were trained, for the cards")
    f.add_argument("--features", type=int, default=FEATURES, help="a head cut short (partial) reads the first N")
    f.add_argument("--splits", default="", help="only these heads (comma-separated; default: every one)")
    v = sub.add_parser("check-validation")
    v.add_argument("--cache", required=True)
    v.add_argument("--split", default="cv1")
    v.add_argument("--pages", type=int, default=40)
    v.add_argument("--bilm", default="models/default")
    r = sub.add_parser("report")
    r.add_argument("--runs", required=True, help="edrew evaluate --out folders, comma-separated")
    r.add_argument("--types", action="store_true", help="also each dataset's page types")
    o = sub.add_parser("pool")
    o.add_argument("--runs", required=True, help="edrew evaluate --out folders whose pages are one set")
    o.add_argument("--metric", choices=("f1", "p", "r"), default="f1", help="the paired difference of word ...")
    n = sub.add_parser("add-news-split")
    n.add_argument("--cache", required=True)
    n.add_argument("--out", required=True)
    d = sub.add_parser("folds")
    d.add_argument("--cache", required=True)
    d.add_argument("--shared", default="../shared/datasets")
    d.add_argument("--out", required=True)
    args = ap.parse_args()
    commands = {"cache": cache, "encode": encode, "train": train, "finish": finish, "folds": folds,
                "check-validation": check_validation, "report": report,
                "pool": pool, "add-news-split": add_news_split}
    commands[args.cmd](args)


if __name__ == "__main__":
    main()
