"""``agenthop-scorer``: score runs against the corpus gold labels and write reports.

    agenthop-scorer RUN [RUN ...] --corpus corpus.sqlite --out report/ [--server-log PATH] [--jobs N]
    agenthop-scorer compare RUN_A RUN_B --corpus corpus.sqlite [--seed 0] [--resamples 10000] [--server-log PATH]
    agenthop-scorer panel RUN... --corpus corpus.sqlite --out DIR [--tiers FILE] [--external FILE]

RUN is a run directory or a checkpoint log ``PATH.sqlite`` (optionally ``::LABEL``).
Each command parses its arguments, makes one library call (agenthop.scorer.scoring)
and shows the result; library errors are shown with the flags that set them. The library
is imported when a command runs, so ``--help`` and usage errors do not load numpy.
"""

from __future__ import annotations

import os
from pathlib import Path

import click

from agenthop.scorer.errors import ScorerError
from agenthop.scorer.results import SCORER_VERSION

#: How each library parameter is spelled on the command line.
FLAGS = {
    "server_log": "--server-log",
    "items": "--items",
    "corpus": "--corpus",
    "jobs": "--jobs",
    "runs": "RUN",
    "out": "--out",
    "tiers": "--tiers",
    "external": "--external",
    "people": "PEOPLE_LOG",
    "models": "--model",
    "study_id": "--study-id",
}
SERVER_LOG_HELP = (
    "Checkpoint log of a server the run(s) used (agenthop-runner --server URL): a run directory without "
    "server-log.sqlite reads its label's records from it."
)


def default_jobs() -> int:
    """The CPUs this process may use, at most 8 (each worker holds a run and the gold: about 200 MB)."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(cpus, 8))


def _flag(param: str) -> str:
    return FLAGS.get(param, param)


def fail(exc: ScorerError) -> click.ClickException:
    return click.ClickException(exc.render(_flag))


class DefaultGroup(click.Group):
    """A group whose unknown first argument is routed to the default command ``score``."""

    default_command = "score"

    def parse_args(self, ctx, args):
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h", "--version"):
            args = [self.default_command, *args]
        return super().parse_args(ctx, args)


@click.group(cls=DefaultGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(SCORER_VERSION, prog_name="agenthop-scorer")
def main() -> None:
    """Score AgentHop runs: accuracy in four axes, exposure/inspection audit, trajectories.

    Default command: score (agenthop-scorer RUN... --corpus C --out D).
    """


@main.command("score")
@click.argument("runs", nargs=-1, required=True)
@click.option("--corpus", default="corpus.sqlite", show_default=True, help="Corpus file with the gold labels.")
@click.option(
    "--out",
    "out",
    default="report",
    show_default=True,
    type=click.Path(file_okay=False),
    help="Directory for summary.json, report.md, report.html (one subdirectory per run when several).",
)
@click.option(
    "--items",
    type=click.Path(exists=True, dir_okay=False),
    help="Expected item set (qa/full.jsonl, split jsonl with 'id', or bare IDs); missing items are unobservable.",
)
@click.option("--replicates", is_flag=True, help="Treat all given runs as replicates of one configuration.")
@click.option("--server-log", "server_log", type=click.Path(exists=True, dir_okay=False), help=SERVER_LOG_HELP)
@click.option(
    "--jobs",
    type=click.IntRange(min=1),
    default=None,
    help="Processes scoring runs side by side [default: the CPUs available, at most 8].",
)
@click.option(
    "--view",
    is_flag=True,
    help="Also write the trajectory viewer to OUT/view/ and link every item of the reports to it.",
)
def score_cmd(runs, corpus, out, items, replicates, server_log, jobs, view):
    """Score RUN(s): run directories or checkpoint logs PATH.sqlite[::LABEL]."""
    from agenthop.scorer.scoring import score
    from agenthop.scorer.terminal import make_console, print_comparison, print_run

    console = make_console()
    try:
        result = score(
            runs,
            corpus,
            items=items,
            server_log=server_log,
            replicates=replicates,
            out=out,
            jobs=jobs or default_jobs(),
            view=view,
            on_run=lambda r: print_run(r.summary, console),
        )
    except ScorerError as exc:
        raise fail(exc) from exc
    if result.comparison is not None:
        print_comparison(result.comparison, console)
    console.print(f"reports written to {out}")
    for line in report_pointers(Path(out)):
        console.print(line)


def report_pointers(out: Path) -> list[str]:
    """Where to look next: each report.html and trajectory viewer the command wrote (a run's, or one per run)."""
    lines = []
    for html in [out / "report.html", *sorted(out.glob("*/report.html"))]:
        if html.exists():
            lines.append(f"  report: {html} (open it in a browser; report.md and summary.json are beside it)")
        if (html.parent / "view" / "index.html").exists():
            lines.append(f"  trajectory viewer: {html.parent / 'view' / 'index.html'} (every session, call by call)")
    return lines


@main.command("compare")
@click.argument("run_a")
@click.argument("run_b")
@click.option("--corpus", default="corpus.sqlite", show_default=True, help="Corpus file with the gold labels.")
@click.option("--seed", default=0, show_default=True, type=int, help="Bootstrap seed.")
@click.option("--resamples", default=10000, show_default=True, type=click.IntRange(min=1), help="Bootstrap resamples.")
@click.option("--items", type=click.Path(exists=True, dir_okay=False), help="Expected item set (as for score).")
@click.option("--out", type=click.Path(file_okay=False), help="Also write comparison.json/.md/.html here.")
@click.option("--server-log", "server_log", type=click.Path(exists=True, dir_okay=False), help=SERVER_LOG_HELP)
def compare_cmd(run_a, run_b, corpus, seed, resamples, items, out, server_log):
    """Paired comparison of two runs on the same items (McNemar, bootstraps, audit transitions)."""
    from agenthop.scorer.scoring import compare
    from agenthop.scorer.terminal import print_pair

    try:
        result = compare(
            run_a, run_b, corpus, items=items, server_log=server_log, seed=seed, resamples=resamples, out=out
        )
    except ScorerError as exc:
        raise fail(exc) from exc
    print_pair(result.pair)


@main.command("panel")
@click.argument("runs", nargs=-1, required=True)
@click.option("--corpus", default="corpus.sqlite", show_default=True, help="Corpus file with the gold labels.")
@click.option(
    "--out", required=True, type=click.Path(file_okay=False), help="Directory for panel.json, panel.md, panel.html."
)
@click.option(
    "--tiers",
    type=click.Path(exists=True, dir_okay=False),
    help="TOML or CSV file giving runs a tier, a family, a model and a role (docs/scoring.md).",
)
@click.option(
    "--external",
    type=click.Path(exists=True, dir_okay=False),
    help="CSV of external benchmark scores per model (a model column, then one column per benchmark; a score may "
    "end in * for a proxy or † for a context-managed variant), for Table 16 (docs/scoring.md).",
)
@click.option("--items", type=click.Path(exists=True, dir_okay=False), help="Expected item set (as for score).")
@click.option("--server-log", "server_log", type=click.Path(exists=True, dir_okay=False), help=SERVER_LOG_HELP)
@click.option(
    "--jobs",
    type=click.IntRange(min=1),
    default=None,
    help="Processes scoring runs side by side [default: the CPUs available, at most 8].",
)
@click.option("--seed", default=0, show_default=True, type=int, help="Bootstrap seed (ablation table).")
@click.option(
    "--resamples",
    default=10000,
    show_default=True,
    type=click.IntRange(min=1),
    help="Bootstrap resamples (ablation table).",
)
def panel_cmd(runs, corpus, out, tiers, external, items, server_log, jobs, seed, resamples):
    """The paper's tables and figures from a panel of RUN(s) on one corpus: panel.json, panel.md, panel.html."""
    from agenthop.scorer.panel_scoring import panel

    try:
        result = panel(
            runs,
            corpus,
            out,
            tiers=tiers,
            items=items,
            server_log=server_log,
            jobs=jobs or default_jobs(),
            seed=seed,
            resamples=resamples,
            external=external,
        )
    except ScorerError as exc:
        raise fail(exc) from exc
    click.echo(f"panel of {len(result['runs'])} runs written to {out}")


@main.command("study")
@click.argument("people_log")
@click.option("--model", "models", multiple=True, help="A model run to set beside the people (repeat for several).")
@click.option("--corpus", default="corpus.sqlite", show_default=True, help="Corpus file with the gold labels.")
@click.option(
    "--out", required=True, type=click.Path(file_okay=False), help="Directory for study.json, study.md, study.html."
)
@click.option("--study-id", "study_id", default=None, help="The study to report when the log holds several.")
@click.option("--server-log", "server_log", type=click.Path(exists=True, dir_okay=False), help=SERVER_LOG_HELP)
@click.option("--seed", default=0, show_default=True, type=int, help="Bootstrap seed (paired tests).")
@click.option("--resamples", default=10000, show_default=True, type=click.IntRange(min=1), help="Bootstrap resamples.")
def study_cmd(people_log, models, corpus, out, study_id, server_log, seed, resamples):
    """People beside models: a study's participants (PEOPLE_LOG, the log of agenthop-server play --study) and model
    runs on the same items, side by side, with paired tests: study.json, study.md, study.html."""
    from agenthop.scorer.study import study_report

    try:
        result = study_report(
            people_log,
            models,
            corpus,
            out=out,
            study_id=study_id,
            server_log=server_log,
            seed=seed,
            resamples=resamples,
        )
    except ScorerError as exc:
        raise fail(exc) from exc
    click.echo(
        f"study {result['study']}: {len(result['participants'])} participants and {len(models)} model run(s) on "
        f"{len(result['items'])} items; report written to {Path(out) / 'study.html'}"
    )


@main.command("view")
@click.argument("runs", nargs=-1, required=True)
@click.option("--corpus", default="corpus.sqlite", show_default=True, help="Corpus file with the gold labels.")
@click.option(
    "--out", required=True, type=click.Path(file_okay=False), help="Directory for index.html and its sessions/."
)
@click.option("--items", type=click.Path(exists=True, dir_okay=False), help="Expected item set (as for score).")
@click.option(
    "--server-log",
    "server_log",
    type=click.Path(exists=True, dir_okay=False),
    help="Checkpoint log of a server the run(s) used, for run directories without server-log.sqlite.",
)
def view_cmd(runs, corpus, out, items, server_log):
    """Write a trajectory viewer for RUN(s): OUT/index.html, which opens offline in a browser."""
    from agenthop.scorer.scoring import write_viewer

    try:
        page = write_viewer(runs, corpus, out, items=items, server_log=server_log)
    except ScorerError as exc:
        raise fail(exc) from exc
    click.echo(f"viewer written: {page}")


if __name__ == "__main__":  # pragma: no cover
    main()
