"""The three CLIs and their docs cannot drift: every command has help, takes -h and --help, is documented,
and docs/cli.md is exactly what the commands print."""

from __future__ import annotations

import importlib.util
import re

import click
import pytest
from support.paths import REPO

DOCS = REPO / "docs"


def _load_reference():
    spec = importlib.util.spec_from_file_location("cli_reference", REPO / "tools" / "cli_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


reference = _load_reference()
COMMANDS = [(prog, path, command, root) for prog, path, command, root in reference.commands()]
IDS = [" ".join((prog, *path)) for prog, path, _, _ in COMMANDS]
STANDARD = {"--help", "--version"}  # click's own options, shown in docs/cli.md


def prose() -> str:
    """Every hand-written page under docs/ (not the generated reference)."""
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted(DOCS.glob("*.md")) if p.name != "cli.md")


def test_the_walk_finds_every_command():
    assert len(COMMANDS) >= 14
    assert {
        "agenthop-server serve",
        "agenthop-server log runs",
        "agenthop-server corpus import",
        "agenthop-runner",
        "agenthop-scorer compare",
        "agenthop-scorer view",
    } <= set(IDS)


@pytest.mark.parametrize(("prog", "path", "command", "root"), COMMANDS, ids=IDS)
def test_every_command_has_help_takes_h_and_is_documented(prog, path, command, root):
    name = " ".join((prog, *path))
    assert (command.help or "").strip(), f"{name} has no help text (the docstring of its function)"
    for param in command.params:
        if isinstance(param, click.Option) and not set(param.opts) & STANDARD:
            assert (param.help or "").strip(), f"{name} {'/'.join(param.opts)} has no help text"

    long_code, long_help = reference.help_text(prog, root, path, "--help")
    short_code, short_help = reference.help_text(prog, root, path, "-h")
    assert long_code == 0 and short_code == 0, (long_help, short_help)
    assert short_help == long_help and long_help.startswith(f"Usage: {name} ")

    docs = prose()
    assert name in docs, f"'{name}' is mentioned nowhere in docs/ (only the generated cli.md)"
    for param in command.params:
        if isinstance(param, click.Option):
            for flag in (o for o in param.opts if o.startswith("--") and o not in STANDARD):
                assert re.search(re.escape(flag) + r"(?![\w-])", docs), f"{name} {flag} is mentioned nowhere in docs/"


def test_the_committed_cli_reference_is_what_the_commands_print():
    committed = (DOCS / "cli.md").read_text(encoding="utf-8")
    assert committed == reference.render(), (
        "docs/cli.md is stale: run 'make docs' (python tools/cli_reference.py --write)"
    )
    for name in IDS:
        assert re.search(rf"^#+ {re.escape(name)}$", committed, re.M), name
