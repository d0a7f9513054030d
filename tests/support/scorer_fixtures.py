"""Hand-built run logs for the scorer tests, over a small corpus whose gold is known.

The corpus is the release fixture (release_fixture.py: st_0001, st_0002,
mt_0001) plus four items added here:

=======  ======  ======  =====================  ==================================
item     cell    seed    gold (bridge)          direct labels
=======  ======  ======  =====================  ==================================
st_0001  ST-d1   A       B                      B "Experiments" (section 2)
st_0002  ST-d2   F       H (G)                  H "2 Method" (section 1, normalised)
mt_0001  MT-d1   J       B, K                   B "Experiments", K "Experiments"
mt_0002  MT-d2   F       H, K (G)               H "4.1 Window Size" (a subsection:
                                                verbatim in Method's text), K "experiments"
st_0003  ST-d1   A       B                      B "Experiments"
st_0004  ST-d1   J       K                      K "Experiments"
st_0005  ST-d1   A       B                      B "Experiments"
=======  ======  ======  =====================  ==================================

Every pool paper has sections 0 Introduction, 1 Method, 2 Experiments,
3 Apdx_A: Proofs. K's Introduction text holds the word "experiments" (a label
naming the Experiments header must not be credited by it). Papers are named by the fixture's letters; ``pid(name)``
is the 40-hex paper ID.

``SessionWriter`` writes checkpoint records with the server's CheckpointLog,
tracking seq, budget and turns; ``RunnerWriter`` writes runner.jsonl.
``write_main_run`` writes the canonical run whose metrics the tests check
(the expected values are listed in its docstring).
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

from agenthop.corpus.importer import import_release
from agenthop.server.log.checkpoint import CheckpointLog
from support.release_fixture import ARXIV, _graph, _item, _label, _sections, make_release, pid

COSTS = {
    "search_papers": 1,
    "get_paper_info": 1,
    "get_references": 1,
    "list_sections": 1,
    "read_section": 5,
    "think": 0,
    "submit_answer": 0,
}
EXECUTED = ("ok", "not_found", "no_text", "ambiguous")
ALL_ITEMS = ("st_0001", "st_0002", "mt_0001", "mt_0002", "st_0003", "st_0004", "st_0005")


def _add_items(rel) -> None:
    # K's Introduction mentions the word of another header: the lowercase label "experiments" appears verbatim in
    # it, but the label names K's Experiments header, so reading the Introduction must not credit it.
    rel.paper("K")["sections"][0]["text"] = "Paper K introduces its topic; the experiments are in Section 3."
    rel.qa.append(
        _item(
            "mt_0002",
            "multi-target",
            2,
            "RESULT",
            "F",
            ["H", "K"],
            ["G"],
            "Which window size and batch size do the two works behind paper F's baseline use?",
            ["5 and 64", "17 and 64", "17 and 512", "33 and 512"],
            2,
            ["seed_only", "wrong_paper", "correct", "no_context"],
        )
    )
    rel.graphs.append(_graph("mt_0002", ["F", "G", "H", "K", "C"], {"F": ["G", "C"], "G": ["H", "K"]}))
    rel.labels.append(
        {
            "sample_id": "mt_0002",
            "analysis": {
                "section_recall_labels": [
                    _label("H", "4.1 Window Size", "direct"),
                    _label("K", "experiments", "direct"),
                    _label("H", "Introduction", "supporting"),
                ]
            },
        }
    )
    for item_id, seed, gold, correct, dist, graph in (
        (
            "st_0003",
            "A",
            "B",
            3,
            ["wrong_paper", "no_context", "seed_only", "correct"],
            (["A", "B", "C", "D", "E"], {"A": ["B", "C", "D"], "B": ["E"]}),
        ),
        (
            "st_0004",
            "J",
            "K",
            2,
            ["seed_only", "wrong_paper", "correct", "no_context"],
            (["J", "B", "K", "D", "E"], {"J": ["B", "K", "D"]}),
        ),
        (
            "st_0005",
            "A",
            "B",
            0,
            ["correct", "seed_only", "wrong_paper", "no_context"],
            (["A", "B", "C", "D", "E"], {"A": ["B", "C", "D"], "B": ["E"]}),
        ),
    ):
        rel.qa.append(
            _item(
                item_id,
                "single-target",
                1,
                "MOTIVE",
                seed,
                [gold],
                [],
                f"Question of {item_id}?",
                ["w", "x", "y", "z"],
                correct,
                dist,
            )
        )
        rel.graphs.append(_graph(item_id, *graph))
        rel.labels.append(
            {"sample_id": item_id, "analysis": {"section_recall_labels": [_label(gold, "Experiments", "direct")]}}
        )


def build_corpus(directory: Path) -> Path:
    """Import the scorer's corpus (release fixture + four items) into ``directory/corpus.sqlite``."""
    directory = Path(directory)
    release = make_release(directory, _add_items, name="scorer-release")
    out = directory / "corpus.sqlite"
    import_release(release, out, echo=lambda _: None)
    return out


def paper(name: str) -> str:
    return name if len(name) == 40 else pid(name)


def section_header(name: str, index: int) -> str:
    return _sections(name)[index]["header"]


class SessionWriter:
    """Writes one session's checkpoint records, like the server would."""

    def __init__(
        self,
        log: CheckpointLog,
        item_id: str | None,
        *,
        run: str | None = "main",
        session_id: str | None = None,
        caps: dict | None = None,
        client: dict | None = None,
        meta: bool = True,
        budget: int | None = 30,
        corpus: dict | None = None,
        tokens_per_turn: int = 1000,
    ):
        self.log = log
        self.tokens_per_turn = tokens_per_turn
        self.item_id = item_id
        self.run = run
        self.session_id = session_id or uuid.uuid4().hex
        self.seq = 0
        self.spent = 0
        self.turn = 0
        self.meta = meta
        self.ended = False
        self.turn_calls: dict[int, list[dict]] = {}
        self._write(
            "session_start",
            mode="item" if item_id else "explore",
            caps=caps or {"budget": budget, "max_turns": 20, "max_tokens": 200000},
            disabled_tools=[],
            client=client or {"name": "fixture", "agent": "scripted", "model": "none"},
            transport="http",
            corpus=corpus or {"corpus_id": None, "schema_version": 1},
            search={"engine": "bm25s", "method": "lucene", "k1": 1.5, "b": 0.75, "tokenizer": "fixture"},
        )

    def _write(self, kind: str, **fields) -> dict:
        rec = {
            "kind": kind,
            "run": self.run,
            "session_id": self.session_id,
            "item_id": self.item_id,
            "seq": self.seq,
            "time": 1_700_000_000.0 + self.seq,
            **fields,
        }
        self.seq += 1
        self.log.write(rec)
        return rec

    def call(
        self,
        tool: str,
        arguments: dict | None = None,
        *,
        outcome: str = "ok",
        exposed=(),
        delivered=None,
        turn: int | None = None,
        same_turn: bool = False,
        forced: bool = False,
    ) -> dict:
        if turn is None:
            turn = self.turn if same_turn else self.turn + 1
        self.turn = turn
        executed = outcome in EXECUTED
        cost = COSTS.get(tool, 0) if executed else 0
        before = self.spent
        self.spent += cost
        rec = self._write(
            "call",
            tool=tool,
            arguments=arguments or {},
            turn=turn if self.meta else None,
            tokens=self.tokens_per_turn * turn if self.meta else None,
            forced=forced,
            outcome=outcome,
            executed=executed,
            cost=cost,
            budget_before=before,
            budget_after=self.spent,
            latency_ms=1.0,
            exposed=[{"paper_id": paper(n), "rank": r} for n, r in exposed],
            delivered=delivered,
            output_chars=100,
            message=None if outcome == "ok" else f"{outcome} message",
        )
        if not forced:
            self.turn_calls.setdefault(turn, []).append(
                {"id": f"c{self.seq}", "name": tool, "arguments": arguments or {}}
            )
        return rec

    # tools -------------------------------------------------------------------
    def search(self, hits=(), **kw):
        return self.call("search_papers", {"query": "q", "top_k": 10}, exposed=hits, **kw)

    def refs(self, name: str, hits=(), **kw):
        return self.call("get_references", {"paper_id": paper(name)}, exposed=hits, **kw)

    def info(self, name: str, **kw):
        return self.call("get_paper_info", {"paper_id": paper(name)}, **kw)

    def sections(self, name: str, **kw):
        return self.call("list_sections", {"paper_id": paper(name)}, **kw)

    def read(self, name: str, index: int = 0, *, outcome: str = "ok", delivered=None, **kw):
        if outcome == "ok" and delivered is None:
            delivered = {
                "paper_id": paper(name),
                "arxiv_id": ARXIV.get(name),
                "section_index": index,
                "header": section_header(name, index),
            }
        return self.call(
            "read_section", {"paper_id": paper(name), "section": str(index)}, outcome=outcome, delivered=delivered, **kw
        )

    def think(self, **kw):
        return self.call("think", {"reasoning": "hmm"}, **kw)

    def submit(self, letter: str, **kw):
        rec = self.call("submit_answer", {"answer": letter, "reasoning": "because"}, **kw)
        self.end("answer", letter)
        return rec

    def end(self, termination: str, answer: str | None = None, reason: str | None = None):
        self.ended = True
        return self._write("session_end", termination=termination, answer=answer, budget_used=self.spent, reason=reason)


class RunnerWriter:
    """Writes runner.jsonl records."""

    def __init__(self, path: Path, run: str = "main", tokens_per_turn: int = 1000):
        self.path = Path(path)
        self.run = run
        self.k = tokens_per_turn / 1000  # 0: a run without a model, as the offline baseline
        self.path.parent.mkdir(parents=True, exist_ok=True)

    def write(self, rec: dict) -> None:
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(rec) + "\n")

    def run_start(self, agent: str = "scripted", model: str = "fixture-model", settings: dict | None = None):
        self.write(
            {
                "kind": "run_start",
                "run": self.run,
                "agent": agent,
                "model": model,
                "settings": settings or {"caps": {"budget": 30}, "workers": 1},
                "versions": {"agenthop": "0.1.0"},
                "time": 1_700_000_000.0,
            }
        )

    def turns(self, s: SessionWriter, extra_empty_turns: int = 0, attempt: int = 1) -> int:
        """One turn record per turn the session's calls carry, plus text-only turns; returns the turn count."""
        n = 0
        last = max(s.turn_calls) if s.turn_calls else 0
        for t in range(1, last + 1 + extra_empty_turns):
            calls = s.turn_calls.get(t, [])
            n += 1
            self.write(
                {
                    "kind": "turn",
                    "run": self.run,
                    "item_id": s.item_id,
                    "session_id": s.session_id,
                    "attempt": attempt,
                    "turn": t,
                    "prompt_tokens": int(900 * self.k),
                    "completion_tokens": int(100 * self.k),
                    "cached_tokens": 0,
                    "cumulative_tokens": int(1000 * t * self.k),
                    "tool_calls": calls,
                    "latency_ms": 10.0,
                    "retries": 0,
                    "error": None,
                    "time": 1_700_000_000.0 + t,
                }
            )
        return n

    def item_end(
        self,
        s: SessionWriter,
        termination: str,
        answer: str | None,
        turns: int,
        cost_usd: float | None = 0.01,
        attempt: int = 1,
    ):
        self.write(
            {
                "kind": "item_end",
                "run": self.run,
                "item_id": s.item_id,
                "session_id": s.session_id,
                "attempt": attempt,
                "termination": termination,
                "answer": answer,
                "turns": turns,
                "prompt_tokens": int(900 * turns * self.k),
                "completion_tokens": int(100 * turns * self.k),
                "cached_tokens": 0,
                "total_tokens": int(1000 * turns * self.k),
                "budget_used": s.spent,
                "cost_usd": cost_usd,
                "wall_time_s": 1.0,
                "time": 1_700_000_100.0,
            }
        )


def new_run_dir(
    root: Path, name: str = "main", manifest: dict | None = None
) -> tuple[Path, CheckpointLog, RunnerWriter]:
    run_dir = Path(root) / name
    run_dir.mkdir(parents=True, exist_ok=True)
    if manifest is not None:
        (run_dir / "run.json").write_text(json.dumps(manifest), encoding="utf-8")
    return run_dir, CheckpointLog(run_dir / "server-log.sqlite"), RunnerWriter(run_dir / "runner.jsonl", run=name)


def write_main_run(root: Path, name: str = "main", runner: bool = True, manifest: dict | None = None) -> Path:
    """The canonical run. Known by construction (with --items naming all seven items):

    * correct: st_0001, mt_0002 -> accuracy 2/7 (2/6 without --items: st_0004 has no log).
    * paper recall: st_0001 (B delivered), mt_0002 (H and K delivered) -> ST 1/5, MT 1/2.
      st_0002 reads H with outcome not_found (inspected, not recalled); mt_0001 delivers
      only B (K's read is budget_rejected).
    * section recall: st_0001 only (mt_0002's K read is section 0, not its labelled one) -> 1/7.
    * conversion: ST 1/1, MT 1/1.
    * audit: correct 2, incorrect_inspected 2 (st_0002, mt_0001), incorrect_exposed 1
      (st_0005: B at rank 55), incorrect_neither 1 (st_0003), unobservable 1 (st_0004).
    * failure attribution (5 wrong): unknown 1 (st_0002, no distractor types), wrong_paper 2
      (st_0003, mt_0001), no_answer 2 (st_0004, st_0005).
    * calls per turn (runner): 24 calls over 23 assistant turns (22 with calls; st_0005 has one text-only turn).
    * budget: 6, 12, 0, 6, 12, 11 points on the six observed items.
    * termination: st_0005 max_turns (runner item_end; no session_end) -> turn cap 1/7.
    """
    run_dir, log, rw = new_run_dir(root, name, manifest)
    if runner:
        rw.run_start()
    sessions = []

    s = SessionWriter(log, "st_0001", run=name)
    s.search(hits=[("C", 1), ("B", 3)])
    s.read("B", 2)
    s.think()
    s.submit("B")
    sessions.append((s, "answer", "B", 0))

    s = SessionWriter(log, "st_0002", run=name)
    s.refs("F", hits=[("G", 1), ("C", 2)])
    s.refs("G", hits=[("H", 1), ("E", 2)])
    s.read("G", 0)
    s.read("H", 9, outcome="not_found")
    s.submit("B")
    sessions.append((s, "answer", "B", 0))

    s = SessionWriter(log, "st_0003", run=name)
    s.think()
    s.submit("A")
    sessions.append((s, "answer", "A", 0))

    s = SessionWriter(log, "mt_0001", run=name)
    s.search(hits=[("B", 2), ("K", 8)])
    s.read("B", 2)
    s.read("K", 2, outcome="budget_rejected")
    s.submit("B")
    sessions.append((s, "answer", "B", 0))

    s = SessionWriter(log, "mt_0002", run=name)
    s.refs("F", hits=[("G", 1), ("C", 2)])
    s.refs("G", hits=[("H", 1), ("K", 2)], same_turn=True)
    s.read("H", 1)
    s.read("K", 0, same_turn=True)
    s.submit("C")
    sessions.append((s, "answer", "C", 0))

    s = SessionWriter(log, "st_0005", run=name)
    s.refs("A", hits=[("C", 1), ("D", 2), ("B", 55)])
    s.read("C", 0, outcome="no_text")
    s.read("A", 1)
    s.think()
    sessions.append((s, "max_turns", None, 1))  # the runner ends it; no session_end in the log

    log.close()
    if runner:
        for s, term, ans, empty in sessions:
            n = rw.turns(s, extra_empty_turns=empty)
            rw.item_end(s, term, ans, n)
    return run_dir


def write_items_file(path: Path, ids=ALL_ITEMS) -> Path:
    Path(path).write_text("".join(json.dumps({"id": i}) + "\n" for i in ids), encoding="utf-8")
    return Path(path)


#: run.json as the runner writes it for the offline baseline (nested settings, booleans, nulls).
BASELINE_MANIFEST = {
    "run": "baseline",
    "agent": "baseline",
    "model": "baseline",
    "caps": {"budget": 30, "max_turns": 20, "max_tokens": 200000},
    "ablations": {"closed_book": False, "disabled_tools": [], "read_first": False},
    "disabled_tools": [],
    "base_url_host": None,
    "api_key_env": None,
    "retry": {"max_retries": 6, "backoff": 2.0, "timeout": 300.0, "item_attempts": 3},
    "workers": 1,
    "server": "in-process",
    "items_file": "splits/demo.jsonl",
    "corpus": None,
    "versions": {"agenthop": "0.1.0"},
}


def write_baseline_run(root: Path, name: str = "baseline") -> Path:
    """A run like the offline baseline's: every token count is 0 (no model), settings nested as in run.json.

    It answers st_0001 (reading B) and st_0003 correctly, mt_0001 wrongly; one turn per call.
    """
    run_dir, log, _ = new_run_dir(root, name, {**BASELINE_MANIFEST, "run": name})
    rw = RunnerWriter(run_dir / "runner.jsonl", run=name, tokens_per_turn=0)
    rw.run_start(
        agent="baseline", model="baseline", settings={k: BASELINE_MANIFEST[k] for k in ("caps", "ablations", "retry")}
    )
    for item_id, reads, letter in (("st_0001", ["B"], "B"), ("st_0003", ["B"], "D"), ("mt_0001", ["B"], "C")):
        s = SessionWriter(log, item_id, run=name, tokens_per_turn=0)
        s.search(hits=[("B", 1)])
        for p in reads:
            s.sections(p)
            s.read(p, 2)
        s.submit(letter)
        rw.item_end(s, "answer", letter, rw.turns(s), cost_usd=None)
    log.close()
    return run_dir
