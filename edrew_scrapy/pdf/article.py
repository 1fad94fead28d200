"""The structure of an article as plain data: what `structure.parse_pdf` returns and the XML, JSON and
CSV outputs are written from."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional

# The kinds of block a section holds, in the XML element names.
BLOCK_KINDS = ("paragraph", "list", "footnote", "caption", "equation")


@dataclass
class Block:
    kind: str  # one of BLOCK_KINDS
    text: str = ""  # the block's text (a list: its items joined by newlines)
    sentences: List[str] = field(default_factory=list)  # paragraphs only
    items: List[str] = field(default_factory=list)  # lists only

    def to_dict(self) -> dict:
        out: dict = {"kind": self.kind, "text": self.text}
        if self.kind == "paragraph":
            out["sentences"] = list(self.sentences)
        if self.kind == "list":
            out["items"] = list(self.items)
        return out


@dataclass
class Section:
    title: str
    level: int  # 1 to 3
    number: Optional[str] = None  # "2.1", "IV", or None for an unnumbered heading
    blocks: List[Block] = field(default_factory=list)
    sections: List["Section"] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"number": self.number, "title": self.title, "level": self.level,
                "blocks": [b.to_dict() for b in self.blocks], "sections": [s.to_dict() for s in self.sections]}

    def walk(self):
        """This section and every section below it, depth first."""
        yield self
        for section in self.sections:
            yield from section.walk()


@dataclass
class Article:
    title: Optional[str] = None
    authors: List[str] = field(default_factory=list)
    year: Optional[int] = None
    abstract: List[Block] = field(default_factory=list)  # paragraphs
    preamble: List[Block] = field(default_factory=list)  # body text before the first heading
    sections: List[Section] = field(default_factory=list)
    references: List[str] = field(default_factory=list)
    pages: int = 0

    def all_sections(self) -> List[Section]:
        return [s for top in self.sections for s in top.walk()]

    def sentence_count(self) -> int:
        blocks = self.abstract + self.preamble + [b for s in self.all_sections() for b in s.blocks]
        return sum(len(b.sentences) for b in blocks)

    def to_dict(self) -> dict:
        """The nested structure that feeds and JSON carry (every value JSON-serialisable)."""
        return {"title": self.title, "authors": list(self.authors), "year": self.year, "pages": self.pages,
                "abstract": [b.to_dict() for b in self.abstract],
                "preamble": [b.to_dict() for b in self.preamble],
                "sections": [s.to_dict() for s in self.sections], "references": list(self.references)}
