"""Score runs against a corpus's gold labels: the library behind ``agenthop-scorer``.

    from agenthop.scorer import score, compare, write_reports

    result = score(["runs/a", "runs/b"], "corpus.sqlite", out="report/", jobs=2)
    result.runs[0].headline.accuracy
    pair = compare("runs/a", "runs/b", "corpus.sqlite", seed=0)
    pair.difference, pair.mcnemar_p

Runs are loaded by ``runs.expand_spec`` (which runs a RUN argument names) and
``runs.load_run`` (one run), through ``_load`` below and nowhere else. A run
made on another corpus than the one given is refused before anything is
scored. Runs are scored one at a time per process, so memory stays flat with
many runs when the reports are streamed to ``out``; with ``jobs`` > 1 they are
scored in that many worker processes (every run is independent; results come
back in the order given).
"""

from __future__ import annotations

import concurrent.futures as cf
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from pathlib import Path

from agenthop.scorer.comparisons import compare_pair, multi_run
from agenthop.scorer.errors import CorpusMismatchError, ItemsFileError, ScorerError
from agenthop.scorer.gold import Gold
from agenthop.scorer.logs import Run, gc_paused
from agenthop.scorer.reports import ViewLinks, run_dir_names, write_comparison_reports, write_run_reports
from agenthop.scorer.results import PairResult, RunScore, ScoreResult, slim
from agenthop.scorer.runs import expand_spec, load_run
from agenthop.scorer.shards import group_specs as group_shards
from agenthop.scorer.stats import preload
from agenthop.scorer.summary import score_run
from agenthop.scorer.view import VIEW_DIR, VIEW_FILE, write_view
from agenthop.server.corpus_schema import CorpusError, open_corpus, read_meta
from agenthop.server.item_files import ItemsError, read_items
from agenthop.server.log import LogError


def open_gold(corpus: str | Path) -> Gold:
    """The corpus's gold labels; a corpus that cannot be used raises ScorerError."""
    try:
        return Gold(corpus)
    except CorpusError as exc:
        raise ScorerError("{message}", "corpus", message=exc) from exc


def corpus_id_of(corpus: str | Path) -> str | None:
    """The corpus's id from its meta table (checking the file is a usable corpus, without loading the gold)."""
    try:
        conn = open_corpus(corpus)
    except CorpusError as exc:
        raise ScorerError("{message}", "corpus", message=exc) from exc
    try:
        return read_meta(conn).get("corpus_id")
    finally:
        conn.close()


def read_expected(items: str | Path | None) -> list[str] | None:
    """The item IDs of an items file (qa/full.jsonl, a split file with 'id', or bare IDs), or None."""
    if items is None:
        return None
    try:
        return [ref.id for ref in read_items(items)]
    except (OSError, ItemsError) as exc:
        raise ItemsFileError("cannot read {items}: {exc}", "items", exc=exc) from exc


def _load(spec: str, server_log: str | Path | None, starts_only: bool = False) -> Run:
    """The one place runs are loaded."""
    try:
        return load_run(spec, server_log, starts_only=starts_only)
    except LogError as exc:
        raise ScorerError("{exc}", "runs", exc=exc) from exc


def _expand(runs: Iterable[str | Path]) -> list:
    """One spec per run: log files split by label, and the shard directories of one run grouped (scorer/shards.py)."""
    try:
        return [single for spec in group_shards(list(runs)) for single in expand_spec(spec)]
    except LogError as exc:
        raise ScorerError("{exc}", "runs", exc=exc) from exc


def check_corpus(run_name: str, run_corpus_ids: set[str], corpus: str | Path, corpus_id: str | None) -> None:
    """Refuse a run whose logs say it was made on another corpus than ``corpus`` (its gold would not match)."""
    theirs = sorted(run_corpus_ids - {corpus_id}) if corpus_id else []
    if theirs:
        raise CorpusMismatchError(
            "run {run} was made on corpus {theirs}, but the {corpus} given for scoring, {path}, is corpus {ours}. "
            "Score a run against the corpus it was made on.",
            "corpus",
            run=run_name,
            theirs=" and ".join(theirs),
            path=corpus,
            ours=corpus_id,
        )


class _RunScorer:
    """Scores single runs against one corpus; one per process (the gold's SQLite connection stays in it)."""

    def __init__(self, corpus: str | Path, expected: list[str] | None, server_log: str | Path | None):
        self.gold = open_gold(corpus)
        self.expected = expected
        self.server_log = server_log

    def score(self, spec: str, report_dir: Path | None, links: ViewLinks | None = None) -> RunScore:
        # One collection after the run instead of many over its records (the plots' figure cycles wait till then).
        with gc_paused():
            run = _load(spec, self.server_log)
            summary = score_run(run, self.gold, self.expected)
            del run  # the records are the bulk of the memory; the reports only need the summary
            name = summary["run"]["name"]
            if report_dir is None:
                return RunScore(name, summary)
            write_run_reports(summary, report_dir, view_href=links)
            return RunScore(name, slim(summary), complete=False, report_dir=report_dir)

    def close(self) -> None:
        self.gold.close()


_WORKER: _RunScorer | None = None


def _start_worker(corpus, expected, server_log) -> None:
    global _WORKER
    _WORKER = _RunScorer(corpus, expected, server_log)


def _score_in_worker(spec: str, report_dir: Path | None, links: ViewLinks | None) -> RunScore:
    assert _WORKER is not None  # the pool ran _start_worker in this process first
    return _WORKER.score(spec, report_dir, links)


def _head(spec: str, server_log: str | Path | None) -> tuple[str, set[str]]:
    """A run's name and the corpus ids it records, from its session starts only (cheap)."""
    run = _load(spec, server_log, starts_only=True)
    return run.name, run.corpus_ids()


class _Workers:
    """Does the per-run work in this process (one job) or in worker processes; results keep the order of the runs."""

    def __init__(self, jobs: int, n_runs: int, corpus, expected, server_log):
        self.args = (str(corpus), expected, server_log)
        n = min(jobs, n_runs)
        self.pool = cf.ProcessPoolExecutor(n, initializer=_start_worker, initargs=self.args) if n > 1 else None

    def heads(self, specs: list[str], server_log) -> list[tuple[str, set[str]]]:
        if self.pool is None:
            return [_head(spec, server_log) for spec in specs]
        with self._broken():
            return list(self.pool.map(_head, specs, [server_log] * len(specs)))

    def scores(self, specs: list[str], dirs: list[Path | None], links: list[ViewLinks | None]) -> Iterator[RunScore]:
        if self.pool is None:
            scorer = _RunScorer(*self.args)
            try:
                for spec, d, link in zip(specs, dirs, links):
                    yield scorer.score(spec, d, link)
            finally:
                scorer.close()
            return
        with self._broken():
            results = self.pool.map(_score_in_worker, specs, dirs, links)  # submits every run at once
            if len(specs) > 1:
                preload()  # this process would only wait: import what the comparison needs meanwhile
            yield from results

    @contextmanager
    def _broken(self):
        try:
            yield
        except BrokenProcessPool as exc:
            raise ScorerError(
                "a worker process scoring the runs died ({exc}); the machine may be out of memory: "
                "score with fewer {jobs}.",
                "jobs",
                exc=exc,
            ) from exc

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(cancel_futures=True)


def score(
    runs: Iterable[str | Path],
    corpus: str | Path,
    *,
    items: str | Path | None = None,
    server_log: str | Path | None = None,
    replicates: bool = False,
    out: str | Path | None = None,
    jobs: int = 1,
    view: bool = False,
    on_run: Callable[[RunScore], None] | None = None,
) -> ScoreResult:
    """Score runs against the gold labels of ``corpus``, and compare them when there are several.

    runs: run directories or checkpoint logs ``PATH.sqlite[::LABEL]`` (a log without a label is one run per label).
    items: the expected item set (missing items count as unobservable); default: the items in the logs.
    server_log: the checkpoint log of a server the runs used, for run directories without their own.
    replicates: treat all runs as replicates of one configuration.
    out: write the reports there as each run is scored (one run: ``out/``; several: ``out/<run name>/`` and
        ``out/comparison.*``); the returned RunScores then hold slim summaries. Without ``out`` nothing is
        written and the summaries are complete (``write_reports`` writes them).
    jobs: worker processes scoring runs side by side.
    view: also write the trajectory viewer to ``out/view/`` and link every item of the reports to it (needs ``out``).
    on_run: called with each RunScore as it is ready, in the order of ``runs``.
    """
    if jobs < 1:
        raise ScorerError("{jobs} must be at least 1, got {n}.", "jobs", n=jobs)
    if view and out is None:
        raise ScorerError("the trajectory viewer is written beside the reports: give {out} with view.", "out")
    specs = _expand(runs)
    if not specs:
        raise ScorerError("no runs given: pass run directories or checkpoint log files as {runs}.", "runs")
    expected = read_expected(items)
    corpus_id = corpus_id_of(corpus)
    workers = _Workers(jobs, len(specs), corpus, expected, server_log)
    try:
        # Every run is checked before any is scored, so a refused run leaves nothing half-written.
        heads = workers.heads(specs, server_log)
        for name, corpus_ids in heads:
            check_corpus(name, corpus_ids, corpus, corpus_id)
        target = Path(out) if out is not None else None
        keys = run_dir_names([name for name, _ in heads])
        if target is None:
            dirs: list[Path | None] = [None] * len(specs)
        elif len(specs) == 1:
            dirs = [target]
        else:
            dirs = [target / k for k in keys]
        prefix = f"{VIEW_DIR}/" if len(specs) == 1 else f"../{VIEW_DIR}/"
        links = [ViewLinks(prefix, k) if view else None for k in keys]
        scored = []
        for run_score in workers.scores(specs, dirs, links):
            scored.append(run_score)
            if on_run is not None:
                on_run(run_score)
    finally:
        workers.close()
    comparison = multi_run([r.summary for r in scored], all_replicates=replicates) if len(scored) > 1 else None
    if target is not None and comparison is not None:
        write_comparison_reports(comparison, target)
    if view:
        assert target is not None  # view without out was refused above
        _write_view(specs, corpus, target / VIEW_DIR, expected, server_log)
    return ScoreResult(runs=scored, comparison=comparison, out=target)


def write_viewer(
    runs: Iterable[str | Path],
    corpus: str | Path,
    out: str | Path,
    *,
    items: str | Path | None = None,
    expected: list[str] | None = None,
    server_log: str | Path | None = None,
) -> Path:
    """Write the trajectory viewer of ``runs`` into ``out`` (docs/web.md); returns its index.html.

    items: the expected item set, as for ``score`` (or ``expected``: its item IDs, already read).
    """
    if expected is None:
        expected = read_expected(items)
    specs = _expand(runs)
    corpus_id = corpus_id_of(corpus)
    for spec in specs:
        check_corpus(*_head(spec, server_log), corpus, corpus_id)
    return _write_view(specs, corpus, out, expected, server_log)


def _write_view(specs: list[str], corpus, out, expected, server_log) -> Path:
    try:
        write_view(specs, corpus, out, expected=expected, server_log=server_log)
    except CorpusError as exc:
        raise ScorerError("{message}", "corpus", message=exc) from exc
    except LogError as exc:
        raise ScorerError("{exc}", "runs", exc=exc) from exc
    return Path(out) / VIEW_FILE


def compare(
    run_a: str | Path,
    run_b: str | Path,
    corpus: str | Path,
    *,
    items: str | Path | None = None,
    server_log: str | Path | None = None,
    seed: int = 0,
    resamples: int = 10000,
    out: str | Path | None = None,
) -> PairResult:
    """Paired comparison of two runs on the items both have (McNemar, bootstraps, audit transitions).

    out: also write comparison.json (the pair), comparison.md and comparison.html there.
    """
    if resamples < 1:
        raise ScorerError("resamples must be at least 1, got {n}.", n=resamples)
    expected = read_expected(items)
    gold = open_gold(corpus)
    try:
        a, b = _load(str(run_a), server_log), _load(str(run_b), server_log)
        for run in (a, b):
            check_corpus(run.name, run.corpus_ids(), corpus, gold.meta.get("corpus_id"))
        with gc_paused():
            sa, sb = score_run(a, gold, expected), score_run(b, gold, expected)
    finally:
        gold.close()
    pair = compare_pair(sa, sb, seed=seed, resamples=resamples)
    result = PairResult(
        a=RunScore(sa["run"]["name"], sa), b=RunScore(sb["run"]["name"], sb), pair=pair, comparison=multi_run([sa, sb])
    )
    if out is not None:
        result.out = write_comparison_reports(result.comparison, out, pair=pair)
    return result
