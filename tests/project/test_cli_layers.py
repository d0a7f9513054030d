"""Thin CLIs: click lives only in the cli.py files, and library error messages never name a command-line flag.
The library names its parameters; each cli.py translates them into flags."""

from __future__ import annotations

import ast
import importlib.util
import re
from pathlib import Path

from support.paths import REPO

PACKAGES = ("agenthop", "server", "corpus", "llm", "runner", "scorer", "inspect_task")
#: Calls that build an exception: names ending like the project's and the standard library's error classes.
ERROR_CALL = re.compile(r"(Error|Exception|Conflict|Unavailable|NoItemsLeft)$")


def library_files() -> list[Path]:
    files = [p for pkg in PACKAGES for p in sorted((REPO / pkg).rglob("*.py")) if p.name != "cli.py"]
    assert len(files) > 80
    return files


def cli_flags() -> set[str]:
    spec = importlib.util.spec_from_file_location("cli_reference", REPO / "tools" / "cli_reference.py")
    reference = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(reference)
    flags = {
        o
        for _, _, command, _ in reference.commands()
        for p in command.params
        for o in getattr(p, "opts", ())
        if o.startswith("--")
    }
    return flags - {"--help", "--version"}


def _called_name(call: ast.Call) -> str:
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def error_message_strings(tree: ast.AST):
    """String constants (f-string parts included) inside raise statements and exception constructor calls."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise) and node.exc is not None:
            roots = [node.exc]
        elif isinstance(node, ast.Call) and ERROR_CALL.search(_called_name(node)):
            roots = [*node.args, *(k.value for k in node.keywords)]
        else:
            continue
        for root in roots:
            for sub in ast.walk(root):
                if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
                    yield node.lineno, sub.value


def test_click_is_imported_only_by_the_cli_modules():
    offenders = []
    for path in library_files():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            if any(n == "click" or n.startswith("click.") for n in names):
                offenders.append(f"{path.relative_to(REPO)}:{node.lineno}")
        if "ClickException" in path.read_text(encoding="utf-8"):
            offenders.append(f"{path.relative_to(REPO)}: ClickException")
    assert offenders == []


def test_library_errors_name_no_flags():
    flags = cli_flags()
    assert {"--log", "--corpus", "--items", "--server-log", "--shard"} <= flags
    pattern = re.compile("|".join(re.escape(f) for f in sorted(flags, key=len, reverse=True)) + r"(?![\w-])")
    offenders = []
    for path in library_files():
        for lineno, text in error_message_strings(ast.parse(path.read_text(encoding="utf-8"))):
            if pattern.search(text):
                offenders.append(f"{path.relative_to(REPO)}:{lineno}: {text[:100]!r}")
    assert offenders == []


def test_the_scan_sees_a_flag_in_an_error_message():
    """The check above would catch the two shapes library messages take."""
    sample = ast.parse(
        'raise ValueError(f"give a path with --log ({x})")\nerr = RunSpecError("pass --server-log", "server_log")\n'
    )
    found = [text for _, text in error_message_strings(sample)]
    assert "give a path with --log (" in found and "pass --server-log" in found
