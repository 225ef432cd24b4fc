"""Small synthetic results of the SDR application chapter (no MCMC), for summary and figure tests."""

from __future__ import annotations

import numpy as np
import xarray as xr

from dpsynth import registry
from dpsynth_book import sdr
from dpsynth_book.experiments.sdr_application import Params, SDRResults
from dpsynth_book.experiments.sdr_application.replicate import PART1_ROWS, PART2_ROWS, PART2_SYNTHESIZERS


def part1(rng, n=40, eps=5.0, converged=True):
    rows = list(PART1_ROWS)
    k = len(rows)
    fit = np.array([r not in ("Data", "PH", "PH-paper") for r in rows])
    delta = np.where(fit, rng.uniform(2.0, 3.0, k), np.nan)
    cens = np.array([r.startswith("Censor") for r in rows])
    delta[cens] = eps / 2
    e = np.where(fit, 2 * delta, np.nan)
    e[rows.index("PH")], e[rows.index("PH-paper")] = eps, eps / 2
    salary = rng.lognormal(11.3, 0.5, size=(k, n))
    ds = xr.Dataset(
        {"delta": ("synthesizer", delta), "eps": ("synthesizer", e), "eps_replace": ("synthesizer", 2 * e),
         "eps_local": ("synthesizer", np.where(fit, 2 * delta, np.nan)),
         "noise_scale": ("synthesizer", np.where([r.startswith("PH") for r in rows], 0.2, np.nan)),
         "n_censored": ("synthesizer", np.where(cens, [0, 0, 0, 0, 3, 9, 0, 0], np.nan)),
         "n_truncated": ("synthesizer", np.where(fit, 1.0, np.nan)),
         "mcmc": ("synthesizer", fit),
         "converged": ("synthesizer", np.where(fit, converged, True)),
         "divergences": ("synthesizer", np.where(fit, 0.0 if converged else 2.0, np.nan)),
         "rhat_max": ("synthesizer", np.where(fit, 1.001, np.nan)),
         "ess_min": ("synthesizer", np.where(fit, 400.0, np.nan)),
         "max_ecdf": ("synthesizer", rng.uniform(0.05, 0.2, k)),
         "avg_ecdf": ("synthesizer", np.r_[np.nan, np.linspace(0.001, 0.006, k - 1)]),
         "mean": ("synthesizer", salary.mean(1)), "median": ("synthesizer", np.median(salary, 1)),
         "q15": ("synthesizer", np.quantile(salary, 0.15, 1)), "q90": ("synthesizer", np.quantile(salary, 0.9, 1)),
         "avg_ecdf_mixed": ("synthesizer", np.where(fit, 0.001, np.nan)),
         "eps_mixed": ("synthesizer", np.where(fit, 20 * e, np.nan)),
         "salary": (("synthesizer", "record"), salary)},
        coords={"synthesizer": rows, "record": np.arange(n)})
    return ds


def part2(rng, n=40, n_syn=5, converged=True, cw_matched=True):
    """Part 2 over ``PART2_ROWS``: "Data" (not a fit: NaN, False, 0) and the six synthesizers."""
    rows = list(PART2_ROWS)
    names = list(PART2_SYNTHESIZERS)
    k = len(names)
    fit = np.array([r != "Data" for r in rows])

    def per_fit(v, fill=np.nan):
        """Values given per fit (in ``PART2_SYNTHESIZERS`` order) spread over ``rows``, ``fill`` for "Data"."""
        out = np.full((len(rows),) + v.shape[1:], fill, dtype=v.dtype)
        for i, nm in enumerate(names):
            out[rows.index(nm)] = v[i]
        return out

    delta = np.array([3.0, 2.0, 1.9, 2.0, 1.95, 1.85])
    stats = {s: (("synthesizer", "syn_set"), rng.normal(100_000, 5_000, (k + 1, n_syn)))
             for s in ("mean", "median", "q15", "q90")}
    return xr.Dataset(
        {"is_fit": ("synthesizer", fit),
         "delta": ("synthesizer", per_fit(delta)), "eps": ("synthesizer", per_fit(delta)),
         "eps_replace": ("synthesizer", per_fit(2 * delta)),
         "eps_all_sets": ("synthesizer", per_fit(n_syn * delta)),
         "converged": ("synthesizer", per_fit(np.full(k, converged), False)),
         "divergences": ("synthesizer", per_fit(np.zeros(k), 0.0)),
         "rhat_max": ("synthesizer", per_fit(np.full(k, 1.002))),
         "ess_min": ("synthesizer", per_fit(np.full(k, 300.0))),
         "k": ("synthesizer", per_fit(np.array([np.nan] * 4 + [0.9, 0.8]))),
         "n_fits": ("synthesizer", per_fit(np.array([1, 1, 3, 2, 2, 2], float), 0.0)),
         "search_converged": ("synthesizer", per_fit(np.ones(k, bool), False)),
         "mean_weight": ("synthesizer", per_fit(np.array([1.0, 0.6, 0.4, 0.5, 0.7, 0.8]))),
         "min_weight": ("synthesizer", per_fit(np.array([1.0, 0.1, 0.0, 0.5, 0.2, 0.3]))),
         "mu_mean": ("synthesizer", per_fit(np.full(k, 100_000.0))),
         "delta_i": (("synthesizer", "record"), per_fit(rng.uniform(0, 1, (k, n)) * delta[:, None])),
         "weight": (("synthesizer", "record"), per_fit(rng.uniform(0, 1, (k, n)))),
         "synthetic": (("synthesizer", "record"), per_fit(rng.lognormal(11.3, 0.5, (k, n)))),
         "mu_draw": (("synthesizer", "draw"), per_fit(rng.normal(100_000, 3_000, (k, 200)))),
         **stats,
         "max_ecdf": (("synthesizer", "syn_set"), rng.uniform(0, 0.2, (k + 1, n_syn))),
         "avg_ecdf": (("synthesizer", "syn_set"), rng.uniform(0, 0.01, (k + 1, n_syn))),
         "cw_radius": 0.2, "cw_radius_matched": bool(cw_matched)},
        coords={"synthesizer": rows, "record": np.arange(n), "draw": np.arange(200), "syn_set": np.arange(n_syn)})


def results(replicates=1, converged=True, seed=0) -> SDRResults:
    rng = np.random.default_rng(seed)
    idx = np.arange(replicates)
    p1 = registry.with_display_names(xr.concat([part1(rng, converged=converged) for _ in idx], dim="replicate"))
    p2 = xr.concat([part2(rng, converged=converged) for _ in idx], dim="replicate")
    return SDRResults(params=Params.smoke(), part1=p1, part2=p2, data1=sdr.standin_censoring(40, seed=1),
                      data2=sdr.standin_reweighting(40, seed=1))
