"""First steps that teach: a construction run on a small folder that keeps nothing says which
rule removed the candidates and which option relaxes it, and fails instead of offering an import; the import of an empty
release refuses; the options the README gives for small folders take the six fixture papers past the seed and chain
rules, and the Q/A stage then says what it needs (more papers: six have too few values of a type for three genuine
wrong answers); the suggested corpus path is the README's; the README's curl exchange (initialize, then tools/call) works as printed, and a request without the MCP
session header is told what is missing and how to get it."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import httpx2
import pytest
from click.testing import CliRunner
from support.paths import REPO as ROOT

from agenthop.construct.cli import main as construct_main
from agenthop.corpus.convert.build import build_corpus
from agenthop.server.cli import main as server_main
from agenthop.server.transport.http import ServerThread

SMALL = [
    "--min-refs",
    "1",
    "--max-refs",
    "1000",
    "--min-overlap",
    "0",
    "--citations-per-year",
    "0",
]  # the README's small-folder options


@pytest.fixture(scope="module")
def papers(tmp_path_factory) -> Path:
    corpus = tmp_path_factory.mktemp("first-steps") / "my-papers.sqlite"
    build_corpus(
        [ROOT / "tests" / "fixtures" / "tei", ROOT / "tests" / "fixtures" / "jats"], corpus, echo=lambda line: None
    )
    return corpus


def test_an_empty_construction_says_which_rule_and_which_option_and_fails(papers, tmp_path):
    out = tmp_path / "my-bench"
    r = CliRunner().invoke(construct_main, ["run", "--corpus", str(papers), "--out", str(out)])
    assert r.exit_code == 1, r.output
    assert "| Candidate chains (none) |" in r.stdout and "Candidate chains ()" not in r.stdout
    assert "Import it with" not in r.output
    assert (
        f"Error: no item survived, so no release was written in {out / 'release'}: there is nothing to import or run."
        in r.stderr
    )
    assert not (out / "release").exists()  # no folder with an empty qa/full.jsonl
    assert "Too few items (0)" not in r.output and "solver" not in r.stdout  # no artifact table of no item
    assert "Seeds kept none of 6. What removed them, and what relaxes each rule:" in r.stderr
    assert (
        "too_few_references (1): a seed needs at least --min-refs references in the corpus (15); lower it, e.g. --min-refs 1"
        in r.stderr
    )
    assert "too_many_references (3): a seed may have at most --max-refs references (50" in r.stderr
    assert (
        "no_reference_with_text (2): a seed needs a reference whose full text is in the corpus; no option relaxes this"
        in r.stderr
    )

    # An empty release made by hand: its import refuses, and writes nothing.
    from agenthop.construct.corpus_view import CorpusView
    from agenthop.construct.release_out import write_release

    view = CorpusView(papers)
    try:
        write_release(view, [], out / "release", {"tool": "test"})
    finally:
        view.close()
    corpus = tmp_path / "my-bench.sqlite"
    r = CliRunner().invoke(server_main, ["corpus", "import", str(out / "release"), "--out", str(corpus)])
    assert r.exit_code == 1 and "holds no items" in r.output and "corpus build PAPERS --out FILE" in r.output
    assert not corpus.exists()
    r = CliRunner().invoke(server_main, ["corpus", "import", str(out / "release"), "--check"])
    assert r.exit_code == 1 and "holds no items" in r.output


def test_the_readme_options_for_a_small_folder_pass_seeds_and_chains_and_the_qa_stage_says_what_it_needs(
    papers, tmp_path
):
    out = tmp_path / "my-bench"
    r = CliRunner().invoke(construct_main, ["run", "--corpus", str(papers), "--out", str(out), *SMALL])
    assert r.exit_code == 1, r.output
    rows = {line.split("|")[1].strip(): line for line in r.stdout.splitlines() if line.startswith("| ")}
    seeds = next(line for name, line in rows.items() if name.startswith("Seeds"))
    chains = next(line for name, line in rows.items() if name.startswith("Candidate chains"))
    assert (
        "too_few_references" not in seeds
        and "too_many_references" not in seeds
        and "too_few_citations_for_age" not in seeds
    )
    assert not chains.rstrip(" |").endswith("| 0"), chains  # the relaxed rules leave a chain to ask about
    assert "Q/A pairs kept none of" in r.stderr
    assert "no_same_type_value (1): an item needs three wrong answers of the gold's type and form" in r.stderr
    assert "add papers (tens at least)" in r.stderr
    readme = (ROOT / "README.md").read_text()
    assert "agenthop-construct run --corpus my-papers.sqlite --out my-bench " + " ".join(SMALL) in readme
    assert "agenthop-server corpus import my-bench/release --out my-bench.sqlite" in readme
    assert "the six papers of `tests/fixtures/`" in readme


def _readme_curl_block() -> str:
    readme = (ROOT / "README.md").read_text()
    start = readme.index("One complete exchange with `curl`")
    block = readme[start:].split("```bash\n", 1)[1].split("```", 1)[0]
    return "\n".join(line for line in block.splitlines() if not line.startswith("#"))


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_the_readmes_curl_exchange_calls_a_tool_and_a_missing_session_says_what_to_send(demo, tmp_path):
    corpus, _ = demo
    with ServerThread(str(corpus), str(tmp_path / "log.sqlite")) as server:
        script = _readme_curl_block().replace("http://127.0.0.1:8765", server.base_url)
        done = subprocess.run(["bash", "-euo", "pipefail", "-c", script], capture_output=True, text=True, timeout=60)
        url = httpx2.post(f"{server.base_url}/sessions", json={"item": "st_0001"}).json()["mcp_url"]
        bare = httpx2.post(
            url,
            headers={"Accept": "application/json, text/event-stream"},
            json={
                "jsonrpc": "2.0",
                "id": 7,
                "method": "tools/call",
                "params": {"name": "think", "arguments": {"reasoning": "x"}},
            },
        )
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout.splitlines()[-1])
    assert answer["id"] == 2 and answer["result"]["isError"] is False
    assert (
        "Title: Learning Self-Supervised Image Retrieval from Bounding Boxes" in answer["result"]["content"][0]["text"]
    )
    assert answer["result"]["content"][0]["text"].endswith("[Turn: 1 | Budget used: 1/30 (29 left)]")
    error = bare.json()["error"]
    assert bare.status_code == 400 and bare.json()["id"] == 7 and error["code"] == -32600
    assert "no Mcp-Session-Id header" in error["message"] and "'initialize'" in error["message"]
    assert "The AgentHop session (?session= or X-AgentHop-Session) is another thing" in error["message"]


def test_a_terminal_gets_a_short_build_summary_and_the_json_in_a_file(tmp_path, monkeypatch):
    import agenthop.server.cli as server_cli

    monkeypatch.setattr(server_cli, "_for_a_person", lambda: True)
    out = tmp_path / "my-papers.sqlite"
    r = CliRunner().invoke(
        server_main, ["corpus", "build", str(ROOT / "tests" / "fixtures" / "jats"), "--out", str(out)]
    )
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert len(lines) <= 8 and lines[0].startswith(f"wrote {out}: ") and "with text" in lines[0]
    saved = out.with_name("my-papers.sqlite.build.json")
    assert f"the full summary (JSON) is in {saved}; --json prints it instead" in r.stdout
    assert json.loads(saved.read_text())["imported"]["counts"]["papers_with_text"] == 3
    r = CliRunner().invoke(
        server_main, ["corpus", "build", str(ROOT / "tests" / "fixtures" / "jats"), "--out", str(out), "--json"]
    )
    assert r.exit_code == 0 and json.loads(r.stdout)["imported"]["out"] == str(out)


@pytest.mark.parametrize("command", ["play", "review"])
@pytest.mark.slow
def test_ctrl_c_stops_play_and_review_without_aborted(command, tmp_path, demo_corpus):
    if command == "play":
        (tmp_path / "items.txt").write_text("st_0001\n")
        argv = [
            sys.executable,
            "-m",
            "agenthop.server",
            "play",
            "--corpus",
            str(demo_corpus),
            "--log",
            str(tmp_path / "log.sqlite"),
            "--no-browser",
            "--items",
            str(tmp_path / "items.txt"),
        ]
    else:
        from agenthop.construct.pipeline import run_pipeline
        from agenthop.construct.settings import Settings

        run_pipeline(
            demo_corpus,
            tmp_path / "run",
            Settings(min_refs=5, max_qa=4, max_chains_per_seed=2),
            until="sanity",
            echo=lambda line: None,
        )
        argv = [
            sys.executable,
            "-c",
            "from agenthop.construct.cli import main; main()",
            "review",
            "--corpus",
            str(demo_corpus),
            "--out",
            str(tmp_path / "run"),
            "--port",
            "0",
        ]
    child = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        stream = child.stdout if command == "play" else child.stderr
        first = stream.readline()  # the URL, printed once the port listens
        assert "http://127.0.0.1:" in first, first
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == 0, err
    assert "Aborted" not in out + err and "Traceback" not in err


def test_the_editable_installs_of_make_hide_setuptools_folder_name_box():
    """The box was measured by hand (pip 26.3, `pip install -q -e .` in a fresh venv: ten lines; with the filter: none);
    this holds the Makefile to using the filter on both editable installs."""
    makefile = (ROOT / "Makefile").read_text()
    assert "EDITABLE := PYTHONWARNINGS=ignore::UserWarning" in makefile
    installs = [line.strip() for line in makefile.splitlines() if "pip install" in line and " -e " in line]
    assert len(installs) == 2 and all(line.startswith("$(EDITABLE) ") for line in installs), installs
