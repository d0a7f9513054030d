"""Auditors' verdicts: an append-only SQLite table, each row attributed and committed before the page is told it is saved.

Several auditors may review the same candidate. What counts (docs/construct.md):
each auditor's latest verdict; a candidate is removed when any auditor's latest
verdict is Remove, and flagged (kept, listed for the lead's triage) when any is
Flag; the latest label edit by anyone replaces the generated labels.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from pathlib import Path

from agenthop.construct.stagefiles import canonical, digest

VERDICTS = ("pass", "flag", "remove")
AXES = ("well_formed", "gold_supported", "labels_accurate")


class VerdictError(ValueError):
    """A verdict that cannot be saved; the message says which field is wrong."""


class VerdictStore:
    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self.conn.execute("PRAGMA journal_mode = WAL")
        self.conn.execute("PRAGMA synchronous = FULL")
        self.conn.execute(
            "CREATE TABLE IF NOT EXISTS verdicts (seq INTEGER PRIMARY KEY, candidate TEXT NOT NULL, auditor TEXT NOT NULL, "
            "at REAL NOT NULL, verdict TEXT NOT NULL, axes TEXT NOT NULL, note TEXT NOT NULL, labels TEXT)"
        )
        self.lock = threading.Lock()

    def add(
        self, candidate: str, auditor: str, verdict: str, axes: dict, note: str = "", labels: list | None = None
    ) -> int:
        if not auditor.strip():
            raise VerdictError("auditor: give your name, so that the verdict is attributed")
        if verdict not in VERDICTS:
            raise VerdictError(f"verdict: one of {', '.join(VERDICTS)}, found {verdict!r}")
        if set(axes) - set(AXES) or not all(isinstance(v, bool) for v in axes.values()):
            raise VerdictError(f"axes: an object of true/false for {', '.join(AXES)}, found {axes!r}")
        if verdict == "flag" and not note.strip():
            raise VerdictError("note: a Flag needs a note saying what the lead should look at")
        if labels is not None:
            for i, lab in enumerate(labels):
                if (
                    not isinstance(lab, dict)
                    or not isinstance(lab.get("section"), str)
                    or lab.get("relevance") not in ("direct", "supporting")
                    or not isinstance(lab.get("paper_id"), str)
                ):
                    raise VerdictError(
                        f"labels[{i}]: an object with paper_id, section and relevance (direct or supporting), found {lab!r}"
                    )
        with self.lock:
            cur = self.conn.execute(
                "INSERT INTO verdicts(candidate, auditor, at, verdict, axes, note, labels) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    candidate,
                    auditor.strip(),
                    time.time(),
                    verdict,
                    canonical(axes),
                    note,
                    None if labels is None else canonical(labels),
                ),
            )
            seq = cur.lastrowid
            assert seq is not None, "an INSERT sets lastrowid"
            return seq

    def rows(self) -> list[dict]:
        with self.lock:
            rows = self.conn.execute(
                "SELECT seq, candidate, auditor, at, verdict, axes, note, labels FROM verdicts ORDER BY seq"
            ).fetchall()
        return [
            {
                "seq": r[0],
                "candidate": r[1],
                "auditor": r[2],
                "at": r[3],
                "verdict": r[4],
                "axes": json.loads(r[5]),
                "note": r[6],
                "labels": None if r[7] is None else json.loads(r[7]),
            }
            for r in rows
        ]

    def effective(self) -> dict[str, dict]:
        """candidate -> {"verdict", "by": {auditor: latest row}, "labels": latest edit or None}."""
        out: dict[str, dict] = {}
        for row in self.rows():
            entry = out.setdefault(row["candidate"], {"by": {}, "labels": None})
            entry["by"][row["auditor"]] = row
            if row["labels"] is not None:
                entry["labels"] = row["labels"]
        for entry in out.values():
            latest = {r["verdict"] for r in entry["by"].values()}
            entry["verdict"] = "remove" if "remove" in latest else "flag" if "flag" in latest else "pass"
        return out

    def fingerprint(self) -> str:
        """What the audit stage's output depends on: every verdict's content (not when it was given)."""
        return digest(canonical([{k: v for k, v in r.items() if k not in ("at", "seq")} for r in self.rows()]))

    def close(self) -> None:
        self.conn.close()


def apply_verdicts(cands: list[dict], store: VerdictStore) -> list[dict]:
    effective = store.effective()
    out = []
    for cand in cands:
        entry = effective.get(cand["id"])
        if entry is None:
            out.append({**cand, "audit": {"verdict": "unreviewed"}})
            continue
        record = {
            **cand,
            "audit": {
                "verdict": entry["verdict"],
                "auditors": sorted(entry["by"]),
                "notes": [f"{a}: {r['note']}" for a, r in sorted(entry["by"].items()) if r["note"]],
            },
        }
        if entry["labels"] is not None:
            record["labels"] = entry["labels"]
            record["audit"]["labels_edited"] = True
        if entry["verdict"] == "remove":
            record["drop"] = {"reason": "removed_by_auditor", "detail": "; ".join(record["audit"]["notes"])}
        out.append(record)
    return out
