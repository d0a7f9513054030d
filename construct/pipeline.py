"""Run the stages in order, each skipped when its output is already there for the same inputs and settings.

A stage's fingerprint is its name, the settings it depends on, and the digest of
the previous stage's output (the source corpus's identity for ``seeds``, plus the
verdicts' content for ``audit``): change a setting, or a verdict, and that stage
and the ones after it run again, from cached model replies where the requests
are the same. The release is written from the post-filter's output every time;
it holds nothing that varies between runs.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypedDict

from agenthop.construct import artifacts, attrition
from agenthop.construct.artifact_filter import run_artifacts
from agenthop.construct.chains import run_chains
from agenthop.construct.client import ModelClient, ModelSpec
from agenthop.construct.context import Context
from agenthop.construct.corpus_view import CorpusView
from agenthop.construct.distractors import run_distractors
from agenthop.construct.ensemble import run_ensemble
from agenthop.construct.postfilter import run_postfilter
from agenthop.construct.qa import run_qa
from agenthop.construct.recorded import RecordedResponses
from agenthop.construct.release_out import write_release
from agenthop.construct.sanity import run_sanity
from agenthop.construct.seeds import select_seeds
from agenthop.construct.settings import Settings, stage_settings
from agenthop.construct.stagefiles import StageFiles, canonical, digest, file_digest, jsonl, write_atomic
from agenthop.construct.verdicts import VerdictStore, apply_verdicts
from agenthop.llm.pricing import PriceTable
from agenthop.llm.retry import RetryPolicy
from agenthop.llm.wire import Sampling
from agenthop.server.corpus_schema import read_meta

STAGES = ("seeds", "chains", "qa", "distractors", "artifacts", "ensemble", "sanity", "audit", "postfilter")
STAGE_VERSION = 2  # bump when a stage's rules change, so old outputs are not reused


class ConstructError(Exception):
    """The pipeline cannot run as asked; the message says what to change."""


def _models(s: Settings) -> list[ModelSpec]:
    specs = [ModelSpec.parse(m) for m in (s.judge, s.generator, *s.filters) if m]
    return [m for m in specs if not m.offline]


class _ClientOptions(TypedDict, total=False):
    """ModelClient's options the pipeline sets; prices and policy only when given, else the client's defaults."""

    workers: int
    sampling: Sampling | None
    prices: PriceTable
    policy: RetryPolicy


class Pipeline:
    def __init__(
        self,
        corpus: Path,
        out: Path,
        settings: Settings,
        *,
        prices: PriceTable | None = None,
        policy: RetryPolicy | None = None,
        echo: Callable[[str], None] = lambda line: print(line, file=sys.stderr, flush=True),
        model_mode: str = "direct",
        responses: Path | None = None,
        batch_outputs: tuple[Path, ...] = (),
    ):
        self.out, self.settings, self.echo = Path(out), settings, echo
        self.view = CorpusView(corpus)
        self.corpus_id = read_meta(self.view.conn).get("corpus_id") or file_digest(Path(corpus))
        self.files = StageFiles(self.out / "work")
        self.verdicts = VerdictStore(self.out / "audit" / "verdicts.sqlite")
        client = None
        if _models(settings):
            kwargs: _ClientOptions = {"workers": settings.workers, "sampling": settings.sampling}
            if prices is not None:
                kwargs["prices"] = prices
            if policy is not None:
                kwargs["policy"] = policy
            recorded = RecordedResponses(responses) if responses is not None else None
            client = ModelClient(self.out / "work" / "model-cache.sqlite", mode=model_mode, recorded=recorded, **kwargs)
            if batch_outputs:
                problems = client.import_batch(list(batch_outputs))
                if problems:
                    # Named, kept unanswered: a batch run asks them again in its next file, a direct run sends them.
                    self.echo(
                        f"{len(problems)} request(s) of the batch files have no usable answer in --batch-output "
                        "and will be asked again:\n  " + "\n  ".join(problems)
                    )
        elif model_mode != "direct" or batch_outputs:
            raise ConstructError(
                "--batch, --batch-output and --replay apply to model stages; give a model with --judge, --generator "
                "or --filter"
            )
        self.ctx = Context(self.view, settings, client, echo)
        self.ran: list[str] = []

    def fingerprint(self, stage: str) -> str:
        i = STAGES.index(stage)
        upstream = self.corpus_id if i == 0 else file_digest(self.files.output(STAGES[i - 1]))
        extra = self.verdicts.fingerprint() if stage == "audit" else ""
        return digest(canonical([stage, STAGE_VERSION, stage_settings(self.settings, stage), upstream, extra]))

    async def _compute(self, stage: str) -> list[dict]:
        view, s, ctx = self.view, self.settings, self.ctx
        kept = self.files.kept
        if stage == "seeds":
            return select_seeds(view, s)
        if stage == "chains":
            return await run_chains(ctx, kept("seeds"))
        if stage == "qa":
            return await run_qa(ctx, kept("chains"))
        if stage == "distractors":
            return await run_distractors(ctx, kept("qa"))
        if stage == "artifacts":
            return run_artifacts(view, kept("distractors"), self.echo)
        if stage == "ensemble":
            return await run_ensemble(ctx, kept("artifacts"))
        if stage == "sanity":
            return run_sanity(view, kept("ensemble"))
        if stage == "audit":
            return apply_verdicts(kept("sanity"), self.verdicts)
        records, repairs = run_postfilter(view, kept("audit"), s.max_section_chars, s.one_item_per_target)
        write_atomic(self.out / "repair.jsonl", jsonl(repairs))
        return records

    async def run_stage(self, stage: str) -> None:
        fp = self.fingerprint(stage)
        if self.files.finished(stage, fp):
            self.echo(f"{stage}: done already, skipped")
            return
        self.echo(f"{stage}: running")
        records = await self._compute(stage)
        self.files.write(stage, fp, records)
        if self.ctx.client is not None and self.ctx.client.recorded is not None:
            self.ctx.client.recorded.save()
        self.ran.append(stage)
        kept = sum("drop" not in r for r in records)
        self.echo(f"{stage}: {len(records)} in, {kept} kept")

    async def run(self, until: str = "postfilter", *, release: bool = True) -> dict:
        """Run the stages up to ``until``; with the post-filter done and ``release``, write the release and the attrition table."""
        try:
            for stage in STAGES[: STAGES.index(until) + 1]:
                await self.run_stage(stage)
            result: dict[str, Any] = {"ran": self.ran, "attrition": self.attrition()}
            write_atomic(
                self.out / "attrition.json", json.dumps(result["attrition"], indent=1, ensure_ascii=False) + "\n"
            )
            write_atomic(self.out / "attrition.md", attrition.markdown(result["attrition"]))
            if until == "postfilter" and release:
                result["release"] = self.write_release()
            return result
        finally:
            if self.ctx.client is not None:
                write_atomic(self.out / "work" / "costs.json", json.dumps(self.ctx.client.totals(), indent=1) + "\n")
                result_costs = self.ctx.client.totals()
                self.echo(
                    f"model calls: {result_costs['calls']} sent, {result_costs['cache_hits']} from the cache, ${result_costs['usd']:.4f}"
                )

    def attrition(self) -> dict:
        records = {}
        for stage in STAGES:
            if self.files.output(stage).exists():
                records[stage] = self.files.records(stage)
        table = attrition.table(records)
        checked = self.artifact_check()
        if checked is not None:
            table["artifact_check"] = checked
        return table

    def artifact_check(self) -> dict | None:
        """The artifact check of the items that survive the last stage run (the release's, once the post-filter ran)."""
        done = [s for s in STAGES[STAGES.index("artifacts") :] if self.files.output(s).exists()]
        if not done:
            return None
        summary = artifacts.summarise(self.files.kept(done[-1]), view=self.view)
        return {"stage": done[-1], **summary}

    def stage_models(self) -> dict:
        """The model of every stage by the name its requests carry ('offline': no model; null: the stage has none)."""
        s = self.settings
        name = lambda m: ModelSpec.parse(m).name if m else None  # noqa: E731
        return {
            "chains": name(s.judge),
            "qa": name(s.generator),
            "distractors": name(s.generator),
            "ensemble": [name(f) for f in s.filters],
        }

    def write_release(self) -> dict:
        final = self.files.kept("postfilter")
        if not final:
            # An empty release has nothing to import or run: none is written, and one left by an earlier run of
            # this directory goes (the release is always the post-filter's output, rewritten each run).
            shutil.rmtree(self.out / "release", ignore_errors=True)
            self.echo(f"release: none written in {self.out / 'release'} (no item survived)")
            return {"items": 0, "ST": 0, "MT": 0}
        run_settings = {k: v for k, v in self.settings.to_json().items() if k not in ("attempts", "workers")}
        provenance = {
            "tool": "agenthop-construct",
            "source_corpus": self.corpus_id,
            "settings": run_settings,
            "stage_outputs": {stage: file_digest(self.files.output(stage)) for stage in STAGES},
            "artifact_check": self.artifact_check(),
            "models": self.stage_models(),
        }
        recorded = self.ctx.client.recorded if self.ctx.client is not None else None
        if recorded is not None:
            recorded.save()
            provenance["recorded_responses"] = {
                "file": recorded.path.name,
                "sha256": file_digest(recorded.path) if recorded.path.exists() else None,
                "responses": len(recorded),
            }
        counts = write_release(self.view, final, self.out / "release", provenance)
        self.echo(
            f"release: {counts['items']} items ({counts['ST']} single-target, {counts['MT']} multi-target) in {self.out / 'release'}"
        )
        return counts

    async def aclose(self) -> None:
        if self.ctx.client is not None:
            await self.ctx.client.aclose()
        self.verdicts.close()
        self.view.close()


def run_pipeline(corpus: Path, out: Path, settings: Settings, until: str = "postfilter", **kwargs) -> dict:
    async def go():
        pipeline = Pipeline(corpus, out, settings, **kwargs)
        try:
            return await pipeline.run(until)
        finally:
            await pipeline.aclose()

    return asyncio.run(go())
