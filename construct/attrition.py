"""The attrition table in the layout of the paper's Table 5: each stage's count, and its drops by reason.

Below it, the artifact check of the surviving items (``construct/artifacts.py``): each solver that sees no
evidence, its accuracy and Wilson interval, the figures the release's provenance records.
"""

from __future__ import annotations

from collections import Counter

from agenthop.construct import artifacts

ROWS = (  # stage file, row name, what its count counts
    ("seeds", "Seeds"),
    ("chains", "Candidate chains"),
    ("qa", "Q/A pairs"),
    ("distractors", "Q/A pairs with distractors"),
    ("artifacts", "Artifact check"),
    ("ensemble", "Ensemble filter"),
    ("sanity", "Sanity check"),
    ("audit", "Human audit"),
    ("postfilter", "Post-filter"),
)


def _reasons(records: list[dict]) -> dict[str, int]:
    return dict(
        sorted(Counter(r["drop"]["reason"] for r in records if "drop" in r).items(), key=lambda kv: (-kv[1], kv[0]))
    )


def table(stage_records: dict[str, list[dict]]) -> dict:
    """{"rows": [{stage, name, entered, dropped, kept, reasons, ...}], "final": {...}} from each stage's records."""
    rows = []
    for stage, name in ROWS:
        records = stage_records.get(stage)
        if records is None:
            continue
        unasked = ("not_sampled", "target_taken")  # Q/A never asked these chains, so they count as not sampled
        entered = [r for r in records if not (stage == "qa" and r.get("drop", {}).get("reason") in unasked)]
        kept = [r for r in records if "drop" not in r]
        row = {
            "stage": stage,
            "name": name,
            "entered": len(records),
            "kept": len(kept),
            "dropped": len(records) - len(kept),
            "reasons": _reasons(records),
        }
        if stage == "chains":
            row["by_cell"] = dict(sorted(Counter(f"{r['kind']}-d{r['depth']}" for r in records).items()))
            row["kept_by_cell"] = dict(sorted(Counter(f"{r['kind']}-d{r['depth']}" for r in kept).items()))
        if stage == "qa":
            row["sampled"] = len(entered)
        if stage == "audit":
            row["flagged"] = sum(r.get("audit", {}).get("verdict") == "flag" for r in kept)
            row["unreviewed"] = sum(r.get("audit", {}).get("verdict") == "unreviewed" for r in kept)
        if stage == "postfilter":
            row["by_cell"] = dict(sorted(Counter(f"{r['kind']}-d{r['depth']}" for r in kept).items()))
            row["tiers"] = dict(sorted(Counter(r.get("consensus_tier") for r in kept).items()))
        rows.append(row)
    return {"rows": rows}


def markdown(att: dict) -> str:
    lines = ["| Stage | Count | Dropped | Drops by reason | Remaining |", "|---|---:|---:|---|---:|"]
    for row in att["rows"]:
        reasons = ", ".join(f"{k} −{v}" for k, v in row["reasons"].items()) or "–"
        if row["stage"] == "seeds":
            lines.append(
                f"| Seeds (papers with text considered) | {row['entered']} | {row['dropped']} | {reasons} | {row['kept']} |"
            )
        elif row["stage"] == "chains":
            cells = ", ".join(f"{k} {v}" for k, v in row["by_cell"].items()) or "none"  # never an empty "()"
            lines.append(
                f"| Candidate chains ({cells}) | {row['entered']} | {row['dropped']} | {reasons} | {row['kept']} |"
            )
        elif row["stage"] == "qa":
            lines.append(
                f"| Q/A generation ({row['sampled']} chains sampled) | {row['entered']} | {row['dropped']} | {reasons} | {row['kept']} |"
            )
        elif row["stage"] == "audit":
            extra = f"; flagged and kept {row['flagged']}, not reviewed {row['unreviewed']}"
            lines.append(f"| Human audit | {row['entered']} | {row['dropped']} | {reasons}{extra} | {row['kept']} |")
        elif row["stage"] == "postfilter":
            cells = ", ".join(f"{k} {v}" for k, v in row["by_cell"].items()) or "none"
            tiers = ", ".join(f"{k} {v}" for k, v in row["tiers"].items()) or "none"
            lines.append(f"| Post-filter | {row['entered']} | {row['dropped']} | {reasons} | {row['kept']} |")
            lines.append(f"| **Release** ({cells}; tiers {tiers}) | | | | **{row['kept']}** |")
        else:
            lines.append(f"| {row['name']} | {row['entered']} | {row['dropped']} | {reasons} | {row['kept']} |")
    out = "\n".join(lines) + "\n"
    check = att.get("artifact_check")
    if check and check.get("items"):  # no item, no solver to judge: an empty table would only add noise
        where = "the release" if check["stage"] == "postfilter" else f"the items kept after {check['stage']}"
        out += f"\nOn {where}. " + artifacts.markdown(check)
    return out
