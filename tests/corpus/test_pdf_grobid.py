"""A folder of PDFs -> a corpus through GROBID, against a loopback stand-in that answers the fixture papers' stored
TEI: the one-command build, the TEI cache (a re-run sends nothing twice), retries of 503s and timeouts, garbage and
parse failures reported by name with GROBID's answer, --skip-bad, the concurrency bound, and an unreachable service."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from support.grobid_standin import NOT_A_PDF, Busy, GrobidStandIn, Hang, Reply, digest
from support.paths import FIXTURES

from agenthop.corpus.convert.grobid import GrobidOptions, convert_pdfs
from agenthop.corpus.convert.model import ConvertError

pytestmark = pytest.mark.slow

PAPERS = ["2020.acl-main.207", "N18-3011", "s12984-016-0129-6"]  # the same papers as fixtures/tei/
QUICK = {"backoff": 0.01}  # retries without waiting seconds in tests


def stored_tei() -> dict[str, bytes]:
    """PDF digest -> the TEI GROBID made of that PDF (fixtures/tei, see fixtures/README.md)."""
    return {
        digest((FIXTURES / "pdf" / f"{name}.pdf").read_bytes()): (FIXTURES / "tei" / f"{name}.tei.xml").read_bytes()
        for name in PAPERS
    }


def pdf_folder(tmp_path: Path, extra: dict[str, bytes] | None = None) -> Path:
    folder = tmp_path / "papers"
    folder.mkdir()
    for name in PAPERS:
        shutil.copy(FIXTURES / "pdf" / f"{name}.pdf", folder)
    for name, data in (extra or {}).items():
        (folder / name).write_bytes(data)
    return folder


def build(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "agenthop.server", "corpus", "build", *args], capture_output=True, text=True
    )


def rows(corpus: Path, sql: str) -> list:
    return sqlite3.connect(corpus).execute(sql).fetchall()


def test_a_folder_of_pdfs_builds_the_corpus_its_tei_builds_and_a_rerun_sends_nothing(tmp_path):
    folder = pdf_folder(tmp_path)
    reference = tmp_path / "from-tei.sqlite"
    assert build(str(FIXTURES / "tei"), "--out", str(reference)).returncode == 0
    with GrobidStandIn(stored_tei()) as grobid:
        first = build(str(folder), "--grobid", grobid.url, "--out", str(tmp_path / "a.sqlite"))
        assert first.returncode == 0, first.stderr
        sent_once = dict(grobid.requests)
        again = build(
            str(folder),
            "--grobid",
            grobid.url,
            "--out",
            str(tmp_path / "b.sqlite"),
            "--tei-cache",
            str(tmp_path / "a.pdf-tei"),
        )
        assert again.returncode == 0, again.stderr
        assert dict(grobid.requests) == sent_once == {d: 1 for d in stored_tei()}  # each PDF sent once, over two builds
    summary, rerun = json.loads(first.stdout)["pdfs"], json.loads(again.stdout)["pdfs"]
    assert (summary["parser"], summary["pdfs"], summary["converted"], summary["requests"], summary["skipped"]) == (
        "grobid",
        3,
        3,
        3,
        0,
    )
    assert (rerun["from_cache"], rerun["requests"]) == (3, 0)
    for table in ("papers", "sections", "edges"):  # the PDFs give exactly the corpus their TEI gives
        assert rows(tmp_path / "a.sqlite", f"SELECT * FROM {table} ORDER BY 1, 2") == rows(
            reference, f"SELECT * FROM {table} ORDER BY 1, 2"
        )
    assert "GROBID: 3/3 PDFs done (0 failed)" in first.stderr
    assert sorted(p.name.split(".")[0] for p in (tmp_path / "a.pdf-tei" / "grobid").iterdir()) == [
        "2020_acl-main_207",
        "N18-3011",
        "s12984-016-0129-6",
    ]


def test_bad_pdfs_stop_the_build_naming_each_with_grobids_answer_and_skip_bad_leaves_them_out(tmp_path):
    folder = pdf_folder(
        tmp_path, {"scan.pdf": b"%PDF-1.4 not really", "broken.pdf": b"garbage that GROBID answers oddly"}
    )
    answers = {
        **stored_tei(),
        digest(b"garbage that GROBID answers oddly"): Reply(200, "<html>Whitelabel Error Page</html>"),
    }
    out = tmp_path / "corpus.sqlite"
    with GrobidStandIn(answers) as grobid:
        stopped = build(str(folder), "--grobid", grobid.url, "--out", str(out))
        written = out.exists()
        good_sent = {d: grobid.requests[d] for d in stored_tei()}
        skipped = build(str(folder), "--grobid", grobid.url, "--out", str(out), "--skip-bad")
        assert {d: grobid.requests[d] for d in stored_tei()} == good_sent == {d: 1 for d in stored_tei()}
    assert stopped.returncode == 1 and not written
    assert "2 PDFs could not be converted" in stopped.stderr
    assert f"{folder / 'scan.pdf'}: GROBID answered 500 Internal Server Error: {NOT_A_PDF}" in stopped.stderr
    assert (
        f"{folder / 'broken.pdf'}: GROBID answered 200 but the body is XML whose root is <html>, not TEI"
        in stopped.stderr
    )
    assert "--skip-bad" in stopped.stderr
    assert skipped.returncode == 0, skipped.stderr
    summary = json.loads(skipped.stdout)
    assert (summary["pdfs"]["converted"], summary["pdfs"]["skipped"]) == (3, 2)
    assert sorted(Path(s["pdf"]).name for s in summary["pdfs"]["skipped_pdfs"]) == ["broken.pdf", "scan.pdf"]
    assert summary["converted"]["papers_with_text"] == 3
    assert "warning: skipped a PDF that could not be converted" in skipped.stderr


def test_a_busy_service_is_retried_until_it_answers(tmp_path):
    tei = stored_tei()
    first = digest((FIXTURES / "pdf" / "N18-3011.pdf").read_bytes())
    with GrobidStandIn({**tei, first: Busy(2, tei[first])}) as grobid:
        teis, failures, counts = convert_pdfs(
            [FIXTURES / "pdf" / f"{n}.pdf" for n in PAPERS],
            tmp_path / "cache",
            GrobidOptions(grobid.url, **QUICK),
            echo=lambda _: None,
        )
        assert grobid.requests[first] == 3
    assert failures == [] and len(teis) == 3 and counts["retries"] == 2
    assert teis[1].read_bytes() == tei[first]  # in the order of the PDFs


def test_a_hung_request_times_out_and_is_reported_after_its_retries(tmp_path):
    pdfs = [FIXTURES / "pdf" / f"{n}.pdf" for n in PAPERS]
    hung = digest(pdfs[0].read_bytes())
    messages: list[str] = []
    with GrobidStandIn({**stored_tei(), hung: Hang()}) as grobid:
        teis, failures, _ = convert_pdfs(
            pdfs, tmp_path / "cache", GrobidOptions(grobid.url, timeout=1, retries=1, **QUICK), echo=messages.append
        )
        assert grobid.requests[hung] == 2
    assert [str(f) for f in failures] == [f"{pdfs[0]}: no answer from GROBID within 1 s; gave up after 2 attempts"]
    assert len(teis) == 2
    assert any(m.startswith("  GROBID could not convert") and str(pdfs[0]) in m for m in messages)


def test_a_503_that_never_ends_gives_up_with_grobids_answer(tmp_path):
    pdf = FIXTURES / "pdf" / "N18-3011.pdf"
    with GrobidStandIn({digest(pdf.read_bytes()): Busy(99, b"")}) as grobid:
        _, [failure], counts = convert_pdfs(
            [pdf], tmp_path / "cache", GrobidOptions(grobid.url, retries=2, **QUICK), echo=lambda _: None
        )
    assert failure.reason == "GROBID answered 503 Service Unavailable (empty body); gave up after 3 attempts"
    assert counts["retries"] == 2


def test_no_more_requests_in_flight_than_the_concurrency(tmp_path):
    base = (FIXTURES / "pdf" / "N18-3011.pdf").read_bytes()
    tei = (FIXTURES / "tei" / "N18-3011.tei.xml").read_bytes()
    pdfs = []
    for i in range(6):  # six different contents (a trailing comment keeps a PDF valid)
        path = tmp_path / f"copy{i}.pdf"
        path.write_bytes(base + f"\n% copy {i}\n".encode())
        pdfs.append(path)
    with GrobidStandIn(
        {digest(p.read_bytes()): tei for p in pdfs}, latency=0.5
    ) as grobid:  # long enough to overlap on a busy machine
        teis, failures, _ = convert_pdfs(
            pdfs, tmp_path / "cache", GrobidOptions(grobid.url, concurrency=2), echo=lambda _: None
        )
        assert grobid.max_in_flight == 2
    assert len(teis) == 6 and failures == []


def test_an_unreachable_service_is_named_at_once(tmp_path):
    with GrobidStandIn() as grobid:
        url = grobid.url
    with pytest.raises(ConvertError, match=f"no GROBID service answers at {url}"):
        convert_pdfs([FIXTURES / "pdf" / "N18-3011.pdf"], tmp_path / "cache", GrobidOptions(url), echo=lambda _: None)
    done = build(str(FIXTURES / "pdf"), "--grobid", url, "--out", str(tmp_path / "c.sqlite"))
    assert done.returncode == 1 and f"no GROBID service answers at {url}" in done.stderr


def test_check_converts_the_pdfs_and_writes_nothing(tmp_path):
    folder = pdf_folder(tmp_path)
    with GrobidStandIn(stored_tei()) as grobid:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "agenthop.server",
                "corpus",
                "build",
                str(folder),
                "--grobid",
                grobid.url,
                "--check",
            ],
            capture_output=True,
            text=True,
            cwd=tmp_path,
        )
        assert dict(grobid.requests) == {d: 1 for d in stored_tei()}
    assert done.returncode == 0, done.stdout + done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["papers"]  # no corpus, no cache left behind
    assert sorted(p.name for p in folder.iterdir()) == sorted(f"{n}.pdf" for n in PAPERS)


def test_a_full_thread_pool_answers_503_and_the_client_waits_its_turn(tmp_path):
    pdfs = [FIXTURES / "pdf" / f"{n}.pdf" for n in PAPERS]
    with GrobidStandIn(stored_tei(), latency=0.2, capacity=1) as grobid:
        # Backoff doubling from 0.05 s over 10 retries waits up to 51 s: room for a loaded machine.
        teis, failures, counts = convert_pdfs(
            pdfs,
            tmp_path / "cache",
            GrobidOptions(grobid.url, concurrency=3, retries=10, backoff=0.05),
            echo=lambda _: None,
        )
        assert grobid.busy_answers >= 2 and grobid.max_in_flight == 1  # two of three arrive while the one thread works
    assert len(teis) == 3 and failures == [] and counts["retries"] == grobid.busy_answers


def test_grobid_without_pdfs_is_said_and_the_build_goes_on(tmp_path):
    done = build(str(FIXTURES / "tei"), "--grobid", "http://127.0.0.1:9", "--out", str(tmp_path / "c.sqlite"))
    assert done.returncode == 0, done.stderr
    assert "warning: a GROBID service was given but the inputs hold no PDF; it was not used" in done.stderr
    assert "pdfs" not in json.loads(done.stdout)


def test_a_pdf_that_cannot_be_read_is_named():
    from agenthop.corpus.convert.pdfs import _unreadable

    [failure] = _unreadable([FIXTURES / "pdf"])  # a folder where a file should be: open() fails even for root
    assert str(failure) == f"{FIXTURES / 'pdf'}: cannot be read (Is a directory)"
