"""Terminal tables (rich)."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table as RichTable

from .document import AXIS_HEADER, Table, axis_rows, comparison_document, pair_sections


def _rich(t: Table, title: str | None = None) -> RichTable:
    rt = RichTable(title=title, caption=t.caption, show_lines=False)
    for n, h in enumerate(t.header):
        rt.add_column(h, justify="left" if n == 0 else "right")
    for row in t.rows:
        rt.add_row(*[str(c) for c in row])
    return rt


def make_console() -> Console:
    """A console for the tables; 120 columns when output is piped (rich would assume 80 and squeeze them)."""
    console = Console()
    return console if console.is_terminal else Console(width=120)


def print_run(summary: dict, console: Console | None = None) -> None:
    console = console or make_console()
    t = Table(AXIS_HEADER, axis_rows(summary["metrics"]))
    h = summary["headline"]
    console.print(_rich(t, title=f"{summary['run']['name']}: four axes"))
    res = summary["resources"]
    tok = "n/a (no token data)" if h["mean_tokens"] is None else f"{h['mean_tokens']:,.0f}"
    turns = "n/a (no turn data)" if h["mean_turns"] is None else f"{h['mean_turns']:.2f}"
    console.print(
        f"resources: tokens {tok}, turns {turns}, budget {h['mean_budget'] or 0:.2f} points; "
        f"ended by token cap {100 * (res['pct_token_cap'] or 0):.1f}%, turn cap {100 * (res['pct_turn_cap'] or 0):.1f}%, "
        f"budget {100 * (res['pct_budget'] or 0):.1f}%"
    )
    for w in summary["warnings"]:
        console.print(f"[yellow]warning:[/yellow] {w}")


def print_comparison(comparison: dict, console: Console | None = None) -> None:
    console = console or make_console()
    doc = comparison_document(comparison)
    for sec in doc.sections[:2]:
        for t in sec.tables:
            console.print(_rich(t, title=sec.title))
        for p in sec.paragraphs:
            console.print(p)


def print_pair(pair: dict, console: Console | None = None) -> None:
    console = console or make_console()
    for sec in pair_sections(pair):
        for t in sec.tables:
            console.print(_rich(t, title=sec.title))
