"""The review page: a person reviews each candidate that passed the sanity check and gives a verdict.

A small Starlette app (served like ``/play``: a static page and a thin JSON API
under ``/review/api``). What a reviewer sees per candidate: the question, the
options with the gold marked and each wrong option's kind, the verbatim evidence,
the labelled sections' text, and links to every paper of the chain in the corpus.
What they give: the three quality axes, Pass / Flag (with a note) / Remove, and
label edits. Each verdict is committed to ``OUT/audit/verdicts.sqlite`` (the folder
keeps its old name so that existing runs keep their verdicts) with the auditor's name before the page is told it is saved; the next ``run`` applies
them (``agenthop.construct.verdicts``). No model is called here.

The page uses the server's shared web toolkit (``agenthop.server.web``: base.css, dom.js), served
at ``/static/`` as on the play server. The listening socket is bound before the URL is printed,
so a printed URL always leads to this page, and a taken port is an error that says so.
"""

from __future__ import annotations

import errno
import json
import socket
import threading
import time
from importlib import resources
from pathlib import Path

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from agenthop.construct.corpus_view import CorpusView
from agenthop.construct.stagefiles import read_jsonl
from agenthop.construct.verdicts import VerdictError, VerdictStore
from agenthop.server.sections import label_headers
from agenthop.server.web.assets import asset_routes

ASSETS = {"review.js": "text/javascript", "review.css": "text/css"}
REVIEWED_STAGE = "sanity"  # auditors see what the structural check kept
# The page loads only its own files and talks only to its own origin; text from papers is inserted as text.
HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-cache",
}


class PortTaken(OSError):
    """The address the review page should listen on is in use (or cannot be bound); the message says what to do."""


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening socket on (host, port); port 0 picks a free one. PortTaken names the port and the way out."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    try:
        sock.bind((host, port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise PortTaken(
                f"port {port} on {host} is already in use (another program, or another review, listens there): "
                "stop it, or choose another port with --port (0 picks a free one)"
            ) from None
        raise PortTaken(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.set_inheritable(True)
    return sock


class NoCandidates(ValueError):
    """The run has no candidate to review; the message names the stage that kept none."""


def _why_none(work: Path, stage_file: Path) -> str:
    """Which stage of the run kept nothing (every later one then had nothing), from the work files' attrition."""
    from agenthop.construct.attrition import ROWS, table
    from agenthop.construct.hints import empty_stage

    records = {s: read_jsonl(work / f"{s}.jsonl") for s, _ in ROWS if (work / f"{s}.jsonl").exists()}
    row = empty_stage(table(records)) or {}
    name = row.get("name", REVIEWED_STAGE)
    where = f"{name} kept none of {row['entered']}" if row.get("entered") else f"nothing reached {name}"
    return (
        f"there is nothing to review in {stage_file}: {where}, so no candidate reached the review page. "
        "Run 'agenthop-construct run' again with relaxed rules: it prints which rule removed the candidates "
        "and which option relaxes it."
    )


def _asset(name: str) -> str:
    return resources.files("agenthop.construct").joinpath("review_static", name).read_text(encoding="utf-8")


class ReviewData:
    def __init__(self, corpus: Path, out: Path):
        stage_file = out / "work" / f"{REVIEWED_STAGE}.jsonl"
        if not stage_file.exists():
            raise FileNotFoundError(
                f"{stage_file} does not exist: run 'agenthop-construct sanity --corpus {corpus} --out {out}' "
                "(or 'run') first, so that there are candidates to review"
            )
        self.candidates = [c for c in read_jsonl(stage_file) if "drop" not in c]
        if not self.candidates:
            raise NoCandidates(_why_none(out / "work", stage_file))
        self.view = CorpusView(corpus)
        self.by_id = {c["id"]: c for c in self.candidates}
        self.store = VerdictStore(out / "audit" / "verdicts.sqlite")

    def _paper(self, pid: str | None) -> dict | None:
        if pid is None:
            return None
        p = self.view.papers[pid]
        return {"id": pid, "title": p.title, "year": p.year, "headers": [s.header for s in self.view.sections(pid)]}

    def summary(self) -> dict:
        effective = self.store.effective()

        def by(cid: str) -> dict:
            return {name: row["verdict"] for name, row in effective.get(cid, {}).get("by", {}).items()}

        # "by": each auditor's latest verdict, so the page can count per auditor and find disagreements.
        return {
            "candidates": [
                {
                    "id": c["id"],
                    "cell": f"{c['kind']}-d{c['depth']}",
                    "question": c["question"],
                    "verdict": effective.get(c["id"], {}).get("verdict"),
                    "by": by(c["id"]),
                }
                for c in self.candidates
            ]
        }

    def candidate(self, cid: str) -> dict:
        c = self.by_id[cid]
        entry = self.store.effective().get(cid, {"by": {}, "labels": None})
        labels = entry["labels"] if entry["labels"] is not None else c["labels"]
        sections = []
        for lab in labels:
            secs = self.view.sections(lab["paper_id"])
            hits = label_headers(lab["section"], [s.header for s in secs])
            sections.append(
                {
                    "paper_id": lab["paper_id"],
                    "section": lab["section"],
                    "resolved": bool(hits),
                    "text": secs[hits[0]].text if hits else None,
                }
            )
        return {
            "id": cid,
            "cell": f"{c['kind']}-d{c['depth']}",
            "question": c["question"],
            "options": c["options"],
            "correct_index": c["correct_index"],
            "distractor_types": c["distractor_types"],
            "answer": c["answer"],
            "evidence": c.get("evidence", []),
            "reasoning_type": c["reasoning_type"],
            "tier": c.get("consensus_tier"),
            "seed": self._paper(c["seed"]),
            "bridge": self._paper(c["bridge"]),
            "targets": [self._paper(t) for t in c["targets"]],
            "labels": labels,
            "labels_edited": entry["labels"] is not None,
            "sections": sections,
            "verdicts": [
                {k: r[k] for k in ("auditor", "verdict", "axes", "note", "seq")} for r in entry["by"].values()
            ],
        }

    def paper(self, pid: str) -> dict:
        p = self.view.papers[pid]
        return {
            "id": pid,
            "title": p.title,
            "abstract": p.abstract,
            "year": p.year,
            "venue": p.venue,
            "sections": [{"header": s.header, "text": s.text} for s in self.view.sections(pid)],
        }

    def save(self, body: dict) -> dict:
        cid = body.get("candidate")
        # Checked as a string first: a JSON list or object is unhashable, and looking it up would be a server error.
        if not isinstance(cid, str) or cid not in self.by_id:
            raise VerdictError(f"candidate: not a candidate under review, found {cid!r}")
        labels = body.get("labels")
        if labels is not None:
            targets = set(self.by_id[cid]["targets"])
            for i, lab in enumerate(labels if isinstance(labels, list) else [None]):
                if not isinstance(lab, dict) or lab.get("paper_id") not in targets:
                    raise VerdictError(
                        f"labels[{i}]: paper_id must be one of the candidate's targets {sorted(targets)}"
                    )
        seq = self.store.add(
            cid,
            str(body.get("auditor") or ""),
            str(body.get("verdict")),
            body.get("axes") or {},
            str(body.get("note") or ""),
            labels,
        )
        return {"saved": seq, "candidate": self.candidate(cid)}

    def close(self) -> None:
        self.store.close()
        self.view.close()


def build_app(data: ReviewData) -> Starlette:
    def api(handler):
        async def endpoint(request: Request) -> Response:
            try:
                return JSONResponse(await handler(request))
            except KeyError as exc:
                return JSONResponse({"error": f"not found: {exc.args[0]}"}, status_code=404)
            except (VerdictError, ValueError) as exc:
                return JSONResponse({"error": str(exc)}, status_code=400)

        return endpoint

    async def page(request: Request) -> Response:
        return Response(_asset("review.html"), media_type="text/html", headers=HEADERS)

    async def asset(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in ASSETS:
            return Response("not found", status_code=404)
        return Response(_asset(name), media_type=ASSETS[name], headers=HEADERS)

    async def summary(request: Request) -> dict:
        return data.summary()

    async def candidate(request: Request) -> dict:
        return data.candidate(request.path_params["cid"])

    async def paper(request: Request) -> dict:
        return data.paper(request.path_params["pid"])

    async def save(request: Request) -> dict:
        try:
            body = json.loads(await request.body())
        except ValueError:
            raise ValueError("the request body is not JSON") from None
        if not isinstance(body, dict):
            raise ValueError("the request body must be a JSON object")
        return data.save(body)

    return Starlette(
        routes=[
            Route("/review", page),
            Route("/", page),
            # The page was served at /audit before it was called the review page: old bookmarks still lead to it.
            Route("/audit", lambda request: RedirectResponse("/review", status_code=301)),
            Route("/review/assets/{name}", asset),
            Route("/review/api/candidates", api(summary)),
            Route("/review/api/candidates/{cid}", api(candidate)),
            Route("/review/api/papers/{pid:path}", api(paper)),
            Route("/review/api/verdicts", api(save), methods=["POST"]),
            *asset_routes(),  # /static/base.css and /static/dom.js, the toolkit play and the viewer share
        ]
    )


class ReviewServer:
    """The review app under uvicorn in a thread (``with ReviewServer(...) as s: s.url``)."""

    def __init__(self, corpus: Path, out: Path, host: str = "127.0.0.1", port: int = 0):
        self.data = ReviewData(corpus, out)
        try:
            self.sock = bind_socket(host, port)
        except PortTaken:
            self.data.close()
            raise
        self.url = f"http://{host}:{self.sock.getsockname()[1]}/review"
        self.server = uvicorn.Server(
            uvicorn.Config(
                build_app(self.data), host=host, port=self.sock.getsockname()[1], log_level="warning", lifespan="off"
            )
        )
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.sock]}, name="review-page", daemon=True
        )

    def __enter__(self) -> ReviewServer:
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the review page's server did not start")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.sock.close()
        self.data.close()


def serve(corpus: Path, out: Path, *, host: str, port: int, echo) -> None:
    """Serve until interrupted (the ``review`` command). The port is bound before the URL is echoed; PortTaken if it cannot be."""
    data = ReviewData(corpus, out)
    try:
        sock = bind_socket(host, port)
    except PortTaken:
        data.close()
        raise
    bound = sock.getsockname()[1]
    try:
        server = uvicorn.Server(uvicorn.Config(build_app(data), host=host, port=bound, log_level="warning"))
        echo(
            f"review page: http://{host}:{bound}/review  ({len(data.candidates)} candidates; "
            f"verdicts go to {out / 'audit' / 'verdicts.sqlite'})"
        )
        server.run(sockets=[sock])
    finally:
        sock.close()
        data.close()
