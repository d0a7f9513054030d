"""The release layout (SPEC 2.1): file names and the values its categorical fields may take.

One place for what the importer checks and the synthetic generator writes.
"""

from __future__ import annotations

QA_FILE = "qa/full.jsonl"
GRAPHS_FILE = "graphs/full.jsonl"
POOL_FILE = "paper_pool/papers.jsonl"
LABELS_FILE = "audit/recall_labels.jsonl"
RELEASE_FILES = (QA_FILE, GRAPHS_FILE, POOL_FILE, LABELS_FILE)

QUESTION_TYPES = ("single-target", "multi-target")
DEPTHS = (1, 2)
REASONING_TYPES = ("GROUND", "METHOD", "MOTIVE", "RESULT")
CONSENSUS_TIERS = ("gold", "silver", "bronze")
DISTRACTOR_TYPES = ("correct", "seed_only", "wrong_paper", "no_context")
RELEVANCES = ("direct", "supporting")
CELLS = ("ST-d1", "ST-d2", "MT-d1", "MT-d2")

MAX_REFS = 30  # the release keeps the first 30 references of the seed and of each depth-1 paper
