"""Errors the scorer raises for inputs it cannot use.

Messages name the library's parameters (``server_log``, ``items``, ``corpus``,
``jobs``), never a command-line flag: ``agenthop-scorer`` (cli.py) shows each
parameter as its flag instead.
"""

from __future__ import annotations

from collections.abc import Callable

#: The parameters a message may name, as ``{name}`` in its template.
PARAMETERS = (
    "server_log",
    "items",
    "corpus",
    "jobs",
    "runs",
    "out",
    "tiers",
    "external",
    "people",
    "models",
    "study_id",
)


class ScorerError(Exception):
    """An input the scorer cannot use; the message says what is wrong and what to do.

    ``template`` names parameters as ``{server_log}`` and other values as
    ``{name}`` given by keyword (paths and values are never parsed as templates).
    ``str(error)`` shows parameters by their Python names; ``error.render(spell)``
    shows them as ``spell(name)``. ``param`` is the parameter the error is about.
    """

    def __init__(self, template: str, param: str | None = None, **values):
        self.template = template
        self.param = param
        self.values = {k: str(v) for k, v in values.items()}
        super().__init__(self.render())

    def render(self, spell: Callable[[str], str] = str) -> str:
        names = {p: spell(p) for p in PARAMETERS}
        return self.template.format_map({**names, **self.values})

    def __reduce__(self):
        # The error crosses worker processes; rebuild it from its parts, not from args.
        return _rebuild, (type(self), self.template, self.param, self.values)


def _rebuild(cls, template, param, values):
    return cls(template, param, **values)


class RunSpecError(ScorerError):
    """A RUN argument names nothing the scorer can load."""


class ItemsFileError(ScorerError):
    """The expected item set cannot be read."""


class CorpusMismatchError(ScorerError):
    """A run was made on another corpus than the one given for scoring."""
