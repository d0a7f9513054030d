"""Lay out the packages as installed, as a tree of links under build/types, so a type checker can read them.

pyproject.toml maps each package to a folder of its own at the repository's root (``agenthop.server`` is
``server/``). The editable install resolves that map with an import hook, which static tools do not run, and the
repository's own ``agenthop/`` folder hides the rest from a tool started at the root. The tree made here is what an
installed wheel holds, as links to the sources, so ``mypy`` run inside it reports ``agenthop/server/...`` paths
whose files are the ones you edit. ``make types`` makes it and runs mypy there.

    python tools/type_tree.py            # prints the tree's folder
"""

from __future__ import annotations

import shutil
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def package_folders(pyproject: Path) -> dict[str, Path]:
    """Each mapped package and the folder that holds it, from ``[tool.setuptools] package-dir``."""
    mapping = tomllib.loads(pyproject.read_text(encoding="utf-8"))["tool"]["setuptools"]["package-dir"]
    return {package: (pyproject.parent / folder).resolve() for package, folder in mapping.items()}


def make_tree(out: Path, folders: dict[str, Path]) -> Path:
    """Links under ``out`` for every package: a package whose sub-packages live elsewhere becomes a real folder of
    links to its own files, and each sub-package a link to its folder."""
    shutil.rmtree(out, ignore_errors=True)
    parents = {p.rpartition(".")[0] for p in folders if "." in p}
    for package in sorted(folders, key=lambda p: p.count(".")):
        place = out.joinpath(*package.split("."))
        place.parent.mkdir(parents=True, exist_ok=True)
        if package in parents:
            place.mkdir()
            for entry in folders[package].iterdir():
                if entry.name != "__pycache__":
                    (place / entry.name).symlink_to(entry)
        else:
            place.symlink_to(folders[package], target_is_directory=True)
    return out


def main() -> int:
    out = make_tree(REPO / "build" / "types", package_folders(REPO / "pyproject.toml"))
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
