"""Your own questions over your own papers: `corpus build --items --labels` on JATS and GROBID TEI files together,
each item served over Streamable HTTP with the neighbourhood built from the citation graph (the seed, its first 30
references and their first 30) and its own citation sentences, a scripted agent on a real MCP client, and the run
scored by agenthop-scorer."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx2
import pytest
from click.testing import CliRunner
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from support.paths import FIXTURES
from support.server_helpers import text

from agenthop.scorer.cli import main as scorer_main
from agenthop.server.transport.http import ServerThread

pytestmark = pytest.mark.anyio

INSIGHT, FIELD_TRIAL, PHENOTYPES = "doi:10.7554/elife.00240", "doi:10.7554/elife.00007", "doi:10.7554/elife.04490"
SPECTER, LITERATURE_GRAPH, FES = "paper:1ed3c473f7cade3d", "paper:bfd6511f1cda14f9", "doi:10.1186/s12984-016-0129-6"

ITEMS = [
    {
        "id": "st_0001",
        "question_type": "single-target",
        "depth": 1,
        "reasoning_type": "RESULT",
        "venue": "eLife",
        "question": "In the field trial the seed paper reports on, how far did PI transcripts accumulate in the irPI plants?",
        "options": [
            "to 0.3% of wild-type levels",
            "to 3% of wild-type levels",
            "to 30% of wild-type levels",
            "to wild-type levels",
        ],
        "correct_index": 0,
        "distractor_types": ["correct", "no_context", "no_context", "wrong_paper"],
        "seed_paper_id": INSIGHT,
        "gold_paper_ids": [FIELD_TRIAL],
        "bridge_paper_ids": [],
    },
    {
        "id": "st_0002",
        "question_type": "single-target",
        "depth": 1,
        "reasoning_type": "METHOD",
        "venue": "ACL",
        "question": "Which system did the work that provides the seed paper's training corpus build to predict metadata from raw PDFs?",
        "options": ["ScienceParse", "GROBID", "SciBERT", "CERMINE"],
        "correct_index": 0,
        "distractor_types": ["correct", "wrong_paper", "same_paper", "no_context"],
        "seed_paper_id": SPECTER,
        "gold_paper_ids": [LITERATURE_GRAPH],
        "bridge_paper_ids": [],
    },
]
LABELS = [
    # Labels name their paper by paper_id (the built corpus's ID); a subsection label names a heading kept in the text.
    {
        "sample_id": "st_0001",
        "analysis": {
            "section_recall_labels": [
                {
                    "paper_id": FIELD_TRIAL,
                    "section": "GLV and TPI production are reduced or eliminated in transformed lines",
                    "relevance": "direct",
                    "what_it_contains": "PI transcripts at 0.3% of WT in irPI",
                },
                {
                    "paper_id": FIELD_TRIAL,
                    "section": "Materials and methods",
                    "relevance": "supporting",
                    "what_it_contains": "the lines",
                },
            ]
        },
    },
    {
        "sample_id": "st_0002",
        "analysis": {
            "section_recall_labels": [
                {
                    "paper_id": LITERATURE_GRAPH,
                    "section": "3 Extracting Metadata",
                    "relevance": "direct",
                    "what_it_contains": "ScienceParse",
                }
            ]
        },
    },
]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("items")
    (root / "qa.jsonl").write_text("".join(json.dumps(i) + "\n" for i in ITEMS))
    (root / "labels.jsonl").write_text("".join(json.dumps(r) + "\n" for r in LABELS))
    out = root / "corpus.sqlite"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "agenthop.server",
            "corpus",
            "build",
            str(FIXTURES / "jats"),
            str(FIXTURES / "tei"),
            "--out",
            str(out),
            "--items",
            str(root / "qa.jsonl"),
            "--labels",
            str(root / "labels.jsonl"),
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["converted"]["items"] == 2 and summary["imported"]["counts"]["items_by_cell"]["ST-d1"] == 2
    assert summary["imported"]["counts"]["recall_labels"] == 3 and summary["imported"]["warnings"] == {}
    return out


async def play(server: ServerThread, item: str | None, calls: list[tuple[str, dict]], run: str = "scripted") -> list:
    """One session over HTTP (item mode, or explore mode with item None), one call per turn."""
    async with httpx2.AsyncClient(base_url=server.base_url) as http:
        created = (await http.post("/sessions", json={"item": item, "run": run, "client": {"name": "scripted"}})).json()
    async with (
        httpx2.AsyncClient() as mcp_http,
        Client(streamable_http_client(created["mcp_url"], http_client=mcp_http)) as client,
    ):
        return [
            await client.call_tool(name, args, meta={"agenthop/turn": turn, "agenthop/tokens": 1000 * turn})
            for turn, (name, args) in enumerate(calls, start=1)
        ]


def references(result) -> dict[str, str | None]:
    return {r["paper_id"]: r["context"] for r in result.structured_content["references"]}


async def test_each_item_sees_its_neighbourhood_and_its_own_citation_sentences(corpus, tmp_path):
    with ServerThread(str(corpus), str(tmp_path / "log.sqlite")) as server:
        insight, trial, outside = await play(
            server,
            "st_0001",
            [
                ("get_references", {"paper_id": INSIGHT}),
                ("get_references", {"paper_id": FIELD_TRIAL}),
                ("get_paper_info", {"paper_id": SPECTER}),
            ],
        )
        specter, graph, fes = await play(
            server,
            "st_0002",
            [
                ("get_references", {"paper_id": SPECTER}),
                ("get_references", {"paper_id": LITERATURE_GRAPH}),
                ("get_paper_info", {"paper_id": FES}),
            ],
        )
        explore_specter, explore_trial = await play(
            server, None, [("get_references", {"paper_id": SPECTER}), ("get_references", {"paper_id": FIELD_TRIAL})]
        )

    # st_0001: the Insight's 7 references, with the Insight's own sentence for the paper it reports on.
    assert len(references(insight)) == 7
    assert references(insight)[FIELD_TRIAL].endswith(
        "a two-year field trial on Nicotiana attenuata, a wild tobacco plant (Schuman et al., 2012)."
    )
    # ...and the field trial's first 30 of its 60 references, as the release keeps them; explore mode shows all 60
    # (the 60th is its Dryad data citation, which has no title and is shown by its printed text).
    assert list(references(trial)) == list(references(explore_trial))[:30] and len(references(explore_trial)) == 60
    # st_0002: SPECTER's first 30 references, with SPECTER's sentence for the literature-graph paper.
    assert (
        list(references(specter)) == list(references(explore_specter))[:30] and len(references(explore_specter)) == 57
    )
    assert (
        "a subset of the Semantic Scholar corpus (Ammar et al., 2018) consisting of"
        in references(specter)[LITERATURE_GRAPH]
    )
    assert len(references(graph)) == 27  # a depth-1 paper's own references are in the neighbourhood
    # Each item sees only its neighbourhood: the other item's seed, and SPECTER's 56th reference, are not there.
    for result, pid in ((outside, SPECTER), (fes, FES)):
        assert result.structured_content[
            "outcome"
        ] == "not_found" and f"Paper '{pid}' is not in the papers available to you" in text(result)


@pytest.mark.slow
async def test_a_scripted_run_is_scored_by_agenthop_scorer(corpus, tmp_path):
    log = tmp_path / "log.sqlite"
    with ServerThread(str(corpus), str(log)) as server:
        # st_0001: follow the seed's reference to the field trial, read the section that reports the transcripts, answer right.
        first = await play(
            server,
            "st_0001",
            [
                ("get_references", {"paper_id": INSIGHT}),
                ("list_sections", {"paper_id": FIELD_TRIAL}),
                ("read_section", {"paper_id": FIELD_TRIAL, "section": "Results"}),
                (
                    "submit_answer",
                    {"answer": "A", "reasoning": "PI transcripts accumulated to only 0.3% of WT levels in irPI."},
                ),
            ],
        )
        # st_0002: see the literature-graph paper among SPECTER's references, but read SPECTER itself and guess wrong.
        second = await play(
            server,
            "st_0002",
            [
                ("get_references", {"paper_id": SPECTER}),
                ("read_section", {"paper_id": SPECTER, "section": "Experiments"}),
                ("submit_answer", {"answer": "C", "reasoning": "SPECTER starts from SciBERT."}),
            ],
        )
    assert "0.3% of WT levels" in text(first[2]) and not any(r.is_error for r in first + second)

    out = tmp_path / "report"
    result = CliRunner().invoke(
        scorer_main, [f"{log}::scripted", "--corpus", str(corpus), "--out", str(out)], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["corpus"]["meta"]["provenance"]["source"] == "corpus-build"
    assert summary["headline"]["accuracy"] == 0.5 and summary["headline"]["paper_recall_st"] == 0.5
    by_item = {r["item_id"]: r for r in summary["item_results"]}
    # st_0001 read "Results": its direct label names a subsection whose heading line the section keeps, so it is credited.
    assert (by_item["st_0001"]["paper_recall"], by_item["st_0001"]["section_recall"], by_item["st_0001"]["audit"]) == (
        1,
        1,
        "correct",
    )
    assert (by_item["st_0002"]["paper_recall"], by_item["st_0002"]["audit"]) == (0, "incorrect_exposed")
    [exposure] = by_item["st_0002"]["exposures"]  # SPECTER's second reference, shown and never read
    assert (exposure["paper_id"], exposure["rank"], exposure["tool"], exposure["inspected_later"]) == (
        LITERATURE_GRAPH,
        2,
        "get_references",
        False,
    )
    # The wrong answer was the right paper's wrong passage: the same_paper distractor a built benchmark may use.
    assert summary["failure_attribution"]["counts"]["same_paper"] == 1
    assert (out / "report.html").exists() and "same_paper" in (out / "report.md").read_text()


def test_the_offline_baseline_runs_the_users_items_file_and_is_scored(corpus, tmp_path):
    """The doc's last step: the same qa.jsonl the build took is the runner's --items; the scorer reads the run directory."""
    from agenthop.runner.cli import main as runner_main

    run = tmp_path / "runs" / "baseline"
    result = CliRunner().invoke(
        runner_main,
        [
            "--items",
            str(corpus.parent / "qa.jsonl"),
            "--agent",
            "baseline",
            "--corpus",
            str(corpus),
            "--out",
            str(run),
            "--no-progress",
        ],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    result = CliRunner().invoke(
        scorer_main, [str(run), "--corpus", str(corpus), "--out", str(tmp_path / "report")], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "report" / "summary.json").read_text())
    assert summary["items"]["observed"] == 2 and summary["items"]["unknown_to_corpus"] == []
    assert [r["termination"] for r in summary["item_results"]] == ["answer", "answer"]
    assert all(
        r["trajectory"][-1] == "submit_answer" and "read_section" in r["trajectory"] for r in summary["item_results"]
    )
