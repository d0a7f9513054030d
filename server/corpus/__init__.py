"""agenthop.server.corpus: building corpus files (schema, importer, converters, synthetic generator, corpus info).

This sub-package writes corpus files; the rest of ``agenthop.server`` serves them. The public
API is ``__all__`` below (docs/python-api.md); every other name is private by convention.
Names are imported on first use.

    from agenthop.server.corpus import import_release, describe
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agenthop._exports import lazy_exports

# The names as the checker sees them (``X as X``: re-exported); at run time __getattr__ imports each on first use.
if TYPE_CHECKING:
    from agenthop.server.corpus.convert.build import build_corpus as build_corpus
    from agenthop.server.corpus.convert.build import check_build as check_build
    from agenthop.server.corpus.convert.model import ConvertError as ConvertError
    from agenthop.server.corpus.demo import build_demo as build_demo
    from agenthop.server.corpus.importer import check_release as check_release
    from agenthop.server.corpus.importer import import_release as import_release
    from agenthop.server.corpus.info import describe as describe
    from agenthop.server.corpus.info import format_description as format_description
    from agenthop.server.corpus.problems import BadLabelError as BadLabelError
    from agenthop.server.corpus.problems import ReleaseError as ReleaseError
    from agenthop.server.corpus.problems import format_report as format_report
    from agenthop.server.corpus.schema import SCHEMA_VERSION as SCHEMA_VERSION
    from agenthop.server.corpus.schema import CorpusError as CorpusError
    from agenthop.server.corpus.synth import write_release as write_release

_WHERE = {
    "import_release": "agenthop.server.corpus.importer",
    "check_release": "agenthop.server.corpus.importer",
    "format_report": "agenthop.server.corpus.problems",
    "ReleaseError": "agenthop.server.corpus.problems",
    "BadLabelError": "agenthop.server.corpus.problems",
    "build_corpus": "agenthop.server.corpus.convert.build",
    "check_build": "agenthop.server.corpus.convert.build",
    "ConvertError": "agenthop.server.corpus.convert.model",
    "write_release": "agenthop.server.corpus.synth",
    "build_demo": "agenthop.server.corpus.demo",
    "describe": "agenthop.server.corpus.info",
    "format_description": "agenthop.server.corpus.info",
    "CorpusError": "agenthop.server.corpus.schema",
    "SCHEMA_VERSION": "agenthop.server.corpus.schema",
}

__all__ = list(_WHERE)

__getattr__, __dir__ = lazy_exports(__name__, _WHERE)
