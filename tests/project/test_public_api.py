"""The public API: every name each package exports resolves, to the object and not to a submodule of the
same name, and importing the lazy packages loads nothing heavy."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys
import types

import pytest

PACKAGES = (
    "agenthop",
    "agenthop.server",
    "agenthop.server.log",
    "agenthop.corpus",
    "agenthop.runner",
    "agenthop.scorer",
)


@pytest.mark.parametrize("name", PACKAGES)
def test_every_exported_name_resolves_to_an_object_even_after_every_submodule_is_imported(name):
    package = importlib.import_module(name)
    for module in pkgutil.walk_packages(package.__path__, f"{name}."):
        if not module.name.endswith(("__main__", "view_static", "static")):
            importlib.import_module(module.name)
    assert package.__all__ and len(set(package.__all__)) == len(package.__all__)
    for public in package.__all__:
        value = getattr(package, public)
        assert not isinstance(value, types.ModuleType), (
            f"{name}.{public} is a module (a submodule of that name shadows it)"
        )
        assert public in dir(package)


def test_the_same_class_under_two_packages_is_one_class():
    import agenthop.corpus
    import agenthop.runner
    import agenthop.server
    from agenthop.server.caps import Caps
    from agenthop.server.corpus_schema import CorpusError

    assert agenthop.runner.Caps is agenthop.server.Caps is Caps
    assert agenthop.corpus.CorpusError is CorpusError


def test_an_unknown_name_is_an_attribute_error():
    import agenthop.server

    with pytest.raises(AttributeError, match="agenthop.server' has no attribute 'nope'"):
        agenthop.server.nope  # noqa: B018


def test_importing_the_lazy_packages_loads_nothing_heavy():
    code = (
        "import sys, agenthop, agenthop.server, agenthop.corpus, agenthop.runner, agenthop.scorer, agenthop.server.log\n"
        "from agenthop.server import read_log, CallRecord\n"
        "print(sorted(m for m in ('mcp', 'uvicorn', 'starlette', 'openai', 'agents', 'numpy', 'scipy', 'matplotlib', "
        "'bm25s', 'agenthop.server.transport.mcp_app') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize(
    ("cli", "heavy"),
    [
        ("agenthop.server.cli", ("mcp", "uvicorn", "starlette", "numpy", "scipy", "bm25s")),
        (
            "agenthop.runner.cli",
            ("mcp", "uvicorn", "starlette", "openai", "agents", "numpy", "scipy", "matplotlib", "bm25s", "httpx2"),
        ),
        ("agenthop.scorer.cli", ("mcp", "uvicorn", "openai", "agents", "numpy", "scipy", "matplotlib", "bm25s")),
    ],
)
def test_the_command_lines_load_nothing_heavy_to_parse_their_options(cli, heavy):
    """``--help`` and a usage error answer without loading the model client, MCP, the search engine or the plotting
    library (the runner's took 1.8 s and the scorer's 1.5 s before; what a command needs is imported when it runs)."""
    code = f"import sys, {cli}\nprint(sorted(m for m in {heavy!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
