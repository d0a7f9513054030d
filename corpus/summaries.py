"""What the corpus API's functions return, as typed dicts (docs/python-api.md): the same JSON objects the commands
print, with their keys and value types written down for the type checker and the reader.

``write_release`` (synthetic) -> :class:`SynthSummary`; ``describe`` -> :class:`CorpusDescription`;
``build_demo`` -> :class:`DemoSummary`; ``build_corpus`` -> :class:`BuildSummary`. The importer's summary and
report (``import_release``, ``check_release``, ``check_build``) stay plain dicts.
"""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict


class NodesPerItem(TypedDict):
    """Papers in an item's neighbourhood graph, over the items."""

    min: int
    mean: float
    max: int


class SynthNodesPerItem(NodesPerItem):
    median: int


class SynthSummary(TypedDict):
    """``write_release(out_dir, papers=, items=, seed=)``: what the synthetic release holds."""

    seed: int
    papers_with_text: int
    metadata_only_papers: int  # metadata-only papers that some item's graph shows
    metadata_only_generated: int
    papers_in_graphs: int
    edges: int
    unique_edges: int
    items: int
    items_per_cell: dict[str, int]  # "ST-d1", "ST-d2", "MT-d1", "MT-d2"
    items_by_reasoning_type: dict[str, int]
    nodes_per_item: SynthNodesPerItem
    text_nodes_per_item_median: int
    metadata_only_share: float
    sections: int
    sections_by_length: dict[str, int]  # "<2K", "2K-15K", "15K-30K", "30K-60K", ">60K"
    forced_edits: int
    bytes: int
    file_bytes: dict[str, int]  # per release file


class CorpusCounts(TypedDict):
    """The live counts of a corpus file (``corpus info``)."""

    papers: int
    papers_with_text: int
    papers_with_external_ids: int
    papers_in_no_item: int
    pool_papers: int
    sections: int
    edges: int
    edges_with_context: int
    explore_index_stored: bool
    items: int
    items_by_type: dict[str, int]
    items_by_depth: dict[str, int]
    items_by_cell: dict[str, int]
    items_by_reasoning_type: dict[str, int]
    papers_with_text_by_licence: dict[str, int]
    nodes_per_item: NodesPerItem


class CorpusDescription(TypedDict):
    """``describe(path)``: what ``corpus info --json`` prints."""

    path: str
    file_size: int
    schema_version: Any  # as the meta table stores it (an int in a corpus of this schema)
    corpus_id: str | None
    provenance: dict[str, Any]
    counts: CorpusCounts
    build_quality: Any  # the quality table a build recorded (None for an imported release)
    search_index: dict[str, Any]  # explore search's index beside the file: path, served, why or its counts


class DemoSummary(TypedDict):
    """``build_demo(out, split)``."""

    demo: dict[str, int]  # the synthetic release's papers, items and seed
    corpus: str
    split: str
    counts: dict[str, Any]  # the importer's counts


class BuildSummary(TypedDict):
    """``build_corpus(...)``: the converters' summary, the importer's, and the time taken."""

    pdfs: NotRequired[dict[str, Any]]  # when PDFs were among the sources: parser, counts, skipped PDFs
    converted: dict[str, Any]
    imported: dict[str, Any]
    seconds: float
