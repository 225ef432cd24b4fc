"""Shared fixtures of the core test suite.

Compiled models are session-scoped: each family is compiled once (via
:func:`dpsynth.fitting.compiled_model`, the same process-wide cache the package uses) and
refitted by every test that needs it. MCMC settings are kept small (:data:`SMALL`).

The study replicate functions live here, at module level, because
:func:`dpsynth_book.studies.run_study` ships them to Dask workers and to spawned processes, which
import them by name (this module is importable as ``conftest`` from the ``tests`` folder).
"""

from __future__ import annotations

import os
import warnings

os.environ.setdefault("PYTENSOR_FLAGS", "blas__ldflags=")

import tempfile  # noqa: E402

# This user's dpsynth folder (ledgers, the ledger key) is a fresh one for the test session, so the
# tests never read or write the real one; subprocesses (the CLI, papermill's kernels) inherit it.
os.environ["DPSYNTH_HOME"] = tempfile.mkdtemp(prefix="dpsynth-home-")

import matplotlib  # noqa: E402

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import dpsynth  # noqa: E402,F401  (sets PyTensor flags before pymc is imported)
from dpsynth import fitting, models, seeds, synthetic_data  # noqa: E402
from dpsynth.fitting import ConvergenceWarning, Diagnostics, Fit, SamplerConfig  # noqa: E402
from dpsynth.privacy import record_bounds  # noqa: E402
from dpsynth_book import datasets, studies  # noqa: E402

#: Small MCMC settings used by most fitting tests.
SMALL = SamplerConfig(draws=300, tune=300, chains=2)
#: Even smaller, for property tests that fit many data sets.
TINY = SamplerConfig(draws=100, tune=150, chains=2)


# --------------------------------------------------------------------------------------------
# how pytest-xdist shares the suite between workers (make test: one worker per core)
# --------------------------------------------------------------------------------------------

#: Test modules whose tests are independent of each other (no module-scoped fit worth sharing): under
#: pytest-xdist each of their tests is a unit of work of its own. Every other module runs whole on one
#: worker (:func:`pytest_xdist_make_scheduler`), so its module-scoped fits and the book build are made once.
SPLIT_MODULES = ("test_shipped.py", "test_notebooks.py", "test_page_check.py")
#: Of those, the modules whose tests are parametrised by a chapter and read its smoke-executed notebook
#: (:class:`SmokeNotebooks`): a chapter's tests in them run together, on the worker that executes it.
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
    return fitting.compiled_model(models.PoissonRegression(), datasets.poisson_data(50, 0))


@pytest.fixture(scope="session")
def negbin_cm():
    return fitting.compiled_model(models.NegBinomialRegression(), datasets.poisson_data(50, 0))


@pytest.fixture(scope="session")
def beta_cm():
    return fitting.compiled_model(models.BetaFamily(), datasets.beta_data(50, 0))


@pytest.fixture(scope="session")
def lognormal_cm():
    return fitting.compiled_model(models.LognormalFamily(), datasets.lognormal_data(50, 0))


def betareg_design(n: int, seed: int = 0) -> np.ndarray:
    """Intercept plus one binary covariate."""
    rng = np.random.default_rng(seed)
    return np.column_stack([np.ones(n), rng.integers(0, 2, size=n).astype(float)])


@pytest.fixture(scope="session")
def betareg_cm():
    X = betareg_design(50)
    return fitting.compiled_model(models.BetaRegression(n_coef=2), np.full(50, 0.5), X)


# --------------------------------------------------------------------------------------------
# fits built from given draws (no MCMC), for exact checks of the post-fit formulas
# --------------------------------------------------------------------------------------------


def fit_from_draws(cm, x, draws, *, covariates=None, weights=None, bound=None) -> Fit:
    """A :class:`Fit` whose posterior draws are given (not sampled).

    The by-record bounds are computed from the compiled model's record log-likelihood, exactly
    as :meth:`CompiledModel.fit` does after sampling.
    """
    xv = np.asarray(x, dtype=float)
    draws = {k: np.asarray(v, dtype=float) for k, v in draws.items()}
    w = np.ones(xv.size) if weights is None else np.asarray(weights, dtype=float)
    F = cm.record_loglik(draws, xv, covariates)
    b = record_bounds(F, w, bound)
    return Fit(
        family=cm.family, x=xv, covariates=covariates, weights=w,
        bound=float("inf") if bound is None else float(bound), draws=draws, bounds=b,
        diagnostics=Diagnostics(rhat={}, ess_bulk={}), compiled=cm,
    )


# --------------------------------------------------------------------------------------------
# study replicate functions (module level: they run on Dask workers and spawned processes)
# --------------------------------------------------------------------------------------------

#: Replicates computed by :func:`counting_replicate` in this process.
CALLS: list[int] = []


def counting_replicate(r, ss, params):
    """Cheap replicate (no MCMC) that records that it ran."""
    CALLS.append(r)
    v = seeds.generator(ss).normal(params.get("loc", 0.0), 1.0, size=3)
    return studies.rows_to_dataset(
        [{"stat": s, "value": float(val)} for s, val in zip(("a", "b", "c"), v)], ["stat"]
    )


def failing_replicate(r, ss, params):
    """Replicate that fails on replicate 1."""
    if r == 1:
        raise RuntimeError("replicate 1 failed on purpose")
    return counting_replicate(r, ss, params)


def unwritable_replicate(r, ss, params):
    """Replicate whose result cannot be written to netCDF (an object-dtype variable)."""
    import xarray as xr

    return xr.Dataset({"bad": ("stat", np.array([{"a": 1}, {"b": 2}], dtype=object))})


def mcmc_replicate(r, ss, params):
    """A small real study replicate: simulate Poisson data, fit, censor, synthesize."""
    from dpsynth import mechanisms, metrics

    x = datasets.poisson_data(params["n"], seeds.stream(ss, "data"), mu=params["mu"])
    cm = fitting.compiled_model(models.PoissonRegression(), x)
    cfg = SamplerConfig(draws=params["draws"], tune=params["tune"], chains=2, cores=1)
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = {
            "Unweighted": mechanisms.unweighted(cm, x, sampler=cfg, seed=seeds.stream(ss, "Unweighted")),
            "Censor_uw": mechanisms.censored(cm, x, params["eps"], sampler=cfg, seed=seeds.stream(ss, "Censor_uw")),
        }
    for name, m in res.items():
        syn = synthetic_data.synthesize(m.fit, seeds.stream(ss, name, "syn"))
        rows.append({
            "synth": name,
            "delta": m.privacy.delta,
            "n_censored": m.privacy.n_censored,
            "beta_mean": float(m.fit.draws["beta"].mean()),
            "max_ecdf": metrics.ecdf_distances(x, syn).max_ecdf,
        })
    return studies.rows_to_dataset(rows, ["synth"])


# --------------------------------------------------------------------------------------------
# chapter notebooks executed once per session at smoke scale (smoke test and book test share them)
# --------------------------------------------------------------------------------------------


#: chapters whose notebooks run Monte Carlo studies (and take a ``workers`` parameter)
STUDY_CHAPTERS = ("censoring", "reweighting", "range_restriction", "sdr_application")


class SmokeNotebooks:
    """Executes ``notebooks/<name>.ipynb`` at ``scale="smoke"`` on first request, once per test run.

    Under pytest-xdist every worker has its own session, so the executed notebooks live in a folder
    shared by the workers, and a file lock per chapter makes the first worker that asks execute it
    while the others wait and read the executed file (or the failure it left behind).
    """

    def __init__(self, folder):
        self.folder = folder
        self.cache_dir = folder / "cache"
        self._done: dict = {}

    def _execute(self, name: str):
        from notebook_runner import run_notebook

        failed = self.folder / f"{name}.failed"
        done = self.folder / f"{name}.done"
        if failed.exists():
            raise RuntimeError(f"the smoke run of {name} failed in another test worker:\n{failed.read_text()}")
        path = self.folder / f"{name}.ipynb"
        if done.exists():
            from notebook_runner import read_executed

            return read_executed(path), path
        try:
            # one process per worker: the test session already keeps both cores busy
            extra = {"workers": 1} if name in STUDY_CHAPTERS else {}
            nb = run_notebook(name, self.folder, scale="smoke", cache_dir=str(self.cache_dir), **extra)
        except BaseException as err:
            import traceback

            failed.write_text("".join(traceback.format_exception(err))[-20000:])
            raise
        done.touch()
        return nb, path

    def get(self, name: str):
        """``(ExecutedNotebook, path of the executed .ipynb)``; re-raises a failure every time."""
        from filelock import FileLock

        if name not in self._done:
            try:
                with FileLock(str(self.folder / f"{name}.lock")):
                    self._done[name] = self._execute(name)
            except BaseException as err:  # noqa: BLE001 - remembered and re-raised for every caller
                self._done[name] = err
        out = self._done[name]
        if isinstance(out, BaseException):
            raise out
        return out


@pytest.fixture(scope="session")
def smoke_notebooks(tmp_path_factory) -> SmokeNotebooks:
    if not os.environ.get("PYTEST_XDIST_WORKER"):  # no xdist: this session's own folder
        return SmokeNotebooks(tmp_path_factory.mktemp("smoke-notebooks"))
    # under xdist the base temp folder is per worker; its parent is shared by the run's workers
    shared = tmp_path_factory.getbasetemp().parent / "smoke-notebooks"
    shared.mkdir(exist_ok=True)
    return SmokeNotebooks(shared)
