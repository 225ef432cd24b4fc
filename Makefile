# dpsynth compendium: `make book` builds the book, `make test` runs the tests.
#
#   make venv                 create/update .venv from requirements.lock
#   make lock                 re-resolve requirements.lock (one universal lock for Python 3.11-3.13)
#   make peers                create/update .venv-peers (SmartNoise MST and AIM) from peers/requirements-peers.lock
#   make peers-lock           re-resolve peers/requirements-peers.lock from peers/requirements-peers.in
#   make notebooks            execute the toc's notebooks/<name>.ipynb into book/ (papermill)
#   make lab                  JupyterLab (.venv-lab) on copies of the chapters' notebooks (lab-work/), as the book shows them, quick scale
#   make lab-env | lab-lock   only create .venv-lab | re-resolve lab/requirements-lab.lock
#   make book                 the book from the shipped paper-scale results (results/*.nc; no MCMC)
#   make book SCALE=quick     recompute every study at quick scale (minutes), then build the book
#   make results              recompute the paper scale and rewrite results/*.nc (hours on 2 cores: the Reproducing page gives the measured time)
#   make test                 lint (ruff) and the whole test suite (pytest)
#   make test PYTHON=python3.13   the same on another supported Python, in its own .venv-3.13
#   make test-lowest          the tests with every dependency at the lowest version pyproject.toml allows
#   make which-python         say which interpreter and environment make would use
#   make bench                every benchmarks/bench_*.py (records in benchmarks/results/), then BENCHMARKS.md
#   make bench-report         only render BENCHMARKS.md from benchmarks/results/*.json
#   make stan                 create/update .venv-stan (PyStan) from benchmarks/stan/requirements-stan.lock
#   make stan-lock            re-resolve benchmarks/stan/requirements-stan.lock
#   make bench-stan           benchmarks/bench_vs_stan.py (dpsynth against the same model in Stan), then BENCHMARKS.md
#   make clean                remove build outputs (keeps the environments and data/cache)
#   make distclean            also remove .venv, .venv-*, and the result cache data/cache
#
# Python 3.11, 3.12 and 3.13 are supported. Without PYTHON=, make takes the first usable of
# python3, python3.13, python3.12, python3.11 whose version is supported, and builds .venv with
# it. PYTHON=<name or path> uses that interpreter instead, in its own environment .venv-<X.Y>
# (e.g. .venv-3.13), so environments of two Python versions never mix. A name that is a pyenv
# shim of a version not selected in pyenv (`pyenv: python3.13: command not found`) is found in
# pyenv's versions/*/bin (the search is the script .ci/find-python). An environment built by
# another Python version than the selected one is rebuilt; the stamp $(VENV)/.installed records
# the interpreter and the lock it installed.

SHELL := /bin/bash
.DEFAULT_GOAL := help

SUPPORTED_PYTHONS := 3.11 3.12 3.13
comma := ,
PYTHON_CANDIDATES := python3 python3.13 python3.12 python3.11

# .ci/find-python NAME...: prints "<X.Y.Z> <executable>" of the first NAME that runs a supported
# Python (pyenv shims of versions not selected included), or "none <what each NAME was>".
FIND_PYTHON := SUPPORTED_PYTHONS='$(SUPPORTED_PYTHONS)' bash .ci/find-python

# Goals that need no interpreter do not look for one.
NO_PYTHON_GOALS := help clean distclean
ifneq ($(filter-out $(NO_PYTHON_GOALS),$(or $(MAKECMDGOALS),$(.DEFAULT_GOAL))),)
ifneq ($(filter command line environment environment override,$(origin PYTHON)),)
PY_GIVEN := 1
PY_FOUND := $(shell $(FIND_PYTHON) $(PYTHON))
PY_HOW := PYTHON=$(PYTHON)
else
PY_FOUND := $(shell $(FIND_PYTHON) $(PYTHON_CANDIDATES))
PY_HOW := the first usable of $(PYTHON_CANDIDATES)
endif
ifeq ($(filter-out none,$(firstword $(PY_FOUND))),)
$(error No usable Python for $(PY_HOW) ($(or $(wordlist 2,99,$(PY_FOUND)),nothing found)). \
  dpsynth supports Python $(subst $() ,$(comma) ,$(SUPPORTED_PYTHONS)): install one (e.g. `pyenv install 3.13`) or \
  name it, e.g. `make test PYTHON=/path/to/python3.13`)
endif
PY_VERSION := $(word 1,$(PY_FOUND))
PY_EXE := $(word 2,$(PY_FOUND))
PY_XY := $(basename $(PY_VERSION))
endif

# The environment: .venv for the default interpreter, .venv-<X.Y> for PYTHON=... (override with VENV=).
ifeq ($(origin VENV),undefined)
VENV := $(if $(PY_GIVEN),.venv-$(PY_XY),.venv)
endif
VPY := $(VENV)/bin/python
UV := $(VENV)/bin/uv
STAMP := $(VENV)/.installed
# the uv that resolved requirements.lock
UV_VERSION ?= 0.13.9

ifneq ($(PY_VERSION),)
ifeq ($(MAKELEVEL)$(filter which-python,$(MAKECMDGOALS)),0)
$(info make: Python $(PY_VERSION) ($(PY_EXE)), from $(PY_HOW); environment $(VENV))
endif
endif

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
# make test runs the suite in TEST_JOBS pytest-xdist workers (default: one per core); a test module
# runs whole on one worker (its module-scoped fits and the book build stay in one process) except the
# modules of independent slow tests that tests/conftest.py names (SPLIT_MODULES): its
# pytest_xdist_make_scheduler hands the modules out; TEST_JOBS=1 runs it in one process.
TEST_JOBS ?= $(shell nproc 2>/dev/null || echo 2)
TEST_PARALLEL := $(if $(filter-out 0 1,$(TEST_JOBS)),-n $(TEST_JOBS))
JB_ARGS ?=

.PHONY: help which-python venv lock peers peers-lock lab lab-env lab-lock notebooks book results test test-lowest bench bench-report stan \
  stan-lock bench-stan clean distclean

help:
	@echo "make book                      build the book from the shipped paper-scale results (no MCMC)"
	@echo "make book SCALE=quick          recompute the studies at quick scale and build the book"
	@echo "make results                   recompute the paper-scale studies and rewrite results/*.nc"
	@echo "make test                      run the test suite (ruff, then pytest) in .venv"
	@echo "make test PYTHON=python3.13    the same on another Python (3.11, 3.12, 3.13), in .venv-3.13"
	@echo "make test-lowest               the tests with the lowest dependency versions allowed (.venv-lowest)"
	@echo "make which-python              say which Python and environment make would use"
	@echo "make bench                     run benchmarks/bench_*.py, then write BENCHMARKS.md from their records"
	@echo "make bench-report              only write BENCHMARKS.md from benchmarks/results/*.json"
	@echo "make bench-stan                dpsynth's refit against the same model in Stan (PyStan, .venv-stan)"
	@echo "make stan | stan-lock          create .venv-stan | re-resolve benchmarks/stan/requirements-stan.lock"
	@echo "make venv                      create .venv from requirements.lock"
	@echo "make lock                      re-resolve requirements.lock (keeps pins where possible)"
	@echo "make peers                     create .venv-peers (SmartNoise MST, AIM) from peers/requirements-peers.lock"
	@echo "make peers-lock                re-resolve peers/requirements-peers.lock (keeps pins where possible)"
	@echo "make notebooks                 execute the chapters' notebooks/<name>.ipynb into book/"
	@echo "make lab                       JupyterLab on copies of notebooks/ (lab-work/) in the project's kernel (quick scale)"
	@echo "make lab-env | lab-lock        create .venv-lab | re-resolve lab/requirements-lab.lock"
	@echo "make clean | distclean         remove outputs | also .venv, .venv-* and data/cache"

which-python:
	@echo "Python $(PY_VERSION) ($(PY_EXE)), environment $(VENV)"

venv: $(STAMP)

# Every environment is installed with its bytecode compiled (uv's --compile-bytecode): where
# PYTHONDONTWRITEBYTECODE is set (as on the project's machines), Python never writes the .pyc files
# it would otherwise cache on first import, and every new process (each notebook's kernel, each CLI
# call, each test worker, each study worker) compiled the sources of pandas, PyMC, PyTensor, SciPy
# ... again: `import dpsynth.synthesizer, pymc, nutpie, arviz` took 10.5 s, 3.4 s with the bytecode
# (25 November 2026). dpsynth's own sources are compiled by `make test` and `make notebooks`
# (py_compile writes whatever that variable says; only changed files are compiled again).
UV_SYNC_FLAGS := --compile-bytecode
COMPILE_SRC = $(VPY) -m compileall -q src tests

# <venv>/.python-<X.Y.Z>: the environment exists and was built by the selected interpreter. If it
# was built by another one (another version, or one that no longer runs), it is removed and
# rebuilt, so packages of two Python versions never mix.
%/.python-$(PY_VERSION):
	@set -e; \
	built=$$($*/bin/python -c 'import platform; print(platform.python_version())' 2>/dev/null || true); \
	if [ -d $* ] && [ "$$built" != "$(PY_VERSION)" ]; then \
	  echo "$* was built by Python $${built:-that no longer runs}; rebuilding it with Python $(PY_VERSION)"; \
	  rm -rf $*; \
	fi; \
	if [ ! -x $*/bin/python ]; then \
	  $(PY_EXE) -m venv $* || { echo "could not create $* with $(PY_EXE) -m venv (on Debian/Ubuntu: apt-get install python3-venv)"; exit 1; }; \
	fi; \
	rm -f $*/.python-*; \
	touch $@

# Re-runs when the lock or the project metadata change, or the environment was (re)built.
$(STAMP): requirements.lock pyproject.toml $(VENV)/.python-$(PY_VERSION)
	$(VPY) -m pip install --quiet --disable-pip-version-check uv==$(UV_VERSION)
	$(UV) pip sync $(UV_SYNC_FLAGS) --python $(VPY) requirements.lock
	$(UV) pip install --python $(VPY) --no-deps -e .
	$(VPY) -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (dpsynth)"
	@printf 'python %s %s\nlock %s\n' "$(PY_VERSION)" "$(PY_EXE)" "$$(sha256sum requirements.lock | cut -d' ' -f1)" > $@

# One universal lock for every supported Python (3.11-3.13): runtime + dask + sas + book + test
# extras, with environment markers where a version or platform needs other packages. Existing pins
# are kept unless the ranges in pyproject.toml force a change (add UV_ARGS=--upgrade to move
# everything to the newest allowed versions).
LOCK_EXTRAS := --extra dask --extra sas --extra book --extra test
LOCK_CMD := uv pip compile pyproject.toml $(LOCK_EXTRAS) --universal --python-version 3.11 -o requirements.lock
UV_ARGS ?=

lock: $(VENV)/.python-$(PY_VERSION)
	@[ "$$($(UV) --version 2>/dev/null | cut -d' ' -f2)" = "$(UV_VERSION)" ] || \
	  $(VPY) -m pip install --quiet --disable-pip-version-check uv==$(UV_VERSION)
	@if [ -f requirements.lock ]; then cp requirements.lock requirements.lock.tmp; fi
	$(UV) pip compile pyproject.toml $(LOCK_EXTRAS) --universal --python-version 3.11 \
	  --no-header --quiet $(UV_ARGS) -o requirements.lock.tmp
	@{ echo "# Exact versions of everything dpsynth needs (runtime + dask + sas + book + test extras),"; \
	   echo "# one universal lock for Python 3.11, 3.12 and 3.13 (lines with a marker apply where it holds)."; \
	   echo "# Do not edit by hand. Regenerate from the ranges in pyproject.toml with"; \
	   echo "#    make lock"; \
	   echo "# which is equivalent to running, from the repository root:"; \
	   echo "#    .venv/bin/$(LOCK_CMD)"; \
	   echo "# Install with: make venv   (or: uv pip sync requirements.lock && uv pip install --no-deps -e .)"; \
	   cat requirements.lock.tmp; } > requirements.lock
	@rm -f requirements.lock.tmp

# The peers (SmartNoise's MST and AIM, for comparisons at equal epsilon) live in their own
# environment .venv-peers, never in .venv: smartnoise-synth wants pandas<3 and opendp<0.15, and its
# declared dependencies pull in torch, which MST and AIM do not use. dpsynth runs them through
# peers/run_peer.py in a subprocess (dpsynth_book.peers). peers/requirements-peers.lock pins exactly what
# MST and AIM import at run time (peers/README.md); `uv pip sync` installs that list and nothing
# else (no resolution at install time). The environment is built by the selected Python (PYTHON=
# rebuilds it with another one); uv is the one in $(VENV), at UV_VERSION, as for `make lock`.
PEERS_VENV ?= .venv-peers
PEERS_PY := $(PEERS_VENV)/bin/python
PEERS_STAMP := $(PEERS_VENV)/.installed
PEERS_LOCK := peers/requirements-peers.lock
PEERS_LOCK_CMD := uv pip compile peers/requirements-peers.in --excludes peers/excludes-peers.txt --universal --python-version 3.11 -o $(PEERS_LOCK)

peers: $(PEERS_STAMP)

$(PEERS_STAMP): $(PEERS_LOCK) $(PEERS_VENV)/.python-$(PY_VERSION) | $(VENV)/.python-$(PY_VERSION)
	@[ "$$($(UV) --version 2>/dev/null | cut -d' ' -f2)" = "$(UV_VERSION)" ] || \
	  $(VPY) -m pip install --quiet --disable-pip-version-check uv==$(UV_VERSION)
	$(UV) pip sync $(UV_SYNC_FLAGS) --python $(PEERS_PY) $(PEERS_LOCK)
	@# MST and AIM import, torch is absent
	$(PEERS_PY) -c "import importlib.util as u, snsynth.mst, snsynth.aim; \
	  assert u.find_spec('torch') is None, 'torch is installed in $(PEERS_VENV)'; print('$(PEERS_VENV): snsynth MST and AIM import; no torch')"
	@printf 'python %s %s\nlock %s\n' "$(PY_VERSION)" "$(PY_EXE)" "$$(sha256sum $(PEERS_LOCK) | cut -d' ' -f1)" > $@

peers-lock: $(VENV)/.python-$(PY_VERSION)
	@[ "$$($(UV) --version 2>/dev/null | cut -d' ' -f2)" = "$(UV_VERSION)" ] || \
	  $(VPY) -m pip install --quiet --disable-pip-version-check uv==$(UV_VERSION)
	@if [ -f $(PEERS_LOCK) ]; then cp $(PEERS_LOCK) $(PEERS_LOCK).tmp; fi
	$(UV) pip compile peers/requirements-peers.in --excludes peers/excludes-peers.txt --universal --python-version 3.11 \
	  --no-header --quiet $(UV_ARGS) -o $(PEERS_LOCK).tmp
	@{ echo "# Exact versions of the peers' environment .venv-peers: smartnoise-synth's MST and AIM and what they"; \
	   echo "# import at run time, nothing else (no torch). One universal lock for Python 3.11, 3.12 and 3.13"; \
	   echo "# (lines with a marker apply where it holds). Do not edit by hand. Regenerate from"; \
	   echo "# peers/requirements-peers.in and peers/excludes-peers.txt with"; \
	   echo "#    make peers-lock"; \
	   echo "# which is equivalent to running, from the repository root:"; \
	   echo "#    .venv/bin/$(PEERS_LOCK_CMD)"; \
	   echo "# Install with: make peers   (uv pip sync installs exactly these lines)"; \
	   cat $(PEERS_LOCK).tmp; } > $(PEERS_LOCK)
	@rm -f $(PEERS_LOCK).tmp

# JupyterLab for a class or a reader (`make lab`): the lab runs from its own environment .venv-lab
# (lab/requirements-lab.lock: JupyterLab, jupyterlab-myst and what they need, nothing of dpsynth's), and
# the notebooks run in the project's kernel "Python 3 (dpsynth)" of .venv, which JUPYTER_PATH puts first.
# The lab serves LAB_WORK (lab-work/, git-ignored), where lab/dpsynth_lab.py copies the chapters' notebooks
# (a missing one; one whose source changed and that the student has not edited): the students run, edit and
# save copies, and the tutorial writes its release and report beside them, so `git status` stays clean.
# The book's MyST renders as in the book: jupyterlab-myst renders the Markdown, lab/dpsynth_lab.py (the
# contents manager) rewrites what only Sphinx knows (glue roles, references) when a notebook opens, collapses
# the code cells the book hides, and undoes both when it is saved; DPSYNTH_LAB=1 makes dpsynth_book.book show
# figures and tables for the lab. dpsynth's own sources are compiled first (where PYTHONDONTWRITEBYTECODE is
# set, every kernel would compile them again). .venv/bin comes first on the PATH of the lab's terminals, so
# `dpsynth` runs there. The lab does not need the peers' environment (.venv-peers, `make peers`: only the
# whole-table chapter at quick scale runs SmartNoise). lab/settings/overrides.json turns JupyterLab's news
# and update check off (no pop-up; a classroom may have no network). The chapters' parameter cells default
# to the quick scale, and DPSYNTH_RESULTS=off makes them compute their studies (minutes each) instead of
# reading the shipped paper-scale results; set DPSYNTH_RESULTS=use in the environment to open them on the
# shipped results instead.
# LAB_ARGS passes options to `jupyter lab` (e.g. LAB_ARGS="--no-browser --port 8890"); as root (a container,
# this project's CI) the lab needs --allow-root, which is added.
LAB_VENV ?= .venv-lab
LAB_PY := $(LAB_VENV)/bin/python
LAB_STAMP := $(LAB_VENV)/.installed
LAB_LOCK := lab/requirements-lab.lock
LAB_LOCK_CMD := uv pip compile lab/requirements-lab.in --universal --python-version 3.11 -o $(LAB_LOCK)
LAB_ARGS ?=
LAB_RESULTS ?= $(or $(DPSYNTH_RESULTS),off)
LAB_WORK ?= lab-work

lab-env: $(LAB_STAMP)

$(LAB_STAMP): $(LAB_LOCK) $(LAB_VENV)/.python-$(PY_VERSION) | $(VENV)/.python-$(PY_VERSION)
	@[ "$$($(UV) --version 2>/dev/null | cut -d' ' -f2)" = "$(UV_VERSION)" ] || \
	  $(VPY) -m pip install --quiet --disable-pip-version-check uv==$(UV_VERSION)
	$(UV) pip sync $(UV_SYNC_FLAGS) --python $(LAB_PY) $(LAB_LOCK)
	@printf 'python %s %s\nlock %s\n' "$(PY_VERSION)" "$(PY_EXE)" "$$(sha256sum $(LAB_LOCK) | cut -d' ' -f1)" > $@

lab: $(STAMP) $(LAB_STAMP)
	@$(VPY) -m compileall -q src
	@$(LAB_PY) lab/dpsynth_lab.py copy notebooks $(LAB_WORK)
	@echo "JupyterLab on $(LAB_WORK)/ (copies of notebooks/) with the kernel 'Python 3 (dpsynth)' of $(VENV); DPSYNTH_RESULTS=$(LAB_RESULTS) (quick scale by default)"
	cd $(LAB_WORK) && JUPYTER_PATH=$(abspath $(VENV))/share/jupyter DPSYNTH_RESULTS=$(LAB_RESULTS) DPSYNTH_LAB=1 \
	  PATH=$(abspath $(VENV))/bin:$$PATH PYTHONPATH=$(CURDIR)/lab$${PYTHONPATH:+:$$PYTHONPATH} \
	  $(abspath $(LAB_VENV))/bin/jupyter lab --notebook-dir=$(abspath $(LAB_WORK)) $(if $(filter 0,$(shell id -u)),--allow-root) \
	  --ServerApp.contents_manager_class=dpsynth_lab.LabContentsManager --LabApp.app_settings_dir=$(CURDIR)/lab/settings \
	  --LabApp.news_url=None --LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate $(LAB_ARGS)

lab-lock: $(VENV)/.python-$(PY_VERSION)
	@[ "$$($(UV) --version 2>/dev/null | cut -d' ' -f2)" = "$(UV_VERSION)" ] || \
	  $(VPY) -m pip install --quiet --disable-pip-version-check uv==$(UV_VERSION)
	@if [ -f $(LAB_LOCK) ]; then cp $(LAB_LOCK) $(LAB_LOCK).tmp; fi
	$(UV) pip compile lab/requirements-lab.in --universal --python-version 3.11 --no-header --quiet $(UV_ARGS) \
	  -o $(LAB_LOCK).tmp
	@{ echo "# Exact versions of .venv-lab, the environment of \`make lab\` (JupyterLab only; the notebooks run in"; \
	   echo "# .venv's kernel). One universal lock for Python 3.11, 3.12 and 3.13. Do not edit by hand. Regenerate with"; \
	   echo "#    make lab-lock"; \
	   echo "# which is equivalent to running, from the repository root:"; \
	   echo "#    .venv/bin/$(LAB_LOCK_CMD)"; \
	   cat $(LAB_LOCK).tmp; } > $(LAB_LOCK)
	@rm -f $(LAB_LOCK).tmp

# Pages executed at once: rendering the shipped results (RESULTS=use) is mostly a kernel's start-up,
# imports and plotting, one core each, so two run side by side on two cores; computing studies
# (RESULTS=write or off) runs one notebook at a time, each study using the cores itself.
NB_JOBS ?= $(if $(filter use,$(RESULTS)),2,1)

notebooks: $(STAMP)
	@$(COMPILE_SRC)
	@set -e; \
	nbs="$(NOTEBOOKS)"; \
	if [ -z "$$nbs" ]; then echo "notebooks: no chapter in _toc.yml has a notebooks/<name>.ipynb yet; nothing to execute"; exit 0; fi; \
	mkdir -p book; \
	all=$$SECONDS; \
	run_one() { \
	  nb=$$1; name=$$(basename "$$nb" .ipynb); start=$$SECONDS; \
	  echo "== $$name: papermill $$nb -> book/$$name.ipynb (scale=$(SCALE), results=$(RESULTS))"; \
	  DPSYNTH_RESULTS="$(RESULTS)" $(VENV)/bin/papermill "$$nb" "book/$$name.ipynb" -p scale "$(SCALE)" \
	    --kernel python3 --no-progress-bar --stderr-file /dev/stderr $(PAPERMILL_ARGS) || \
	    { echo "== $$name: FAILED after $$((SECONDS - start)) s" >&2; return 1; }; \
	  echo "== $$name: executed in $$((SECONDS - start)) s (load average $$(cut -d' ' -f1-3 /proc/loadavg))"; \
	}; \
	export -f run_one 2>/dev/null || true; \
	if [ "$(NB_JOBS)" -gt 1 ]; then \
	  printf '%s\n' $$nbs | SECONDS=0 xargs -P "$(NB_JOBS)" -I{} bash -c 'run_one "$$@"' _ {}; \
	else \
	  for nb in $$nbs; do run_one "$$nb"; done; \
	fi; \
	echo "== notebooks: $$(echo $$nbs | wc -w) executed in $$((SECONDS - all)) s, $(NB_JOBS) at a time"

# Paper-scale studies, recomputed and written to results/<study>.nc with their provenance.
results: $(STAMP)
	$(MAKE) notebooks SCALE=paper RESULTS=write

book: $(STAMP) notebooks
	$(VENV)/bin/jupyter-book build . --warningiserror --keep-going $(JB_ARGS)
	@echo "Book built: $(CURDIR)/_build/html/index.html"

test: $(STAMP)
	$(VENV)/bin/ruff check src tests benchmarks peers
	$(COMPILE_SRC)
	$(VPY) -m pytest $(TEST_PARALLEL) $(PYTEST_ARGS)

# Tested lower bounds: every direct dependency (runtime and every extra) resolved to the lowest
# version pyproject.toml allows (uv's lowest-direct; what they need, at its newest), with wheels
# only, into its own environment .venv-lowest (.venv-lowest-<X.Y> with PYTHON=), then the whole
# suite but the staleness check of results/ (tests/book/test_shipped.py::test_shipped_file_is_current):
# that one compares a recomputation with results sampled by the locked versions, and other
# sampler versions give other (equally valid) draws. About 10 minutes; for a quick check use
# LOWEST_PYTEST_ARGS='-m "not slow"' (about 4 minutes).
LOWEST_VENV := $(if $(PY_GIVEN),.venv-lowest-$(PY_XY),.venv-lowest)
LOWEST_PY := $(LOWEST_VENV)/bin/python
LOWEST_REQS := $(LOWEST_VENV)/requirements-lowest.txt
LOWEST_EXTRAS := --extra dask --extra sas --extra book --extra test
LOWEST_PYTEST_ARGS ?= --deselect tests/book/test_shipped.py::test_shipped_file_is_current

test-lowest: $(LOWEST_VENV)/.python-$(PY_VERSION)
	$(LOWEST_PY) -m pip install --quiet --disable-pip-version-check uv==$(UV_VERSION)
	@rm -f $(LOWEST_REQS)
	$(LOWEST_VENV)/bin/uv pip compile pyproject.toml $(LOWEST_EXTRAS) --resolution lowest-direct --only-binary :all: \
	  --python $(LOWEST_PY) --no-header --quiet -o $(LOWEST_REQS)
	$(LOWEST_VENV)/bin/uv pip sync --python $(LOWEST_PY) $(LOWEST_REQS)
	$(LOWEST_VENV)/bin/uv pip install --python $(LOWEST_PY) --no-deps -e .
	@echo "Direct dependencies installed in $(LOWEST_VENV) (Python $(PY_VERSION)):"
	@$(LOWEST_PY) -c "import importlib.metadata as m, re; \
	  names = {re.split(r'[ ;<>=!~\[]', r)[0] for r in m.requires('dpsynth')}; \
	  print('\n'.join(sorted(f'  {n}=={m.version(n)}' for n in names)))"
	$(LOWEST_PY) -m pytest $(LOWEST_PYTEST_ARGS)

# Every benchmark writes its record benchmarks/results/<script>.json (benchmarks/_record.py);
# benchmarks/report.py renders them into BENCHMARKS.md (standard library only).
bench: $(STAMP)
	@set -e; \
	shopt -s nullglob; \
	files=(benchmarks/bench_*.py); \
	if [ $${#files[@]} -eq 0 ]; then echo "bench: no benchmarks/bench_*.py yet"; exit 0; fi; \
	for f in "$${files[@]}"; do \
	  if [ "$$f" = $(STAN_BENCH) ]; then echo "== $$f: skipped (it needs .venv-stan: make bench-stan)"; continue; fi; \
	  echo "== $$f"; $(VPY) "$$f"; \
	done
	$(PY_EXE) benchmarks/report.py

bench-report:
	$(PY_EXE) benchmarks/report.py

# The comparison with Stan (benchmarks/bench_vs_stan.py) runs the censored Beta synthesizer through
# PyStan in an environment of its own, .venv-stan, from benchmarks/stan/requirements-stan.lock
# (PyStan 3, httpstan, numpy; universal for Python 3.11-3.13). httpstan carries Stan and compiles
# the model with the system's C++ compiler (nothing is downloaded), so it needs g++ and make
# (Debian: apt-get install g++ make). `make bench` skips this benchmark; CI does not run it.
STAN_VENV := .venv-stan
STAN_PY := $(STAN_VENV)/bin/python
STAN_LOCK := benchmarks/stan/requirements-stan.lock
STAN_STAMP := $(STAN_VENV)/.installed
STAN_BENCH := benchmarks/bench_vs_stan.py
STAN_TOOLS := g++ make
STAN_BENCH_ARGS ?=

stan: $(STAN_STAMP)

$(STAN_STAMP): $(STAN_LOCK) $(STAN_VENV)/.python-$(PY_VERSION)
	@missing=""; for t in $(STAN_TOOLS); do command -v $$t >/dev/null 2>&1 || missing="$$missing $$t"; done; \
	if [ -n "$$missing" ]; then \
	  echo "make stan: PyStan compiles each Stan model with the system's C++ toolchain, and$$missing is missing."; \
	  echo "  On Debian/Ubuntu: apt-get install $(STAN_TOOLS)"; \
	  exit 1; \
	fi
	$(STAN_PY) -m pip install --quiet --disable-pip-version-check uv==$(UV_VERSION)
	UV_PYTHON_DOWNLOADS=never $(STAN_VENV)/bin/uv pip sync $(UV_SYNC_FLAGS) --python $(STAN_PY) $(STAN_LOCK)
	$(STAN_PY) -c "import stan, httpstan; print('PyStan', stan.__version__, '/ httpstan', httpstan.__version__)"
	@printf 'python %s %s\nlock %s\n' "$(PY_VERSION)" "$(PY_EXE)" "$$(sha256sum $(STAN_LOCK) | cut -d' ' -f1)" > $@

STAN_LOCK_CMD := uv pip compile benchmarks/stan/requirements-stan.in --universal --python-version 3.11 \
  -o $(STAN_LOCK)

stan-lock: $(STAN_VENV)/.python-$(PY_VERSION)
	@[ "$$($(STAN_VENV)/bin/uv --version 2>/dev/null | cut -d' ' -f2)" = "$(UV_VERSION)" ] || \
	  $(STAN_PY) -m pip install --quiet --disable-pip-version-check uv==$(UV_VERSION)
	@if [ -f $(STAN_LOCK) ]; then cp $(STAN_LOCK) $(STAN_LOCK).tmp; fi
	UV_PYTHON_DOWNLOADS=never $(STAN_VENV)/bin/uv pip compile benchmarks/stan/requirements-stan.in --universal \
	  --python-version 3.11 --no-header --quiet $(UV_ARGS) -o $(STAN_LOCK).tmp
	@{ echo "# Exact versions of .venv-stan, the environment of benchmarks/bench_vs_stan.py's Stan side (PyStan),"; \
	   echo "# one universal lock for Python 3.11, 3.12 and 3.13 (lines with a marker apply where it holds)."; \
	   echo "# Do not edit by hand. Regenerate from benchmarks/stan/requirements-stan.in with"; \
	   echo "#    make stan-lock"; \
	   echo "# which is equivalent to running, from the repository root:"; \
	   echo "#    $(STAN_VENV)/bin/$(STAN_LOCK_CMD)"; \
	   echo "# Install with: make stan"; \
	   cat $(STAN_LOCK).tmp; } > $(STAN_LOCK)
	@rm -f $(STAN_LOCK).tmp

bench-stan: $(STAMP) $(STAN_STAMP)
	$(VPY) $(STAN_BENCH) --stan-python $(STAN_PY) $(STAN_BENCH_ARGS)
	$(PY_EXE) benchmarks/report.py

clean:
	rm -rf _build .pytest_cache .hypothesis
	rm -f book/*.ipynb
	find . \( -path './.venv*' -o -path ./.git \) -prune -o -type d -name __pycache__ -exec rm -rf {} +

distclean: clean
	rm -rf .venv .venv-* data/cache src/*.egg-info
