"""Shared fixtures: a tiny hand-written corpus and the committed demo corpus."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from support.paths import REPO, TESTS

# The slow kinds of test, each needing a tool from outside Python. `make check` leaves them out; `make test` (CI) runs
# them all. Where a tool is missing, a test of its kind is skipped with the reason, except in CI (CI set), where it
# fails: a green CI must never hide a missing install step.
TOOLS = {
    "browser": (
        lambda: bool(shutil.which("chromium") or shutil.which("chromium-browser")),
        "Chromium is not installed (make chromium, or apt-get install -y chromium)",
    ),
    "cluster": (
        lambda: all(shutil.which(d) or Path("/usr/sbin", d).exists() for d in ("slurmctld", "slurmd", "sbatch")),
        "Slurm is not installed (make slurm installs Debian's slurmctld, slurmd and slurm-client)",
    ),
    "conformance": (
        lambda: (TESTS / "conformance" / "node_modules" / ".bin" / "conformance").exists(),
        "the MCP conformance suite is not installed (make conformance, which needs npm)",
    ),
}
#: Fixtures that make a test one of those kinds wherever it is.
KIND_OF_FIXTURE = {"slurm_cluster": "cluster", "browser_page": "browser"}


def pytest_collection_modifyitems(config, items):
    for item in items:
        for fixture, kind in KIND_OF_FIXTURE.items():
            if fixture in getattr(item, "fixturenames", ()):
                item.add_marker(kind)


@pytest.fixture(autouse=True)
def _tool_of_its_kind(request):
    for kind, (present, missing) in TOOLS.items():
        if request.node.get_closest_marker(kind) and not present():
            if os.environ.get("CI"):
                pytest.fail(f"{missing}; CI must run every kind of test")
            pytest.skip(missing)


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture(scope="session")
def fixture_corpus(tmp_path_factory) -> Path:
    """The three-item corpus of support/release_fixture.py, imported once per test run."""
    from support.release_fixture import make_release

    from agenthop.corpus.importer import import_release

    root = tmp_path_factory.mktemp("fixture-corpus")
    out = root / "corpus.sqlite"
    import_release(make_release(root), out, echo=lambda _: None)
    return out


# Words that must never reach an agent: gold field names, distractor kinds, and the canary
# that canary_corpus plants in every recall label.
GOLD_WORDS = (
    "correct_index",
    "distractor",
    "seed_only",
    "wrong_paper",
    "no_context",
    "same_paper",
    "gold_paper",
    "bridge_paper",
    "recall_label",
    "what_it_contains",
    "relevance",
    "CANARY",
)


@pytest.fixture(scope="session")
def canary_corpus(tmp_path_factory) -> Path:
    """The fixture corpus with a canary in every recall label's description."""
    from support.release_fixture import make_release

    from agenthop.corpus.importer import import_release

    root = tmp_path_factory.mktemp("canary-corpus")

    def plant(release):
        for record in release.labels:
            for i, label in enumerate(record["analysis"]["section_recall_labels"]):
                label["what_it_contains"] = f"CANARY-{record['sample_id']}-{i}"

    out = root / "corpus.sqlite"
    import_release(make_release(root, plant), out, echo=lambda _: None)
    return out


@pytest.fixture(scope="session")
def demo_corpus() -> Path:
    path = REPO / "corpus.sqlite"
    assert path.exists(), (
        "corpus.sqlite is missing at the repository root; rebuild it with 'agenthop-server corpus demo'"
    )
    return path


@pytest.fixture(scope="session")
def demo_split() -> Path:
    path = REPO / "splits" / "demo.jsonl"
    assert path.exists(), "splits/demo.jsonl is missing; rebuild it with 'agenthop-server corpus demo'"
    return path


@pytest.fixture(scope="session")
def demo(demo_corpus, demo_split) -> tuple[Path, Path]:
    """(corpus.sqlite, splits/demo.jsonl) of the repository."""
    return demo_corpus, demo_split


@pytest.fixture(scope="session")
def construct_run(tmp_path_factory, demo_corpus) -> Path:
    """The offline construction pipeline run once on corpus.sqlite with --min-refs 5 (every chain: 22 items).

    Shared by the construct tests that read its candidates or its release, so the ~10 s run happens once; tests copy
    the directory before changing anything in it.
    """
    from agenthop.construct.pipeline import run_pipeline
    from agenthop.construct.settings import Settings

    out = tmp_path_factory.mktemp("construct") / "run"
    run_pipeline(demo_corpus, out, Settings(min_refs=5), echo=lambda line: None)
    return out
