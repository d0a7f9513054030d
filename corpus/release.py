"""The release layout (SPEC 2.1 and docs/corpus.md): file names, allowed values, paper ID rules.

One place for what the importer checks and the generators and converters write.
"""

from __future__ import annotations

import unicodedata

QA_FILE = "qa/full.jsonl"
GRAPHS_FILE = "graphs/full.jsonl"
POOL_FILE = "paper_pool/papers.jsonl"
LABELS_FILE = "audit/recall_labels.jsonl"
RELEASE_FILES = (QA_FILE, GRAPHS_FILE, POOL_FILE, LABELS_FILE)
ITEM_FILES = (QA_FILE, GRAPHS_FILE, LABELS_FILE)  # all three, or (with corpus/papers.jsonl) none

# Optional corpus-wide files (docs/corpus.md, "The release layout").
CORPUS_PAPERS_FILE = "corpus/papers.jsonl"
CITATIONS_FILE = "corpus/citations.jsonl"

QUESTION_TYPES = ("single-target", "multi-target")
DEPTHS = (1, 2)
REASONING_TYPES = ("GROUND", "METHOD", "MOTIVE", "RESULT")
CONSENSUS_TIERS = ("gold", "silver", "bronze")
# The published release's skills; another value is stored as unknown (NULL) and counted.
COGNITIVE_SKILLS = ("retrieve", "reason", "contrast", "assess", "synthesize", "justify")
# same_paper: the right paper, the wrong passage (corpora built from other sources).
DISTRACTOR_TYPES = ("correct", "seed_only", "wrong_paper", "no_context", "same_paper")
RELEVANCES = ("direct", "supporting")
CELLS = ("ST-d1", "ST-d2", "MT-d1", "MT-d2")

MAX_REFS = 30  # the release keeps the first 30 references of the seed and of each depth-1 paper

MAX_PAPER_ID = 200
ORPHAN_PREFIX = "arxiv:"  # paper ID of a pool record that no paper names: arxiv:<its arxiv_id>


def paper_id_problem(value: str) -> str | None:
    """Why ``value`` is not a valid paper ID (or pool key), or None if it is one.

    Paper IDs are non-empty strings of at most 200 characters with no whitespace
    and no control characters: agents type them back into tool calls.
    """
    if not value:
        return "an empty string"
    if len(value) > MAX_PAPER_ID:
        return f"{len(value)} characters (at most {MAX_PAPER_ID})"
    if value.isprintable() and " " not in value:
        return None  # the common case, checked in C: no whitespace, no control or format characters
    for ch in value:
        if ch.isspace():
            return f"whitespace ({ch!r})"
        if unicodedata.category(ch) in ("Cc", "Cf"):
            return f"a control character (U+{ord(ch):04X})"
    return None
