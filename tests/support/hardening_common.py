"""Shared pieces of the hardening suite; this module holds no tests.

- ``ServerProcess``: ``python -m agenthop.server serve --transport http`` as a real
  subprocess, started and awaited by polling /health (no sleeps as synchronisation).
- ``expect``: an oracle for SPEC 3/4.2, written from the SPEC's argument table
  rather than from the server's pydantic models, that says what a call must cost.
- raw JSON-RPC helpers for requests no well-behaved client would send.
- /proc readers: RSS of a process and the addresses it listens on.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

import httpx2

from agenthop.server.sessions import STORED_ARGS_CHARS
from agenthop.server.transport.web import free_port
from support.release_fixture import pid

COSTS = {
    "search_papers": 1,
    "get_paper_info": 1,
    "get_references": 1,
    "list_sections": 1,
    "read_section": 5,
    "think": 0,
    "submit_answer": 0,
}
EXECUTED_OUTCOMES = {"ok", "not_found", "no_text", "ambiguous"}
REFUSED_OUTCOMES = {"invalid", "budget_rejected", "session_ended"}
PROTOCOL = "2026-07-28"
RAW_META = {
    "io.modelcontextprotocol/protocolVersion": PROTOCOL,
    "io.modelcontextprotocol/clientInfo": {"name": "hardening-raw", "version": "0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


# --- the oracle ---------------------------------------------------------------


def _is_str(v, lo: int, hi: int) -> bool:
    return isinstance(v, str) and lo <= len(v) <= hi


def _visible(v: str) -> bool:
    """tools.md: blank text is whitespace and invisible format or control characters (Unicode Cf, Cc) only."""
    return any(not ch.isspace() and unicodedata.category(ch) not in ("Cf", "Cc") for ch in v)


def _is_int(v, lo: int, hi: int) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and lo <= v <= hi


# SPEC 3's table plus the documented limits (tools.md): field -> (required, check).
ARG_RULES = {
    "search_papers": {
        "query": (True, lambda v: _is_str(v, 1, 2000) and _visible(v)),
        "top_k": (False, lambda v: _is_int(v, 1, 10)),
    },
    "get_paper_info": {"paper_id": (True, lambda v: _is_str(v, 1, 200))},
    "get_references": {"paper_id": (True, lambda v: _is_str(v, 1, 200))},
    "list_sections": {"paper_id": (True, lambda v: _is_str(v, 1, 200))},
    "read_section": {
        "paper_id": (True, lambda v: _is_str(v, 1, 200)),
        "section": (True, lambda v: _is_str(v, 1, 500) and _visible(v)),
    },  # a blank name is refused
    "think": {"reasoning": (True, lambda v: _is_str(v, 0, 50_000))},
    "submit_answer": {
        "answer": (True, lambda v: v in ("A", "B", "C", "D") and isinstance(v, str)),
        "reasoning": (True, lambda v: _is_str(v, 0, 50_000)),
    },
}


def _optional(check):
    return lambda v: v is None or check(v)


_YEAR = _optional(lambda v: _is_int(v, 1000, 2999))
_FILTER_TEXT = _optional(lambda v: _is_str(v, 1, 200) and _visible(v))

# Explore mode (tools.md, "Explore mode"): search_papers takes filters and needs a query or one of them;
# get_references pages and sorts. The other tools take what item mode takes.
EXPLORE_ARG_RULES = {
    **ARG_RULES,
    "search_papers": {
        "query": (False, lambda v: _is_str(v, 0, 2000)),
        "top_k": (False, lambda v: _is_int(v, 1, 10)),
        "year_from": (False, _YEAR),
        "year_to": (False, _YEAR),
        "venue": (False, _FILTER_TEXT),
        "author": (False, _FILTER_TEXT),
        "scope": (False, lambda v: v in ("title_abstract", "full_text") and isinstance(v, str)),
    },
    "get_references": {
        "paper_id": (True, lambda v: _is_str(v, 1, 200)),
        "offset": (False, lambda v: _is_int(v, 0, 1_000_000)),
        "limit": (False, _optional(lambda v: _is_int(v, 1, 500))),
        "sort": (False, _optional(lambda v: v in ("year", "citations") and isinstance(v, str))),
    },
}


def _explore_search_whole(args: dict) -> list[str]:
    """An explore search whose fields are each valid still needs something to look for, and years in order."""
    if not _visible(args.get("query", "")) and all(
        args.get(k) is None for k in ("year_from", "year_to", "venue", "author")
    ):
        return ["query"]
    if args.get("year_from") is not None and args.get("year_to") is not None and args["year_from"] > args["year_to"]:
        return ["year_from"]
    return []


def bad_fields(tool: str, args: object, explore: bool = False) -> list[str] | None:
    """The argument names that are wrong (missing, extra, badly typed); [] if valid; None if not an object."""
    if not isinstance(args, dict):
        return None
    rules = (EXPLORE_ARG_RULES if explore else ARG_RULES)[tool]
    bad = [k for k in args if k not in rules]
    for name, (required, check) in rules.items():
        if name in args:
            if not check(args[name]):
                bad.append(name)
        elif required:
            bad.append(name)
    if explore and tool == "search_papers" and not bad:
        bad = _explore_search_whole(args)
    return bad


@dataclass
class Model:
    """What SPEC 4.2 says one session's state is after each call."""

    cap: int | None
    explore: bool = False  # explore sessions offer no submit_answer (SPEC 4.5: nothing to answer)
    spent: int = 0
    rejections: int = 0
    ended: bool = False

    def expect(self, tool: str, args: object) -> tuple[str, int]:
        """(outcome class, cost) for the next call, and advance the state.

        The outcome class is 'executed' (ok / not_found / no_text / ambiguous: the
        tool ran) or one of the refused outcomes.
        """
        if self.ended:
            return "session_ended", 0
        if tool not in COSTS or (self.explore and tool == "submit_answer") or bad_fields(tool, args, self.explore):
            return "invalid", 0
        cost = COSTS[tool]
        if self.cap is not None and cost > self.cap - self.spent:
            self.rejections += 1
            self.ended = self.rejections >= 2
            return "budget_rejected", 0
        self.spent += cost
        self.rejections = 0
        self.ended = tool == "submit_answer"
        return "executed", cost


def check_result(model: Model, tool: str, args: object, data: dict, text: str, is_error: bool) -> tuple[str, int]:
    """Assert one result follows SPEC 3/4.2 given the model; returns (expected class, cost)."""
    expected, cost = model.expect(tool, args)
    outcome = data["outcome"]
    where = f"{tool}({_short(args)}) -> {outcome}: {text[:300]!r}"
    if expected == "executed":
        assert outcome in EXECUTED_OUTCOMES, where
    else:
        assert outcome == expected, where
    assert data["cost"] == cost, where
    assert data["budget_used"] == model.spent, where
    assert data["budget_remaining"] == (None if model.cap is None else model.cap - model.spent), where
    assert model.cap is None or 0 <= data["budget_used"] <= model.cap, where
    assert data["session_ended"] is model.ended, where
    assert is_error is (outcome != "ok"), where
    assert text.rstrip().endswith("]") and "Budget used:" in text.rsplit("\n", 1)[-1], where
    # A refused call's message names the problem.
    if outcome == "invalid" and model.explore and tool == "submit_answer":
        assert "not offered in explore mode" in text, where
    elif outcome == "invalid" and tool in COSTS:
        named = bad_fields(tool, args, model.explore)
        assert f"Invalid arguments for {tool}" in text and "Nothing was charged" in text, where
        assert all(name in text for name in named), where
    elif outcome == "invalid":
        assert "does not exist" in text and "Available tools" in text, where
    elif outcome == "budget_rejected":
        assert f"costs {COSTS[tool]} point(s)" in text and "remain" in text, where
        if model.ended:  # the rejection that ends the session does not ask for an answer it would refuse
            assert "the session has ended" in text and "Call submit_answer now" not in text, where
        elif not model.explore:
            assert "Call submit_answer now" in text, where
    elif outcome == "session_ended":
        assert "This session is over" in text, where
    return expected, cost


def check_log(calls: list[dict], expected: list[tuple[str, object, str, int, dict]]) -> None:
    """Exactly one call record per call, in order, with the outcome and cost the client saw."""
    assert len(calls) == len(expected), (len(calls), len(expected))
    spent = 0
    for record, (tool, args, cls, cost, data) in zip(calls, expected):
        assert record["tool"] == (tool if tool in COSTS else tool[:200])  # unknown tool names are clipped
        assert record["outcome"] == data["outcome"] and record["cost"] == cost == data["cost"]
        assert record["executed"] is (cls == "executed")
        assert record["budget_before"] == spent and record["budget_after"] == spent + cost == data["budget_used"]
        sent = args if isinstance(args, dict) else {"_raw": repr(args)}
        altered = record.get("arguments_altered")
        if altered is None:
            assert record["arguments"] == sent
        else:
            # Only the arguments of a refused call that were not valid are clipped, and only large ones.
            assert altered["clipped"] and cls in ("invalid", "session_ended"), (tool, cls)
            assert altered["json_chars"] is None or altered["json_chars"] > STORED_ARGS_CHARS
            assert set(record["arguments"]) <= {str(k)[:200] for k in sent}
        spent += cost


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) < 200 else text[:200] + f"...({len(text)} chars)"


# --- raw JSON-RPC over HTTP ---------------------------------------------------


def raw_headers(method: str, name: str | None = None) -> dict:
    headers = {
        "mcp-protocol-version": PROTOCOL,
        "mcp-method": method,
        "accept": "application/json, text/event-stream",
        "content-type": "application/json",
    }
    if name is not None:
        headers["mcp-name"] = name
    return headers


def raw_call_body(name: object, arguments: object, request_id: int = 1) -> dict:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments, "_meta": RAW_META},
    }


# --- a server subprocess --------------------------------------------------------


@dataclass
class ServerProcess:
    """The HTTP server as a real process; ``with ServerProcess(...) as s:`` waits until /health answers."""

    corpus: Path
    log: Path
    extra: list[str] = field(default_factory=list)
    env: dict = field(default_factory=dict)
    token: str | None = None
    port: int = 0
    startup_s: float = 30.0

    def __post_init__(self):
        self.port = self.port or free_port()
        self.stderr_path = Path(str(self.log) + f".{self.port}.stderr")
        self.proc: subprocess.Popen | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def auth(self) -> dict:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    def start(self) -> ServerProcess:
        args = [
            sys.executable,
            "-m",
            "agenthop.server",
            "serve",
            "--transport",
            "http",
            "--port",
            str(self.port),
            "--corpus",
            str(self.corpus),
            "--log",
            str(self.log),
            *self.extra,
        ]
        self._stderr = open(self.stderr_path, "wb")
        self.proc = subprocess.Popen(
            args, stdout=subprocess.DEVNULL, stderr=self._stderr, env={**os.environ, **self.env}
        )
        deadline = time.monotonic() + self.startup_s
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited with {self.proc.returncode}: {self.stderr()}")
            try:
                if httpx2.get(self.base_url + "/health", headers=self.auth, timeout=1).status_code == 200:
                    return self
            except httpx2.TransportError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"server did not answer /health within {self.startup_s} s: {self.stderr()}")
            time.sleep(0.05)  # polling interval, not synchronisation

    def stderr(self) -> str:
        self._stderr.flush()
        return self.stderr_path.read_text(errors="replace")[-2000:]

    def kill(self) -> None:
        """SIGKILL: no shutdown code runs."""
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self._stderr.close()

    def __enter__(self) -> ServerProcess:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


# --- /proc -----------------------------------------------------------------------


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for {pid}")


def _decode_addr(hex_addr: str) -> tuple[str, int]:
    addr, port = hex_addr.split(":")
    raw = bytes.fromhex(addr)
    if len(raw) == 4:
        ip = ".".join(str(b) for b in reversed(raw))
    else:  # IPv6: four little-endian 32-bit words
        words = [raw[i : i + 4][::-1] for i in range(0, 16, 4)]
        import ipaddress

        ip = str(ipaddress.IPv6Address(b"".join(words)))
    return ip, int(port, 16)


def listening_addresses(pid: int) -> list[tuple[str, int]]:
    """(address, port) of every TCP socket the process listens on, from /proc (no psutil)."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    found = []
    for table in ("tcp", "tcp6"):
        path = Path(f"/proc/{pid}/net/{table}")
        if not path.exists():
            continue
        for line in path.read_text().splitlines()[1:]:
            cols = line.split()
            if cols[3] == "0A" and cols[9] in inodes:  # 0A = LISTEN
                found.append(_decode_addr(cols[1]))
    return found


def non_loopback_address() -> str | None:
    """An IPv4 address of this machine that is not loopback, if it has one."""
    import socket

    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("10.255.255.255", 1))  # no packet is sent for UDP connect
            ip = s.getsockname()[0]
    except OSError:
        return None
    return None if ip.startswith("127.") or ip == "0.0.0.0" else ip


# One session's calls for the load test and the soak: (tool, arguments, expected outcome, budget used after),
# SPEC 3 costs against a cap of BUDGET.
BUDGET = 12
SCRIPT = [
    ("get_paper_info", {"paper_id": pid("A")}, "ok", 1),
    ("read_section", {"paper_id": pid("B"), "section": "C"}, "ok", 6),
    ("search_papers", {"query": "training examples", "top_k": 3}, "ok", 7),
    ("think", {"reasoning": "plan"}, "ok", 7),
    ("read_section", {"paper_id": pid("B"), "section": "nothing like this"}, "not_found", 12),
    ("get_paper_info", {"paper_id": pid("A")}, "budget_rejected", 12),
    ("submit_answer", {"answer": "B", "reasoning": "4,096"}, "ok", 12),
    ("think", {"reasoning": "late"}, "session_ended", 12),
]
