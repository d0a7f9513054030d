"""A real loopback OpenAI chat-completions server for tests (Starlette under uvicorn in a thread).

The script is a function ``script(body, fake) -> reply`` called for every
POST /v1/chat/completions with the parsed request body; ``reply`` is one of

- a dict: sent as the JSON response (use ``completion``/``tool_calls``/``text``);
- ``HTTPError(status, body)``: that HTTP status (e.g. 429, 500, 400);
- ``Hang(seconds)``: wait, then answer 504 (the client should have timed out);
- ``Garbage(text)``: a 200 response whose body is not JSON;
- ``Slow(seconds, reply)``: ``reply`` after a pause (pacing, not synchronisation);
- ``Block(release, reply)``: a model call in flight until the test sets ``release`` (a threading.Event),
  then ``reply`` (504 when None).

Every request body is kept in ``fake.requests`` (in arrival order); ``fake.wait_for_requests(n)`` returns
once n requests have arrived.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse
from starlette.routing import Route

from agenthop.server.transport.web import bound_socket


@dataclass
class HTTPError:
    status: int
    body: dict | None = None


@dataclass
class Hang:
    seconds: float


@dataclass
class Slow:
    seconds: float
    reply: object


@dataclass
class Block:
    release: threading.Event
    reply: object = None


@dataclass
class Garbage:
    text: str = "<html>this is not json"


_ids = itertools.count(1)


def completion(message: dict, usage: tuple[int, int, int] = (100, 20, 0), model: str = "fake-1") -> dict:
    prompt, completion_tokens, cached = usage
    return {
        "id": f"chatcmpl-{next(_ids)}",
        "object": "chat.completion",
        "created": 1760000000,
        "model": model,
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
                "logprobs": None,
                "message": message,
            }
        ],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt + completion_tokens,
            "prompt_tokens_details": {"cached_tokens": cached},
        },
    }


def tool_calls(*calls, usage=(100, 20, 0), text: str | None = None) -> dict:
    """calls: (name, arguments) with arguments a dict (JSON-encoded here) or a raw string sent as is."""
    out = []
    for name, args in calls:
        out.append(
            {
                "id": f"call_{next(_ids)}",
                "type": "function",
                "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)},
            }
        )
    return completion({"role": "assistant", "content": text, "tool_calls": out}, usage)


def text(content: str, usage=(100, 20, 0)) -> dict:
    return completion({"role": "assistant", "content": content}, usage)


# --- reading a request ----------------------------------------------------------


def system_text(body: dict) -> str:
    for m in body.get("messages", []):
        if m.get("role") in ("system", "developer"):
            c = m.get("content")
            return c if isinstance(c, str) else " ".join(p.get("text", "") for p in c or [])
    return ""


def seed_id(body: dict) -> str:
    m = re.search(r"^ID:\s*(\S+)", system_text(body), re.M)
    return m.group(1) if m else ""


def turn_index(body: dict) -> int:
    """0 for the first model call of a conversation, 1 for the second, ..."""
    return sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")


def tool_messages(body: dict) -> list[str]:
    out = []
    for m in body.get("messages", []):
        if m.get("role") == "tool":
            c = m.get("content")
            out.append(c if isinstance(c, str) else " ".join(p.get("text", "") for p in c or []))
    return out


def last_tool_message(body: dict) -> str:
    msgs = tool_messages(body)
    return msgs[-1] if msgs else ""


class FakeOpenAI:
    def __init__(self, script: Callable[[dict, FakeOpenAI], object]):
        self.script = script
        self.requests: list[dict] = []
        self._lock = threading.Lock()
        self._arrived = threading.Condition(self._lock)
        app = Starlette(
            routes=[
                Route("/v1/chat/completions", self._handle, methods=["POST"]),
                Route("/v1/models", self._models, methods=["GET"]),
            ]
        )
        # Bound now and handed to uvicorn, so no other process can take the port between picking and listening.
        self._socket = bound_socket("127.0.0.1", 0)
        self.port = self._socket.getsockname()[1]
        # uvicorn closes a connection idle for 5 s by default; on a loaded machine a tool call between two model
        # turns can take that long, and a client reusing the connection as it closes fails (max_retries=0). No
        # fake conversation idles for 10 minutes, so the server never closes a connection under a client.
        self._server = uvicorn.Server(
            uvicorn.Config(
                app, host="127.0.0.1", port=self.port, log_level="warning", lifespan="off", timeout_keep_alive=600
            )
        )
        self._thread = threading.Thread(
            target=self._server.run, args=([self._socket],), name="fake-openai", daemon=True
        )

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def wait_for_requests(self, n: int, timeout: float = 60.0) -> list[dict]:
        """The requests once ``n`` have arrived (AssertionError after ``timeout`` seconds)."""
        with self._arrived:
            assert self._arrived.wait_for(lambda: len(self.requests) >= n, timeout), (
                f"{len(self.requests)} of {n} requests arrived"
            )
            return list(self.requests)

    def bodies(self, seed: str | None = None) -> list[dict]:
        with self._lock:
            return [b for b in self.requests if seed is None or seed_id(b) == seed]

    async def _models(self, request: Request):
        return JSONResponse({"object": "list", "data": [{"id": "fake-1", "object": "model"}]})

    async def _handle(self, request: Request):
        try:
            body = json.loads(await request.body())
        except ValueError:
            return JSONResponse({"error": {"message": "bad json"}}, status_code=400)
        with self._lock:
            self.requests.append(body)
            self._arrived.notify_all()
        reply = self.script(body, self)
        if isinstance(reply, Block):
            await asyncio.to_thread(reply.release.wait)
            reply = reply.reply if reply.reply is not None else Hang(0)
        if isinstance(reply, Slow):
            await asyncio.sleep(reply.seconds)
            reply = reply.reply
        if isinstance(reply, HTTPError):
            return JSONResponse(
                reply.body or {"error": {"message": f"scripted {reply.status}", "type": "scripted"}},
                status_code=reply.status,
            )
        if isinstance(reply, Hang):
            await asyncio.sleep(reply.seconds)
            return JSONResponse({"error": {"message": "hung"}}, status_code=504)
        if isinstance(reply, Garbage):
            return PlainTextResponse(reply.text, status_code=200)
        return JSONResponse(reply)

    def start(self) -> FakeOpenAI:
        self._thread.start()
        deadline = time.monotonic() + 60  # a bound on a loaded machine, not a wait: startup is polled below
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("fake OpenAI server did not start")
            time.sleep(0.005)
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)
        self._socket.close()

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
