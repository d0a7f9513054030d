"""What a person or an HTTP client finds at the server's root: ``GET /`` (the endpoints and the version)
and ``GET /items`` (the public part of every item, the list ``POST /sessions`` takes IDs from)."""

from __future__ import annotations

import html

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

import agenthop
from agenthop.server.transport.mcp_app import SESSION_PARAM, Sandbox, public_item

# (method, path, what it does): the order of the page.
ENDPOINTS = (
    (
        "POST",
        "/mcp",
        "MCP over Streamable HTTP (protocol 2026-07-28, and the 2025 initialize handshake). Name the session "
        f"with the X-AgentHop-Session header or ?{SESSION_PARAM}=ID; in the 2025 handshake, send the "
        "Mcp-Session-Id header the initialize response gives you as well.",
    ),
    ("POST", "/sessions", 'Create a session: {"item": ID or null for explore mode, "run": label, "client": {...}}.'),
    ("GET", "/sessions/{id}", "A session's state: budget used, ended, termination, answer."),
    (
        "POST",
        "/sessions/{id}/end",
        'End a session for the client\'s own reason: {"termination": "max_turns" | "token_limit" | '
        '"empty_response" | "error" | "abandoned"}.',
    ),
    (
        "GET",
        "/items",
        "The items this server can serve: ID, type, depth, seed paper, question, options (never answers).",
    ),
    ("GET", "/play", "Play an item yourself in the browser, under the agents' budget and rules."),
    (
        "GET",
        "/health",
        "200 when the corpus is unchanged and the checkpoint log is being written; 503 and the problems otherwise.",
    ),
)
CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)


def describe(sandbox: Sandbox) -> dict:
    """What ``GET /`` answers a client that does not ask for HTML."""
    return {
        "name": "agenthop",
        "version": agenthop.__version__,
        "corpus": sandbox.corpus.public_description(),
        "endpoints": [{"method": m, "path": p, "description": d} for m, p, d in ENDPOINTS],
        "docs": "docs/http-api.md in the AgentHop repository",
    }


def _page(info: dict) -> str:
    corpus = info["corpus"]
    counts = corpus.get("counts", {})
    rows = "\n".join(
        f'<tr><td><code>{m}</code></td><td><a href="{html.escape(p)}"><code>{html.escape(p)}</code></a></td>'
        f"<td>{html.escape(d)}</td></tr>"
        if m == "GET" and "{" not in p
        else f"<tr><td><code>{m}</code></td><td><code>{html.escape(p)}</code></td><td>{html.escape(d)}</td></tr>"
        for m, p, d in ENDPOINTS
    )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>AgentHop server {html.escape(info["version"])}</title><link rel="stylesheet" href="/static/base.css"></head>
<body><header class="bar"><h1>AgentHop <span>server {html.escape(info["version"])}</span></h1>
<p class="where">corpus {html.escape(str(corpus.get("corpus_id")))} · {counts.get("items", 0):,} items · {counts.get("papers", 0):,} papers</p></header>
<main class="page">
<p>A metered MCP sandbox over a frozen citation-graph corpus. Agents (and people, on <a href="/play">/play</a>) get a seed
paper, a question and four options, and a budget of points to find the evidence; every call is written to the checkpoint log,
which <code>agenthop-scorer</code> turns into a report.</p>
<h2>Endpoints</h2>
<table class="plain"><thead><tr><th scope="col">Method</th><th scope="col">Path</th><th scope="col">What it does</th></tr></thead>
<tbody>
{rows}
</tbody></table>
<p class="note">A client that does not ask for HTML gets this page as JSON. The whole API: <code>docs/http-api.md</code> in the AgentHop repository.</p>
</main></body></html>
"""


def front_routes(sandbox: Sandbox) -> list[Route]:
    async def root(request: Request) -> Response:
        info = describe(sandbox)
        if "text/html" in request.headers.get("accept", ""):
            return HTMLResponse(
                _page(info), headers={"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff"}
            )
        return JSONResponse(info)

    async def items(request: Request) -> Response:
        corpus = sandbox.corpus
        listed = [public_item(corpus.item(i)) for i in corpus.item_ids()]
        return JSONResponse({"count": len(listed), "items": listed})

    return [Route("/", root, methods=["GET"]), Route("/items", items, methods=["GET"])]
