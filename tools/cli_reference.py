"""Generate docs/cli.md, the command-line reference, from each command's own --help.

    python tools/cli_reference.py            # print the page
    python tools/cli_reference.py --write    # rewrite docs/cli.md (make docs does this)
    python tools/cli_reference.py --check    # exit 1 if docs/cli.md is not what the commands print

Every command of agenthop-server, agenthop-runner, agenthop-scorer and agenthop-construct, walked recursively
through click's command tree, gets a section holding exactly what ``COMMAND --help`` prints
at a fixed width, so the page cannot say anything the commands do not. tests/project/test_cli_docs.py
fails while the committed page differs.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from pathlib import Path

import click
from click.testing import CliRunner

PAGE = Path(__file__).resolve().parent.parent / "docs" / "cli.md"
WIDTH = 100  # the terminal width the help is rendered at: fixed, so the page does not depend on who generates it


def programs() -> dict[str, click.Command]:
    """The five commands, by the name they are installed under (pyproject.toml [project.scripts])."""
    from agenthop.construct.cli import main as construct
    from agenthop.runner.cli import main as runner
    from agenthop.runner.shell.cli import main as shell_client
    from agenthop.scorer.cli import main as scorer
    from agenthop.server.cli import main as server

    return {
        "agenthop-server": server,
        "agenthop-runner": runner,
        "agenthop-scorer": scorer,
        "agenthop-construct": construct,
        "agenthop-cli": shell_client,
    }


def walk(command: click.Command, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], click.Command]]:
    """Every command under ``command`` (itself first), depth first, subcommands in the order they are listed."""
    yield path, command
    if isinstance(command, click.Group):
        for name in command.list_commands(click.Context(command)):
            yield from walk(command.commands[name], (*path, name))


def commands() -> Iterator[tuple[str, tuple[str, ...], click.Command, click.Command]]:
    """(program, path below it, the command, the program's root command) for every command of the three."""
    for prog, root in programs().items():
        for path, command in walk(root, ()):
            yield prog, path, command, root


def help_text(prog: str, root: click.Command, path: tuple[str, ...], flag: str = "--help") -> tuple[int, str]:
    """Exit code and output of ``prog *path flag``, run in-process at the reference width."""
    result = CliRunner().invoke(root, [*path, flag], prog_name=prog, terminal_width=WIDTH, env={"COLUMNS": str(WIDTH)})
    return result.exit_code, result.output


def render() -> str:
    lines = [
        "# Command-line reference",
        "",
        "Generated from each command's `--help` by `python tools/cli_reference.py --write` (`make docs`); do not edit by hand.",
        "A test fails while this page differs from what the commands print. Every command also takes `-h`.",
        "What the commands are for, with examples: the [README](../README.md), [serve.md](serve.md), [corpus.md](corpus.md),",
        "[runner.md](runner.md), [scoring.md](scoring.md), [web.md](web.md); the same operations from Python: [python-api.md](python-api.md).",
        "",
    ]
    for prog, path, _command, root in commands():
        code, text = help_text(prog, root, path)
        if code != 0:
            raise SystemExit(f"{prog} {' '.join(path)} --help exited with {code}:\n{text}")
        heading = "#" * min(2 + len(path), 4)
        lines += [f"{heading} {' '.join((prog, *path))}", "", "```text", text.rstrip(), "```", ""]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true", help=f"rewrite {PAGE.relative_to(PAGE.parent.parent)}")
    mode.add_argument("--check", action="store_true", help="exit 1 if the committed page is stale")
    args = parser.parse_args()
    page = render()
    if args.write:
        PAGE.write_text(page, encoding="utf-8")
    elif args.check:
        if PAGE.read_text(encoding="utf-8") != page:
            sys.exit(f"{PAGE} is stale: run 'make docs' (python tools/cli_reference.py --write)")
    else:
        sys.stdout.write(page)


if __name__ == "__main__":
    main()
