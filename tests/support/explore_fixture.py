"""A small explore-only release for the explore tools: four ACL-style papers with text, outside works
recorded several times as reference stubs, and a citation graph whose shared neighbours are known by hand.

- "Attention is all you need" is arxiv:1706.03762 and ref:vaswani-a (same title, year and first author): one work,
  cited by P18-1068, P17-1147 and the parsing paper.
- Bahdanau et al. is arxiv:1409.0473 (2014) and ref:bahdanau-iclr (2015, a title with the venue glued on): one work,
  cited by the same three; ref:bahdanau-2019 (same title, 2019) is too far apart in years to be merged.
- Three papers with text say "attention" often, so that before explore mode's own tools they ranked above the stub.
"""

from __future__ import annotations

import json
from pathlib import Path

ACL = "Proceedings of the 56th Annual Meeting of the Association for Computational Linguistics"
ACL17 = "Proceedings of the 55th Annual Meeting of the Association for Computational Linguistics"
ACL16 = "Proceedings of the 54th Annual Meeting of the Association for Computational Linguistics"
EMNLP = "Proceedings of the 2018 Conference on Empirical Methods in Natural Language Processing"

COARSE = "doi:10.18653/v1/p18-1068"
TRIVIA = "doi:10.18653/v1/p17-1147"
BPE = "doi:10.18653/v1/p16-1162"
PARSING = "doi:10.18653/v1/d18-1001"
VASWANI = "arxiv:1706.03762"
BAHDANAU = "arxiv:1409.0473"


def _paper(pid, title, year, authors, venue, abstract="", text_id=None, ids=None):
    return {
        "paper_id": pid,
        "title": title,
        "year": year,
        "authors": authors,
        "venue": venue,
        "abstract": abstract,
        "text_id": text_id,
        "ids": ids or {},
    }


PAPERS = [
    _paper(
        COARSE,
        "Coarse-to-Fine Decoding for Neural Semantic Parsing",
        2018,
        ["Li Dong", "Mirella Lapata"],
        ACL,
        "We propose a structure-aware neural architecture which decomposes the semantic parsing process into two stages: "
        "attention over the input, then attention again to fill in a sketch.",
        COARSE,
        {"doi": "10.18653/v1/p18-1068"},
    ),
    _paper(
        TRIVIA,
        "TriviaQA: A Large Scale Distantly Supervised Challenge Dataset for Reading Comprehension",
        2017,
        ["Mandar Joshi", "Eunsol Choi", "Daniel Weld", "Luke Zettlemoyer"],
        ACL17,
        "We present TriviaQA, a reading comprehension dataset with attention to evidence documents and attention models.",
        TRIVIA,
        {"doi": "10.18653/v1/p17-1147"},
    ),
    _paper(
        BPE,
        "Neural Machine Translation of Rare Words with Subword Units",
        2016,
        ["Rico Sennrich", "Barry Haddow", "Alexandra Birch"],
        ACL16,
        "We encode rare and unknown words as sequences of subword units, with an attention-based model.",
        BPE,
        {"doi": "10.18653/v1/p16-1162"},
    ),
    _paper(
        PARSING,
        "Attention everywhere: a multi-attention parser with attention",
        2018,
        ["Ada Lovelace"],
        EMNLP,
        "Attention attention attention: we attend to all attention heads with attention.",
        PARSING,
        {"doi": "10.18653/v1/d18-1001"},
    ),
    _paper(VASWANI, "Attention is all you need", 2017, ["A Vaswani", "N Shazeer"], None, ids={"arxiv": "1706.03762"}),
    _paper("ref:vaswani-a", "Attention Is All You Need", 2017, ["Ashish Vaswani", "Noam Shazeer"], "NIPS"),
    _paper(
        BAHDANAU,
        "Neural machine translation by jointly learning to align and translate",
        2014,
        ["D Bahdanau", "K Cho"],
        None,
        ids={"arxiv": "1409.0473"},
    ),
    _paper(
        "ref:bahdanau-iclr",
        "Neural Machine Translation by Jointly Learning to Align and Translate. International Conference "
        "on Learning Representations",
        2015,
        ["Dzmitry Bahdanau", "Kyunghyun Cho"],
        None,
    ),
    _paper(
        "ref:bahdanau-2019",
        "Neural machine translation by jointly learning to align and translate",
        2019,
        ["Dzmitry Bahdanau"],
        None,
    ),
]

SECTIONS = {
    COARSE: [
        ("1 Introduction", "Semantic parsing maps utterances to meaning representations; we decode coarse to fine."),
        ("4 Experiments", "We evaluate on GEO, ATIS, Django and the WikiSQL dataset, where the sketch helps most."),
    ],
    TRIVIA: [
        (
            "1 Introduction",
            "Reading comprehension datasets are collected with distant supervision from trivia websites.",
        ),
        ("3 Dataset", "TriviaQA contains over 650K question-answer-evidence triples."),
    ],
    BPE: [
        ("1 Introduction", "We apply byte pair encoding to word segmentation, so that rare words are subword units.")
    ],
    PARSING: [("1 Introduction", "We parse with attention and evaluate on the Penn Treebank.")],
}

CITATIONS = {
    COARSE: [
        (VASWANI, "We use the Transformer (Vaswani et al., 2017)."),
        ("ref:bahdanau-iclr", "Attention (Bahdanau et al., 2015)."),
        (BPE, None),
    ],
    TRIVIA: [
        ("ref:vaswani-a", None),
        (BAHDANAU, "Neural attention (Bahdanau et al., 2014) reads the evidence."),
        (BPE, None),
    ],
    PARSING: [
        (BAHDANAU, None),
        ("ref:vaswani-a", "Multi-head attention (Vaswani et al., 2017)."),
        (TRIVIA, None),
        ("ref:bahdanau-2019", None),
    ],
}


def write_explore_release(directory: Path) -> Path:
    (directory / "paper_pool").mkdir(parents=True)
    (directory / "corpus").mkdir()
    with open(directory / "paper_pool" / "papers.jsonl", "w") as f:
        for pid, sections in SECTIONS.items():
            title = next(p["title"] for p in PAPERS if p["paper_id"] == pid)
            f.write(
                json.dumps(
                    {"arxiv_id": pid, "title": title, "sections": [{"header": h, "text": t} for h, t in sections]}
                )
                + "\n"
            )
    with open(directory / "corpus" / "papers.jsonl", "w") as f:
        for paper in PAPERS:
            f.write(json.dumps({k: v for k, v in paper.items() if v is not None}) + "\n")
    with open(directory / "corpus" / "citations.jsonl", "w") as f:
        for pid, refs in CITATIONS.items():
            f.write(
                json.dumps({"paper_id": pid, "references": [{"paper_id": r, "context": c} for r, c in refs]}) + "\n"
            )
    return directory
