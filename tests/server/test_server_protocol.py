"""The MCP protocol surface beyond tool calls, through real MCP clients in both protocol eras: prompt and resource
errors, resource templates, completion, output schemas, the logging capability, the research_task texts."""

from __future__ import annotations

import copy
import json

import anyio
import httpx2
import jsonschema
import pytest
from mcp import Client, MCPError, types
from mcp.client.streamable_http import streamable_http_client
from support.release_fixture import make_release, pid
from support.server_helpers import session_client

from agenthop.corpus.importer import import_release
from agenthop.server.caps import Caps
from agenthop.server.log.checkpoint import CheckpointLog
from agenthop.server.result_schema import OUTPUT_SCHEMAS
from agenthop.server.transport.http import ServerThread
from agenthop.server.transport.mcp_app import build_server, make_sandbox

# The logging capability is deprecated by the 2026-07-28 protocol; the SDK client warns when a test uses it.
pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore:The logging capability is deprecated")]

ERAS = ["auto", "legacy"]  # auto lands on 2026-07-28; legacy forces the 2025 initialize handshake


# --- errors of prompts and resources ------------------------------------------------------------------


@pytest.mark.parametrize("mode", ERAS)
async def test_unknown_prompts_items_and_resources_are_invalid_params_with_the_message_over_http(
    fixture_corpus, tmp_path, mode
):
    with ServerThread(str(fixture_corpus), str(tmp_path / "log.sqlite")) as server:
        async with httpx2.AsyncClient(base_url=server.base_url) as http:
            created = (await http.post("/sessions", json={})).json()  # explore: item_id is the prompt's argument
        async with (
            httpx2.AsyncClient() as h,
            Client(streamable_http_client(created["mcp_url"], http_client=h), mode=mode) as client,
        ):
            errors = []
            for request in (
                lambda: client.get_prompt("nope"),
                lambda: client.get_prompt("research_task", {"item_id": "st_9999"}),
                lambda: client.read_resource("test://template/123/data"),
                lambda: client.read_resource("agenthop://items/st_9999"),
            ):
                with pytest.raises(MCPError) as caught:
                    await request()
                errors.append(caught.value)
    prompt, item, resource, item_resource = errors
    assert all(e.code == -32602 for e in errors), [(e.code, e.message) for e in errors]
    assert prompt.message == "Unknown prompt 'nope'. The server offers: research_task."
    assert "Unknown item 'st_9999' (argument item_id)" in item.message and "agenthop://items" in item.message
    assert (
        "Unknown resource 'test://template/123/data'" in resource.message
        and "agenthop://items/{item_id}" in resource.message
    )
    assert resource.error.data == {"uri": "test://template/123/data"}
    assert "Unknown resource 'agenthop://items/st_9999'" in item_resource.message


@pytest.mark.parametrize("mode", ERAS)
async def test_resource_templates_are_listed_and_read(fixture_corpus, tmp_path, mode):
    async with session_client(fixture_corpus, tmp_path / "log.sqlite", None, mode=mode) as (client, _):
        templates = (await client.list_resource_templates()).resource_templates
        one = await client.read_resource("agenthop://items/st_0002")
    assert [t.uri_template for t in templates] == [
        "agenthop://items/{item_id}",
        "agenthop://paper/{paper_id}/bibtex",
        "agenthop://paper/{paper_id}/csl-json",
    ]  # citations: explore mode
    payload = one.contents[0].text
    assert '"item_id": "st_0002"' in payload and "window size" in payload and "correct" not in payload


# --- completion ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def many_items_corpus(tmp_path_factory):
    """The fixture release with 150 more items (copies of st_0001 named st_1000 ... st_1149)."""

    def mutate(release):
        for n in range(1000, 1150):
            new_id = f"st_{n}"
            item, graph = copy.deepcopy(release.item("st_0001")), copy.deepcopy(release.graph("st_0001"))
            labels = copy.deepcopy(release.label_record("st_0001"))
            item["id"], graph["sample_id"], labels["sample_id"] = new_id, new_id, new_id
            release.qa.append(item)
            release.graphs.append(graph)
            release.labels.append(labels)

    root = tmp_path_factory.mktemp("many-items")
    out = root / "corpus.sqlite"
    import_release(make_release(root, mutate), out, echo=lambda _: None)
    return out


@pytest.mark.parametrize("mode", ERAS)
async def test_item_ids_complete_by_prefix_capped_at_100(many_items_corpus, tmp_path, mode):
    prompt = types.PromptReference(type="ref/prompt", name="research_task")
    template = types.ResourceTemplateReference(type="ref/resource", uri="agenthop://items/{item_id}")
    async with session_client(many_items_corpus, tmp_path / "log.sqlite", None, mode=mode) as (client, _):
        assert client.server_capabilities.completions is not None
        prefix = (await client.complete(prompt, {"name": "item_id", "value": "st_11"})).completion
        upper = (await client.complete(template, {"name": "item_id", "value": "MT_"})).completion
        everything = (await client.complete(prompt, {"name": "item_id", "value": ""})).completion
        nothing = (await client.complete(prompt, {"name": "item_id", "value": "zz"})).completion
        other_prompt = (
            await client.complete(
                types.PromptReference(type="ref/prompt", name="test_prompt_with_arguments"),
                {"name": "arg1", "value": "test"},
            )
        ).completion
        other_argument = (await client.complete(prompt, {"name": "seed", "value": "st"})).completion
    assert prefix.values == [f"st_{n}" for n in range(1100, 1150)] and prefix.total == 50 and not prefix.has_more
    assert upper.values == ["mt_0001"]  # the prefix is matched ignoring case
    assert everything.values[:4] == ["st_0001", "st_0002", "mt_0001", "st_1000"] and len(everything.values) == 100
    assert everything.total == 153 and everything.has_more is True
    assert nothing.values == [] and nothing.total == 0 and not nothing.has_more
    assert other_prompt.values == [] and other_argument.values == []


# --- output schemas ------------------------------------------------------------------------------------


def _validate(tool: str, content: dict) -> None:
    jsonschema.Draft202012Validator(OUTPUT_SCHEMAS[tool]).validate(content)


@pytest.mark.parametrize("mode", ERAS)
async def test_every_tool_declares_an_output_schema_its_results_match(fixture_corpus, tmp_path, mode):
    calls = [
        ("search_papers", {"query": "paper"}),
        ("search_papers", {"query": "zzzz"}),
        ("get_paper_info", {"paper_id": pid("A")}),
        ("get_paper_info", {"paper_id": "0" * 40}),
        ("get_references", {"paper_id": pid("A")}),
        ("get_references", {"paper_id": pid("E")}),
        ("list_sections", {"paper_id": pid("B")}),
        ("list_sections", {"paper_id": pid("C")}),
        ("read_section", {"paper_id": pid("B"), "section": "C"}),
        ("read_section", {"paper_id": pid("B"), "section": "e"}),
        ("read_section", {"paper_id": pid("B"), "section": "nothing"}),
        ("read_section", {"paper_id": pid("C"), "section": "A"}),
        ("read_section", {"paper_id": pid("B"), "section": "  "}),
        ("think", {"reasoning": "x"}),
        ("think", {}),
        ("read_section", {"paper_id": pid("B"), "section": "C"}),
        ("read_section", {"paper_id": pid("B"), "section": "C"}),
        ("submit_answer", {"answer": "B", "reasoning": "r"}),
        ("think", {"reasoning": "late"}),
    ]
    async with session_client(
        fixture_corpus, tmp_path / "log.sqlite", "st_0001", mode=mode, caps=Caps(28, 20, 200_000)
    ) as (client, _):
        tools = {t.name: t for t in (await client.list_tools()).tools}
        results = [(name, await client.call_tool(name, args)) for name, args in calls]
    assert {name: tool.output_schema for name, tool in tools.items()} == OUTPUT_SCHEMAS
    outcomes = set()
    for name, result in results:
        _validate(name, result.structured_content)  # the Python client checks only non-error results itself
        outcomes.add(result.structured_content["outcome"])
    assert outcomes == {"ok", "not_found", "no_text", "ambiguous", "invalid", "budget_rejected", "session_ended"}


async def test_results_of_calls_without_a_session_match_the_schema_and_the_docs(fixture_corpus, tmp_path):
    with ServerThread(str(fixture_corpus), str(tmp_path / "log.sqlite")) as server:
        async with (
            httpx2.AsyncClient() as h,
            Client(streamable_http_client(f"{server.base_url}/mcp", http_client=h)) as client,
        ):
            result = await client.call_tool("read_section", {"paper_id": pid("B"), "section": "C"})
    assert result.is_error and set(result.structured_content) == {"tool", "outcome", "error"}
    assert result.structured_content["outcome"] == "invalid"
    _validate("read_section", result.structured_content)
    with pytest.raises(jsonschema.ValidationError):  # a result with the session keys must carry them all
        _validate("read_section", {"tool": "read_section", "outcome": "ok", "cost": 5})
    with pytest.raises(jsonschema.ValidationError):  # and a successful one its tool's keys
        _validate(
            "read_section",
            {
                **result.structured_content,
                "outcome": "ok",
                "cost": 5,
                "budget_used": 5,
                "budget_total": 30,
                "budget_remaining": 25,
                "turn": None,
                "tokens": None,
                "session_ended": False,
            },
        )


# --- research_task -----------------------------------------------------------------------------------


async def test_research_task_in_explore_mode_describes_the_explore_session(fixture_corpus, tmp_path):
    async with session_client(fixture_corpus, tmp_path / "log.sqlite", None) as (client, _):
        plain = (await client.get_prompt("research_task")).messages[0].content.text
        task = (await client.get_prompt("research_task", {"item_id": "st_0001"})).messages[0].content.text
    assert "How many training examples" in task and "(B) 4,096" in task
    assert "Answer from the question alone" not in task and "Navigate the citation graph" in task
    assert "a budget of" not in task and "- no limits in this session" in task
    assert "submit_answer" not in task and "cannot record an answer (explore mode)" in task
    assert "1 points" not in plain and "- search_papers (1 point):" in plain and "- think (0 points):" in plain
    assert "submit_answer" not in plain


async def test_research_task_in_item_mode_and_closed_book(fixture_corpus, tmp_path):
    tools = frozenset({"search_papers", "get_paper_info", "get_references", "list_sections", "read_section", "think"})
    async with session_client(fixture_corpus, tmp_path / "a.sqlite", "st_0001") as (client, _):
        task = (await client.get_prompt("research_task")).messages[0].content.text  # naming another item is -32602
    async with session_client(fixture_corpus, tmp_path / "b.sqlite", "st_0001", disabled=tools) as (client, _):
        closed = (await client.get_prompt("research_task")).messages[0].content.text
    assert "How many training examples" in task
    assert "a budget of 30 points" in task and task.endswith("submit its letter with submit_answer.")
    assert "Answer from the question alone." in closed and "- submit_answer (0 points)" in closed
    assert "read_section" not in closed


# --- logging -----------------------------------------------------------------------------------------------


class Messages:
    def __init__(self):
        self.received: list[types.LoggingMessageNotificationParams] = []
        self.arrived = anyio.Event()

    async def __call__(self, params):
        self.received.append(params)
        self.arrived.set()


async def _late_call(client, session, sandbox):
    """A call that misses its deadline: the server logs an error while serving it."""
    sandbox.call_deadline_s = 0.2
    with session._lock:  # the call cannot start until we let go
        return await client.call_tool("think", {"reasoning": "x"})


def _sandbox(corpus, log_path):
    sandbox = make_sandbox(corpus, CheckpointLog(log_path), Caps())
    sandbox.fixed_session = sandbox.sessions.create(sandbox.scope("st_0001"))
    return sandbox


async def test_logging_set_level_and_messages_on_the_2025_protocol(fixture_corpus, tmp_path):
    sandbox = _sandbox(fixture_corpus, tmp_path / "log.sqlite")
    messages = Messages()
    async with Client(build_server(sandbox), mode="legacy", logging_callback=messages) as client:
        assert client.server_capabilities.logging is not None
        before = await _late_call(client, sandbox.fixed_session, sandbox)  # no level set yet: nothing is sent
        assert (await client.set_logging_level("critical")).model_dump(exclude_none=True) == {}
        await _late_call(client, sandbox.fixed_session, sandbox)  # an error is below "critical"
        await client.set_logging_level("warning")
        result = await _late_call(client, sandbox.fixed_session, sandbox)
        with anyio.fail_after(10):
            await messages.arrived.wait()
    assert before.structured_content["outcome"] == result.structured_content["outcome"] == "timeout"
    assert [(m.level, m.logger) for m in messages.received] == [("error", "agenthop.server")]
    assert "tool call think in session" in messages.received[0].data and "exceeded 0.2 s" in messages.received[0].data
    sandbox.sessions.log.close()


async def test_logging_on_the_2026_protocol_is_an_opt_in_per_request(fixture_corpus, tmp_path):
    sandbox = _sandbox(fixture_corpus, tmp_path / "log.sqlite")
    quiet, asked = Messages(), Messages()
    async with Client(build_server(sandbox), logging_callback=quiet) as client:
        await _late_call(client, sandbox.fixed_session, sandbox)
    async with Client(build_server(sandbox), logging_callback=asked, log_level="error") as client:
        assert client.protocol_version == "2026-07-28"
        await _late_call(client, sandbox.fixed_session, sandbox)
        with anyio.fail_after(10):
            await asked.arrived.wait()
    assert quiet.received == [] and [m.level for m in asked.received] == ["error"]
    sandbox.sessions.log.close()


class StreamOpened:
    """An httpx response hook: set once the client's standalone GET stream has its 200 response.

    On the 2025 protocol the server sends log messages on that stream only, and drops them while it is not
    open; the SDK client opens it in the background after ``initialize``, so a test must wait for it."""

    def __init__(self):
        self.opened = anyio.Event()

    async def __call__(self, response: httpx2.Response):
        if response.request.method == "GET" and response.status_code == 200:
            self.opened.set()


async def test_logging_over_http_reaches_a_2025_client_and_no_other_session(fixture_corpus, tmp_path):
    with ServerThread(str(fixture_corpus), str(tmp_path / "log.sqlite")) as server:
        async with httpx2.AsyncClient(base_url=server.base_url) as http:
            mine = (await http.post("/sessions", json={"item": "st_0001"})).json()
            other = (await http.post("/sessions", json={"item": "st_0001"})).json()
        messages, bystander = Messages(), Messages()
        mine_open, other_open = StreamOpened(), StreamOpened()
        session = server.sandbox.sessions.get(mine["session_id"])
        async with (
            httpx2.AsyncClient(event_hooks={"response": [mine_open]}) as h1,
            httpx2.AsyncClient(event_hooks={"response": [other_open]}) as h2,
            Client(
                streamable_http_client(mine["mcp_url"], http_client=h1), mode="legacy", logging_callback=messages
            ) as client,
            Client(
                streamable_http_client(other["mcp_url"], http_client=h2), mode="legacy", logging_callback=bystander
            ) as watcher,
        ):
            await client.set_logging_level("warning")
            await watcher.set_logging_level("debug")
            # The server registers a GET stream in the same event-loop step as it sends its headers, so once the
            # client has them, every later request is served with the stream in place (for the bystander too,
            # so a message wrongly sent to it would be delivered, not dropped).
            with anyio.fail_after(60):
                await mine_open.opened.wait()
                await other_open.opened.wait()
            result = await _late_call(client, session, server.sandbox)
            with anyio.fail_after(60):
                await messages.arrived.wait()
            await watcher.call_tool("think", {"reasoning": "anything for me?"})
    assert result.structured_content["outcome"] == "timeout"
    assert [m.level for m in messages.received] == ["error"] and bystander.received == []


async def test_templates_and_completion_reveal_no_gold_and_no_paper_text(canary_corpus, tmp_path):
    from conftest import GOLD_WORDS

    from agenthop.server.corpus_schema import open_corpus

    sections = [t for (t,) in open_corpus(canary_corpus).execute("SELECT text FROM sections") if len(t) > 20]
    prompt = types.PromptReference(type="ref/prompt", name="research_task")
    async with session_client(canary_corpus, tmp_path / "log.sqlite", "st_0001") as (client, _):
        blobs = [
            (await client.list_resource_templates()).model_dump_json(),
            (await client.complete(prompt, {"name": "item_id", "value": ""})).model_dump_json(),
        ]
        blobs.append((await client.read_resource("agenthop://items/st_0001")).model_dump_json())
        blobs.append((await client.read_resource("agenthop://items")).model_dump_json())
    assert '"st_0001"' in blobs[1]
    for blob in blobs:
        assert not any(word in blob for word in GOLD_WORDS) and not any(text in blob for text in sections), blob[:300]


# --- an item session sees its own item only --------------------------------------------------


@pytest.mark.parametrize("mode", ERAS)
async def test_an_item_session_sees_only_its_own_item_in_resources_and_completion(fixture_corpus, tmp_path, mode):
    """Another item's seed paper may be this item's gold paper (26 of the 48 gold papers of the demo corpus are), so an
    item session lists, reads and completes its own item only; an explore session still sees every item."""
    prompt = types.PromptReference(type="ref/prompt", name="research_task")
    with ServerThread(str(fixture_corpus), str(tmp_path / "log.sqlite")) as server:
        async with httpx2.AsyncClient(base_url=server.base_url) as http:
            item_url = (await http.post("/sessions", json={"item": "st_0001"})).json()["mcp_url"]
            explore_url = (await http.post("/sessions", json={})).json()["mcp_url"]
            public = (await http.get("/items")).json()
        async with (
            httpx2.AsyncClient() as h,
            Client(streamable_http_client(item_url, http_client=h), mode=mode) as client,
        ):
            listed = json.loads((await client.read_resource("agenthop://items")).contents[0].text)
            own = json.loads((await client.read_resource("agenthop://items/st_0001")).contents[0].text)
            with pytest.raises(MCPError) as other:
                await client.read_resource("agenthop://items/st_0002")
            completed = (await client.complete(prompt, {"name": "item_id", "value": ""})).completion
        async with (
            httpx2.AsyncClient() as h,
            Client(streamable_http_client(explore_url, http_client=h), mode=mode) as client,
        ):
            everything = json.loads((await client.read_resource("agenthop://items")).contents[0].text)
            explored = json.loads((await client.read_resource("agenthop://items/st_0002")).contents[0].text)
    assert [i["item_id"] for i in listed] == ["st_0001"] and own["item_id"] == "st_0001"
    assert other.value.error.code == -32602 and other.value.error.message.startswith(
        "This session serves item st_0001; other items are not shown in an item session"
    )
    assert completed.values == ["st_0001"] and completed.total == 1
    assert (
        [i["item_id"] for i in everything]
        == [i["item_id"] for i in public["items"]]
        == ["st_0001", "st_0002", "mt_0001"]
    )
    assert explored["item_id"] == "st_0002"


async def test_an_unknown_resource_in_explore_mode_names_the_citation_templates(fixture_corpus, tmp_path):
    with ServerThread(str(fixture_corpus), str(tmp_path / "log.sqlite")) as server:
        async with httpx2.AsyncClient(base_url=server.base_url) as http:
            created = (await http.post("/sessions", json={})).json()
        async with (
            httpx2.AsyncClient() as h,
            Client(streamable_http_client(created["mcp_url"], http_client=h)) as client,
        ):
            with pytest.raises(MCPError) as caught:
                await client.read_resource("agenthop://paper/x/ris")
    message = caught.value.error.message
    assert "agenthop://paper/{paper_id}/bibtex" in message and "agenthop://paper/{paper_id}/csl-json" in message
