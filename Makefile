# Two commands do all set-up on a fresh machine with Python 3.11:
#   make demo   run the benchmark end to end on the committed corpus (no API key)
#   make test   install what the tests need and run them (.ci/run calls this)

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test install chromium corpus clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e ".[test]"
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/agenthop-runner --items splits/demo.jsonl --agent baseline --corpus corpus.sqlite --out runs/demo-baseline --no-resume
	$(BIN)/agenthop-scorer runs/demo-baseline --corpus corpus.sqlite --out report/demo-baseline

# The HTML report and web page tests drive headless Chromium (Debian's package; needs root or sudo).
chromium:
	@command -v chromium >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

test: $(STAMP) chromium
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -q

# Rebuild the committed default corpus and split (a test checks they match).
corpus: $(STAMP)
	$(BIN)/agenthop-server corpus demo --out corpus.sqlite --split splits/demo.jsonl

clean:
	rm -rf runs report .pytest_cache
