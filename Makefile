# dpsynth compendium: `make book` builds the book, `make test` runs the tests.
#
#   make venv                 create/update .venv from requirements.lock
#   make lock                 re-resolve requirements.lock from pyproject.toml
#   make notebooks            execute the toc's notebooks/<name>.ipynb into book/ (papermill)
#   make book                 the book from the shipped paper-scale results (results/*.nc; no MCMC)
#   make book SCALE=quick     recompute every study at quick scale (minutes), then build the book
#   make results              recompute the paper scale and rewrite results/*.nc (about 25 min, 2 cores)
#   make test                 lint (ruff) and the whole test suite (pytest)
#   make bench                every benchmarks/bench_*.py
#   make clean                remove build outputs (keeps .venv and data/cache)
#   make distclean            also remove .venv and the result cache data/cache

SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
VPY := $(VENV)/bin/python
UV := $(VENV)/bin/uv
STAMP := $(VENV)/.installed
# the uv that resolved requirements.lock
UV_VERSION ?= 0.13.9

# paper (the original studies' sizes; by default read from the shipped results) or quick (minutes)
SCALE ?= paper
# shipped results (results/*.nc): use (read them, compute nothing), write (recompute and rewrite
# them: `make results`) or off (compute, or load data/cache). Paper scale uses them by default.
ifeq ($(SCALE),paper)
RESULTS ?= use
else
RESULTS ?= off
endif
# Chapters of the book: the `root:`/`file:` entries book/<name> of _toc.yml
# (commented-out lines are ignored). A chapter with a source notebook
# notebooks/<name>.ipynb is executed into book/<name>.ipynb; notebooks that are
# not in the toc are not run. Override e.g.
# `make notebooks NOTEBOOKS=notebooks/censoring.ipynb`.
TOC_NAMES := $(basename $(shell sed -n -E 's@^[^\#]*(root|file):[[:space:]]*book/([A-Za-z0-9_.-]+).*@\2@p' _toc.yml))
NOTEBOOKS ?= $(wildcard $(patsubst %,notebooks/%.ipynb,$(TOC_NAMES)))
PAPERMILL_ARGS ?=
PYTEST_ARGS ?=
JB_ARGS ?=

.PHONY: help venv lock notebooks book results test bench clean distclean

help:
	@echo "make book                      build the book from the shipped paper-scale results (no MCMC)"
	@echo "make book SCALE=quick          recompute the studies at quick scale and build the book"
	@echo "make results                   recompute the paper-scale studies and rewrite results/*.nc"
	@echo "make test                      run the test suite"
	@echo "make bench                     run benchmarks/bench_*.py"
	@echo "make venv                      create .venv from requirements.lock"
	@echo "make lock                      re-resolve requirements.lock (keeps pins where possible)"
	@echo "make notebooks                 execute the chapters' notebooks/<name>.ipynb into book/"
	@echo "make clean | distclean         remove outputs | also .venv and data/cache"

venv: $(STAMP)

# Re-runs only when the lock or the project metadata change.
$(STAMP): requirements.lock pyproject.toml
	@test -x $(VPY) || $(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install --quiet --disable-pip-version-check uv==$(UV_VERSION)
	$(UV) pip sync --python $(VPY) requirements.lock
	$(UV) pip install --python $(VPY) --no-deps -e .
	$(VPY) -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (dpsynth)"
	@touch $@

# The lock pins runtime + book + test extras for Python 3.11. Existing pins are
# kept unless the ranges in pyproject.toml force a change (add UV_ARGS=--upgrade
# to move everything to the newest allowed versions).
LOCK_CMD := uv pip compile pyproject.toml --extra book --extra test --python-version 3.11 -o requirements.lock
UV_ARGS ?=

lock:
	@test -x $(UV) || { test -x $(VPY) || $(PYTHON) -m venv $(VENV); $(VPY) -m pip install --quiet --disable-pip-version-check uv==$(UV_VERSION); }
	@if [ -f requirements.lock ]; then cp requirements.lock requirements.lock.tmp; fi
	$(UV) pip compile pyproject.toml --extra book --extra test --python-version 3.11 \
	  --no-header --quiet $(UV_ARGS) -o requirements.lock.tmp
	@{ echo "# Exact versions of everything dpsynth needs (runtime + book + test extras), Python 3.11."; \
	   echo "# Do not edit by hand. Regenerate from the ranges in pyproject.toml with"; \
	   echo "#    make lock"; \
	   echo "# which is equivalent to running, from the repository root:"; \
	   echo "#    .venv/bin/$(LOCK_CMD)"; \
	   echo "# Install with: make venv   (or: uv pip sync requirements.lock && uv pip install --no-deps -e .)"; \
	   cat requirements.lock.tmp; } > requirements.lock
	@rm -f requirements.lock.tmp

notebooks: $(STAMP)
	@set -e; \
	nbs="$(NOTEBOOKS)"; \
	if [ -z "$$nbs" ]; then echo "notebooks: no chapter in _toc.yml has a notebooks/<name>.ipynb yet; nothing to execute"; exit 0; fi; \
	mkdir -p book; \
	for nb in $$nbs; do \
	  name=$$(basename "$$nb" .ipynb); \
	  echo "== $$name: papermill $$nb -> book/$$name.ipynb (scale=$(SCALE), results=$(RESULTS))"; \
	  start=$$SECONDS; \
	  DPSYNTH_RESULTS="$(RESULTS)" $(VENV)/bin/papermill "$$nb" "book/$$name.ipynb" -p scale "$(SCALE)" \
	    --kernel python3 --no-progress-bar --stderr-file >(cat >&2) $(PAPERMILL_ARGS); \
	  echo "== $$name: executed in $$((SECONDS - start)) s (load average $$(cut -d' ' -f1-3 /proc/loadavg))"; \
	done

# Paper-scale studies, recomputed and written to results/<study>.nc with their provenance.
results: $(STAMP)
	$(MAKE) notebooks SCALE=paper RESULTS=write

book: $(STAMP) notebooks
	$(VENV)/bin/jupyter-book build . --warningiserror --keep-going $(JB_ARGS)
	@echo "Book built: $(CURDIR)/_build/html/index.html"

test: $(STAMP)
	$(VENV)/bin/ruff check src tests benchmarks
	$(VPY) -m pytest $(PYTEST_ARGS)

bench: $(STAMP)
	@set -e; \
	shopt -s nullglob; \
	files=(benchmarks/bench_*.py); \
	if [ $${#files[@]} -eq 0 ]; then echo "bench: no benchmarks/bench_*.py yet"; exit 0; fi; \
	for f in "$${files[@]}"; do echo "== $$f"; $(VPY) "$$f"; done

clean:
	rm -rf _build .pytest_cache .hypothesis
	rm -f book/*.ipynb
	find . -path ./.venv -prune -o -type d -name __pycache__ -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV) data/cache src/*.egg-info
