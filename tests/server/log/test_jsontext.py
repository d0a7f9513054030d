"""Lone surrogates are found exactly as the definition says (a code point in U+D800-U+DFFF), whatever the fast
path (every result passes here on its way out), and what goes on the wire always encodes."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from agenthop.server.log.jsontext import has_lone_surrogate, wire_safe

DEFINITION = re.compile(r"[\ud800-\udfff]")
# Every code point, and often a lone surrogate (hypothesis's text() leaves category Cs out), so that both
# answers come up in every run.
ANY_TEXT = st.lists(st.characters(codec=None) | st.characters(codec=None, categories=["Cs"]), max_size=60).map("".join)


@given(ANY_TEXT)
def test_has_lone_surrogate_follows_the_definition(text):
    assert has_lone_surrogate(text) == (DEFINITION.search(text) is not None)


@given(
    st.recursive(
        ANY_TEXT | st.integers() | st.none(),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(ANY_TEXT, inner, max_size=4),
        max_leaves=12,
    )
)
def test_wire_safe_values_always_encode(value):
    def strings(v):
        if isinstance(v, str):
            yield v
        elif isinstance(v, dict):
            for k, x in v.items():
                yield k
                yield from strings(x)
        elif isinstance(v, list):
            for x in v:
                yield from strings(x)

    for s in strings(wire_safe(value)):
        s.encode("utf-8")


def test_examples():
    assert not has_lone_surrogate("plain ascii")
    assert not has_lone_surrogate("café 😀 naïve")  # a pair read from JSON is one code point
    assert has_lone_surrogate("broken \ud83d emoji")
    assert has_lone_surrogate("\udfff")
    assert wire_safe({"k\ud800": ["x\udc00y"]}) == {"k\ufffd": ["x\ufffdy"]}
