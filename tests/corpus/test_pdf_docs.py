"""docs/real-papers.md starts from a folder of PDFs: its shown summary and its shown error are what the commands give."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.grobid_standin import GrobidStandIn, Reply, digest
from support.paths import REPO as ROOT

DOC = (ROOT / "docs" / "real-papers.md").read_text(encoding="utf-8")


def block(name: str) -> str:
    [body] = re.findall(rf"^```json file={name}\n(.*?)^```", DOC, re.S | re.M)
    return body


def shown_error() -> str:
    """The indented ```text block of the 'PDFs that cannot be converted' item, unindented."""
    [body] = re.findall(r"^  ```text\n(  Error: .*?)^  ```", DOC, re.S | re.M)
    return "".join(line[2:] + "\n" for line in body.splitlines())


def build(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "agenthop.server", "corpus", "build", *args], cwd=cwd, capture_output=True, text=True
    )


@pytest.mark.slow
def test_the_documented_fallback_summary_is_the_one_given(tmp_path):
    shutil.copytree(ROOT / "tests" / "fixtures" / "pdf", tmp_path / "pdfs")
    done = build(tmp_path, "pdfs/", "--out", "my-papers.sqlite")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["pdfs"] == json.loads(block("pdf-summary"))


def test_the_documented_grobid_error_is_the_one_given(tmp_path):
    (tmp_path / "pdfs").mkdir()
    (tmp_path / "pdfs" / "scan.pdf").write_bytes(b"%PDF-1.4 not really")
    (tmp_path / "pdfs" / "broken.pdf").write_bytes(b"garbage")
    with GrobidStandIn({digest(b"garbage"): Reply(200, "<html>Whitelabel Error Page</html>")}) as grobid:
        done = build(tmp_path, "pdfs/", "--out", "my-papers.sqlite", "--grobid", grobid.url)
    assert done.returncode == 1
    assert done.stderr.endswith(shown_error()), done.stderr
