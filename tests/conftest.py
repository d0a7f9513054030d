"""Shared fixtures: a tiny hand-written corpus and the committed demo corpus."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).parent
REPO = TESTS.parent
sys.path.insert(0, str(TESTS))  # so tests can import release_fixture, fake_openai, ...


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture(scope="session")
def fixture_corpus(tmp_path_factory) -> Path:
    """The three-item corpus of release_fixture.py, imported once per test run."""
    from release_fixture import make_release

    from agenthop.server.importer import import_release

    root = tmp_path_factory.mktemp("fixture-corpus")
    out = root / "corpus.sqlite"
    import_release(make_release(root), out, echo=lambda _: None)
    return out


@pytest.fixture(scope="session")
def demo_corpus() -> Path:
    path = REPO / "corpus.sqlite"
    assert path.exists(), "corpus.sqlite is missing at the repository root; rebuild it with 'agenthop-server corpus demo'"
    return path


@pytest.fixture(scope="session")
def demo_split() -> Path:
    path = REPO / "splits" / "demo.jsonl"
    assert path.exists(), "splits/demo.jsonl is missing; rebuild it with 'agenthop-server corpus demo'"
    return path
