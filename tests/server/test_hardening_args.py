"""Hostile arguments: arbitrary JSON thrown at every tool over real MCP connections.

Property-based (hypothesis): each example is a fresh session with a random cap and a
random sequence of calls (wrong types, missing and extra fields, strings up to 1 MB,
control characters, NUL bytes, SQL fragments, path-like IDs, huge and negative
``top_k``, unknown tool names). For every call the server must answer within a
deadline with either a valid result or an error naming the problem; costs follow
SPEC 3 exactly (checked against an oracle written from the SPEC's table, see
hardening_common.Model); the budget never exceeds the cap; and the log holds
exactly one call record per call with the outcome and cost the client saw.
"""

from __future__ import annotations

import functools
import json
import sqlite3

import anyio
import httpx2
import jsonschema
import pytest
from anyio.from_thread import start_blocking_portal
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client
from support.hardening_common import COSTS, Model, check_log, check_result, raw_call_body, raw_headers
from support.release_fixture import pid

from agenthop.server.caps import Caps
from agenthop.server.log.checkpoint import CheckpointLog, read_records
from agenthop.server.result_schema import OUTPUT_SCHEMAS
from agenthop.server.transport.http import ServerThread
from agenthop.server.transport.mcp_app import build_server, make_sandbox

CALL_DEADLINE_S = 30
OUTPUT_VALIDATORS = {name: jsonschema.Draft202012Validator(schema) for name, schema in OUTPUT_SCHEMAS.items()}
TOOL_NAMES = list(COSTS)

# --- strategies -------------------------------------------------------------------

NASTY = [
    "",
    " ",
    "\n",
    "\x00",
    "a\x00b",
    "\x00" * 40,
    "\x1b[2J\x07\x08",
    "\r\n\t\v\f",
    "\u202e\u200b\ufeff",
    "🦀" * 30,
    "../../etc/passwd",
    "..\\..\\windows\\system32",
    "/etc/passwd",
    "file:///etc/passwd",
    "%00",
    "%2e%2e%2f",
    "'; DROP TABLE papers; --",
    "' OR '1'='1",
    '" OR 1=1 --',
    "1; SELECT * FROM gold_items",
    "gold_items",
    "*",
    "%",
    "_",
    "A' UNION SELECT correct_index FROM gold_items --",
    "NULL",
    "null",
    "None",
    "{}",
    "[]",
    "A",
    "B",
    "C",
    "D",
    "E",
    "Z",
    "AA",
    "a",
    "Experiments",
    "experiments",
    "Introduction",
    "1 Introduction",
    "Apdx_A:",
    pid("A"),
    pid("B"),
    pid("C"),
    pid("D"),
    pid("E"),
    pid("L"),
    pid("B").upper(),
    pid("B") + " ",
    "0" * 40,
    "x" * 200,
    "x" * 201,
]
control_text = st.text(alphabet=st.characters(codec="utf-8", categories=["Cc", "Cf", "Zs", "Zl", "Zp"]), max_size=30)
huge_text = st.builds(
    lambda ch, n: ch * n,
    st.sampled_from(["x", "\x00", "é", "'", "🦀", "A "]),
    st.sampled_from([499, 500, 501, 1999, 2000, 2001, 49_999, 50_000, 50_001, 300_000, 1_000_000]),
)
strings = st.one_of(st.sampled_from(NASTY), st.text(max_size=40), control_text, huge_text)
integers = st.one_of(
    st.integers(-3, 13), st.integers(), st.sampled_from([2**31, 2**63, -(2**63), 2**64 + 1, 10**30, -(10**30)])
)
scalars = st.one_of(st.none(), st.booleans(), integers, st.floats(allow_nan=False, allow_infinity=False), strings)
any_json = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)
FIELD_VALUES = {
    "query": st.one_of(strings, strings, any_json),
    "top_k": st.one_of(integers, integers, any_json),
    "paper_id": st.one_of(strings, strings, any_json),
    "section": st.one_of(strings, strings, any_json),
    "reasoning": st.one_of(strings, strings, any_json),
    "answer": st.one_of(st.sampled_from(["A", "B", "C", "D", "a", "E", " A", "A\x00", "AB", ""]), any_json),
}
FIELDS = {
    "search_papers": ["query", "top_k"],
    "get_paper_info": ["paper_id"],
    "get_references": ["paper_id"],
    "list_sections": ["paper_id"],
    "read_section": ["paper_id", "section"],
    "think": ["reasoning"],
    "submit_answer": ["answer", "reasoning"],
}
tool_names = st.one_of(
    st.sampled_from(TOOL_NAMES),
    st.sampled_from(TOOL_NAMES),
    st.sampled_from(TOOL_NAMES),
    st.sampled_from(
        ["", "Think", "read_section ", "search_papers\x00", "../think", "tools/call", "gold_items", "x" * 300]
    ),
    st.text(max_size=20),
)


@st.composite
def arguments(draw, tool: str):
    """Mostly plausible argument objects with random defects: missing, extra, wrong-typed or out-of-range fields."""
    fields = FIELDS.get(tool) or draw(st.sampled_from(list(FIELDS.values())))
    args = {}
    for name in fields:
        if draw(st.integers(0, 9)) == 0:
            continue  # missing
        args[name] = draw(FIELD_VALUES[name])
    if draw(st.integers(0, 5)) == 0:
        args.update(
            draw(
                st.dictionaries(
                    st.one_of(
                        st.sampled_from(["top_k", "query", "_meta", "session", "budget", "cost"]), st.text(max_size=10)
                    ),
                    any_json,
                    min_size=1,
                    max_size=2,
                )
            )
        )
    return args


@st.composite
def call(draw):
    name = draw(tool_names)
    return name, draw(arguments(name))


sessions = st.fixed_dictionaries(
    {
        "item": st.sampled_from(["st_0001", "st_0002", "mt_0001", None]),
        "cap": st.sampled_from([None, 0, 1, 2, 4, 5, 6, 10, 30]),
        "calls": st.lists(call(), min_size=1, max_size=8),
    }
)

HYPOTHESIS = dict(
    deadline=None,
    derandomize=False,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
)


# --- in-process: volume -----------------------------------------------------------


async def _timed_call(client: Client, name: str, args: object):
    with anyio.fail_after(CALL_DEADLINE_S):  # a hang fails the test instead of blocking the suite
        return await client.call_tool(name, args)


@pytest.fixture(scope="module")
def inproc(fixture_corpus, tmp_path_factory):
    """One in-process MCP client (mcp.Client on build_server) kept open across hypothesis examples."""
    log_path = tmp_path_factory.mktemp("hostile") / "log.sqlite"
    log = CheckpointLog(log_path)
    sandbox = make_sandbox(fixture_corpus, log, Caps())
    sandbox.fixed_session = sandbox.sessions.create(sandbox.scope(None), run="warmup", caps=Caps(None, None, None))
    with start_blocking_portal() as portal:
        with portal.wrap_async_context_manager(Client(build_server(sandbox), raise_exceptions=True)) as client:
            yield portal, client, sandbox, log_path
    log.close()


MAX_BODY = 4 * 1024 * 1024  # the SDK's cap on /mcp request bodies


def _body_size(name: str, args: object) -> int:
    return len(json.dumps(raw_call_body(name, args), ensure_ascii=False, separators=(",", ":")).encode())


def session_records(log_path, session_id: str) -> list[dict]:
    """One session's records, via the indexed column (read_records would parse the whole, growing log)."""
    conn = sqlite3.connect(f"file:{log_path}?mode=ro", uri=True)
    try:
        return [
            json.loads(t)
            for (t,) in conn.execute("SELECT record FROM records WHERE session_id = ? ORDER BY id", (session_id,))
        ]
    finally:
        conn.close()


def _run_session(portal, client, call_one, spec, log_path, new_session, *, body_cap: bool = False) -> None:
    session = new_session(spec)
    # Each example is a new session on a client kept open, and a session's mode (item or explore) decides its tools'
    # output schemas: list them, as a client does at a session's start, or the client validates this session's results
    # against the schemas it cached in an earlier one (an explore search_papers result has fields an item one has not).
    portal.call(client.list_tools)
    model = Model(spec["cap"], explore=spec["item"] is None)
    expected = []
    for name, args in spec["calls"]:
        try:
            result = portal.call(call_one, name, args)
        except MCPError as exc:
            if exc.error.code == -32602 and isinstance(exc.error.data, dict):  # a tool the session does not offer
                data, text = exc.error.data, exc.error.message
                cls, cost = check_result(model, name, args, data, text, True)
                expected.append((name, args, cls, cost, data))
                continue
            # Over HTTP, a body above 4 MiB is refused by the transport (413) before any handler: the client gets
            # an MCPError, nothing is charged and nothing is logged. (Near the limit the exact envelope size decides.)
            if body_cap and _body_size(name, args) > MAX_BODY - 2048:
                continue
            raise
        assert not body_cap or _body_size(name, args) <= MAX_BODY, "a body over 4 MiB was accepted"
        data, text = result.structured_content, "\n".join(b.text for b in result.content if b.type == "text")
        cls, cost = check_result(model, name, args, data, text, result.is_error)
        if name in OUTPUT_VALIDATORS:  # errors too: a validating client (the TypeScript SDK) checks them all
            OUTPUT_VALIDATORS[name].validate(data)
        expected.append((name, args, cls, cost, data))
    records = session_records(log_path, session)
    check_log([r for r in records if r["kind"] == "call"], expected)
    ends = [r for r in records if r["kind"] == "session_end"]
    assert len(ends) == (1 if model.ended else 0)


@settings(max_examples=150, **HYPOTHESIS)
@given(spec=sessions)
@pytest.mark.slow
def test_hostile_calls_in_process_are_refused_or_charged_exactly(inproc, spec):
    portal, client, sandbox, log_path = inproc

    def new_session(spec):
        sandbox.fixed_session = sandbox.sessions.create(
            sandbox.scope(spec["item"]), run="hostile", caps=Caps(spec["cap"], 20, 200_000), transport="stdio"
        )
        return sandbox.fixed_session.session_id

    _run_session(portal, client, functools.partial(_timed_call, client), spec, log_path, new_session)


def test_the_in_process_server_still_serves_after_the_hostile_examples(inproc):
    portal, client, sandbox, log_path = inproc
    sandbox.fixed_session = sandbox.sessions.create(sandbox.scope("st_0001"), run="after", caps=Caps(30, 20, 200_000))
    result = portal.call(_timed_call, client, "read_section", {"paper_id": pid("B"), "section": "Experiments"})
    assert not result.is_error and "4,096" in result.content[0].text and result.structured_content["budget_used"] == 5


# --- over HTTP: a smaller sample through the real transport -----------------------


@pytest.fixture(scope="module")
def over_http(fixture_corpus, tmp_path_factory):
    """One ServerThread and one mcp.Client over Streamable HTTP; each example switches session by header."""
    log_path = tmp_path_factory.mktemp("hostile-http") / "log.sqlite"
    with ServerThread(str(fixture_corpus), str(log_path)) as server, start_blocking_portal() as portal:
        http = httpx2.Client(base_url=server.base_url)
        mcp_http = portal.call(functools.partial(httpx2.AsyncClient, timeout=60))
        with (
            portal.wrap_async_context_manager(mcp_http),
            portal.wrap_async_context_manager(
                Client(streamable_http_client(f"{server.base_url}/mcp", http_client=mcp_http))
            ) as client,
        ):
            yield portal, client, mcp_http, http, log_path
        http.close()


@settings(max_examples=40, **HYPOTHESIS)
@given(spec=sessions)
@pytest.mark.slow
def test_hostile_calls_over_http_are_refused_or_charged_exactly(over_http, spec):
    portal, client, mcp_http, http, log_path = over_http

    def new_session(spec):
        created = http.post("/sessions", json={"item": spec["item"], "run": "hostile-http", "budget": spec["cap"]})
        assert created.status_code == 201, created.text
        sid = created.json()["session_id"]
        mcp_http.headers["X-AgentHop-Session"] = sid
        return sid

    _run_session(portal, client, functools.partial(_timed_call, client), spec, log_path, new_session, body_cap=True)


NON_OBJECT_ARGUMENTS = [[1, 2], "reasoning", 5, True, None]


def test_malformed_tool_calls_over_http_get_protocol_errors_and_cost_nothing(fixture_corpus, tmp_path):
    """Requests a client library would not send: non-object arguments, non-string names, broken JSON-RPC, > 4 MiB."""
    log_path = tmp_path / "log.sqlite"
    with (
        ServerThread(str(fixture_corpus), str(log_path)) as server,
        httpx2.Client(base_url=server.base_url, timeout=60) as http,
    ):
        sid = http.post("/sessions", json={"item": "st_0001", "run": "raw", "budget": 6}).json()["session_id"]
        url = f"/mcp?session={sid}"
        answers = []
        for args in NON_OBJECT_ARGUMENTS[:4]:
            answers.append(
                http.post(url, json=raw_call_body("think", args), headers=raw_headers("tools/call", "think"))
            )
        answers.append(http.post(url, json=raw_call_body(5, {}), headers=raw_headers("tools/call", "5")))
        answers.append(
            http.post(
                url,
                json={"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": "x"},
                headers=raw_headers("tools/call"),
            )
        )
        answers.append(
            http.post(
                url, json=[raw_call_body("think", {"reasoning": "batch"})], headers=raw_headers("tools/call", "think")
            )
        )
        answers.append(
            http.post(
                url,
                content=b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {',
                headers=raw_headers("tools/call", "think"),
            )
        )
        answers.append(http.post(url, content=b"\xff\xfe\x00garbage", headers=raw_headers("tools/call", "think")))
        too_big = http.post(
            url,
            json=raw_call_body("think", {"reasoning": "x" * (5 * 1024 * 1024)}),
            headers=raw_headers("tools/call", "think"),
        )
        # null arguments are the same as {} (the handler sees no arguments): an ordinary, logged, invalid call.
        null_args = http.post(url, json=raw_call_body("think", None), headers=raw_headers("tools/call", "think")).json()
        ok = http.post(
            url,
            json=raw_call_body("read_section", {"paper_id": pid("B"), "section": "C"}),
            headers=raw_headers("tools/call", "read_section"),
        ).json()
        status = http.get(f"/sessions/{sid}").json()
    for answer in answers:
        assert 400 <= answer.status_code < 500, answer.text
        error = answer.json()["error"]
        assert error["code"] < 0 and error["message"], error
    assert too_big.status_code == 413
    assert null_args["result"]["isError"] and "reasoning: Field required" in null_args["result"]["content"][0]["text"]
    assert ok["result"]["structuredContent"]["budget_used"] == 5 and status["budget_used"] == 5 and not status["ended"]
    calls = [r for r in read_records(log_path) if r["kind"] == "call"]
    # Only the two requests that reached the tool handler are calls; protocol rejections are not (and cost nothing).
    assert [(c["tool"], c["outcome"], c["cost"]) for c in calls] == [("think", "invalid", 0), ("read_section", "ok", 5)]


def test_every_refusal_message_is_json_safe_and_bounded(fixture_corpus, tmp_path):
    """A 1 MB hostile value is not echoed back in full (errors stay readable for a model)."""
    log_path = tmp_path / "log.sqlite"
    log = CheckpointLog(log_path)
    sandbox = make_sandbox(fixture_corpus, log, Caps())
    session = sandbox.sessions.create(sandbox.scope("st_0001"), run="echo", caps=Caps(30, 20, 200_000))
    results = [
        session.call("search_papers", {"query": "\x00" * 1_000_000}),
        session.call("get_paper_info", {"paper_id": "x" * 1_000_000}),
        session.call("think", {"reasoning": 7, "extra": "y" * 1_000_000}),
        session.call("y" * 1_000_000, {}),
    ]
    log.close()
    for result in results:
        assert result.is_error and result.data["cost"] == 0 and len(result.text) < 20_000, len(result.text)
        json.dumps(result.data)
