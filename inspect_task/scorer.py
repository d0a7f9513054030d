"""Inspect's view of the result: the letter the session recorded, against the item's correct letter.

The answer is the server's (``GET /sessions/{id}``, kept in the sample's store), not
a letter parsed from the model's text, so Inspect's accuracy and the AgentHop
scorer's accuracy count the same answers; a session that ended without an answer
counts as wrong in both. The store is part of the Inspect log, so
``inspect score LOG --scorer agenthop/agenthop_answer`` re-scores a log without the server.
"""

from __future__ import annotations

from inspect_ai.scorer import CORRECT, INCORRECT, Score, Scorer, Target, accuracy, scorer, stderr
from inspect_ai.solver import TaskState

from agenthop.inspect_task.record import AgentHopSession


@scorer(metrics=[accuracy(), stderr()])
def agenthop_answer() -> Scorer:
    """CORRECT when the answer submitted to the AgentHop session is the target letter."""

    async def score(state: TaskState, target: Target) -> Score:
        session = state.store_as(AgentHopSession)
        answer = session.answer
        ended = f"ended by {session.termination}" if session.termination else "never ended"
        if answer is None:
            explanation = f"No answer submitted: session {session.session_id} {ended}."
        else:
            explanation = (
                f"Submitted {answer}; the correct option is {target.text}. Session {session.session_id} {ended}."
            )
        return Score(
            value=CORRECT if answer is not None and answer == target.text else INCORRECT,
            answer=answer,
            explanation=explanation,
            metadata=session.model_dump(exclude={"store", "instance"}),
        )

    return score
