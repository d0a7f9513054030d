"""summary.json and comparison.json: strict JSON, one-space indents, the same content json.dumps gave.

The scorer writes them with msgspec (json.dumps with an indent runs in pure Python). The
content is the same; the only difference in bytes is float exponents (1e-07 is written 1e-7).
"""

from __future__ import annotations

import json
import math

from hypothesis import given
from hypothesis import strategies as st
from support.scorer_fixtures import build_corpus, write_main_run

from agenthop.scorer import score
from agenthop.scorer.reports import json_text


def reference(obj) -> str:
    """What the scorer wrote before: json.dumps over a copy with NaN/inf as null, tuples as lists, keys as strings."""

    def clean(o):
        if isinstance(o, float):
            return None if math.isnan(o) or math.isinf(o) else o
        if isinstance(o, dict):
            return {str(k): clean(v) for k, v in o.items()}
        if isinstance(o, list | tuple):
            return [clean(v) for v in o]
        return o

    return json.dumps(clean(obj), indent=1, ensure_ascii=False, allow_nan=False) + "\n"


def test_special_values():
    data = {
        "nan": math.nan,
        "inf": math.inf,
        "-inf": -math.inf,
        "tuple": (1, 2.5, "x"),
        3: "int key",
        "empty": {},
        "nested": [[], {"a": [None, True, False]}],
        "unicode": "Gödel — ∀x",
        "float": 0.1 + 0.2,
        "big": 2**70,
        "neg": -0.0,
    }
    assert json_text(data) == reference(data)
    assert json.loads(json_text(data))["nan"] is None


def test_a_real_summary_is_written_byte_for_byte_as_before(tmp_path):
    run = write_main_run(tmp_path / "runs")
    result = score([run], build_corpus(tmp_path), out=tmp_path / "out")
    text = (tmp_path / "out" / "summary.json").read_text(encoding="utf-8")
    assert text == reference(json.loads(text)) and len(result.runs) == 1


values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=30,
)


@given(st.dictionaries(st.text(max_size=8), values, max_size=6))
def test_any_summary_like_value_has_the_content_json_dumps_gave(data):
    text = json_text(data)
    assert strict_loads(text) == json.loads(reference(data)) and text.endswith("\n")


def strict_loads(text: str):
    """json.loads that refuses NaN and Infinity, as strict parsers do."""

    def refuse(name):
        raise ValueError(f"non-standard JSON constant {name}")

    return json.loads(text, parse_constant=refuse)
