"""`agenthop-server corpus build` refuses bad input with a message that names the file and the problem, and writes nothing."""

from pathlib import Path

from click.testing import CliRunner

from agenthop.server.cli import main

FIXTURES = Path(__file__).parent / "fixtures"


def test_a_bad_file_stops_the_build_naming_it(tmp_path):
    bad = tmp_path / "in" / "broken.xml"
    bad.parent.mkdir()
    bad.write_text("<TEI xmlns='http://www.tei-c.org/ns/1.0'><teiHeader>")
    out = tmp_path / "corpus.sqlite"
    result = CliRunner().invoke(main, ["corpus", "build", str(bad.parent), "--out", str(out)])
    assert result.exit_code == 1 and f"Error: {bad}: not well-formed XML" in result.output
    assert not out.exists() and list(tmp_path.iterdir()) == [bad.parent]  # no temp directory left behind


def test_labels_need_items(tmp_path):
    labels = tmp_path / "labels.jsonl"
    labels.write_text("")
    result = CliRunner().invoke(main, ["corpus", "build", str(FIXTURES / "jats"), "--out", str(tmp_path / "c.sqlite"), "--labels", str(labels)])
    assert result.exit_code == 2 and "--labels describes items: give --items too." in result.output


def test_a_folder_with_no_papers_is_refused(tmp_path):
    (tmp_path / "empty").mkdir()
    result = CliRunner().invoke(main, ["corpus", "build", str(tmp_path / "empty"), "--out", str(tmp_path / "c.sqlite")])
    assert result.exit_code == 1 and "no papers found in the inputs" in result.output


def test_the_format_flag_is_checked_per_file(tmp_path):
    result = CliRunner().invoke(main, ["corpus", "build", str(FIXTURES / "jats" / "elife00240.xml"), "--format", "s2orc",
                                       "--out", str(tmp_path / "c.sqlite")])
    assert result.exit_code == 1 and "elife00240.xml: looks like jats, not s2orc" in result.output
