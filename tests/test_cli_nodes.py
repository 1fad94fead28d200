import gzip
import json
from importlib.metadata import version

import pytest

from edrew_scrapy.cli import main

PAGE = (b'<html><body><nav><a href="/">Home</a></nav><article><p class="x">Hello <b>there</b></p></article>'
        b'</body></html>')


def test_nodes_jsonl(tmp_path, capsys):
    f = tmp_path / "p.html"
    f.write_bytes(PAGE)
    assert main(["nodes", str(f), "--format", "jsonl"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["content"] for r in rows] == ["Home", "Hello there"]
    assert rows[1]["path"] == "/html[1]/body[1]/article[1]/p[1]"
    assert rows[1]["retps"].startswith("<#CNT><#SEP>x<#SEP><#CLSS><#SEP>p|")
    assert {"bucket", "parent", "hidden", "images", "index", "tag", "input"} <= set(rows[0])


def test_nodes_table_reads_gzip_and_reports_bad_inputs(tmp_path, capsys):
    f = tmp_path / "p.html.gz"
    f.write_bytes(gzip.compress(PAGE))
    empty = tmp_path / "empty.html"
    empty.write_bytes(b"")
    assert main(["nodes", str(f), str(empty), str(tmp_path / "missing.html")]) == 1
    captured = capsys.readouterr()
    assert "Hello there" in captured.out and "skipped: empty" in captured.out
    assert "missing.html: cannot read" in captured.err
    assert "Traceback" not in captured.err


def test_nodes_jsonl_says_why_a_page_has_no_nodes(tmp_path, capsys):
    empty = tmp_path / "empty.html"
    empty.write_bytes(b"")
    assert main(["nodes", str(empty), "--format", "jsonl"]) == 0
    assert [json.loads(line) for line in capsys.readouterr().out.splitlines()] == \
        [{"input": str(empty), "skipped": "empty"}]


def test_a_timeout_that_is_no_positive_number_is_a_usage_error(capsys):
    import pytest

    for value in ("0", "-1", "inf", "nan", "soon"):
        with pytest.raises(SystemExit) as exit_info:
            main(["nodes", "x.html", "--timeout", value])
        assert exit_info.value.code == 2
    assert "--timeout" in capsys.readouterr().err


def test_a_failed_write_to_stdout_is_one_line(tmp_path, capsys, monkeypatch):
    f = tmp_path / "p.html"
    f.write_bytes(PAGE)

    class Full:
        def write(self, text):
            raise OSError(28, "No space left on device")

    monkeypatch.setattr("sys.stdout", Full())
    assert main(["nodes", str(f)]) == 1
    err = capsys.readouterr().err
    assert "edrew nodes: [Errno 28] No space left on device" in err and "Traceback" not in err


def test_extract_and_nodes_help_say_the_default_of_each_choice(capsys):
    """`edrew extract --help` named jsonl and text but not which one it writes without --format."""
    for command, expected in (("extract", ["jsonl (the default)", "numpy (the default; never imports torch)"]),
                              ("nodes", ["table (the default)"])):
        try:
            main([command, "--help"])
        except SystemExit as exc:
            assert exc.code == 0
        text = " ".join(capsys.readouterr().out.split())
        for phrase in expected:
            assert phrase in text, (command, text)


def test_version_is_the_package_version(capsys):
    """`edrew --version` (a bug report's first line) says the installed package's version."""
    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
    assert capsys.readouterr().out == f"edrew-scrapy {version('edrew-scrapy')}\n"
