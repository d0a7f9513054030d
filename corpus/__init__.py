"""agenthop.corpus: building corpus files (schema, importer, converters, synthetic generator, corpus info).

This sub-package writes corpus files; the rest of ``agenthop.server`` serves them. The public
API is ``__all__`` below (docs/python-api.md); every other name is private by convention.
Names are imported on first use.

    from agenthop.corpus import import_release, describe
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agenthop._exports import lazy_exports

# The names as the checker sees them (``X as X``: re-exported); at run time __getattr__ imports each on first use.
if TYPE_CHECKING:
    from agenthop.corpus.convert.build import build_corpus as build_corpus
    from agenthop.corpus.convert.build import check_build as check_build
    from agenthop.corpus.convert.model import ConvertError as ConvertError
    from agenthop.corpus.demo import build_demo as build_demo
    from agenthop.corpus.importer import check_release as check_release
    from agenthop.corpus.importer import import_release as import_release
    from agenthop.corpus.info import describe as describe
    from agenthop.corpus.info import format_description as format_description
    from agenthop.corpus.problems import BadLabelError as BadLabelError
    from agenthop.corpus.problems import ReleaseError as ReleaseError
    from agenthop.corpus.problems import format_report as format_report
    from agenthop.corpus.synth import write_release as write_release
    from agenthop.server.corpus_schema import SCHEMA_VERSION as SCHEMA_VERSION
    from agenthop.server.corpus_schema import CorpusError as CorpusError

_WHERE = {
    "import_release": "agenthop.corpus.importer",
    "check_release": "agenthop.corpus.importer",
    "format_report": "agenthop.corpus.problems",
    "ReleaseError": "agenthop.corpus.problems",
    "BadLabelError": "agenthop.corpus.problems",
    "build_corpus": "agenthop.corpus.convert.build",
    "check_build": "agenthop.corpus.convert.build",
    "ConvertError": "agenthop.corpus.convert.model",
    "write_release": "agenthop.corpus.synth",
    "build_demo": "agenthop.corpus.demo",
    "describe": "agenthop.corpus.info",
    "format_description": "agenthop.corpus.info",
    "CorpusError": "agenthop.server.corpus_schema",
    "SCHEMA_VERSION": "agenthop.server.corpus_schema",
}

__all__ = list(_WHERE)

__getattr__, __dir__ = lazy_exports(__name__, _WHERE)
