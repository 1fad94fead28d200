"""The PDF articles demo site: a listing page on 127.0.0.1 linking small article PDFs (made at start-up
with fpdf2, none committed), an HTML page, an image, a moved PDF (301), a missing one (404) and HTML
served as application/pdf.

    python demo/articles/serve.py [PORT]     # prints "serving on http://127.0.0.1:PORT/" (PORT 0: any free one)

`bash scripts/pdf-demo.sh` starts it and crawls it with `scrapy crawl articles`.
"""
from __future__ import annotations

import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from fpdf import FPDF

ARTICLES = {
    "layout.pdf": ("Reading Order in Technical Articles", ["Ada Keller", "Ben Okafor"]),
    "sentences.pdf": ("Sentence Boundaries in Scientific Prose", ["Carla Mendes"]),
    "tables.pdf": ("Finding Captions and Footnotes in Technical Reports", ["Dan Park", "Eva Lindqvist"]),
}
PARAGRAPH = ("This article was generated for the demo. Its structure is known: a title, authors, an abstract "
             "and numbered sections. Smith et al. [2] describe e.g. the layout of such pages, and Fig. 1 shows "
             "one of them. The parser keeps 97.5 percent of the sentences intact. ")


def article_pdf(title: str, authors) -> bytes:
    """A small article: title, authors, abstract, three numbered sections, references."""
    pdf = FPDF(format="A4")
    pdf.set_auto_page_break(True, margin=20)
    pdf.add_page()
    pdf.set_font("Helvetica", "B", 16)
    pdf.multi_cell(0, 8, title, align="C", new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("Helvetica", "", 11)
    pdf.multi_cell(0, 6, ", ".join(authors), align="C", new_x="LMARGIN", new_y="NEXT")
    pdf.ln(4)
    pdf.set_font("Helvetica", "B", 10)
    pdf.cell(0, 5, "Abstract", new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("Helvetica", "", 10)
    pdf.multi_cell(0, 4.6, PARAGRAPH, new_x="LMARGIN", new_y="NEXT")
    for number, heading in enumerate(["Introduction", "Method", "Results"], 1):
        pdf.ln(3)
        pdf.set_font("Helvetica", "B", 12)
        pdf.cell(0, 6, f"{number} {heading}", new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("Helvetica", "", 10)
        for _ in range(2):
            pdf.multi_cell(0, 4.6, PARAGRAPH * 2, new_x="LMARGIN", new_y="NEXT")
            pdf.ln(1.5)
    pdf.set_font("Helvetica", "B", 12)
    pdf.cell(0, 6, "References", new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("Helvetica", "", 9)
    for n in range(1, 4):
        pdf.multi_cell(0, 4.2, f"[{n}] A. Author and B. Author. A paper on documents. Journal {n}, 2019.",
                       new_x="LMARGIN", new_y="NEXT")
    return bytes(pdf.output())


LISTING = "<html><head><title>Demo papers</title></head><body><h1>Papers</h1><ul>\n" + "\n".join(
    f'<li><a href="/papers/{name}">{title}</a></li>' for name, (title, _) in ARTICLES.items()) + """
<li><a href="/old/moved.pdf">A paper that moved (301)</a></li>
<li><a href="/about.html">About this list (HTML)</a></li>
<li><a href="/logo.png">Logo (an image)</a></li>
<li><a href="/served-as.pdf">HTML served as application/pdf</a></li>
<li><a href="/gone.pdf">A paper that is gone (404)</a></li>
</ul></body></html>"""
PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082")


def routes() -> dict:
    """path -> (status, headers, body)."""
    out = {"/": (200, {"Content-Type": "text/html"}, LISTING.encode()),
           "/index.html": (200, {"Content-Type": "text/html"}, LISTING.encode()),
           "/about.html": (200, {"Content-Type": "text/html"}, b"<html><body><p>A demo list.</p></body></html>"),
           "/logo.png": (200, {"Content-Type": "image/png"}, PNG),
           "/served-as.pdf": (200, {"Content-Type": "application/pdf"}, b"<html><body>Not a PDF</body></html>"),
           "/old/moved.pdf": (301, {"Location": "/papers/moved.pdf"}, b""),
           "/robots.txt": (200, {"Content-Type": "text/plain"}, b"User-agent: *\nAllow: /\n")}
    for name, (title, authors) in ARTICLES.items():
        out[f"/papers/{name}"] = (200, {"Content-Type": "application/pdf"}, article_pdf(title, authors))
    out["/papers/moved.pdf"] = (200, {"Content-Type": "application/pdf"},
                                article_pdf("A Paper That Moved to a New Address", ["Finn Berg"]))
    return out


class Handler(BaseHTTPRequestHandler):
    table: dict = {}

    def do_GET(self):  # noqa: N802 (http.server's naming)
        status, headers, body = self.table.get(self.path, (404, {"Content-Type": "text/plain"}, b"not found"))
        self.send_response(status)
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def main() -> None:
    Handler.table = routes()
    server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1]) if len(sys.argv) > 1 else 0), Handler)
    print(f"serving on http://127.0.0.1:{server.server_address[1]}/", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
