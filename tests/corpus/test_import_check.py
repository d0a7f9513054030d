"""``corpus import --check``: every error and warning of a whole release at once, nothing written."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner
from support.release_fixture import ARXIV, make_release, pid

from agenthop.corpus.importer import check_release, import_release
from agenthop.server.cli import main


def quiet(_msg: str) -> None:
    pass


def many_problems(r) -> None:
    """Errors in four files and one of every warning the importer gives."""
    r.qa[1] = '{"id": "st_0002",'  # qa line 2: not JSON
    r.item("mt_0001")["options"] = ["a", "b", "c"]  # qa line 3: 3 options
    r.labels_of("st_0001")[0]["section"] = "Nowhere"  # labels line 1: a label naming no section
    r.labels.append({"sample_id": "st_9999", "analysis": {"section_recall_labels": []}})  # labels line 4: unknown item
    r.graph("mt_0001")["nodes"][pid("K")]["year"] = "2020"  # graphs line 3: a string year
    r.paper("G")["sections"] = []  # a zero-section pool record (G is st_0002's bridge: fine)
    r.paper("J")["sections"][0]["header"] = "1 Introduction"  # J: "Introduction" names two sections
    r.paper("J")["sections"].append({"header": "2 Introduction", "text": "Again."})
    r.graph("st_0001")["nodes"][pid("D")]["title"] = ""  # D: a paper with an empty title


def test_check_reports_every_error_and_warning_and_writes_nothing(tmp_path):
    release = make_release(tmp_path, many_problems)
    before = sorted(p.name for p in tmp_path.rglob("*"))
    report = check_release(release, echo=quiet)
    assert sorted(p.name for p in tmp_path.rglob("*")) == before  # no corpus, no temporary file left behind
    messages = [e["message"] for e in report["errors"]]
    assert report["ok"] is False and report["error_count"] == len(messages) == 5, messages
    assert messages[0].startswith(f"graphs/full.jsonl line 3: field 'nodes.{pid('K')}.year': expected an integer")
    assert messages[1].startswith("qa/full.jsonl line 2: not valid JSON")
    assert messages[2].startswith("qa/full.jsonl line 3: field 'options': expected a list of 4 strings")
    assert messages[3].startswith("audit/recall_labels.jsonl line 1: field 'analysis.section_recall_labels[0].section'")
    assert messages[4].startswith("audit/recall_labels.jsonl line 4: field 'sample_id': expected the id of an item")
    assert [e["bad_label"] for e in report["errors"]] == [False, False, False, True, False]
    # What follows from a refused record is not reported again: mt_0001 has no graph now, st_0002 and mt_0001 are no items,
    # so their label records name no item.
    w = report["warnings"]
    assert w["zero_section_papers"]["examples"] == [{"where": "paper_pool/papers.jsonl line 4", "arxiv_id": ARXIV["G"]}]
    assert w["duplicate_headers"]["examples"][0]["headers"] == [["1 Introduction", "2 Introduction"]]
    assert w["empty_titles"]["examples"] == [{"paper_id": pid("D")}]


def test_check_of_a_clean_release(tmp_path):
    report = check_release(make_release(tmp_path), echo=quiet)
    assert report["ok"] is True and report["errors"] == [] and report["counts"]["items"] == 3
    assert list(report["warnings"]) == ["metadata_conflicts"]  # the fixture's paper E has another abstract in st_0002


def test_items_left_without_a_direct_label_are_reported(tmp_path):
    """Skipping bad labels can leave a gold paper with no direct label: the item can never score section recall."""

    def mutate(r):
        r.labels_of("st_0001")[0]["section"] = "Nowhere"  # st_0001's only direct label

    release = make_release(tmp_path, mutate)
    report = check_release(release, skip_bad_labels=True, echo=quiet)
    assert report["ok"] is True
    assert report["warnings"]["gold_without_direct_label"]["examples"] == [
        {"item": "st_0001", "gold_paper_ids": [pid("B")]}
    ]
    assert report["warnings"]["bad_labels_skipped"]["count"] == 1
    summary = import_release(release, tmp_path / "c.sqlite", skip_bad_labels=True, echo=quiet)
    assert summary["warnings"]["gold_without_direct_label"]["count"] == 1  # an import says so too


def test_gold_paper_with_zero_sections_is_an_error(tmp_path):
    report = check_release(make_release(tmp_path, lambda r: r.paper("H").update(sections=[])), echo=quiet)
    assert [e["message"] for e in report["errors"]] == [
        f"qa/full.jsonl line 2: field 'gold_paper_ids[0]': expected a gold paper whose text is in paper_pool/papers.jsonl, "
        f'found "{pid("H")}" (arxivId "{ARXIV["H"]}") a pool record with zero sections'
    ]


def test_cli_check(tmp_path):
    runner = CliRunner()
    bad = make_release(tmp_path, many_problems, name="bad")
    result = runner.invoke(main, ["corpus", "import", str(bad), "--check"])
    assert result.exit_code == 1
    assert "5 errors:" in result.stdout and "FAILED: 5 errors" in result.stdout
    assert "qa/full.jsonl line 3: field 'options'" in result.stdout
    assert "zero_section_papers" in result.stdout and "duplicate_headers" in result.stdout
    assert (
        "1 of the errors are recall labels: --skip-bad-labels drops" in result.stdout
    )  # the CLI, not the library, names the flag
    good = make_release(tmp_path, name="good")
    result = runner.invoke(main, ["corpus", "import", str(good), "--check"])
    assert result.exit_code == 0 and "OK: no errors" in result.stdout
    assert not list(Path(tmp_path).glob("*.sqlite"))


def test_cli_import_needs_out_unless_checking(tmp_path):
    result = CliRunner().invoke(main, ["corpus", "import", str(make_release(tmp_path))])
    assert result.exit_code == 2 and "--out is required" in result.output


def test_a_key_that_is_not_a_string_is_an_error_of_its_record_not_a_traceback(tmp_path):
    def keys_of_other_types(r) -> None:
        r.item("st_0001")["id"] = ["st_0001"]
        r.graph("st_0002")["sample_id"] = {"id": "st_0002"}

    report = check_release(make_release(tmp_path, keys_of_other_types), echo=quiet)
    messages = [e["message"] for e in report["errors"]]
    assert any(m.startswith("qa/full.jsonl line 1: field 'id'") for m in messages), messages
    assert any(m.startswith("graphs/full.jsonl line 2: field 'sample_id'") for m in messages), messages


def test_a_malformed_graph_node_is_refused_even_for_a_paper_of_corpus_papers(tmp_path):
    """A paper first given in corpus/papers.jsonl is not a reason to skip checking the graph nodes that name it."""

    def with_corpus_papers(r) -> None:
        r.corpus_papers = [{"paper_id": pid("C"), "title": "Paper C", "year": 2020}]
        r.graph("st_0001")["nodes"][pid("C")] = {"title": 5, "authors": [{"x": 1}]}

    report = check_release(make_release(tmp_path, with_corpus_papers), echo=quiet)
    messages = [e["message"] for e in report["errors"]]
    assert any(m.startswith(f"graphs/full.jsonl line 1: field 'nodes.{pid('C')}") for m in messages), messages
