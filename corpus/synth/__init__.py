"""The synthetic AgentHop benchmark (SPEC 2.3), written in the release layout of SPEC 2.1.

``write_release(out_dir, papers=N, items=M, seed=S)`` builds, from ``random.Random(S)``
alone, a corpus of N papers with section text plus metadata-only papers, one global
citation graph (with a citation-context sentence for every edge whose citing paper has
text), and M benchmark items in all four cells (single/multi-target x depth 1/2), then
writes ``qa/full.jsonl``, ``graphs/full.jsonl``, ``paper_pool/papers.jsonl`` and
``audit/recall_labels.jsonl``. The same arguments give the same bytes.
``check_release(dir)`` re-checks the guarantees on a small release (docs/synthetic.md).

One module per part of the job, in the order a release is made:

* ``vocabulary``: the words and sentence templates (data only);
* ``facts``: fact kinds (``KINDS``) and the book that hands out unique facts;
* ``model``: the shared records (``Paper``, ``Item``) and the ``Draft`` that holds them;
* ``text``: sentences, paragraphs, titles, abstracts and section text;
* ``papers``: generating papers (metadata, skeleton, order in time);
* ``graph``: the citation graph and its citation sentences;
* ``chains``: choosing (or forcing) each item's chain and wrong paper;
* ``questions``: wording an item's question;
* ``items``: planning items (cells, answer, distractors, chain contexts);
* ``write``: ``write_release`` and the release records;
* ``check``: ``check_release``.
"""

from agenthop.corpus.release import RELEASE_FILES
from agenthop.corpus.synth.check import check_release
from agenthop.corpus.synth.facts import KINDS
from agenthop.corpus.synth.model import Kind
from agenthop.corpus.synth.write import write_release

__all__ = ["write_release", "check_release", "KINDS", "Kind", "RELEASE_FILES"]
