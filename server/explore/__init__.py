"""Explore mode: the tools a person's MCP client uses to browse a real-paper corpus.

``tools`` registers the explore tools on the server; ``search`` ranks papers (titles, abstracts, full text);
``lookup`` resolves pasted identifiers; ``graph`` walks citations; ``citation`` formats BibTeX and CSL-JSON.
Item mode (the benchmark's metered seven tools) lives beside this package, in ``agenthop.server.tools``.
"""
