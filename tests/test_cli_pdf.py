"""`edrew pdf FILE.pdf... -o DIR`: one valid XML per PDF, one line per input that fails, exit 2 only when
every input failed."""
from __future__ import annotations

from _pdf_helpers import TITLE, article_pdf, blank_pdf
from conftest import cli
from lxml import etree

from edrew_scrapy.pdf import schema_path


def test_one_xml_per_pdf_and_one_line_per_failure(tmp_path, capsys):
    inputs = tmp_path / "in"
    (inputs / "b").mkdir(parents=True)
    (inputs / "paper.pdf").write_bytes(article_pdf(1))
    (inputs / "b" / "paper.pdf").write_bytes(article_pdf(2))  # the same name: paper-2.xml
    (inputs / "page.pdf").write_bytes(b"<html>a page named .pdf</html>")
    (inputs / "locked.pdf").write_bytes(article_pdf(1, encrypt=True))
    (inputs / "scan.pdf").write_bytes(blank_pdf())
    names = ["paper.pdf", "b/paper.pdf", "page.pdf", "locked.pdf", "scan.pdf", "missing.pdf"]
    status, err = cli(capsys, "pdf", *[str(inputs / n) for n in names], "-o", str(tmp_path / "out"))
    assert status == 0
    written = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert written == ["paper-2.xml", "paper.xml"]
    schema = etree.RelaxNG(etree.parse(str(schema_path())))
    for name in written:
        root = etree.parse(str(tmp_path / "out" / name)).getroot()
        assert schema.validate(root), schema.error_log
        assert root.findtext("front/title") == TITLE and root.get("source") == "paper.pdf"
    lines = err.strip().splitlines()
    assert len(lines) == 5  # four failures, one summary
    for name, reason in [("page.pdf", "not-pdf"), ("locked.pdf", "encrypted"), ("scan.pdf", "no-text"),
                         ("missing.pdf", "unreadable")]:
        assert any(line.startswith(f"edrew pdf: {inputs / name}: skipped ({reason})") for line in lines), name
    assert lines[-1] == (f"edrew pdf: 2 written to {tmp_path / 'out'}, 4 skipped "
                         "(1 encrypted, 1 no-text, 1 not-pdf, 1 unreadable)")
    assert "Traceback" not in err


def test_exit_2_when_every_input_fails(tmp_path, capsys):
    bad = tmp_path / "bad.pdf"
    bad.write_bytes(article_pdf(1)[:1500])
    status, err = cli(capsys, "pdf", str(bad), "-o", str(tmp_path / "out"))
    assert status == 2
    assert f"edrew pdf: {bad}: skipped (broken)" in err
    assert list((tmp_path / "out").iterdir()) == []
