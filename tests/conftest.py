"""Shared fixtures and hooks of the whole suite: the library's tests (``tests/``), the compendium's (``tests/book``).

Compiled models are session-scoped: each family is compiled once (via
:func:`dpsynth.fitting.compiled_model`, the same process-wide cache the package uses) and
refitted by every test that needs it. MCMC settings are kept small (``fit_helpers.SMALL``).

Nothing here imports the compendium (``dpsynth_book``): the library's tests run without it. The
compendium's own fixtures (the chapters' notebooks executed once per session) are in
``tests/book/conftest.py``; helpers both folders import are modules of their own (``fit_helpers``,
``simulated``, ``xdist_scheduling``), since ``import conftest`` would not say which of the two it means.
"""

from __future__ import annotations

import os

os.environ.setdefault("PYTENSOR_FLAGS", "blas__ldflags=")

import tempfile  # noqa: E402

# This user's dpsynth folder (ledgers, the ledger key) is a fresh one for the test session, so the
# tests never read or write the real one; subprocesses (the CLI, papermill's kernels) inherit it.
os.environ["DPSYNTH_HOME"] = tempfile.mkdtemp(prefix="dpsynth-home-")

import matplotlib  # noqa: E402

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import simulated  # noqa: E402
from fit_helpers import SMALL, betareg_design  # noqa: E402

import dpsynth  # noqa: E402,F401  (sets PyTensor flags before pymc is imported)
from dpsynth import fitting, models  # noqa: E402
from dpsynth.fitting import SamplerConfig  # noqa: E402

# --------------------------------------------------------------------------------------------
# how pytest-xdist shares the suite between workers (make test: one worker per core)
# --------------------------------------------------------------------------------------------

#: The lists name modules by file name, in either folder (a name is used once in tests/ and tests/book/).
#: Test modules whose tests are independent of each other (no module-scoped fit worth sharing): under
#: pytest-xdist each of their tests is a unit of work of its own. Every other module runs whole on one
#: worker (:func:`pytest_xdist_make_scheduler`), so its module-scoped fits and the book build are made once.
SPLIT_MODULES = ("test_shipped.py", "test_notebooks.py", "test_page_check.py")
#: Of those, the modules whose tests are parametrised by a chapter and read its smoke-executed notebook
#: (``SmokeNotebooks`` of ``tests/book/conftest.py``): a chapter's tests in them run together, on the worker
#: that executes it.
BY_CHAPTER = ("test_notebooks.py", "test_page_check.py")
#: The modules that take longest, handed out first so that no worker is left alone with one at the end.
FIRST_MODULES = ("test_shipped.py", "test_notebooks.py", "test_book.py", "test_synthesizer.py", "test_peers.py",
                 "test_cli.py", "test_validation.py", "test_models.py", "test_experiments_whole_table_replicate.py")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Longest modules first (a stable sort: the order within a module is kept)."""
    rank = {m: i for i, m in enumerate(FIRST_MODULES)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """Whole modules; :data:`SPLIT_MODULES` test by test, :data:`BY_CHAPTER` by chapter (:mod:`xdist_scheduling`)."""
    from xdist_scheduling import module_scheduler

    return module_scheduler(config, log, SPLIT_MODULES, BY_CHAPTER)


# --------------------------------------------------------------------------------------------
# compiled models (one compilation per family for the whole session)
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def small_sampler() -> SamplerConfig:
    return SMALL


@pytest.fixture(scope="session")
def poisson_cm():
    return fitting.compiled_model(models.PoissonRegression(), simulated.poisson_data(50, 0))


@pytest.fixture(scope="session")
def negbin_cm():
    return fitting.compiled_model(models.NegBinomialRegression(), simulated.poisson_data(50, 0))


@pytest.fixture(scope="session")
def beta_cm():
    return fitting.compiled_model(models.BetaFamily(), simulated.beta_data(50, 0))


@pytest.fixture(scope="session")
def lognormal_cm():
    return fitting.compiled_model(models.LognormalFamily(), simulated.lognormal_data(50, 0))


@pytest.fixture(scope="session")
def betareg_cm():
    X = betareg_design(50)
    return fitting.compiled_model(models.BetaRegression(n_coef=2), np.full(50, 0.5), X)
