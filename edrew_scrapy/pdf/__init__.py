"""Technical articles in PDF: layout (pdfminer.six), structure, sentences and XML; no Scrapy here.

    from edrew_scrapy.pdf import parse_pdf, to_xml
    article = parse_pdf(open("paper.pdf", "rb").read())   # raises PdfError(reason) for no usable text
    xml_bytes = to_xml(article)                            # validates against schema_path()
"""
from .article import Article, Block, Section
from .layout import PdfError, is_pdf
from .sentences import split_sentences
from .structure import parse_pdf
from .xml import schema_path, to_xml

__all__ = ["Article", "Block", "PdfError", "Section", "is_pdf", "parse_pdf", "schema_path", "split_sentences",
           "to_xml"]
