"""The pipeline's settings, and which of them each stage depends on (a change re-runs that stage and the ones after)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from agenthop.construct.client import OFFLINE, offline_name
from agenthop.llm.wire import Sampling


@dataclass(frozen=True)
class Settings:
    seed: int = 0  # random seed: sampling, option order
    # seeds
    min_refs: int = 15
    max_refs: int = 50
    venues: tuple[str, ...] = ()
    years: tuple[int, int] | None = None
    per_stratum: int | None = None
    citations_per_year: float = 1.0  # a seed k years older than the newest paper needs k * this citing papers
    # chains
    max_chains_per_seed: int = 40
    multi_target: bool = True
    min_overlap: float = 0.08
    min_context: int = 80
    method_or_result: bool = True
    max_cited_together: int = 1  # a citation sentence citing more works than this is a list (0: no limit)
    # multi-target pairs: papers that bear on each other (this Jaccard of reference lists), not list neighbours
    related_pairs: float | None = None
    judge: str | None = None  # model spec, or None for no judge
    judge_min: int = 4
    max_target_age: int | None = 15  # a target this many years older than its citing paper is too early
    # Q/A and distractors
    generator: str = OFFLINE
    max_qa: int | None = None
    min_strength: int = 3  # offline generator: least finding strength (0-4) of a blanked sentence
    same_paper: bool = False
    # one writer, shown the gold, writes every wrong option (blind answers from a wrong source are right when the
    # model already knows the target)
    informed_distractors: bool = False
    # each wrong option restates a finding its source paper states (seed, sibling, target elsewhere), quoted
    grounded_distractors: bool = False
    restate_options: bool = False  # every option rewritten in one register by a writer not told which is right
    too_close: float = 0.9
    # ensemble
    filters: tuple[str, ...] = (OFFLINE,)
    blind_check: bool = False  # each filter also answers from the options alone; a pick of the gold drops the item
    # post-filter
    max_section_chars: int = 70_015
    one_item_per_target: bool = False  # each target paper serves at most one item (headroom: no item repeats a paper)
    # running (not part of any stage's fingerprint: they change how, not what)
    attempts: int = field(default=3, metadata={"run": True})
    workers: int = field(default=8, metadata={"run": True})
    # model calls' sampling options (None: temperature 0, nothing else sent); part of the model stages' fingerprints
    sampling: Sampling | None = None

    def __post_init__(self) -> None:
        # The offline generator's old name ('baseline') is the same setting: the same fingerprints, the same release.
        if self.judge is not None:
            object.__setattr__(self, "judge", offline_name(self.judge))
        object.__setattr__(self, "generator", offline_name(self.generator))
        object.__setattr__(self, "filters", tuple(offline_name(f) for f in self.filters))

    def to_json(self) -> dict:
        return {
            f.name: getattr(self, f.name) if f.name != "sampling" or self.sampling is None else self.sampling.as_dict()
            for f in dataclasses.fields(self)
        }


STAGE_SETTINGS = {
    "seeds": ("min_refs", "max_refs", "venues", "years", "per_stratum", "citations_per_year", "seed"),
    "chains": (
        "max_chains_per_seed",
        "multi_target",
        "min_overlap",
        "min_context",
        "method_or_result",
        "max_cited_together",
        "judge",
        "judge_min",
        "max_target_age",
        "seed",
    ),
    "qa": ("generator", "max_qa", "min_strength", "seed"),
    "distractors": ("generator", "same_paper", "too_close", "seed"),
    "artifacts": (),
    "ensemble": ("filters",),
    "sanity": (),
    "audit": (),
    "postfilter": ("max_section_chars",),
}
# Settings added later: they enter their stage's fingerprint only when set, so that earlier runs keep theirs.
LATER_SETTINGS = {
    "chains": ("related_pairs",),
    "qa": ("one_item_per_target",),
    "distractors": ("informed_distractors", "grounded_distractors", "restate_options"),
    "ensemble": ("blind_check",),
    "postfilter": ("one_item_per_target",),
}
# Model stages also depend on the attempts allowed for bad output (a retry is a different request).
MODEL_STAGES = {"chains", "qa", "distractors", "ensemble"}


def stage_settings(s: Settings, stage: str) -> dict:
    keys = STAGE_SETTINGS[stage] + (("attempts",) if stage in MODEL_STAGES else ())
    out = {k: getattr(s, k) for k in keys}
    for key in LATER_SETTINGS.get(stage, ()):
        value = getattr(s, key)
        if value is not None and value is not False:  # unset (a related_pairs of 0.0 is set)
            out[key] = value
    if stage in MODEL_STAGES and s.sampling is not None:  # only when set, so that earlier runs keep their fingerprints
        out["sampling"] = s.sampling.as_dict()
    return out
