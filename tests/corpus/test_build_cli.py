"""`agenthop-server corpus build` refuses bad input with a message that names the file and the problem, and writes nothing."""

import json

import pytest
from click.testing import CliRunner
from support.paths import FIXTURES

from agenthop.corpus.inputs import JsonlFile
from agenthop.corpus.problems import ReleaseError
from agenthop.server.cli import main


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
    result = CliRunner().invoke(
        main, ["corpus", "build", str(FIXTURES / "jats"), "--out", str(tmp_path / "c.sqlite"), "--labels", str(labels)]
    )
    assert result.exit_code == 2 and "--labels describes items: give --items too." in result.output


def test_a_folder_with_no_papers_is_refused(tmp_path):
    (tmp_path / "empty").mkdir()
    result = CliRunner().invoke(main, ["corpus", "build", str(tmp_path / "empty"), "--out", str(tmp_path / "c.sqlite")])
    assert result.exit_code == 1 and "no papers found in the inputs" in result.output


def test_the_format_flag_is_checked_per_file(tmp_path):
    result = CliRunner().invoke(
        main,
        [
            "corpus",
            "build",
            str(FIXTURES / "jats" / "elife00240.xml"),
            "--format",
            "s2orc",
            "--out",
            str(tmp_path / "c.sqlite"),
        ],
    )
    assert result.exit_code == 1 and "elife00240.xml: looks like jats, not s2orc" in result.output


def _item(**changes) -> str:
    item = {
        "id": "st_0001",
        "question_type": "single-target",
        "depth": 1,
        "reasoning_type": "RESULT",
        "question": "Q?",
        "options": ["a", "b", "c", "d"],
        "correct_index": 0,
        "seed_paper_id": "doi:10.7554/elife.00240",
        "gold_paper_ids": ["doi:10.7554/elife.00007"],
        "bridge_paper_ids": [],
    }
    return json.dumps({**item, **changes})


def test_the_importers_errors_name_the_users_items_file_and_line(tmp_path):
    items = tmp_path / "my-questions.jsonl"
    items.write_text(_item() + "\n\n" + _item(id="st_0002", options=["a", "b", "c"]) + "\n")
    out, kept = tmp_path / "c.sqlite", tmp_path / "kept"
    result = CliRunner().invoke(
        main,
        [
            "corpus",
            "build",
            str(FIXTURES / "jats"),
            "--out",
            str(out),
            "--items",
            str(items),
            "--keep-release",
            str(kept),
        ],
    )
    assert result.exit_code == 1, result.output
    assert result.output.endswith(
        f"Error: {items} line 3: field 'options': expected a list of 4 strings, found a list of 3\n"
    )
    assert not out.exists()
    # The refused release is kept to look at, its lines where the user's were.
    qa = (kept / "qa/full.jsonl").read_text().splitlines()
    assert (
        qa[1] == ""
        and json.loads(qa[2])["id"] == "st_0002"
        and json.loads(qa[2])["seed_title"] == "Indirect routes to reproductive success"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept", "my-questions.jsonl"]


def test_keep_release_never_overwrites_a_folder_that_holds_something(tmp_path):
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    result = CliRunner().invoke(
        main,
        [
            "corpus",
            "build",
            str(FIXTURES / "jats"),
            "--out",
            str(tmp_path / "c.sqlite"),
            "--keep-release",
            str(tmp_path / "mine"),
        ],
    )
    assert result.exit_code == 1 and "mine already exists and is not an empty directory" in result.output
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep me" and not (tmp_path / "c.sqlite").exists()


def test_a_label_naming_no_section_names_the_users_labels_file_and_line(tmp_path):
    items, labels = tmp_path / "qa.jsonl", tmp_path / "labels.jsonl"
    items.write_text(_item() + "\n")
    labels.write_text(
        "\n"
        + json.dumps(
            {
                "sample_id": "st_0001",
                "analysis": {
                    "section_recall_labels": [
                        {"paper_id": "doi:10.7554/elife.00007", "section": "Nowhere", "relevance": "direct"}
                    ]
                },
            }
        )
        + "\n"
    )
    result = CliRunner().invoke(
        main,
        [
            "corpus",
            "build",
            str(FIXTURES / "jats"),
            "--out",
            str(tmp_path / "c.sqlite"),
            "--items",
            str(items),
            "--labels",
            str(labels),
        ],
    )
    assert result.exit_code == 1, result.output
    assert (
        f"Error: {labels} line 2: field 'analysis.section_recall_labels[0].section': expected a section of doi:10.7554/elife.00007"
        in result.output
    )


def test_check_reports_every_problem_of_the_items_and_labels_at_once_and_writes_nothing(tmp_path):
    items, labels = tmp_path / "qa.jsonl", tmp_path / "labels.jsonl"
    items.write_text(
        "\n".join(
            [
                _item(),
                _item(id="st_0002", gold_paper_ids=["doi:10.7554/elife.04490"]),  # out of the seed's reach
                _item(id="st_0003", options=["a", "b", "c"]),  # the importer's check
                "{not json",
            ]
        )
        + "\n"
    )
    labels.write_text(
        "\n".join(
            json.dumps(
                {
                    "sample_id": sid,
                    "analysis": {
                        "section_recall_labels": [
                            {"paper_id": "doi:10.7554/elife.00007", "section": "Nowhere", "relevance": "direct"}
                        ]
                    },
                }
            )
            for sid in ("st_0001", "st_0002", "st_0003")
        )
        + "\n"
    )
    result = CliRunner().invoke(
        main, ["corpus", "build", str(FIXTURES / "jats"), "--check", "--items", str(items), "--labels", str(labels)]
    )
    assert result.exit_code == 1, result.output
    errors = [line.strip() for line in result.stdout.split("errors:\n")[1].split("\n\n")[0].splitlines()]
    assert [e.split(": field")[0].split(": not")[0] for e in errors] == [
        f"{items} line 2",
        f"{items} line 3",
        f"{items} line 4",
        f"{labels} line 1",
    ]  # st_0002's and st_0003's labels: no cascade
    assert (
        "is not in the neighbourhood built from the seed" in errors[0] and "expected a list of 4 strings" in errors[1]
    )
    assert (
        "not valid JSON" in errors[2]
        and "'analysis.section_recall_labels[0].section': expected a section of" in errors[3]
    )
    assert result.stdout.rstrip().endswith("FAILED: 4 errors")


def test_check_of_good_inputs_says_ok(tmp_path):
    items = tmp_path / "qa.jsonl"
    items.write_text(_item() + "\n")
    result = CliRunner().invoke(main, ["corpus", "build", str(FIXTURES / "jats"), "--check", "--items", str(items)])
    assert result.exit_code == 0 and result.stdout.rstrip().endswith("OK: no errors")
    assert "items_without_labels" in result.stdout  # warnings are reported too


@pytest.mark.filterwarnings("error::pytest.PytestUnhandledThreadExceptionWarning")
def test_an_input_gone_before_the_importer_hashes_it_is_an_error_not_a_thread_traceback(tmp_path):
    """A refused build removes its release while the importer's hashing thread may still be starting: that thread
    must not die with a traceback on stderr (it did, now and then, after a refused build)."""
    reader = JsonlFile(tmp_path / "gone.jsonl", "qa/full.jsonl")
    reader._hashing.start()  # what iterating the file starts; the file is not there
    with pytest.raises(ReleaseError, match=r"^qa/full.jsonl: cannot be read \(No such file or directory\)$"):
        _ = reader.hexdigest
