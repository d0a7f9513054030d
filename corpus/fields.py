"""Reading one field of a record: present, of the right type, in its allowed set; else an error that says so."""

from __future__ import annotations

import difflib
import json
from typing import Any, Literal, overload

from agenthop.corpus.problems import ReleaseError, Where, describe
from agenthop.corpus.release import paper_id_problem

MISSING = object()


def get(rec: dict, key: str, where: Where, field: str | None = None) -> Any:
    value = rec.get(key, MISSING)
    if value is MISSING:
        raise where.missing(field or key)
    return value


# A required field always comes back as its type; only ``optional=True`` can give None.
@overload
def string(
    rec: dict,
    key: str,
    where: Where,
    *,
    field: str | None = None,
    nonempty: bool = True,
    optional: Literal[False] = ...,
) -> str: ...
@overload
def string(
    rec: dict, key: str, where: Where, *, field: str | None = None, nonempty: bool = True, optional: bool
) -> str | None: ...
def string(
    rec: dict, key: str, where: Where, *, field: str | None = None, nonempty: bool = True, optional: bool = False
) -> str | None:
    """A string field. ``optional``: may be absent or null (returns None)."""
    field = field or key
    value = rec.get(key, MISSING)
    if value is MISSING or value is None:
        if optional:
            return None
        if value is MISSING:
            raise where.missing(field)
    if not isinstance(value, str) or (nonempty and not value.strip()):
        raise where.error(field, "a non-empty string" if nonempty else "a string", describe(value))
    return value


@overload
def integer(rec: dict, key: str, where: Where, *, field: str | None = None, optional: Literal[False] = ...) -> int: ...
@overload
def integer(rec: dict, key: str, where: Where, *, field: str | None = None, optional: bool) -> int | None: ...
def integer(rec: dict, key: str, where: Where, *, field: str | None = None, optional: bool = False) -> int | None:
    field = field or key
    value = rec.get(key, MISSING)
    if value is MISSING or value is None:
        if optional:
            return None
        if value is MISSING:
            raise where.missing(field)
    if isinstance(value, bool) or not isinstance(value, int):
        raise where.error(field, "an integer", describe(value))
    return value


def one_of(allowed: tuple) -> str:
    return " or ".join(json.dumps(a) for a in allowed)


def choice(rec: dict, key: str, allowed: tuple, where: Where) -> Any:
    """A required value from a fixed set (exact: ``true`` is not depth 1, ``"1"`` is not 1)."""
    value = rec.get(key, MISSING)
    if value is MISSING:
        raise where.missing(key)
    # bool is an int subclass: True must not pass as depth 1.
    if isinstance(value, bool) or value not in allowed:
        raise where.error(key, f"one of {one_of(allowed)}", describe(value))
    return value


def suggestion(value: Any, allowed: tuple[str, ...]) -> str | None:
    """The allowed value a release most likely meant by ``value`` (case, spacing, a typo), or None."""
    if not isinstance(value, str) or not value.strip():
        return None
    folded = value.strip().upper()
    for a in allowed:
        if a.upper() == folded:
            return a
    close = difflib.get_close_matches(folded, [a.upper() for a in allowed], n=1, cutoff=0.6)
    if close:
        return next(a for a in allowed if a.upper() == close[0])
    prefixed = [a for a in allowed if a.upper().startswith(folded[:3])]
    return prefixed[0] if len(prefixed) == 1 else None


def strict_choice(rec: dict, key: str, allowed: tuple[str, ...], where: Where, subject: str) -> str:
    """A required label; a wrong one is refused naming ``subject`` ("item st_0001") and the value the release probably meant."""
    value = rec.get(key, MISSING)
    if value is MISSING:
        raise where.fail(f"missing field '{where.prefix}{key}' in {subject}")
    if isinstance(value, str) and value in allowed:
        return value
    err = where.error(key, f"one of {one_of(allowed)}", describe(value))
    meant = suggestion(value, allowed)
    hint = f"; did the release mean {json.dumps(meant)}?" if meant else ""
    raise ReleaseError(f"{err} in {subject}{hint}")


def str_list(rec: dict, key: str, where: Where, *, nonempty: bool = False, length: int | None = None) -> list[str]:
    value = get(rec, key, where)
    if length is not None:
        expected = f"a list of {length} strings"
    else:
        expected = "a non-empty list of strings" if nonempty else "a list of strings"
    if not isinstance(value, list):
        raise where.error(key, expected, describe(value))
    if length is not None and len(value) != length:
        raise where.error(key, expected, describe(value))
    if nonempty and not value:
        raise where.error(key, expected, "an empty list")
    for i, element in enumerate(value):
        if not isinstance(element, str) or not element.strip():
            raise where.error(f"{key}[{i}]", "a non-empty string", describe(element))
    return value


def paper_id(value: Any, where: Where, field: str, what: str = "a paper ID") -> str:
    """A paper ID (or pool key) where it is defined: a string that agents can type back."""
    if not isinstance(value, str):
        raise where.error(field, f"{what} (a string)", describe(value))
    problem = paper_id_problem(value)
    if problem is not None:
        shown = value if len(value) <= 60 else value[:57] + "..."
        found = f"{json.dumps(shown, ensure_ascii=False)}, which has {problem}" if value else "an empty string"
        raise where.error(
            field,
            f"{what}: a non-empty string of at most 200 characters with no whitespace or control characters",
            found,
        )
    return value


def blank_to_none(value: Any) -> Any:
    return None if value is None or (isinstance(value, str) and not value.strip()) else value
