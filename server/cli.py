"""agenthop-server: serve the sandbox, build corpora, export logs."""

from __future__ import annotations

import json
import logging
import os
import sys
from pathlib import Path
from typing import Literal

import click


def _setup_logging(level: str) -> None:
    # Logs always go to stderr: stdout is the MCP wire on stdio. The level is set on the handler too, because
    # some libraries set their own loggers to DEBUG (bm25s does) and would bypass the root logger's level.
    handler = logging.StreamHandler(sys.stderr)
    handler.setLevel(level.upper())
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=level.upper(), handlers=[handler])


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
@click.option(
    "--out", type=click.Path(file_okay=False, path_type=Path), required=True, help="Release directory to write."
)
def corpus_synth(papers: int, items: int, seed: int, out: Path) -> None:
    """Generate a synthetic benchmark in the release layout (SPEC 2.1)."""
    from agenthop.corpus.synth import write_release

    stats = write_release(out, papers=papers, items=items, seed=seed)
    click.echo(json.dumps(stats, indent=2), err=False)


@corpus.command("import")
@click.argument("source", type=click.Path(path_type=Path))
@click.option(
    "--out", type=click.Path(dir_okay=False, path_type=Path), help="Corpus file to write (required unless --check)."
)
@click.option(
    "--labels",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help="Recall labels (an audit/recall_labels.jsonl file) for packaged samples.",
)
@click.option(
    "--skip-bad-labels",
    is_flag=True,
    help="Drop recall labels that name no section (and report them) instead of failing.",
)
@click.option(
    "--check", is_flag=True, help="Validate the whole release and report every error and warning; write nothing."
)
def corpus_import(source: Path, out: Path | None, labels: Path | None, skip_bad_labels: bool, check: bool) -> None:
    """Import a release into a corpus file, or check it (--check).

    SOURCE is a release directory (paper_pool/, qa/, graphs/, audit/, optionally corpus/), a packaged JSON file
    (one sample or a list of samples, as the reference harness's --data takes), or a directory of per-sample JSON
    files. Packaged samples take their recall labels from --labels.
    """
    from agenthop.corpus.importer import BadLabelError, ReleaseError, check_release, import_release
    from agenthop.corpus.problems import format_report

    def progress(message: str) -> None:
        click.echo(message, err=True)  # stdout carries only the result

    _refuse_empty_release(source)
    bad_label_hint = "--skip-bad-labels drops recall labels that name no section and counts them"
    if check:
        try:
            report = check_release(source, labels=labels, skip_bad_labels=skip_bad_labels, echo=progress)
        except ReleaseError as exc:
            raise click.ClickException(str(exc)) from exc
        click.echo(format_report(report))
        bad_labels = sum(1 for e in report["errors"] if e["bad_label"])
        if bad_labels:
            click.echo(f"{bad_labels} of the errors are recall labels: {bad_label_hint}.")
        if not report["ok"]:
            raise SystemExit(1)
        return
    if out is None:
        raise click.UsageError("--out is required: the corpus file to write (or --check to validate without writing).")
    try:
        summary = import_release(source, out, labels=labels, skip_bad_labels=skip_bad_labels, echo=progress)
    except BadLabelError as exc:
        raise click.ClickException(f"{exc} ({bad_label_hint})") from exc
    except ReleaseError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(json.dumps(summary, indent=2, ensure_ascii=False))


def _refuse_empty_release(source: Path) -> None:
    """A release directory whose qa/full.jsonl holds no item benchmarks nothing: say so instead of writing an empty corpus."""
    qa = source / "qa" / "full.jsonl"
    if not qa.is_file():
        return
    with qa.open(encoding="utf-8", errors="replace") as lines:
        if any(line.strip() for line in lines):
            return
    raise click.ClickException(
        f"{source} holds no items ({qa} is empty): a corpus made from it would have nothing to run or score. If "
        "agenthop-construct wrote it, its run said which stage removed the candidates and which option relaxes that rule "
        "(see its attrition.md). For a corpus of papers without items (explore mode), use "
        "'agenthop-server corpus build PAPERS --out FILE'."
    )


SKIP_PDFS_HINT = "Remove or replace them, or build with --skip-bad to leave them out."
OPEN_LICENCES_HINT = (
    "--open-licences-only refuses them; --licence LICENCE gives the licence of every paper whose file "
    "states none (e.g. --licence 'CC BY 4.0' for a folder you know is CC BY)."
)


@corpus.command("build")
@click.argument("sources", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option(
    "--out", type=click.Path(dir_okay=False, path_type=Path), help="Corpus file to write (required unless --check)."
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["tei", "jats", "s2orc"]),
    default=None,
    help="Format of every input; default: told from each file's content.",
)
@click.option(
    "--items",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    default=None,
    help="Your questions in the release's qa format (seed and gold papers named by the built corpus's paper IDs).",
)
@click.option(
    "--labels",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    default=None,
    help="Recall labels for --items, in the release's audit/recall_labels.jsonl format.",
)
@click.option(
    "--keep-release",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    metavar="DIR",
    help="Keep the release directory the converters wrote in DIR (new or empty), also when the import refuses it: "
    "to inspect it, re-import it or 'corpus import DIR --check' it.",
)
@click.option(
    "--check",
    is_flag=True,
    help="Convert and check everything, report every error and warning at once; write no corpus.",
)
@click.option(
    "--grobid",
    "grobid_url",
    metavar="URL",
    default=None,
    help="A GROBID service (e.g. http://localhost:8070) to turn PDFs into TEI; without it PDFs go through the "
    "built-in fallback parser (lower fidelity, no service needed).",
)
@click.option(
    "--grobid-concurrency",
    type=click.IntRange(1, 64),
    default=4,
    show_default=True,
    metavar="N",
    help="PDFs sent to GROBID at once (match the service's thread count).",
)
@click.option(
    "--grobid-timeout",
    type=click.FloatRange(min=1),
    default=180.0,
    show_default=True,
    metavar="SECONDS",
    help="Time GROBID gets for one PDF before the request is retried.",
)
@click.option(
    "--tei-cache",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    metavar="DIR",
    help="Where the TEI of the PDFs is kept, so a re-run converts only new PDFs (default: OUT's name + .pdf-tei).",
)
@click.option(
    "--skip-bad",
    is_flag=True,
    help="Leave out input files that cannot be converted (PDFs GROBID or the fallback cannot read too), each "
    "reported with its reason and counted, instead of stopping at the first.",
)
@click.option(
    "--licence",
    metavar="LICENCE",
    default=None,
    help="The licence of every paper whose file states none (a name such as 'CC BY 4.0', or its URL): "
    "for a folder of papers you know the terms of.",
)
@click.option(
    "--open-licences-only",
    is_flag=True,
    help="Refuse to build if any paper with text has no open licence (CC BY, CC BY-SA, CC0, public domain) or "
    "states none; without it such papers are counted and named in the summary.",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the whole summary as JSON (the default when stdout is not a terminal); on a terminal the "
    "default is a short summary, with the JSON written to OUT.build.json.",
)
def corpus_build(
    sources: tuple[Path, ...],
    out: Path | None,
    fmt: str | None,
    items: Path | None,
    labels: Path | None,
    keep_release: Path | None,
    check: bool,
    grobid_url: str | None,
    grobid_concurrency: int,
    grobid_timeout: float,
    tei_cache: Path | None,
    skip_bad: bool,
    licence: str | None,
    open_licences_only: bool,
    as_json: bool,
) -> None:
    """Build a corpus from papers as they come: PDFs, GROBID TEI, JATS or S2ORC JSON files or folders.

    Without --items the corpus serves explore mode only; with them, each item's graph is
    built from the citation graph (the seed, its first 30 references, and theirs).

    On a terminal it prints a short summary and writes the full one (JSON) beside OUT; when stdout is a pipe
    or a file it prints the full JSON summary there instead, for scripts (progress and warnings go to stderr).
    """
    from agenthop.corpus.convert.build import build_corpus, check_build
    from agenthop.corpus.convert.grobid import GrobidOptions
    from agenthop.corpus.convert.model import BadFileError, ConvertError, NotOpenError
    from agenthop.corpus.convert.pdfs import BadPdfsError
    from agenthop.corpus.importer import ReleaseError
    from agenthop.corpus.problems import format_report

    def progress(message: str) -> None:
        click.echo(message, err=True)  # stdout carries only the result

    if labels is not None and items is None:
        raise click.UsageError("--labels describes items: give --items too.")
    grobid = GrobidOptions(grobid_url, concurrency=grobid_concurrency, timeout=grobid_timeout) if grobid_url else None
    if check:
        if keep_release is not None:
            raise click.UsageError(
                "--check writes nothing: leave out --keep-release (or build without --check to keep the release)."
            )
        try:
            report = check_build(
                list(sources),
                fmt=fmt,
                items=items,
                labels=labels,
                skip_bad=skip_bad,
                grobid=grobid,
                tei_cache=tei_cache,
                licence=licence,
                open_only=open_licences_only,
                echo=progress,
            )
        except BadPdfsError as exc:
            raise click.ClickException(f"{exc}\n{SKIP_PDFS_HINT}") from exc
        except (ConvertError, ReleaseError) as exc:
            raise click.ClickException(str(exc)) from exc
        click.echo(format_report(report))
        if open_licences_only and report["converted"]["not_open"]:
            progress(OPEN_LICENCES_HINT)
        if not report["ok"]:
            raise SystemExit(1)
        return
    if out is None:
        raise click.UsageError("--out is required: the corpus file to write (or --check to check without writing).")
    try:
        summary = build_corpus(
            list(sources),
            out,
            fmt=fmt,
            items=items,
            labels=labels,
            keep_release=keep_release,
            skip_bad=skip_bad,
            grobid=grobid,
            tei_cache=tei_cache,
            licence=licence,
            open_only=open_licences_only,
            echo=progress,
        )
    except BadPdfsError as exc:
        raise click.ClickException(f"{exc}\n{SKIP_PDFS_HINT}") from exc
    except BadFileError as exc:
        raise click.ClickException(
            f"{exc} (--skip-bad leaves out files that cannot be converted and reports each; --check lists them all)"
        ) from exc
    except NotOpenError as exc:
        raise click.ClickException(f"{exc}\n{OPEN_LICENCES_HINT}") from exc
    except ConvertError as exc:
        raise click.ClickException(str(exc)) from exc
    except ReleaseError as exc:
        message = str(exc)
        if not any(path is not None and message.startswith(str(path)) for path in (items, labels)):
            message += " (in the release converted from your papers; --keep-release DIR keeps it to look at)"
        raise click.ClickException(message) from exc
    text = json.dumps(summary, indent=2, ensure_ascii=False)
    if as_json or not _for_a_person():
        if not as_json:  # said on stderr, which a person may still be watching while stdout goes to a file
            progress(
                f"wrote {out}; stdout is not a terminal, so the full summary goes there as JSON "
                "(on a terminal: a short summary, the JSON in a file beside the corpus)"
            )
        click.echo(text)  # scripts and pipes get the JSON, as before
        return
    from agenthop.corpus.convert.summary import build_summary_lines

    saved = out.with_name(out.name + ".build.json")
    saved.write_text(text + "\n", encoding="utf-8")
    click.echo("\n".join(build_summary_lines(summary, saved)))


def _for_a_person() -> bool:
    """Whether stdout is a terminal (a person reads it) rather than a pipe or a file (a script does)."""
    return sys.stdout.isatty()


@corpus.command("index")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--force", is_flag=True, help="Rebuild even when the index is there and fits the corpus.")
def corpus_index(path: Path, force: bool) -> None:
    """Build explore mode's search index beside a corpus file (PATH.search/), when it is missing or stale.

    `corpus import` and `corpus build` build it; this is for a corpus imported before the index existed, or whose
    index was deleted. Writes under a temporary name and renames it into place: a server never sees half an index.
    """
    from agenthop.server.corpus_schema import CorpusError, open_corpus, read_meta
    from agenthop.server.explore import index as search_index

    try:
        conn = open_corpus(path)
        corpus_id = read_meta(conn).get("corpus_id")
        conn.close()
    except CorpusError as exc:
        raise click.ClickException(str(exc)) from exc
    reason = search_index.why_not_served(search_index.index_dir(path), corpus_id)
    if reason is None and not force:
        click.echo(f"{search_index.index_dir(path)} is up to date (--force rebuilds it)")
        return
    try:
        manifest = search_index.build_for_corpus(path, echo=lambda m: click.echo(m, err=True))
    except ValueError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(f"wrote {search_index.index_dir(path)}: {manifest['papers']} papers, {manifest['sections']} sections")


@corpus.command("info")
@click.argument("path", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
def corpus_info(path: Path, as_json: bool) -> None:
    """Print a corpus file's schema version, provenance and counts."""
    from agenthop.corpus.info import describe, format_description
    from agenthop.server.corpus_schema import CorpusError

    try:
        info = describe(path)
    except CorpusError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(json.dumps(info, indent=2) if as_json else format_description(info))


@corpus.command("demo")
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=Path("corpus.sqlite"),
    show_default=True,
    help="Corpus file to write.",
)
@click.option(
    "--split",
    type=click.Path(dir_okay=False, path_type=Path),
    default=Path("splits/demo.jsonl"),
    show_default=True,
    help="Split file to write: every item of the corpus with its question type, depth and reasoning type (JSONL).",
)
def corpus_demo(out: Path, split: Path) -> None:
    """Rebuild the committed default corpus and its split file."""
    from agenthop.corpus.demo import build_demo

    click.echo(json.dumps(build_demo(out, split), indent=2))


# --- serve ------------------------------------------------------------------


def _cap_option(name: str, default: int, help_text: str):
    return click.option(f"--{name}", type=click.IntRange(min=0), default=default, show_default=True, help=help_text)


@main.command()
@click.option(
    "--corpus",
    "corpus_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=Path("corpus.sqlite"),
    show_default=True,
    envvar="AGENTHOP_CORPUS",
    help="Corpus file (opened read-only).",
)
@click.option("--item", help="Serve one item (stdio). Without it: explore mode over the whole corpus.")
@click.option("--run", "run_label", help="Run label written into every log record.")
@click.option(
    "--transport",
    type=click.Choice(["stdio", "http"]),
    default="stdio",
    show_default=True,
    help="stdio: this process is one session for the host that started it; http: many sessions over Streamable HTTP.",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="HTTP bind address (loopback by default).")
@click.option(
    "--port", type=click.IntRange(0, 65535), default=8765, show_default=True, help="HTTP port (0: a free one)."
)
@click.option(
    "--log",
    "log_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    envvar="AGENTHOP_LOG",
    help="Checkpoint log (SQLite); shared by many servers. Default: agenthop-log.sqlite in the per-user data "
    "directory ('agenthop-server log path' prints it).",
)
@_cap_option("budget", 30, "Budget points per item session.")
@_cap_option("max-turns", 20, "Turn cap per item session (enforced by the client; shown to the agent).")
@_cap_option("max-tokens", 200_000, "Token cap per item session (enforced by the client; shown to the agent).")
@click.option(
    "--explore-budget",
    type=click.IntRange(min=0),
    default=None,
    help="Budget of explore sessions (stdio without --item, or HTTP sessions with no item); default unlimited.",
)
@click.option(
    "--auth-token",
    envvar="AGENTHOP_AUTH_TOKEN",
    default=None,
    help="HTTP only: require 'Authorization: Bearer TOKEN' on every request (or set AGENTHOP_AUTH_TOKEN).",
)
@click.option(
    "--allow-remote-without-auth",
    is_flag=True,
    help="HTTP only: serve a non-loopback --host without --auth-token (anyone who can reach the port can use it).",
)
@click.option("--log-level", default="WARNING", show_default=True, help="Python log level for stderr.")
def serve(
    corpus_path: Path,
    item: str | None,
    run_label: str | None,
    transport: Literal["stdio", "http"],  # click.Choice above
    host: str,
    port: int,
    log_path: Path,
    budget: int,
    max_turns: int,
    max_tokens: int,
    explore_budget: int | None,
    auth_token: str | None,
    allow_remote_without_auth: bool,
    log_level: str,
) -> None:
    """Serve the seven metered tools over stdio (one session) or Streamable HTTP (many sessions)."""
    from agenthop.server.caps import Caps
    from agenthop.server.corpus_schema import CorpusError
    from agenthop.server.log.checkpoint import LogError, LogPathError, LogUnavailable
    from agenthop.server.transport.serving import ServeError
    from agenthop.server.transport.serving import serve as serve_sandbox

    _setup_logging(log_level)
    if transport == "http":
        if auth_token is None and os.environ.get("AGENTHOP_AUTH_TOKEN") == "":
            raise click.UsageError(
                "AGENTHOP_AUTH_TOKEN is set but empty; set it to a token, or unset it to serve without one."
            )
        _check_exposure(host, auth_token, allow_remote_without_auth)
        if item:
            raise click.UsageError('--item is for stdio; over HTTP, POST /sessions with {"item": ...} instead.')
    try:
        serve_sandbox(
            corpus_path,
            transport=transport,
            item=item,
            run=run_label,
            log_path=log_path,
            caps=Caps(budget, max_turns, max_tokens),
            explore_budget=explore_budget,
            host=host,
            port=port,
            auth_token=auth_token,
            allow_remote_without_auth=allow_remote_without_auth,
            echo=lambda message: click.echo(f"agenthop-server: {message}", err=True),
        )
    except LogPathError as exc:
        raise click.ClickException(f"{exc} with --log.") from exc
    except LogUnavailable as exc:
        raise click.ClickException(str(exc)) from exc
    except LogError as exc:
        raise click.ClickException(f"{exc} Pass it with --log PATH.") from exc
    except (CorpusError, ServeError) as exc:
        raise click.ClickException(str(exc)) from exc


def _check_exposure(host: str, auth_token: str | None, allowed: bool) -> None:
    """Refuse an unauthenticated non-loopback bind unless allowed; then warn on stderr whatever the log level."""
    from agenthop.server.transport.http import ExposureError, check_exposure

    try:
        warning = check_exposure(host, auth_token, allowed)
    except ExposureError as exc:
        raise click.UsageError(
            f"{exc} (--auth-token TOKEN or AGENTHOP_AUTH_TOKEN; or --allow-remote-without-auth)"
        ) from exc
    if warning:
        click.echo(
            f"\n{'!' * 78}\n!! {warning}\n!! Use --auth-token unless this network is yours alone.\n{'!' * 78}\n",
            err=True,
        )


def _item_ids(ctx, param, path: Path | None) -> tuple[str, ...] | None:
    """--items: the IDs its file lists, in order."""
    if path is None:
        return None
    from agenthop.server.item_files import ItemsError, read_items

    try:
        return tuple(ref.id for ref in read_items(path))
    except (OSError, ItemsError) as exc:
        raise click.ClickException(f"cannot read --items: {exc}") from exc


@main.command()
@click.option(
    "--corpus",
    "corpus_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=Path("corpus.sqlite"),
    show_default=True,
    envvar="AGENTHOP_CORPUS",
    help="Corpus file (opened read-only).",
)
@click.option(
    "--items",
    "items",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    callback=_item_ids,
    help="Split file of the items a person may play, in order (default: every item of the corpus).",
)
@click.option("--participant", default=None, help="Fix the participant label (default: the page asks for one).")
@click.option(
    "--reveal", is_flag=True, help="Show the correct option and gold papers after each attempt (never in a study)."
)
@click.option("--run", "run_label", default=None, help="Run label of every play session [default: human-PARTICIPANT].")
@click.option(
    "--study",
    "study_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Study file (TOML): enrolment with a code and consent, each participant's items in a seeded order, an "
    "optional time limit per item (docs/web.md, Study mode). Replaces --items; no --participant or --reveal.",
)
@click.option(
    "--log",
    "log_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    envvar="AGENTHOP_LOG",
    help="Checkpoint log (SQLite) [default: the per-user one, see 'agenthop-server log path'].",
)
@_cap_option("budget", 30, "Budget points per attempt.")
@_cap_option("max-turns", 20, "Actions per attempt (one action is one turn).")
@click.option("--port", type=click.IntRange(0, 65535), default=0, help="Loopback port [default: a free one].")
@click.option("--no-browser", is_flag=True, help="Only print the URL; do not open a browser.")
@click.option("--log-level", default="WARNING", show_default=True, help="Python log level for stderr.")
def play(
    corpus_path: Path,
    items: tuple[str, ...] | None,
    participant: str | None,
    reveal: bool,
    run_label: str | None,
    study_path: Path | None,
    log_path: Path,
    budget: int,
    max_turns: int,
    port: int,
    no_browser: bool,
    log_level: str,
) -> None:
    """Let a person play items in a browser, under the agents' budget and rules, on a free loopback port."""
    _setup_logging(log_level)
    from agenthop.server.caps import Caps
    from agenthop.server.corpus_schema import CorpusError
    from agenthop.server.log.checkpoint import LogError, default_log_path
    from agenthop.server.play.routes import PlayOptions, PlayOptionsError
    from agenthop.server.play.serve import open_browser, serve_play

    study = None
    if study_path is not None:
        from agenthop.server.play.routes import check_participant
        from agenthop.server.play.study import StudyError, load_study

        if items is not None or participant is not None or reveal:
            raise click.UsageError(
                "--study gives the items and the participants: drop --items, --participant, --reveal"
            )
        try:
            study = load_study(study_path, check_participant=check_participant)
        except StudyError as exc:
            raise click.ClickException(f"--study: {exc}") from exc
    options = PlayOptions(items=items, participant=participant, reveal=reveal, run=run_label, study=study)
    log_path = log_path or default_log_path()

    def ready(url: str) -> None:
        click.echo(url)
        click.echo(
            f"Play with reveal {'ON' if reveal else 'off'}; log {log_path.resolve()}. Ctrl+C stops the server.",
            err=True,
        )
        if study is not None:
            click.echo(
                f"Study {study.id}: {study.per_participant} item(s) per participant, participants enrol with the "
                f"study code{' under the names the study file lists' if study.participants else ''}.",
                err=True,
            )
        if no_browser:
            return
        if not open_browser(url):
            click.echo("No browser to open here: open the URL above yourself.", err=True)

    try:
        serve_play(corpus_path, log_path, options, Caps(budget, max_turns, None), port=port, on_ready=ready)
    except (CorpusError, LogError) as exc:
        raise click.ClickException(str(exc)) from exc
    except PlayOptionsError as exc:
        raise click.ClickException(f"--{exc.field}: {exc}") from exc
    except KeyboardInterrupt:  # uvicorn stops on Ctrl+C and raises it again: a stop asked for, not "Aborted!"
        click.echo(f"Stopped. Every action is in the log {log_path.resolve()}.", err=True)


# --- log --------------------------------------------------------------------


@main.group("log")
def log_group() -> None:
    """Inspect checkpoint logs."""


_LOG_ARGUMENT = click.argument("path", type=click.Path(dir_okay=False, path_type=Path), required=False)


def _log_or_default(path: Path | None) -> Path:
    if path is not None:
        return path
    from agenthop.server.log.checkpoint import default_log_path

    path = default_log_path()
    if not path.exists():
        raise click.ClickException(
            f"no PATH given and there is no log at the default location {path}; "
            "pass the log a server wrote (serve --log PATH)."
        )
    return path


@log_group.command("export")
@_LOG_ARGUMENT
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["jsonl"]),
    default="jsonl",
    show_default=True,
    help="Output format: one JSON object per line.",
)
@click.option("--run", "run_label", default=None, help="Only records of this run label.")
def log_export(path: Path | None, fmt: str, run_label: str | None) -> None:
    """Print a checkpoint log's records, one strict JSON object per line (PATH defaults to the per-user log)."""
    from agenthop.server.log.checkpoint import LogError, read_records
    from agenthop.server.log.jsontext import dumps

    log = _log_or_default(path)
    n = 0
    try:
        for record in read_records(log, run=run_label):
            click.echo(dumps(record, sort_keys=True))
            n += 1
    except LogError as exc:
        raise click.ClickException(str(exc)) from exc
    if run_label is not None and n == 0:  # an empty answer with exit 0 would read as "the run did nothing"
        raise click.ClickException(f"no records of run {run_label!r} in {log}. {_what_runs(log)}")


@log_group.command("runs")
@_LOG_ARGUMENT
def log_runs(path: Path | None) -> None:
    """List the run labels in a checkpoint log (PATH defaults to the per-user log)."""
    from agenthop.server.log.checkpoint import LogError, run_labels, unlabelled_sessions

    log = _log_or_default(path)
    try:
        labels = run_labels(log)
        unlabelled = unlabelled_sessions(log)
    except LogError as exc:
        raise click.ClickException(str(exc)) from exc
    for label in labels:
        click.echo(label)  # stdout: the labels only, for scripts
    if unlabelled or not labels:
        click.echo(_what_runs(log, labels, unlabelled), err=True)


def _what_runs(log: Path, labels: list[str] | None = None, unlabelled: int | None = None) -> str:
    """What the log holds instead, and how a session gets a run label."""
    from agenthop.server.log.checkpoint import run_labels, unlabelled_sessions

    labels = run_labels(log) if labels is None else labels
    unlabelled = unlabelled_sessions(log) if unlabelled is None else unlabelled
    parts = [f"Its run labels: {', '.join(labels)}." if labels else f"{log} has no run label."]
    if unlabelled:
        parts.append(
            f"{unlabelled} session(s) have none: the server was started without --run (as a Desktop config without "
            'it does). \'log export\' without --run prints every record; add "--run", "NAME" to the server\'s args '
            "so the next sessions can be scored as LOG::NAME."
        )
    return " ".join(parts)


@log_group.command("path")
def log_path_command() -> None:
    """Print where 'serve' writes its checkpoint log when no --log (or AGENTHOP_LOG) is given."""
    from agenthop.server.log.checkpoint import default_log_path

    click.echo(str(default_log_path()))


@log_group.command("schema")
def log_schema_command() -> None:
    """Print the JSON Schema of the log records (the committed docs/log-format.schema.json)."""
    from agenthop.server.log.checkpoint import LOG_FORMAT_VERSION
    from agenthop.server.log.records import log_schema

    click.echo(json.dumps(log_schema(LOG_FORMAT_VERSION), indent=2))
