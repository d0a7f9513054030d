"""Real paper structure through a real MCP client: duplicate and renumbered headers, papers with no
sections, and a long section that must reach the client once, within a token budget."""

from __future__ import annotations

import json

import httpx2
import pytest
from support.hardening_common import raw_call_body, raw_headers
from support.release_fixture import make_release, pid
from support.server_helpers import calls, session_client, text

from agenthop.corpus.importer import import_release
from agenthop.server.transport.http import ServerThread

pytestmark = pytest.mark.anyio

LONG_CHARS = 77_000  # the longest section of the 1,600 real ACL papers


def long_text(n: int) -> str:
    """Prose with the features that cost characters on the wire: newlines, quotes, backslashes and non-ASCII."""
    sentence = (
        'We report "exact match" and F1 — the naïve baseline reaches 41.2% on the dev\\test split. '
        "Table 3 lists the per-domain scores.\n"
    )
    return (sentence * (n // len(sentence) + 1))[:n]


STRUCTURED_A = [
    ("4.2.3 Results", "Results on the first benchmark."),
    ("4.3.3 Results", "Results on the second benchmark: 77.1 F1."),
    ("5 Discussion", "First discussion."),
    ("5 Discussion", "Second discussion with the same header."),
    ("Long Appendix", long_text(LONG_CHARS)),
]


@pytest.fixture(scope="module")
def structure_corpus(tmp_path_factory):
    """The fixture release, with paper A given numbered, duplicate and very long sections, and paper F no sections."""

    def mutate(release):
        release.paper("A")["sections"] += [{"header": h, "text": t} for h, t in STRUCTURED_A]
        release.paper("F")["sections"] = []

    root = tmp_path_factory.mktemp("structure")
    out = root / "corpus.sqlite"
    import_release(make_release(root, mutate), out, echo=lambda _: None)
    return out


async def test_headers_differing_only_by_numbering_or_duplicated_are_ambiguous(structure_corpus, tmp_path):
    log = tmp_path / "log.sqlite"
    async with session_client(structure_corpus, log, "st_0001", caps=None) as (client, _):
        results = await client.call_tool("read_section", {"paper_id": pid("A"), "section": "Results"})
        discussion = await client.call_tool("read_section", {"paper_id": pid("A"), "section": "discussion"})
        exact = await client.call_tool("read_section", {"paper_id": pid("A"), "section": "4.3.3 Results"})
        by_alias = await client.call_tool("read_section", {"paper_id": pid("A"), "section": "H"})
    assert results.structured_content["outcome"] == "ambiguous"
    assert results.structured_content["candidates"] == [
        {"alias": "E", "header": "4.2.3 Results"},
        {"alias": "F", "header": "4.3.3 Results"},
    ]
    assert "(E) 4.2.3 Results; (F) 4.3.3 Results" in text(results) and "Name one by its alias" in text(results)
    assert [c["alias"] for c in discussion.structured_content["candidates"]] == ["G", "H"]
    assert exact.structured_content["section"]["alias"] == "F" and "77.1 F1" in text(exact)
    assert "Second discussion" in text(by_alias)
    assert [(c["outcome"], c["cost"]) for c in calls(log)] == [("ambiguous", 5), ("ambiguous", 5), ("ok", 5), ("ok", 5)]
    assert [c["delivered"]["section_index"] if c["delivered"] else None for c in calls(log)] == [None, None, 5, 7]


async def test_a_paper_with_no_sections_has_no_text(structure_corpus, tmp_path):
    log = tmp_path / "log.sqlite"
    async with session_client(structure_corpus, log, "st_0002") as (client, _):
        listed = await client.call_tool("list_sections", {"paper_id": pid("F")})
        read = await client.call_tool("read_section", {"paper_id": pid("F"), "section": "A"})
    for result in (listed, read):
        assert result.structured_content["outcome"] == "no_text" and "has no full text" in text(result)
        assert "Its sections are" not in text(result)
    assert listed.structured_content["sections"] == []
    assert [c["delivered"] for c in calls(log)] == [None, None]


async def test_the_longest_section_reaches_the_client_in_each_channel_under_25k_tokens(structure_corpus, tmp_path):
    body = long_text(LONG_CHARS)
    with ServerThread(str(structure_corpus), str(tmp_path / "log.sqlite")) as server:
        async with httpx2.AsyncClient(base_url=server.base_url, timeout=60) as http:
            sid = (await http.post("/sessions", json={"item": "st_0001", "budget": None})).json()["session_id"]
            response = await http.post(
                f"/mcp?session={sid}",
                headers=raw_headers("tools/call", "read_section"),
                json=raw_call_body("read_section", {"paper_id": pid("A"), "section": "Long Appendix"}),
            )
    wire = response.text  # the whole JSON-RPC response: text content, structured content, envelope
    result = json.loads(wire)["result"]
    # A client hands its model one channel: the text content, or structuredContent as JSON (the Agents SDK
    # with use_structured_content). Each carries the whole section, and each stays under 25K tokens (4 chars a token).
    channels = {"content": result["content"][0]["text"], "structured": json.dumps(result["structuredContent"])}
    for name, channel in channels.items():
        assert len(channel) / 4 < 25_000, (name, len(channel) / 4)
        assert channel.count("per-domain scores") == body.count("per-domain scores"), name
    assert result["structuredContent"]["section"] == {"alias": "I", "header": "Long Appendix", "chars": LONG_CHARS}
    assert result["structuredContent"]["text"] == body and body in channels["content"]
    assert result["structuredContent"]["status_line"] in channels["content"]
