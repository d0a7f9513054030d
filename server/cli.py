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
    from agenthop.server.synth import write_release

    stats = write_release(out, papers=papers, items=items, seed=seed)
    click.echo(json.dumps(stats, indent=2), err=False)


@corpus.command("import")
@click.argument("release_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True, help="Corpus file to write.")
@click.option("--skip-bad-labels", is_flag=True, help="Drop recall labels that name no section (and report them) instead of failing.")
def corpus_import(release_dir: Path, out: Path, skip_bad_labels: bool) -> None:
    """Import a release directory (qa/, graphs/, paper_pool/, audit/) into a corpus file."""
    from agenthop.server.importer import ReleaseError, import_release

    try:
        summary = import_release(release_dir, out, skip_bad_labels=skip_bad_labels, echo=lambda m: click.echo(m, err=True))
    except ReleaseError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(json.dumps(summary, indent=2))


@corpus.command("info")
@click.argument("path", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
def corpus_info(path: Path, as_json: bool) -> None:
    """Print a corpus file's schema version, provenance and counts."""
    from agenthop.server.corpus_info import describe, format_description
    from agenthop.server.schema import CorpusError

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
    from agenthop.server.demo import build_demo

    click.echo(json.dumps(build_demo(out, split), indent=2))
