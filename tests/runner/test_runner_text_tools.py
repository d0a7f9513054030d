"""Text-format tool calls (--text-tools): the parser on the usual formats, and whole items against the
real sandbox server and the loopback fake model, with a malformed call returned uncharged."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.fake_openai import FakeOpenAI, seed_id, text, turn_index
from support.release_fixture import ITEM_IDS, make_release

from agenthop.corpus.importer import import_release
from agenthop.runner.cli import main
from agenthop.runner.records import read_records as read_runner
from agenthop.runner.text_tools import parse_tool_calls
from agenthop.server.log.checkpoint import read_records as read_checkpoint

KNOWN = {"search_papers", "get_references", "read_section", "submit_answer", "think"}


def calls(reply: str) -> list[tuple[str, dict | None, str | None]]:
    return [(c.name, c.arguments, c.problem) for c in parse_tool_calls(reply, KNOWN)]


def test_tagged_calls_in_order_and_a_tag_left_open():
    reply = (
        'Let me look.\n<tool_call>{"name": "get_references", "arguments": {"paper_id": "p1"}}</tool_call>\n'
        '<tool_call>\n{"name": "think", "arguments": "{\\"reasoning\\": \\"x\\"}"}\n</tool_call>\n'
        '<tool_call>{"name": "search_papers", "parameters": {"query": "bert"}}'
    )
    assert calls(reply) == [
        ("get_references", {"paper_id": "p1"}, None),
        ("think", {"reasoning": "x"}, None),
        ("search_papers", {"query": "bert"}, None),
    ]


def test_fenced_bare_and_python_calls():
    fenced = 'I will call:\n```json\n[{"name": "read_section", "arguments": {"paper_id": "p", "section": "B"}}]\n```'
    assert calls(fenced) == [("read_section", {"paper_id": "p", "section": "B"}, None)]
    bare = 'Next step {"name": "submit_answer", "arguments": {"answer": "C", "reasoning": "a {brace} inside"}} done.'
    assert calls(bare) == [("submit_answer", {"answer": "C", "reasoning": "a {brace} inside"}, None)]
    pythonic = "[get_references(paper_id=\"p1\"), search_papers(query='graph (GNN) models', top_k=3)]"
    assert calls(pythonic) == [
        ("get_references", {"paper_id": "p1"}, None),
        ("search_papers", {"query": "graph (GNN) models", "top_k": 3}, None),
    ]


def test_prose_is_not_a_call_and_broken_explicit_calls_are_malformed():
    assert calls('The paper says {"name": "Alice"} and print(x) computes (A) nothing.') == []
    assert calls("I think the answer is (B) because the results (Table 2) say so.") == []
    ((name, args, problem),) = calls('<tool_call>{"name": "read_section", "arguments": {"paper_id": "p", }</tool_call>')
    assert name == "read_section" and args is None and "not valid JSON" in problem
    ((_, _, problem),) = calls('<tool_call>{"arguments": {"paper_id": "p"}}</tool_call>')
    assert 'no "name"' in problem
    ((_, _, problem),) = calls('<tool_call>{"name": "think", "arguments": ["x"]}</tool_call>')
    assert "not an object" in problem
    # An explicit call to an unknown tool is a call: the server refuses it (free), as with native calls.
    assert calls('<tool_call>{"name": "browse", "arguments": {}}</tool_call>') == [("browse", {}, None)]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("corpus")
    import_release(make_release(root / "release"), root / "corpus.sqlite")
    items = root / "items.txt"
    items.write_text("\n".join(ITEM_IDS) + "\n")
    return root / "corpus.sqlite", items


def test_text_tools_end_to_end(corpus, tmp_path):
    """Turn 1: a tagged call plus a malformed one; turn 2: a Python-style call; turn 3: the answer in a fence."""

    def script(body, fake):
        assert "tools" not in body  # no native tool calling
        system = body["messages"][0]["content"]
        assert "<tool_call>" in system and "- read_section(paper_id: string, section: string)" in system
        t = turn_index(body)
        if t == 0:
            return text(
                f'<tool_call>{{"name": "get_references", "arguments": {{"paper_id": "{seed_id(body)}"}}}}</tool_call>'
                '<tool_call>{"name": "list_sections", "arguments": {"paper_id": </tool_call>'
            )
        last = body["messages"][-1]
        assert last["role"] == "user"
        if t == 1:
            assert re.search(r'<tool_result name="get_references">\nReferences of', last["content"])
            assert '<tool_result name="list_sections">\nError: your tool call' in last["content"]
            assert "cost nothing" in last["content"]
            return text(f"Now the sections: list_sections(paper_id='{seed_id(body)}')")
        assert '<tool_result name="list_sections">' in last["content"]
        return text('```json\n{"name": "submit_answer", "arguments": {"answer": "D", "reasoning": "read it"}}\n```')

    out = tmp_path / "r"
    corpus_path, items = corpus
    with FakeOpenAI(script) as fake:
        result = CliRunner().invoke(
            main,
            [
                "--items",
                str(items),
                "--agent",
                "raw",
                "--model",
                "fake-1",
                "--base-url",
                fake.base_url,
                "--corpus",
                str(corpus_path),
                "--out",
                str(out),
                "--no-progress",
                "--text-tools",
            ],
            catch_exceptions=False,
        )
    assert result.exit_code == 0, result.output
    recs = list(read_runner(out / "runner.jsonl"))
    log = list(read_checkpoint(out / "server-log.sqlite"))
    ends = [r for r in recs if r["kind"] == "item_end"]
    assert sorted(e["item_id"] for e in ends) == sorted(ITEM_IDS)
    for end in ends:
        assert (end["termination"], end["answer"], end["turns"]) == ("answer", "D", 3)
        session_calls = [c for c in log if c["kind"] == "call" and c["session_id"] == end["session_id"]]
        # The malformed list_sections never reached the server: nothing logged, nothing charged.
        assert [(c["tool"], c["turn"], c["cost"]) for c in session_calls] == [
            ("get_references", 1, 1),
            ("list_sections", 2, 1),
            ("submit_answer", 3, 0),
        ]
        assert end["budget_used"] == 2
        turns = [t for t in recs if t["kind"] == "turn" and t["session_id"] == end["session_id"]]
        assert [c["name"] for c in turns[0]["tool_calls"]] == ["get_references", "list_sections"]
        assert "malformed text tool call list_sections" in turns[0]["error"]
    assert '"tool_format": "text"' in (out / "run.json").read_text()


def test_text_tools_need_the_raw_agent(corpus, tmp_path):
    corpus_path, items = corpus
    result = CliRunner().invoke(
        main,
        [
            "--items",
            str(items),
            "--agent",
            "sdk",
            "--model",
            "m",
            "--corpus",
            str(corpus_path),
            "--out",
            str(tmp_path / "x"),
            "--text-tools",
        ],
    )
    assert result.exit_code != 0 and "--text-tools is a mode of the raw agent" in result.output
