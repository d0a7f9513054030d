"""The construction pipeline: a corpus built by ``corpus build`` -> a benchmark release the one importer accepts.

Eight stages (docs/construct.md): seeds, chains, Q/A, distractors, ensemble filter,
sanity check, human audit, post-filter. Each stage reads the previous stage's output
file and writes its own atomically under ``OUT/work/``; a stage whose inputs and
settings are unchanged is skipped. Every model call goes through
``agenthop.construct.client.ModelClient``, which caches responses by request
hash, so a re-run after a kill makes no call twice. Nothing else in the project
imports this package.

With no model, ``offline_items`` writes the questions and options from typed slots
(``slots``: a reported value and its kind and form), so every option is a value of
the gold's type from a genuine wrong source, and ``artifacts`` checks the result.
"""
