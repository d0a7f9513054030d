"""The trajectory viewer: static HTML that steps through every scored session of one or more runs, offline.

    agenthop-scorer view RUN... --corpus corpus.sqlite --out DIR

writes ``DIR/index.html`` (the page, its script and style inline, and an index
of every item of every run) and ``DIR/sessions/<run>/<n>.js``, one file per
session, loaded only when that session is opened; everything opens from
``file://`` with no network. The page is ``index.html#run=KEY&item=ID`` for one
session and ``...&vs=KEY2`` for two runs side by side on one item; KEY is the
run's report directory name (``logs.safe_name`` of its name, ``_`` appended on
a clash, as ``agenthop-scorer`` names report directories).

The session shown for an item is the one the scorer counts (items.resolve_items),
and every mark is the scorer's own: first exposures (audit.first_exposures),
inspections (audit.is_inspection), delivered gold reads and their direct-label
hits (metrics.gold_reads), the audit category and correctness (score_run).

Result texts: the checkpoint log records what each call did, and the text of
calls that did not succeed, but not the text a successful call returned. The
viewer reproduces that text by running the same pure tool function on the same
corpus (tools are deterministic; a run made on another corpus is not reproduced).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec
from pydantic import ValidationError

from agenthop.scorer import audit, metrics
from agenthop.scorer.gold import Gold
from agenthop.scorer.items import ItemOutcome, resolve_items
from agenthop.scorer.logs import Call, Run, safe_name
from agenthop.scorer.runs import expand_spec, load_run
from agenthop.scorer.summary import score_run
from agenthop.server.papers import Corpus
from agenthop.server.tools import Scope
from agenthop.server.web.assets import read_asset

if TYPE_CHECKING:  # the engine loads bm25s and scipy: imported when a viewer is written, not with the scorer
    from agenthop.server.search import SearchEngine

VIEW_FILE = "index.html"
VIEW_DIR = "view"  # where ``agenthop-scorer RUN... --view`` writes the viewer, beside the reports


def run_keys(names: Iterable[str]) -> list[str]:
    """Directory-safe, unique keys for run names, in order (the scheme of the score command's report directories)."""
    used: set[str] = set()
    keys = []
    for name in names:
        key = safe_name(name)
        while key in used:
            key += "_"
        used.add(key)
        keys.append(key)
    return keys


def view_link(key: str, item_id: str, vs: str | None = None) -> str:
    """The fragment of index.html that opens one item of one run (and another run beside it)."""
    from urllib.parse import quote

    link = f"{VIEW_FILE}#run={quote(key)}&item={quote(item_id)}"
    return link + (f"&vs={quote(vs)}" if vs else "")


@dataclass
class _Texts:
    """Reproduces the text a successful call returned, from the corpus the run was made on."""

    corpus: Corpus
    search: SearchEngine

    def of(self, call: Call, item_id: str | None, reproducible: bool) -> tuple[str | None, str]:
        """(text, where it came from: 'log', 'reproduced' or 'unavailable')."""
        if call.message:
            return call.message, "log"
        from agenthop.server.explore.tools import tool_for  # loads the search engine, as reproducing does anyway

        tool = tool_for(call.tool, explore=item_id is None)  # an explore session ran the explore variants
        if call.outcome != "ok" or tool is None or not reproducible:
            return None, "unavailable"
        try:
            args = tool.args.model_validate(call.arguments)
        except ValidationError:
            return None, "unavailable"
        return tool.run(Scope(self.corpus, self.search, item_id), args).text, "reproduced"


def _marks(it: ItemOutcome, gold: Gold) -> dict[int, list[dict]]:
    """Per call seq, the scorer's marks on it."""
    golds = set(it.gold.gold_paper_ids)
    firsts = {(e["paper_id"], e["seq"]) for e in audit.first_exposures(it) if e["exposed"]}
    marks: dict[int, list[dict]] = {}
    for c in it.calls:
        if c.seq is None:
            continue  # it named an unknown session and was refused: it exposed and read nothing, so it has no marks
        out = marks.setdefault(c.seq, [])
        shown: set[str] = set()
        for e in c.exposed:
            pid = e.paper_id
            if pid in golds and pid not in shown:
                shown.add(pid)
                kind = "first_exposure" if (pid, c.seq) in firsts else "exposed"
                out.append({"kind": kind, "paper_id": pid, "rank": e.rank})
        if audit.is_inspection(c) and c.paper_id in golds:
            out.append({"kind": "inspected", "paper_id": c.paper_id})
    for c, hit in metrics.gold_reads(it, gold):
        d = c.delivered_section
        marks[c.number].append({"kind": "delivered", "paper_id": d.paper_id, "direct_hit": hit, "header": d.header})
    return marks


def _call(c: Call, marks: list[dict], texts: _Texts, item_id: str, reproducible: bool) -> dict:
    text, source = texts.of(c, item_id, reproducible)
    return {
        "seq": c.seq,
        "turn": c.turn,
        "tool": c.tool,
        "arguments": c.arguments,
        "outcome": c.outcome,
        "executed": c.executed,
        "cost": c.cost,
        "budget_before": c.budget_before,
        "budget_after": c.budget_after,
        "latency_ms": c.latency_ms,
        "forced": c.forced,
        "text": text,
        "text_source": source,
        "marks": marks,
    }


def _session_data(key: str, it: ItemOutcome, row: dict, gold: Gold, corpus: Corpus, texts: _Texts) -> dict:
    item = corpus.item(it.item_id)
    titles = corpus.papers(list(it.gold.gold_paper_ids))
    exposures = {e["paper_id"]: e for e in row["exposures"]}
    gold_papers = [
        {
            "paper_id": pid,
            "title": titles[pid].title if pid in titles else None,
            "exposure": exposures.get(pid),
            "delivered": pid in row["gold_delivered"],
            "direct_hit": pid in row["gold_direct_hit"],
        }
        for pid in it.gold.gold_paper_ids
    ]
    start = it.session.start if it.session else None
    reproducible = start is None or start.corpus.get("corpus_id") in (None, corpus.identity.get("corpus_id"))
    marks = _marks(it, gold) if it.observed else {}
    return {
        "run": key,
        "item_id": it.item_id,
        "question": item.question if item else None,
        "options": item.options if item else [],
        "seed": {"paper_id": it.gold.seed_paper_id, "title": item.seed_title if item else None},
        "bridge_papers": list(it.gold.bridge_paper_ids),
        "gold_papers": gold_papers,
        **{
            k: row[k]
            for k in (
                "cell",
                "reasoning_type",
                "answer",
                "correct_letter",
                "correct",
                "audit",
                "termination",
                "budget",
                "turns",
                "tokens",
                "paper_recall",
                "section_recall",
                "session_id",
                "n_sessions",
            )
        },
        "audit_label": _audit_label(it, row),
        "client": start.client if start else None,
        "caps": msgspec.to_builtins(start.caps) if start else None,
        "reproduced": reproducible,
        "calls": [
            _call(c, marks.get(c.seq, []) if c.seq is not None else [], texts, it.item_id, reproducible)
            for c in it.calls
        ],
    }


def _audit_label(it: ItemOutcome, row: dict) -> str:
    """The audit category in words; on a multi-target item "target inspected" says how many of its targets were read,
    since the category counts an item as inspected when any one gold paper was."""
    label = audit.CATEGORY_LABELS[row["audit"]]
    gold = set(it.gold.gold_paper_ids)
    if row["audit"] == "incorrect_inspected" and len(gold) > 1:
        read = len(gold & audit.inspected_papers(it))
        if read < len(gold):
            return f"Incorrect, {read} of {len(gold)} targets inspected"
    return label


def _index_row(key: str, it: ItemOutcome, row: dict) -> dict:
    client = it.session.start.client if it.session and it.session.start else {}
    return {
        "run": key,
        "item_id": it.item_id,
        "cell": row["cell"],
        "reasoning_type": row["reasoning_type"],
        "answer": row["answer"],
        "correct_letter": row["correct_letter"],
        "correct": row["correct"],
        "audit": row["audit"],
        "termination": row["termination"],
        "budget": row["budget"],
        "calls": len(it.calls),
        "observed": it.observed,
        "client": client.get("name"),
        "participant": client.get("participant"),
        "file": None,
    }


def _js(data: object) -> str:
    """JSON that is safe inside an HTML <script> element and as a JavaScript literal."""
    text = json.dumps(data, ensure_ascii=False, allow_nan=False)
    return text.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _page(index: dict) -> str:
    """index.html: the template with the shared toolkit (agenthop.server.web.assets), the viewer's own files and the
    index inlined, so that the page opens from file:// with nothing to fetch but the session files."""
    static = resources.files("agenthop.scorer").joinpath("view_static")
    template = static.joinpath("view.html").read_text(encoding="utf-8")
    return (
        template.replace("/*BASE_CSS*/", read_asset("base.css"))
        .replace("/*VIEW_CSS*/", static.joinpath("view.css").read_text(encoding="utf-8"))
        .replace("/*DOM_JS*/", read_asset("dom.js"))
        .replace("/*VIEW_JS*/", static.joinpath("view.js").read_text(encoding="utf-8"))
        .replace("/*VIEW_INDEX*/", _js(index))
    )


def write_view(
    specs: Iterable[str | Path],
    corpus: str | Path,
    out: str | Path,
    *,
    expected: list[str] | None = None,
    server_log: str | Path | None = None,
) -> dict[str, str]:
    """Write the viewer of the runs RUN ``specs`` name into ``out``; returns {run name: key}.

    Raises what loading and scoring raise (RunSpecError, LogError, CorpusError).
    """
    out = Path(out)
    single = [one for spec in specs for one in expand_spec(spec)]
    gold = Gold(corpus)
    public = Corpus(corpus)
    try:
        view = _View(out, gold, public, expected)
        for spec in single:
            view.add(load_run(spec, server_log))
    finally:
        gold.close()
        public.close()
    (out / VIEW_FILE).write_text(_page(view.index), encoding="utf-8")
    return view.keys


class _View:
    """Writes each run's session files as it is added, and keeps the index for index.html."""

    def __init__(self, out: Path, gold: Gold, public: Corpus, expected: list[str] | None):
        from agenthop.server.search import SearchEngine

        self.out, self.gold, self.public, self.expected = out, gold, public, expected
        self.texts = _Texts(public, SearchEngine(public))
        self.index: dict = {"runs": [], "rows": [], "corpus": public.identity}
        self.keys: dict[str, str] = {}

    def add(self, run: Run) -> None:
        summary = score_run(run, self.gold, self.expected)
        name = summary["run"]["name"]
        key = run_keys([r["key"] for r in self.index["runs"]] + [name])[-1]
        self.keys[name] = key
        rows = {r["item_id"]: r for r in summary["item_results"]}
        outcomes, _ = resolve_items(run, self.gold, self.expected)
        folder = self.out / "sessions" / key
        folder.mkdir(parents=True, exist_ok=True)
        for n, it in enumerate(outcomes):
            row = rows[it.item_id]
            entry = _index_row(key, it, row)
            if it.observed:
                entry["file"] = f"sessions/{key}/{n}.js"
                data = _session_data(key, it, row, self.gold, self.public, self.texts)
                (folder / f"{n}.js").write_text(f"AgentHopView.load({_js(data)});\n", encoding="utf-8")
            self.index["rows"].append(entry)
        ident = summary["run"]
        started = [s.start.client if s.start else {} for s in run.sessions.values()]
        clients = sorted({c.get("name") or "unknown" for c in started})
        people = sorted({str(c["participant"]) for c in started if c.get("name") == "human" and c.get("participant")})
        self.index["runs"].append(
            {
                "key": key,
                "name": name,
                "label": ident["label"],
                "agent": ident["agent"],
                "model": ident["model"],
                "clients": clients,
                "participants": people,
                "n": summary["items"]["n"],
                "accuracy": summary["headline"]["accuracy"],
            }
        )
