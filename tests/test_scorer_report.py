"""What the reports show: plots only of what was measured, readable settings, terminal tables that fit, -h."""

from __future__ import annotations

from agenthop.scorer.plots import cell_accuracy_bars
from agenthop.scorer.stats import wilson


def test_cell_bars_at_100_percent_do_not_crash():
    """Wilson's upper end for 10/10 is 0.9999999999999999: the error bar must not go negative."""
    assert wilson(10, 10)[1] < 1.0
    cell = {"n": 10, "accuracy": 1.0, "accuracy_ci95": list(wilson(10, 10))}
    svg = cell_accuracy_bars({"ST-d1": cell, "ST-d2": {"n": 0}})
    assert 'data-plot="cell-accuracy"' in svg
