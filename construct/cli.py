"""agenthop-construct: build a benchmark release from a corpus, stage by stage (docs/construct.md).

Each stage is a subcommand that runs the stages before it as needed (finished
ones are skipped) and then itself; ``run`` runs them all and writes the release.
Argument parsing, one library call, and error translation.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from agenthop.construct.settings import Settings

BATCH_PENDING_EXIT = 3  # stopped to wait for a batch's answers: not a failure, not a finished build

STAGE_HELP = {
    "seeds": "Stage 1: choose seed papers.",
    "chains": "Stages 1-2: seeds, then citation chains with their pre-filters (and the judge, if given).",
    "qa": "Stages 1-3: ... then one question per chain.",
    "distractors": "Stages 1-4: ... then three wrong options per question.",
    "artifacts": "Stages 1-5: ... then the artifact check: drop items a solver that sees no evidence answers by form.",
    "ensemble": "Stages 1-6: ... then the ensemble filter (shortcut and consensus).",
    "sanity": "Stages 1-7: ... then the structural sanity check.",
    "audit": "Stages 1-8: ... then apply the auditors' verdicts (give them with 'review').",
    "postfilter": "Stages 1-9: ... then the post-filter, and write the release (same as 'run').",
}


def _years(ctx, param, value: str | None):
    if not value:
        return None
    try:
        first, _, last = value.partition("-")
        span = (int(first), int(last or first))
    except ValueError:
        raise click.BadParameter(f"{value!r}: give a year or a range, e.g. 2023-2025") from None
    if span[0] > span[1]:
        raise click.BadParameter(f"{value!r}: the first year comes after the last")
    return span


def settings_options(fn):
    options = [
        click.option(
            "--corpus",
            required=True,
            type=click.Path(dir_okay=False, path_type=Path),
            help="The corpus to build from (corpus build's output).",
        ),
        click.option(
            "--out",
            required=True,
            type=click.Path(file_okay=False, path_type=Path),
            help="Working directory: work/ (stage outputs, model cache), audit/, release/, attrition.md.",
        ),
        click.option(
            "--seed", "rng_seed", type=int, default=0, show_default=True, help="Random seed: sampling and option order."
        ),
        click.option(
            "--min-refs",
            type=click.IntRange(min=0),
            default=15,
            show_default=True,
            help="Seeds: fewest references in the corpus.",
        ),
        click.option(
            "--max-refs",
            type=click.IntRange(min=1),
            default=50,
            show_default=True,
            help="Seeds: most references (keeps surveys out).",
        ),
        click.option("--venue", "venues", multiple=True, help="Seeds: only these venues (repeat the option)."),
        click.option("--years", callback=_years, default=None, help="Seeds: only these years, e.g. 2023-2025."),
        click.option(
            "--per-stratum", type=click.IntRange(min=1), default=None, help="Seeds: at most N per (venue, year)."
        ),
        click.option(
            "--citations-per-year",
            type=click.FloatRange(min=0),
            default=1.0,
            show_default=True,
            help="Seeds: citing papers needed per year of age (older than the newest paper); 0 turns the rule off.",
        ),
        click.option(
            "--max-chains-per-seed",
            type=click.IntRange(min=1),
            default=40,
            show_default=True,
            help="Chains: sample at most N per seed.",
        ),
        click.option("--no-multi-target", is_flag=True, help="Chains: single-target only."),
        click.option(
            "--min-overlap",
            type=click.FloatRange(0, 1),
            default=0.08,
            show_default=True,
            help="Chains: least reference-list Jaccard between adjacent hops.",
        ),
        click.option(
            "--min-context",
            type=click.IntRange(min=0),
            default=80,
            show_default=True,
            help="Chains: shortest citation sentence (characters).",
        ),
        click.option(
            "--any-citation-intent",
            is_flag=True,
            help="Chains: keep background-only citation sentences too (no cue word needed, lists of works kept).",
        ),
        click.option(
            "--max-cited-together",
            type=click.IntRange(min=0),
            default=1,
            show_default=True,
            help="Chains: most works one citation sentence may cite (more is a list of related work); 0 turns the rule off.",
        ),
        click.option(
            "--related-pairs",
            type=click.FloatRange(0, 1),
            default=None,
            metavar="JACCARD",
            help="Chains: pair two targets only when they bear on each other (cited in one sentence, one citing the "
            "other, or reference lists overlapping at least JACCARD), wherever they are in the reference list; "
            "by default, pairs are neighbours in it or cited in one sentence.",
        ),
        click.option(
            "--max-target-age",
            type=click.IntRange(min=0),
            default=15,
            show_default=True,
            help="Chains: most years a cited paper may predate the paper citing it (older targets are too early).",
        ),
        click.option(
            "--judge",
            default=None,
            metavar="MODEL",
            help="Chains: a model judging each hop 1-5 (NAME or NAME@BASE_URL).",
        ),
        click.option(
            "--judge-min",
            type=click.IntRange(1, 5),
            default=4,
            show_default=True,
            help="Chains: least judge score kept.",
        ),
        click.option(
            "--generator",
            default="offline",
            show_default=True,
            metavar="MODEL",
            help="Q/A and distractors: 'offline' (no model; 'baseline', its old name, still works) or NAME or "
            "NAME@BASE_URL.",
        ),
        click.option("--max-qa", type=click.IntRange(min=1), default=None, help="Q/A: sample at most N chains."),
        click.option(
            "--min-strength",
            type=click.IntRange(0, 4),
            default=3,
            show_default=True,
            help="Q/A, offline generator: least finding strength (0-4) of the sentence a blank is taken from "
            "(one point each for we/our, a result word, a results section, a score rather than a count).",
        ),
        click.option(
            "--same-paper",
            is_flag=True,
            help="Distractors: a same_paper option (the right paper, another passage) instead of no_context.",
        ),
        click.option(
            "--informed-distractors",
            is_flag=True,
            help="Distractors (model mode): one writer who is shown the gold writes the wrong options, each unlike it "
            "in substance but not in register; by default each is answered blind from its wrong source, as in the "
            "paper, which on papers the model already knows yields the right answer reworded.",
        ),
        click.option(
            "--grounded-distractors",
            is_flag=True,
            help="Distractors (model mode): a writer shown the gold writes each wrong option as a finding its source "
            "really states (the seed, a sibling, the target elsewhere), quoting the sentence, which is checked word "
            "for word; replaces no_context with same_paper.",
        ),
        click.option(
            "--restate-options",
            is_flag=True,
            help="Distractors (model mode): a writer not told which option is right rewrites all four in one "
            "register, keeping each one's claims and figures, so the gold does not stand out by its paper-like wording.",
        ),
        click.option(
            "--too-close",
            type=click.FloatRange(0, 1),
            default=0.9,
            show_default=True,
            help="Distractors: token Jaccard with the gold or another option at which an option is asked for again.",
        ),
        click.option(
            "--filter",
            "filters",
            multiple=True,
            metavar="MODEL",
            help="Ensemble: a filter model (repeat for each; default: the offline filter, no model).",
        ),
        click.option(
            "--blind-check",
            is_flag=True,
            help="Ensemble: each filter model also answers from the four options alone (no question, no paper); "
            "an item more than a third of them get right that way is dropped as options_give_away.",
        ),
        click.option(
            "--max-section-chars",
            type=click.IntRange(min=1),
            default=70_015,
            show_default=True,
            help="Post-filter: longest section allowed on a gold path.",
        ),
        click.option(
            "--one-item-per-target",
            is_flag=True,
            help="Q/A and post-filter: each target paper serves at most one item (Q/A asks one chain per target, "
            "multi-target chains first; the post-filter keeps the smallest item ID of any left).",
        ),
        click.option(
            "--attempts",
            type=click.IntRange(min=1),
            default=3,
            show_default=True,
            help="Tries per model request whose reply is unusable.",
        ),
        click.option(
            "--workers", type=click.IntRange(min=1), default=8, show_default=True, help="Model calls in flight at once."
        ),
        # Sampling of every model call, as the runner's options (llm/wire.py); none given: temperature 0, nothing else.
        click.option(
            "--temperature", type=click.FloatRange(min=0), default=None, help="Model calls: sampling temperature [0]."
        ),
        click.option(
            "--top-p",
            type=click.FloatRange(min=0, min_open=True, max=1),
            default=None,
            help="Model calls: nucleus sampling mass [not sent].",
        ),
        click.option(
            "--top-k", type=click.IntRange(min=1), default=None, help="Model calls: top-k sampling [not sent]."
        ),
        click.option(
            "--max-completion-tokens",
            type=click.IntRange(min=1),
            default=None,
            help="Model calls: generated tokens per call [no cap sent].",
        ),
        click.option(
            "--prices",
            type=click.Path(dir_okay=False, path_type=Path),
            default=None,
            help="Price table JSON overriding llm/prices.json.",
        ),
        click.option(
            "--batch",
            is_flag=True,
            help="Model stages send nothing: write the requests not yet answered to OUT/work/batch/STAGE-NN.jsonl "
            "(OpenAI Batch format) and stop, naming the file.",
        ),
        click.option(
            "--batch-output",
            "batch_outputs",
            multiple=True,
            type=click.Path(dir_okay=False, exists=True, path_type=Path),
            help="A Batch output file answering a batch file this run wrote (repeat for each); the run goes on from it.",
        ),
        click.option(
            "--responses",
            type=click.Path(dir_okay=False, path_type=Path),
            default=None,
            help="Recorded responses (gzip JSONL, keyed by the hash of each request): read first, and every new "
            "response added, so that --replay can rebuild the release with no model.",
        ),
        click.option(
            "--replay",
            is_flag=True,
            help="No model, no network: answer every request from --responses; a request they do not hold (or "
            "that changed since recorded) stops the run, naming the stage and custom_id.",
        ),
        click.option(
            "--dry-run",
            is_flag=True,
            help="Print how many model calls each stage would make and their cost; call nothing.",
        ),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


def _settings(kw: dict) -> Settings:
    return Settings(
        seed=kw["rng_seed"],
        min_refs=kw["min_refs"],
        max_refs=kw["max_refs"],
        venues=tuple(kw["venues"]),
        years=kw["years"],
        per_stratum=kw["per_stratum"],
        citations_per_year=kw["citations_per_year"],
        max_target_age=kw["max_target_age"],
        max_chains_per_seed=kw["max_chains_per_seed"],
        multi_target=not kw["no_multi_target"],
        min_overlap=kw["min_overlap"],
        min_context=kw["min_context"],
        method_or_result=not kw["any_citation_intent"],
        max_cited_together=kw["max_cited_together"],
        related_pairs=kw["related_pairs"],
        judge=kw["judge"],
        judge_min=kw["judge_min"],
        generator=kw["generator"],
        max_qa=kw["max_qa"],
        min_strength=kw["min_strength"],
        same_paper=kw["same_paper"],
        informed_distractors=kw["informed_distractors"],
        grounded_distractors=kw["grounded_distractors"],
        restate_options=kw["restate_options"],
        too_close=kw["too_close"],
        filters=tuple(kw["filters"]) or ("offline",),
        blind_check=kw["blind_check"],
        max_section_chars=kw["max_section_chars"],
        one_item_per_target=kw["one_item_per_target"],
        attempts=kw["attempts"],
        workers=kw["workers"],
        sampling=_sampling(kw),
    )


def _sampling(kw: dict):
    """The model calls' sampling options; None when none is given (the pipeline's own temperature 0)."""
    from agenthop.llm.wire import Sampling

    given = {k: kw[k] for k in ("temperature", "top_p", "top_k") if kw[k] is not None}
    if not given and kw["max_completion_tokens"] is None:
        return None
    return Sampling(**{"temperature": 0.0, **given}, max_tokens=kw["max_completion_tokens"])


def _run(until: str, kw: dict) -> None:
    from agenthop.construct.batchfiles import BatchError, BatchPending
    from agenthop.construct.client import ModelSpec, ModelSpecError
    from agenthop.construct.corpus_view import CorpusView
    from agenthop.construct.estimate import estimate, render
    from agenthop.construct.pipeline import ConstructError, run_pipeline
    from agenthop.construct.recorded import ReplayError
    from agenthop.llm.pricing import PriceTable
    from agenthop.server.corpus_schema import CorpusError

    try:
        s = _settings(kw)
        for model in (s.judge, s.generator, *s.filters):
            if model:
                ModelSpec.parse(model)
        prices = PriceTable.load(kw["prices"]) if kw["prices"] else PriceTable.load()
        if kw["dry_run"]:
            view = CorpusView(kw["corpus"])
            try:
                click.echo(render(estimate(view, s, prices)))
            finally:
                view.close()
            return
        if kw["replay"] and kw["batch"]:
            raise ConstructError("--replay answers from recorded responses and --batch writes requests: give one")
        if kw["replay"] and kw["responses"] is None:
            raise ConstructError("--replay needs the recorded responses: add --responses FILE")
        mode = "replay" if kw["replay"] else "batch" if kw["batch"] else "direct"
        result = run_pipeline(
            kw["corpus"],
            kw["out"],
            s,
            until,
            prices=prices,
            model_mode=mode,
            responses=kw["responses"],
            batch_outputs=tuple(kw["batch_outputs"]),
        )
    except BatchPending as exc:
        click.echo(str(exc), err=True)
        sys.exit(BATCH_PENDING_EXIT)
    except (ModelSpecError, ConstructError, CorpusError, ValueError, ReplayError, BatchError) as exc:
        raise click.ClickException(str(exc)) from exc
    from agenthop.construct.attrition import markdown
    from agenthop.construct.hints import why_empty

    click.echo(markdown(result["attrition"]), nl=False)
    why = why_empty(result["attrition"], s)
    release = kw["out"] / "release"
    if "release" in result and result["release"]["items"] == 0:
        # An empty release is a failed build, not a result: say which rule emptied it instead of "Import it with".
        raise click.ClickException(
            "\n".join(
                [f"no item survived, so no release was written in {release}: there is nothing to import or run.", *why]
            )
        )
    if why:
        click.echo("\n" + "\n".join(why), err=True)
    if "release" in result:
        n = result["release"]["items"]
        bench = kw["out"].with_name(kw["out"].name + ".sqlite")  # my-bench -> my-bench.sqlite, as the README names it
        click.echo(
            f"\nrelease: {release} ({n} item{'' if n == 1 else 's'}). Import it with:\n"
            f"  agenthop-server corpus import {release} --check\n  agenthop-server corpus import {release} --out {bench}"
        )


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110})
def main() -> None:
    """Build a benchmark release from a corpus: seeds, chains, Q/A, distractors, ensemble filter, sanity check, human audit, post-filter."""


def _stage_command(name: str, until: str, help_text: str):
    @settings_options
    def command(**kw):
        _run(until, kw)

    command.__doc__ = help_text
    main.command(name=name)(command)


_stage_command(
    "run",
    "postfilter",
    "Run every stage and write the release (with the offline generator and filter, no model, unless models are given).",
)
for _stage, _help in STAGE_HELP.items():
    _stage_command(_stage, _stage, _help)


@main.command()
@click.option(
    "--out",
    required=True,
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    help="The working directory of a run.",
)
@click.option("--json", "as_json", is_flag=True, help="The table as JSON.")
def attrition(out: Path, as_json: bool) -> None:
    """Print the attrition table of the stages run so far."""
    path = out / "attrition.json"
    if not path.exists():
        raise click.ClickException(f"{path} does not exist; run 'agenthop-construct run --corpus C --out {out}' first")
    data = json.loads(path.read_text())
    if as_json:
        click.echo(json.dumps(data, indent=1, ensure_ascii=False))
    else:
        from agenthop.construct.attrition import markdown

        click.echo(markdown(data), nl=False)


@main.command()
@click.option(
    "--corpus",
    required=True,
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help="The corpus the run was built from.",
)
@click.option(
    "--out",
    required=True,
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    help="The working directory of a run.",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind (loopback by default).")
@click.option("--port", type=click.IntRange(0, 65535), default=8770, show_default=True, help="Port (0: any free port).")
def review(corpus: Path, out: Path, host: str, port: int) -> None:
    """Serve the review page: review the candidates that passed the sanity check, and save verdicts."""
    from agenthop.construct.review_app import serve

    try:
        serve(corpus, out, host=host, port=port, echo=lambda line: print(line, file=sys.stderr, flush=True))
    except (FileNotFoundError, ValueError, OSError) as exc:  # OSError: PortTaken, the port could not be bound
        raise click.ClickException(str(exc)) from exc
    except KeyboardInterrupt:
        pass  # Ctrl+C ends the review; every verdict is already saved


if __name__ == "__main__":
    main()
