"""agenthop.server.corpus: building corpus files (schema, importer, converters, synthetic generator, corpus info).

This sub-package writes corpus files; the rest of ``agenthop.server`` serves them. The public
API is ``__all__`` below (docs/python-api.md); every other name is private by convention.
Names are imported on first use.

    from agenthop.server.corpus import import_release, describe
"""

from __future__ import annotations

from agenthop._exports import lazy_exports

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
