"""A page on another port of this machine, open in a participant's browser, cannot start or read their attempts: the
browser sends the participant's cookie (SameSite does not tell ports apart), so the server must refuse the request by
where it comes from (docs/web.md, Threat model). Real Chromium, a real page on a second loopback port."""

from __future__ import annotations

import http.server
import threading

import pytest
from support.web_common import ARGS, CHROMIUM, LAPTOP, needs_chromium

from agenthop.server.log.checkpoint import read_records
from agenthop.server.play.routes import PlayOptions
from agenthop.server.transport.http import ServerThread

pytestmark = [needs_chromium, pytest.mark.slow, pytest.mark.browser]

# A blob without a type sends no Content-Type, so the POST is a "simple" request the browser sends without asking
# (no preflight); no-cors hides the answer from the page, which is all such a page needs to start an attempt.
EVIL = """<!DOCTYPE html><html><head><title>waiting</title></head><body>
<script>
(async () => {{
  const body = new Blob([JSON.stringify({{participant: "p1", item: "st_0002"}})]);
  await fetch("{play}/api/sessions", {{method: "POST", mode: "no-cors", credentials: "include", body}});
  await fetch("{play}/api/items?participant=p1", {{mode: "no-cors", credentials: "include"}});
  document.title = "done";
}})();
</script></body></html>"""


class _Page(http.server.BaseHTTPRequestHandler):
    html = b""

    def do_GET(self):  # noqa: N802 - the standard library's name
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.end_headers()
        self.wfile.write(self.html)

    def log_message(self, *args):
        pass


def test_a_page_on_another_port_cannot_start_or_read_a_participants_attempts(demo, tmp_path):
    from playwright.sync_api import sync_playwright

    corpus, _ = demo
    log = tmp_path / "log.sqlite"
    options = PlayOptions(items=("st_0001", "st_0002"))
    with ServerThread(str(corpus), str(log), play=options) as server:
        _Page.html = EVIL.format(play=f"{server.base_url}/play").encode()
        evil = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Page)
        threading.Thread(target=evil.serve_forever, daemon=True).start()
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
                try:
                    context = browser.new_context(viewport=LAPTOP)
                    page = context.new_page()
                    page.goto(f"{server.base_url}/play")
                    page.fill("#participant", "p1")
                    page.press("#participant", "Enter")
                    page.locator("#choice").wait_for()
                    page.click("#play-next")
                    page.locator("#game").wait_for()
                    attacker = context.new_page()
                    answers = []
                    attacker.on(
                        "response",
                        lambda r: answers.append((r.request.method, r.url, r.status)) if "/play/" in r.url else None,
                    )
                    attacker.goto(f"http://127.0.0.1:{evil.server_address[1]}/")
                    attacker.wait_for_function("document.title === 'done'")
                finally:
                    browser.close()
        finally:
            evil.shutdown()
    starts = [r for r in read_records(log) if r["kind"] == "session_start"]
    assert [s["item_id"] for s in starts] == ["st_0001"]  # p1's own attempt, and no other
    assert [(method, status) for method, _, status in answers] == [("POST", 403), ("GET", 403)], answers
