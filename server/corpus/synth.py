"""The synthetic AgentHop benchmark (SPEC 2.3), written in the release layout of SPEC 2.1.

``write_release(out_dir, papers=N, items=M, seed=S)`` builds, from ``random.Random(S)``
alone, a corpus of N papers with section text plus metadata-only papers, one global
citation graph (with a citation-context sentence for every edge whose citing paper has
text), and M benchmark items in all four cells (single/multi-target x depth 1/2), then
writes ``qa/full.jsonl``, ``graphs/full.jsonl``, ``paper_pool/papers.jsonl`` and
``audit/recall_labels.jsonl``. The same arguments give the same bytes.

How an item is built (see docs/synthetic.md for the guarantees):

* a seed paper with text; a gold paper with text among its first 30 references (depth 1),
  or a bridge with text among them that cites the gold, which the seed does not cite
  (depth 2); multi-target items have two gold papers;
* the answer is a fact string (a value with its unit or dataset, e.g. ``a warm-up of
  4,350 steps``) planted in one section of the gold paper; the three distractors are
  facts of the same kind planted in the seed's text (``seed_only``) and in a non-gold
  neighbour's text (``wrong_paper``), and one stated nowhere (``no_context``). Every fact
  string is unique in the corpus, so a verbatim search tells which paper states it;
* the seed's text cites the gold (or the bridge, whose text cites the gold) with a
  context sentence made of words from the cited paper's title and abstract;
* the question names the gold paper's topic with words from its abstract, never its
  title or any option.

Text is generated paper by paper from a per-paper random stream drawn at planning time,
so ``papers.jsonl`` is streamed and never held in memory as a whole.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import os
import random
import re
from collections.abc import Callable
from pathlib import Path

from agenthop.server.corpus.release import (
    GRAPHS_FILE,
    LABELS_FILE,
    MAX_REFS,
    POOL_FILE,
    QA_FILE,
    REASONING_TYPES,
    RELEASE_FILES,
)

__all__ = ["write_release", "check_release", "RELEASE_FILES"]

ST_SHARE = 568 / 1011  # the published item mix
DISTRACTORS = ("seed_only", "wrong_paper", "no_context")


def _dumps(obj) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


# --------------------------------------------------------------------------------------
# Vocabulary. No string here contains a digit except dataset/baseline names, and no
# sentence template can produce a fact string (facts always carry a number and a unit).
# --------------------------------------------------------------------------------------

AREAS: dict[str, dict[str, list[str]]] = {
    "nlp": {
        "venues": ["ACL", "EMNLP", "NAACL", "ACL", "EMNLP", "ICLR"],
        "tasks": [
            "machine translation", "question answering", "abstractive summarization", "named entity recognition",
            "dependency parsing", "natural language inference", "sentiment analysis", "dialogue generation",
            "relation extraction", "coreference resolution", "semantic parsing", "text classification",
            "language modeling", "reading comprehension", "fact verification", "code generation",
        ],
        "methods": [
            "transformer encoders", "pretrained language models", "sequence-to-sequence models", "retrieval augmentation",
            "adapter modules", "prompt tuning", "instruction tuning", "knowledge distillation", "contrastive learning",
            "data augmentation", "curriculum learning", "mixture of experts", "low-rank adaptation", "span-based decoding",
            "pointer networks", "latent variable models", "back-translation", "multi-task learning",
        ],
        "facets": [
            "low-resource", "multilingual", "robust", "efficient", "interpretable", "few-shot", "long-context",
            "cross-domain", "continual", "zero-shot", "faithful", "controllable", "privacy-preserving", "compositional",
        ],
        "datasets": [
            "SQuAD", "Natural Questions", "TriviaQA", "HotpotQA", "MNLI", "SST-2", "CoNLL-2003", "XSum",
            "CNN/DailyMail", "WMT14 En-De", "WMT16 En-Ro", "FEVER", "OntoNotes", "SuperGLUE", "MultiWOZ", "Spider",
        ],
        "components": [
            "attention layer", "token embedding layer", "decoder", "subword vocabulary", "positional encoding",
            "output projection", "encoder stack", "cross-attention block", "classification head", "memory bank",
        ],
        "metrics": ["accuracy", "exact match", "token-level F1", "BLEU", "ROUGE-L", "perplexity"],
        "baselines": ["BERT", "RoBERTa", "T5", "BART", "GPT-2", "ELECTRA", "XLM-R", "DeBERTa"],
        "objects": ["question-answer pairs", "sentence pairs", "dialogues", "documents", "claims", "utterances"],
        "phenomena": ["long-tail entities", "negated statements", "multi-sentence inputs", "code-switched text", "rare word senses", "nested mentions"],
        "units": ["generated token", "query", "document"],
    },
    "vision": {
        "venues": ["CVPR", "ECCV", "CVPR", "ECCV", "NeurIPS", "ICLR"],
        "tasks": [
            "image classification", "object detection", "semantic segmentation", "instance segmentation",
            "pose estimation", "depth estimation", "image generation", "video recognition",
            "visual question answering", "image captioning", "domain adaptation", "few-shot recognition",
            "optical flow estimation", "image retrieval",
        ],
        "methods": [
            "convolutional networks", "vision transformers", "diffusion models", "generative adversarial networks",
            "self-supervised pretraining", "masked autoencoders", "feature pyramids", "attention modules",
            "knowledge distillation", "neural architecture search", "mixup augmentation", "deformable convolutions",
            "token pruning", "contrastive pretraining", "implicit neural representations",
        ],
        "facets": [
            "real-time", "open-vocabulary", "weakly supervised", "self-supervised", "label-efficient", "high-resolution",
            "domain-adaptive", "geometry-aware", "robust", "efficient", "few-shot", "long-tailed", "unsupervised", "fine-grained",
        ],
        "datasets": [
            "ImageNet", "COCO", "Cityscapes", "ADE20K", "Pascal VOC", "CIFAR-100", "Kinetics-400", "KITTI", "LVIS",
            "NYU Depth", "Places365", "CUB-200",
        ],
        "components": [
            "backbone", "feature pyramid", "detection head", "patch embedding", "mask decoder", "region proposal network",
            "normalisation layer", "skip-connection scheme", "anchor generator", "latent code",
        ],
        "metrics": ["top-one accuracy", "mean average precision", "mean IoU", "FID", "recall at one"],
        "baselines": ["ResNet", "ViT", "Swin", "DETR", "Mask R-CNN", "U-Net", "ConvNeXt", "YOLO"],
        "objects": ["labelled images", "annotated frames", "bounding boxes", "segmentation masks", "video clips", "image-caption pairs"],
        "phenomena": ["occluded objects", "small objects", "night-time scenes", "rare categories", "motion blur", "cluttered backgrounds"],
        "units": ["image", "frame", "video clip"],
    },
    "rl": {
        "venues": ["NeurIPS", "ICML", "ICLR", "NeurIPS", "ICML"],
        "tasks": [
            "continuous control", "offline reinforcement learning", "multi-agent coordination", "exploration",
            "imitation learning", "model-based planning", "robotic manipulation", "game playing", "reward learning",
            "hierarchical control", "policy evaluation", "navigation",
        ],
        "methods": [
            "policy gradients", "actor-critic methods", "Q-learning", "world models", "trust region optimisation",
            "Monte Carlo tree search", "intrinsic motivation", "behaviour cloning", "successor features",
            "distributional critics", "ensemble critics", "latent dynamics models", "option discovery", "population-based training",
        ],
        "facets": [
            "offline", "sample-efficient", "safe", "model-based", "multi-task", "goal-conditioned", "risk-sensitive",
            "hierarchical", "reward-free", "partially observable", "continual", "robust", "decentralised", "curiosity-driven",
        ],
        "datasets": [
            "Atari", "MuJoCo HalfCheetah", "D4RL", "Procgen", "DeepMind Control Suite", "Meta-World", "NetHack",
            "StarCraft Multi-Agent Challenge", "MiniGrid", "Habitat", "CARLA",
        ],
        "components": [
            "critic", "replay buffer", "policy head", "value function", "reward model", "target network",
            "exploration bonus", "dynamics model", "state encoder", "advantage estimator",
        ],
        "metrics": ["average return", "success rate", "normalised score", "regret", "sample efficiency"],
        "baselines": ["PPO", "SAC", "DQN", "TD3", "CQL", "DreamerV2", "IMPALA", "Rainbow"],
        "objects": ["logged episodes", "expert demonstrations", "state transitions", "preference queries", "trajectories", "reward annotations"],
        "phenomena": ["sparse rewards", "distribution shift", "long horizons", "deceptive rewards", "stochastic transitions", "unseen layouts"],
        "units": ["environment step", "episode", "planning call"],
    },
    "ir": {
        "venues": ["SIGIR", "SIGIR", "SIGIR", "EMNLP", "ACL", "NeurIPS"],
        "tasks": [
            "passage retrieval", "document ranking", "query expansion", "conversational search", "recommendation",
            "entity linking", "question retrieval", "cross-lingual retrieval", "learned sparse retrieval", "click modelling",
            "query auto-completion", "product search",
        ],
        "methods": [
            "dual encoders", "cross-encoder rerankers", "dense retrieval", "late interaction", "query likelihood models",
            "pseudo-relevance feedback", "hard negative mining", "product quantisation", "learning to rank",
            "knowledge distillation", "generative retrieval", "graph neural recommenders", "session encoders",
        ],
        "facets": [
            "neural", "dense", "sparse", "conversational", "multilingual", "zero-shot", "efficient", "personalised",
            "federated", "session-aware", "explainable", "cold-start", "domain-specific", "unsupervised",
        ],
        "datasets": [
            "MS MARCO", "TREC Deep Learning", "BEIR", "Natural Questions", "Robust04", "LoTTE", "MIRACL", "TREC-COVID",
            "MovieLens", "Amazon Reviews", "Yelp", "CAsT",
        ],
        "components": [
            "query encoder", "passage encoder", "inverted index", "reranker", "candidate pool", "embedding table",
            "scoring function", "document expander", "user embedding table", "interaction matrix",
        ],
        "metrics": ["MRR", "nDCG", "recall", "mean average precision", "hit rate"],
        "baselines": ["BM25", "DPR", "ColBERT", "ANCE", "SPLADE", "monoBERT", "LightGCN", "Contriever"],
        "objects": ["relevance judgements", "query-document pairs", "search sessions", "user interactions", "annotated queries", "click logs"],
        "phenomena": ["rare queries", "long documents", "ambiguous queries", "vocabulary mismatch", "new users", "tail items"],
        "units": ["query", "session", "request"],
    },
    "graph": {
        "venues": ["NeurIPS", "ICML", "ICLR", "NeurIPS", "ICLR"],
        "tasks": [
            "node classification", "link prediction", "graph classification", "molecular property prediction",
            "knowledge graph completion", "community detection", "graph generation", "traffic forecasting",
            "subgraph matching", "entity alignment",
        ],
        "methods": [
            "graph convolutional networks", "graph attention networks", "message passing networks", "graph transformers",
            "spectral filters", "graph autoencoders", "random-walk embeddings", "positional encodings",
            "graph pooling", "contrastive graph learning", "neural ordinary differential equations", "diffusion kernels",
        ],
        "facets": [
            "scalable", "heterogeneous", "dynamic", "inductive", "self-supervised", "explainable", "robust",
            "equivariant", "expressive", "temporal", "federated", "hyperbolic", "semi-supervised", "signed",
        ],
        "datasets": ["Cora", "Citeseer", "PubMed", "ogbn-arxiv", "ogbn-products", "ZINC", "QM9", "FB15k-237", "WN18RR", "Reddit", "PEMS-BAY"],
        "components": [
            "adjacency matrix", "node embedding layer", "readout function", "edge encoder", "aggregation operator",
            "message function", "neighbour sampler", "graph coarsening step", "attention scorer", "update function",
        ],
        "metrics": ["accuracy", "ROC-AUC", "MRR", "Hits at ten", "mean absolute error"],
        "baselines": ["GCN", "GAT", "GraphSAGE", "GIN", "SGC", "APPNP", "TransE", "RotatE"],
        "objects": ["labelled nodes", "molecules", "knowledge-graph triples", "temporal edges", "annotated subgraphs", "sensor readings"],
        "phenomena": ["heterophilous neighbourhoods", "high-degree nodes", "unseen nodes", "over-smoothed layers", "noisy edges", "long-range dependencies"],
        "units": ["graph", "mini-batch", "query"],
    },
}
AREA_NAMES = list(AREAS)
AREA_WEIGHTS = [0.3, 0.22, 0.16, 0.16, 0.16]

FIRST_NAMES = (
    "Aisha Alejandro Amir Ana Anders Ayumi Bao Beatriz Carlos Chen Chiara Daniel David Dmitri Elena Emma Farah Felix "
    "Fatima Gabriel Hana Hiroshi Ines Ivan Jakob James Jia Jonas Julia Kavya Kenji Lars Laura Lea Li Lucas Maria Mateo "
    "Mei Mohammed Nadia Naveen Nikolai Noah Olga Omar Pablo Priya Qiang Rahul Rosa Sara Sebastian Shreya Sofia Tariq "
    "Thomas Ujjwal Valentina Wei Xin Yara Yusuf Zhang Zoe"
).split()
LAST_NAMES = (
    "Abdi Achterberg Baptiste Becker Bianchi Chen Costa Dubois Eriksson Fernandes Fischer Garcia Gupta Haddad Hansen "
    "Hoffmann Huang Ibrahim Ivanova Jensen Kato Kim Kowalski Kumar Larsen Lee Li Lopez Martin Meyer Moreau Nakamura "
    "Nguyen Novak Okafor Olsen Park Petrov Rossi Sato Schmidt Silva Singh Sokolov Suzuki Tanaka Tran Varga Wang Weber "
    "Wong Wu Xu Yamamoto Yilmaz Zhang Zhao Zhou"
).split()
SYLLABLES = "ra ko mi lu te sa vi no ze qua fa di bo xe pi ha ju ca ne to gra lex tri mo rel dex spa vor".split()

HEADERS = {
    "intro": ["Introduction"],
    "related": ["Related Work", "Background", "Related Work and Background", "Prior Work"],
    "method": ["Method", "Approach", "Methodology", "Proposed Method", "Model", "Our Approach"],
    "data": ["Dataset", "Data Collection", "Benchmark Construction", "Data"],
    "setup": ["Experimental Setup", "Experiments", "Implementation Details", "Training Details", "Experimental Settings"],
    "results": ["Results", "Main Results", "Results and Discussion", "Evaluation"],
    "analysis": ["Analysis", "Ablation Study", "Ablations", "Error Analysis", "Further Analysis"],
    "discussion": ["Discussion", "Limitations", "Discussion and Limitations"],
    "conclusion": ["Conclusion", "Conclusions", "Conclusion and Future Work"],
    "apdx_proofs": ["Proofs", "Theoretical Analysis"],
    "apdx_hparams": ["Hyperparameters", "Implementation Details", "Training Configuration"],
    "apdx_results": ["Additional Results", "Extended Results"],
    "apdx_data": ["Dataset Details", "Annotation Guidelines"],
    "apdx_examples": ["Qualitative Examples", "Case Studies"],
}
# (median length in characters) per section type; lengths are log-normal around it.
MEDIAN_LEN = {
    "intro": 4600, "related": 5200, "method": 7800, "data": 4200, "setup": 3800, "results": 6200, "analysis": 5600,
    "discussion": 3000, "conclusion": 2100, "apdx_proofs": 6500, "apdx_hparams": 2800, "apdx_results": 5200,
    "apdx_data": 4200, "apdx_examples": 5200,
}
LONG_CAPABLE = ("method", "analysis", "results", "apdx_proofs", "apdx_results", "apdx_examples")

# Where a fact of each reasoning type sits: preferred section types with weights, then fallbacks.
FACT_SECTIONS = {
    "METHOD": ([("setup", 0.65), ("apdx_hparams", 0.15), ("method", 0.2)], ["method"]),
    "RESULT": ([("results", 0.7), ("analysis", 0.2), ("apdx_results", 0.1)], ["method"]),
    "GROUND": ([("data", 0.6), ("setup", 0.25), ("apdx_data", 0.15)], ["method"]),
    "MOTIVE": ([("intro", 0.7), ("discussion", 0.15), ("related", 0.15)], ["intro"]),
}

# -- sentence templates ---------------------------------------------------------------

GENERIC_SENTENCES = [
    "we observe that {method} interacts with the {component} in ways that matter for {task}.",
    "this design keeps the {component} fixed while the rest of the model adapts to {facet} conditions.",
    "in practice, {facet} settings expose weaknesses that standard {task} benchmarks tend to hide.",
    "a recurring theme is that {method} alone does not account for the behaviour of the {component}.",
    "the comparison with {baseline} is informative because both systems share the same {component}.",
    "we therefore treat {task} as a testbed rather than as an end in itself.",
    "the behaviour on {dataset} mirrors what we see on the remaining benchmarks.",
    "errors concentrate on inputs where the {component} receives little training signal.",
    "our formulation makes the role of the {component} explicit and easy to inspect.",
    "these findings are consistent with the view that {facet} {task} requires more than scale.",
    "replacing {method} with {method2} changes the picture only slightly.",
    "we keep preprocessing identical across systems to isolate the effect of the {component}.",
    "{acr} is designed as a drop-in replacement for the {component} of existing pipelines.",
    "the {metric} is the primary measure, and secondary metrics are discussed where relevant.",
    "one practical advantage is that the {component} can be trained independently of the rest of the system.",
    "we note that {baseline} was tuned with the same budget as {acr}.",
    "qualitatively, the outputs of {acr} are more stable under {facet} shifts.",
    "such trade-offs are common in {task}, where {method} is often the default choice.",
    "the same pattern holds when the {component} is initialised from a pretrained checkpoint.",
    "we discuss the consequences of this choice for {facet} deployments in more detail below.",
    "in contrast to earlier pipelines, no task-specific heuristics are required.",
    "this observation guided several of the design decisions described here.",
    "a closer look at {dataset} reveals a long tail of difficult cases involving {phenomenon}.",
    "most of the gains come from a better use of the {component} rather than from extra parameters.",
    "the analysis in Table {tab} separates these two effects.",
    "Figure {tab} visualises how the {component} evolves during training.",
    "taken together, these choices make {acr} simple to reproduce.",
    "each component is motivated by a specific failure mode of {method}.",
    "the {component} and the {component2} are updated jointly, which simplifies the implementation.",
    "inputs with {phenomenon} remain the hardest category for every system we consider.",
    "for {task}, the cost of the {component} dominates the overall compute.",
    "we found it useful to monitor the {metric} on a held-out portion of {dataset} throughout.",
    "the effect is most visible for {phenomenon}, which {baseline} handles poorly.",
    "a simpler variant without the {component2} performs noticeably worse.",
    "our implementation reuses the {component} of {baseline} wherever possible.",
    "it is worth stressing that {method2} and {method} are complementary rather than competing.",
    "the resulting model is compact enough to be trained on a single machine.",
    "we return to the question of {facet} generalisation when discussing limitations.",
    "several hyperparameters interact, but the {component} is by far the most sensitive.",
    "this makes {acr} applicable to {facet} scenarios that earlier work could not address.",
    "the {component} is shared across all settings of {dataset}, which keeps the comparison fair.",
    "we use {baseline} as the reference system because it is the most widely reproduced one for {task}.",
    "when {phenomenon} are frequent, the {component2} becomes the bottleneck.",
    "a natural question is whether {method2} would benefit from the same treatment of the {component}.",
    "the {metric} on {dataset} is noisy, so we report it alongside a more stable measure.",
    "training curves of {acr} are smoother than those of {baseline}, especially early on.",
    "the {component} is deliberately kept small so that its effect can be measured in isolation.",
    "this holds for {facet} and standard variants of {task} alike.",
    "combining {method} with the {component2} was suggested before but never evaluated on {dataset}.",
    "we verified that the improvements are not an artefact of the {metric} itself.",
    "the gap to {baseline} narrows as more data becomes available, as expected.",
    "a sensitivity study shows that the {component} tolerates a wide range of settings.",
    "the failure cases of {acr} resemble those of {method2}, pointing to a shared limitation.",
    "for {phenomenon}, the {component} alone recovers most of the benefit.",
    "the choice of {dataset} follows common practice in {facet} {task}.",
    "no part of the pipeline depends on properties specific to {dataset}.",
    "we expect the same design to transfer to neighbouring problems such as {task}.",
    "the {component2} adds little overhead compared with the {component}.",
    "under {facet} conditions, {baseline} degrades faster than {acr}.",
    "this is in line with prior reports on {method} for {task}.",
    "we ran each configuration with matched compute to rule out budget effects.",
    "both the {component} and the {component2} are initialised randomly in this experiment.",
    "it is tempting to attribute the gains to {method2}, but the ablations suggest otherwise.",
    "inspecting individual examples from {dataset} confirms this reading.",
]
CONNECTORS = [", and ", "; ", ", whereas ", ", although ", ", while ", "; in addition, ", ", because "]
TYPE_SENTENCES = {
    "intro": [
        "{facet} {task} has attracted growing interest in recent years.",
        "despite steady progress, current systems based on {method} remain brittle when the data is {facet}.",
        "in this paper we introduce {acr}, which revisits {method} from the perspective of {facet} {task}.",
        "our contributions are a new formulation, an efficient training procedure and an extensive evaluation.",
        "we show that a careful treatment of the {component} closes much of the remaining gap.",
        "applications of {task} increasingly require systems that cope with {phenomenon}.",
        "the rest of the paper is organised as follows.",
    ],
    "related": [
        "research on {task} has a long history, and we only review the most relevant directions here.",
        "several works combine {method} with {method2}.",
        "closest to our work are approaches that modify the {component} directly.",
        "our approach differs in that it does not require {facet} supervision.",
        "surveys of {task} document the shift from hand-crafted features to {method}.",
    ],
    "method": [
        "formally, the input is encoded by the {component} into a sequence of representations.",
        "the objective combines a task loss with a regulariser on the {component}.",
        "at inference time, {acr} applies the same {component} without additional cost.",
        "we parameterise the {component} with a lightweight variant of {method}.",
        "the update rule is applied independently to each layer of the {component2}.",
        "this formulation reduces to {baseline} when the {component} is disabled.",
        "intuitively, the {component2} filters the signal that reaches the {component}.",
    ],
    "data": [
        "we collect raw material from publicly available sources and filter it for quality.",
        "annotators follow detailed guidelines with worked examples of {objects}.",
        "disagreements are resolved by an expert adjudicator.",
        "we release the data together with the splits used in this paper.",
        "each of the {objects} is checked for overlap with {dataset}.",
        "the collection deliberately over-represents {phenomenon}.",
    ],
    "setup": [
        "all systems are implemented in the same codebase and share preprocessing.",
        "we tune hyperparameters on the development portion of {dataset}.",
        "results are averaged over several random seeds.",
        "baselines include {baseline} and a tuned system based on {method}.",
        "we use the official evaluation scripts and report the {metric}.",
        "early stopping is based on the {metric} on held-out data.",
    ],
    "results": [
        "{acr} outperforms {baseline} on most benchmarks.",
        "the improvements are largest on {dataset}, where {facet} conditions dominate.",
        "on the remaining datasets the differences are within the variance across seeds.",
        "the gains persist when the {component} is frozen.",
        "baselines built on {method2} trail behind on every metric we consider.",
        "Table {tab} summarises the comparison with all baselines in terms of {metric}.",
    ],
    "analysis": [
        "removing the {component} causes the largest drop.",
        "we vary the size of the {component} and report the trend.",
        "error analysis shows that most remaining mistakes involve {phenomenon}.",
        "the ablation confirms that each component contributes.",
        "we also inspect the {component2} by probing its representations.",
    ],
    "discussion": [
        "our study has several limitations.",
        "the evaluation is restricted to a handful of benchmarks such as {dataset}.",
        "future work could extend {acr} to other forms of {task}.",
        "we have not studied the interaction with {method2} in depth.",
    ],
    "conclusion": [
        "we presented {acr}, an approach to {facet} {task} based on {method}.",
        "experiments on {dataset} show consistent improvements over {baseline}.",
        "we hope this work encourages further research on the {component}.",
    ],
    "apdx_proofs": [
        "the claim follows by induction on the number of layers of the {component}.",
        "we restate the assumptions for completeness.",
        "the bound is tight up to constant factors.",
        "the update of the {component} is a contraction under mild conditions.",
    ],
    "apdx_hparams": [
        "this appendix lists the remaining training details.",
        "all other settings follow the defaults of the public implementation of {baseline}.",
        "we did not tune these values extensively.",
    ],
    "apdx_results": [
        "we report per-dataset results that were omitted from the main text.",
        "the trends match those reported in the main text.",
    ],
    "apdx_data": [
        "we describe the annotation interface and the filtering steps.",
        "examples of {objects} are shown in Figure {tab}.",
    ],
    "apdx_examples": [
        "we show randomly chosen outputs of {acr} and {baseline}.",
        "inputs were not cherry-picked.",
    ],
}
OPENERS = [
    "In our experiments, ", "Empirically, ", "As expected, ", "Interestingly, ", "Moreover, ", "In particular, ",
    "Notably, ", "At the same time, ", "Importantly, ", "In addition, ", "By contrast, ", "Overall, ", "Put differently, ",
]

CONTEXT_TEMPLATES = [
    "earlier work on {task} with {method} established a strong reference point [{i}].",
    "{facet} variants of {task} have been explored with {method} [{i}].",
    "a related line of research applies {method} to {facet} {task} [{i}].",
    "several authors study how {method} behaves on {task} benchmarks [{i}].",
    "our treatment of {facet} settings is inspired by prior work on {task} [{i}].",
    "closely related, {method} was adapted to {task} under {facet} constraints [{i}].",
    "approaches based on {method} remain popular for {task} [{i}].",
    "the {facet} regime of {task} was examined in earlier studies using {method} [{i}].",
    "{method} has also been proposed as a remedy for {facet} {task} [{i}].",
    "an alternative view of {task} emphasises {method} [{i}].",
]
ITEM_CONTEXT = {
    "METHOD": "we follow the training recipe of earlier work on {facet} {task} with {method} [{i}].",
    "RESULT": "strong results were previously reported for {facet} {task} with {method} [{i}].",
    "GROUND": "the data resources used here originate from earlier work on {facet} {task} based on {method} [{i}].",
    "MOTIVE": "our motivation echoes observations made in earlier work on {facet} {task} using {method} [{i}].",
    "BRIDGE": "we build directly on an approach to {facet} {task} based on {method} [{i}].",
}

ABSTRACT_OPEN = [
    "{facet} {task} remains challenging because {reason}.",
    "progress on {facet} {task} is limited by the fact that {reason}.",
    "although {method} has advanced {task}, {facet} settings remain difficult because {reason}.",
]
ABSTRACT_PROPOSE = [
    "we propose {acr_intro}, based on {method}, that targets {facet2} {task}.",
    "we introduce {acr_intro}, which adapts {method} to {facet2} {task}.",
    "this paper presents {acr_intro} to {facet2} {task} built on {method}.",
]
ABSTRACT_MIDDLE = [
    "unlike prior work, {acr} combines {method} with {method2} and a dedicated {component}.",
    "the key idea is to pair {method2} with a {component} that is trained jointly with {method}.",
    "{acr} couples {method2} with a redesigned {component}, keeping the benefits of {method}.",
]
ABSTRACT_RESULTS = [
    "experiments on {dataset} and {dataset2} show that {acr} improves over strong {baseline} baselines.",
    "on {dataset} and {dataset2}, {acr} consistently outperforms {baseline} and related systems.",
    "an evaluation on {dataset} and {dataset2} shows clear gains over {baseline}.",
]
ABSTRACT_CLOSE = [
    "analysis further reveals that the {component} is key to handling {phenomenon}.",
    "we also find that the approach is robust to {phenomenon}.",
    "ablations show that each part of the design contributes to the final quality.",
]
ABSTRACT_TAIL = ["code and data are publicly available.", "we release our code to support further work.", ""]
REASONS = [
    "labelled data is scarce", "models overfit to spurious cues", "inputs vary widely across domains",
    "existing methods scale poorly", "evaluation protocols are inconsistent", "errors compound over long inputs",
    "supervision is noisy", "the search space is very large",
]

TITLE_PATTERNS = [
    "{Acr}: {Facet} {Task} with {Method}",
    "{Facet} {Task} via {Method}",
    "Revisiting {Method} for {Facet} {Task}",
    "On the Role of the {Component} in {Facet} {Task}",
    "{Acr}: Towards {Facet} {Task}",
    "When Does {Method} Help {Facet} {Task}?",
    "Scaling {Method} to {Facet} {Task}",
    "A Simple Baseline for {Facet} {Task}",
    "{Acr}: {Method} for {Task} under {Phenomenon}",
    "Learning {Facet} {Task} from {Objects}",
    "{Method} Meets {Method2}: An Approach to {Task}",
    "Rethinking the {Component} for {Facet} {Task}",
]
SMALL_WORDS = {"a", "an", "the", "of", "for", "to", "in", "on", "with", "and", "via", "from", "under", "at", "by"}


# -- fact kinds ---------------------------------------------------------------------------


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


class Kind:
    """One kind of fact: how to make a value, state it, ask about it and label it."""

    def __init__(self, name, rtype, make, statements, question, short, subheads, what, areas=None, qualified=False):
        self.name = name
        self.rtype = rtype
        self.make: Callable[[random.Random, dict, str | None], str] = make
        self.statements: list[str] = statements
        self.question: str = question  # "{that}" = the referring phrase; "{qual}" = the dataset
        self.short: str = short
        self.subheads: list[str] = subheads
        self.what: str = what
        self.areas = areas
        self.qualified = qualified


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
        name, "RESULT",
        lambda rng, a, q, mp=metric_phrase, v=value: f"{mp} of {v(rng)} on {q}",
        _RESULT_STATEMENTS,
        f"what {question_metric} on {{qual}} did {{that}} report for its full model in its results?",
        f"the {question_metric} on {{qual}}",
        ["Comparison with prior systems", "Headline numbers", "Summary of the evaluation"],
        f"reports the {question_metric} on {{qual}}",
        areas=(area,), qualified=True,
    )


KINDS: list[Kind] = [
    # METHOD
    Kind("warmup", "METHOD", lambda rng, a, q: f"a warm-up of {_n4(rng)} steps",
         ["The learning rate is increased linearly during {f} and decayed afterwards.",
          "Optimisation starts with {f}, after which a cosine schedule takes over.",
          "We found {f} necessary to keep early updates stable."],
         "how long was the learning-rate warm-up in the training setup of {that}?",
         "the learning-rate warm-up", ["Optimisation schedule", "Learning-rate warm-up", "Schedule and warm-up"],
         "states the learning-rate warm-up used for training"),
    Kind("lr", "METHOD", lambda rng, a, q: f"a peak learning rate of {rng.randint(10, 99) / 10:.1f}e-{rng.randint(3, 6)}",
         ["All models are trained with {f} and the AdamW optimiser.",
          "We use {f}, selected on held-out data.",
          "Training uses {f} with linear decay to zero."],
         "what peak learning rate did {that} use in its training setup?",
         "the peak learning rate", ["Optimiser settings", "Optimisation details", "Optimiser configuration"],
         "states the peak learning rate used for training"),
    Kind("batch", "METHOD", lambda rng, a, q: f"a batch size of {rng.randint(100, 999)} examples",
         ["Each update uses {f}, accumulated over several devices when necessary.",
          "We train with {f} throughout.",
          "Unless stated otherwise, we use {f}."],
         "what batch size did {that} use for training?",
         "the training batch size", ["Batching", "Batch construction", "Training batches"],
         "states the batch size used for training"),
    Kind("dropout", "METHOD", lambda rng, a, q: f"a dropout rate of 0.{rng.randint(5, 60):02d} on the {rng.choice(a['components'])}",
         ["Regularisation consists of {f} and weight decay.",
          "To limit overfitting we apply {f}.",
          "We use {f}; higher values slowed convergence."],
         "what dropout configuration did {that} use in its training setup?",
         "the dropout configuration", ["Regularisation setup", "Dropout and weight decay", "Overfitting control"],
         "states the dropout configuration"),
    Kind("size", "METHOD", lambda rng, a, q: f"a hidden size of {rng.randrange(1024, 4097, 32):,} across {rng.choice(LAYER_WORDS)} layers",
         ["The model uses {f}, with the remaining dimensions scaled accordingly.",
          "Our default architecture has {f}.",
          "For the main experiments we settle on {f}."],
         "what model dimensions (hidden size and depth) did {that} use?",
         "the model dimensions", ["Architecture details", "Model configuration", "Network dimensions"],
         "states the hidden size and number of layers"),
    Kind("epochs", "METHOD", lambda rng, a, q: f"a schedule of {rng.randint(10, 99)} epochs on {rng.choice(GPU_WORDS)} GPUs",
         ["Training follows {f}.", "The full model is trained with {f}.", "We use {f} for every configuration."],
         "how long was training, and on how much hardware, in {that}?",
         "the training schedule and hardware", ["Compute budget", "Training budget", "Hardware and schedule"],
         "states the number of epochs and the hardware used"),
    Kind("temperature", "METHOD", lambda rng, a, q: f"a softmax temperature of {_p3(rng)}",
         ["The contrastive objective uses {f}.", "Scores are normalised with {f}.", "We set {f} after a small sweep."],
         "what softmax temperature did {that} use in its training objective?",
         "the softmax temperature", ["Temperature scaling", "Objective details", "Contrastive objective settings"],
         "states the softmax temperature of the training objective", areas=("nlp", "vision", "ir")),
    Kind("discount", "METHOD",
         lambda rng, a, q: f"a discount factor of 0.9{rng.randint(0, 99):02d} with "
                           f"{rng.choice(['one', 'three', 'five', 'ten', 'twenty'])}-step returns",
         ["The agent is trained with {f}.", "Bootstrapped targets use {f}.", "We use {f} in all environments."],
         "what discount factor and return horizon did {that} use?",
         "the discount factor and return horizon", ["Return computation", "Value targets", "Bootstrapping details"],
         "states the discount factor and n-step returns", areas=("rl",)),
    Kind("buffer", "METHOD", lambda rng, a, q: f"a replay buffer holding {rng.randrange(100000, 999001, 1000):,} transitions",
         ["Experience is stored in {f}.", "We use {f} and sample uniformly.", "The off-policy learner draws from {f}."],
         "how large was the replay buffer used by {that}?",
         "the replay buffer size", ["Replay configuration", "Experience replay", "Buffer settings"],
         "states the replay buffer size", areas=("rl",)),
    Kind("negatives", "METHOD", lambda rng, a, q: f"a pool of {rng.randint(100, 999)} hard negatives per query",
         ["Training draws from {f}, refreshed every epoch.", "We mine {f} with the first-stage retriever.", "The loss contrasts each positive with {f}."],
         "how many hard negatives per query did {that} use for training?",
         "the number of hard negatives", ["Negative sampling", "Hard negative mining", "Negative selection"],
         "states the number of hard negatives per query", areas=("ir",)),
    Kind("fanout", "METHOD", lambda rng, a, q: f"a neighbour fan-out of {rng.randint(10, 99)} per hop over {rng.choice(['two', 'three', 'four'])} hops",
         ["Mini-batches are built with {f}.", "The sampler uses {f}.", "We use {f} during training and full neighbourhoods at test time."],
         "what neighbour sampling configuration did {that} use?",
         "the neighbour sampling configuration", ["Sampling details", "Neighbour sampling", "Sampler configuration"],
         "states the neighbour fan-out and number of hops", areas=("graph",)),
    Kind("crop", "METHOD", lambda rng, a, q: (lambda s: f"input crops of {s} by {s} pixels")(rng.randint(112, 999)),
         ["Images are resized and we train on {f}.", "Augmentation produces {f}.", "We use {f} during training."],
         "what input resolution did {that} train on?",
         "the training input resolution", ["Input resolution", "Augmentation pipeline", "Preprocessing details"],
         "states the input crop size", areas=("vision",)),
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
    Kind("corpus", "GROUND", lambda rng, a, q: f"a collection of {rng.randrange(100000, 999901, 100):,} {rng.choice(a['objects'])}",
         ["The resulting resource comprises {f}.", "After filtering, we retain {f}.", "Our data collection yields {f}."],
         "how large was the data collection that {that} built or used?",
         "the size of the data collection", ["Collection statistics", "Corpus statistics", "Data statistics"],
         "states the size of the data collection"),
    Kind("agreement", "GROUND", lambda rng, a, q: f"an inter-annotator agreement of 0.{rng.randint(40, 95)} among {rng.choice(COUNT_WORDS)} annotators",
         ["The labels are of high quality, with {f}.", "We measure {f} on a doubly annotated subset.", "The labels reach {f}."],
         "what annotation agreement did {that} report for its data?",
         "the annotation agreement", ["Annotation quality", "Agreement study", "Quality control"],
         "states the inter-annotator agreement"),
    Kind("testsplit", "GROUND", lambda rng, a, q: f"a held-out test split of {_n4(rng, 1000, 9999, 1)} {rng.choice(a['objects'])}",
         ["Evaluation uses {f}.", "We reserve {f} that are never seen during development.", "The benchmark provides {f}."],
         "how large was the test split used by {that}?",
         "the size of the test split", ["Data splits", "Evaluation split", "Split construction"],
         "states the size of the held-out test split"),
    Kind("vocab", "GROUND", lambda rng, a, q: f"a vocabulary of {rng.randint(10000, 99999):,} subword units",
         ["Text is tokenised with {f}.", "The tokenizer is trained on the collection and has {f}.", "We use {f} shared across languages."],
         "what vocabulary did {that} build for its data?",
         "the vocabulary size", ["Tokenisation", "Vocabulary construction", "Text preprocessing"],
         "states the vocabulary size", areas=("nlp", "ir")),
    Kind("graphsize", "GROUND", lambda rng, a, q: f"a graph of {rng.randint(10000, 99999):,} nodes and {rng.randint(100000, 999999):,} edges",
         ["The resulting benchmark is {f}.", "After preprocessing we obtain {f}.", "The largest instance is {f}."],
         "how large was the graph that {that} built for its experiments?",
         "the size of the graph", ["Graph statistics", "Graph construction", "Preprocessing statistics"],
         "states the number of nodes and edges", areas=("graph",)),
    # MOTIVE
    Kind("errrate", "MOTIVE", _error_rate,
         _MOTIVE_STATEMENTS,
         "what shortcoming of existing systems motivated {that}?",
         "the motivating shortcoming", ["Motivating study", "A motivating example", "Why existing systems fail"],
         "states the observation that motivates the work"),
    Kind("latency", "MOTIVE", lambda rng, a, q: f"an inference latency of {rng.randint(100, 999)} ms per {rng.choice(a['units'])}",
         _MOTIVE_STATEMENTS,
         "what cost of existing systems did {that} give as motivation?",
         "the motivating cost", ["Cost of current systems", "Efficiency concerns", "Motivating measurements"],
         "states the efficiency problem that motivates the work"),
    Kind("gap", "MOTIVE", lambda rng, a, q: f"a gap of {rng.randint(10, 99) / 10:.1f} points between in-domain and out-of-domain {rng.choice(a['metrics'])}",
         _MOTIVE_STATEMENTS,
         "what generalisation problem motivated {that}?",
         "the motivating generalisation gap", ["Generalisation gap", "Out-of-domain behaviour", "Observed degradation"],
         "states the generalisation gap that motivates the work"),
    Kind("fold", "MOTIVE", _fold,
         _MOTIVE_STATEMENTS,
         "what cost increase did {that} point to as its motivation?",
         "the motivating cost increase", ["Scaling costs", "Resource demands", "Cost analysis"],
         "states the cost increase that motivates the work"),
]
KINDS_BY_NAME = {k.name: k for k in KINDS}


def _kinds_for(rtype: str, area: str) -> list[Kind]:
    return [k for k in KINDS if k.rtype == rtype and (k.areas is None or area in k.areas)]


# --------------------------------------------------------------------------------------
# Papers
# --------------------------------------------------------------------------------------


class Paper:
    __slots__ = (
        "idx", "pid", "arxiv", "has_text", "area", "task", "methods", "facets", "datasets", "acr", "title", "abstract",
        "authors", "year", "venue", "order", "refs", "text_seed", "skeleton", "facts", "blank_arxiv", "ctx_place",
        "subheads", "component", "phenomenon",
    )

    def __init__(self, idx: int):
        self.idx = idx
        self.refs: list[int] = []
        self.facts: list[tuple[int, str, str | None]] = []  # (section index, sentence, subsection header)
        self.skeleton: list[tuple[str, str, int]] = []  # (header, section type, target length)
        self.subheads: list[str] = []
        self.ctx_place: list[int] = []


def _title_case(text: str) -> str:
    words = text.split(" ")
    out = []
    for i, w in enumerate(words):
        if i > 0 and w in SMALL_WORDS:
            out.append(w)
        elif w[:1].islower():
            out.append("-".join(p[:1].upper() + p[1:] for p in w.split("-")))
        else:
            out.append(w)
    return " ".join(out)


def _cap(s: str) -> str:
    return s[:1].upper() + s[1:] if s else s


def _acronym(rng: random.Random) -> str:
    word = "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 3)))
    style = rng.random()
    if style < 0.45:
        return word.upper()[:7]
    if style < 0.8:
        return word[:1].upper() + word[1:]
    return word[:2].upper() + word[2:]


def _arxiv_id(rng: random.Random, year: int, used: set[str]) -> str:
    while True:
        month = rng.randint(1, 12)
        yymm = f"{year % 100:02d}{month:02d}"
        num = rng.randint(1, 9999) if year < 2015 else rng.randint(1, 29999)
        aid = f"{yymm}.{num:04d}" if year < 2015 else f"{yymm}.{num:05d}"
        if aid not in used:
            used.add(aid)
            return aid


class _Fill:
    """Fills sentence templates with one paper's vocabulary (own words weighted up)."""

    _SLOT = re.compile(r"\{(\w+)\}")

    def __init__(self, paper: Paper, rng: random.Random):
        area = AREAS[paper.area]
        self.rng = rng
        acr = paper.acr or "our approach"
        self.vocab = {
            "task": [paper.task] * 4 + rng.sample(area["tasks"], 3),
            "method": paper.methods * 2 + rng.sample(area["methods"], 3),
            "method2": area["methods"],
            "facet": paper.facets * 2 + rng.sample(area["facets"], 3),
            "dataset": paper.datasets * 2 + rng.sample(area["datasets"], 3),
            "component": [paper.component] * 3 + area["components"],
            "component2": area["components"],
            "metric": area["metrics"],
            "baseline": area["baselines"],
            "acr": [acr, acr, acr, "the proposed model", "our method"],
            "phenomenon": [paper.phenomenon] * 2 + area["phenomena"],
            "objects": area["objects"],
            "tab": ["1", "2", "3", "4", "5", "6"],
        }

    @classmethod
    def compile(cls, template: str) -> list[tuple[bool, str]]:
        parts = cls._SLOT.split(template)
        return [(i % 2 == 1, p) for i, p in enumerate(parts) if p]

    def sentence(self, parts: list[tuple[bool, str]]) -> str:
        choice = self.rng.choice
        vocab = self.vocab
        return "".join(choice(vocab[p]) if is_slot else p for is_slot, p in parts)


_GENERIC_COMPILED = [_Fill.compile(t) for t in GENERIC_SENTENCES]
_TYPE_COMPILED = {k: [_Fill.compile(t) for t in v] for k, v in TYPE_SENTENCES.items()}
_CONTEXT_COMPILED = [_Fill.compile(t) for t in CONTEXT_TEMPLATES]


def _body_sentence(fill: _Fill, stype: str) -> str:
    rng = fill.rng
    pool = _TYPE_COMPILED.get(stype) if rng.random() < 0.25 else None
    parts = rng.choice(pool or _GENERIC_COMPILED)
    s = fill.sentence(parts)
    if rng.random() < 0.3:
        # A compound sentence: a second generic clause joined to the first.
        second = rng.choice(_GENERIC_COMPILED)
        if not second[0][0] and not second[0][1].startswith(("Table", "Figure")):
            s = s[:-1] + rng.choice(CONNECTORS) + fill.sentence(second)
    if rng.random() < 0.22:
        first_literal = not parts[0][0]
        if first_literal and not s.startswith(("Table", "Figure")):
            return rng.choice(OPENERS) + s
    return _cap(s)


def _paragraph(fill: _Fill, stype: str, n: int) -> list[str]:
    return [_body_sentence(fill, stype) for _ in range(n)]


def _fill_template(template: str, words: dict[str, str]) -> str:
    return _cap(template.format(**words))


# --------------------------------------------------------------------------------------
# The generator
# --------------------------------------------------------------------------------------


class _Synth:
    def __init__(self, n_text: int, n_items: int, seed: int):
        self.seed = seed
        self.rng = random.Random(seed)
        self.n_text = n_text
        self.n_items = n_items
        self.papers: list[Paper] = []
        self.facts_used: set[str] = set()
        self.facts_by_kind: dict[str, list[str]] = {}
        self.ctx_override: dict[tuple[int, int], str] = {}
        self.protected: set[tuple[int, int]] = set()
        self.forbidden: set[tuple[int, int]] = set()
        self.items: list[dict] = []
        self.forced = 0

    # -- papers ---------------------------------------------------------------------

    def make_papers(self) -> None:
        rng = self.rng
        n_text = self.n_text
        n_meta = int(round(n_text * 1.45))
        total = n_text + n_meta
        # Interleave text and metadata-only papers deterministically.
        kinds = [True] * n_text + [False] * n_meta
        rng.shuffle(kinds)
        titles: set[str] = set()
        arxiv_used: set[str] = set()
        text_years = list(range(2012, 2026))
        text_w = [1, 1, 2, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 8]
        meta_years = list(range(2010, 2026))
        meta_w = [3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 7, 7, 7, 7, 6, 4]
        for idx in range(total):
            p = Paper(idx)
            p.has_text = kinds[idx]
            p.pid = hashlib.sha1(f"agenthop-synth/{self.seed}/paper/{idx}".encode()).hexdigest()
            p.area = rng.choices(AREA_NAMES, AREA_WEIGHTS)[0]
            area = AREAS[p.area]
            p.task = rng.choice(area["tasks"])
            p.methods = rng.sample(area["methods"], 2)
            p.facets = rng.sample([f for f in area["facets"] if f.split("-")[0] not in p.task], 2)
            p.datasets = rng.sample(area["datasets"], 2)
            p.component = rng.choice(area["components"])
            p.phenomenon = rng.choice(area["phenomena"])
            p.acr = _acronym(rng) if rng.random() < 0.7 else None
            p.year = rng.choices(text_years, text_w)[0] if p.has_text else rng.choices(meta_years, meta_w)[0]
            p.venue = rng.choice(area["venues"])
            p.authors = [f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}" for _ in range(rng.choice([1, 2, 2, 3, 3, 3, 4, 4, 5, 6, 8]))]
            p.title = self._title(p, rng, titles)
            p.abstract = self._abstract(p, rng)
            p.text_seed = rng.getrandbits(64)
            p.arxiv = _arxiv_id(rng, p.year, arxiv_used) if p.has_text else None
            p.blank_arxiv = (not p.has_text) and rng.random() < 0.15
            if p.has_text:
                p.skeleton = self._skeleton(p, rng)
            self.papers.append(p)
        # Metadata-only papers sometimes lack a year or an abstract, as in the release.
        for p in self.papers:
            if not p.has_text:
                r = rng.random()
                if r < 0.03:
                    p.abstract = ""
                elif r < 0.05:
                    p.year = None
        # A total order consistent with years: citations only go to earlier papers.
        keyed = sorted(self.papers, key=lambda p: (p.year if p.year is not None else rng.randint(2010, 2025), rng.random()))
        for rank, p in enumerate(keyed):
            p.order = rank

    def _title(self, p: Paper, rng: random.Random, titles: set[str]) -> str:
        area = AREAS[p.area]
        for attempt in range(200):
            pattern = rng.choice(TITLE_PATTERNS)
            acr = p.acr or _acronym(rng)
            if "{Acr}" in pattern and p.acr is None:
                continue
            words = {
                "Acr": acr, "Facet": p.facets[0], "Task": p.task, "Method": p.methods[0], "Method2": p.methods[1],
                "Component": p.component, "Phenomenon": p.phenomenon, "Objects": rng.choice(area["objects"]),
            }
            title = _title_case(pattern.format(**words))
            if attempt > 100:
                title = f"{title} ({_acronym(rng)})" if "{Acr}" not in pattern else title
            if title not in titles:
                titles.add(title)
                return title
        raise RuntimeError("could not make a unique title")

    def _abstract(self, p: Paper, rng: random.Random) -> str:
        words = {
            "facet": p.facets[0], "facet2": p.facets[1], "task": p.task, "method": p.methods[0], "method2": p.methods[1],
            "acr": p.acr or "the proposed approach", "acr_intro": p.acr or "a new approach",
            "component": p.component, "phenomenon": p.phenomenon,
            "dataset": p.datasets[0], "dataset2": p.datasets[1], "baseline": rng.choice(AREAS[p.area]["baselines"]),
            "reason": rng.choice(REASONS),
        }
        parts = [
            rng.choice(ABSTRACT_OPEN), rng.choice(ABSTRACT_PROPOSE), rng.choice(ABSTRACT_MIDDLE),
            rng.choice(ABSTRACT_RESULTS), rng.choice(ABSTRACT_CLOSE), rng.choice(ABSTRACT_TAIL),
        ]
        sentences = [_fill_template(t, words) for t in parts if t]
        return " ".join(sentences)

    def _skeleton(self, p: Paper, rng: random.Random) -> list[tuple[str, str, int]]:
        stypes = ["intro"]
        if rng.random() < 0.9:
            stypes.append("related")
        stypes.append("method")
        if rng.random() < 0.35:
            stypes.append("data")
        if rng.random() < 0.85:
            stypes.append("setup")
        if rng.random() < 0.95:
            stypes.append("results")
        if rng.random() < 0.6:
            stypes.append("analysis")
        if rng.random() < 0.3:
            stypes.append("discussion")
        if rng.random() < 0.95:
            stypes.append("conclusion")
        apdx: list[str] = []
        if rng.random() < 0.45:
            apdx = rng.sample(["apdx_proofs", "apdx_hparams", "apdx_results", "apdx_data", "apdx_examples"], rng.randint(1, 3))
            apdx.sort(key=["apdx_proofs", "apdx_hparams", "apdx_data", "apdx_results", "apdx_examples"].index)
        used: set[str] = set()
        out = []
        for stype in stypes:
            header = rng.choice(HEADERS[stype])
            if stype == "method" and p.acr and rng.random() < 0.15:
                header = f"The {p.acr} Model"
            if header in used:
                header = next(h for h in HEADERS[stype] + [stype.title()] if h not in used)
            used.add(header)
            out.append((header, stype, self._length(stype, rng)))
        plain = rng.random() < 0.2 and len(apdx) == 1
        for i, stype in enumerate(apdx):
            name = rng.choice(HEADERS[stype])
            header = f"Apdx: {name}" if plain else f"Apdx_{'ABCDE'[i]}: {name}"
            out.append((header, stype, self._length(stype, rng)))
        return out

    @staticmethod
    def _length(stype: str, rng: random.Random) -> int:
        if stype in LONG_CAPABLE and rng.random() < 0.025:
            return rng.randint(18000, 55000)
        return int(min(15000, max(1300, rng.lognormvariate(0, 0.42) * MEDIAN_LEN[stype])))

    # -- citation graph -------------------------------------------------------------

    def make_refs(self) -> None:
        rng = self.rng
        papers = self.papers
        pools: dict[tuple, tuple[list[int], list[int]]] = {}

        def add(key, p):
            pools.setdefault(key, ([], []))
            pools[key][0].append(p.order)
            pools[key][1].append(p.idx)

        for p in sorted(papers, key=lambda q: q.order):
            add(("task", p.area, p.task, p.has_text), p)
            add(("area", p.area, p.has_text), p)
            add(("all", p.has_text), p)

        def older(key, order) -> tuple[list[int], int]:
            entry = pools.get(key)
            if not entry:
                return [], 0
            return entry[1], bisect.bisect_left(entry[0], order)

        for p in papers:
            if p.has_text:
                n = min(MAX_REFS, max(4, int(rng.gauss(25, 7))))
            else:
                n = 0 if rng.random() < 0.12 else min(MAX_REFS, max(1, int(rng.gauss(15, 8))))
            focus = rng.uniform(0.5, 0.92)  # how strongly this paper cites within its own task
            refs: list[int] = []
            seen = {p.idx}
            tries = 0
            while len(refs) < n and tries < n * 4:
                tries += 1
                text = rng.random() < 0.5
                r = rng.random()
                scopes = [("task", p.area, p.task, text), ("area", p.area, text), ("all", text)]
                start = 0 if r < focus else (1 if r < focus + (1 - focus) * 0.8 else 2)
                for key in scopes[start:]:
                    ids, k = older(key, p.order)
                    if k:
                        cand = ids[rng.randrange(k)]
                        break
                else:
                    continue
                if cand in seen:
                    continue
                seen.add(cand)
                refs.append(cand)
            p.refs = refs

    # -- facts ----------------------------------------------------------------------

    def new_fact(self, kind: Kind, area: str, qual: str | None) -> str:
        rng = self.rng
        bucket = self.facts_by_kind.setdefault(kind.name, [])
        for _ in range(500):
            fact = kind.make(rng, AREAS[area], qual)
            if fact in self.facts_used:
                continue
            if any(fact in g or g in fact for g in bucket):
                continue
            self.facts_used.add(fact)
            bucket.append(fact)
            return fact
        raise RuntimeError(f"fact kind {kind.name} exhausted")

    def pick_section(self, p: Paper, rtype: str, rng: random.Random) -> int:
        prefs, fallback = FACT_SECTIONS[rtype]
        stypes = [s for _, s, _ in p.skeleton]
        present = [(s, w) for s, w in prefs if s in stypes]
        if present:
            stype = rng.choices([s for s, _ in present], [w for _, w in present])[0]
        else:
            stype = next(s for s in fallback if s in stypes)
        return stypes.index(stype)

    def plant(self, p: Paper, kind: Kind, fact: str, sec: int, subhead: str | None = None) -> None:
        sentence = self.rng.choice(kind.statements).format(f=fact)
        p.facts.append((sec, sentence, subhead))

    def choose_subhead(self, p: Paper, kind: Kind) -> str | None:
        headers = {h.lower() for h, _, _ in p.skeleton}
        for sh in self.rng.sample(kind.subheads, len(kind.subheads)):
            if sh not in p.subheads and sh.lower() not in headers:
                p.subheads.append(sh)
                return sh
        return None

    # -- items ----------------------------------------------------------------------

    def text_refs(self, p: Paper) -> list[int]:
        return [r for r in p.refs if self.papers[r].has_text]

    def neighbourhood(self, seed: Paper) -> list[int]:
        seen = {seed.idx: None}
        for r in seed.refs:
            seen.setdefault(r, None)
        for r in seed.refs:
            for r2 in self.papers[r].refs:
                seen.setdefault(r2, None)
        return list(seen)

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

    def _older_text(self, than: Paper, exclude: set[int], rng: random.Random, prefer_area: bool = True) -> Paper | None:
        cands = [
            q for q in self.papers
            if q.has_text and q.order < than.order and q.idx not in exclude and (than.idx, q.idx) not in self.forbidden
        ]
        if prefer_area:
            same = [q for q in cands if q.area == than.area]
            cands = same or cands
        return rng.choice(cands) if cands else None

    def find_chain(self, mt: bool, depth: int, seed: Paper, rng: random.Random):
        """Natural (bridge, golds) for this seed, or None."""
        trefs = self.text_refs(seed)
        need = 2 if mt else 1

        def near(cands: list[int], to: Paper) -> list[int]:
            # Prefer papers of the citing paper's area, as real chains mostly stay in a field.
            same = [c for c in cands if self.papers[c].area == to.area]
            return same if len(same) >= need else cands

        if depth == 1:
            if len(trefs) < need:
                return None
            return None, rng.sample(near(trefs, seed), need)
        refset = set(seed.refs)
        options = []
        for b in near(trefs, seed):
            golds = [g for g in self.text_refs(self.papers[b]) if g not in refset and g != seed.idx and (seed.idx, g) not in self.forbidden]
            if len(golds) >= need:
                options.append((b, near(golds, self.papers[b])))
        if not options:
            return None
        b, golds = rng.choice(options)
        return b, rng.sample(golds, need)

    def force_chain(self, mt: bool, depth: int, seed: Paper, rng: random.Random):
        need = 2 if mt else 1
        self.forced += 1
        if depth == 1:
            golds = []
            for _ in range(need):
                g = self._older_text(seed, {seed.idx, *golds}, rng)
                if g is None:
                    return None
                golds.append(g.idx)
            for g in golds:
                if (seed.idx, g) in self.forbidden:
                    return None
                self._force_ref(seed, self.papers[g])
            return None, golds
        b = self._older_text(seed, {seed.idx}, rng)
        if b is None:
            return None
        golds = []
        for _ in range(need):
            g = self._older_text(b, {seed.idx, b.idx, *golds}, rng)
            if g is None or (seed.idx, g.idx) in self.protected:
                return None
            golds.append(g.idx)
        self._force_ref(seed, b)
        for g in golds:
            self._force_ref(b, self.papers[g])
            if g in seed.refs:
                seed.refs.remove(g)
        return b.idx, golds

    def plan_items(self) -> None:
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
        seeds_all = [p for p in self.papers if p.has_text and len(p.refs) >= 6]
        seeds_all.sort(key=lambda p: -p.order)
        recent = seeds_all[: max(len(seeds_all) * 3 // 4, 1)]
        rng.shuffle(recent)
        used_seeds: set[int] = set()
        for number, (mt, depth, rtype) in enumerate(cells, start=1):
            item = self.plan_item(number, mt, depth, rtype, recent, used_seeds, rng)
            self.items.append(item)

    def plan_item(self, number, mt, depth, rtype, seeds, used_seeds, rng) -> dict:
        chain = None
        seed = None
        for pass_ in range(2):
            for s in seeds:
                if pass_ == 0 and s.idx in used_seeds:
                    continue
                chain = self.find_chain(mt, depth, s, rng)
                if chain:
                    seed = s
                    break
            if chain:
                break
        if chain is None:
            for s in seeds:
                chain = self.force_chain(mt, depth, s, rng)
                if chain:
                    seed = s
                    break
        if chain is None:
            raise RuntimeError("corpus too small to build an item; use more papers")
        used_seeds.add(seed.idx)
        bridge_idx, gold_idx = chain
        bridge = self.papers[bridge_idx] if bridge_idx is not None else None
        golds = [self.papers[g] for g in gold_idx]
        # Protect the chain: later forced edits must keep it intact.
        if bridge is None:
            for g in golds:
                self.protected.add((seed.idx, g.idx))
        else:
            self.protected.add((seed.idx, bridge.idx))
            for g in golds:
                self.protected.add((bridge.idx, g.idx))
                self.forbidden.add((seed.idx, g.idx))
        chain_ids = {seed.idx, *gold_idx} | ({bridge.idx} if bridge else set())
        wrong = self.pick_wrong(seed, chain_ids, golds[0], rng)

        # Kinds and facts.
        kinds = []
        for g in golds:
            pool = [k for k in _kinds_for(rtype, g.area) if k not in kinds] or _kinds_for(rtype, g.area)
            kinds.append(rng.choice(pool))
        quals = [rng.choice(g.datasets) if k.qualified else None for k, g in zip(kinds, golds)]
        correct_parts = []
        direct_labels = []
        for k, g, q in zip(kinds, golds, quals):
            fact = self.new_fact(k, g.area, q)
            sec = self.pick_section(g, rtype, rng)
            sub = self.choose_subhead(g, k) if rng.random() < 0.13 else None
            self.plant(g, k, fact, sec, sub)
            correct_parts.append(fact)
            direct_labels.append((g, sec, sub, k, q))

        def stated_in(paper: Paper, which: list[int]) -> list[str]:
            parts = list(correct_parts)
            for i in which:
                fact = self.new_fact(kinds[i], golds[i].area, quals[i])
                self.plant(paper, kinds[i], fact, self.pick_section(paper, rtype, rng))
                parts[i] = fact
            return parts

        def nowhere(which: list[int]) -> list[str]:
            parts = list(correct_parts)
            for i in which:
                parts[i] = self.new_fact(kinds[i], golds[i].area, quals[i])
            return parts

        if mt:
            modes = [[0], [1], rng.choice([[0], [1], [0, 1]])]
            rng.shuffle(modes)
        else:
            modes = [[0], [0], [0]]
        options_parts = {
            "correct": correct_parts,
            "seed_only": stated_in(seed, modes[0]),
            "wrong_paper": stated_in(wrong, modes[1]),
            "no_context": nowhere(modes[2]),
        }
        order = ["correct", *DISTRACTORS]
        rng.shuffle(order)
        options = ["; ".join(options_parts[t]) for t in order]

        # Citation contexts along the chain.
        if bridge is None:
            for g in golds:
                self.override_context(seed, g, rtype)
        else:
            self.override_context(seed, bridge, "BRIDGE")
            for g in golds:
                self.override_context(bridge, g, rtype)

        question = self.question(mt, depth, rtype, kinds, quals, golds, bridge, rng)
        prefix = "mt" if mt else "st"
        width = max(4, len(str(self.n_items)))
        item_id = f"{prefix}_{number:0{width}d}"
        tier = rng.choices(["gold", "silver", "bronze"], [0.5, 0.3, 0.2])[0]
        skill = rng.choice(["synthesize", "contrast", "synthesize", "reason"] if mt else ["retrieve", "retrieve", "reason", "assess", "justify"])
        return {
            "id": item_id, "mt": mt, "depth": depth, "rtype": rtype, "skill": skill, "tier": tier,
            "question": question, "options": options, "correct_index": order.index("correct"), "distractor_types": order,
            "seed": seed.idx, "golds": gold_idx, "bridge": bridge.idx if bridge else None, "wrong": wrong.idx,
            "direct": direct_labels, "kinds": [k.name for k in kinds], "label_seed": rng.getrandbits(64),
        }

    def pick_wrong(self, seed: Paper, chain: set[int], gold: Paper, rng: random.Random) -> Paper:
        hood = self.neighbourhood(seed)
        cands = [i for i in hood if i not in chain and self.papers[i].has_text]
        if cands:
            first = [i for i in cands if i in seed.refs]
            same = [i for i in (first or cands) if self.papers[i].task == gold.task]
            pool = same or first or cands
            w = self.papers[rng.choice(pool)]
        else:
            w = self._older_text(seed, chain, rng)
            if w is None:
                raise RuntimeError("corpus too small to build an item; use more papers")
            self.forced += 1
            self._force_ref(seed, w)
        if w.idx in seed.refs:
            self.protected.add((seed.idx, w.idx))
        else:
            via = next(r for r in seed.refs if w.idx in self.papers[r].refs)
            self.protected.add((seed.idx, via))
            self.protected.add((via, w.idx))
        return w

    def override_context(self, citing: Paper, cited: Paper, rtype: str) -> None:
        key = (citing.idx, cited.idx)
        if key in self.ctx_override:
            return
        rng = self.rng
        self.ctx_override[key] = ITEM_CONTEXT[rtype].format(
            facet=rng.choice(cited.facets), task=cited.task, method=rng.choice(cited.methods), i="{i}"
        )

    def topic(self, p: Paper, rng: random.Random) -> str:
        """Words from the abstract naming the paper's topic, never its title."""
        for _ in range(20):
            facet = rng.choice([p.facets[1], p.facets[1], p.facets[0]])
            method = rng.choice([p.methods[1], p.methods[1], p.methods[0]])
            phrase = rng.choice(["{f} {t} with {m}", "{t} in {f} settings using {m}", "{m} for {f} {t}"]).format(f=facet, t=p.task, m=method)
            title = p.title.lower()
            core = title.split(": ", 1)[-1]
            if core not in phrase.lower() and phrase.lower() not in title:
                return phrase
        return f"{p.task} using {p.methods[1]}"

    def question(self, mt, depth, rtype, kinds, quals, golds, bridge, rng) -> str:
        if not mt:
            k, q, g = kinds[0], quals[0], golds[0]
            if depth == 1:
                lead = rng.choice([
                    "The seed paper builds on prior work on {t}.",
                    "Among the works the seed paper cites is a study of {t}.",
                    "The seed paper relies on earlier research on {t}.",
                ]).format(t=self.topic(g, rng))
                that = "that work"
            else:
                lead = rng.choice([
                    "The seed paper builds on a study of {b}, which in turn draws on earlier work on {t}.",
                    "A paper the seed cites, on {b}, relies on an earlier study of {t}.",
                ]).format(b=self.topic(bridge, rng), t=self.topic(g, rng))
                that = "that earlier work"
            ask = k.question.format(that=that, qual=q)
            return f"{lead} {_cap(ask)}"
        t1, t2 = self.topic(golds[0], rng), self.topic(golds[1], rng)
        if depth == 1:
            lead = f"The seed paper cites one work on {t1} and another on {t2}."
        else:
            lead = f"The seed paper builds on a study of {self.topic(bridge, rng)}, which cites one work on {t1} and another on {t2}."
        s1 = kinds[0].short.format(qual=quals[0])
        s2 = kinds[1].short.format(qual=quals[1])
        return f"{lead} Which option correctly gives {s1} reported by the former and {s2} reported by the latter?"

    # -- finalisation ---------------------------------------------------------------

    def place_contexts(self) -> None:
        """Decide, for each reference of each text paper, which section cites it."""
        for p in self.papers:
            if not p.has_text:
                continue
            rng = random.Random(p.text_seed ^ 0x5BD1E995)
            stypes = [s for _, s, _ in p.skeleton]
            intro = stypes.index("intro")
            related = stypes.index("related") if "related" in stypes else None
            method = stypes.index("method")
            place = []
            for _ in p.refs:
                r = rng.random()
                if related is not None and r < 0.58:
                    place.append(related)
                elif r < 0.9:
                    place.append(intro)
                else:
                    place.append(method)
            p.ctx_place = place

    def contexts(self, p: Paper) -> list[str]:
        rng = random.Random(p.text_seed ^ 0x2545F491)
        out = []
        for pos, r in enumerate(p.refs, start=1):
            override = self.ctx_override.get((p.idx, r))
            if override is not None:
                out.append(_cap(override.format(i=pos)))
                continue
            c = self.papers[r]
            words = {"task": c.task, "method": rng.choice(c.methods), "facet": rng.choice(c.facets), "i": str(pos)}
            out.append(_cap(rng.choice(CONTEXT_TEMPLATES).format(**words)))
        return out

    def sections(self, p: Paper) -> list[dict]:
        rng = random.Random(p.text_seed)
        fill = _Fill(p, rng)
        contexts = self.contexts(p)
        by_sec_ctx: dict[int, list[str]] = {}
        for sec, ctx in zip(p.ctx_place, contexts):
            by_sec_ctx.setdefault(sec, []).append(ctx)
        by_sec_fact: dict[int, list[tuple[str, str | None]]] = {}
        for sec, sentence, sub in p.facts:
            by_sec_fact.setdefault(sec, []).append((sentence, sub))
        out = []
        for si, (header, stype, target) in enumerate(p.skeleton):
            paras: list[list[str]] = []
            size = 0
            while size < target:
                para = _paragraph(fill, stype, rng.randint(3, 8))
                size += sum(len(s) + 1 for s in para) + 1
                paras.append(para)
            for ctx in by_sec_ctx.get(si, ()):
                para = rng.choice(paras)
                para.insert(rng.randint(0, len(para)), ctx)
            blocks = [" ".join(para) for para in paras]
            for sentence, sub in by_sec_fact.get(si, ()):
                filler = _paragraph(fill, stype, rng.randint(1, 4))
                filler.insert(rng.randint(0, len(filler)), sentence)
                block = " ".join(filler)
                if sub:
                    block = f"{sub}\n{block}"
                blocks.insert(rng.randint(1 if sub is None else 0, len(blocks)), block)
            out.append({"header": header, "text": "\n\n".join(blocks)})
        return out

    def node(self, p: Paper) -> dict:
        arxiv = p.arxiv if p.has_text else ("" if p.blank_arxiv else None)
        return {"title": p.title, "arxivId": arxiv, "year": p.year, "abstract": p.abstract, "authors": p.authors, "venue": p.venue}

    # -- output ---------------------------------------------------------------------

    def write(self, out_dir: Path) -> dict:
        for rel in RELEASE_FILES:
            (out_dir / rel).parent.mkdir(parents=True, exist_ok=True)
        papers = self.papers
        node_json: dict[int, str] = {}
        ctx_json: dict[int, str] = {}
        edges_json: dict[int, str] = {}

        def nj(i: int) -> str:
            s = node_json.get(i)
            if s is None:
                s = node_json[i] = _dumps(self.node(papers[i]))
            return s

        stats_nodes: list[int] = []
        meta_share: list[float] = []
        hood_text: list[int] = []
        total_edges = 0
        in_graphs: dict[int, None] = {}
        with open(out_dir / GRAPHS_FILE, "w", encoding="utf-8", newline="\n") as f:
            for item in self.items:
                seed = papers[item["seed"]]
                hood = self.neighbourhood(seed)
                for i in hood:
                    in_graphs.setdefault(i, None)
                node_part = ",".join(f'"{papers[i].pid}":{nj(i)}' for i in hood)
                citing = [seed.idx] + [r for r in seed.refs]
                edge_parts = []
                ctx_parts = []
                for c in citing:
                    cp = papers[c]
                    if not cp.refs:
                        continue
                    total_edges += len(cp.refs)
                    if c not in edges_json:
                        edges_json[c] = _dumps([papers[r].pid for r in cp.refs])
                    edge_parts.append(f'"{cp.pid}":{edges_json[c]}')
                    if cp.has_text:
                        if c not in ctx_json:
                            ctxs = self.contexts(cp)
                            ctx_json[c] = _dumps({papers[r].pid: s for r, s in zip(cp.refs, ctxs)})
                        ctx_parts.append(f'"{cp.pid}":{ctx_json[c]}')
                f.write(f'{{"sample_id":{_dumps(item["id"])},"nodes":{{{node_part}}},"edges":{{{",".join(edge_parts)}}},"contexts":{{{",".join(ctx_parts)}}}}}\n')
                stats_nodes.append(len(hood))
                n_text = sum(1 for i in hood if papers[i].has_text)
                hood_text.append(n_text)
                meta_share.append(1 - n_text / len(hood))
        node_json.clear()
        ctx_json.clear()
        edges_json.clear()

        # Papers: streamed, one at a time.
        section_lengths = [0] * 6  # <2K, 2-15K, 15-30K, 30-60K, >60K, count
        with open(out_dir / POOL_FILE, "w", encoding="utf-8", newline="\n") as f:
            for p in papers:
                if not p.has_text:
                    continue
                secs = self.sections(p)
                for s in secs:
                    n = len(s["text"])
                    section_lengths[0 if n < 2000 else 1 if n <= 15000 else 2 if n <= 30000 else 3 if n <= 60000 else 4] += 1
                    section_lengths[5] += 1
                f.write(_dumps({"arxiv_id": p.arxiv, "title": p.title, "sections": secs}) + "\n")

        with open(out_dir / QA_FILE, "w", encoding="utf-8", newline="\n") as f:
            for item in self.items:
                f.write(_dumps(self.qa_record(item)) + "\n")
        with open(out_dir / LABELS_FILE, "w", encoding="utf-8", newline="\n") as f:
            for item in self.items:
                f.write(_dumps({"sample_id": item["id"], "analysis": {"section_recall_labels": self.labels(item)}}) + "\n")

        cells = {"ST-d1": 0, "ST-d2": 0, "MT-d1": 0, "MT-d2": 0}
        for item in self.items:
            cells[f"{'MT' if item['mt'] else 'ST'}-d{item['depth']}"] += 1
        file_bytes = {rel: os.path.getsize(out_dir / rel) for rel in RELEASE_FILES}
        n_meta_in_graphs = sum(1 for i in in_graphs if not papers[i].has_text)
        stats_nodes_sorted = sorted(stats_nodes)
        return {
            "seed": self.seed,
            "papers_with_text": self.n_text,
            "metadata_only_papers": n_meta_in_graphs,
            "metadata_only_generated": sum(1 for p in papers if not p.has_text),
            "papers_in_graphs": len(in_graphs),
            "edges": total_edges,
            "unique_edges": sum(len(p.refs) for p in papers),
            "items": len(self.items),
            "items_per_cell": cells,
            "items_by_reasoning_type": {rt: sum(1 for it in self.items if it["rtype"] == rt) for rt in REASONING_TYPES},
            "nodes_per_item": {
                "mean": round(sum(stats_nodes) / max(len(stats_nodes), 1), 1),
                "min": stats_nodes_sorted[0] if stats_nodes else 0,
                "median": stats_nodes_sorted[len(stats_nodes) // 2] if stats_nodes else 0,
                "max": stats_nodes_sorted[-1] if stats_nodes else 0,
            },
            "text_nodes_per_item_median": sorted(hood_text)[len(hood_text) // 2] if hood_text else 0,
            "metadata_only_share": round(sum(meta_share) / max(len(meta_share), 1), 3),
            "sections": section_lengths[5],
            "sections_by_length": dict(zip(("<2K", "2K-15K", "15K-30K", "30K-60K", ">60K"), section_lengths)),
            "forced_edits": self.forced,
            "bytes": sum(file_bytes.values()),
            "file_bytes": file_bytes,
        }

    def qa_record(self, item: dict) -> dict:
        papers = self.papers
        seed = papers[item["seed"]]
        golds = [papers[g] for g in item["golds"]]
        bridges = [papers[item["bridge"]]] if item["bridge"] is not None else []
        tier = item["tier"]
        return {
            "id": item["id"],
            "question_type": "multi-target" if item["mt"] else "single-target",
            "depth": item["depth"],
            "reasoning_type": item["rtype"],
            "cognitive_skill": item["skill"],
            "venue": seed.venue,
            "consensus_tier": tier,
            "question": item["question"],
            "options": item["options"],
            "correct_index": item["correct_index"],
            "distractor_types": item["distractor_types"],
            "seed_paper_id": seed.pid,
            "seed_arxiv_id": seed.arxiv,
            "seed_title": seed.title,
            "gold_paper_ids": [g.pid for g in golds],
            "gold_arxiv_ids": [g.arxiv for g in golds],
            "bridge_paper_ids": [b.pid for b in bridges],
            "bridge_arxiv_ids": [b.arxiv for b in bridges],
            "filter_agreement": 2 if tier == "bronze" else 3,
        }

    def labels(self, item: dict) -> list[dict]:
        papers = self.papers
        rng = random.Random(item["label_seed"])
        out = []
        for g, sec, sub, kind, qual in item["direct"]:
            header = sub or g.skeleton[sec][0]
            out.append({"paper": g.title, "arxiv_id": g.arxiv, "section": header, "relevance": "direct", "what_it_contains": _cap(kind.what.format(qual=qual))})
        seed = papers[item["seed"]]

        def cites(citing: Paper, cited: Paper, what: str) -> None:
            pos = citing.refs.index(cited.idx)
            header = citing.skeleton[citing.ctx_place[pos]][0]
            out.append({"paper": citing.title, "arxiv_id": citing.arxiv, "section": header, "relevance": "supporting", "what_it_contains": what})

        if item["bridge"] is None:
            for g in item["golds"]:
                cites(seed, papers[g], "Cites the target work and says what the seed takes from it")
        else:
            bridge = papers[item["bridge"]]
            cites(seed, bridge, "Cites the bridge paper the seed builds on")
            for g in item["golds"]:
                cites(bridge, papers[g], "Cites the target work and says what the bridge takes from it")
        for g, sec, _sub, _kind, _qual in item["direct"]:
            if rng.random() < 0.35:
                mi = [s for _, s, _ in g.skeleton].index("method")
                if mi != sec:
                    out.append({"paper": g.title, "arxiv_id": g.arxiv, "section": g.skeleton[mi][0], "relevance": "supporting",
                                "what_it_contains": "Describes the approach the fact refers to"})
        return out


def write_release(out_dir: Path, *, papers: int, items: int, seed: int) -> dict:
    """Generate a synthetic benchmark in the release layout (SPEC 2.1) under ``out_dir``.

    ``papers`` papers get section text (about 1.45 times as many metadata-only papers are
    added), ``items`` items are built, and everything is drawn from ``random.Random(seed)``:
    the same arguments give byte-identical files. Returns statistics (counts of papers
    with text and metadata-only papers in graphs, edges summed over item graphs, items per
    cell, neighbourhood sizes, section length bands, bytes per file).
    """
    if papers < 20:
        raise ValueError("papers must be at least 20")
    if items < 1:
        raise ValueError("items must be at least 1")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    synth = _Synth(papers, items, seed)
    synth.make_papers()
    synth.make_refs()
    synth.plan_items()
    synth.place_contexts()
    return synth.write(out_dir)


# --------------------------------------------------------------------------------------
# Checking a release (used by the tests; cheap enough for small releases)
# --------------------------------------------------------------------------------------


def _read_jsonl(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def check_release(release_dir: Path) -> list[str]:
    """Check the synthetic guarantees on a (small) release; return the problems found.

    Loads all text, so use it on small releases. Checks: every option part is stated
    where its distractor kind says and nowhere else, the correct part only in a
    ``direct``-labelled section of its gold paper, no option in the question or in the
    seed's title/abstract, labels resolvable, chain edges present and the graph shape.
    """
    release_dir = Path(release_dir)
    qa = _read_jsonl(release_dir / QA_FILE)
    graphs = {g["sample_id"]: g for g in _read_jsonl(release_dir / GRAPHS_FILE)}
    pool = {p["arxiv_id"]: p for p in _read_jsonl(release_dir / POOL_FILE)}
    labels = {r["sample_id"]: r["analysis"]["section_recall_labels"] for r in _read_jsonl(release_dir / LABELS_FILE)}
    problems: list[str] = []
    full_text = {a: "\n\n".join(s["text"] for s in p["sections"]) for a, p in pool.items()}
    meta_text: list[str] = []
    for g in graphs.values():
        for node in g["nodes"].values():
            meta_text.append(node["title"])
            meta_text.append(node["abstract"] or "")
    all_meta = "\n".join(meta_text)
    questions = "\n".join(it["question"] for it in qa)

    def where(fact: str) -> list[str]:
        return [a for a, t in full_text.items() if fact in t]

    for it in qa:
        iid = it["id"]
        g = graphs.get(iid)
        if g is None:
            problems.append(f"{iid}: no graph")
            continue
        nodes = g["nodes"]
        seed_pid = it["seed_paper_id"]
        if next(iter(nodes)) != seed_pid:
            problems.append(f"{iid}: seed is not the first node")
        pid_arxiv = {pid: (n.get("arxivId") or None) for pid, n in nodes.items()}
        depth1 = g["edges"].get(seed_pid, [])
        for citing, cited in g["edges"].items():
            if citing != seed_pid and citing not in depth1:
                problems.append(f"{iid}: edges from a depth-2 node {citing}")
            if len(cited) > MAX_REFS:
                problems.append(f"{iid}: {citing} has {len(cited)} references")
        for pid in it["gold_paper_ids"] + it["bridge_paper_ids"] + [seed_pid]:
            if pid not in nodes or pid_arxiv.get(pid) not in pool:
                problems.append(f"{iid}: chain paper {pid} missing or without text")
        if it["depth"] == 1:
            for gp in it["gold_paper_ids"]:
                if gp not in depth1:
                    problems.append(f"{iid}: seed does not cite gold")
        else:
            b = it["bridge_paper_ids"][0]
            if b not in depth1:
                problems.append(f"{iid}: seed does not cite bridge")
            for gp in it["gold_paper_ids"]:
                if gp not in g["edges"].get(b, []):
                    problems.append(f"{iid}: bridge does not cite gold")
                if gp in depth1:
                    problems.append(f"{iid}: depth-2 gold is cited by the seed")
        seed_arxiv = it["seed_arxiv_id"]
        gold_arxiv = it["gold_arxiv_ids"]
        # Direct sections of each gold paper.
        direct: dict[str, list[str]] = {}
        for lab in labels.get(iid, []):
            paper = pool.get(lab["arxiv_id"])
            if paper is None:
                problems.append(f"{iid}: label names unknown arXiv ID {lab['arxiv_id']}")
                continue
            headers = [s["header"] for s in paper["sections"]]
            if lab["section"] in headers:
                texts = [paper["sections"][headers.index(lab["section"])]["text"]]
            else:
                texts = [s["text"] for s in paper["sections"] if lab["section"] in s["text"]]
                if len(texts) != 1:
                    problems.append(f"{iid}: label {lab['section']!r} found in {len(texts)} sections of {lab['arxiv_id']}")
            if lab["relevance"] == "direct":
                direct.setdefault(lab["arxiv_id"], []).extend(texts)
        n_parts = len(gold_arxiv)
        correct_parts = it["options"][it["correct_index"]].split("; ")
        if len(correct_parts) != n_parts:
            problems.append(f"{iid}: correct option has {len(correct_parts)} parts")
            continue
        for opt, dtype in zip(it["options"], it["distractor_types"]):
            if opt in it["question"] or opt.lower() in questions.lower():
                problems.append(f"{iid}: option {opt!r} appears in a question")
            parts = opt.split("; ")
            for i, part in enumerate(parts):
                if part in all_meta or part in questions:
                    problems.append(f"{iid}: {part!r} appears in a title/abstract/question")
                hosts = where(part)
                if part == correct_parts[i]:
                    if hosts != [gold_arxiv[i]]:
                        problems.append(f"{iid}: correct part {part!r} stated in {hosts}, expected only {gold_arxiv[i]}")
                    elif not any(part in t for t in direct.get(gold_arxiv[i], [])):
                        problems.append(f"{iid}: correct part {part!r} not in a direct-labelled section")
                    continue
                if dtype == "seed_only":
                    if hosts != [seed_arxiv]:
                        problems.append(f"{iid}: seed_only part {part!r} stated in {hosts}")
                elif dtype == "wrong_paper":
                    if len(hosts) != 1 or hosts[0] in gold_arxiv or hosts[0] == seed_arxiv or hosts[0] in it["bridge_arxiv_ids"]:
                        problems.append(f"{iid}: wrong_paper part {part!r} stated in {hosts}")
                    elif hosts[0] not in pid_arxiv.values():
                        problems.append(f"{iid}: wrong_paper host {hosts[0]} is not in the neighbourhood")
                elif dtype == "no_context":
                    if hosts:
                        problems.append(f"{iid}: no_context part {part!r} stated in {hosts}")
                else:
                    problems.append(f"{iid}: non-correct option typed {dtype!r}")
            if dtype != "seed_only" and seed_arxiv in pool and opt in full_text[seed_arxiv]:
                problems.append(f"{iid}: option {opt!r} ({dtype}) in the seed text")
    return problems
