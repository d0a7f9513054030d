"""Licences of papers: what a source states (a URL or a sentence), as a short name, and whether it is open.

JATS states a licence as a URL (``<license xlink:href>``, ``<ali:license_ref>``) or only in words (PLOS's older
"distributed under the terms of the Creative Commons Attribution License"); GROBID TEI in ``<availability>``.
"Open" is the Open Definition's sense: anyone may reuse and redistribute, commercially too, so Creative Commons
BY and BY-SA and the public-domain dedications are open, and NC or ND licences are not.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_LICENCE = 200  # characters of a licence's words kept when they name no licence this module knows
_CC_URL = re.compile(
    r"creativecommons\.org/(licenses|licences|publicdomain)/([a-z-]+)(?:/(\d(?:\.\d)?))?", re.IGNORECASE
)
# Publishers spell the elements apart, hyphenated or joined ("Non Commercial", "Non-Commercial", "NonCommercial"):
# each spelling must find the NC/ND/SA licence, never fall through to "CC BY" and so pass for open.
_NC, _ND, _SA, _SEP = r"non[- ]?commercial", r"no[- ]?deriv", r"share[- ]?alike", r"[- ,]+"
_CC_WORDS = [  # (pattern over the lower-cased words, short name); the first that matches names the licence
    (re.compile(r"\bcc0\b|public domain dedication|creative commons zero"), "CC0"),
    (re.compile(r"\bpublic domain\b"), "public domain"),
    (re.compile(rf"attribution{_SEP}{_NC}{_SEP}{_ND}|\bcc[- ]by[- ]nc[- ]nd\b"), "CC BY-NC-ND"),
    (re.compile(rf"attribution{_SEP}{_NC}{_SEP}{_SA}|\bcc[- ]by[- ]nc[- ]sa\b"), "CC BY-NC-SA"),
    (re.compile(rf"attribution{_SEP}{_NC}|\bcc[- ]by[- ]nc\b"), "CC BY-NC"),
    (re.compile(rf"attribution{_SEP}{_ND}|\bcc[- ]by[- ]nd\b"), "CC BY-ND"),
    (re.compile(rf"attribution{_SEP}{_SA}|\bcc[- ]by[- ]sa\b"), "CC BY-SA"),
    (re.compile(r"creative commons attribution|\bcc[- ]by\b"), "CC BY"),
]
_OPEN = frozenset({"CC BY", "CC BY-SA", "CC0", "public domain"})


@dataclass(frozen=True)
class Licence:
    name: str  # "CC BY 4.0", or the words as found when they name no licence known here
    url: str | None
    open: bool


def read_licence(stated: str | None) -> Licence | None:
    """The licence a source states, by URL or in words; None when it states none."""
    text = " ".join((stated or "").split())
    if not text:
        return None
    url = text if re.match(r"https?://", text) else None
    found = _CC_URL.search(text)
    if found:
        kind, code, version = found.group(1).lower(), found.group(2).lower(), found.group(3)
        if kind == "publicdomain":
            name = "CC0" if code == "zero" else "public domain"
        else:
            name = "CC " + code.upper()
        name = f"{name} {version}" if version else name
        return Licence(name, url or f"https://{found.group(0)}/", _base(name) in _OPEN)
    lowered = text.lower()
    for pattern, name in _CC_WORDS:
        if pattern.search(lowered):
            version = re.search(r"\b([1-4]\.[05])\b", lowered)
            full = f"{name} {version.group(1)}" if version and name.startswith("CC") and name != "CC0" else name
            return Licence(full, url, name in _OPEN)
    shown = text if len(text) <= MAX_LICENCE else text[:MAX_LICENCE].rsplit(" ", 1)[0] + " …"
    return Licence(shown, url, False)


def names_a_licence(stated: str | None) -> bool:
    """Do these words or this URL name a licence known here (not a mere "Copyright 2017 Ovid Technologies")?"""
    lowered = " ".join((stated or "").split()).lower()
    return bool(lowered) and (bool(_CC_URL.search(lowered)) or any(p.search(lowered) for p, _ in _CC_WORDS))


def _base(name: str) -> str:
    """'CC BY 4.0' -> 'CC BY'."""
    return re.sub(r"\s+\d(\.\d)?$", "", name)


def is_open(name: str | None) -> bool:
    """Is a licence's short name (as :func:`read_licence` gives it) an open one?"""
    return name is not None and name != "" and _base(name) in _OPEN
