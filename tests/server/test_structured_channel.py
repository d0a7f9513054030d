"""Whichever channel an MCP client hands its model, the model gets the whole result.

The Agents SDK gives its model the text content by default, or ``json.dumps(structuredContent)`` with
``use_structured_content=True``. Both are driven here against a real server and the loopback fake model; the
assertions read what the model was sent."""

from __future__ import annotations

import httpx2
import pytest
from agents import Agent, OpenAIChatCompletionsModel, Runner, set_tracing_disabled
from agents.mcp import MCPServerStreamableHttp
from openai import AsyncOpenAI
from support.fake_openai import FakeOpenAI, last_tool_message, text, tool_calls, turn_index
from support.release_fixture import pid

from agenthop.server.transport.http import ServerThread

pytestmark = pytest.mark.anyio
BODY = "We train on 4,096 examples and reach 81.5% accuracy on the held-out split."  # paper B's section C


@pytest.mark.parametrize("structured", [False, True], ids=["content", "structuredContent"])
async def test_the_agents_sdk_model_gets_the_section_and_the_budget_in_either_channel(
    fixture_corpus, tmp_path, structured
):
    set_tracing_disabled(True)

    def script(body, fake):
        if turn_index(body) == 0:
            return tool_calls(("read_section", {"paper_id": pid("B"), "section": "C"}))
        return text("done")

    with (
        ServerThread(str(fixture_corpus), str(tmp_path / "log.sqlite"), budget=5) as server,
        FakeOpenAI(script) as fake,
    ):
        async with httpx2.AsyncClient(base_url=server.base_url) as http:
            created = (await http.post("/sessions", json={"item": "st_0001", "run": "channels"})).json()
        # Closed in this test's event loop: an open client is closed later, in a loop that is gone, and that error
        # lands in whichever test runs next.
        openai_client = AsyncOpenAI(base_url=fake.base_url, api_key="x", max_retries=0)
        model = OpenAIChatCompletionsModel(model="fake-1", openai_client=openai_client)
        async with (
            openai_client,
            MCPServerStreamableHttp(
                {"url": created["mcp_url"], "timeout": 30},
                use_structured_content=structured,
                client_session_timeout_seconds=30,
                cache_tools_list=True,
            ) as mcp,
        ):
            agent = Agent(
                name="reader",
                instructions="Read.",
                model=model,
                mcp_servers=[mcp],
                mcp_config={"convert_schemas_to_strict": False},
            )
            await Runner.run(agent, "Read section C of paper B.", max_turns=3)
    seen = last_tool_message(fake.requests[1])
    assert seen.startswith('{"') is structured  # the channel really is the one asked for
    assert BODY in seen
    assert "Budget used: 5/5 (0 left)" in seen
    assert "[Budget spent: you must call submit_answer now with your best answer.]" in seen
