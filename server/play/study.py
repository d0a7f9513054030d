"""Study mode: a study file (TOML) says who may take part, which items each participant gets and in what order,
the instructions and the consent line, and an optional time limit per item (``agenthop-server play --study``).

What the file holds (docs/web.md, *Study mode*)::

    id = "pilot-1"  # names the study in the checkpoint log (session_start client.study.id)
    title = "Finding evidence in papers"
    code = "heron-42"  # the study code a participant types to enrol
    participants = ["p01", "p02"]  # optional: only these names may enrol (without it, any valid name)
    items = "splits/demo.jsonl"  # a split file (relative to this file) or a list of item IDs
    items_per_participant = 6  # optional: default every item
    seed = 7  # the seeded order of every participant
    time_limit_s = 600  # optional: seconds per item, then the attempt ends
    instructions = "..."  # shown before the first item
    consent = "I agree that ..."  # the line a participant ticks before the first item

Assignment is balanced by cell (question type x depth): a participant's items are spread over the cells as evenly as
their number allows, and successive participants take successive items of each cell (a study-seeded order of the
cell), so the items are covered evenly across people. Each participant's order is a seeded shuffle of their items.
It depends only on the file, the participant's name and their position (their index in ``participants``, else the
order in which they enrolled), so it is the same after a restart and can be recomputed by the scorer.
"""

from __future__ import annotations

import hashlib
import hmac
import random
import tomllib
from dataclasses import dataclass
from pathlib import Path

from agenthop.server.item_files import ItemsError, read_items

FIELDS = {
    "id",
    "title",
    "code",
    "participants",
    "items",
    "items_per_participant",
    "seed",
    "time_limit_s",
    "instructions",
    "consent",
}


class StudyError(ValueError):
    """A study file that cannot be used; the message names the field."""


@dataclass(frozen=True)
class Study:
    id: str
    title: str
    code: str
    items: tuple[str, ...]
    seed: int
    instructions: str
    consent: str
    participants: tuple[str, ...] | None = None
    items_per_participant: int | None = None
    time_limit_s: int | None = None

    @property
    def consent_sha256(self) -> str:
        """Which consent text a participant agreed to (logged with every attempt)."""
        return hashlib.sha256(self.consent.encode()).hexdigest()

    def code_ok(self, code: object) -> bool:
        return isinstance(code, str) and hmac.compare_digest(code.strip().encode(), self.code.encode())

    def public(self) -> dict:
        """What the page is told (never the code)."""
        return {
            "id": self.id,
            "title": self.title,
            "instructions": self.instructions,
            "consent": self.consent,
            "named": self.participants is not None,
            "items_per_participant": self.per_participant,
            "time_limit_s": self.time_limit_s,
        }

    @property
    def per_participant(self) -> int:
        return min(self.items_per_participant or len(self.items), len(self.items))

    # --- assignment --------------------------------------------------------------------------------------

    def assignment(self, participant: str, position: int, cell_of) -> list[str]:
        """The item IDs ``participant`` plays, in order. ``cell_of(item_id)`` gives an item's cell."""
        cells: dict[object, list[str]] = {}
        for item_id in self.items:
            cells.setdefault(cell_of(item_id), []).append(item_id)
        study_rng = random.Random(f"{self.seed}/{self.id}")
        names = sorted(cells, key=str)
        for name in names:
            study_rng.shuffle(cells[name])
        study_rng.shuffle(names)
        # Quotas: the n items spread over the cells round-robin, from a cell that moves on with the position; each
        # cell is then read on from where the participants before this one stopped, so people get different items.
        offsets = dict.fromkeys(names, 0)
        for earlier in range(position):
            for name, q in self._quotas(names, cells, earlier).items():
                offsets[name] += q
        chosen = []
        for name, q in self._quotas(names, cells, position).items():
            members = cells[name]
            chosen += [members[(offsets[name] + i) % len(members)] for i in range(q)]
        random.Random(f"{self.seed}/{self.id}/{participant}").shuffle(chosen)
        return chosen

    def _quotas(self, names: list, cells: dict, position: int) -> dict:
        quota = dict.fromkeys(names, 0)
        turn = position
        while sum(quota.values()) < self.per_participant:
            name = names[turn % len(names)]
            if quota[name] < len(cells[name]):
                quota[name] += 1
            turn += 1
        return quota


def _text(data: dict, key: str, *, required: bool = True, default: str = "") -> str:
    value = data.get(key, None)
    if value is None:
        if required:
            raise StudyError(f"field '{key}' is missing: it must be a non-empty string")
        return default
    if not isinstance(value, str) or not value.strip():
        raise StudyError(f"field '{key}' must be a non-empty string")
    return value.strip()


def _positive(data: dict, key: str) -> int | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise StudyError(f"field '{key}' must be a positive integer, got {value!r}")
    return value


def load_study(path: str | Path, *, check_participant) -> Study:
    """Read and check a study file. ``check_participant`` raises ValueError for a name /play cannot use."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise StudyError(f"cannot read the study file {path}: {exc.strerror}") from exc
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise StudyError(f"{path} is not a TOML file ({exc})") from exc
    unknown = sorted(set(data) - FIELDS)
    if unknown:
        raise StudyError(f"unknown field(s) {unknown}; a study file has {sorted(FIELDS)}")
    items = data.get("items")
    if isinstance(items, str):
        try:
            items = [ref.id for ref in read_items(path.parent / items)]
        except (OSError, ItemsError) as exc:
            raise StudyError(f"field 'items': cannot read {items}: {exc}") from exc
    if not isinstance(items, list) or not items or not all(isinstance(i, str) for i in items):
        raise StudyError("field 'items' must name a split file or list item IDs (at least one)")
    if len(set(items)) != len(items):
        raise StudyError("field 'items' lists an item twice")
    participants = data.get("participants")
    if participants is not None:
        if not isinstance(participants, list) or not participants or len(set(participants)) != len(participants):
            raise StudyError("field 'participants' must list distinct participant names (at least one)")
        for name in participants:
            try:
                check_participant(name)
            except ValueError as exc:
                raise StudyError(f"field 'participants': {exc}") from exc
        participants = tuple(participants)
    seed = data.get("seed", 0)
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise StudyError(f"field 'seed' must be an integer, got {seed!r}")
    study_id = _text(data, "id")
    try:
        check_participant(study_id)  # the same alphabet: it is written into run labels and file names
    except ValueError as exc:
        raise StudyError(f"field 'id': {exc}".replace("participant", "id")) from exc
    code = _text(data, "code")
    if len(code) < 4:
        raise StudyError("field 'code' must have at least 4 characters: it is what keeps strangers out of the study")
    return Study(
        id=study_id,
        title=_text(data, "title", required=False, default=study_id),
        code=code,
        items=tuple(items),
        seed=seed,
        instructions=_text(data, "instructions"),
        consent=_text(data, "consent"),
        participants=participants,
        items_per_participant=_positive(data, "items_per_participant"),
        time_limit_s=_positive(data, "time_limit_s"),
    )
