"""Play: a person attempts an item through a web page, under the same budget and rules as any agent.

The page (``play_static/``) talks to a thin JSON API under ``/play/api``. Every
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

No gold reaches the page: the corpus connection the tools use cannot read gold
tables, and this module opens one that can only when the server was started
with ``reveal`` (then only an ended play session's correct option and gold
papers are shown).
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import threading
import webbrowser
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import anyio
import uvicorn
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

import agenthop
from agenthop.server.caps import Caps
from agenthop.server.checkpoint import CheckpointLog, LogError
from agenthop.server.corpus.schema import open_corpus
from agenthop.server.http import BodyError, _json_body, build_app, free_port, uvicorn_config
from agenthop.server.mcp_app import Sandbox, make_sandbox
from agenthop.server.sessions import META_TURN, Session
from agenthop.server.task import LETTERS, task_text
from agenthop.server.tools import TOOLS

HUMAN_CLIENT = "human"
PARTICIPANT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
ASSETS = {"play.js": "text/javascript", "play.css": "text/css", "icon.svg": "image/svg+xml"}
# The page needs nothing but its own origin: no inline code, no other hosts, no framing.
HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
                               "img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


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
    """

    items: tuple[str, ...] | None = None
    participant: str | None = None
    reveal: bool = False
    run: str | None = None


def check_participant(value: object) -> str:
    if not isinstance(value, str) or not PARTICIPANT.fullmatch(value):
        raise PlayError(400, "participant must be 1-64 characters: letters, digits, '.', '_' or '-', starting with a "
                             f"letter or digit; got {str(value)[:80]!r}")
    return value


def played_items(log_path: Path, participant: str) -> set[str]:
    """Items this participant has a session for in the checkpoint log (any run label; ended or not)."""
    if not Path(log_path).exists():
        return set()
    conn = sqlite3.connect(f"file:{log_path}?mode=ro", uri=True)
    try:
        rows = conn.execute(
            "SELECT DISTINCT item_id FROM records WHERE kind = 'session_start' AND item_id IS NOT NULL "
            "AND json_extract(record, '$.client.name') = ? AND json_extract(record, '$.client.participant') = ?",
            (HUMAN_CLIENT, participant),
        )
        return {item_id for (item_id,) in rows}
    finally:
        conn.close()


def _static(name: str) -> str:
    return resources.files("agenthop.server").joinpath("play_static", name).read_text(encoding="utf-8")


@dataclass
class PlaySession:
    """A play session and its turn counter; one action at a time (the lock), as one person acts."""

    session: Session
    participant: str
    turns: int = 0
    lock: anyio.Lock = field(default_factory=anyio.Lock)


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
            "SELECT correct_index, gold_paper_ids FROM gold_items WHERE item_id = ?", (item_id,)).fetchone()
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
        self.items = list(options.items) if options.items is not None else sandbox.corpus.item_ids()
        unknown = [i for i in self.items if sandbox.corpus.item(i) is None]
        if unknown:
            raise PlayOptionsError("items", f"{len(unknown)} item(s) of the play list are not in the corpus: {', '.join(unknown[:5])}")
        if options.participant is not None:
            try:
                check_participant(options.participant)
            except PlayError as exc:
                raise PlayOptionsError("participant", str(exc)) from exc
        self.reveal = Reveal(sandbox.corpus.path) if options.reveal else None

    @property
    def caps(self) -> Caps:
        """The server's item caps, without a token cap: a person has no tokens to count."""
        defaults = self.sandbox.sessions.defaults
        return Caps(defaults.budget, defaults.max_turns, None)

    def participant(self, value: object) -> str:
        return self.options.participant if self.options.participant is not None else check_participant(value)

    def _played(self, participant: str) -> set[str]:
        return played_items(self.sandbox.sessions.log.path, participant)

    # --- item list -------------------------------------------------------------------------------------

    def config(self) -> dict:
        return {"participant": self.options.participant, "reveal": self.options.reveal, "caps": self.caps.as_dict(),
                "tools": [{"name": name, "cost": tool.cost} for name, tool in TOOLS.items()],
                "version": agenthop.__version__}

    async def item_list(self, participant: str) -> dict:
        played = await anyio.to_thread.run_sync(self._played, participant)
        rows = []
        for item_id in self.items:
            item = self.sandbox.corpus.item(item_id)
            rows.append({"item_id": item_id, "seed_title": item.seed_title, "question": item.question,
                         "played": item_id in played})
        return {"participant": participant, "items": rows, "next": next((r["item_id"] for r in rows if not r["played"]), None)}

    # --- sessions ------------------------------------------------------------------------------------

    async def create(self, body: dict) -> dict:
        participant = self.participant(body.get("participant"))
        item_id = body.get("item")
        if item_id is None:
            played = await anyio.to_thread.run_sync(self._played, participant)
            item_id = next((i for i in self.items if i not in played), None)
            if item_id is None:
                raise PlayError(409, f"participant {participant} has played every item of this list")
        elif not isinstance(item_id, str) or item_id not in self.items:
            raise PlayError(404, f"item {str(item_id)[:100]!r} is not in this server's play list")
        client = {"name": HUMAN_CLIENT, "participant": participant, "version": agenthop.__version__}
        run = self.options.run or f"human-{participant}"
        # session_start is an fsync'd write: off the event loop.
        session = await anyio.to_thread.run_sync(lambda: self.sandbox.sessions.create(
            self.sandbox.scope(item_id), run=run, caps=self.caps, client=client, transport="http"))
        session.attached["play"] = PlaySession(session, participant)
        return await self.state(session.session_id)

    async def _get(self, session_id: str) -> PlaySession:
        # Held with its session in the registry, so play sessions are bounded like any other; one that left
        # memory comes back from the log, its turn count with it (every action's record carries its turn).
        session = self.sandbox.sessions.get(session_id)
        if session is None:
            session = await anyio.to_thread.run_sync(self.sandbox.sessions.revive, session_id, self.sandbox.scope)
        if session is None or session.client.get("name") != HUMAN_CLIENT:
            raise PlayError(404, "unknown play session (sessions live as long as the server process); start a new one")
        play = session.attached.get("play")
        if play is None:
            turns = await anyio.to_thread.run_sync(self._turns, session_id)
            play = session.attached.setdefault("play", PlaySession(session, session.client.get("participant"), turns))
        return play

    def _turns(self, session_id: str) -> int:
        turns = [r.get("turn") for r in self.sandbox.sessions.log.session_records(session_id) if r.get("kind") == "call"]
        return max((t for t in turns if isinstance(t, int)), default=0)

    async def state(self, session_id: str) -> dict:
        play = await self._get(session_id)
        session = play.session
        item = self.sandbox.corpus.item(session.item_id)
        out = {
            "session_id": session.session_id, "item_id": session.item_id, "run": session.run,
            "participant": play.participant, "task": task_text(item, session.caps, session.enabled_tools()),
            "options": item.options, "caps": session.caps.as_dict(), "turns": play.turns, "budget_used": session.spent,
            "ended": session.ended, "termination": session.termination, "answer": session.answer,
        }
        if session.ended and self.reveal is not None:
            out["reveal"] = await anyio.to_thread.run_sync(self.reveal.of, session.item_id)
        return out

    async def call(self, session_id: str, body: dict) -> dict:
        play = await self._get(session_id)
        tool, arguments = body.get("tool"), body.get("arguments", {})
        if not isinstance(tool, str) or not isinstance(arguments, dict):
            raise PlayError(400, "the body must be {\"tool\": name, \"arguments\": {...}}")
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
            state = await self.state(session_id)
        return {"text": result.text, "data": result.data, "is_error": result.is_error, **state}

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
            return _json({"error": str(exc)}, exc.status)
        except PlayError as exc:
            return _json({"error": str(exc)}, exc.status)
        except LogError as exc:  # nothing took effect: starting or ending a session writes its record first
            return _json({"error": f"{exc}; try again shortly"}, 503)
    return endpoint


async def _object_body(request: Request) -> dict:
    body = await _json_body(request)
    if not isinstance(body, dict):
        raise PlayError(400, "the body must be a JSON object")
    return body


def play_routes(sandbox: Sandbox, options: PlayOptions) -> list[Route]:
    play = Play(sandbox, options)

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
        return _json(await play.item_list(play.participant(request.query_params.get("participant"))))

    async def create(request: Request) -> Response:
        return _json(await play.create(await _object_body(request)), 201)

    async def state(request: Request) -> Response:
        return _json(await play.state(request.path_params["session_id"]))

    async def call(request: Request) -> Response:
        return _json(await play.call(request.path_params["session_id"], await _object_body(request)))

    async def give_up(request: Request) -> Response:
        return _json(await play.give_up(request.path_params["session_id"]))

    return [
        Route("/play", page, methods=["GET"]),
        Route("/play/assets/{name}", asset, methods=["GET"]),
        Route("/play/api/config", _api(config), methods=["GET"]),
        Route("/play/api/items", _api(items), methods=["GET"]),
        Route("/play/api/sessions", _api(create), methods=["POST"]),
        Route("/play/api/sessions/{session_id}", _api(state), methods=["GET"]),
        Route("/play/api/sessions/{session_id}/call", _api(call), methods=["POST"]),
        Route("/play/api/sessions/{session_id}/end", _api(give_up), methods=["POST"]),
    ]


# --- agenthop-server play ------------------------------------------------------------------------------


class _Server(uvicorn.Server):
    """uvicorn's server, calling ``on_ready`` once it accepts connections."""

    def __init__(self, config: uvicorn.Config, on_ready: Callable[[], None]):
        super().__init__(config)
        self.on_ready = on_ready

    async def startup(self, sockets=None) -> None:
        await super().startup(sockets)
        if self.started:
            self.on_ready()


def serve_play(corpus_path: str | Path, log_path: str | Path, options: PlayOptions, caps: Caps, *, port: int = 0,
               on_ready: Callable[[str], None] = lambda url: None) -> None:
    """Serve the whole HTTP app (MCP, sessions, /play) on a loopback port until interrupted.

    ``on_ready(url)`` is called with the /play URL once the server accepts connections.
    Raises CorpusError, LogError or PlayOptionsError (a participant label or items that cannot be used) before serving.
    """
    host = "127.0.0.1"
    port = port or free_port(host)
    log = CheckpointLog(log_path)
    try:  # the log is closed (its last records written) when serving ends, or when serving cannot start
        sandbox = make_sandbox(corpus_path, log, caps)
        app = build_app(sandbox, host=host, port=port, play=options)
        _Server(uvicorn_config(app, host, port), lambda: on_ready(f"http://{host}:{port}/play")).run()
    finally:
        log.close()


def open_browser(url: str) -> bool:
    """Open ``url`` in the user's browser when there is one; False when there is none. Never raises.

    A console browser (lynx, w3m: what Python falls back to without a display) would take over
    the terminal the server reports to, so it is used only when BROWSER names it.
    """
    try:
        browser = webbrowser.get()
    except webbrowser.Error:
        return False
    if type(browser) is webbrowser.GenericBrowser and not os.environ.get("BROWSER"):
        return False
    # A browser command may wait for its window to close: never hold the server up for it.
    threading.Thread(target=_open, args=(browser, url), name="agenthop-browser", daemon=True).start()
    return True


def _open(browser, url: str) -> None:
    try:
        browser.open(url)
    except Exception:  # noqa: BLE001 - a failing browser must not take the server down
        pass
