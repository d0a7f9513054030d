"""The project's imports: no circles between its modules, and no import of a name its module does not define.

Every ``import`` of an ``agenthop`` module counts: at module level, inside functions (a lazy
import is still a dependency) and under ``TYPE_CHECKING`` (a type is one too). A name imported
from a package whose ``__init__`` re-exports it lazily (``_WHERE``) counts as an import of the
module that defines it, so ``from agenthop.server import Caps`` is an edge to ``agenthop.server.caps``.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
from pathlib import Path

import pytest
from support.paths import REPO

PACKAGES = (
    "agenthop",
    "agenthop.server",
    "agenthop.corpus",
    "agenthop.llm",
    "agenthop.runner",
    "agenthop.scorer",
    "agenthop.construct",
    "agenthop.inspect_task",
)


def project_modules() -> dict[str, Path]:
    """Every module of the installed project, name -> source file, found without importing any of them."""
    found: dict[str, Path] = {}
    for package in PACKAGES:
        (folder,) = importlib.util.find_spec(package).submodule_search_locations
        for source in Path(folder).rglob("*.py"):
            parts = source.relative_to(folder).with_suffix("").parts
            name = ".".join((package, *parts[:-1], *([] if parts[-1] == "__init__" else parts[-1:])))
            found.setdefault(name, source)  # agenthop's own folder does not hold the other packages
    return found


@functools.cache
def lazy_exports(init: Path) -> dict[str, str]:
    """The names a package's ``__init__`` re-exports lazily (its ``_WHERE`` literal) and the modules defining them."""
    for node in ast.parse(init.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "_WHERE" for t in node.targets):
            return ast.literal_eval(node.value)
    return {}


def imports_of(source: Path, modules: dict[str, Path]) -> set[str]:
    """The project modules ``source`` imports, anywhere in the file."""
    targets: set[str] = set()
    for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                submodule = f"{node.module}.{alias.name}"
                if submodule in modules:
                    targets.add(submodule)
                elif node.module in modules and alias.name in lazy_exports(modules[node.module]):
                    targets.add(lazy_exports(modules[node.module])[alias.name])
                else:
                    targets.add(node.module)
    return {t for t in targets if t in modules}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle of ``graph`` as a path that ends where it starts, or None (depth-first search)."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return path[path.index(nxt) :] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (found := visit(start)):
            return found
    return None


def defined_names(source: Path) -> set[str]:
    """The names a module binds at its top level (including under ``if``/``try``), without running it."""
    names: set[str] = set()
    blocks = [ast.parse(source.read_text(encoding="utf-8")).body]
    while blocks:
        for node in blocks.pop():
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                    names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                names.update((a.asname or a.name).split(".")[0] for a in node.names)
            elif isinstance(node, (ast.If, ast.Try)):
                blocks += [
                    node.body,
                    node.orelse,
                    *[h.body for h in getattr(node, "handlers", [])],
                    getattr(node, "finalbody", []),
                ]
    return names


@pytest.mark.slow
def test_every_import_of_the_project_names_a_module_and_a_name_it_has():
    """A module moved, or a name moved to another module, and still imported from the old place fails at run
    time, often only in a lazy import on a rare path: this finds it without running anything, in the package
    and in the tests, benchmarks and tools that import it."""
    modules = project_modules()
    repo = REPO
    importers = dict(modules)
    importers.update(
        {str(p.relative_to(repo)): p for folder in ("tests", "bench", "tools") for p in (repo / folder).rglob("*.py")}
    )
    wrong = []
    for name, path in sorted(importers.items()):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                wrong += [
                    f"{name}: import {a.name}"
                    for a in node.names
                    if a.name.startswith("agenthop.") and a.name not in modules
                ]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module.startswith("agenthop."):
                if node.module not in modules:
                    wrong.append(f"{name}: from {node.module} import ... (no such module)")
                    continue
                known = defined_names(modules[node.module]) | set(lazy_exports(modules[node.module]))
                wrong += [
                    f"{name}: from {node.module} import {a.name}"
                    for a in node.names
                    if a.name not in known and f"{node.module}.{a.name}" not in modules
                ]
    assert not wrong, "imports of modules or names the project does not have:\n" + "\n".join(wrong)


def test_the_cycle_finder_finds_a_circle_and_only_a_circle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_the_graph_sees_lazy_imports_and_lazy_exports(tmp_path):
    modules = project_modules()
    source = tmp_path / "probe.py"
    source.write_text("def f():\n    from agenthop.server import Caps\n    import agenthop.scorer.stats\n")
    assert imports_of(source, modules) == {"agenthop.server.caps", "agenthop.scorer.stats"}


def test_no_module_of_the_project_imports_itself_through_a_circle():
    modules = project_modules()
    assert {"agenthop.server.log.checkpoint", "agenthop.server.transport.http", "agenthop.server.play.routes"} <= set(
        modules
    )
    graph = {name: imports_of(path, modules) - {name} for name, path in modules.items()}
    cycle = find_cycle(graph)
    if cycle:
        pytest.fail("import circle: " + " -> ".join(cycle) + "; move the shared names to a module both can import")


#: Which of the project's packages each package may import (its own and the top-level ``agenthop`` always).
#: The server serves and imports no other package; corpus building, the model plumbing (llm) and the jobs
#: built on them point towards it, never back.
MAY_IMPORT = {
    "agenthop": set(),
    "server": set(),
    "corpus": {"server"},
    "llm": set(),
    "runner": {"server", "llm"},
    "scorer": {"server"},
    "construct": {"server", "corpus", "llm", "scorer"},
    "inspect_task": {"server", "runner"},
}
#: The one exception: ``agenthop-server corpus ...`` builds corpora, so the server's command line reaches
#: corpus building, lazily and only from there.
MAY_ALSO_IMPORT = {"agenthop.server.cli": {"corpus"}}


def package_of(module: str) -> str:
    """``agenthop.server.cli`` -> ``server``; a top-level module (``agenthop.textmatch``) -> ``agenthop``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in MAY_IMPORT else "agenthop"


def test_each_package_imports_only_the_packages_below_it():
    modules = project_modules()
    assert set(MAY_IMPORT) - {"agenthop"} <= {package_of(m) for m in modules}
    wrong = []
    for name, path in sorted(modules.items()):
        source = package_of(name)
        allowed = {source, "agenthop"} | MAY_IMPORT[source] | MAY_ALSO_IMPORT.get(name, set())
        wrong += [f"{name} -> {t}" for t in sorted(imports_of(path, modules)) if package_of(t) not in allowed]
    assert not wrong, "imports against the layers (see MAY_IMPORT):\n" + "\n".join(wrong)


def test_the_layer_check_sees_a_server_module_importing_the_runner(tmp_path):
    modules = project_modules()
    probe = tmp_path / "probe.py"
    probe.write_text("from agenthop.runner.api import run_items\n")
    assert {package_of(t) for t in imports_of(probe, modules)} == {"runner"}
    assert "runner" not in MAY_IMPORT["server"] | MAY_IMPORT["corpus"]
