"""The tiers file of a panel: a tier, a family, a model name and a role per run, from TOML or CSV.

TOML: one table per run name, ``["run name"]`` with any of ``tier``, ``family``, ``model``, ``role``;
or ``"run name" = "tier"`` for a tier alone. CSV: a header naming ``run`` and any of
``tier``, ``family``, ``model``, ``role``, then one row per run. Roles: full, closed_book, no_search,
read_first, other_ablation. A run named in the file but not in the panel, an unknown
column or role, or a file that does not parse is an error naming it.
"""

from __future__ import annotations

import csv
import tomllib
from pathlib import Path

from agenthop.scorer.errors import ScorerError
from agenthop.scorer.panel_tables import ROLES

FIELDS = ("tier", "family", "model", "role")


def _bad(path, what: str) -> ScorerError:
    return ScorerError("{tiers} file {path}: {what}", "tiers", path=path, what=what)


def _check(path, labels: dict[str, dict]) -> dict[str, dict]:
    for run, fields in labels.items():
        unknown = sorted(set(fields) - set(FIELDS))
        if unknown:
            raise _bad(path, f"run {run!r} has unknown key(s) {', '.join(unknown)}; use {', '.join(FIELDS)}.")
        for key, value in fields.items():
            if not isinstance(value, str) or not value:
                raise _bad(path, f"run {run!r}: {key} must be a non-empty string, got {value!r}.")
        if "role" in fields and fields["role"] not in ROLES:
            raise _bad(path, f"run {run!r}: role {fields['role']!r} is not one of {', '.join(ROLES)}.")
    return labels


def read_labels(path: str | Path) -> dict[str, dict]:
    """Run name -> {tier, model, role} (each optional) from a TOML or CSV tiers file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise _bad(path, f"cannot be read ({exc}).") from exc
    if path.suffix.lower() == ".csv":
        rows = list(csv.DictReader(text.splitlines()))
        header = rows[0].keys() if rows else []
        if "run" not in header:
            raise _bad(path, "the CSV header must name a 'run' column (and any of tier, family, model, role).")
        labels = {}
        for n, row in enumerate(rows, start=2):
            if not row["run"]:
                raise _bad(path, f"line {n}: empty run name.")
            labels[row["run"]] = {k: v for k, v in row.items() if k != "run" and v}
        return _check(path, labels)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise _bad(path, f"is not valid TOML ({exc}); give a .csv file for CSV.") from exc
    return _check(path, {run: v if isinstance(v, dict) else {"tier": v} for run, v in data.items()})


def check_named(path, labels: dict[str, dict], names: list[str]) -> None:
    """Refuse a file that names runs the panel does not have (a typo would silently drop a label)."""
    unknown = sorted(set(labels) - set(names))
    if unknown:
        raise _bad(path, f"names run(s) not in the panel: {', '.join(unknown)}; the runs are: {', '.join(names)}.")
