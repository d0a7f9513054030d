"""Lazy re-exports for the packages' ``__init__``: a public name is imported from its module on first use.

So ``import agenthop.server`` (or ``agenthop.server.log.checkpoint``, which imports the package
first) costs nothing, and ``from agenthop.server import serve`` imports only what ``serve`` needs.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable


def lazy_exports(package: str, where: dict[str, str]) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``, whose public names live in the modules ``where`` maps them to."""

    def __getattr__(name: str) -> object:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        globals_of_package = importlib.import_module(package).__dict__
        globals_of_package[name] = value  # later lookups are plain attribute reads
        return value

    def __dir__() -> list[str]:
        return sorted(set(importlib.import_module(package).__dict__) | set(where))

    return __getattr__, __dir__
