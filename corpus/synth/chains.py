"""Choosing an item's papers: its chain (seed -> [bridge ->] gold) and its wrong-paper neighbour.

A chain is found in the citation graph when the graph offers one; when it does not, the
graph is edited (a reference added, or an unprotected one replaced) and
``Draft.forced_edits`` counts it. Every chosen chain is then protected, so later edits
keep it intact:

* the edges an item relies on (seed -> gold, or seed -> bridge -> gold, and the path to
  its wrong paper) are never replaced;
* a depth-2 seed never comes to cite its gold (the gold must stay two hops away);
* every paper in a chain, and the wrong paper, has text; the wrong paper is in the
  seed's two-hop neighbourhood and in no chain role.
"""

from __future__ import annotations

from typing import NamedTuple

from agenthop.corpus.release import MAX_REFS
from agenthop.corpus.synth.graph import neighbourhood, text_refs
from agenthop.corpus.synth.model import Draft, Paper


class Chain(NamedTuple):
    seed: Paper
    bridge: Paper | None  # None at depth 1
    golds: list[Paper]  # two for multi-target items


class ChainFinder:
    """Finds (or forces) chains in the draft's graph and protects the ones it hands out."""

    def __init__(self, draft: Draft):
        self.draft = draft
        self.papers = draft.papers
        self.rng = draft.rng
        self.protected: set[tuple[int, int]] = set()  # (citing, cited) edges a chain relies on
        self.forbidden: set[tuple[int, int]] = set()  # (seed, gold) edges that would break a depth-2 item

    def choose(self, mt: bool, depth: int, seeds: list[Paper], used_seeds: set[int]) -> Chain:
        """A protected chain whose seed is among ``seeds``, preferring seeds not used yet."""
        found = None
        seed = None
        for pass_ in range(2):
            for s in seeds:
                if pass_ == 0 and s.idx in used_seeds:
                    continue
                found = self._find(mt, depth, s)
                if found:
                    seed = s
                    break
            if found:
                break
        if found is None:
            for s in seeds:
                found = self._force(mt, depth, s)
                if found:
                    seed = s
                    break
        if found is None:
            raise RuntimeError("corpus too small to build an item; use more papers")
        assert seed is not None  # set together with found
        used_seeds.add(seed.idx)
        bridge_idx, gold_idx = found
        chain = Chain(
            seed, self.papers[bridge_idx] if bridge_idx is not None else None, [self.papers[g] for g in gold_idx]
        )
        self._protect(chain)
        return chain

    def _protect(self, chain: Chain) -> None:
        seed, bridge, golds = chain
        if bridge is None:
            for g in golds:
                self.protected.add((seed.idx, g.idx))
        else:
            self.protected.add((seed.idx, bridge.idx))
            for g in golds:
                self.protected.add((bridge.idx, g.idx))
                self.forbidden.add((seed.idx, g.idx))

    def pick_wrong(self, chain: Chain) -> Paper:
        """A neighbour with text outside the chain, preferably cited by the seed and on the gold's task."""
        papers = self.papers
        rng = self.rng
        seed = chain.seed
        in_chain = {seed.idx, *(g.idx for g in chain.golds)} | ({chain.bridge.idx} if chain.bridge else set())
        hood = neighbourhood(papers, seed)
        cands = [i for i in hood if i not in in_chain and papers[i].has_text]
        w: Paper | None
        if cands:
            first = [i for i in cands if i in seed.refs]
            same = [i for i in (first or cands) if papers[i].task == chain.golds[0].task]
            pool = same or first or cands
            w = papers[rng.choice(pool)]
        else:
            w = self._older_text(seed, in_chain)
            if w is None:
                raise RuntimeError("corpus too small to build an item; use more papers")
            self.draft.forced_edits += 1
            self._force_ref(seed, w)
        if w.idx in seed.refs:
            self.protected.add((seed.idx, w.idx))
        else:
            via = next(r for r in seed.refs if w.idx in papers[r].refs)
            self.protected.add((seed.idx, via))
            self.protected.add((via, w.idx))
        return w

    # -- finding -----------------------------------------------------------------------

    def _find(self, mt: bool, depth: int, seed: Paper) -> tuple[int | None, list[int]] | None:
        """A natural (bridge, golds) for this seed, or None."""
        papers = self.papers
        rng = self.rng
        trefs = text_refs(papers, seed)
        need = 2 if mt else 1

        def near(cands: list[int], to: Paper) -> list[int]:
            # Prefer papers of the citing paper's area, as real chains mostly stay in a field.
            same = [c for c in cands if papers[c].area == to.area]
            return same if len(same) >= need else cands

        if depth == 1:
            if len(trefs) < need:
                return None
            return None, rng.sample(near(trefs, seed), need)
        refset = set(seed.refs)
        options = []
        for b in near(trefs, seed):
            golds = [
                g
                for g in text_refs(papers, papers[b])
                if g not in refset and g != seed.idx and (seed.idx, g) not in self.forbidden
            ]
            if len(golds) >= need:
                options.append((b, near(golds, papers[b])))
        if not options:
            return None
        b, golds = rng.choice(options)
        return b, rng.sample(golds, need)

    # -- forcing -----------------------------------------------------------------------

    def _force(self, mt: bool, depth: int, seed: Paper) -> tuple[int | None, list[int]] | None:
        """Make a chain for this seed by editing references, or None if the graph cannot give one."""
        need = 2 if mt else 1
        self.draft.forced_edits += 1
        golds: list[int] = []
        if depth == 1:
            for _ in range(need):
                older = self._older_text(seed, {seed.idx, *golds})
                if older is None:
                    return None
                golds.append(older.idx)
            for g in golds:
                if (seed.idx, g) in self.forbidden:
                    return None
                self._force_ref(seed, self.papers[g])
            return None, golds
        b = self._older_text(seed, {seed.idx})
        if b is None:
            return None
        for _ in range(need):
            older = self._older_text(b, {seed.idx, b.idx, *golds})
            if older is None or (seed.idx, older.idx) in self.protected:
                return None
            golds.append(older.idx)
        self._force_ref(seed, b)
        for g in golds:
            self._force_ref(b, self.papers[g])
            if g in seed.refs:
                seed.refs.remove(g)
        return b.idx, golds

    def _force_ref(self, citing: Paper, cited: Paper) -> None:
        """Make ``citing`` cite ``cited`` (replacing an unprotected reference when full)."""
        if cited.idx in citing.refs:
            return
        if (citing.idx, cited.idx) in self.forbidden:
            raise RuntimeError("internal: a forced reference would break a depth-2 item")
        if len(citing.refs) < MAX_REFS:
            citing.refs.append(cited.idx)
            return
        for pos in range(len(citing.refs) - 1, -1, -1):
            if (citing.idx, citing.refs[pos]) not in self.protected:
                citing.refs[pos] = cited.idx
                return
        raise RuntimeError("cannot add a reference: all are protected")

    def _older_text(self, than: Paper, exclude: set[int], prefer_area: bool = True) -> Paper | None:
        cands = [
            q
            for q in self.papers
            if q.has_text and q.order < than.order and q.idx not in exclude and (than.idx, q.idx) not in self.forbidden
        ]
        if prefer_area:
            same = [q for q in cands if q.area == than.area]
            cands = same or cands
        return self.rng.choice(cands) if cands else None
