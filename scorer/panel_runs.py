"""Which run stands for a model in the panel (its "Run 0", the run Table 2 shows), and which of its other runs are
replicates of it (the paper's Table 17: "same model, all items, same protocol").

A model's Run 0 is the full-tool run its other runs name in ``replicate_of`` (run.json), else the first of its
full-tool runs in the order given. Another full-tool run of the model is a replicate when it has the same items,
the same caps and the same protocol as Run 0; otherwise it is set aside with the reason, and no table uses it.
"""

from __future__ import annotations


def model_key(entry: dict) -> str:
    """The model a run belongs to: its model name, else (no model recorded) the run itself."""
    return entry["model"] or f"run {entry['name']}"


def protocol(entry: dict) -> dict:
    """What must agree between replicates besides items and caps: role, agent, disabled tools, search settings."""
    return {
        "role": entry["role"],
        "agent": entry.get("agent"),
        "disabled_tools": entry.get("disabled_tools"),
        "search": entry.get("search"),
    }


def _show(value) -> str:
    """A setting in words (``budget 60, max turns 20``), not as a Python literal."""
    if value is None:
        return "none recorded"
    if isinstance(value, dict):
        return ", ".join(f"{k.replace('_', ' ')} {_show(v)}" for k, v in sorted(value.items())) or "none"
    if isinstance(value, list):
        return "; ".join(_show(v) for v in value) or "none"
    return str(value)


def _differences(run0: dict, other: dict) -> list[str]:
    out = []
    a, b = set(run0["items"]), set(other["items"])
    if a != b:
        out.append(
            f"its items differ from Run 0's ({len(b - a)} not in Run 0, {len(a - b)} of Run 0's missing)"
            if a and b
            else "its items differ from Run 0's"
        )
    if run0.get("caps") != other.get("caps"):
        out.append(f"its caps ({_show(other.get('caps'))}) differ from Run 0's ({_show(run0.get('caps'))})")
    pa, pb = protocol(run0), protocol(other)
    for key in pa:
        if pa[key] != pb[key]:
            out.append(f"its {key.replace('_', ' ')} ({_show(pb[key])}) differs from Run 0's ({_show(pa[key])})")
    return out


def split_runs(full: list[dict]) -> dict:
    """{"run0": [Run 0 of each model, in the order given], "replicates": {model: [runs after Run 0]},
    "set_aside": [{run, model, run0, reasons}]} over the full-tool runs."""
    groups: dict[str, list[dict]] = {}
    for e in full:
        groups.setdefault(model_key(e), []).append(e)
    run0s: list[dict] = []
    replicates: dict[str, list[dict]] = {}
    set_aside: list[dict] = []
    for model, runs in groups.items():
        named = {e.get("replicate_of") for e in runs if e.get("replicate_of")}
        first = next((e for e in runs if e["name"] in named), runs[0])
        run0s.append(first)
        for e in runs:
            if e is first:
                continue
            reasons = _differences(first, e)
            if reasons:
                set_aside.append({"run": e["name"], "model": model, "run0": first["name"], "reasons": reasons})
            else:
                replicates.setdefault(model, []).append(e)
    order = {id(e): i for i, e in enumerate(full)}
    run0s.sort(key=lambda e: order[id(e)])
    return {"run0": run0s, "replicates": replicates, "set_aside": set_aside}
