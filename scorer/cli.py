"""``agenthop-scorer``: score runs against the corpus gold labels and write reports.

    agenthop-scorer RUN [RUN ...] --corpus corpus.sqlite --out report/ [--server-log PATH]
    agenthop-scorer compare RUN_A RUN_B --corpus corpus.sqlite [--seed 0] [--resamples 10000] [--server-log PATH]

RUN is a run directory or a checkpoint log ``PATH.sqlite`` (optionally ``::LABEL``).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import click
from rich.console import Console

from agenthop.server.checkpoint import LogError
from agenthop.server.corpus.schema import CorpusError
from agenthop.server.item_files import ItemsError, read_items

from . import report_html, report_md
from .compare import compare_pair, multi_run
from .document import comparison_document, run_document
from .gold import Gold
from .logs import Run, RunSpecError, expand_spec, load_run, load_runs, safe_name
from .plots import comparison_plots, run_plots
from .shards import group_specs as group_shards
from .summary import SCORER_VERSION, score_run
from .terminal import make_console, print_comparison, print_pair, print_run
from .view import VIEW_DIR, VIEW_FILE, view_link, write_view


class DefaultGroup(click.Group):
    """A group whose unknown first argument is routed to the default command ``score``."""

    default_command = "score"

    def parse_args(self, ctx, args):
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h", "--version"):
            args = [self.default_command, *args]
        return super().parse_args(ctx, args)


def _clean(obj):
    """JSON-safe: NaN/inf become null, tuples become lists."""
    if isinstance(obj, float):
        return None if math.isnan(obj) or math.isinf(obj) else obj
    if isinstance(obj, dict):
        return {str(k): _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    return obj


def write_json(path: Path, data: dict) -> None:
    path.write_text(json.dumps(_clean(data), indent=1, ensure_ascii=False, allow_nan=False) + "\n", encoding="utf-8")


def write_run_reports(summary: dict, out: Path, view_href=None) -> None:
    """``view_href``: item ID -> link into a trajectory viewer (adds the report's Items section)."""
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / "summary.json", summary)
    doc = run_document(summary, view_href=view_href)
    (out / "report.md").write_text(report_md.render(doc), encoding="utf-8")
    doc.plots = run_plots(summary)
    (out / "report.html").write_text(report_html.render(doc), encoding="utf-8")


def _open_gold(corpus: str) -> Gold:
    try:
        return Gold(corpus)
    except CorpusError as exc:
        raise click.ClickException(str(exc)) from exc


def dir_name_of(summary: dict) -> str:
    return safe_name(summary["run"]["name"])


def _load(specs, single: bool = False, server_log: str | None = None) -> list[Run]:
    runs: list[Run] = []
    try:
        for spec in specs:
            runs.extend([load_run(spec, server_log)] if single else load_runs(spec, server_log))
    except (RunSpecError, LogError) as exc:
        raise click.ClickException(str(exc)) from exc
    return runs


def _expected(items: str | None) -> list[str] | None:
    if not items:
        return None
    try:
        return [ref.id for ref in read_items(items)]
    except (OSError, ItemsError) as exc:
        raise click.ClickException(f"cannot read --items: {exc}") from exc


def slim(summary: dict) -> dict:
    """What comparisons across runs need from a summary (keeps memory flat with many runs)."""
    keep = ("item_id", "correct", "audit", "gold_papers")
    out = {k: summary[k] for k in ("run", "items", "headline", "metrics", "exposure", "audit")}
    out["metrics"] = {k: summary["metrics"][k] for k in ("overall", "by_type", "by_cell")}
    out["item_results"] = [{k: r[k] for k in keep} for r in summary["item_results"]]
    return out


def score_all(specs, corpus: str, out: Path, items: str | None = None, replicates: bool = False,
              console: Console | None = None, server_log: str | None = None, view: bool = False) -> tuple[list[dict], dict | None]:
    """Score every run (one at a time), write its reports, and the comparison when there are several runs.

    ``server_log``: the checkpoint log for run directories without ``server-log.sqlite``.
    ``view``: also write the trajectory viewer to ``out/view/`` and link each report's items to it.

    Returns slimmed summaries (see ``slim``) and the comparison (None for one run).
    """
    console = console or make_console()
    try:
        single_specs = [s for spec in specs for s in expand_spec(spec)]
        single_specs = group_shards(single_specs)  # the N shards of one run are scored as that run
    except (RunSpecError, LogError) as exc:
        raise click.ClickException(str(exc)) from exc
    gold = _open_gold(corpus)
    expected = _expected(items)
    summaries: list[dict] = []
    multiple = len(single_specs) > 1
    used: set[str] = set()
    try:
        for spec in single_specs:
            (run,) = _load([spec], single=True, server_log=server_log)
            summary = score_run(run, gold, expected)
            del run
            name = dir_name_of(summary)
            while name in used:
                name += "_"
            used.add(name)
            # The viewer names runs as report directories are named (view.run_keys), so the keys match.
            href = (lambda iid, key=name: ("../" if multiple else "") + f"{VIEW_DIR}/{view_link(key, iid)}") if view else None
            write_run_reports(summary, out / name if multiple else out, view_href=href)
            print_run(summary, console)
            summaries.append(slim(summary))
    finally:
        gold.close()
    comparison = None
    if multiple:
        comparison = multi_run(summaries, all_replicates=replicates)
        write_json(out / "comparison.json", comparison)
        doc = comparison_document(comparison)
        (out / "comparison.md").write_text(report_md.render(doc), encoding="utf-8")
        doc.plots = comparison_plots(comparison)
        (out / "comparison.html").write_text(report_html.render(doc), encoding="utf-8")
        print_comparison(comparison, console)
    if view:
        try:
            write_view(single_specs, corpus, out / VIEW_DIR, expected=expected, server_log=server_log)
        except (RunSpecError, LogError) as exc:
            raise click.ClickException(str(exc)) from exc
    console.print(f"reports written to {out}")
    return summaries, comparison


@click.group(cls=DefaultGroup)
@click.version_option(SCORER_VERSION, prog_name="agenthop-scorer")
def main() -> None:
    """Score AgentHop runs: accuracy in four axes, exposure/inspection audit, trajectories.

    Default command: score (agenthop-scorer RUN... --corpus C --out D).
    """


@main.command("score")
@click.argument("runs", nargs=-1, required=True)
@click.option("--corpus", default="corpus.sqlite", show_default=True, help="Corpus file with the gold labels.")
@click.option("--out", "out", default="report", show_default=True, type=click.Path(file_okay=False),
              help="Directory for summary.json, report.md, report.html (one subdirectory per run when several).")
@click.option("--items", type=click.Path(exists=True, dir_okay=False),
              help="Expected item set (qa/full.jsonl, split jsonl with 'id', or bare IDs); missing items are unobservable.")
@click.option("--replicates", is_flag=True, help="Treat all given runs as replicates of one configuration.")
@click.option("--server-log", "server_log", type=click.Path(exists=True, dir_okay=False),
              help="Checkpoint log of a server the run(s) used (agenthop-runner --server URL): a run directory without "
                   "server-log.sqlite reads its label's records from it.")
@click.option("--view", is_flag=True, help="Also write the trajectory viewer to OUT/view/ and link every item of the reports to it.")
def score_cmd(runs, corpus, out, items, replicates, server_log, view):
    """Score RUN(s): run directories or checkpoint logs PATH.sqlite[::LABEL]."""
    score_all(runs, corpus, Path(out), items=items, replicates=replicates, server_log=server_log, view=view)


@main.command("compare")
@click.argument("run_a")
@click.argument("run_b")
@click.option("--corpus", default="corpus.sqlite", show_default=True, help="Corpus file with the gold labels.")
@click.option("--seed", default=0, show_default=True, type=int, help="Bootstrap seed.")
@click.option("--resamples", default=10000, show_default=True, type=click.IntRange(min=1))
@click.option("--items", type=click.Path(exists=True, dir_okay=False), help="Expected item set (as for score).")
@click.option("--out", type=click.Path(file_okay=False), help="Also write comparison.json/.md/.html here.")
@click.option("--server-log", "server_log", type=click.Path(exists=True, dir_okay=False),
              help="Checkpoint log of a server the run(s) used (agenthop-runner --server URL): a run directory without "
                   "server-log.sqlite reads its label's records from it.")
def compare_cmd(run_a, run_b, corpus, seed, resamples, items, out, server_log):
    """Paired comparison of two runs on the same items (McNemar, bootstraps, audit transitions)."""
    gold = _open_gold(corpus)
    expected = _expected(items)
    try:
        a, b = _load([run_a, run_b], single=True, server_log=server_log)
        sa, sb = score_run(a, gold, expected), score_run(b, gold, expected)
    finally:
        gold.close()
    pair = compare_pair(sa, sb, seed=seed, resamples=resamples)
    print_pair(pair)
    if out:
        target = Path(out)
        target.mkdir(parents=True, exist_ok=True)
        write_json(target / "comparison.json", pair)
        comp = multi_run([sa, sb])
        doc = comparison_document(comp, pair=pair)
        (target / "comparison.md").write_text(report_md.render(doc), encoding="utf-8")
        doc.plots = comparison_plots(comp)
        (target / "comparison.html").write_text(report_html.render(doc), encoding="utf-8")


@main.command("view")
@click.argument("runs", nargs=-1, required=True)
@click.option("--corpus", default="corpus.sqlite", show_default=True, help="Corpus file with the gold labels.")
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Directory for index.html and its sessions/.")
@click.option("--items", type=click.Path(exists=True, dir_okay=False), help="Expected item set (as for score).")
@click.option("--server-log", "server_log", type=click.Path(exists=True, dir_okay=False),
              help="Checkpoint log of a server the run(s) used, for run directories without server-log.sqlite.")
def view_cmd(runs, corpus, out, items, server_log):
    """Write a trajectory viewer for RUN(s): OUT/index.html, which opens offline in a browser."""
    try:
        write_view(runs, corpus, out, expected=_expected(items), server_log=server_log)
    except (RunSpecError, LogError) as exc:
        raise click.ClickException(str(exc)) from exc
    except CorpusError as exc:
        raise click.ClickException(f"--corpus: {exc}") from exc
    click.echo(f"viewer written: {Path(out) / VIEW_FILE}")


if __name__ == "__main__":  # pragma: no cover
    main()
