# Two commands do all set-up on a fresh machine with Python 3.11:
#   make demo   run the benchmark end to end on the committed corpus (no API key), build explore.sqlite and
#               the real-paper release built from it (explore-bench/), and run the baseline on both
#   make test   install what the tests need and run them (.ci/run calls this)
#
# The tests run in two venvs: .venv has the test extras only, so the suite proves the
# project installs and works without inspect-ai; .venv-inspect adds the [inspect] extra
# and runs the tests marked `inspect` (tests/inspect_task/test_inspect_task.py), where a missing
# inspect-ai fails instead of skipping (AGENTHOP_REQUIRE_INSPECT=1).

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
IVENV  := .venv-inspect
IBIN   := $(IVENV)/bin
ISTAMP := $(IVENV)/.installed

# make check: the fast loop before each commit (no root, no npm): lint, format, types, and the tests of no slow kind
# in parallel. make test is the whole suite, as CI runs it.
.PHONY: demo check types test install chromium slurm conformance axe corpus docs clean explore-bench explore-strict explore-research local-model-smoke

# PYTHONWARNINGS: setuptools' editable build warns, in a box, about folders named like the package (the repository's
# own agenthop/ is one, by design); an InformationOnly UserWarning that says nothing to act on, so it is not shown.
EDITABLE := PYTHONWARNINGS=ignore::UserWarning

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(EDITABLE) $(BIN)/pip install --quiet -e ".[test]"
	touch $(STAMP)

$(ISTAMP): pyproject.toml
	$(PYTHON) -m venv $(IVENV)
	$(IBIN)/pip install --quiet --upgrade pip
	$(EDITABLE) $(IBIN)/pip install --quiet -e ".[test,inspect]"
	touch $(ISTAMP)

install: $(STAMP)

demo: $(STAMP) explore.sqlite explore-bench.sqlite
	$(BIN)/agenthop-runner --items splits/demo.jsonl --agent baseline --corpus corpus.sqlite --out runs/demo-baseline --no-resume
	$(BIN)/agenthop-scorer runs/demo-baseline --corpus corpus.sqlite --out report/demo-baseline --view
	$(BIN)/agenthop-runner --items explore-bench/release/qa/full.jsonl --agent baseline --corpus explore-bench.sqlite \
	    --out runs/explore-baseline --no-resume
	$(BIN)/agenthop-scorer runs/explore-baseline --corpus explore-bench.sqlite --out report/explore-baseline --view
	@echo "Next: open report/demo-baseline/report.html (the report; its items link to their sessions) and"
	@echo "  report/demo-baseline/view/index.html (the trajectory viewer) in a browser (the same for real papers under"
	@echo "  report/explore-baseline/), or play an item yourself: $(BIN)/agenthop-server play --items splits/demo.jsonl"

# The HTML report and web page tests drive headless Chromium (Debian's package; needs root or sudo).
chromium:
	@command -v chromium >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

# A single-node Slurm cluster runs the batch script of docs/scale-out.md (tests/runner/test_scale_out.py starts its own
# slurmctld and slurmd from Debian's packages; needs root or sudo).
slurm:
	@command -v slurmctld >/dev/null 2>&1 && command -v slurmd >/dev/null 2>&1 && command -v sbatch >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends slurmctld slurmd slurm-client >/dev/null; }

# The official MCP conformance suite and the TypeScript SDK (tests/server/test_conformance.py), from the npm registry,
# pinned by tests/conformance/package-lock.json (0.1.10 is the newest that runs on Node 20).
CONFORMANCE := tests/conformance/node_modules/.package-lock.json

$(CONFORMANCE): tests/conformance/package-lock.json
	cd tests/conformance && npm ci --no-audit --no-fund --loglevel=error
	touch $@

conformance: $(CONFORMANCE)

# axe-core, the accessibility rules the Chromium page tests run on every page (tests/support/web_common.py), from the npm
# registry, pinned by tests/axe/package-lock.json.
AXE := tests/axe/node_modules/.package-lock.json

$(AXE): tests/axe/package-lock.json
	cd tests/axe && npm ci --no-audit --no-fund --loglevel=error
	touch $@

axe: $(AXE)

check: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	@$(MAKE) --no-print-directory types
	$(BIN)/python -m pytest -q -n 2 -m "$(FAST)"

FAST := not (slow or browser or cluster or conformance or rebuild or inspect)

# mypy over every package, read through a tree of links laid out as installed (tools/type_tree.py says why).
types: $(STAMP)
	@$(BIN)/python tools/type_tree.py > /dev/null
	cd build/types && ../../$(BIN)/mypy --config-file ../../pyproject.toml --cache-dir ../../.mypy_cache

test: $(STAMP) $(ISTAMP) chromium slurm conformance axe
	@$(MAKE) --no-print-directory types
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m pytest -q -m "not inspect"
	AGENTHOP_REQUIRE_INSPECT=1 $(IBIN)/python -m pytest -q -m inspect

# The real-paper explore corpus (2,320 ACL and EMNLP 2016-2018 papers, CC BY 4.0, explore/README.md), built from the
# committed sources by 'corpus build' and checked byte for byte against the committed build's SHA-256.
explore.sqlite: $(STAMP) $(wildcard explore/sources/acl/*.tei.xml.gz explore/sources/emnlp/*.tei.xml.gz) explore/sources/papers.tsv explore/explore.sqlite.sha256
	$(BIN)/python explore/rebuild.py --out explore.sqlite

# The real-paper benchmarks: releases built from explore.sqlite by the offline pipeline (no model, deterministic: the
# same corpus gives the same bytes), imported as SQLite corpora. The settings fit a 2,320-paper corpus of three years
# of two venues (docs/construct.md, "The explore release"); --max-refs 80 because its reference lists count every work
# a paper cites, so a long paper's 60 are not a survey's; --max-chains-per-seed 100 because the offline generator calls
# no model, and 40 sampled away chains it could ask. explore-strict keeps the pipeline's item rules (a hop cites one
# work, a blank reports a finding plainly): 116 items (78 before the corpus's data rules, 47 of those good by strict
# readers). explore-bench relaxes two of them to reach 200 items (289; 206 before, about a
# third good).
# Every rule change rebuilds them.
EXPLORE_BENCH_OPTS := --min-refs 5 --min-overlap 0 --citations-per-year 0.5 --max-refs 80 --max-chains-per-seed 100 --max-cited-together 2 --min-strength 2
EXPLORE_STRICT_OPTS := --min-refs 5 --min-overlap 0 --citations-per-year 0.5 --max-refs 80 --max-chains-per-seed 100

explore-bench.sqlite: $(STAMP) explore.sqlite $(wildcard construct/*.py)
	rm -rf explore-bench  # from scratch: a stage's fingerprint covers its settings and inputs, not the code's rules
	$(BIN)/agenthop-construct run --corpus explore.sqlite --out explore-bench $(EXPLORE_BENCH_OPTS)
	rm -f explore-bench.sqlite
	$(BIN)/agenthop-server corpus import explore-bench/release --out explore-bench.sqlite > /dev/null

explore-strict.sqlite: $(STAMP) explore.sqlite $(wildcard construct/*.py)
	rm -rf explore-strict
	$(BIN)/agenthop-construct run --corpus explore.sqlite --out explore-strict $(EXPLORE_STRICT_OPTS)
	rm -f explore-strict.sqlite
	$(BIN)/agenthop-server corpus import explore-strict/release --out explore-strict.sqlite > /dev/null

# The model-built real-paper release (docs/construct.md, "The research release"): questions, wrong options and filter
# checks written by a model through batch files, rebuilt here from the recorded responses
# (explore/research-responses.jsonl.gz) with no model and no network; a response whose request changed is refused.
# Not yet a benchmark: its filter finds 334 of 342 items answerable from the seed alone, and keeps 8.
EXPLORE_RESEARCH_OPTS := --min-refs 5 --min-overlap 0 --citations-per-year 0 --max-refs 80 --max-chains-per-seed 100 --max-cited-together 2 --any-citation-intent --related-pairs 0.05 --one-item-per-target --generator claude-subagent --filter claude-subagent --attempts 1 --max-qa 450
RESEARCH_RESPONSES := explore/research-responses.jsonl.gz

explore-research.sqlite: $(STAMP) explore.sqlite $(wildcard construct/*.py) $(RESEARCH_RESPONSES)
	rm -rf explore-research
	$(BIN)/agenthop-construct run --corpus explore.sqlite --out explore-research $(EXPLORE_RESEARCH_OPTS) \
	    --replay --responses $(RESEARCH_RESPONSES)
	rm -f explore-research.sqlite
	$(BIN)/agenthop-server corpus import explore-research/release --out explore-research.sqlite > /dev/null

explore-bench: explore-bench.sqlite
explore-strict: explore-strict.sqlite
explore-research: explore-research.sqlite

# Rebuild the committed default corpus and split (a test checks they match).
corpus: $(STAMP)
	$(BIN)/agenthop-server corpus demo --out corpus.sqlite --split splits/demo.jsonl

# Optional, not part of 'make test': a real small model (SmolLM2-135M-Instruct, Apache-2.0) served by llama-cpp-python
# (built from source into .local-model/venv: 10-60 minutes on 2 cores) drives the raw and sdk agents over 2 demo
# items; the runs are scored and their records checked (docs/local-models.md).
local-model-smoke: $(STAMP)
	$(BIN)/python tools/local_model_smoke.py

# Regenerate the generated docs (tests fail while the committed files differ): the CLI reference from each
# command's --help, and the log records' JSON Schema from the pydantic models.
docs: $(STAMP)
	$(BIN)/python tools/cli_reference.py --write
	$(BIN)/agenthop-server log schema > docs/log-format.schema.json

clean:
	rm -rf runs report .pytest_cache
