"""Section aliases, name resolution (SPEC 3, read_section) and recall-label matching."""

import re

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from agenthop.server.sections import (
    alias,
    alias_index,
    is_subsection_label,
    label_is_resolvable,
    label_matches_section,
    normalise,
    resolve,
)

HEADERS = ["Introduction", "3 Method", "Experimental Setup", "Experiments", "Apdx_A: Proofs", "Related Work"]


def test_alias_is_bijective_base_26():
    assert [alias(i) for i in (0, 1, 25, 26, 27, 51, 52, 701, 702)] == [
        "A",
        "B",
        "Z",
        "AA",
        "AB",
        "AZ",
        "BA",
        "ZZ",
        "AAA",
    ]
    assert all(alias_index(alias(i)) == i for i in range(800))
    assert alias_index("(c)") == 2 and alias_index("B2") is None


def test_normalise_strips_numbering_prefixes_and_punctuation():
    assert normalise("3.1 Method") == "method"
    assert normalise("Apdx_A: Proofs") == "proofs"
    assert normalise("IV. Results — Main") == "results main"


def test_alias_wins_then_exact_header_then_normalised():
    assert resolve("C", HEADERS).index == 2
    assert resolve("(e)", HEADERS).index == 4
    assert resolve("experiments", HEADERS).index == 3
    assert resolve("Method", HEADERS).index == 1  # numbering dropped
    assert resolve("proofs", HEADERS).index == 4  # appendix prefix dropped


def test_out_of_range_alias_falls_through_to_headers():
    assert resolve("Z", HEADERS).index is None
    assert resolve("Z", HEADERS).candidates == tuple(range(len(HEADERS)))


def test_unique_substring_matches_and_ambiguous_one_lists_candidates():
    assert resolve("setup", HEADERS).index == 2
    assert resolve("related", HEADERS).index == 5
    found = resolve("experiment", HEADERS)
    assert found.index is None and found.ambiguous and found.candidates == (2, 3)


def test_unknown_and_empty_names_list_every_section():
    for query in ("conclusion", "   "):
        found = resolve(query, HEADERS)
        assert found.index is None and not found.ambiguous and found.candidates == tuple(range(len(HEADERS)))


def test_words_made_of_roman_letters_are_not_numbering():
    assert normalise("Mild Conditions") == "mild conditions"
    assert normalise("VI-B Results") == "results"


# --- duplicates, numbering, and the reference harness's rules ---------------------------


def test_headers_that_differ_only_by_numbering_or_are_duplicates_are_ambiguous():
    numbered = ["Introduction", "4.2.3 Results", "4.3.3 Results", "5 Experiments", "6 Experiments"]
    found = resolve("Results", numbered)
    assert found.index is None and found.ambiguous and found.candidates == (1, 2)
    assert resolve("experiments", numbered).candidates == (3, 4)
    assert resolve("4.3.3 Results", numbered).index == 2  # the exact header still names one
    assert resolve("C", numbered).index == 2  # and so does the alias
    duplicated = ["Results", "Method", "Results"]
    found = resolve("results", duplicated)
    assert found.ambiguous and found.candidates == (0, 2)


def test_a_number_glued_to_the_header_is_numbering():
    headers = ["1 Introduction", "2 Method", "3D Reconstruction"]
    assert resolve("3.Introduction", headers).index == 0
    assert resolve("3Introduction", headers).index == 0
    assert resolve("2.method", headers).index == 1
    assert normalise("3D Reconstruction") == "3d reconstruction"  # a number glued to one letter is part of the word


def test_a_name_equal_to_several_headers_is_ambiguous_even_when_it_is_part_of_one():
    # "1 introduction" normalises to both headers; that it is also a raw part of "3.1 Introduction" does not decide.
    found = resolve("1 introduction", ["Introduction", "3.1 Introduction"])
    assert found.ambiguous and found.candidates == (0, 1)


def test_an_ambiguous_part_falls_through_to_the_normalised_rule():
    # "ap" is part of both raw headers, but of one normalised header only ("proofs" has no "ap").
    assert resolve("Ap", ["Approach", "Apdx_A: Proofs"]).index == 0
    found = resolve("ap", ["Approach", "Apdx_A: Approximations"])
    assert found.ambiguous and found.candidates == (0, 1)


def test_a_label_naming_a_numbered_header_is_credited_for_that_section_only():
    headers = ["Introduction", "4.2.3 Results", "4.3.3 Results"]
    assert label_matches_section("4.3.3 Results", "4.3.3 Results", "text", headers)
    assert not label_matches_section("4.3.3 Results", "4.2.3 Results", "text", headers)
    assert not label_matches_section("4.3.3 results", "4.2.3 Results", "see 4.3.3 Results", headers)
    # A label that matches several headers only after normalisation names them all: any of them credits it.
    assert label_matches_section("Results", "4.2.3 Results", None, headers)
    assert label_matches_section("Results", "4.3.3 Results", None, headers)
    assert not is_subsection_label("4.3.3 Results", headers)
    assert label_is_resolvable("4.3.3 Results", headers, [])


# A model of the reference harness's rules, written from docs/tools.md and the notes on the reference:
# alias; exact header (case-insensitive); normalised header; unique raw part; unique normalised part.
# First match wins, and the first of several equal headers is taken.


def _reference_normalise(header: str) -> str:
    text = header.lower().strip()
    for pattern in (r"^apdx_[a-z][\d.]*:\s*", r"^apdx:\s*", r"^[ivxlc]+-?[a-z]?\s+", r"^[\d.]+\s*"):
        text = re.sub(pattern, "", text)
    return re.sub(r"\s+", " ", re.sub(r"[:\-–—]", " ", text)).strip()


def _reference_resolve(query: str, headers: list[str]) -> tuple[int | None, int | None, int]:
    """(index, rule that fired, how many headers that rule fitted)."""
    q = query.strip()
    if not q:
        return None, None, 0
    alias_match = re.match(r"^\(?([A-Z]{1,3})\)?$", q.upper())  # the reference upper-cases, then matches ASCII
    index = None
    if alias_match:
        index = 0
        for ch in alias_match.group(1):
            index = index * 26 + ord(ch) - ord("A") + 1
        index -= 1
    if index is not None and index < len(headers):
        return index, 1, 1
    low, norm = q.lower(), _reference_normalise(q)
    rules = [(2, lambda h: h.strip().lower() == low, True)]
    if norm:
        rules.append((3, lambda h: _reference_normalise(h) == norm, True))
    rules.append((4, lambda h: low in h.lower(), False))
    if norm:
        rules.append((5, lambda h: norm in _reference_normalise(h), False))
    for number, rule, first_wins in rules:
        hits = [i for i, h in enumerate(headers) if rule(h)]
        if hits and (first_wins or len(hits) == 1):
            return hits[0], number, len(hits)
    return None, None, 0


# Headers where the two normalisations agree (see the departures table in docs/tools.md for where they differ:
# words made of Roman-numeral letters, "3D"-style words, and punctuation beyond ": - – —").
WORDS = [
    "Introduction",
    "Related Work",
    "Method",
    "Methods",
    "Approach",
    "Experiments",
    "Experimental Setup",
    "Results",
    "Main Results",
    "Discussion",
    "Conclusion",
    "Analysis",
    "Error Analysis",
    "Ablation Study",
    "Datasets",
    "Evaluation",
    "Background",
    "Model",
    "Training Details",
    "Limitations",
    "Proofs",
    "Approximations",
]
PREFIXES = [
    "",
    "",
    "",
    "1 ",
    "2 ",
    "3. ",
    "3.1 ",
    "4.2.3 ",
    "4.3.3 ",
    "IV ",
    "II-B ",
    "Apdx_A: ",
    "Apdx_B.1: ",
    "Apdx: ",
    "5",
    "6.",
]
header = st.builds(
    lambda p, w, s: p + w + s,
    st.sampled_from(PREFIXES),
    st.sampled_from(WORDS),
    st.sampled_from(["", "", ": Details", " - Part 2"]),
)


@st.composite
def query_for(draw, headers: list[str]):
    kind = draw(st.sampled_from(["alias", "header", "word", "part", "renumbered", "free"]))
    h = draw(st.sampled_from(headers))
    if kind == "alias":
        return (
            draw(st.sampled_from(["", "(", " "]))
            + alias(draw(st.integers(0, len(headers) + 1)))
            + draw(st.sampled_from(["", ")"]))
        )
    if kind == "header":
        return draw(st.sampled_from([h, h.upper(), h.lower(), f"  {h} "]))
    if kind == "word":
        return draw(st.sampled_from(WORDS))
    if kind == "part":
        start = draw(st.integers(0, max(0, len(h) - 2)))
        return h[start : start + draw(st.integers(1, 8))]
    if kind == "renumbered":
        return draw(st.sampled_from(PREFIXES)) + normalise(h)
    return draw(st.text(alphabet="abcdeilmnoprstuv .:-", min_size=1, max_size=8))


@given(st.data())
@settings(max_examples=3000, deadline=None, derandomize=True, database=None)
@pytest.mark.slow
def test_resolution_matches_the_reference_except_where_several_headers_fit_equally(data):
    headers = data.draw(st.lists(header, min_size=1, max_size=12))
    query = data.draw(query_for(headers))
    assert all(normalise(h) == _reference_normalise(h) for h in headers)  # the domain where the rules are comparable
    ours = resolve(query, headers)
    theirs, rule, fitted = _reference_resolve(query, headers)
    assume(rule == 1 or normalise(query) == _reference_normalise(query))  # e.g. "C)": we drop the parenthesis
    if rule in (2, 3) and fitted > 1:
        # Departure: the reference takes the first of several equal headers; we list them.
        assert ours.ambiguous and theirs in ours.candidates, (query, headers, ours)
    else:
        assert ours.index == theirs, (query, headers, ours, theirs, rule)


# --- queries where the two normalisations differ ---------------------------------------------------
# Each class below is a departure documented in docs/tools.md, or a place where AgentHop now follows the reference.
DEPARTING_PREFIXES = ["Apdx_1: ", "Apdx_A : ", "Apdx : ", "Apdx_B.2 : ", "apdx_c1 :", "A. ", "b. ", "Z. "]


@given(st.data())
@settings(max_examples=1500, deadline=None, derandomize=True, database=None)
@pytest.mark.slow
def test_where_the_normalisations_differ_the_difference_is_a_documented_departure(data):
    """An Apdx variant the reference does not strip (a digit or a space after Apdx_, or a space before the colon), or
    a single-letter "A." numbering: AgentHop reads the header behind it; the reference reads the prefix as words."""
    headers = data.draw(st.lists(header, min_size=1, max_size=12))
    target = data.draw(st.sampled_from(headers))
    query = data.draw(st.sampled_from(DEPARTING_PREFIXES)) + normalise(target)
    assert normalise(query) != _reference_normalise(query)  # drawn where the two differ
    assert normalise(query) == normalise(target)
    assume(all(h.strip().lower() != query.strip().lower() for h in headers))  # not a header's own spelling
    equal = [i for i, h in enumerate(headers) if normalise(h) == normalise(target)]  # rule 3, as if no prefix
    ours = resolve(query, headers)
    if len(equal) == 1:
        assert ours.index == equal[0], (query, headers, ours)
    else:
        assert ours.ambiguous and set(ours.candidates) == set(equal), (query, headers, ours)


@given(st.data())
@settings(max_examples=1500, deadline=None, derandomize=True, database=None)
@pytest.mark.slow
def test_a_roman_numeral_then_a_number_and_non_ascii_letters_resolve_as_in_the_reference(data):
    """'IV 3 Results' reads Results in both; the dotless ı and the long ſ are not the ASCII i and s in either."""
    headers = data.draw(st.lists(header, min_size=1, max_size=12))
    target = normalise(data.draw(st.sampled_from(headers)))
    query = data.draw(
        st.sampled_from(
            [
                data.draw(st.sampled_from(["IV 3 ", "II 2.1 ", "iii 4. ", "XII 7 "])) + target,
                data.draw(st.sampled_from(["ıv ", "ıı ", "ſ", "reſ"])) + target,
                target.replace("i", "ı", 1),
                target.replace("s", "ſ", 1),
            ]
        )
    )
    assert normalise(query) == _reference_normalise(query), query
    ours, (theirs, rule, fitted) = resolve(query, headers), _reference_resolve(query, headers)
    if rule in (2, 3) and fitted > 1:
        assert ours.ambiguous and theirs in ours.candidates, (query, headers, ours)
    else:
        assert ours.index == theirs, (query, headers, ours, theirs, rule)


def test_the_dotless_i_and_the_long_s_are_aliases_as_in_the_reference():
    """The reference reads q.upper(), so a bare "ı" is the alias I and "ſ" the alias S."""
    headers = [f"Section {n}" for n in range(600)]
    for query, expected in (
        ("ı", 8),
        ("(ı)", 8),
        (" ſ ", 18),
        ("ſı", 19 * 26 + 9 - 1),
        ("ﬀ", 6 * 26 + 6 - 1),
        ("ß", 19 * 26 + 19 - 1),
    ):
        assert resolve(query, headers).index == expected, query
        assert _reference_resolve(query, headers)[:2] == (expected, 1), query
    assert (
        resolve("ß", headers[:30]).index is None
    )  # "SS" is alias 512: out of range, so the headers are tried and none fits
    assert alias_index("ı") == 8 and alias_index("ſ") == 18 and alias_index("é") is None
