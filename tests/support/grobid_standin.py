"""A loopback stand-in for a GROBID service (Starlette under uvicorn in a thread), for tests and bench/bench_pdf.py.

It answers ``GET /api/isalive`` and ``POST /api/processFulltextDocument`` as GROBID does: the PDF comes
as the multipart field ``input``; the answer is TEI (200), or an error status with GROBID's kind of text.
What it answers for each PDF is looked up by the PDF's SHA-256 in ``answers``:

- ``bytes``: that TEI, with status 200;
- ``Busy(n, then)``: 503 for the first ``n`` requests of that PDF, then ``then``;
- ``Hang()``: no answer until the client gives up (or the stand-in stops);
- ``Reply(status, body)``: that status and body (a 500 parse failure, garbage with 200, ...).

A PDF it has no answer for gets GROBID's answer to a file that is not a PDF (500). ``latency`` delays every
answer, like a real service's parsing time, and ``capacity`` answers 503 beyond that many requests at
once, as GROBID does when its threads are all busy. It records every request (by digest) and the most requests it
had in flight at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import socket
import threading
import time
from collections import Counter
from dataclasses import dataclass

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

NOT_A_PDF = "[BAD_INPUT_DATA] PDF to XML conversion failed with error code: 1"


@dataclass
class Busy:
    times: int
    then: object


@dataclass
class Hang:
    pass


@dataclass
class Reply:
    status: int
    body: bytes | str


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class GrobidStandIn:
    def __init__(self, answers: dict[str, object] | None = None, *, latency: float = 0.0, capacity: int | None = None):
        self.answers = dict(answers or {})
        self.latency = latency
        self.capacity = capacity  # like GROBID's thread pool: a request beyond it is answered 503 at once
        self.busy_answers = 0
        self.requests: Counter[str] = Counter()
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self._stopping: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        app = Starlette(
            routes=[
                Route("/api/isalive", self._alive, methods=["GET"]),
                Route("/api/processFulltextDocument", self._process, methods=["POST"]),
            ],
            lifespan=self._lifespan,
        )
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self._server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning"))
        self._thread = threading.Thread(target=self._server.run, name="grobid-standin", daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @contextlib.asynccontextmanager
    async def _lifespan(self, app):
        self._loop = asyncio.get_running_loop()
        self._stopping = asyncio.Event()
        yield

    async def _alive(self, request: Request) -> Response:
        return PlainTextResponse("true")

    async def _process(self, request: Request) -> Response:
        form = await request.form()
        upload = form.get("input")
        if upload is None or isinstance(upload, str):
            return PlainTextResponse("[BAD_INPUT_DATA] no input file", status_code=400)
        key = digest(await upload.read())
        with self._lock:
            self.requests[key] += 1
            seen = self.requests[key]
            if self.capacity is not None and self.in_flight >= self.capacity:
                self.busy_answers += 1
                return PlainTextResponse("", status_code=503)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if self.latency:
                await asyncio.sleep(self.latency)
            return await self._answer(self.answers.get(key), seen)
        finally:
            with self._lock:
                self.in_flight -= 1

    async def _answer(self, answer: object, seen: int) -> Response:
        if isinstance(answer, Busy):
            if seen <= answer.times:
                return PlainTextResponse("", status_code=503)
            answer = answer.then
        if isinstance(answer, Hang):
            try:  # held until the stand-in stops; the client's own deadline ends the request first
                await asyncio.wait_for(self._stopping.wait(), timeout=60)
            except TimeoutError:
                pass
            return PlainTextResponse("", status_code=503)
        if isinstance(answer, Reply):
            return Response(answer.body, status_code=answer.status, media_type="text/plain")
        if isinstance(answer, bytes):
            return Response(answer, media_type="application/xml")
        return PlainTextResponse(NOT_A_PDF, status_code=500)

    def start(self) -> GrobidStandIn:
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("GROBID stand-in did not start")
            time.sleep(0.005)
        return self

    def stop(self) -> None:
        if self._stopping is not None:  # release held requests, so that the server can shut down
            self._loop.call_soon_threadsafe(self._stopping.set)
        self._server.should_exit = True
        self._thread.join(timeout=10)

    def __enter__(self) -> GrobidStandIn:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
