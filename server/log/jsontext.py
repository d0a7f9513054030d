"""Strict JSON text for the log, the HTTP API and the wire, whatever strings a client sent.

Two things a client can send that a naive ``json.dumps`` turns into trouble:

- a lone UTF-16 surrogate (``"\\ud83d"``, half an emoji pair): Python keeps it in a
  str, but it cannot be encoded as UTF-8, so SQLite, a UTF-8 socket or stdout
  refuse it. ``dumps`` writes such a string with JSON ``\\u`` escapes, which is
  valid JSON that Python and JavaScript read back to the same string;
- NaN and Infinity, which ``json.dumps`` writes as bare tokens that strict
  parsers reject. ``finite`` replaces them by the strings 'NaN', 'Infinity' and
  '-Infinity'; ``dumps`` never writes them.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, TypeVar, overload

_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")
NON_FINITE_NAMES = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}


def has_lone_surrogate(text: str) -> bool:
    """Python's str holds UTF-16 surrogates only as lone halves (a pair read from JSON becomes one code point).

    Every result passes here on its way out, so the common cases are decided in C: an ASCII string (a flag
    Python keeps) has none, and any other string has one exactly when UTF-8 refuses to encode it. A regular
    expression search took about 0.5 ms for a 55,000-character section (bench/bench_tool_reads.py).
    """
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def replace_lone_surrogates(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD, for output that must be UTF-8."""
    return _LONE_SURROGATE.sub("\ufffd", text) if has_lone_surrogate(text) else text


def wire_safe(value):
    """A copy of a JSON-like value whose strings (keys included) are all encodable as UTF-8."""
    if isinstance(value, str):
        return replace_lone_surrogates(value)
    if isinstance(value, dict):
        return {wire_safe(k) if isinstance(k, str) else k: wire_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [wire_safe(v) for v in value]
    return value


K = TypeVar("K")


@overload
def finite(value: dict[K, Any]) -> tuple[dict[K, Any], bool]: ...
@overload
def finite(value: object) -> tuple[object, bool]: ...
def finite(value: object) -> tuple[object, bool]:
    """(value with NaN and Infinity replaced by their names as strings, whether any was replaced)."""
    if isinstance(value, float) and not math.isfinite(value):
        return NON_FINITE_NAMES[repr(value)], True
    if isinstance(value, dict):
        pairs = [(k, finite(v)) for k, v in value.items()]
        return {k: v for k, (v, _) in pairs}, any(changed for _, (_, changed) in pairs)
    if isinstance(value, list | tuple):
        items = [finite(v) for v in value]
        return [v for v, _ in items], any(changed for _, changed in items)
    return value, False


def dumps(value, **kwargs) -> str:
    """Strict JSON (no NaN or Infinity: ValueError) that always encodes as UTF-8.

    Non-ASCII text is written as is, except in a value holding a lone surrogate,
    which is written entirely with ASCII escapes.
    """
    text = json.dumps(value, ensure_ascii=False, allow_nan=False, **kwargs)
    if has_lone_surrogate(text):
        text = json.dumps(value, ensure_ascii=True, allow_nan=False, **kwargs)
    return text


def dumps_bytes(value, **kwargs) -> bytes:
    return dumps(value, **kwargs).encode("utf-8")
