"""ACL Anthology metadata a paper's ACL ID settles: its year, its volume's proceedings name and its short venue.

An old-style ACL ID (``D17-1215``: venue letter, two-digit year, volume digit, paper number) names the volume the
paper was published in, so what GROBID read off the first page ("Natural Language Processing" as the venue, 2005 as
the year from a date on the page) gives way to the Anthology's own: the year of the ID, and the volume's booktitle as
the Anthology's ``data/xml`` prints it (``<booktitle>`` of the volume's ``<meta>``). Volumes not listed keep the venue
read from the file, but still get the year and the short venue. The Anthology's DOIs are ``10.18653/v1/`` + the
ACL ID, so a reference that carries such a DOI resolves to an ACL ID too.
"""

from __future__ import annotations

import re

_OLD_STYLE = re.compile(r"^([A-Z])(\d\d)-(\d)(\d{3})$")
_ACL_DOI = re.compile(r"^10\.18653/v1/([a-z]\d\d-\d{4})$", re.IGNORECASE)

# The venue letters of old-style IDs that the explore corpus cites most, with the short names people search by.
SHORT_VENUE = {"P": "ACL", "D": "EMNLP", "N": "NAACL", "E": "EACL", "Q": "TACL", "J": "CL", "C": "COLING"}

# Proceedings names of the volumes of the explore corpus, as the Anthology's data/xml/<collection>.xml gives them
# (ACL: volume 1 long papers, 2 short papers, then student research workshop, demonstrations and tutorials in the
# order of each year; EMNLP: volume 1 long and short papers, 2 demonstrations).
_ACL_MAIN = "Proceedings of the {n}th Annual Meeting of the Association for Computational Linguistics"
_EMNLP = "Proceedings of the {year} Conference on Empirical Methods in Natural Language Processing"
BOOKTITLES = {
    "P16-1": _ACL_MAIN.format(n=54) + " (Volume 1: Long Papers)",
    "P16-2": _ACL_MAIN.format(n=54) + " (Volume 2: Short Papers)",
    "P16-3": "Proceedings of the ACL 2016 Student Research Workshop",
    "P16-4": "Proceedings of ACL-2016 System Demonstrations",
    "P16-5": _ACL_MAIN.format(n=54) + ": Tutorial Abstracts",
    "P17-1": _ACL_MAIN.format(n=55) + " (Volume 1: Long Papers)",
    "P17-2": _ACL_MAIN.format(n=55) + " (Volume 2: Short Papers)",
    "P17-3": "Proceedings of ACL 2017, Student Research Workshop",
    "P17-4": "Proceedings of ACL 2017, System Demonstrations",
    "P17-5": _ACL_MAIN.format(n=55) + ": Tutorial Abstracts",
    "P18-1": _ACL_MAIN.format(n=56) + " (Volume 1: Long Papers)",
    "P18-2": _ACL_MAIN.format(n=56) + " (Volume 2: Short Papers)",
    "P18-3": "Proceedings of ACL 2018, Student Research Workshop",
    "P18-4": "Proceedings of ACL 2018, System Demonstrations",
    "P18-5": _ACL_MAIN.format(n=56) + ": Tutorial Abstracts",
    "D16-1": _EMNLP.format(year=2016),
    "D17-1": _EMNLP.format(year=2017),
    "D17-2": _EMNLP.format(year=2017) + ": System Demonstrations",
    "D18-1": _EMNLP.format(year=2018),
    "D18-2": _EMNLP.format(year=2018) + ": System Demonstrations",
}


def acl_id_of(ids: dict[str, str]) -> str | None:
    """The old-style ACL ID a paper is known by (upper case), from its ``acl`` ID or its Anthology DOI."""
    for value in (ids.get("acl"), ids.get("doi")):
        if not value:
            continue
        value = value.strip()
        found = _ACL_DOI.match(value)
        candidate = (found.group(1) if found else value).upper()
        if _OLD_STYLE.match(candidate):
            return candidate
    return None


def metadata(acl_id: str) -> dict:
    """{'acl': ID, 'year': …, 'venue': booktitle or short venue, 'short_venue': …} for an old-style ACL ID."""
    found = _OLD_STYLE.match(acl_id)
    if found is None:
        raise ValueError(f"not an old-style ACL ID: {acl_id!r}")
    letter, yy, volume, _ = found.groups()
    year = (2000 if int(yy) < 60 else 1900) + int(yy)
    short = SHORT_VENUE.get(letter)
    booktitle = BOOKTITLES.get(f"{letter}{yy}-{volume}")
    return {"acl": acl_id, "year": year, "venue": booktitle, "short_venue": short}
