"""Facts: the kinds of fact an item can ask about, and the book that hands out unique ones.

A fact is a short string with a number and a unit or dataset (``a warm-up of 4,350
steps``, ``an MRR@10 of 0.345 on MS MARCO``). Every option of every item is made of
facts, and the scorer's failure attribution relies on where each one is stated, so:

* ``FactBook.new`` never returns a fact twice in a release, and within a kind no fact is
  a substring of another (values have a fixed width per kind and start after a word), so
  a verbatim search for an option part finds exactly the papers it was planted in;
* a fact is stated only where ``FactBook.plant`` puts it: no template in
  ``vocabulary.py`` can produce one;
* ``Kind.subheads`` are unique across kinds and never a substring of one another, so a
  subsection heading in a recall label names exactly one section.
"""

from __future__ import annotations

import random

from agenthop.corpus.synth.model import Kind, Paper
from agenthop.corpus.synth.vocabulary import AREAS

# -- values ------------------------------------------------------------------------------


def _n4(rng: random.Random, lo: int = 1000, hi: int = 9990, step: int = 10) -> str:
    return f"{rng.randrange(lo, hi + 1, step):,}"


def _d2_1(rng: random.Random) -> str:  # "10.0" .. "89.9"
    return f"{rng.randint(100, 899) / 10:.1f}"


def _p3(rng: random.Random) -> str:  # "0.100" .. "0.999"
    return f"0.{rng.randint(100, 999)}"


def _article(number: str) -> str:
    """'a' or 'an' before a number read aloud (an 8.5, an 11.2, an 18.0)."""
    whole = number.split(".")[0]
    return "an" if whole.startswith("8") or whole in ("11", "18") else "a"


def _error_rate(rng: random.Random, area: dict, qual: str | None) -> str:
    value = _d2_1(rng)
    return f"{_article(value)} {value}% error rate on {rng.choice(area['phenomena'])}"


def _fold(rng: random.Random, area: dict, qual: str | None) -> str:
    value = f"{rng.randint(11, 99) / 10:.1f}"
    cost = rng.choice(["annotation cost", "training compute", "memory use", "labelling time", "inference cost"])
    return f"{_article(value)} {value}-fold increase in {cost}"


COUNT_WORDS = ["three", "four", "five", "six", "eight", "ten", "twelve"]
LAYER_WORDS = ["four", "six", "eight", "ten", "twelve", "sixteen", "twenty-four", "thirty-two", "forty-eight"]
GPU_WORDS = ["two", "four", "eight", "sixteen", "thirty-two", "sixty-four"]

# -- the kinds ---------------------------------------------------------------------------

_RESULT_STATEMENTS = [
    "Our full model reaches {f}, ahead of the strongest baseline.",
    "The best configuration obtains {f} on the test data.",
    "With all components enabled we measure {f}.",
    "Averaged over seeds, the final system achieves {f}.",
]
_MOTIVE_STATEMENTS = [
    "Existing approaches show {f}, which motivates the present study.",
    "A pilot study revealed {f} for current systems.",
    "Prior analyses report {f}, a limitation we address directly.",
]


def _result_kind(name, metric_phrase, value, area, question_metric):
    return Kind(
        name,
        "RESULT",
        lambda rng, a, q, mp=metric_phrase, v=value: f"{mp} of {v(rng)} on {q}",
        _RESULT_STATEMENTS,
        f"what {question_metric} on {{qual}} did {{that}} report for its full model in its results?",
        f"the {question_metric} on {{qual}}",
        ["Comparison with prior systems", "Headline numbers", "Summary of the evaluation"],
        f"reports the {question_metric} on {{qual}}",
        areas=(area,),
        qualified=True,
    )


KINDS: list[Kind] = [
    # METHOD
    Kind(
        "warmup",
        "METHOD",
        lambda rng, a, q: f"a warm-up of {_n4(rng)} steps",
        [
            "The learning rate is increased linearly during {f} and decayed afterwards.",
            "Optimisation starts with {f}, after which a cosine schedule takes over.",
            "We found {f} necessary to keep early updates stable.",
        ],
        "how long was the learning-rate warm-up in the training setup of {that}?",
        "the learning-rate warm-up",
        ["Optimisation schedule", "Learning-rate warm-up", "Schedule and warm-up"],
        "states the learning-rate warm-up used for training",
    ),
    Kind(
        "lr",
        "METHOD",
        lambda rng, a, q: f"a peak learning rate of {rng.randint(10, 99) / 10:.1f}e-{rng.randint(3, 6)}",
        [
            "All models are trained with {f} and the AdamW optimiser.",
            "We use {f}, selected on held-out data.",
            "Training uses {f} with linear decay to zero.",
        ],
        "what peak learning rate did {that} use in its training setup?",
        "the peak learning rate",
        ["Optimiser settings", "Optimisation details", "Optimiser configuration"],
        "states the peak learning rate used for training",
    ),
    Kind(
        "batch",
        "METHOD",
        lambda rng, a, q: f"a batch size of {rng.randint(100, 999)} examples",
        [
            "Each update uses {f}, accumulated over several devices when necessary.",
            "We train with {f} throughout.",
            "Unless stated otherwise, we use {f}.",
        ],
        "what batch size did {that} use for training?",
        "the training batch size",
        ["Batching", "Batch construction", "Training batches"],
        "states the batch size used for training",
    ),
    Kind(
        "dropout",
        "METHOD",
        lambda rng, a, q: f"a dropout rate of 0.{rng.randint(5, 60):02d} on the {rng.choice(a['components'])}",
        [
            "Regularisation consists of {f} and weight decay.",
            "To limit overfitting we apply {f}.",
            "We use {f}; higher values slowed convergence.",
        ],
        "what dropout configuration did {that} use in its training setup?",
        "the dropout configuration",
        ["Regularisation setup", "Dropout and weight decay", "Overfitting control"],
        "states the dropout configuration",
    ),
    Kind(
        "size",
        "METHOD",
        lambda rng, a, q: f"a hidden size of {rng.randrange(1024, 4097, 32):,} across {rng.choice(LAYER_WORDS)} layers",
        [
            "The model uses {f}, with the remaining dimensions scaled accordingly.",
            "Our default architecture has {f}.",
            "For the main experiments we settle on {f}.",
        ],
        "what model dimensions (hidden size and depth) did {that} use?",
        "the model dimensions",
        ["Architecture details", "Model configuration", "Network dimensions"],
        "states the hidden size and number of layers",
    ),
    Kind(
        "epochs",
        "METHOD",
        lambda rng, a, q: f"a schedule of {rng.randint(10, 99)} epochs on {rng.choice(GPU_WORDS)} GPUs",
        ["Training follows {f}.", "The full model is trained with {f}.", "We use {f} for every configuration."],
        "how long was training, and on how much hardware, in {that}?",
        "the training schedule and hardware",
        ["Compute budget", "Training budget", "Hardware and schedule"],
        "states the number of epochs and the hardware used",
    ),
    Kind(
        "temperature",
        "METHOD",
        lambda rng, a, q: f"a softmax temperature of {_p3(rng)}",
        ["The contrastive objective uses {f}.", "Scores are normalised with {f}.", "We set {f} after a small sweep."],
        "what softmax temperature did {that} use in its training objective?",
        "the softmax temperature",
        ["Temperature scaling", "Objective details", "Contrastive objective settings"],
        "states the softmax temperature of the training objective",
        areas=("nlp", "vision", "ir"),
    ),
    Kind(
        "discount",
        "METHOD",
        lambda rng, a, q: (
            f"a discount factor of 0.9{rng.randint(0, 99):02d} with "
            f"{rng.choice(['one', 'three', 'five', 'ten', 'twenty'])}-step returns"
        ),
        ["The agent is trained with {f}.", "Bootstrapped targets use {f}.", "We use {f} in all environments."],
        "what discount factor and return horizon did {that} use?",
        "the discount factor and return horizon",
        ["Return computation", "Value targets", "Bootstrapping details"],
        "states the discount factor and n-step returns",
        areas=("rl",),
    ),
    Kind(
        "buffer",
        "METHOD",
        lambda rng, a, q: f"a replay buffer holding {rng.randrange(100000, 999001, 1000):,} transitions",
        ["Experience is stored in {f}.", "We use {f} and sample uniformly.", "The off-policy learner draws from {f}."],
        "how large was the replay buffer used by {that}?",
        "the replay buffer size",
        ["Replay configuration", "Experience replay", "Buffer settings"],
        "states the replay buffer size",
        areas=("rl",),
    ),
    Kind(
        "negatives",
        "METHOD",
        lambda rng, a, q: f"a pool of {rng.randint(100, 999)} hard negatives per query",
        [
            "Training draws from {f}, refreshed every epoch.",
            "We mine {f} with the first-stage retriever.",
            "The loss contrasts each positive with {f}.",
        ],
        "how many hard negatives per query did {that} use for training?",
        "the number of hard negatives",
        ["Negative sampling", "Hard negative mining", "Negative selection"],
        "states the number of hard negatives per query",
        areas=("ir",),
    ),
    Kind(
        "fanout",
        "METHOD",
        lambda rng, a, q: (
            f"a neighbour fan-out of {rng.randint(10, 99)} per hop over {rng.choice(['two', 'three', 'four'])} hops"
        ),
        [
            "Mini-batches are built with {f}.",
            "The sampler uses {f}.",
            "We use {f} during training and full neighbourhoods at test time.",
        ],
        "what neighbour sampling configuration did {that} use?",
        "the neighbour sampling configuration",
        ["Sampling details", "Neighbour sampling", "Sampler configuration"],
        "states the neighbour fan-out and number of hops",
        areas=("graph",),
    ),
    Kind(
        "crop",
        "METHOD",
        lambda rng, a, q: (lambda s: f"input crops of {s} by {s} pixels")(rng.randint(112, 999)),
        ["Images are resized and we train on {f}.", "Augmentation produces {f}.", "We use {f} during training."],
        "what input resolution did {that} train on?",
        "the training input resolution",
        ["Input resolution", "Augmentation pipeline", "Preprocessing details"],
        "states the input crop size",
        areas=("vision",),
    ),
    # RESULT
    _result_kind("em", "an exact-match score", _d2_1, "nlp", "exact-match score"),
    _result_kind("bleu", "a BLEU score", _d2_1, "nlp", "BLEU score"),
    _result_kind("f1", "a macro-F1", _d2_1, "nlp", "macro-F1"),
    _result_kind("top1", "a top-1 accuracy", lambda r: _d2_1(r) + "%", "vision", "top-1 accuracy"),
    _result_kind("ap", "a box AP", _d2_1, "vision", "box AP"),
    _result_kind("miou", "a mean IoU", _d2_1, "vision", "mean IoU"),
    _result_kind("ret", "an average return", _n4, "rl", "average return"),
    _result_kind("succ", "a success rate", lambda r: _d2_1(r) + "%", "rl", "success rate"),
    _result_kind("mrr", "an MRR@10", _p3, "ir", "MRR@10"),
    _result_kind("ndcg", "an nDCG@10", _p3, "ir", "nDCG@10"),
    _result_kind("tacc", "a test accuracy", lambda r: _d2_1(r) + "%", "graph", "test accuracy"),
    _result_kind("auc", "a ROC-AUC", _p3, "graph", "ROC-AUC"),
    # GROUND
    Kind(
        "corpus",
        "GROUND",
        lambda rng, a, q: f"a collection of {rng.randrange(100000, 999901, 100):,} {rng.choice(a['objects'])}",
        ["The resulting resource comprises {f}.", "After filtering, we retain {f}.", "Our data collection yields {f}."],
        "how large was the data collection that {that} built or used?",
        "the size of the data collection",
        ["Collection statistics", "Corpus statistics", "Data statistics"],
        "states the size of the data collection",
    ),
    Kind(
        "agreement",
        "GROUND",
        lambda rng, a, q: (
            f"an inter-annotator agreement of 0.{rng.randint(40, 95)} among {rng.choice(COUNT_WORDS)} annotators"
        ),
        [
            "The labels are of high quality, with {f}.",
            "We measure {f} on a doubly annotated subset.",
            "The labels reach {f}.",
        ],
        "what annotation agreement did {that} report for its data?",
        "the annotation agreement",
        ["Annotation quality", "Agreement study", "Quality control"],
        "states the inter-annotator agreement",
    ),
    Kind(
        "testsplit",
        "GROUND",
        lambda rng, a, q: f"a held-out test split of {_n4(rng, 1000, 9999, 1)} {rng.choice(a['objects'])}",
        [
            "Evaluation uses {f}.",
            "We reserve {f} that are never seen during development.",
            "The benchmark provides {f}.",
        ],
        "how large was the test split used by {that}?",
        "the size of the test split",
        ["Data splits", "Evaluation split", "Split construction"],
        "states the size of the held-out test split",
    ),
    Kind(
        "vocab",
        "GROUND",
        lambda rng, a, q: f"a vocabulary of {rng.randint(10000, 99999):,} subword units",
        [
            "Text is tokenised with {f}.",
            "The tokenizer is trained on the collection and has {f}.",
            "We use {f} shared across languages.",
        ],
        "what vocabulary did {that} build for its data?",
        "the vocabulary size",
        ["Tokenisation", "Vocabulary construction", "Text preprocessing"],
        "states the vocabulary size",
        areas=("nlp", "ir"),
    ),
    Kind(
        "graphsize",
        "GROUND",
        lambda rng, a, q: f"a graph of {rng.randint(10000, 99999):,} nodes and {rng.randint(100000, 999999):,} edges",
        ["The resulting benchmark is {f}.", "After preprocessing we obtain {f}.", "The largest instance is {f}."],
        "how large was the graph that {that} built for its experiments?",
        "the size of the graph",
        ["Graph statistics", "Graph construction", "Preprocessing statistics"],
        "states the number of nodes and edges",
        areas=("graph",),
    ),
    # MOTIVE
    Kind(
        "errrate",
        "MOTIVE",
        _error_rate,
        _MOTIVE_STATEMENTS,
        "what shortcoming of existing systems motivated {that}?",
        "the motivating shortcoming",
        ["Motivating study", "A motivating example", "Why existing systems fail"],
        "states the observation that motivates the work",
    ),
    Kind(
        "latency",
        "MOTIVE",
        lambda rng, a, q: f"an inference latency of {rng.randint(100, 999)} ms per {rng.choice(a['units'])}",
        _MOTIVE_STATEMENTS,
        "what cost of existing systems did {that} give as motivation?",
        "the motivating cost",
        ["Cost of current systems", "Efficiency concerns", "Motivating measurements"],
        "states the efficiency problem that motivates the work",
    ),
    Kind(
        "gap",
        "MOTIVE",
        lambda rng, a, q: (
            f"a gap of {rng.randint(10, 99) / 10:.1f} points between in-domain and out-of-domain {rng.choice(a['metrics'])}"
        ),
        _MOTIVE_STATEMENTS,
        "what generalisation problem motivated {that}?",
        "the motivating generalisation gap",
        ["Generalisation gap", "Out-of-domain behaviour", "Observed degradation"],
        "states the generalisation gap that motivates the work",
    ),
    Kind(
        "fold",
        "MOTIVE",
        _fold,
        _MOTIVE_STATEMENTS,
        "what cost increase did {that} point to as its motivation?",
        "the motivating cost increase",
        ["Scaling costs", "Resource demands", "Cost analysis"],
        "states the cost increase that motivates the work",
    ),
]


def kinds_for(rtype: str, area: str) -> list[Kind]:
    """The fact kinds of a reasoning type that a paper of ``area`` can state."""
    return [k for k in KINDS if k.rtype == rtype and (k.areas is None or area in k.areas)]


# -- where facts go ----------------------------------------------------------------------
# Where a fact of each reasoning type sits: preferred section types with weights, then fallbacks.
FACT_SECTIONS = {
    "METHOD": ([("setup", 0.65), ("apdx_hparams", 0.15), ("method", 0.2)], ["method"]),
    "RESULT": ([("results", 0.7), ("analysis", 0.2), ("apdx_results", 0.1)], ["method"]),
    "GROUND": ([("data", 0.6), ("setup", 0.25), ("apdx_data", 0.15)], ["method"]),
    "MOTIVE": ([("intro", 0.7), ("discussion", 0.15), ("related", 0.15)], ["intro"]),
}


def fact_section(paper: Paper, rtype: str, rng: random.Random) -> int:
    """The index of the section of ``paper`` that states a fact of reasoning type ``rtype``."""
    prefs, fallback = FACT_SECTIONS[rtype]
    stypes = [s for _, s, _ in paper.skeleton]
    present = [(s, w) for s, w in prefs if s in stypes]
    if present:
        stype = rng.choices([s for s, _ in present], [w for _, w in present])[0]
    else:
        stype = next(s for s in fallback if s in stypes)
    return stypes.index(stype)


class FactBook:
    """Hands out facts unique in the release and plants them in papers' text."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self._used: set[str] = set()
        self._by_kind: dict[str, list[str]] = {}

    def new(self, kind: Kind, area: str, qual: str | None) -> str:
        """A fact of ``kind`` never handed out before, and no substring of another of its kind."""
        rng = self.rng
        bucket = self._by_kind.setdefault(kind.name, [])
        for _ in range(500):
            fact = kind.make(rng, AREAS[area], qual)
            if fact in self._used:
                continue
            if any(fact in g or g in fact for g in bucket):
                continue
            self._used.add(fact)
            bucket.append(fact)
            return fact
        raise RuntimeError(f"fact kind {kind.name} exhausted")

    def plant(self, paper: Paper, kind: Kind, fact: str, section: int, subhead: str | None = None) -> None:
        """State ``fact`` in section ``section`` of ``paper``, after ``subhead`` as a heading line if given."""
        sentence = self.rng.choice(kind.statements).format(f=fact)
        paper.facts.append((section, sentence, subhead))

    def choose_subhead(self, paper: Paper, kind: Kind) -> str | None:
        """A subsection heading of ``kind`` that ``paper`` uses nowhere yet, or None."""
        headers = {h.lower() for h, _, _ in paper.skeleton}
        for sh in self.rng.sample(kind.subheads, len(kind.subheads)):
            if sh not in paper.subheads and sh.lower() not in headers:
                paper.subheads.append(sh)
                return sh
        return None
