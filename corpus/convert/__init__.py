"""Converters from the formats papers come in (GROBID TEI, JATS, S2ORC JSON) to the release layout.

One module per format turns a file into :class:`~agenthop.corpus.convert.model.Paper`
records; ``linking`` resolves bibliographies against the set; ``writer`` writes a
release directory; ``build`` runs the whole chain and hands the directory to the
one importer.
"""
