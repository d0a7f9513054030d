"""The committed corpus.sqlite and splits/demo.jsonl are exactly what today's generator and importer produce."""

import sqlite3

from agenthop.corpus.demo import build_demo


def table_contents(path) -> dict[str, list]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    tables = [t for (t,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
    contents = {t: conn.execute(f"SELECT * FROM {t} ORDER BY 1, 2").fetchall() for t in tables}
    contents["sqlite_master"] = conn.execute("SELECT type, name, sql FROM sqlite_master ORDER BY type, name").fetchall()
    return contents


def test_committed_demo_corpus_matches_a_fresh_build(tmp_path, demo_corpus, demo_split):
    build_demo(tmp_path / "corpus.sqlite", tmp_path / "demo.jsonl")
    fresh, committed = table_contents(tmp_path / "corpus.sqlite"), table_contents(demo_corpus)
    assert list(fresh) == list(committed)
    for table in fresh:
        assert fresh[table] == committed[table], f"table {table} differs: run 'make corpus' and commit the result"
    assert (tmp_path / "demo.jsonl").read_bytes() == demo_split.read_bytes()


def test_demo_corpus_has_every_cell_and_enough_items(demo_corpus):
    conn = sqlite3.connect(demo_corpus)
    cells = dict(conn.execute("SELECT question_type || '-' || depth, count(*) FROM items GROUP BY 1"))
    assert sum(cells.values()) >= 60
    assert set(cells) == {"single-target-1", "single-target-2", "multi-target-1", "multi-target-2"}
    assert min(cells.values()) >= 10
