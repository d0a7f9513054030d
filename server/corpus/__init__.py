"""Building corpora: the corpus file's schema, the release importer, the synthetic generator, corpus info.

This sub-package writes corpus files; the rest of ``agenthop.server`` serves them.
"""
