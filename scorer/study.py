"""People beside models: a study's participants (from the checkpoint log of ``agenthop-server play --study``) and
model runs, scored the same way on the same items and reported side by side (study.json, study.md, study.html).

Rows: each participant, the people pooled (every attempt of every participant), and each model run on the items
the people played. Columns: the four axes (search: paper and section recall; synthesis: conversion; tool use: calls
per turn, a person's actions being their turns; resources: budget and turns), the exposure audit, and time per item
and per call (from the records' times: a call's time is the time since the record before it, so a person's reading
and thinking count, as a model's latency does).

Paired tests, as the paper pairs runs: every attempt of a person is paired with the model's result on the same item
(McNemar's exact test on the discordant pairs, a paired bootstrap over attempts, and a bootstrap over clusters of
items sharing their gold papers).
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from agenthop.scorer import metrics, report_html, report_md, stats
from agenthop.scorer.audit import CATEGORIES, CATEGORY_LABELS
from agenthop.scorer.document import Document, Section, Table, num, pct
from agenthop.scorer.errors import ScorerError
from agenthop.scorer.gold import Gold
from agenthop.scorer.logs import Run, gc_paused
from agenthop.scorer.results import SCORER_VERSION
from agenthop.scorer.scoring import _expand, _load, check_corpus, open_gold
from agenthop.scorer.summary import score_run
from agenthop.server.log.checkpoint import read_records

STUDY_SCHEMA_VERSION = 1
PEOPLE = "people (pooled)"


def study_participants(log: str | Path, study_id: str | None = None) -> tuple[str, dict[str, str]]:
    """(study ID, participant -> run label) of the study sessions in a checkpoint log."""
    found: dict[str, dict[str, str]] = {}
    for record in read_records(log):
        if record.get("kind") != "session_start":
            continue
        client = record.get("client") or {}
        study = client.get("study") or {}
        if client.get("name") != "human" or not study.get("id") or not client.get("participant"):
            continue
        found.setdefault(study["id"], {}).setdefault(str(client["participant"]), str(record.get("run")))
    if study_id is not None:
        if study_id not in found:
            raise ScorerError(
                "{people} holds no attempt of study {study} (it holds {held}).",
                "people",
                study=study_id,
                held=", ".join(sorted(found)) or "no study at all",
            )
        return study_id, found[study_id]
    if len(found) != 1:
        raise ScorerError(
            "{people} holds {what}: name the study with {study_id}.",
            "people",
            what=f"the studies {', '.join(sorted(found))}" if found else "no attempt made in study mode",
        )
    (only,) = found
    return only, found[only]


def _only(run: Run, participant: str, study: str) -> Run:
    """The run with only this participant's sessions of this study: one run label may hold several people's
    (``agenthop-server play --run LABEL``) or attempts outside the study."""
    run.sessions = {
        sid: s
        for sid, s in run.sessions.items()
        if s.start is not None
        and (s.start.client or {}).get("participant") == participant
        and ((s.start.client or {}).get("study") or {}).get("id") == study
    }
    return run


def _times(run: Run, session_ids: Iterable[str]) -> tuple[list[float], list[float]]:
    """(seconds per item, seconds per call) of the chosen sessions: start to end, and record to record."""
    per_item: list[float] = []
    per_call: list[float] = []
    for sid in session_ids:
        session = run.sessions.get(sid)
        if session is None or session.start is None:
            continue
        marks = [session.start.time, *(c.time for c in session.calls)]
        per_call += [b - a for a, b in zip(marks, marks[1:]) if b >= a]
        if session.end is not None:
            per_item.append(session.end.time - session.start.time)
    return per_item, per_call


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def _row(name: str, kind: str, rows: list[dict], per_item: list[float], per_call: list[float], cpt_source) -> dict:
    group = metrics.group_metrics(rows, cpt_source)
    return {
        "name": name,
        "kind": kind,
        "attempts": len(rows),
        "items": len({r["item_id"] for r in rows}),
        "accuracy": group["accuracy"],
        "accuracy_ci95": group["accuracy_ci95"],
        "paper_recall": group["paper_recall"],
        "section_recall": group["section_recall"],
        "conversion": group["conversion"],
        "calls_per_turn": group["calls_per_turn"],
        "mean_budget": group["mean_budget"],
        "mean_turns": group["mean_turns"],
        "audit": group["audit"],
        "seconds_per_item_median": _median(per_item),
        "seconds_per_item_mean": statistics.fmean(per_item) if per_item else None,
        "seconds_per_call_median": _median(per_call),
        "timed_items": len(per_item),
    }


def _paired(people: list[dict], model: dict[str, dict], *, seed: int, resamples: int) -> dict:
    """Each person's attempt against the model's result on the same item."""
    pairs = [(r, model[r["item_id"]]) for r in people if r["item_id"] in model]
    a = np.array([p["correct"] for p, _ in pairs], dtype=int)
    b = np.array([m["correct"] for _, m in pairs], dtype=int)
    model_right = int(((b == 1) & (a == 0)).sum())
    person_right = int(((b == 0) & (a == 1)).sum())
    clusters = [tuple(sorted(p["gold_papers"])) for p, _ in pairs]
    return {
        "pairs": len(pairs),
        "people_accuracy": float(a.mean()) if pairs else None,
        "model_accuracy": float(b.mean()) if pairs else None,
        "difference_model_minus_people": float(b.mean() - a.mean()) if pairs else None,
        "both_correct": int(((a == 1) & (b == 1)).sum()),
        "both_wrong": int(((a == 0) & (b == 0)).sum()),
        "model_right_person_wrong": model_right,
        "person_right_model_wrong": person_right,
        "mcnemar_exact_p": stats.mcnemar_exact(model_right, person_right),
        "bootstrap_attempts": stats.paired_bootstrap(a.tolist(), b.tolist(), resamples=resamples, seed=seed),
        "bootstrap_clusters": stats.cluster_bootstrap(a.tolist(), b.tolist(), clusters, resamples=resamples, seed=seed),
    }


def study_report(
    people_log: str | Path,
    models: Iterable[str | Path],
    corpus: str | Path,
    *,
    out: str | Path | None = None,
    study_id: str | None = None,
    server_log: str | Path | None = None,
    seed: int = 0,
    resamples: int = 10000,
) -> dict:
    """The side-by-side comparison as a dict (study.json); with ``out``, also study.json/.md/.html there."""
    if not Path(people_log).is_file():
        raise ScorerError("{people} {path} is not a checkpoint log file.", "people", path=people_log)
    study, labels = study_participants(people_log, study_id)
    gold = open_gold(corpus)
    try:
        result = _score_all(study, labels, people_log, list(models), gold, corpus, server_log, seed, resamples)
    finally:
        gold.close()
    if out is not None:
        write_study_reports(result, out)
    return result


def _score_all(study, labels, people_log, models, gold: Gold, corpus, server_log, seed, resamples) -> dict:
    corpus_id = gold.meta.get("corpus_id")
    people_rows, table, person_rows = [], [], {}
    pooled_item, pooled_call, source = [], [], None
    with gc_paused():
        for participant, label in sorted(labels.items()):
            run = _only(_load(f"{people_log}::{label}", None), participant, study)
            check_corpus(run.name, run.corpus_ids(), corpus, corpus_id)
            summary = score_run(run, gold)
            # In the order the participant played them (their study order).
            rows = sorted(
                (r for r in summary["item_results"] if r["observed"]), key=lambda r: run.sessions[r["session_id"]].order
            )
            source = source or summary["calls_per_turn"]["source"]
            per_item, per_call = _times(run, [r["session_id"] for r in rows])
            pooled_item += per_item
            pooled_call += per_call
            table.append(_row(participant, "person", rows, per_item, per_call, summary["calls_per_turn"]["source"]))
            person_rows[participant] = rows
            people_rows += rows
        if not people_rows:
            raise ScorerError("{people} holds no ended attempt of study {study}.", "people", study=study)
        items = sorted({r["item_id"] for r in people_rows})
        table.append(_row(PEOPLE, "people", people_rows, pooled_item, pooled_call, source))
        pairs = []
        for spec in _expand(models):
            run = _load(spec, server_log)
            check_corpus(run.name, run.corpus_ids(), corpus, corpus_id)
            summary = score_run(run, gold, items)
            rows = summary["item_results"]
            per_item, per_call = _times(run, [r["session_id"] for r in rows if r["session_id"]])
            table.append(_row(run.name, "model", rows, per_item, per_call, summary["calls_per_turn"]["source"]))
            by_item = {r["item_id"]: r for r in rows}
            pairs.append(
                {
                    "model": run.name,
                    "pooled": _paired(people_rows, by_item, seed=seed, resamples=resamples),
                    "per_participant": {
                        p: _paired(rs, by_item, seed=seed, resamples=resamples) for p, rs in sorted(person_rows.items())
                    },
                }
            )
    return {
        "schema_version": STUDY_SCHEMA_VERSION,
        "scorer_version": SCORER_VERSION,
        "study": study,
        "log": str(people_log),
        "participants": sorted(labels),
        "items": items,
        "attempts": {p: [r["item_id"] for r in rs] for p, rs in sorted(person_rows.items())},
        "rows": table,
        "paired": pairs,
    }


# --- reports ---------------------------------------------------------------------------------------------------


def _secs(value: float | None) -> str:
    return num(value, 1) if value is not None else "n/a (not ended)"


def study_document(result: dict) -> Document:
    rows = result["rows"]
    axes = Table(
        [
            "who",
            "kind",
            "items",
            "accuracy",
            "paper recall",
            "section recall",
            "conversion",
            "calls/turn",
            "budget",
            "turns",
            "s per item (median)",
            "s per call (median)",
        ],
        [
            [
                r["name"],
                r["kind"],
                str(r["attempts"]),
                pct(r["accuracy"]),
                pct(r["paper_recall"]),
                pct(r["section_recall"]),
                pct(r["conversion"], "n/a (no gold paper found)"),
                num(r["calls_per_turn"], 2, "n/a (no turn data)"),
                num(r["mean_budget"], 2),
                num(r["mean_turns"], 2, "n/a (no turn data)"),
                _secs(r["seconds_per_item_median"]),
                _secs(r["seconds_per_call_median"]),
            ]
            for r in rows
        ],
        caption="The four axes and time, on the items the people played (a model on all of them; a person on "
        "their own). Search: paper and section recall; synthesis: conversion; tool use: calls per turn (a person's "
        "action is a turn); resources: budget points and turns.",
        left=2,
    )
    audit = Table(
        ["who", *[CATEGORY_LABELS.get(c, c) for c in CATEGORIES]],
        [[r["name"], *[str(r["audit"].get(c, 0)) for c in CATEGORIES]] for r in rows],
        caption="The exposure audit: attempts in each category.",
        left=1,
    )
    paired_rows = []
    for entry in result["paired"]:
        for who, p in [(PEOPLE, entry["pooled"]), *entry["per_participant"].items()]:
            boot = p["bootstrap_attempts"]
            ci = boot["ci95"]
            paired_rows.append(
                [
                    entry["model"],
                    who,
                    str(p["pairs"]),
                    pct(p["people_accuracy"]),
                    pct(p["model_accuracy"]),
                    f"{p['model_right_person_wrong']} / {p['person_right_model_wrong']}",
                    num(p["mcnemar_exact_p"], 3),
                    f"[{ci[0]:+.3f}, {ci[1]:+.3f}]" if ci else "n/a (no pairs)",
                ]
            )
    paired = Table(
        [
            "model",
            "people",
            "pairs",
            "people accuracy",
            "model accuracy",
            "model only / person only",
            "McNemar p",
            "95% CI of model - people",
        ],
        paired_rows,
        caption="Each attempt of a person paired with the model's result on the same item: McNemar's exact test "
        "on the discordant pairs, and a paired bootstrap over attempts.",
        left=2,
    )
    assigned = Section(
        "Participants and items",
        paragraphs=[
            f"Study {result['study']}: {len(result['participants'])} participants, {len(result['items'])} items "
            f"played, from the checkpoint log {result['log']}."
        ],
        bullets=[f"{p}: {', '.join(items)}" for p, items in result["attempts"].items()],
    )
    return Document(
        title=f"Study {result['study']}: people beside models",
        sections=[
            Section("Side by side", tables=[axes]),
            Section("Audit", tables=[audit]),
            Section("Paired tests", tables=[paired]),
            assigned,
        ],
    )


def write_study_reports(result: dict, out: str | Path) -> Path:
    directory = Path(out)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "study.json").write_text(json.dumps(result, indent=1), encoding="utf-8")
    doc = study_document(result)
    (directory / "study.md").write_text(report_md.render(doc), encoding="utf-8")
    (directory / "study.html").write_text(report_html.render(doc), encoding="utf-8")
    return directory
