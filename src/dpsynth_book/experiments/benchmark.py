"""A small study used by the memory benchmark and the study-driver tests.

Each replicate draws Beta(0.5, 3) data and fits Unweighted, LW and Censor_w at one
eps, keeping only summaries.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import xarray as xr

from dpsynth import mechanisms as mech
from dpsynth.fitting import compiled_model
from dpsynth.mcmc_settings import SamplerConfig
from dpsynth.metrics import ecdf_distances
from dpsynth.models import BetaFamily
from dpsynth.seeds import stream
from dpsynth.synthetic_data import synthesize

from ..datasets import beta_data
from ..studies import rows_to_dataset

PARAMS = {"n": 2000, "eps": 4.0, "draws": 1000, "tune": 1000, "chains": 2}


def replicate(r: int, seed: np.random.SeedSequence, params: Mapping) -> xr.Dataset:
    """One replicate: data, three mechanisms, privacy and utility summaries."""
    cfg = SamplerConfig(draws=params["draws"], tune=params["tune"], chains=params["chains"])
    x = beta_data(params["n"], stream(seed, "data"))
    cm = compiled_model(BetaFamily(), x)
    u = mech.unweighted(cm, x, sampler=cfg, seed=stream(seed, "Unweighted"))
    # the stream keeps its stored name ("Weighted"), so the shipped benchmark's draws do not change
    lw = mech.lipschitz_weighted(cm, u.fit, sampler=cfg, seed=stream(seed, "Weighted"), name="LW")
    cw = mech.censored(cm, x, params["eps"], weights=lw.weights, sampler=cfg, seed=stream(seed, "Censor_w"))
    rows = []
    for res in (u, lw, cw):
        syn = synthesize(res.fit, stream(seed, res.name, "synth"))
        d = ecdf_distances(x, syn)
        rows.append({
            "synthesizer": res.name, "delta": res.privacy.delta, "n_censored": res.privacy.n_censored,
            "max_ecdf": d.max_ecdf, "avg_ecdf": d.avg_ecdf, "converged": res.fit.diagnostics.ok,
        })
    return rows_to_dataset(rows, ["synthesizer"])
