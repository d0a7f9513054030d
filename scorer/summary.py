"""Score one run and assemble its versioned JSON summary.

``SUMMARY_SCHEMA_VERSION`` changes when the summary's layout changes (a key is
renamed, removed or changes meaning). ``SCORER_VERSION`` changes whenever a
scorer change can change any number in a summary, so two summaries with the
same scorer version and inputs always agree.
"""

from __future__ import annotations

import datetime as _dt
import json
from collections import Counter

import msgspec

from agenthop.scorer import audit, metrics, trajectory
from agenthop.scorer.gold import Gold
from agenthop.scorer.items import resolve_items
from agenthop.scorer.logs import Run
from agenthop.scorer.results import SCORER_VERSION, SUMMARY_SCHEMA_VERSION

#: The run.json keys (runner/run.py ``manifest``) reported as the run's settings, as in the runner's run_start.
MANIFEST_SETTINGS = (
    "caps",
    "ablations",
    "disabled_tools",
    "sampling",
    "base_url_host",
    "workers",
    "retry",
    "server",
    "items_file",
)

#: Why a run whose items all report 0 tokens has no token data.
NO_MODEL_TOKENS = "every item reports 0 tokens (no model was called, as with the offline baseline)"

HEADLINE_KEYS = (
    "accuracy",
    "paper_recall_st",
    "paper_recall_mt",
    "section_recall",
    "conversion_st",
    "conversion_mt",
    "calls_per_turn",
    "mean_tokens",
    "mean_turns",
    "mean_budget",
    "pct_token_cap",
    "pct_turn_cap",
    "pct_budget",
)


def _distinct(values) -> list[dict]:
    counts: Counter = Counter(json.dumps(v, sort_keys=True) for v in values)
    return [{"value": json.loads(k), "sessions": n} for k, n in sorted(counts.items(), key=lambda kv: -kv[1])]


def run_identity(run: Run) -> dict:
    start = run.run_start
    m = run.manifest
    clients = [s.start.client for s in run.sessions.values() if s.start]
    client = clients[0] if clients else {}
    settings = {k: m[k] for k in MANIFEST_SETTINGS if k in m} or (start.settings if start else None)
    return {
        "name": run.name,
        "label": run.label,
        "log": str(run.log_path),
        "run_dir": str(run.run_dir) if run.run_dir else None,
        "agent": m.get("agent") or (start.agent if start else None) or client.get("agent"),
        "model": m.get("model") or (start.model if start else None) or client.get("model"),
        "settings": settings,
        "versions": m.get("versions") or (start.versions if start else None),
        "replicate_of": run.replicate_of,
        "manifest": m or None,
        "runner_records": len(run.runner_records),
        "runner_lines_skipped": run.runner_lines_skipped,
        "checkpoint_records": run.n_records,
    }


def session_provenance(outcomes) -> dict:
    starts = [it.session.start for it in outcomes if it.session and it.session.start]
    return {
        "n_sessions": len(starts),
        "caps": _distinct(msgspec.to_builtins(s.caps) for s in starts),
        "search": _distinct(s.search for s in starts),
        "disabled_tools": _distinct(sorted(s.disabled_tools) for s in starts),
        "transport": _distinct(s.transport for s in starts),
        "corpus": _distinct(s.corpus for s in starts),
        "client": _distinct(s.client for s in starts),
    }


def headline(br: dict, cpt: dict, res: dict) -> dict:
    st = br["by_type"].get("ST", {})
    mt = br["by_type"].get("MT", {})
    ov = br["overall"]
    return {
        "accuracy": ov["accuracy"],
        "paper_recall_st": st.get("paper_recall"),
        "paper_recall_mt": mt.get("paper_recall"),
        "section_recall": ov["section_recall"],
        "conversion_st": st.get("conversion"),
        "conversion_mt": mt.get("conversion"),
        "calls_per_turn": cpt["value"],
        "mean_tokens": res["tokens"]["mean"],
        "mean_turns": res["turns"]["mean"],
        "mean_budget": res["budget"]["mean"],
        "pct_token_cap": res["pct_token_cap"],
        "pct_turn_cap": res["pct_turn_cap"],
        "pct_budget": res["pct_budget"],
    }


def _warnings(run: Run, gold: Gold, outcomes, info: dict, prov: dict, cpt: dict, res: dict) -> list[str]:
    out = []
    if run.runner_lines_skipped:
        out.append(
            f"{run.runner_lines_skipped} line(s) of runner.jsonl are not valid JSON records and were skipped "
            "(a crash tears the line being written; the resumed run starts a fresh one)."
        )
    if info.get("unknown_to_corpus"):
        ids = info["unknown_to_corpus"]
        out.append(
            f"{len(ids)} item(s) in the logs are not in the corpus and were not scored: {', '.join(ids[:5])}"
            + (" ..." if len(ids) > 5 else "")
        )
    if info.get("not_in_items_file"):
        out.append(f"{len(info['not_in_items_file'])} logged item(s) are not in the items file and were ignored.")
    open_sessions = [it for it in outcomes if it.session is not None and it.session.end is None]
    if open_sessions:
        # A session with no end record may still be running (scored too early) or its client stopped without
        # ending it: either way the scorer counts it as abandoned, and says so.
        ids = [it.item_id for it in open_sessions]
        no_calls = sum(1 for it in open_sessions if not it.session.calls)
        out.append(
            f"{len(ids)} session(s) never ended ({', '.join(ids[:5])}{' ...' if len(ids) > 5 else ''}"
            f"{f'; {no_calls} with no call at all' if no_calls else ''}): still open when scored, or the client "
            "stopped without ending them (POST /sessions/ID/end, or submit_answer). They count as abandoned; "
            "score again once they have ended."
        )
    unobs = sum(1 for it in outcomes if not it.observed)
    if unobs:
        out.append(f"{unobs} item(s) have no session log (unobservable; counted wrong).")
    if not cpt["measured"]:
        out.append("calls per turn not measured: no runner turn records and no 'turn' in the checkpoint calls.")
    if not res["tokens"]["measured"]:
        out.append(f"tokens not measured: {res['tokens']['reason']}.")
    schema = gold.meta.get("schema_version")
    for entry in prov["corpus"]:
        c = entry["value"] or {}
        if c.get("schema_version") not in (None, schema):
            out.append(
                f"{entry['sessions']} session(s) ran on corpus schema version {c.get('schema_version')}, "
                f"the scoring corpus has {schema}."
            )
        ran_on = c.get("corpus_id") or c.get("sha256")
        if ran_on and gold.meta.get("corpus_id") and ran_on != gold.meta["corpus_id"]:
            out.append(
                f"{entry['sessions']} session(s) ran on corpus {str(ran_on)[:16]}..., but the scoring corpus is "
                f"{str(gold.meta['corpus_id'])[:16]}...; gold may not match what the agent saw."
            )
    no_direct = sum(
        1 for it in outcomes if any(not it.gold.direct_labels(it.gold.gold_arxiv(p)) for p in it.gold.gold_paper_ids)
    )
    if no_direct:
        out.append(f"{no_direct} item(s) have a gold paper without a 'direct' recall label; their section recall is 0.")
    return out


def score_run(run: Run, gold: Gold, expected: list[str] | None = None) -> dict:
    """The full summary of one run (a JSON-serialisable dict)."""
    outcomes, info = resolve_items(run, gold, expected)
    src = metrics.turn_source(outcomes)
    rows = [metrics.item_row(it, gold, src) for it in outcomes]
    zeros = any(r["tokens"] == 0 for r in rows)
    if not any(r["tokens"] for r in rows):
        for r in rows:  # only zeros (or nothing): no model was called, so there is no token count to report
            r["tokens"] = r["tokens_source"] = None
    br = metrics.breakdowns(rows, src)
    cpt = metrics.calls_per_turn(rows, src)
    res = metrics.resources(rows)
    if not res["tokens"]["measured"]:
        res["tokens"]["reason"] = (
            NO_MODEL_TOKENS if zeros else "no runner records and no 'tokens' in the checkpoint calls"
        )
    prov = session_provenance(outcomes)
    cats = [r["audit"] for r in rows]
    audit_by_type = {q: audit.audit_counts([r["audit"] for r in rows if r["qtype"] == q]) for q in ("ST", "MT")}
    exposure = audit.summarize_exposure([r["exposures"] for r in rows if r["observed"]])
    summary = {
        "schema_version": SUMMARY_SCHEMA_VERSION,
        "scorer_version": SCORER_VERSION,
        "generated_at": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "run": run_identity(run),
        "corpus": gold.provenance(),
        "sessions": prov,
        "items": {
            "n": len(rows),
            "observed": sum(1 for r in rows if r["observed"]),
            "unobservable": sum(1 for r in rows if not r["observed"]),
            **info,
        },
        "headline": headline(br, cpt, res),
        "metrics": br,
        "calls_per_turn": cpt,
        "resources": res,
        "audit": {**audit.audit_counts(cats), "by_type": audit_by_type, "labels": audit.CATEGORY_LABELS},
        "exposure": exposure,
        "trajectory": trajectory.analyze(outcomes),
        "failure_attribution": metrics.failure_attribution(outcomes),
        "position_bias": metrics.position_bias(outcomes),
        "budget_views": metrics.budget_views(rows),
        "warnings": _warnings(run, gold, outcomes, info, prov, cpt, res),
        "item_results": rows,
    }
    return summary
