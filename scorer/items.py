"""A run's item set and, per item, the session that counts, its answer, termination and resources.

Rules (docs/scoring.md):

* The item set is every item with an item-mode ``session_start`` plus every item
  named in runner records, or exactly the items of ``--items FILE`` when given.
* With several sessions for one item (retries), the last session that has a
  ``session_end`` counts, else the last one.
* Answer: the ``session_end`` answer, else the last ``ok`` submit_answer call.
* Termination: the runner's ``item_end`` for that session when present, else the
  ``session_end`` record, else ``abandoned``. An item without any session log is
  ``unobservable`` and counts as wrong.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agenthop.scorer.gold import Gold, GoldItem
from agenthop.scorer.logs import Call, Run, Session
from agenthop.server.log.structs import ItemEnd, Turn


@dataclass
class ItemOutcome:
    item_id: str
    gold: GoldItem
    session: Session | None
    n_sessions: int = 0
    item_end: ItemEnd | None = None
    turn_records: list[Turn] = field(default_factory=list)

    @property
    def observed(self) -> bool:
        return self.session is not None

    @property
    def calls(self) -> list[Call]:
        return self.session.calls if self.session else []

    @property
    def answer(self) -> str | None:
        return self.session.answer if self.session else None

    @property
    def predicted_index(self) -> int | None:
        a = self.answer
        if a and len(a) == 1 and "A" <= a <= "Z":
            return ord(a) - ord("A")
        return None

    @property
    def correct(self) -> bool:
        return self.observed and self.predicted_index == self.gold.correct_index

    @property
    def termination(self) -> str:
        if self.session is None:  # not observed
            return "unobservable"
        if self.item_end is not None:
            return self.item_end.termination
        return self.session.termination

    # -- resources: (value, source) -------------------------------------
    def tokens(self) -> tuple[int | None, str | None]:
        if not self.observed:
            return None, None
        if self.item_end is not None and self.item_end.total_tokens is not None:
            return self.item_end.total_tokens, "runner.item_end"
        cum = [t.cumulative_tokens for t in self.turn_records if t.cumulative_tokens is not None]
        if cum:
            return max(cum), "runner.turn"
        meta = [c.tokens for c in self.calls if c.tokens is not None]
        if meta:
            return max(meta), "checkpoint._meta"
        return None, None

    def turns(self) -> tuple[int | None, str | None]:
        if not self.observed:
            return None, None
        if self.item_end is not None and self.item_end.turns is not None:
            return self.item_end.turns, "runner.item_end"
        if self.turn_records:
            return len(self.turn_records), "runner.turn"
        meta = [c.turn for c in self.calls if c.turn is not None]
        if meta:
            return max(meta), "checkpoint._meta"
        return None, None

    def budget(self) -> int | None:
        if self.session is None:  # not observed
            return None
        if self.session.end is not None:
            return self.session.end.budget_used
        if self.item_end is not None and self.item_end.budget_used is not None:
            return self.item_end.budget_used
        afters = [c.budget_after for c in self.calls if c.executed and c.budget_after is not None]
        if afters:
            return max(afters)
        return sum(c.cost for c in self.calls if c.executed)

    def cost_usd(self) -> float | None:
        return self.item_end.cost_usd if self.item_end is not None else None

    def call_turns(self, source: str | None) -> tuple[int, int, int]:
        """(tool calls, assistant turns, assistant turns without calls) from the chosen source.

        Runner records: every ``turn`` record is a model response, and its
        ``tool_calls`` are the calls the model emitted (malformed ones, which never
        reach the server, and those discarded at the token cap included). A record
        with no tool calls and an ``error`` is a response that failed (the runner's
        "empty response" hard error) and is not an assistant turn, except the last
        turn of a session the runner ended at the token cap (a real text response).

        Checkpoint ``turn`` fields: the calls the model issued (``forced`` calls left
        out) over the largest turn number seen (turns are numbered from 1, so a
        text-only turn before a later call still counts; text-only turns after the
        last call are invisible).
        """
        if source == "runner":
            token_cap_turn = None
            if self.termination == "token_limit" and self.turn_records:
                token_cap_turn = self.turn_records[-1].turn
            calls = [
                len(t.tool_calls) for t in self.turn_records if t.tool_calls or not t.error or t.turn == token_cap_turn
            ]
            return sum(calls), len(calls), sum(1 for n in calls if n == 0)
        if source == "checkpoint":
            model_calls = [c for c in self.calls if c.turn is not None and not c.forced]
            with_calls = len({c.turn for c in model_calls})
            numbered = [c.turn for c in self.calls if c.turn is not None]
            turns = max(max(numbered, default=0), with_calls)
            return len(model_calls), turns, turns - with_calls
        return 0, 0, 0


def resolve_items(run: Run, gold: Gold, expected: list[str] | None = None) -> tuple[list[ItemOutcome], dict]:
    """The run's items in corpus order, with the session that counts for each.

    Returns the outcomes and a dict of bookkeeping (unknown items, extras, retries).
    """
    by_item = run.item_sessions()
    runner_items: set[str] = set()
    item_ends: dict[str, list[ItemEnd]] = {}
    turns_by_session: dict[str, list[Turn]] = {}
    for rec in run.runner_records:
        iid = getattr(rec, "item_id", None)  # every kind but run_start names its item
        if not iid:
            continue
        runner_items.add(iid)
        if isinstance(rec, ItemEnd):
            item_ends.setdefault(iid, []).append(rec)
        elif isinstance(rec, Turn) and rec.session_id:
            turns_by_session.setdefault(rec.session_id, []).append(rec)
    logged = set(by_item) | runner_items
    info: dict = {"expected_from": "items file" if expected is not None else "logs"}
    if expected is not None:
        wanted = list(expected)
        info["not_in_items_file"] = sorted(logged - set(wanted))
    else:
        wanted = list(logged)
    unknown = sorted(i for i in wanted if i not in gold.items)
    info["unknown_to_corpus"] = unknown
    order = {iid: n for n, iid in enumerate(gold.items)}
    wanted = sorted((i for i in wanted if i in gold.items), key=order.__getitem__)
    outcomes: list[ItemOutcome] = []
    retried = 0
    for iid in wanted:
        sessions = by_item.get(iid, [])
        chosen = None
        if sessions:
            ended = [s for s in sessions if s.end is not None]
            chosen = ended[-1] if ended else sessions[-1]
        if len(sessions) > 1:
            retried += 1
        item_end = None
        if chosen is not None:
            matches = [r for r in item_ends.get(iid, []) if r.session_id == chosen.session_id]
            item_end = matches[-1] if matches else None
        turns = turns_by_session.get(chosen.session_id, []) if chosen is not None else []
        turns = sorted(turns, key=lambda t: t.turn)
        outcomes.append(
            ItemOutcome(
                item_id=iid,
                gold=gold.items[iid],
                session=chosen,
                n_sessions=len(sessions),
                item_end=item_end,
                turn_records=turns,
            )
        )
    info["items_with_retries"] = retried
    return outcomes, info
