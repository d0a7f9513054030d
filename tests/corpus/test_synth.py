"""The synthetic benchmark generator (SPEC 2.3): determinism, layout and item guarantees."""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections import Counter
from pathlib import Path

import pytest

from agenthop.corpus.synth import KINDS, RELEASE_FILES, check_release, write_release

PAPERS, ITEMS, SEED = 200, 40, 0
HEX40 = re.compile(r"^[0-9a-f]{40}$")
ARXIV = re.compile(r"^\d{4}\.\d{4,5}$")


def _jsonl(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("synth") / "release"
    stats = write_release(out, papers=PAPERS, items=ITEMS, seed=SEED)
    (out / "stats.json").write_text(json.dumps(stats))
    return out


@pytest.fixture(scope="module")
def data(release):
    qa = _jsonl(release / "qa/full.jsonl")
    graphs = {g["sample_id"]: g for g in _jsonl(release / "graphs/full.jsonl")}
    pool = {p["arxiv_id"]: p for p in _jsonl(release / "paper_pool/papers.jsonl")}
    labels = {
        r["sample_id"]: r["analysis"]["section_recall_labels"] for r in _jsonl(release / "audit/recall_labels.jsonl")
    }
    stats = json.loads((release / "stats.json").read_text())
    return {"qa": qa, "graphs": graphs, "pool": pool, "labels": labels, "stats": stats}


def _digest(root: Path) -> dict[str, str]:
    return {rel: hashlib.sha256((root / rel).read_bytes()).hexdigest() for rel in RELEASE_FILES}


# -- determinism -----------------------------------------------------------------------


def test_same_arguments_same_bytes(release, tmp_path):
    again = tmp_path / "again"
    write_release(again, papers=PAPERS, items=ITEMS, seed=SEED)
    assert _digest(again) == _digest(release)


def test_bytes_do_not_depend_on_hash_randomisation(tmp_path):
    import subprocess
    import sys

    here = tmp_path / "here"
    write_release(here, papers=40, items=6, seed=5)
    code = "import sys; from pathlib import Path; from agenthop.corpus.synth import write_release; write_release(Path(sys.argv[1]), papers=40, items=6, seed=5)"
    env = {**__import__("os").environ, "PYTHONHASHSEED": "12345"}
    subprocess.run([sys.executable, "-c", code, str(tmp_path / "there")], check=True, env=env)
    assert _digest(tmp_path / "there") == _digest(here)


def test_other_seed_other_release(release, tmp_path):
    other = tmp_path / "other"
    write_release(other, papers=60, items=8, seed=SEED + 1)
    small = tmp_path / "small"
    write_release(small, papers=60, items=8, seed=SEED)
    assert _digest(other)["qa/full.jsonl"] != _digest(small)["qa/full.jsonl"]


# -- layout and mix ----------------------------------------------------------------------


def test_item_fields_and_mix(data):
    qa = data["qa"]
    assert len(qa) == ITEMS
    cells = Counter((it["question_type"], it["depth"]) for it in qa)
    assert set(cells) == {("single-target", 1), ("single-target", 2), ("multi-target", 1), ("multi-target", 2)}
    n_st = sum(1 for it in qa if it["question_type"] == "single-target")
    assert 0.5 <= n_st / len(qa) <= 0.62  # about 568/1011
    assert {it["reasoning_type"] for it in qa} == {"GROUND", "METHOD", "MOTIVE", "RESULT"}
    ids = [it["id"] for it in qa]
    assert len(set(ids)) == len(ids)
    for it in qa:
        prefix = "st" if it["question_type"] == "single-target" else "mt"
        assert re.fullmatch(rf"{prefix}_\d{{4}}", it["id"])
        assert it["consensus_tier"] in ("gold", "silver", "bronze")
        assert isinstance(it["filter_agreement"], int)
        assert it["venue"] and it["cognitive_skill"]
        assert len(it["options"]) == 4 and len(set(it["options"])) == 4
        assert sorted(it["distractor_types"]) == sorted(["correct", "seed_only", "wrong_paper", "no_context"])
        assert it["distractor_types"][it["correct_index"]] == "correct"
        n_gold = 1 if prefix == "st" else 2
        assert len(it["gold_paper_ids"]) == len(it["gold_arxiv_ids"]) == n_gold
        assert len(it["bridge_paper_ids"]) == len(it["bridge_arxiv_ids"]) == (0 if it["depth"] == 1 else 1)
        for pid in [it["seed_paper_id"], *it["gold_paper_ids"], *it["bridge_paper_ids"]]:
            assert HEX40.match(pid)
        for aid in [it["seed_arxiv_id"], *it["gold_arxiv_ids"], *it["bridge_arxiv_ids"]]:
            assert ARXIV.match(aid)


def test_ids_unique_and_well_formed(data):
    arxiv = list(data["pool"])
    assert len(arxiv) == PAPERS and len(set(arxiv)) == PAPERS
    assert all(ARXIV.match(a) for a in arxiv)
    titles: dict[str, str] = {}
    for g in data["graphs"].values():
        for pid, node in g["nodes"].items():
            assert HEX40.match(pid)
            assert titles.setdefault(pid, node["title"]) == node["title"]  # one paper, one record
            assert set(node) >= {"title", "arxivId", "year", "abstract"}
            assert node["year"] is None or 2010 <= node["year"] <= 2025
            assert node["venue"] in {"ACL", "EMNLP", "NAACL", "NeurIPS", "ICML", "ICLR", "CVPR", "ECCV", "SIGIR"}
            assert isinstance(node["authors"], list) and all(isinstance(a, str) for a in node["authors"])
    assert len(set(titles.values())) == len(titles)


def test_graph_shape(data):
    pool = data["pool"]
    for it in data["qa"]:
        g = data["graphs"][it["id"]]
        nodes, edges = g["nodes"], g["edges"]
        seed = it["seed_paper_id"]
        assert next(iter(nodes)) == seed
        depth1 = edges[seed]
        assert 0 < len(depth1) <= 30
        for citing, cited in edges.items():
            assert citing == seed or citing in depth1, "edges only from the seed and depth-1 papers"
            assert len(cited) <= 30 and len(set(cited)) == len(cited)
            assert all(c in nodes for c in cited)
        # Every node is the seed, a depth-1 or a depth-2 paper.
        reach = {seed, *depth1, *(c for d in depth1 for c in edges.get(d, []))}
        assert reach == set(nodes)
        for pid in [seed, *it["gold_paper_ids"], *it["bridge_paper_ids"]]:
            assert nodes[pid]["arxivId"] in pool, "the seed -> bridge -> gold chain has text"
        if it["depth"] == 1:
            assert all(gp in depth1 for gp in it["gold_paper_ids"])
        else:
            (bridge,) = it["bridge_paper_ids"]
            assert bridge in depth1
            assert all(gp in edges[bridge] and gp not in depth1 for gp in it["gold_paper_ids"])
        # Contexts: only for edges whose citing paper has text; every such edge has one.
        for citing, per_cited in g["contexts"].items():
            assert nodes[citing]["arxivId"] in pool
            assert set(per_cited) == set(edges[citing])
        for citing in edges:
            if nodes[citing]["arxivId"] in pool:
                assert citing in g["contexts"]


def test_metadata_only_share(data):
    shares = []
    for g in data["graphs"].values():
        nodes = g["nodes"].values()
        no_text = [n for n in nodes if n["arxivId"] not in data["pool"]]
        assert all(n["arxivId"] in (None, "") for n in no_text)
        shares.append(len(no_text) / len(nodes))
    assert 0.45 <= sum(shares) / len(shares) <= 0.7  # about 57% in the published release
    assert any(n["arxivId"] == "" for g in data["graphs"].values() for n in g["nodes"].values())


def test_sections_realistic(data):
    lengths = []
    for paper in data["pool"].values():
        headers = [s["header"] for s in paper["sections"]]
        assert headers[0] == "Introduction" and len(set(headers)) == len(headers)
        assert not any(re.match(r"^\d", h) for h in headers), "headers carry no numbering"
        for s in paper["sections"]:
            lengths.append(len(s["text"]))
            if s["header"].startswith("Apdx"):
                assert re.match(r"^Apdx(_[A-E])?: \S", s["header"])
        # Not trivially repetitive: most sentences of a paper are distinct.
        sentences = re.split(r"(?<=\.) ", " ".join(s["text"] for s in paper["sections"]))
        assert len(set(sentences)) / len(sentences) > 0.8
    assert any(h.startswith("Apdx_") for p in data["pool"].values() for h in (s["header"] for s in p["sections"]))
    in_band = sum(1 for n in lengths if 2000 <= n <= 15000)
    assert in_band / len(lengths) >= 0.85
    assert max(lengths) <= 70015 and min(lengths) >= 1000
    assert any(n > 15000 for n in lengths)


# -- item guarantees -----------------------------------------------------------------------


def test_check_release_finds_no_problem(release):
    assert check_release(release) == []


def test_options_stated_exactly_where_their_kind_says(data):
    """Independent of check_release: verbatim search over every paper's text."""
    texts = {a: "\n".join(s["text"] for s in p["sections"]) for a, p in data["pool"].items()}
    seen_kinds = Counter()
    for it in data["qa"]:
        nodes = data["graphs"][it["id"]]["nodes"]
        hood = {n["arxivId"] for n in nodes.values()}
        correct = it["options"][it["correct_index"]].split("; ")
        seed = nodes[it["seed_paper_id"]]
        for option, kind in zip(it["options"], it["distractor_types"]):
            seen_kinds[kind] += 1
            assert option not in it["question"]
            assert option not in seed["title"] and option not in seed["abstract"]
            if kind != "seed_only":
                assert option not in texts[it["seed_arxiv_id"]]
            for i, part in enumerate(option.split("; ")):
                hosts = [a for a, t in texts.items() if part in t]
                if part == correct[i]:
                    assert hosts == [it["gold_arxiv_ids"][i]]
                elif kind == "seed_only":
                    assert hosts == [it["seed_arxiv_id"]]
                elif kind == "wrong_paper":
                    assert len(hosts) == 1 and hosts[0] in hood
                    assert hosts[0] not in [it["seed_arxiv_id"], *it["gold_arxiv_ids"], *it["bridge_arxiv_ids"]]
                else:
                    assert kind == "no_context" and hosts == []
        if it["question_type"] == "multi-target":
            # Both golds are needed: some distractor keeps each correct part.
            parts = [o.split("; ") for o in it["options"]]
            assert any(p[0] == correct[0] and p[1] != correct[1] for p in parts)
            assert any(p[1] == correct[1] and p[0] != correct[0] for p in parts)
    assert set(seen_kinds) == {"correct", "seed_only", "wrong_paper", "no_context"}


def test_correct_fact_only_in_a_direct_labelled_section(data):
    pool = data["pool"]
    subsection_labels = 0
    for it in data["qa"]:
        labels = data["labels"][it["id"]]
        assert {lab["relevance"] for lab in labels} == {"direct", "supporting"}
        correct = it["options"][it["correct_index"]].split("; ")
        for gold, part in zip(it["gold_arxiv_ids"], correct):
            sections = pool[gold]["sections"]
            holding = [s for s in sections if part in s["text"]]
            assert len(holding) == 1
            direct = [lab for lab in labels if lab["arxiv_id"] == gold and lab["relevance"] == "direct"]
            assert direct
            for lab in direct:
                if lab["section"] in [s["header"] for s in sections]:
                    assert lab["section"] == holding[0]["header"]
                else:
                    subsection_labels += 1
                    assert lab["section"] in holding[0]["text"]
    assert subsection_labels >= 1


def test_recall_labels_resolve(data):
    pool = data["pool"]
    for it in data["qa"]:
        chain = {it["seed_arxiv_id"], *it["gold_arxiv_ids"], *it["bridge_arxiv_ids"]}
        for lab in data["labels"][it["id"]]:
            assert lab["arxiv_id"] in chain
            paper = pool[lab["arxiv_id"]]
            assert lab["paper"] == paper["title"] and lab["what_it_contains"]
            headers = [s["header"] for s in paper["sections"]]
            if lab["section"] not in headers:
                # A subsection: its header appears verbatim in exactly one section (any case).
                hits = [s for s in paper["sections"] if lab["section"].lower() in s["text"].lower()]
                assert len(hits) == 1, lab


def test_subsection_headers_cannot_collide():
    from agenthop.corpus.synth import vocabulary

    heads = sorted({h for k in KINDS for h in k.subheads})
    for a in heads:
        assert not any(a.lower() in b.lower() for b in heads if b != a)
    templates = [*vocabulary.GENERIC_SENTENCES, *vocabulary.CONTEXT_TEMPLATES, *vocabulary.ITEM_CONTEXT.values()]
    templates += [t for ts in vocabulary.TYPE_SENTENCES.values() for t in ts]
    templates += [t for k in KINDS for t in k.statements]
    for a in heads:
        assert not any(a.lower() in t.lower() for t in templates), a


def test_chain_citation_contexts_point_without_revealing(data):
    pool = data["pool"]
    texts = {a: "\n".join(s["text"] for s in p["sections"]) for a, p in pool.items()}
    for it in data["qa"]:
        g = data["graphs"][it["id"]]
        nodes = g["nodes"]
        hops = (
            [(it["seed_paper_id"], gp) for gp in it["gold_paper_ids"]]
            if it["depth"] == 1
            else [
                (it["seed_paper_id"], it["bridge_paper_ids"][0]),
                *((it["bridge_paper_ids"][0], gp) for gp in it["gold_paper_ids"]),
            ]
        )
        for citing, cited in hops:
            ctx = g["contexts"][citing][cited]
            assert ctx in texts[nodes[citing]["arxivId"]], "the context sentence is in the citing paper's text"
            target = nodes[cited]
            assert target["title"].lower() not in ctx.lower()
            assert not any(part in ctx for o in it["options"] for part in o.split("; "))
            words = set(re.findall(r"[a-z]{4,}", ctx.lower())) - {
                "work",
                "earlier",
                "with",
                "based",
                "using",
                "approach",
            }
            target_words = set(re.findall(r"[a-z]{4,}", (target["title"] + " " + target["abstract"]).lower()))
            assert len(words & target_words) >= 3, (ctx, target["title"])


def test_question_names_topic_not_title(data):
    for it in data["qa"]:
        nodes = data["graphs"][it["id"]]["nodes"]
        q = it["question"].lower()
        for gp in it["gold_paper_ids"]:
            title = nodes[gp]["title"].lower()
            assert title not in q and title.split(": ", 1)[-1] not in q
            topic = set(re.findall(r"[a-z]{5,}", nodes[gp]["abstract"].lower()))
            assert len(topic & set(re.findall(r"[a-z]{5,}", q))) >= 3


# -- a simple deterministic agent must beat chance, but not always win ------------------

_STOP = set(
    "the and for with that this what which did does was were its from into over under using used of in on to by an a or as is are be it".split()
)


def _tokens(text: str) -> list[str]:
    return [t for t in re.findall(r"[a-z0-9]+", text.lower()) if t not in _STOP and len(t) > 1]


def _bm25(query: str, docs: dict[str, str]) -> list[str]:
    toks = {d: _tokens(t) for d, t in docs.items()}
    n = len(toks)
    avg = sum(len(t) for t in toks.values()) / max(n, 1)
    df = Counter(w for t in toks.values() for w in set(t))
    q = _tokens(query)
    scores = {}
    for d, t in toks.items():
        tf = Counter(t)
        s = 0.0
        for w in q:
            if tf[w]:
                idf = math.log(1 + (n - df[w] + 0.5) / (df[w] + 0.5))
                s += idf * tf[w] * 2.2 / (tf[w] + 1.2 * (0.25 + 0.75 * len(t) / avg))
        scores[d] = s
    return sorted((d for d in docs if scores[d] > 0), key=lambda d: -scores[d])


_INTENT = {
    "setup": "training setup implementation experimental experiments details settings hyperparameters configuration method",
    "results": "results report reported evaluation main",
    "data": "data dataset collection benchmark split annotation vocabulary graph",
    "motiv": "introduction motivation motivated shortcoming cost discussion",
}


def _agent(it: dict, graph: dict, pool: dict) -> int:
    """Search, follow references, list sections, read the best-matching ones, match options."""
    nodes = graph["nodes"]
    budget = 30
    docs = {pid: f"{n['title']} {n['abstract']}" for pid, n in nodes.items()}
    hits = _bm25(it["question"], docs)[:5]
    budget -= 2  # search_papers + get_references(seed)
    seed = it["seed_paper_id"]
    refs = graph["edges"].get(seed, [])
    cands = [p for p in hits if p != seed and nodes[p]["arxivId"] in pool]
    cands += [p for p in refs if p not in cands and nodes[p]["arxivId"] in pool and p in hits[:10]]
    q = set(_tokens(it["question"]))
    intent = max(_INTENT, key=lambda k: len(q & set(_INTENT[k].split())))
    wanted = set(_INTENT[intent].split())
    read = []
    for pid in cands:
        if budget < 6:
            break
        budget -= 6  # list_sections + read_section
        sections = pool[nodes[pid]["arxivId"]]["sections"]
        best = max(sections, key=lambda s: (len(set(_tokens(s["header"])) & wanted), -len(s["text"])))
        read.append(best["text"])
    text = "\n".join(read)
    scores = [sum(part in text for part in o.split("; ")) for o in it["options"]]
    return scores.index(max(scores))


def test_simple_agent_beats_chance_but_not_always(data):
    correct = [_agent(it, data["graphs"][it["id"]], data["pool"]) == it["correct_index"] for it in data["qa"]]
    accuracy = sum(correct) / len(correct)
    assert 0.4 <= accuracy <= 0.9, accuracy


# -- stats, importer, CLI -------------------------------------------------------------------


def test_stats(data, release):
    stats = data["stats"]
    assert stats["papers_with_text"] == PAPERS
    assert stats["items"] == ITEMS
    assert sum(stats["items_per_cell"].values()) == ITEMS
    assert stats["edges"] == sum(len(v) for g in data["graphs"].values() for v in g["edges"].values())
    assert stats["bytes"] == sum((release / rel).stat().st_size for rel in RELEASE_FILES)


def test_importer_accepts_the_release(release, tmp_path):
    from agenthop.corpus import importer

    summary = importer.import_release(release, tmp_path / "corpus.sqlite", skip_bad_labels=False, echo=lambda _: None)
    counts = summary["counts"]
    assert counts["items"] == ITEMS
    assert counts["papers_with_text"] <= PAPERS
    assert summary["skipped_labels"] == 0 and summary["metadata_conflicts"] == 0


def test_cli_synth(tmp_path):
    from click.testing import CliRunner

    from agenthop.server.cli import main

    result = CliRunner().invoke(
        main, ["corpus", "synth", "--papers", "40", "--items", "6", "--seed", "3", "--out", str(tmp_path / "r")]
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["items"] == 6
    assert all((tmp_path / "r" / rel).is_file() for rel in RELEASE_FILES)
