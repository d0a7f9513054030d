"""AgentHop items as Inspect samples: id = item ID, target = the correct letter, input = the question and options.

The input is what Inspect's viewer lists; the model itself gets the runner's
messages (the solver replaces them with the session's ``research_task`` prompt).
The target comes from the corpus's gold tables, which only this process reads:
the server never can.
"""

from __future__ import annotations

from pathlib import Path

from inspect_ai.dataset import MemoryDataset, Sample

from agenthop.runner.items import load_gold, read_items
from agenthop.server.papers import Corpus, Item
from agenthop.server.task import LETTERS


def sample_input(item: Item) -> str:
    options = "\n".join(f"({LETTERS[i]}) {text}" for i, text in enumerate(item.options))
    return f"{item.question}\n\n{options}"


def item_dataset(items_file: Path, corpus_path: Path) -> MemoryDataset:
    """The items of ``items_file`` (qa/full.jsonl, a split, or item IDs) in file order.

    Raises ``ItemsError`` for an unreadable items file, ``CorpusError`` for an unusable corpus, and
    ``ValueError`` naming the items the corpus does not hold.
    """
    refs = read_items(items_file)
    corpus = Corpus(corpus_path)
    gold = load_gold(corpus_path)
    unknown = [ref.id for ref in refs if corpus.item(ref.id) is None or ref.id not in gold]
    if unknown:
        shown = ", ".join(unknown[:5]) + (" ..." if len(unknown) > 5 else "")
        raise ValueError(
            f"{len(unknown)} item(s) of {items_file} are not in the corpus {corpus_path}: {shown}. "
            "Check that the items file and the corpus belong together."
        )
    samples = []
    for ref in refs:
        item = corpus.item(ref.id)
        assert item is not None  # items the corpus lacks were refused above
        samples.append(
            Sample(
                id=item.item_id,
                input=sample_input(item),
                target=LETTERS[gold[item.item_id]],
                metadata={
                    "question_type": item.question_type,
                    "depth": item.depth,
                    "reasoning_type": item.reasoning_type,
                    "seed_paper_id": item.seed_paper_id,
                },
            )
        )
    return MemoryDataset(samples, name=items_file.stem, location=str(items_file))
