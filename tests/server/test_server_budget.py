"""Budget rules of SPEC 4.2, through a real MCP client."""

import pytest
from support.release_fixture import pid
from support.server_helpers import calls, session_client, text

from agenthop.server.caps import Caps
from agenthop.server.log.checkpoint import read_records

pytestmark = pytest.mark.anyio

READ_B = ("read_section", {"paper_id": pid("B"), "section": "C"})
INFO_A = ("get_paper_info", {"paper_id": pid("A")})
THINK = ("think", {"reasoning": "hmm"})


async def run_calls(corpus, log, sequence, budget):
    async with session_client(corpus, log, "st_0001", caps=Caps(budget, 20, 200_000)) as (client, session):
        results = [await client.call_tool(name, args) for name, args in sequence]
    return results, session


async def test_each_executed_call_deducts_exactly_its_cost(fixture_corpus, tmp_path):
    log = tmp_path / "log.sqlite"
    results, _ = await run_calls(
        fixture_corpus,
        log,
        [
            INFO_A,
            READ_B,
            THINK,
            ("search_papers", {"query": "paper"}),
            ("list_sections", {"paper_id": pid("B")}),
            ("get_references", {"paper_id": pid("A")}),
        ],
        30,
    )
    assert [r.structured_content["budget_used"] for r in results] == [1, 6, 6, 7, 8, 9]
    assert [(c["budget_before"], c["budget_after"]) for c in calls(log)] == [
        (0, 1),
        (1, 6),
        (6, 6),
        (6, 7),
        (7, 8),
        (8, 9),
    ]
    assert results[-1].structured_content["budget_remaining"] == 21


async def test_a_call_the_budget_cannot_pay_is_rejected_for_free(fixture_corpus, tmp_path):
    log = tmp_path / "log.sqlite"
    results, session = await run_calls(fixture_corpus, log, [INFO_A, READ_B], 4)
    rejected = results[1]
    assert rejected.is_error and rejected.structured_content["outcome"] == "budget_rejected"
    assert rejected.structured_content["cost"] == 0 and rejected.structured_content["budget_used"] == 1
    assert "costs 5 point(s) and only 3 remain" in text(rejected) and "submit_answer" in text(rejected)
    assert calls(log)[1]["delivered"] is None and not session.ended


async def test_two_rejections_in_a_row_end_the_session(fixture_corpus, tmp_path):
    log = tmp_path / "log.sqlite"
    results, session = await run_calls(fixture_corpus, log, [INFO_A, READ_B, READ_B, INFO_A], 4)
    assert [r.structured_content["outcome"] for r in results] == [
        "ok",
        "budget_rejected",
        "budget_rejected",
        "session_ended",
    ]
    assert results[2].structured_content["session_ended"] is True
    assert session.termination == "budget"
    ends = [r for r in read_records(log) if r["kind"] == "session_end"]
    assert len(ends) == 1 and ends[0]["termination"] == "budget" and ends[0]["budget_used"] == 1


async def test_an_executed_call_resets_the_rejection_count(fixture_corpus, tmp_path):
    log = tmp_path / "log.sqlite"
    sequence = [INFO_A, READ_B, THINK, READ_B, INFO_A, READ_B, ("get_paper_info", {"paper_id": 7}), READ_B]
    results, session = await run_calls(fixture_corpus, log, sequence, 4)
    outcomes = [r.structured_content["outcome"] for r in results]
    # think and get_paper_info execute and reset; an invalid call neither counts nor resets.
    assert outcomes == [
        "ok",
        "budget_rejected",
        "ok",
        "budget_rejected",
        "ok",
        "budget_rejected",
        "invalid",
        "budget_rejected",
    ]
    assert session.termination == "budget"


async def test_when_the_budget_hits_zero_the_agent_is_told_to_submit(fixture_corpus, tmp_path):
    log = tmp_path / "log.sqlite"
    results, session = await run_calls(
        fixture_corpus, log, [READ_B, THINK, ("submit_answer", {"answer": "B", "reasoning": "r"})], 5
    )
    assert "must call submit_answer now" in text(results[0]) and "must call submit_answer now" in text(results[1])
    assert results[0].structured_content["budget_remaining"] == 0
    assert results[2].structured_content["answer"] == "B" and session.termination == "answer"


async def test_calls_after_submit_are_refused_and_cost_nothing(fixture_corpus, tmp_path):
    log = tmp_path / "log.sqlite"
    results, session = await run_calls(
        fixture_corpus,
        log,
        [
            ("submit_answer", {"answer": "A", "reasoning": "r"}),
            READ_B,
            THINK,
            ("submit_answer", {"answer": "B", "reasoning": "again"}),
        ],
        30,
    )
    assert [r.structured_content["outcome"] for r in results] == [
        "ok",
        "session_ended",
        "session_ended",
        "session_ended",
    ]
    assert all(c["cost"] == 0 for c in calls(log)) and session.answer == "A"
    ends = [r for r in read_records(log) if r["kind"] == "session_end"]
    assert [(e["termination"], e["answer"]) for e in ends] == [("answer", "A")]


def _lock_came_free(lock, within_s: float = 60) -> bool:
    if not lock.acquire(timeout=within_s):
        return False
    lock.release()
    return True


async def test_a_call_past_its_deadline_answers_at_once_and_is_still_logged(fixture_corpus, tmp_path):
    import anyio
    from mcp import Client

    from agenthop.server.log.checkpoint import CheckpointLog
    from agenthop.server.transport.mcp_app import build_server, make_sandbox

    log_path = tmp_path / "log.sqlite"
    log = CheckpointLog(log_path)
    sandbox = make_sandbox(fixture_corpus, log, Caps())
    sandbox.call_deadline_s = 0.2
    session = sandbox.fixed_session = sandbox.sessions.create(sandbox.scope("st_0001"))
    async with Client(build_server(sandbox)) as client:
        with session._lock:  # the call cannot start until we let go: it is stuck past its deadline
            result = await client.call_tool(*READ_B)
        assert result.is_error and result.structured_content["outcome"] == "timeout"
        assert "did not finish read_section within 0.2 s" in text(result)
        assert text(result).endswith("[Budget used: 0/30 (30 left)]") and result.structured_content["cost"] == 0
        with anyio.fail_after(60):  # the abandoned call still completes, is charged and logged
            while not calls(log_path):
                await anyio.sleep(0.01)
            # The call writes its record before it charges the session, both under the session's lock: the
            # row being visible says the call holds the lock, so the lock coming free says it has charged.
            assert await anyio.to_thread.run_sync(_lock_came_free, session._lock)
    assert [(c["outcome"], c["cost"]) for c in calls(log_path)] == [("ok", 5)]
    assert session.spent == 5
    log.close()


async def test_the_rejection_that_ends_the_session_does_not_ask_for_an_answer(fixture_corpus, tmp_path):
    results, session = await run_calls(fixture_corpus, tmp_path / "log.sqlite", [INFO_A, READ_B, READ_B], 4)
    first, ending = text(results[1]), text(results[2])
    assert "Call submit_answer now" in first and "another rejected call in a row ends the session" in first
    assert "Call submit_answer now" not in ending
    assert "second budget-rejected call in a row, so the session has ended (budget)" in ending
    assert session.termination == "budget"


async def test_the_spent_budget_notice_stands_apart_from_the_papers_text(fixture_corpus, tmp_path):
    results, _ = await run_calls(fixture_corpus, tmp_path / "log.sqlite", [READ_B], 5)
    body = "We train on 4,096 examples and reach 81.5% accuracy on the held-out split."
    assert text(results[0]) == (
        f"=== (C) Experiments — Paper B ===\n\n{body}\n\n=== End of (C) Experiments ===\n\n"
        "[Budget spent: you must call submit_answer now with your best answer.]\n\n[Budget used: 5/5 (0 left)]"
    )


async def test_an_explore_session_with_a_budget_is_never_told_to_submit(fixture_corpus, tmp_path):
    async with session_client(fixture_corpus, tmp_path / "log.sqlite", None, caps=Caps(1, None, None)) as (client, _):
        spent = await client.call_tool(*INFO_A)
        rejected = await client.call_tool(*INFO_A)
    assert "[Budget spent: calls that cost points will be rejected from now on.]" in text(spent)
    assert rejected.structured_content["outcome"] == "budget_rejected" and "submit_answer" not in text(rejected)
