"""``agenthop-server play``: the whole HTTP app on a loopback port, and a browser opened on /play."""

from __future__ import annotations

import os
import threading
import webbrowser
from collections.abc import Callable
from pathlib import Path

import uvicorn

from agenthop.server.caps import Caps
from agenthop.server.log.checkpoint import CheckpointLog
from agenthop.server.play.routes import PlayOptions
from agenthop.server.transport.http import build_app
from agenthop.server.transport.mcp_app import make_sandbox
from agenthop.server.transport.web import free_port, uvicorn_config


class _Server(uvicorn.Server):
    """uvicorn's server, calling ``on_ready`` once it accepts connections."""

    def __init__(self, config: uvicorn.Config, on_ready: Callable[[], None]):
        super().__init__(config)
        self.on_ready = on_ready

    async def startup(self, sockets=None) -> None:
        await super().startup(sockets)
        if self.started:
            self.on_ready()


def serve_play(
    corpus_path: str | Path,
    log_path: str | Path,
    options: PlayOptions,
    caps: Caps,
    *,
    port: int = 0,
    on_ready: Callable[[str], None] = lambda url: None,
) -> None:
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
