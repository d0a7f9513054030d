"""Live progress (rich.progress) and the end-of-run summary table."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

if TYPE_CHECKING:
    from agenthop.runner.summary import RunSummary


class ProgressView:
    def __init__(self, total: int, label: str, *, has_gold: bool, enabled: bool = True, console: Console | None = None):
        self.console = console or Console(stderr=True)
        self.has_gold = has_gold
        self.done = 0
        self.correct = 0
        self.graded = 0
        self.tokens = 0
        self.cost: float | None = 0.0
        self.enabled = enabled
        self.progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[stats]}"),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=self.console,
            disable=not enabled,
        )
        self.task = self.progress.add_task(label, total=total, stats=self._stats())

    def _stats(self) -> str:
        acc = f"{self.correct / self.graded:.1%}" if self.has_gold and self.graded else "n/a"
        cost = "n/a" if self.cost is None else f"${self.cost:.4f}"
        return f"acc {acc} | tokens {self.tokens:,} | cost {cost}"

    def item_done(self, record: dict, tokens: int, cost: float | None, correct: bool | None) -> None:
        self.done += 1
        self.tokens += tokens
        self.cost = None if self.cost is None or cost is None else self.cost + cost
        if correct is not None:
            self.graded += 1
            self.correct += bool(correct)
        self.progress.update(self.task, advance=1, stats=self._stats())

    def __enter__(self) -> ProgressView:
        self.progress.start()
        return self

    def __exit__(self, *exc) -> None:
        self.progress.stop()


def summary_table(summary: RunSummary, title: str, no_gold: str = "no gold: serve a corpus") -> Table:
    """The end-of-run table; ``no_gold`` says why accuracy is n/a (the CLI names its flag)."""
    table = Table(title=title, show_header=False, title_justify="left")
    table.add_column("", style="bold")
    table.add_column("")
    acc = summary.accuracy
    rows = [
        (
            "items",
            f"{summary.items} ({summary.finished} finished, {summary.errored} errored, {summary.not_run} not run)",
        ),
        ("accuracy", f"n/a ({no_gold})" if acc is None else f"{acc:.1%} ({summary.correct}/{summary.graded})"),
        ("answered", str(summary.answered)),
        ("terminations", ", ".join(f"{k} {v}" for k, v in sorted(summary.terminations.items())) or "-"),
        ("mean turns", _fmt(summary.mean_turns)),
        ("mean budget used", _fmt(summary.mean_budget)),
        ("mean tokens / item", _fmt(summary.mean_tokens, 0)),
        (
            "tokens (all attempts)",
            "{total:,} (prompt {prompt:,}, completion {completion:,}, cached {cached:,})".format(
                **summary.tokens_all_attempts
            ),
        ),
        ("cost", "n/a (model not in price table)" if summary.cost_usd is None else f"${summary.cost_usd:.4f}"),
    ]
    for k, v in rows:
        table.add_row(k, v)
    return table


def _fmt(x, digits: int = 2) -> str:
    return "-" if x is None else f"{x:,.{digits}f}"
