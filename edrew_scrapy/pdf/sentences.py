"""Split a paragraph of an article into sentences, by rules written for scientific prose.

A sentence ends at '.', '!', '?' or '…' (closing quotes and brackets kept with it) followed by white
space and a word that can start a sentence (a footnote mark after the stop, "end.2 Next", kept with it),
except after:
- an abbreviation of the ABBREVIATIONS list ("e.g.", "Fig.", "Eq.", "et al." before a citation, "vs.");
- a single capital letter (an initial: "J. R. Smith");
- a dotted acronym ("U.S. Army"; one at a sentence's end is not split off);
- a number followed by another number or a bracket; decimals ("3.5") have no space and never break;
- and never before a word in lower case. "et al." and "etc." end a sentence only before a capitalised
  word (not before "[12]", "(2019)" or a number).

Written here, not taken from a package: the rule-based splitter tried breaks at a paper's citations and
its equation and figure references (docs/pdf.md). The rules stay in this one module so that they can be
read and tested together.
"""
from __future__ import annotations

import re
from typing import List

# Lower-cased, without the final '.'; abbreviations that never end a sentence when a word follows.
ABBREVIATIONS = frozenset("""
e.g i.e cf vs viz approx ca resp incl excl fig figs eq eqs eqn eqns sec sect secs tab tabs ref refs
no nos vol vols pp p ch chap def thm lem prop alg algs app appx dr prof mr mrs st jr sr inc ltd co corp
jan feb mar apr jun jul aug sep sept oct nov dec univ dept esp wrt w.r.t e.t.c ed eds op cit ibid
""".split())
# Candidate ends: the punctuation, closing quotes/brackets, then the white space before the next word.
# A footnote mark set after a word's full stop ("input.2 The") stays with its sentence, which ends there.
_END = re.compile(r"[.!?…]+[\"'”’)\]]*(?:(?<=[a-z][.!?])\d{1,2})?(?=\s+)")
_WORD_BEFORE = re.compile(r"(\S+)$")


def split_sentences(text: str) -> List[str]:
    """The sentences of `text`, white space collapsed; every character but white space is kept."""
    text = " ".join(text.split())
    sentences: List[str] = []
    start = 0
    for match in _END.finditer(text):
        end = match.end()
        if _is_boundary(text, start, match.start(), end):
            sentence = text[start:end].strip()
            if sentence:
                sentences.append(sentence)
            start = end
    rest = text[start:].strip()
    if rest:
        sentences.append(rest)
    return sentences


def _is_boundary(text: str, start: int, punct: int, end: int) -> bool:
    following = text[end:].lstrip()
    if not following:
        return True
    first = following[0]
    mark = text[punct]
    word_match = _WORD_BEFORE.search(text[start:punct])
    word = word_match.group(1) if word_match else ""
    bare = word.strip("()[]{}\"'“”‘’").lower()
    if mark != ".":
        # "!" and "?" end a sentence unless the next word goes on in lower case ("(why?) then")
        return not first.islower()
    if first.islower() or first in ".,;:":
        return False  # the sentence goes on, or an ellipsis ". . ." sits inside it
    if len(bare) == 1 and bare.isalpha() and word[-1:].isupper():
        return False  # an initial: "J. Smith"
    abbreviation = bare in ABBREVIATIONS or (bare.endswith(".") and bare.rstrip(".") in ABBREVIATIONS)
    if bare in ("al", "etc") or text[max(start, punct - 6):punct].lower().endswith("et al"):
        # "et al." and "etc." end a sentence before a capitalised word, not before a citation or number
        return first.isupper() and not following.startswith(("[", "("))
    if abbreviation or ("." in bare and bare.replace(".", "").isalpha()):
        # "e.g", "i.e", and dotted acronyms ("U.S."): read as inside the sentence
        return False
    if bare.isdigit() and (first.isdigit() or first in "(["):
        return False  # "pages 3. 4" in a list of numbers
    return first.isupper() or first.isdigit() or first in "\"'“‘([" or not first.isalnum()
