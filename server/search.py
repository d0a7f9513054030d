"""BM25 over the papers in scope: title + abstract in an item's neighbourhood; title + abstract + authors in explore mode.

Statistics (document frequencies, average length) are those of the scope: an
item's neighbourhood, or the whole corpus in explore mode. A neighbourhood index
is built on the scope's first search and kept in a small LRU cache. The explore
index is built once, at import, and stored in the corpus file (table
``search_index``), and loaded on first use; an index stored by another version of
these rules is ignored and rebuilt in memory. Explore sessions search with SQLite
FTS5 instead (explore/search.py), so a server no longer loads it at start-up.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from array import array
from collections import OrderedDict, defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import count

import bm25s
import numpy as np
from bm25s.tokenization import Tokenized

from agenthop.server.papers import Corpus

log = logging.getLogger("agenthop.server")

K1 = 1.2
B = 0.75
METHOD = "lucene"  # idf = ln(1 + (N - df + 0.5) / (df + 0.5)): never negative
_TOKEN = re.compile(r"(?u)\b\w\w+\b")
_STOPWORDS = frozenset(bm25s.stopwords.STOPWORDS_EN)

PARAMETERS = {
    "engine": "bm25s",
    "method": METHOD,
    "k1": K1,
    "b": B,
    "fields": "title + abstract (item mode); title + abstract + authors (explore mode)",
    "tokenizer": "lowercase \\w\\w+ tokens minus bm25s English stopwords",
}
INDEX_FORMAT = 1  # of the stored explore index; bump when the stored parts change


def tokenize(text: str) -> list[str]:
    return [t for t in _TOKEN.findall(text.lower()) if t not in _STOPWORDS]


@dataclass(frozen=True)
class Hit:
    paper_id: str
    score: float


class _TokenIds:
    """Every document's token IDs in one flat int32 array, handed to bm25s one document at a time.

    bm25s reads its corpus three times (lengths, document frequencies, scores); as
    Python lists of ints the explore corpus's tokens took twice the memory of the
    index built from them, and grew with every paper. This holds 4 bytes per token.
    """

    def __init__(self) -> None:
        self.flat = array("i")
        self.ends = array("q")

    def append(self, token_ids) -> None:
        self.flat.extend(token_ids)
        self.ends.append(len(self.flat))

    def __len__(self) -> int:
        return len(self.ends)

    def __iter__(self) -> Iterator[list[int]]:
        start, flat = 0, self.flat
        for end in self.ends:
            yield flat[start:end].tolist()
            start = end


class ScopeIndex:
    """A BM25 index over one scope's documents; ``paper_ids[i]`` is document i.

    ``texts`` may be any iterable (a generator over the corpus file): it is read
    once, and only the documents' token IDs are kept.
    """

    def __init__(self, paper_ids: Sequence[str], texts: Iterable[str]):
        self.paper_ids = paper_ids
        # scipy builds the column-sparse matrix without numpy's 64-bit sort keys: less peak memory, same scores.
        self._bm25 = bm25s.BM25(method=METHOD, k1=K1, b=B, csc_backend="scipy")
        # Token IDs in first-occurrence order, so the stored index is the same bytes on every build.
        ids: defaultdict[str, int] = defaultdict(count().__next__)
        docs = _TokenIds()
        for text in texts:
            docs.append(map(ids.__getitem__, tokenize(text)))
        ids.default_factory = None  # a plain mapping from here on (bm25s adds its empty token to it)
        self._empty = not ids
        self.preferred: np.ndarray | None = None  # documents that come first for any match (explore: papers with text)
        if not self._empty:
            self._bm25.index(Tokenized(ids=docs, vocab=ids), show_progress=False)

    def search(self, query: str, top_k: int) -> list[Hit]:
        terms = tokenize(query)
        if not terms or self._empty:
            return []
        scores = self._bm25.get_scores(terms)
        positive = np.flatnonzero(scores > 0)
        if positive.size == 0:
            return []
        # Highest score first; ties keep scope order (seed first), so results are deterministic.
        keys = (positive, -scores[positive]) + (() if self.preferred is None else (~self.preferred[positive],))
        order = positive[np.lexsort(keys)][:top_k]
        return [Hit(self.paper_ids[i], float(scores[i])) for i in order]

    # --- storing the explore index in the corpus file ---------------------------

    def to_parts(self) -> dict[str, bytes]:
        """The index as named byte strings (JSON parameters and vocabulary, raw score arrays)."""
        if self._empty:
            return {"params": _params_json(0, {})}
        scores, vocab = self._bm25.scores, self._bm25.vocab_dict
        # indptr is stored as int64 whatever the backend built, so the stored format (and its bytes) stay as they were.
        arrays = {
            "data": scores["data"],
            "indices": scores["indices"],
            "indptr": scores["indptr"].astype(np.int64, copy=False),
        }
        words = sorted(vocab, key=vocab.__getitem__)
        parts = {name: np.ascontiguousarray(a).tobytes() for name, a in arrays.items()}
        parts["vocab"] = json.dumps(words, ensure_ascii=False).encode("utf-8")
        parts["params"] = _params_json(scores["num_docs"], {n: str(a.dtype) for n, a in arrays.items()})
        return parts

    @classmethod
    def from_parts(cls, paper_ids: list[str], parts: dict[str, bytes]) -> ScopeIndex | None:
        """The stored index, or None when it was stored under other rules or does not fit these documents."""
        try:
            params = json.loads(parts["params"])
        except (KeyError, ValueError):
            return None
        if (
            params.get("format") != INDEX_FORMAT
            or params.get("parameters") != PARAMETERS
            or params.get("num_docs") not in (0, len(paper_ids))
        ):
            return None
        index = cls.__new__(cls)
        index.paper_ids = paper_ids
        index._bm25 = bm25s.BM25(method=METHOD, k1=K1, b=B)
        index._empty = params["num_docs"] == 0
        index.preferred = None
        if index._empty:
            return index
        words = json.loads(parts["vocab"])
        vocab = {word: i for i, word in enumerate(words)}
        dtypes = params["dtypes"]
        index._bm25.scores = {
            name: np.frombuffer(parts[name], dtype=dtypes[name]) for name in ("data", "indices", "indptr")
        }
        index._bm25.scores["num_docs"] = params["num_docs"]
        index._bm25.vocab_dict = vocab
        index._bm25.unique_token_ids_set = set(vocab.values())
        index._bm25.nonoccurrence_array = None
        return index


def stored_index_parts(texts: Iterable[str]) -> dict[str, bytes]:
    """The stored form of a BM25 index over ``texts``, built as they stream by (the importer's explore index).

    The stored parts need no paper IDs: the server pairs document i with the i-th paper when it loads them.
    """
    return ScopeIndex((), texts).to_parts()


def _params_json(num_docs: int, dtypes: dict) -> bytes:
    return json.dumps(
        {"format": INDEX_FORMAT, "parameters": PARAMETERS, "num_docs": num_docs, "dtypes": dtypes}, sort_keys=True
    ).encode("utf-8")


class SearchEngine:
    def __init__(self, corpus: Corpus, cache_size: int = 256):
        self._corpus = corpus
        self._cache: OrderedDict[str | None, ScopeIndex] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()
        self._building: dict[str | None, threading.Lock] = {}

    def _stored_explore_index(self) -> ScopeIndex | None:
        parts = self._corpus.stored_search_index()
        if not parts:
            return None
        index = ScopeIndex.from_parts(self._corpus.explore_paper_ids(), parts)
        if index is None:
            log.warning(
                "the explore search index stored in %s was built under other rules; building it in memory",
                self._corpus.path,
            )
        return index

    def _text_first(self, index: ScopeIndex) -> ScopeIndex:
        """In explore mode every matching paper with text comes before every matching metadata-only stub:
        a stub's document is only its title and authors, so BM25's length normalisation would rank it first."""
        index.preferred = np.array(self._corpus.explore_has_text(), dtype=bool)
        return index

    def index(self, item_id: str | None) -> ScopeIndex:
        with self._lock:
            if item_id in self._cache:
                self._cache.move_to_end(item_id)
                return self._cache[item_id]
            build_lock = self._building.setdefault(item_id, threading.Lock())
        with build_lock:  # one build per scope, even when many sessions ask at once
            with self._lock:
                if item_id in self._cache:
                    return self._cache[item_id]
            # Explore mode's own search is FTS5 (explore/search.py): the stored bm25s index of the whole corpus is
            # loaded only when something asks for it (benchmarks, a corpus without the explore tables), not at start-up.
            stored = self._stored_explore_index() if item_id is None else None
            built = stored if stored is not None else ScopeIndex(*self._corpus.search_documents(item_id))
            if item_id is None:
                self._text_first(built)
            with self._lock:
                self._cache[item_id] = built
                while len(self._cache) > self._cache_size:
                    oldest = next(k for k in self._cache if k is not None)  # keep the explore index
                    del self._cache[oldest]
                self._building.pop(item_id, None)
            return built

    def search(self, item_id: str | None, query: str, top_k: int) -> list[Hit]:
        return self.index(item_id).search(query, top_k)
