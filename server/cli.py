"""agenthop-server: serve the sandbox, build corpora, export logs."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import click

log = logging.getLogger("agenthop.server")


def _setup_logging(level: str) -> None:
    # Logs always go to stderr: stdout is the MCP wire on stdio.
    logging.basicConfig(stream=sys.stderr, level=level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="agenthop")
def main() -> None:
    """AgentHop server: a metered MCP sandbox over a paper corpus."""


# --- corpus -----------------------------------------------------------------


@main.group()
def corpus() -> None:
    """Build and inspect corpus files."""


@corpus.command("synth")
@click.option("--papers", type=click.IntRange(min=20), required=True, help="Papers with full text.")
@click.option("--items", type=click.IntRange(min=4), required=True, help="Benchmark items.")
@click.option("--seed", type=int, default=0, show_default=True, help="Random seed; same seed, same bytes.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True, help="Release directory to write.")
def corpus_synth(papers: int, items: int, seed: int, out: Path) -> None:
    """Generate a synthetic benchmark in the release layout (SPEC 2.1)."""
    from agenthop.server.corpus.synth import write_release

    stats = write_release(out, papers=papers, items=items, seed=seed)
    click.echo(json.dumps(stats, indent=2), err=False)


@corpus.command("import")
@click.argument("release_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True, help="Corpus file to write.")
@click.option("--skip-bad-labels", is_flag=True, help="Drop recall labels that name no section (and report them) instead of failing.")
def corpus_import(release_dir: Path, out: Path, skip_bad_labels: bool) -> None:
    """Import a release directory (qa/, graphs/, paper_pool/, audit/) into a corpus file."""
    from agenthop.server.corpus.importer import ReleaseError, import_release

    try:
        summary = import_release(release_dir, out, skip_bad_labels=skip_bad_labels, echo=lambda m: click.echo(m, err=True))
    except ReleaseError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(json.dumps(summary, indent=2))


@corpus.command("build")
@click.argument("sources", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True, help="Corpus file to write.")
@click.option("--format", "fmt", type=click.Choice(["tei", "jats", "s2orc"]), default=None,
              help="Format of every input; default: told from each file's content.")
@click.option("--items", type=click.Path(dir_okay=False, exists=True, path_type=Path), default=None,
              help="Your questions in the release's qa format (seed and gold papers named by the built corpus's paper IDs).")
@click.option("--labels", type=click.Path(dir_okay=False, exists=True, path_type=Path), default=None,
              help="Recall labels for --items, in the release's audit/recall_labels.jsonl format.")
@click.option("--keep-release", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Also keep the release directory the converters wrote (to inspect or re-import it).")
def corpus_build(sources: tuple[Path, ...], out: Path, fmt: str | None, items: Path | None, labels: Path | None,
                 keep_release: Path | None) -> None:
    """Build a corpus from papers as they come: GROBID TEI, JATS or S2ORC JSON files or folders.

    Without --items the corpus serves explore mode only; with them, each item's graph is
    built from the citation graph (the seed, its first 30 references, and theirs).
    """
    from agenthop.server.corpus.convert.build import build_corpus
    from agenthop.server.corpus.convert.model import ConvertError
    from agenthop.server.corpus.importer import ReleaseError

    if labels is not None and items is None:
        raise click.UsageError("--labels describes items: give --items too.")
    try:
        summary = build_corpus(list(sources), out, fmt=fmt, items=items, labels=labels, keep_release=keep_release,
                               echo=lambda m: click.echo(m, err=True))
    except ConvertError as exc:
        raise click.ClickException(str(exc)) from exc
    except ReleaseError as exc:
        raise click.ClickException(f"the converted release did not import: {exc}") from exc
    click.echo(json.dumps(summary, indent=2))


@corpus.command("info")
@click.argument("path", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
def corpus_info(path: Path, as_json: bool) -> None:
    """Print a corpus file's schema version, provenance and counts."""
    from agenthop.server.corpus.info import describe, format_description
    from agenthop.server.corpus.schema import CorpusError

    try:
        info = describe(path)
    except CorpusError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(json.dumps(info, indent=2) if as_json else format_description(info))


@corpus.command("demo")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=Path("corpus.sqlite"), show_default=True)
@click.option("--split", type=click.Path(dir_okay=False, path_type=Path), default=Path("splits/demo.jsonl"), show_default=True)
def corpus_demo(out: Path, split: Path) -> None:
    """Rebuild the committed default corpus and its split file."""
    from agenthop.server.corpus.demo import build_demo

    click.echo(json.dumps(build_demo(out, split), indent=2))


# --- serve ------------------------------------------------------------------


def _cap_option(name: str, default: int, help_text: str):
    return click.option(f"--{name}", type=click.IntRange(min=0), default=default, show_default=True, help=help_text)


@main.command()
@click.option("--corpus", "corpus_path", type=click.Path(dir_okay=False, path_type=Path), default=Path("corpus.sqlite"),
              show_default=True, envvar="AGENTHOP_CORPUS", help="Corpus file (opened read-only).")
@click.option("--item", help="Serve one item (stdio). Without it: explore mode over the whole corpus.")
@click.option("--run", "run_label", help="Run label written into every log record.")
@click.option("--transport", type=click.Choice(["stdio", "http"]), default="stdio", show_default=True)
@click.option("--host", default="127.0.0.1", show_default=True, help="HTTP bind address (loopback by default).")
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True)
@click.option("--log", "log_path", type=click.Path(dir_okay=False, path_type=Path), default=Path("agenthop-log.sqlite"),
              show_default=True, envvar="AGENTHOP_LOG", help="Checkpoint log (SQLite); shared by many servers.")
@_cap_option("budget", 30, "Budget points per item session.")
@_cap_option("max-turns", 20, "Turn cap per item session (enforced by the client; shown to the agent).")
@_cap_option("max-tokens", 200_000, "Token cap per item session (enforced by the client; shown to the agent).")
@click.option("--explore-budget", type=click.IntRange(min=0), default=None,
              help="Budget of explore sessions (stdio without --item, or HTTP sessions with no item); default unlimited.")
@click.option("--auth-token", envvar="AGENTHOP_AUTH_TOKEN", default=None,
              help="HTTP only: require 'Authorization: Bearer TOKEN' on every request (or set AGENTHOP_AUTH_TOKEN).")
@click.option("--log-level", default="WARNING", show_default=True, help="Python log level for stderr.")
def serve(corpus_path: Path, item: str | None, run_label: str | None, transport: str, host: str, port: int, log_path: Path,
          budget: int, max_turns: int, max_tokens: int, explore_budget: int | None, auth_token: str | None, log_level: str) -> None:
    """Serve the seven metered tools over stdio (one session) or Streamable HTTP (many sessions)."""
    _setup_logging(log_level)
    from agenthop.server.checkpoint import CheckpointLog, LogError
    from agenthop.server.corpus.schema import CorpusError
    from agenthop.server.mcp_app import make_sandbox
    from agenthop.server.sessions import Caps

    caps = Caps(budget, max_turns, max_tokens)
    try:
        checkpoint = CheckpointLog(log_path)
        sandbox = make_sandbox(corpus_path, checkpoint, caps, Caps(explore_budget, None, None))
    except (CorpusError, LogError) as exc:
        raise click.ClickException(str(exc)) from exc
    if transport == "http":
        if item:
            raise click.UsageError("--item is for stdio; over HTTP, POST /sessions with {\"item\": ...} instead.")
        _serve_http(sandbox, host, port, auth_token)
        return
    if item is not None and sandbox.corpus.item(item) is None:
        raise click.ClickException(f"unknown item '{item}'; 'agenthop-server corpus info {corpus_path}' shows what the corpus holds.")
    session_caps = caps if item else sandbox.explore_caps
    sandbox.fixed_session = sandbox.sessions.create(sandbox.scope(item), run=run_label, caps=session_caps, transport="stdio")
    _serve_stdio(sandbox)


def _serve_stdio(sandbox) -> None:
    import anyio
    from mcp.server.stdio import stdio_server

    from agenthop.server.mcp_app import build_server

    server = build_server(sandbox)

    async def run() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(run)


def _serve_http(sandbox, host: str, port: int, auth_token: str | None) -> None:
    import uvicorn

    from agenthop.server.http import build_app

    app = build_app(sandbox, host=host, port=port, auth_token=auth_token)
    log.warning("AgentHop serving on http://%s:%d (MCP at /mcp, sessions at /sessions)", host, port)
    uvicorn.run(app, host=host, port=port, log_level="warning")


# --- log --------------------------------------------------------------------


@main.group("log")
def log_group() -> None:
    """Inspect checkpoint logs."""


@log_group.command("export")
@click.argument("path", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["jsonl"]), default="jsonl", show_default=True)
@click.option("--run", "run_label", default=None, help="Only records of this run label.")
def log_export(path: Path, fmt: str, run_label: str | None) -> None:
    """Print a checkpoint log's records, one JSON object per line."""
    from agenthop.server.checkpoint import LogError, read_records

    try:
        for record in read_records(path, run=run_label):
            click.echo(json.dumps(record, ensure_ascii=False, sort_keys=True))
    except LogError as exc:
        raise click.ClickException(str(exc)) from exc


@log_group.command("runs")
@click.argument("path", type=click.Path(dir_okay=False, path_type=Path))
def log_runs(path: Path) -> None:
    """List the run labels in a checkpoint log."""
    from agenthop.server.checkpoint import LogError, run_labels

    try:
        labels = run_labels(path)
    except LogError as exc:
        raise click.ClickException(str(exc)) from exc
    for label in labels:
        click.echo(label)
