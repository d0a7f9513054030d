"""Planning the items: the mix of cells, then per item its chain, answer, distractors, citation sentences and question.

``ItemPlanner.plan`` appends ``Draft.items`` and ``Draft.item_contexts``. For every item:

* the cells (single/multi-target x depth 1/2) follow the published mix, and reasoning
  types are balanced within each cell;
* the correct option states facts planted in exactly one section of each gold paper;
  ``seed_only`` parts are planted in the seed only, ``wrong_paper`` parts in one
  neighbour outside the chain only, ``no_context`` parts nowhere; a multi-target
  distractor replaces one part or both, and at least one distractor keeps each correct
  part, so both gold papers must be checked;
* the citation sentence on each chain edge is the item's own (worded for its reasoning
  type from the cited paper's abstract words), never a title or an option;
* recall labels can be derived later from the item alone (``write.py``).
"""

from __future__ import annotations

from agenthop.corpus.release import CONSENSUS_TIERS, REASONING_TYPES
from agenthop.corpus.synth.chains import Chain, ChainFinder
from agenthop.corpus.synth.facts import FactBook, fact_section, kinds_for
from agenthop.corpus.synth.model import DirectFact, Draft, Item, Kind, Paper
from agenthop.corpus.synth.questions import question
from agenthop.corpus.synth.vocabulary import ITEM_CONTEXT

ST_SHARE = 568 / 1011  # the published share of single-target items
# The option types this generator makes, in the order they are shuffled (the output depends
# on it). The release may accept more types than these (release.DISTRACTOR_TYPES).
OPTION_TYPES = ("correct", "seed_only", "wrong_paper", "no_context")


class ItemPlanner:
    """Plans ``n_items`` items on a draft whose papers and references exist."""

    def __init__(self, draft: Draft, n_items: int):
        self.draft = draft
        self.papers = draft.papers
        self.rng = draft.rng
        self.n_items = n_items
        self.facts = FactBook(draft.rng)
        self.chains = ChainFinder(draft)

    def plan(self) -> None:
        cells = self._cells()
        seeds = self._seed_candidates()
        used_seeds: set[int] = set()
        for number, (mt, depth, rtype) in enumerate(cells, start=1):
            self.draft.items.append(self._plan_item(number, mt, depth, rtype, seeds, used_seeds))

    def _cells(self) -> list[tuple[bool, int, str]]:
        """(multi-target, depth, reasoning type) per item, in item order."""
        rng = self.rng
        n_st = int(round(self.n_items * ST_SHARE))
        n_mt = self.n_items - n_st
        if self.n_items >= 4:
            n_st = min(max(n_st, 2), self.n_items - 2)
            n_mt = self.n_items - n_st
        cells = []
        for mt, n in ((False, n_st), (True, n_mt)):
            n_d1 = (n + 1) // 2 if not mt else n // 2 + (n % 2 and rng.random() < 0.5)
            depths = [1] * n_d1 + [2] * (n - n_d1)
            rng.shuffle(depths)
            cell_rt: dict[int, list[str]] = {}
            for d in depths:
                queue = cell_rt.setdefault(d, [])
                if not queue:
                    queue.extend(rng.sample(REASONING_TYPES, 4))
                cells.append((mt, d, queue.pop()))
        return cells

    def _seed_candidates(self) -> list[Paper]:
        """Papers with text and at least six references, the most recent three quarters, shuffled."""
        seeds_all = [p for p in self.papers if p.has_text and len(p.refs) >= 6]
        seeds_all.sort(key=lambda p: -p.order)
        recent = seeds_all[: max(len(seeds_all) * 3 // 4, 1)]
        self.rng.shuffle(recent)
        return recent

    def _plan_item(
        self, number: int, mt: bool, depth: int, rtype: str, seeds: list[Paper], used_seeds: set[int]
    ) -> Item:
        rng = self.rng
        chain = self.chains.choose(mt, depth, seeds, used_seeds)
        seed, bridge, golds = chain
        wrong = self.chains.pick_wrong(chain)
        kinds, quals, direct = self._answer(rtype, golds)
        order, options = self._options(mt, rtype, kinds, quals, direct, seed, wrong)
        self._chain_contexts(chain, rtype)
        text = question(mt, depth, kinds, quals, golds, bridge, rng)
        width = max(4, len(str(self.n_items)))
        item_id = f"{'mt' if mt else 'st'}_{number:0{width}d}"
        tier = rng.choices(CONSENSUS_TIERS, [0.5, 0.3, 0.2])[0]
        skill = rng.choice(
            ["synthesize", "contrast", "synthesize", "reason"]
            if mt
            else ["retrieve", "retrieve", "reason", "assess", "justify"]
        )
        return Item(
            id=item_id,
            mt=mt,
            depth=depth,
            rtype=rtype,
            skill=skill,
            tier=tier,
            question=text,
            options=options,
            correct_index=order.index("correct"),
            distractor_types=order,
            seed=seed.idx,
            golds=[g.idx for g in golds],
            bridge=bridge.idx if bridge else None,
            direct=direct,
            label_seed=rng.getrandbits(64),
        )

    def _answer(self, rtype: str, golds: list[Paper]) -> tuple[list[Kind], list[str | None], list[DirectFact]]:
        """Choose a fact kind per gold paper (distinct where the area allows) and plant its fact."""
        rng = self.rng
        kinds: list[Kind] = []
        for g in golds:
            pool = [k for k in kinds_for(rtype, g.area) if k not in kinds] or kinds_for(rtype, g.area)
            kinds.append(rng.choice(pool))
        quals = [rng.choice(g.datasets) if k.qualified else None for k, g in zip(kinds, golds)]
        direct = []
        for k, g, q in zip(kinds, golds, quals):
            fact = self.facts.new(k, g.area, q)
            sec = fact_section(g, rtype, rng)
            sub = self.facts.choose_subhead(g, k) if rng.random() < 0.13 else None
            self.facts.plant(g, k, fact, sec, sub)
            direct.append(DirectFact(g, sec, sub, k, q, fact))
        return kinds, quals, direct

    def _options(
        self,
        mt: bool,
        rtype: str,
        kinds: list[Kind],
        quals: list[str | None],
        direct: list[DirectFact],
        seed: Paper,
        wrong: Paper,
    ) -> tuple[list[str], list[str]]:
        """(option types, options) in shuffled order; an option is its parts joined by "; "."""
        rng = self.rng
        correct_parts = [d.fact for d in direct]

        def stated_in(paper: Paper, which: list[int]) -> list[str]:
            parts = list(correct_parts)
            for i in which:
                fact = self.facts.new(kinds[i], direct[i].paper.area, quals[i])
                self.facts.plant(paper, kinds[i], fact, fact_section(paper, rtype, rng))
                parts[i] = fact
            return parts

        def nowhere(which: list[int]) -> list[str]:
            parts = list(correct_parts)
            for i in which:
                parts[i] = self.facts.new(kinds[i], direct[i].paper.area, quals[i])
            return parts

        # Which parts each distractor replaces: for MT, part 1, part 2, and one more choice,
        # so at least one distractor keeps each correct part.
        if mt:
            modes = [[0], [1], rng.choice([[0], [1], [0, 1]])]
            rng.shuffle(modes)
        else:
            modes = [[0], [0], [0]]
        parts = {
            "correct": correct_parts,
            "seed_only": stated_in(seed, modes[0]),
            "wrong_paper": stated_in(wrong, modes[1]),
            "no_context": nowhere(modes[2]),
        }
        order = list(OPTION_TYPES)
        rng.shuffle(order)
        return order, ["; ".join(parts[t]) for t in order]

    def _chain_contexts(self, chain: Chain, rtype: str) -> None:
        """Give each chain edge the item's own citation sentence (the first item to claim an edge keeps it)."""
        seed, bridge, golds = chain
        if bridge is None:
            for g in golds:
                self._claim_context(seed, g, rtype)
        else:
            self._claim_context(seed, bridge, "BRIDGE")
            for g in golds:
                self._claim_context(bridge, g, rtype)

    def _claim_context(self, citing: Paper, cited: Paper, rtype: str) -> None:
        key = (citing.idx, cited.idx)
        contexts = self.draft.item_contexts
        if key in contexts:
            return
        rng = self.rng
        contexts[key] = ITEM_CONTEXT[rtype].format(
            facet=rng.choice(cited.facets), task=cited.task, method=rng.choice(cited.methods), i="{i}"
        )
