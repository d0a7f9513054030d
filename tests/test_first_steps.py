"""First steps that teach (issue 34, points 18-20): a construction run on a small folder that keeps nothing says which
rule removed the candidates and which option relaxes it, and fails instead of offering an import; the import of an empty
release refuses; the options the README gives for small folders make an item; the suggested corpus path is the
README's."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from agenthop.construct.cli import main as construct_main
from agenthop.server.cli import main as server_main
from agenthop.server.corpus.convert.build import build_corpus

ROOT = Path(__file__).resolve().parents[1]
SMALL = ["--min-refs", "1", "--max-refs", "1000", "--min-overlap", "0"]  # the README's options for a small folder


@pytest.fixture(scope="module")
def papers(tmp_path_factory) -> Path:
    corpus = tmp_path_factory.mktemp("first-steps") / "my-papers.sqlite"
    build_corpus([ROOT / "tests" / "fixtures" / "tei", ROOT / "tests" / "fixtures" / "jats"], corpus, echo=lambda line: None)
    return corpus


def test_an_empty_construction_says_which_rule_and_which_option_and_fails(papers, tmp_path):
    out = tmp_path / "my-bench"
    r = CliRunner().invoke(construct_main, ["run", "--corpus", str(papers), "--out", str(out)])
    assert r.exit_code == 1, r.output
    assert "| Candidate chains (none) |" in r.stdout and "Candidate chains ()" not in r.stdout
    assert "Import it with" not in r.output
    assert f"Error: the release ({out / 'release'}) has no items: there is nothing to import or run." in r.stderr
    assert "Seeds kept none of 6. What removed them, and what relaxes each rule:" in r.stderr
    assert "too_few_references (1): a seed needs at least --min-refs references in the corpus (15); lower it, e.g. --min-refs 1" in r.stderr
    assert "too_many_references (3): a seed may have at most --max-refs references (50" in r.stderr
    assert "no_reference_with_text (2): a seed needs a reference whose full text is in the corpus; no option relaxes this" in r.stderr

    # The import of that empty release refuses, and writes nothing.
    corpus = tmp_path / "my-bench.sqlite"
    r = CliRunner().invoke(server_main, ["corpus", "import", str(out / "release"), "--out", str(corpus)])
    assert r.exit_code == 1 and "holds no items" in r.output and "corpus build PAPERS --out FILE" in r.output
    assert not corpus.exists()
    r = CliRunner().invoke(server_main, ["corpus", "import", str(out / "release"), "--check"])
    assert r.exit_code == 1 and "holds no items" in r.output


def test_the_readme_options_for_a_small_folder_make_an_item_and_the_suggested_path_is_the_readmes(papers, tmp_path):
    out = tmp_path / "my-bench"
    r = CliRunner().invoke(construct_main, ["run", "--corpus", str(papers), "--out", str(out), *SMALL])
    assert r.exit_code == 0, r.output
    assert "| **Release** (ST-d1 1; tiers gold 1) | | | | **1** |" in r.stdout
    assert f"agenthop-server corpus import {out / 'release'} --out {tmp_path / 'my-bench.sqlite'}" in r.stdout
    readme = (ROOT / "README.md").read_text()
    assert "agenthop-construct run --corpus my-papers.sqlite --out my-bench " + " ".join(SMALL) in readme
    assert "agenthop-server corpus import my-bench/release --out my-bench.sqlite" in readme
