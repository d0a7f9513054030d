"""The words the synthetic benchmark is written with: areas, names, section headers and sentence templates.

Pure data, no logic. What the rest of the generator relies on:

* no string here contains a digit except dataset and baseline names, so no template can
  produce a fact string (every fact carries a number and a unit, see ``facts.py``);
* no template contains a subsection heading of a fact kind (``Kind.subheads``), so a
  heading found verbatim in a section was planted there (``tests/test_synth.py`` checks);
* the order of every list is part of the output: the generator draws from these lists
  with a seeded random stream, so reordering or editing an entry changes every release.
"""

from __future__ import annotations

# -- research areas ------------------------------------------------------------------------
# Each area gives a paper its task, methods, facets, datasets and the words its text
# borrows. The weights are the share of papers in each area.

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

# -- authors and acronyms ------------------------------------------------------------------

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

# -- section headers -----------------------------------------------------------------------
# Top-level headers per section type, unnumbered as in the release; appendices get an
# "Apdx_A: " or "Apdx: " prefix when a paper is generated (papers.py).

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

# -- body text -----------------------------------------------------------------------------
# "{slot}" names one of text.Fill's word lists (the paper's own words weighted up).
# GENERIC_SENTENCES fit any section, TYPE_SENTENCES one section type.

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
# Sentence openers and clause connectors keep more than 80% of a paper's sentences distinct.
OPENERS = [
    "In our experiments, ", "Empirically, ", "As expected, ", "Interestingly, ", "Moreover, ", "In particular, ",
    "Notably, ", "At the same time, ", "Importantly, ", "In addition, ", "By contrast, ", "Overall, ", "Put differently, ",
]

# -- citation contexts ---------------------------------------------------------------------
# "{i}" becomes the reference number. CONTEXT_TEMPLATES serve every reference;
# ITEM_CONTEXT replaces the sentence on an item's chain, worded for its reasoning type.

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

# -- titles and abstracts ------------------------------------------------------------------
# An abstract is one sentence from each ABSTRACT_* list (the tail may be empty).

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
