"""Does a model read the demo article in other languages as it reads the English one?

WCXB, which the shipped default model was trained on, is English. `tests/fixtures/translated` holds
tables that translate the demo's council article by hand into eight languages with the markup unchanged
(`tests/_translated.py` builds the pages), so a model that reads structure and text alike should keep
the same nodes of every version.

    python experiments/translated_pages.py [--model default] [--model /tmp/runs/other]

Prints, per language and model, the nodes kept, how many of them the English page also keeps (by
XPath), the English page's nodes missing, the scores of the shared nodes and the start of each extra
node's text. `tests/test_words.py` asserts the same for the shipped default model.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from _translated import ENGLISH, LANGUAGES, translated_html  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", action="append", default=None,
                    help="model folder, or 'default' (the shipped one); repeat to compare (default: default)")
    args = ap.parse_args(argv)

    import torch

    from edrew_scrapy.extract import extract
    from edrew_scrapy.model.files import ModelError
    from edrew_scrapy.model.scorer import load_model

    torch.set_num_threads(1)
    pages = [("en", ENGLISH.read_bytes())] + [(code, translated_html(code).encode("utf-8")) for code in LANGUAGES]
    print(f"{'model':12s} {'lang':4s} {'kept':>4s} {'as en':>5s} {'missing':>7s} {'shared scores':>13s}  extra nodes")
    for name in args.model or ["default"]:
        try:
            scorer = load_model(name)
        except ModelError as exc:
            print(f"translated_pages: {exc}", file=sys.stderr)
            return 2
        [english] = extract([ENGLISH.read_bytes()], scorer=scorer)
        reference = {n.path for n in english.nodes}
        for lang, html in pages:
            [result] = extract([html], scorer=scorer)
            shared = [n.score for n in result.nodes if n.path in reference]
            extra = [n.content[:16] for n in result.nodes if n.path not in reference]
            missing = len(reference - {n.path for n in result.nodes})
            scores = f"{min(shared):.2f}-{max(shared):.2f}" if shared else "-"
            print(f"{Path(name).name[:12]:12s} {lang:4s} {len(result.nodes):4d} {len(shared):5d} {missing:7d} "
                  f"{scores:>13s}  {' | '.join(extra)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
