# citeqa: `make run` starts the chat UI, `make test` runs the whole suite.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/python -m pip
HOST   ?= 127.0.0.1
PORT   ?= 7860
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false

.PHONY: run test test-fast lint format install install-web install-test browser index eval docs clean

run: $(VENV)/.installed-web
	$(BIN)/citeqa index
	$(BIN)/citeqa serve --host $(HOST) --port $(PORT)

test: $(VENV)/.installed-test browser
	$(BIN)/python -m pytest

# The edit loop: everything but the real model, the browser, Ray and PostgreSQL (`make test` runs them all).
test-fast: $(VENV)/.installed-test
	$(BIN)/python -m pytest -m "not slow and not browser and not ray and not postgres"

# ruff and mypy: the rules, the format and the type checks are in pyproject.toml; .ci/run lints before it tests.
lint: $(VENV)/.installed-test
	$(BIN)/ruff check src tests eval bench
	$(BIN)/ruff format --check src tests eval bench
	$(BIN)/mypy

format: $(VENV)/.installed-test
	$(BIN)/ruff check --fix src tests eval bench
	$(BIN)/ruff format src tests eval bench

# The API reference of the public API (`from citeqa import ...`), as HTML in docs/api/ (not committed);
# tests/app/web/test_api_docs.py renders the same with the same options.
docs: $(VENV)/.installed-test
	$(BIN)/pdoc --docformat restructuredtext --output-directory docs/api citeqa

install: $(VENV)/.installed
install-web: $(VENV)/.installed-web
install-test: $(VENV)/.installed-test

index: $(VENV)/.installed
	$(BIN)/citeqa index

eval: $(VENV)/.installed
	$(BIN)/citeqa index
	$(BIN)/citeqa eval eval/qa.jsonl --report out/eval

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

# torch first, pinned to the CPU build that lies on this machine's disk: an unpinned
# torch would pull a multi-GB CUDA build.
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(PIP) install --quiet torch==2.13.0
	$(PIP) install --quiet -e .
	touch $@

# The web app (`citeqa serve`): the core and the web extra.
$(VENV)/.installed-web: pyproject.toml $(VENV)/.installed
	$(PIP) install --quiet -e '.[web]'
	touch $@

# The test extra holds the web one (the app's tests); the ray extra too: tests marked `ray` run
# `citeqa index --ray` on a real local Ray; and the postgres extra: tests marked `postgres` answer
# from 2 local PostgreSQL nodes (`--backend`).
$(VENV)/.installed-test: pyproject.toml $(VENV)/.installed
	$(PIP) install --quiet -e '.[test,ray,postgres]'
	touch $@

# Debian's Chromium for the browser tests (Playwright drives it; never `playwright install`).
browser:
	@test -x /usr/bin/chromium || { \
	  echo "installing Debian's chromium for the browser tests"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

clean:
	rm -rf $(VENV) index/g-* index/CURRENT index/.lock out
