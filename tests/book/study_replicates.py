"""Study replicate functions for the tests of :mod:`dpsynth_book.studies`.

They are module-level in a module of their own because :func:`dpsynth_book.studies.run_study` ships
them to Dask workers and to spawned processes, which import them by name (this module is importable
as ``study_replicates`` from the ``tests/book`` folder, which the spawned processes inherit on their path).
"""

from __future__ import annotations

import warnings

import numpy as np

from dpsynth import fitting, models, seeds, synthetic_data
from dpsynth.fitting import ConvergenceWarning, SamplerConfig
from dpsynth_book import datasets, studies

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
