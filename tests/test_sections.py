"""Section aliases and name resolution (SPEC 3, read_section)."""

from agenthop.server.sections import alias, alias_index, normalise, resolve

HEADERS = ["Introduction", "3 Method", "Experimental Setup", "Experiments", "Apdx_A: Proofs", "Related Work"]


def test_alias_is_bijective_base_26():
    assert [alias(i) for i in (0, 1, 25, 26, 27, 51, 52, 701, 702)] == ["A", "B", "Z", "AA", "AB", "AZ", "BA", "ZZ", "AAA"]
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
    assert resolve("Method", HEADERS).index == 1          # numbering dropped
    assert resolve("proofs", HEADERS).index == 4          # appendix prefix dropped


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
