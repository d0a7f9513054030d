"""Play: a person attempts an item through a web page, under the same budget and rules as any agent.

The page (``static/`` beside this module) talks to a thin JSON API under ``/play/api``. Every
tool call goes through ``Sandbox.call`` and so ``Session.call``: the metering,
budget rejections, endings and checkpoint records of an MCP ``tools/call``.

Why a thin API and not MCP JSON-RPC from the page: the page would have to
re-implement an MCP client (the 2026-07-28 request envelope, or the legacy
``initialize`` handshake) in hand-written JavaScript, and follow the SDK's wire
changes; the budget is not in that layer anyway. The rules live in
``Session.call``, which both paths reach with the same arguments and ``_meta``.

What this module adds is what a runner adds for a model:

* a run label and client info: ``client.name = "human"`` plus the participant,
  so the scorer scores people and models the same way;
* turns: one person action is one turn, sent as ``_meta`` ``agenthop/turn``;
  after ``max_turns`` actions without an ending the session ends as
  ``max_turns`` (the runner enforces that cap for models in the same way);
  a person has no tokens, so play sessions have no token cap;
* the item list of a study and "the next item this participant has not played",
  read from the checkpoint log.

Each participant's attempts belong to one browser (server/play/keys.py): it gets a random key in a cookie
(``agenthop-play-<participant>``, HttpOnly, SameSite=Strict), and every request that lists that participant's
attempts, starts one or acts on one must carry it. Knowing a name (or a session ID) is not enough: a play session
answers to nothing but these routes (MCP and the session API refuse it). A listing holds a free name in memory only;
the first attempt keeps the name in the log database for good, so a restart keeps it. The key moves to another
browser only when a person types it there (``POST /play/api/key``). With a participant fixed by the server
(``--participant``) there is nobody to tell apart, and no key is asked. Study mode (study.py, study_gate.py) adds
enrolment with a code and consent, each participant's own items in a seeded order, and a time limit.

No gold reaches the page: the corpus connection the tools use cannot read gold
tables, and this module opens one that can only when the server was started
with ``reveal`` (then only an ended play session's correct option and gold
papers are shown).
"""

from __future__ import annotations

import json
import re
import secrets
import sqlite3
import threading
import time
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

import agenthop
from agenthop.server.caps import Caps
from agenthop.server.corpus_schema import open_corpus
from agenthop.server.log.checkpoint import LogError
from agenthop.server.play.keys import KeyStore, digest
from agenthop.server.play.study import Study
from agenthop.server.play.study_gate import StudyGate
from agenthop.server.sessions import META_TURN, PLAY_CLIENT, Session
from agenthop.server.task import LETTERS, task_text
from agenthop.server.tools import TOOLS
from agenthop.server.transport.mcp_app import Sandbox
from agenthop.server.transport.web import BodyError, json_body

HUMAN_CLIENT = PLAY_CLIENT
PARTICIPANT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
ASSETS = {
    "play.js": "text/javascript",
    "play.css": "text/css",
    "icon.svg": "image/svg+xml",
    "study.js": "text/javascript",
    "study.css": "text/css",
}
# The page needs nothing but its own origin: no inline code, no other hosts, no framing.
HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


KEY_COOKIE = "agenthop-play-"  # + participant
KEY_FORM = re.compile(r"[A-Za-z0-9_-]{32,64}")
KEY_AGE_S = 30 * 24 * 3600


class PlayError(ValueError):
    """A play request that cannot be served; ``status`` is its HTTP status."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


class PlayOptionsError(ValueError):
    """A PlayOptions field that cannot be used; ``field`` names it (``items`` or ``participant``)."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class PlayOptions:
    """How /play behaves on this server.

    ``items``: the item IDs a person may play, in order (None: every item of the corpus).
    ``participant``: fixes the participant for every session (None: the page asks).
    ``reveal``: show the correct option and gold papers once a session has ended (off for studies).
    ``run``: the run label of every play session (None: ``human-<participant>``).
    ``study``: study mode: enrolment with a code and consent, each participant's own items and order, a time limit.
    """

    items: tuple[str, ...] | None = None
    participant: str | None = None
    reveal: bool = False
    run: str | None = None
    study: Study | None = None  # study mode (server/play/study.py): its items replace ``items``


def check_participant(value: object) -> str:
    if not isinstance(value, str) or not PARTICIPANT.fullmatch(value):
        raise PlayError(
            400,
            "participant must be 1-64 characters: letters, digits, '.', '_' or '-', starting with a "
            f"letter or digit; got {str(value)[:80]!r}",
        )
    return value


def attempts(log_path: Path, participant: str) -> dict[str, list[tuple[str, bool]]]:
    """This participant's attempts in the checkpoint log (any run label): item -> [(session ID, ended)] in start order."""
    if not Path(log_path).exists():
        return {}
    conn = sqlite3.connect(f"file:{log_path}?mode=ro", uri=True)
    try:
        rows = conn.execute(
            "SELECT s.item_id, s.session_id, EXISTS(SELECT 1 FROM records e WHERE e.session_id = s.session_id "
            "AND e.kind = 'session_end') FROM records s WHERE s.kind = 'session_start' AND s.item_id IS NOT NULL "
            "AND json_extract(s.record, '$.client.name') = ? AND json_extract(s.record, '$.client.participant') = ? ORDER BY s.id",
            (HUMAN_CLIENT, participant),
        )
        out: dict[str, list[tuple[str, bool]]] = {}
        for item_id, session_id, ended in rows:
            out.setdefault(item_id, []).append((session_id, bool(ended)))
        return out
    finally:
        conn.close()


def played_items(log_path: Path, participant: str) -> set[str]:
    """Items this participant has finished an attempt at (the log holds its end). An attempt cut short by a server
    restart never ended: its item is not played."""
    return {item for item, tries in attempts(log_path, participant).items() if any(ended for _, ended in tries)}


def _static(name: str) -> str:
    return resources.files("agenthop.server.play").joinpath("static", name).read_text(encoding="utf-8")


@dataclass
class PlaySession:
    """A play session and its turn counter; one action at a time (the lock), as one person acts."""

    session: Session
    participant: str
    turns: int = 0
    started: float = field(default_factory=time.time)  # when the attempt started: a study's time limit counts from it
    timed_out: bool = False  # ended by a study's time limit (the page says so rather than "you gave up")
    lock: anyio.Lock = field(default_factory=anyio.Lock)
    # What each action returned, so that a page opened again (a closed tab, another browser) can show the attempt.
    history: list[dict] = field(default_factory=list)

    @property
    def reads(self) -> int:
        """Sections delivered: executed read_section calls that found their section."""
        return sum(1 for h in self.history if h["tool"] == "read_section" and h["data"].get("outcome") == "ok")


class Reveal:
    """The correct option and gold papers of an item, from a gold-reading connection opened only for reveal."""

    def __init__(self, corpus_path: Path):
        self.path = corpus_path
        self._local = threading.local()

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = open_corpus(self.path, allow_gold=True)
        return conn

    def of(self, item_id: str) -> dict:
        conn = self._conn()
        correct_index, gold_ids = conn.execute(
            "SELECT correct_index, gold_paper_ids FROM gold_items WHERE item_id = ?", (item_id,)
        ).fetchone()
        papers = []
        for pid in json.loads(gold_ids or "[]"):
            row = conn.execute("SELECT title FROM papers WHERE paper_id = ?", (pid,)).fetchone()
            papers.append({"paper_id": pid, "title": row[0] if row else None})
        return {"correct": LETTERS[int(correct_index)], "papers": papers}


class Play:
    """The play API over one sandbox."""

    def __init__(self, sandbox: Sandbox, options: PlayOptions):
        self.sandbox = sandbox
        self.options = options
        if options.study is not None and (options.reveal or options.participant is not None):
            raise PlayOptionsError("study", "a study neither reveals answers nor fixes one participant")
        if options.study is not None:
            self.items = list(options.study.items)
        else:
            self.items = list(options.items) if options.items is not None else sandbox.corpus.item_ids()
        unknown = [i for i in self.items if sandbox.corpus.item(i) is None]
        if unknown:
            raise PlayOptionsError(
                "items", f"{len(unknown)} item(s) of the play list are not in the corpus: {', '.join(unknown[:5])}"
            )
        if options.participant is not None:
            try:
                check_participant(options.participant)
            except PlayError as exc:
                raise PlayOptionsError("participant", str(exc)) from exc
        self.reveal = Reveal(sandbox.corpus.path) if options.reveal else None
        # Who holds each name (server/play/keys.py): lasting claims in the log database, listings' in memory.
        self.keys = KeyStore(sandbox.sessions.log.path, sandbox.sessions.live_kept, sandbox.sessions.log.write_wait_s)
        self.study = None if options.study is None else StudyGate(options.study, self.keys, self._cell_of, PlayError)

    def _cell_of(self, item_id: str) -> tuple[str, int]:
        item = self.sandbox.corpus.item(item_id)
        assert item is not None  # the play list was checked against the corpus at start-up
        return item.question_type, item.depth

    def items_for(self, participant: str) -> list[str]:
        """The items this participant may play, in order: the study's assignment, else the server's list."""
        return self.study.items_for(participant) if self.study is not None else self.items

    # --- whose browser -------------------------------------------------------------------------------

    def owner_key(self, participant: str, presented: str | None, *, lasting: bool = False, study: str | None = None):
        """The key this request proves it holds for ``participant``, or None when the server fixes the participant.

        A free name is claimed: in memory only for a listing, for good (``lasting``: an attempt, an enrolment) in the
        log database. PlayError 403 when another browser holds the name, or when the log holds attempts under it
        that no kept key can vouch for. Reads and may write the log database: call it off the event loop."""
        if self.options.participant is not None:
            return None
        presented = presented if presented and KEY_FORM.fullmatch(presented) else None
        with self.keys.lock:
            held = self.keys.kept(participant)
            if held is not None:
                if self.keys.matches(held, presented):
                    return presented
                raise self._in_use(participant)
            held = self.keys.provisional(participant)
            if held is not None and not self.keys.matches(held, presented):
                raise self._in_use(participant)
            if held is None and self._attempts(participant):
                raise PlayError(
                    403,
                    f"participant {participant} has attempts in this log from a server that kept no key for the name "
                    "(an older version, or a server started for one participant), so nobody can prove it is theirs: choose another name",
                )
            key = presented or secrets.token_urlsafe(32)
            if lasting:
                self.keys.keep(participant, digest(key), study)
            elif held is None:
                self.keys.reserve(participant, digest(key))
            return key

    @staticmethod
    def _in_use(participant: str) -> PlayError:
        return PlayError(
            403,
            f"participant {participant} is in use in another browser on this server, and only that browser "
            f"can list, start or act on {participant}'s attempts. To continue as {participant} here, enter "
            f"{participant}'s key (the other browser shows it under 'Your key'); otherwise choose another name",
        )

    def adopt_key(self, participant: str, key: object) -> str:
        """A key typed into another browser: the same key when it is the participant's, PlayError 403 otherwise."""
        if self.options.participant is not None:
            raise PlayError(400, "this server fixes the participant: there is no key to enter")
        if not isinstance(key, str) or not KEY_FORM.fullmatch(key.strip()):
            raise PlayError(
                400, "key: paste the key the other browser shows under 'Your key' (32-64 letters, digits, '_' or '-')"
            )
        with self.keys.lock:
            held = self.keys.kept(participant) or self.keys.provisional(participant)
        if held is None or not self.keys.matches(held, key.strip()):
            raise PlayError(403, f"that is not {participant}'s key on this server")
        return key.strip()

    @property
    def caps(self) -> Caps:
        """The server's item caps, without a token cap: a person has no tokens to count."""
        defaults = self.sandbox.sessions.defaults
        return Caps(defaults.budget, defaults.max_turns, None)

    def participant(self, value: object) -> str:
        return self.options.participant if self.options.participant is not None else check_participant(value)

    def _attempts(self, participant: str) -> dict[str, list[tuple[str, bool]]]:
        return attempts(self.sandbox.sessions.log.path, participant)

    def _live(self, tries: dict[str, list[tuple[str, bool]]]) -> dict[str, str]:
        """item -> session ID of the participant's unended attempts this server process started (resumable, from
        memory or the log); an unended attempt another process started was cut short by a restart."""
        minted_here = self.sandbox.sessions.minted_here
        return {
            item: sid for item, started in tries.items() for sid, ended in started if not ended and minted_here(sid)
        }

    def _status(self, item_id: str, tries: list[tuple[str, bool]], live: dict[str, str]) -> str:
        if any(ended for _, ended in tries):
            return "finished"
        if item_id in live:
            return "in_progress"
        return "cut_short" if tries else "not_played"

    # --- item list -------------------------------------------------------------------------------------

    def config(self) -> dict:
        # Where attempts are logged and which corpus scores them: the end screen gives the scoring command.
        return {
            "participant": self.options.participant,
            "reveal": self.options.reveal,
            "caps": self.caps.as_dict(),
            "tools": [{"name": name, "cost": tool.cost} for name, tool in TOOLS.items()],
            "version": agenthop.__version__,
            "log": str(Path(self.sandbox.sessions.log.path).resolve()),
            "corpus": str(Path(self.sandbox.corpus.path).resolve()),
            "study": self.study.study.public() if self.study is not None else None,
        }

    async def item_list(self, participant: str) -> dict:
        """The play list with this participant's status on each item: ``not_played``, ``in_progress`` (resume it),
        ``cut_short`` (started, never ended, and unknown to this server process: it restarted) or ``finished``.
        ``next`` is the first item neither finished nor in progress."""
        tries = await anyio.to_thread.run_sync(self._attempts, participant)
        live = self._live(tries)
        rows = []
        for item_id in await anyio.to_thread.run_sync(self.items_for, participant):
            item = self.sandbox.corpus.item(item_id)
            assert item is not None  # the play list was checked against the corpus at start-up
            status = self._status(item_id, tries.get(item_id, []), live)
            rows.append(
                {
                    "item_id": item_id,
                    "seed_title": item.seed_title,
                    "question": item.question,
                    "status": status,
                    "played": status == "finished",
                    "session_id": live.get(item_id),
                    # With reveal on, a finished attempt showed its answer: the item cannot measure this person again.
                    "replayable": not (self.reveal is not None and status == "finished"),
                }
            )
        return {
            "participant": participant,
            "items": rows,
            "reveal": self.options.reveal,
            "next": next((r["item_id"] for r in rows if r["status"] in ("not_played", "cut_short")), None),
        }

    # --- sessions ------------------------------------------------------------------------------------

    async def create(self, body: dict) -> dict:
        """A new attempt, or the participant's attempt at that item this process is still running (resumed)."""
        participant = self.participant(body.get("participant"))
        item_id = body.get("item")
        tries = await anyio.to_thread.run_sync(self._attempts, participant)
        live = self._live(tries)
        mine = await anyio.to_thread.run_sync(self.items_for, participant)
        upcoming = next(
            (i for i in mine if self._status(i, tries.get(i, []), live) in ("not_played", "cut_short")), None
        )
        if self.study is not None and item_id is not None and item_id not in live and item_id != upcoming:
            raise PlayError(
                409,
                f"in study {self.study.study.id} your items come in the order set for you: "
                + (f"the next one is {upcoming}" if upcoming else "you have played them all"),
            )
        if item_id is None:
            item_id = upcoming
            if item_id is None:
                unfinished = sorted(live)
                raise PlayError(
                    409,
                    f"participant {participant} has played every item of this list"
                    + (
                        f" or has an attempt in progress ({', '.join(unfinished)}): resume it from the list"
                        if unfinished
                        else ""
                    ),
                )
        elif not isinstance(item_id, str) or item_id not in mine:
            raise PlayError(404, f"item {str(item_id)[:100]!r} is not in this server's play list")
        if item_id in live:
            return await self.state(live[item_id])
        if self.reveal is not None and any(ended for _, ended in tries.get(item_id, [])):
            raise PlayError(
                409,
                f"participant {participant} has finished item {item_id} and this server shows the correct "
                "answer after an attempt: another attempt would not measure anything; choose another item",
            )
        client: dict[str, object] = {"name": HUMAN_CLIENT, "participant": participant, "version": agenthop.__version__}
        if self.study is not None:
            client["study"] = await anyio.to_thread.run_sync(self.study.client_info, participant, item_id)
        run = self.options.run or f"human-{participant}"
        # session_start is an fsync'd write: off the event loop.
        session = await anyio.to_thread.run_sync(
            lambda: self.sandbox.sessions.create(
                self.sandbox.scope(item_id), run=run, caps=self.caps, client=client, transport="http"
            )
        )
        session.attached["play"] = PlaySession(session, participant, started=time.time())
        return await self.state(session.session_id)

    async def _get(self, session_id: str) -> PlaySession:
        # Held with its session in the registry, so play sessions are bounded like any other; one that left
        # memory comes back from the log with its budget and turn count (every action's record carries its turn),
        # but not the text of earlier results, which the log does not keep.
        session = self.sandbox.sessions.get(session_id)
        if session is None:
            session = await anyio.to_thread.run_sync(self.sandbox.sessions.revive, session_id, self.sandbox.scope)
        if session is None or session.client.get("name") != HUMAN_CLIENT:
            raise PlayError(404, await anyio.to_thread.run_sync(self._lost, session_id))
        play = session.attached.get("play")
        if play is None:
            turns, started = await anyio.to_thread.run_sync(self._turns, session_id)
            participant = session.client.get("participant")
            # Only /play makes sessions of this client name (POST /sessions refuses it), always with a participant.
            assert isinstance(participant, str)
            play = session.attached.setdefault("play", PlaySession(session, participant, turns, started=started))
        if self.study is not None and not session.ended and self.study.time_left(play.started) == 0:
            async with play.lock:  # the study's time for the item ran out: the attempt ends before anything else
                if not session.ended:
                    play.timed_out = await self.sandbox.end(session, "abandoned", self.study.time_up_reason())
        return play

    def _turns(self, session_id: str) -> tuple[int, float]:
        """(turns so far, start time) of a session, from the log."""
        records = self.sandbox.sessions.log.session_records(session_id)
        turns = [r.get("turn") for r in records if r.get("kind") == "call"]
        started = next((r["time"] for r in records if r.get("kind") == "session_start"), time.time())
        return max((t for t in turns if isinstance(t, int)), default=0), started

    def _lost(self, session_id: str) -> str:
        """Why a session cannot be had from this process, in words a person can act on."""
        try:
            records = self.sandbox.sessions.log.session_records(session_id) if len(session_id) <= 100 else []
        except LogError:
            records = []
        if not records:
            return "unknown play session; start a new one"
        start = records[0]
        if any(r.get("kind") == "session_end" for r in records):
            return f"this attempt at {start.get('item_id')} has ended, and the server was restarted since"
        return (
            f"your attempt at {start.get('item_id')} was cut short: the server was restarted during it, and an "
            "attempt lives only as long as the server process. It does not count as played: start the item again"
        )

    async def state(self, session_id: str) -> dict:
        play = await self._get(session_id)
        session = play.session
        item_id = session.item_id
        assert item_id is not None  # an attempt is always at an item of the play list, which is in the corpus
        item = self.sandbox.corpus.item(item_id)
        assert item is not None
        out: dict[str, Any] = {
            "session_id": session.session_id,
            "item_id": session.item_id,
            "run": session.run,
            "participant": play.participant,
            "task": task_text(item, session.caps, session.enabled_tools()),
            "seed": {"paper_id": item.seed_paper_id, "title": item.seed_title},
            "question": item.question,
            "options": item.options,
            "caps": session.caps.as_dict(),
            "turns": play.turns,
            "budget_used": session.spent,
            "ended": session.ended,
            "termination": session.termination,
            "answer": session.answer,
            "reads": play.reads,
        }
        if self.study is not None:
            out["time_limit_s"] = self.study.study.time_limit_s
            out["time_left_s"] = None if session.ended else self.study.time_left(play.started)
            out["time_up"] = play.timed_out
        if session.ended and self.reveal is not None:
            out["reveal"] = await anyio.to_thread.run_sync(self.reveal.of, item_id)
        return out

    async def call(self, session_id: str, body: dict) -> dict:
        play = await self._get(session_id)
        tool, arguments = body.get("tool"), body.get("arguments", {})
        if not isinstance(tool, str) or not isinstance(arguments, dict):
            raise PlayError(400, 'the body must be {"tool": name, "arguments": {...}}')
        async with play.lock:
            session = play.session
            play.turns += 1
            result = await self.sandbox.call(session, tool, arguments, {META_TURN: play.turns})
            cap = session.caps.max_turns
            if cap is not None and play.turns >= cap and not session.ended:
                try:
                    await self.sandbox.end(session, "max_turns", f"turn cap reached ({cap} actions)")
                except LogError:
                    pass  # the call ran and is logged: its result is the person's; the next action ends the session
            play.history.append(
                {
                    "tool": tool,
                    "arguments": arguments,
                    "turn": play.turns,
                    "text": result.text,
                    "data": result.data,
                    "is_error": result.is_error,
                }
            )
            state = await self.state(session_id)
        return {"text": result.text, "data": result.data, "is_error": result.is_error, **state}

    async def history(self, session_id: str) -> dict:
        """The state and every action's result so far: what a page needs to show an attempt it did not start."""
        play = await self._get(session_id)
        return {**await self.state(session_id), "history": list(play.history)}

    async def give_up(self, session_id: str) -> dict:
        play = await self._get(session_id)
        async with play.lock:
            ended = await self.sandbox.end(play.session, "abandoned", "the person gave up")
        if not ended:
            raise PlayError(409, f"the session has already ended ({play.session.termination})")
        return await self.state(session_id)


def _json(data: dict, status: int = 200) -> JSONResponse:
    return JSONResponse(data, status_code=status, headers=HEADERS)


def _api(handler):
    """Run a handler, turning bad bodies, PlayErrors and an unwritable log into JSON errors."""

    async def endpoint(request: Request) -> Response:
        try:
            return await handler(request)
        except BodyError as exc:
            return _kept(request, _json({"error": str(exc)}, exc.status))
        except PlayError as exc:
            return _kept(request, _json({"error": str(exc)}, exc.status))
        except LogError as exc:  # nothing took effect: starting or ending a session writes its record first
            return _kept(request, _json({"error": f"{exc}; try again shortly"}, 503))

    return endpoint


def _kept(request: Request, response: Response) -> Response:
    """An error answer still hands over a key the request claimed, so the name stays this browser's."""
    held = getattr(request.state, "play_key", None)
    return _with_key(response, *held) if held else response


async def _object_body(request: Request) -> dict:
    body = await json_body(request)
    if not isinstance(body, dict):
        raise PlayError(400, "the body must be a JSON object")
    return body


def _with_key(response: Response, participant: str, key: str | None) -> Response:
    """Keep (or refresh) the participant's key in this browser: a cookie scripts cannot read, sent only to /play."""
    if key is not None:
        response.set_cookie(
            KEY_COOKIE + participant, key, max_age=KEY_AGE_S, path="/play", httponly=True, samesite="strict"
        )
    return response


def play_routes(sandbox: Sandbox, options: PlayOptions) -> list[Route]:
    play = Play(sandbox, options)

    async def key_for(request: Request, participant: str, *, lasting: bool = False) -> str | None:
        presented = request.cookies.get(KEY_COOKIE + participant)
        key = await anyio.to_thread.run_sync(lambda: play.owner_key(participant, presented, lasting=lasting))
        request.state.play_key = (participant, key)
        return key

    async def owned(request: Request) -> tuple[str, str, str | None]:
        """(session ID, participant, key) of a session this request's browser holds; PlayError 403 otherwise."""
        session_id = request.path_params["session_id"]
        participant = (await play._get(session_id)).participant
        return session_id, participant, await key_for(request, participant)

    async def page(request: Request) -> Response:
        return Response(_static("index.html"), media_type="text/html; charset=utf-8", headers=HEADERS)

    async def asset(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in ASSETS:
            return _json({"error": f"no such asset; assets are {sorted(ASSETS)}"}, 404)
        return Response(_static(name), media_type=f"{ASSETS[name]}; charset=utf-8", headers=HEADERS)

    async def config(request: Request) -> Response:
        return _json(play.config())

    async def items(request: Request) -> Response:
        participant = play.participant(request.query_params.get("participant"))
        if play.study is not None:
            await anyio.to_thread.run_sync(play.study.require_enrolled, participant)
        key = await key_for(request, participant)
        listing = await play.item_list(participant)
        return _with_key(_json({**listing, "key": key}), participant, key)

    async def adopt(request: Request) -> Response:
        body = await _object_body(request)
        participant = play.participant(body.get("participant"))
        key = play.adopt_key(participant, body.get("key"))
        return _with_key(_json({"participant": participant, "key": key}), participant, key)

    async def create(request: Request) -> Response:
        body = await _object_body(request)
        participant = play.participant(body.get("participant"))
        if play.study is not None:
            await anyio.to_thread.run_sync(play.study.require_enrolled, participant)
        key = await key_for(request, participant, lasting=True)  # an attempt makes the name this browser's for good
        return _with_key(_json(await play.create(body), 201), participant, key)

    async def state(request: Request) -> Response:
        session_id, participant, key = await owned(request)
        return _with_key(_json(await play.history(session_id)), participant, key)

    async def call(request: Request) -> Response:
        session_id, participant, key = await owned(request)
        return _with_key(_json(await play.call(session_id, await _object_body(request))), participant, key)

    async def give_up(request: Request) -> Response:
        session_id, participant, key = await owned(request)
        return _with_key(_json(await play.give_up(session_id)), participant, key)

    async def enrol(request: Request) -> Response:
        """Study mode: the code, the consent and a name make the name this browser's; the same again is harmless."""
        gate = play.study
        assert gate is not None  # the route exists only in study mode
        body = await _object_body(request)
        participant = play.participant(body.get("participant"))
        gate.check_enrolment(participant, body.get("code"), body.get("consent"))
        presented = request.cookies.get(KEY_COOKIE + participant)
        study_id = gate.study.id
        key = await anyio.to_thread.run_sync(
            lambda: play.owner_key(participant, presented, lasting=True, study=study_id)
        )
        request.state.play_key = (participant, key)
        if not await anyio.to_thread.run_sync(gate.enrolled, participant):
            raise PlayError(403, f"{participant} already takes part on this server outside study {study_id}")
        return _with_key(_json({"participant": participant, "key": key, "study": study_id}), participant, key)

    async def study_info(request: Request) -> Response:
        # The study page's own settings (study.js), apart from /play/api/config, which play.js reads.
        return _json({"study": play.study.study.public() if play.study is not None else None})

    study_routes = [Route("/play/api/study", _api(study_info), methods=["GET"])]
    if play.study is not None:
        study_routes.append(Route("/play/api/study/enrol", _api(enrol), methods=["POST"]))
    return study_routes + [
        Route("/play", page, methods=["GET"]),
        Route("/play/assets/{name}", asset, methods=["GET"]),
        Route("/play/api/config", _api(config), methods=["GET"]),
        Route("/play/api/items", _api(items), methods=["GET"]),
        Route("/play/api/key", _api(adopt), methods=["POST"]),
        Route("/play/api/sessions", _api(create), methods=["POST"]),
        Route("/play/api/sessions/{session_id}", _api(state), methods=["GET"]),
        Route("/play/api/sessions/{session_id}/call", _api(call), methods=["POST"]),
        Route("/play/api/sessions/{session_id}/end", _api(give_up), methods=["POST"]),
    ]
