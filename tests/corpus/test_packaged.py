"""The packager's shape: combined sample files, per-sample directories, recall labels given apart.

The fixture is built here from the synthetic generator: each item of a release becomes a sample
carrying its graph and the text of its nodes, as the reference packager writes them.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from agenthop.corpus.importer import ReleaseError, check_release, import_release
from agenthop.corpus.synth import write_release
from agenthop.server.cli import main

PUBLIC_TABLES = ("papers", "sections", "pool", "edges", "items", "item_nodes", "item_edges", "search_index")
GOLD_TABLES = ("gold_items", "gold_recall_labels")


def quiet(_msg: str) -> None:
    pass


def read_jsonl(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def write_jsonl(path: Path, records: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in records)


def package(release: Path) -> list[dict]:
    """The release's items as packaged samples: qa fields + graph {seed, nodes, edges, contexts} + paper_pool."""
    graphs = {g["sample_id"]: g for g in read_jsonl(release / "graphs/full.jsonl")}
    pool = {p["arxiv_id"]: p for p in read_jsonl(release / "paper_pool/papers.jsonl")}
    samples = []
    for qa in read_jsonl(release / "qa/full.jsonl"):
        graph = graphs[qa["id"]]
        texts = {}
        for node in graph["nodes"].values():
            if node.get("arxivId") in pool:
                texts[node["arxivId"]] = {"sections": pool[node["arxivId"]]["sections"], "tables": []}
        samples.append(
            {
                **qa,
                "graph": {
                    "seed": qa["seed_paper_id"],
                    "nodes": graph["nodes"],
                    "edges": graph["edges"],
                    "contexts": graph["contexts"],
                },
                "paper_pool": texts,
            }
        )
    return samples


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory) -> dict:
    """A synthetic release, the same items packaged, and the release restricted to the text the samples carry."""
    root = tmp_path_factory.mktemp("packaged")
    release = root / "release"
    write_release(release, papers=80, items=16, seed=5)
    samples = package(release)
    combined = root / "agenthop_lite.json"
    combined.write_text(json.dumps(samples, indent=2, ensure_ascii=False), encoding="utf-8")
    # The samples carry only the text of papers in some item's graph: drop the other pool records for a like-for-like release.
    carried = {arxiv for s in samples for arxiv in s["paper_pool"]}
    same = root / "same-release"
    shutil.copytree(release, same)
    write_jsonl(
        same / "paper_pool/papers.jsonl",
        [p for p in read_jsonl(release / "paper_pool/papers.jsonl") if p["arxiv_id"] in carried],
    )
    return {
        "root": root,
        "release": same,
        "combined": combined,
        "samples": samples,
        "labels": release / "audit/recall_labels.jsonl",
    }


def contents(path: Path, tables=PUBLIC_TABLES + GOLD_TABLES) -> dict[str, list]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return {t: sorted(conn.execute(f"SELECT * FROM {t}").fetchall(), key=repr) for t in tables}
    finally:
        conn.close()


def test_combined_file_imports_to_the_same_tables_as_the_release(synthetic, tmp_path):
    from_release = tmp_path / "release.sqlite"
    from_combined = tmp_path / "combined.sqlite"
    import_release(synthetic["release"], from_release, echo=quiet)
    summary = import_release(synthetic["combined"], from_combined, labels=synthetic["labels"], echo=quiet)
    expected, got = contents(from_release), contents(from_combined)
    for table in expected:
        assert got[table] == expected[table], table
    assert summary["counts"]["items"] == 16 and summary["items_without_labels"] == []
    assert summary["shape"] == "packaged samples" and set(summary["inputs"]) == {
        "agenthop_lite.json",
        "recall_labels.jsonl",
    }
    # The pool copies in later samples are the same paper's text: read once, never counted as differing.
    assert "pool_copies_differ" not in summary["warnings"]


def test_directory_of_sample_files_beside_the_combined_file(synthetic, tmp_path):
    """The packager writes <id>.json per sample and the combined file into one folder: the per-sample files are read."""
    folder = tmp_path / "lite"
    folder.mkdir()
    for sample in synthetic["samples"]:
        (folder / f"{sample['id']}.json").write_text(json.dumps(sample, indent=2), encoding="utf-8")
    shutil.copy(synthetic["combined"], folder / "agenthop_lite.json")
    out = tmp_path / "dir.sqlite"
    summary = import_release(folder, out, labels=synthetic["labels"], echo=quiet)
    assert summary["warnings"]["combined_files_skipped"]["examples"] == [
        {"file": "agenthop_lite.json", "why": "the directory's per-sample files are imported"}
    ]
    reference = tmp_path / "combined.sqlite"
    import_release(synthetic["combined"], reference, labels=synthetic["labels"], echo=quiet)
    # Items come in another order, so do first sightings of papers: positions and the explore index's document order differ.
    tables = tuple(t for t in PUBLIC_TABLES + GOLD_TABLES if t not in ("items", "search_index"))
    assert contents(out, tables) == contents(reference, tables)
    conn = sqlite3.connect(out)
    ordered = [i for (i,) in conn.execute("SELECT item_id FROM items ORDER BY position")]
    assert ordered == sorted(s["id"] for s in synthetic["samples"])  # a directory is read in file-name order


def test_one_sample_and_no_labels(synthetic, tmp_path):
    one = tmp_path / "st.json"
    one.write_text(json.dumps(synthetic["samples"][0]), encoding="utf-8")
    summary = import_release(one, tmp_path / "one.sqlite", echo=quiet)
    assert summary["counts"]["items"] == 1
    assert summary["items_without_labels"] == [synthetic["samples"][0]["id"]]
    assert summary["warnings"]["items_without_labels"]["count"] == 1


def edited(synthetic, tmp_path: Path, edit) -> Path:
    samples = json.loads(json.dumps(synthetic["samples"][:3]))
    edit(samples)
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(samples), encoding="utf-8")
    return path


def test_empty_and_unknown_categories_are_stored_as_unknown_and_counted(synthetic, tmp_path):
    def edit(samples):
        samples[0].update(
            consensus_tier="", cognitive_skill="", venue="?"
        )  # what the packager writes when it does not know
        samples[1].update(consensus_tier="Gold", cognitive_skill="Retrieve", venue="acl")
        samples[2].update(consensus_tier="platinum", cognitive_skill="memorise", venue="  ")
        first = next(iter(samples[2]["paper_pool"].values()))
        first["tables"] = [{"caption": "T1", "rows": [["a"]]}]
        node = next(iter(samples[2]["graph"]["nodes"].values()))
        node["abstract"] = None
        next(iter(samples[1]["graph"]["nodes"].values())).pop("abstract")

    path = edited(synthetic, tmp_path, edit)
    out = tmp_path / "c.sqlite"
    summary = import_release(path, out, echo=quiet)
    conn = sqlite3.connect(out)
    rows = conn.execute("SELECT consensus_tier, cognitive_skill, venue FROM items ORDER BY position").fetchall()
    assert rows[0] == (None, None, None)
    assert rows[1][:2] == ("gold", "retrieve")
    assert rows[2] == (None, None, None)
    w = summary["warnings"]
    ids = [s["id"] for s in json.loads(path.read_text())]
    assert w["unknown_consensus_tier"] == {
        "count": 2,
        "examples": [{"item": ids[0], "value": ""}, {"item": ids[2], "value": "platinum"}],
    }
    assert w["unknown_cognitive_skill"]["count"] == 2 and w["unknown_venue"]["count"] == 2
    assert {"item": ids[1], "field": "consensus_tier", "value": "Gold", "stored": "gold"} in w["case_normalised"][
        "examples"
    ]
    assert w["pool_tables_ignored"]["count"] == 1
    prov = json.loads(conn.execute("SELECT value FROM meta WHERE key = 'provenance'").fetchone()[0])
    assert prov["warnings"]["unknown_consensus_tier"] == 2


def test_venue_spellings_follow_the_first_seen(synthetic, tmp_path):
    def edit(samples):
        samples[0]["venue"], samples[1]["venue"], samples[2]["venue"] = "EMNLP", "emnlp", "Emnlp "

    summary = import_release(edited(synthetic, tmp_path, edit), tmp_path / "c.sqlite", echo=quiet)
    conn = sqlite3.connect(tmp_path / "c.sqlite")
    assert [v for (v,) in conn.execute("SELECT venue FROM items ORDER BY position")] == ["EMNLP", "EMNLP", "EMNLP"]
    assert summary["warnings"]["case_normalised"]["count"] == 2


STRICT = {
    "reasoning type lower case": (
        lambda s: s[1].update(reasoning_type="result"),
        [
            "sample 2",
            'field \'reasoning_type\': expected one of "GROUND" or "METHOD" or "MOTIVE" or "RESULT", found the string "result" in item',
            'did the release mean "RESULT"?',
        ],
    ),
    "reasoning type close": (lambda s: s[0].update(reasoning_type="MOTIV"), ['did the release mean "MOTIVE"?']),
    "reasoning type empty": (lambda s: s[0].update(reasoning_type=""), ["found an empty string in item"]),
    "reasoning type missing": (
        lambda s: s[2].pop("reasoning_type"),
        ["sample 3", "missing field 'reasoning_type' in item"],
    ),
    "no graph": (lambda s: s[1].pop("graph"), ["edited.json sample 2 (", "missing field 'graph'"]),
    "no paper_pool": (
        lambda s: s[0].update(paper_pool=[]),
        ["field 'paper_pool': expected an object {arxiv_id: {sections, tables}}, found a list of 0"],
    ),
    "no id": (lambda s: s[0].pop("id"), ["edited.json sample 1: missing field 'id'"]),
    "bad section": (
        lambda s: next(iter(s[0]["paper_pool"].values()))["sections"][0].update(header=None),
        ["field 'paper_pool.", ".sections[0].header': expected a string, found null"],
    ),
    "bad node": (
        lambda s: next(iter(s[0]["graph"]["nodes"].values())).update(year="2019"),
        ["field 'graph.nodes.", '.year\': expected an integer, found the string "2019"'],
    ),
    "gold missing": (lambda s: s[0].pop("gold_paper_ids"), ["sample 1 (", "missing field 'gold_paper_ids'"]),
    "tier not a string": (
        lambda s: s[0].update(consensus_tier=1),
        ["field 'consensus_tier': expected a string or null, found an integer (1)"],
    ),
}


@pytest.mark.parametrize("case", list(STRICT))
def test_required_fields_stay_strict(synthetic, tmp_path, case):
    edit, fragments = STRICT[case]
    path = edited(synthetic, tmp_path, edit)
    out = tmp_path / "c.sqlite"
    with pytest.raises(ReleaseError) as info:
        import_release(path, out, echo=quiet)
    for fragment in fragments:
        assert fragment in str(info.value), str(info.value)
    assert not out.exists()


def test_broken_json_names_the_sample(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('[{"id": "st_0001", "graph": {"nodes": ', encoding="utf-8")
    with pytest.raises(ReleaseError, match="broken.json sample 1: not valid JSON"):
        import_release(path, tmp_path / "c.sqlite", echo=quiet)


def test_check_goes_on_after_a_sample_it_cannot_convert(synthetic, tmp_path):
    def edit(samples):
        samples[0].pop("graph")
        samples[2].update(reasoning_type="results")

    path = edited(synthetic, tmp_path, edit)
    ids = {s["id"] for s in json.loads(path.read_text())}
    labels = tmp_path / "labels.jsonl"
    write_jsonl(labels, [r for r in read_jsonl(synthetic["labels"]) if r["sample_id"] in ids])
    report = check_release(path, labels=labels, echo=quiet)
    messages = [e["message"] for e in report["errors"]]
    assert len(messages) == 2, (
        messages
    )  # the first sample's labels are not reported again as labels for an unknown item
    assert "missing field 'graph'" in messages[0] and 'did the release mean "RESULT"?' in messages[1]


def test_cli_takes_a_combined_file_and_labels(synthetic, tmp_path):
    out = tmp_path / "c.sqlite"
    runner = CliRunner()
    result = runner.invoke(
        main, ["corpus", "import", str(synthetic["combined"]), "--labels", str(synthetic["labels"]), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["counts"]["recall_labels"] > 0
    result = runner.invoke(
        main, ["corpus", "import", str(synthetic["release"]), "--labels", str(synthetic["labels"]), "--out", str(out)]
    )
    assert result.exit_code == 1 and "carries its own (audit/recall_labels.jsonl)" in result.output
    result = runner.invoke(main, ["corpus", "import", str(tmp_path / "nothing-here"), "--out", str(out)])
    assert result.exit_code == 1 and "release not found" in result.output and "a packaged JSON file" in result.output
    result = runner.invoke(main, ["corpus", "import", str(synthetic["release"] / "qa/full.jsonl"), "--out", str(out)])
    assert result.exit_code == 1 and "is one JSONL file; give the release directory that holds it" in result.output
