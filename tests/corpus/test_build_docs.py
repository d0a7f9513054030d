"""docs/real-papers.md walks through the eLife fixtures: its example files build, and its shown output is what the build gives."""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.paths import REPO as ROOT

from agenthop.server.cli import main

DOC = ROOT / "docs" / "real-papers.md"


def blocks() -> dict[str, str]:
    """The ```json file=NAME and ```text file=NAME blocks of the page (indentation of list items removed)."""
    found = re.findall(r"^( *)```(?:json|text) file=(\S+)\n(.*?)^\1```", DOC.read_text(encoding="utf-8"), re.S | re.M)
    return {name: "".join(line[len(indent) :] + "\n" for line in body.splitlines()) for indent, name, body in found}


@pytest.fixture
def walkthrough(tmp_path, monkeypatch) -> dict[str, str]:
    """The doc's working directory: papers/ holds the eLife fixtures, qa.jsonl and recall_labels.jsonl its examples."""
    shutil.copytree(ROOT / "tests" / "fixtures" / "jats", tmp_path / "papers")
    examples = blocks()
    for name in ("qa.jsonl", "recall_labels.jsonl"):
        (tmp_path / name).write_text(examples[name])
    monkeypatch.chdir(tmp_path)
    return examples


def test_the_documented_questions_and_labels_build_a_benchmark(walkthrough):
    result = CliRunner().invoke(
        main,
        [
            "corpus",
            "build",
            "papers/",
            "--out",
            "my-bench.sqlite",
            "--items",
            "qa.jsonl",
            "--labels",
            "recall_labels.jsonl",
        ],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["imported"]["counts"]["items"] == 1 and summary["imported"]["counts"]["recall_labels"] == 1
    assert summary["imported"]["warnings"] == {}


def test_the_documented_paper_list_is_what_the_corpus_holds(walkthrough):
    assert CliRunner().invoke(main, ["corpus", "build", "papers/", "--out", "my-papers.sqlite"]).exit_code == 0
    conn = sqlite3.connect("my-papers.sqlite")
    rows = conn.execute("SELECT paper_id, title FROM papers WHERE has_text = 1").fetchall()
    conn.close()
    assert "".join(f"{pid} | {title}\n" for pid, title in rows) == walkthrough["papers-with-text"]


def test_the_documented_out_of_reach_error_is_the_one_given(walkthrough):
    item = json.loads(walkthrough["qa.jsonl"])
    Path("qa.jsonl").write_text(json.dumps({**item, "gold_paper_ids": ["doi:10.7554/elife.04490"]}) + "\n")
    result = CliRunner().invoke(main, ["corpus", "build", "papers/", "--out", "my-bench.sqlite", "--items", "qa.jsonl"])
    assert result.exit_code == 1 and result.output.endswith(walkthrough["out-of-reach"])


def test_the_documented_check_output_is_what_check_prints(walkthrough):
    result = CliRunner().invoke(
        main, ["corpus", "build", "papers/", "--check", "--items", "qa.jsonl", "--labels", "recall_labels.jsonl"]
    )
    assert result.exit_code == 0 and result.stdout == walkthrough["check-ok"]
