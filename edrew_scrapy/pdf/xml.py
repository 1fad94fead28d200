"""An Article -> one UTF-8 XML document that validates against the shipped RELAX NG schema.

`article > front (title, authors, abstract) > body > section(@number, @title, @level) > blocks and
subsections`, `back > references > reference` (article.rng beside this module; docs/pdf.md).
"""
from __future__ import annotations

import xml.etree.ElementTree as ET
from importlib import resources
from pathlib import Path
from typing import Optional

from .article import Article, Block, Section
from .layout import clean

SCHEMA_NAME = "article.rng"


def schema_path() -> Path:
    """The RELAX NG schema shipped in the package."""
    return Path(str(resources.files(__package__).joinpath(SCHEMA_NAME)))


def to_xml(article: Article, source: Optional[str] = None) -> bytes:
    """The article as XML bytes (UTF-8, with an XML declaration)."""
    root = ET.Element("article")
    if source:
        root.set("source", clean(source))
    root.set("pages", str(article.pages))
    if article.year is not None:
        root.set("year", f"{article.year:04d}")
    front = ET.SubElement(root, "front")
    if article.title:
        ET.SubElement(front, "title").text = clean(article.title)
    authors = ET.SubElement(front, "authors")
    for name in article.authors:
        ET.SubElement(authors, "author").text = clean(name)
    paragraphs = [b for b in article.abstract if b.kind == "paragraph" and _sentences(b)]
    if paragraphs:
        abstract = ET.SubElement(front, "abstract")
        for block in paragraphs:
            _block(abstract, block)
    body = ET.SubElement(root, "body")
    for block in article.preamble:
        _block(body, block)
    for section in article.sections:
        _section(body, section)
    references = ET.SubElement(ET.SubElement(root, "back"), "references")
    for entry in article.references:
        ET.SubElement(references, "reference").text = clean(entry)
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"


def _section(parent: ET.Element, section: Section) -> None:
    element = ET.SubElement(parent, "section")
    if section.number:
        element.set("number", clean(section.number))
    element.set("title", clean(section.title))
    element.set("level", str(min(max(section.level, 1), 3)))
    for block in section.blocks:
        _block(element, block)
    for child in section.sections:
        _section(element, child)


def _sentences(block: Block):
    return [s for s in (clean(s) for s in block.sentences) if s]


def _block(parent: ET.Element, block: Block) -> None:
    if block.kind == "paragraph":
        sentences = _sentences(block)
        if sentences:
            paragraph = ET.SubElement(parent, "paragraph")
            for sentence in sentences:
                ET.SubElement(paragraph, "sentence").text = sentence
    elif block.kind == "list":
        items = [i for i in (clean(i) for i in block.items) if i]
        if items:
            element = ET.SubElement(parent, "list")
            for item in items:
                ET.SubElement(element, "item").text = item
    else:
        ET.SubElement(parent, block.kind).text = clean(block.text)
