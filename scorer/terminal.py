"""Terminal tables (rich)."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table as RichTable

from agenthop.scorer.document import AXIS_HEADER, Table, axis_rows, comparison_document, num, pair_sections, pct


def _rich(t: Table, title: str | None = None) -> RichTable:
    rt = RichTable(title=title, caption=t.caption, show_lines=False)
    for n, h in enumerate(t.header):
        # The first column (a name) wraps rather than pushing the table past the console's width.
        rt.add_column(h, justify="left" if n == 0 else "right", overflow="fold" if n == 0 else "ellipsis")
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
    tok = "n/a" if h["mean_tokens"] is None else f"{h['mean_tokens']:,.0f}"
    turns = "n/a" if h["mean_turns"] is None else f"{h['mean_turns']:.2f}"
    console.print(
        f"resources: tokens {tok}, turns {turns}, budget {h['mean_budget'] or 0:.2f} points; "
        f"ended by caps: tokens {100 * (res['pct_token_cap'] or 0):.1f}%, turns {100 * (res['pct_turn_cap'] or 0):.1f}%, "
        f"budget {100 * (res['pct_budget'] or 0):.1f}%"
    )
    for w in summary["warnings"]:
        console.print(f"[yellow]warning:[/yellow] {w}")


#: The runs table in the terminal: fewer, shorter columns than comparison.md, so it reads at 120 columns.
RUNS_HEADER = [
    "run",
    "n",
    "accuracy",
    "paper recall\nST / MT",
    "section\nrecall",
    "conversion\nST / MT",
    "calls/\nturn",
    "tokens",
    "budget",
]


def _pair(a, b) -> str:
    return f"{pct(a, 'n/a')} / {pct(b, 'n/a')}"


def runs_table(comparison: dict) -> Table:
    rows = [
        [
            r["run"],
            str(r["n"]),
            pct(r["accuracy"]),
            _pair(r["paper_recall_st"], r["paper_recall_mt"]),
            pct(r["section_recall"]),
            _pair(r["conversion_st"], r["conversion_mt"]),
            num(r["calls_per_turn"], 2),
            num(r["mean_tokens"], 0),
            num(r["mean_budget"], 1),
        ]
        for r in comparison["runs"]
    ]
    return Table(RUNS_HEADER, rows, "Means per item; n/a: not measured. Turns and cap shares: comparison.md.")


def print_comparison(comparison: dict, console: Console | None = None) -> None:
    console = console or make_console()
    console.print(_rich(runs_table(comparison), title="Runs"))
    doc = comparison_document(comparison)
    rel = doc.sections[1]
    for t in rel.tables:
        console.print(_rich(t, title=rel.title))
    for p in rel.paragraphs:
        console.print(p)


def print_pair(pair: dict, console: Console | None = None) -> None:
    console = console or make_console()
    for sec in pair_sections(pair):
        for t in sec.tables:
            console.print(_rich(t, title=sec.title))
