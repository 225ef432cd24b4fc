"""Replicate functions of the re-weighting chapter (re-weighting paper, Sections 2-4 and appendix).

Two studies:

* :func:`synthesizers_replicate` generates one confidential data set (Poisson or the negative
  binomial mixture) and fits Unweighted, LW, CW, SW, LW_final and CW_final on it. It keeps the
  per-record vectors the figures need (by-record Lipschitz bounds and weights), the pooled draws
  of the mean parameter ``mu = exp(beta)``, the four summary statistics of ``n_syn`` synthetic
  data sets per synthesizer (and of ``n_syn`` bootstrap resamples of the confidential data), and
  one synthetic data set per synthesizer for the distribution plots. Every synthetic data set is
  generated from ONE posterior draw (:func:`dpsynth.synthesis.synthesize`), which is what the
  one-draw ``eps`` covers; releasing all ``n_syn`` of them would cost ``n_syn * eps``
  (:func:`dpsynth.synthesis.composed_eps`), so they are drawn only to show the Monte Carlo spread
  of one release. For comparison the same statistics are also kept for ``n_syn`` data sets made
  by record-wise mixing of draws (the papers' practice; its eps is composed over the distinct
  draws used).
* :func:`contraction_replicate` generates one data set per generating model and per sample size
  and records the local Lipschitz bound ``Delta`` of the Unweighted and LW fits (appendix
  "local-to-global" study), plus the summary statistics of the data and of one synthetic data
  set per fit.

Both are module-level so that :func:`dpsynth.studies.run_study` can run them on other processes.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import xarray as xr

from .. import datasets, mechanisms, metrics, models
from ..fitting import SamplerConfig, compiled_model
from ..mechanisms import match_cw_radius  # noqa: F401  (re-exported for the SDR chapter)
from ..seeds import generator, stream
from ..synthesis import release, synthesize
from . import require

__all__ = [
    "DATA_MODELS",
    "SYNTHESIZERS",
    "family_for",
    "simulate_data",
    "match_cw_radius",
    "synthesizers_replicate",
    "contraction_replicate",
]

#: Generating models of the simulation: name -> (simulator, synthesizer family).
DATA_MODELS = ("poisson", "nb_mixture")

#: Synthesizers fitted by :func:`synthesizers_replicate`, in fitting order.
SYNTHESIZERS = ("Unweighted", "LW", "CW", "SW", "LW_final", "CW_final")

STATS = metrics.STAT_NAMES  # ("mean", "median", "q15", "q90")


def family_for(data_model: str) -> models.ModelFamily:
    """The synthesizer family fitted to a generating model's data."""
    if data_model == "poisson":
        return models.PoissonRegression()
    if data_model == "nb_mixture":
        return models.NegBinomialRegression()
    raise ValueError(f"`data_model` must be one of {DATA_MODELS}; got {data_model!r}.")


def simulate_data(data_model: str, n: int, seed) -> np.ndarray:
    """One confidential data set of size ``n`` from a generating model."""
    if data_model == "poisson":
        return datasets.poisson_data(n, seed, mu=100.0)
    if data_model == "nb_mixture":
        return datasets.nb_mixture_data(n, seed, mu=100.0, phis=(5.0, 20.0), probs=(0.2, 0.8))
    raise ValueError(f"`data_model` must be one of {DATA_MODELS}; got {data_model!r}.")


def synthesizers_replicate(replicate: int, seed: np.random.SeedSequence, params: Mapping) -> xr.Dataset:
    """Fit the six synthesizers of Sections 3-4 on one simulated data set.

    Parameters
    ----------
    replicate : int
        Replicate index (only used in the output coordinate by the study driver).
    seed : numpy.random.SeedSequence
        This replicate's stream.
    params : mapping
        ``data_model`` ("poisson" or "nb_mixture"), ``n``, ``draws``, ``tune``, ``chains``,
        ``cw_radius``, ``cw_kind`` ("absolute" or "relative"), ``cw_match`` (tune the radius
        so CW's Delta matches LW's, starting from ``cw_radius``; default True) and ``cw_tol``
        (relative band of that match, default 0.05, as for SW), ``k0``, ``tol`` (re-weighting
        tolerance, relative), ``n_syn`` (synthetic data sets per synthesizer).

    Returns
    -------
    xarray.Dataset
        Per synthesizer: ``delta``, ``eps`` (one draw, one record removed: ``2 Delta``),
        ``eps_replace`` (one record replaced; equal to ``eps`` here, the Poisson and NB
        log-likelihood terms being <= 0), ``guarantee`` (registry type: "none" or "aDP"),
        ``converged`` (R-hat, ESS and no divergences), ``divergences``, ``k``, ``delta_before``,
        ``delta_after``, ``n_fits``, ``search_converged``, ``min_weight``, ``max_weight``,
        ``mean_weight``, ``sw_alpha``, ``rhat_max``, ``ess_min``, ``delta_refit`` (Delta of an
        independent refit of the final weights, re-weighted synthesizers only) with
        ``refit_converged`` and ``refit_divergences``, ``mixed_n_draws`` (mean number of
        distinct draws a record-wise mixed data set used); scalars ``cw_radius``, ``cw_fits``;
        per synthesizer and record: ``delta_i``, ``weight``, ``synthetic`` (one-draw);
        per record: ``x``; per synthesizer and draw: ``mu_draw``; per source ("Data" and the
        synthesizers) and synthetic set: ``mean``, ``median``, ``q15``, ``q90``, ``max_ecdf``
        (one-draw synthetic sets; bootstrap resamples for "Data"); per synthesizer and set:
        ``mean_mixed``, ``median_mixed``, ``q15_mixed``, ``q90_mixed`` (record-wise mixing).
    """
    require(params, ("data_model", "n", "draws", "tune", "cw_radius", "cw_kind", "k0", "tol", "n_syn"))
    dm = params["data_model"]
    n = int(params["n"])
    n_syn = int(params["n_syn"])
    cfg = SamplerConfig.from_params(params)
    x = simulate_data(dm, n, stream(seed, "data"))
    cm = compiled_model(family_for(dm), x)

    res = {}
    res["Unweighted"] = mechanisms.unweighted(cm, x, sampler=cfg, seed=stream(seed, "Unweighted"))
    res["LW"] = mechanisms.lipschitz_weighted(cm, res["Unweighted"].fit, sampler=cfg, seed=stream(seed, "LW"))
    res["CW"], cw_radius, cw_fits = match_cw_radius(
        cm, x, res["LW"].privacy.delta, radius=float(params["cw_radius"]), kind=str(params["cw_kind"]),
        match=bool(params.get("cw_match", True)), tol=float(params.get("cw_tol", 0.05)), sampler=cfg,
        seed=stream(seed, "CW"),
    )
    res["SW"] = mechanisms.scalar_weighted(
        cm, res["Unweighted"].fit, delta_target=res["LW"].privacy.delta, sampler=cfg, seed=stream(seed, "SW")
    )
    for start in ("LW", "CW"):
        res[f"{start}_final"] = mechanisms.reweighted(
            cm, res[start], k0=float(params["k0"]), tol=float(params["tol"]), sampler=cfg,
            seed=stream(seed, f"{start}_final"),
        )

    names = list(SYNTHESIZERS)
    nan = float("nan")
    # A fresh refit of each re-weighted synthesizer's final weights with a new seed: the search keeps
    # the refit whose (Monte Carlo) Delta fell below the start, so an independent refit shows how
    # much of that is sampling luck.
    refits = {
        nm: cm.fit(x, weights=res[nm].weights, sampler=cfg, seed=stream(seed, "refit", nm))
        for nm in ("LW_final", "CW_final")
    }
    scal = {k: [] for k in ("delta", "eps", "eps_replace", "guarantee", "converged", "divergences", "k",
                            "delta_before", "delta_after", "n_fits", "search_converged", "min_weight",
                            "max_weight", "mean_weight", "sw_alpha", "rhat_max", "ess_min", "delta_refit",
                            "refit_converged", "refit_divergences")}
    for nm in names:
        r = res[nm]
        ex = r.extra
        scal["delta"].append(r.privacy.delta)
        scal["eps"].append(r.privacy.eps)
        scal["eps_replace"].append(r.privacy.eps_replace)
        scal["guarantee"].append(str(r.privacy.guarantee))
        scal["converged"].append(bool(r.fit.diagnostics.ok))
        scal["divergences"].append(int(r.fit.diagnostics.divergences))
        scal["k"].append(float(ex.get("k", nan)))
        scal["delta_before"].append(float(ex.get("delta_before", nan)))
        scal["delta_after"].append(float(ex.get("delta_after", nan)))
        scal["n_fits"].append(int(ex.get("n_fits", 1)))
        scal["search_converged"].append(bool(ex.get("converged", True)))
        scal["min_weight"].append(float(np.min(r.weights)))
        scal["max_weight"].append(float(np.max(r.weights)))
        scal["mean_weight"].append(float(np.mean(r.weights)))
        scal["sw_alpha"].append(float(ex.get("alpha", nan)))
        rf = refits.get(nm)
        scal["delta_refit"].append(nan if rf is None else float(rf.bounds.delta))
        scal["refit_converged"].append(True if rf is None else bool(rf.diagnostics.ok))
        scal["refit_divergences"].append(0 if rf is None else int(rf.diagnostics.divergences))
        scal["rhat_max"].append(float(r.fit.diagnostics.rhat_max))
        scal["ess_min"].append(float(r.fit.diagnostics.ess_min))

    # Utility: n_syn synthetic data sets per synthesizer, each from ONE posterior draw (the draw the
    # one-draw eps covers; all n_syn together would cost n_syn * eps), and n_syn bootstrap resamples
    # of the confidential records for "Data". For comparison, n_syn record-wise mixed data sets
    # (each record from its own draw, the papers' practice; eps composed over the draws used).
    sources = ["Data"] + names
    stats = {s: np.empty((len(sources), n_syn)) for s in (*STATS, "max_ecdf")}
    mixed = {s: np.empty((len(names), n_syn)) for s in STATS}
    mixed_draws = np.empty(len(names))
    one_syn = np.empty((len(names), n))
    rng_boot = generator(stream(seed, "bootstrap"))
    for j in range(n_syn):
        xb = x[rng_boot.integers(n, size=n)]
        for s, v in metrics.summary_stats(xb).items():
            stats[s][0, j] = v
        stats["max_ecdf"][0, j] = metrics.ecdf_distances(x, xb).max_ecdf
    for a, nm in enumerate(names, start=1):
        for j in range(n_syn):
            xs = synthesize(res[nm].fit, stream(seed, "synthetic", nm, j))
            if j == 0:
                one_syn[a - 1] = xs
            for s, v in metrics.summary_stats(xs).items():
                stats[s][a, j] = v
            stats["max_ecdf"][a, j] = metrics.ecdf_distances(x, xs).max_ecdf
        used = []
        for j in range(n_syn):
            rel = release(res[nm], stream(seed, "mixed", nm, j), mix_draws=True)
            used.append(rel.n_draws_used)
            for s, v in metrics.summary_stats(rel.values).items():
                mixed[s][a - 1, j] = v
        mixed_draws[a - 1] = float(np.mean(used))

    mu = np.stack([np.exp(res[nm].fit.draws["beta"][:, 0]) for nm in names])
    ds = xr.Dataset(
        {
            **{k: ("synthesizer", np.asarray(v)) for k, v in scal.items()},
            "delta_i": (("synthesizer", "record"), np.stack([res[nm].bounds.delta_i for nm in names])),
            "weight": (("synthesizer", "record"), np.stack([np.broadcast_to(res[nm].weights, (n,)) for nm in names])),
            "synthetic": (("synthesizer", "record"), one_syn),
            "x": ("record", x),
            "mu_draw": (("synthesizer", "draw"), mu),
            **{s: (("source", "syn_set"), v) for s, v in stats.items()},
            **{f"{s}_mixed": (("synthesizer", "syn_set"), v) for s, v in mixed.items()},
            "mixed_n_draws": ("synthesizer", mixed_draws),
        },
        coords={"synthesizer": names, "source": sources, "record": np.arange(n), "draw": np.arange(mu.shape[1]),
                "syn_set": np.arange(n_syn)},
    )
    ds["cw_radius"] = cw_radius
    ds["cw_fits"] = cw_fits
    ds.attrs["data_model"] = dm
    return ds


def contraction_replicate(replicate: int, seed: np.random.SeedSequence, params: Mapping) -> xr.Dataset:
    """Appendix study: local Lipschitz bounds of Unweighted and LW on one fresh data set.

    For every generating model in ``params["data_models"]`` and every sample size in
    ``params["ns"]``, draw a data set, fit Unweighted and LW, and record ``delta`` (the local
    Lipschitz bound), ``converged`` (R-hat, ESS and no divergences), ``divergences``, and the
    summary statistics of the data and of one synthetic data set (one posterior draw) per fit.

    Returns
    -------
    xarray.Dataset
        ``delta``, ``converged``, ``divergences``, ``rhat_max``, ``ess_min``, ``min_weight`` and
        ``share_weight_below_half`` over dimensions ``data_model``, ``n``, ``synthesizer``
        ("Unweighted", "LW"), and, for the
        statistics, ``source`` ("Data", "Unweighted", "LW").
    """
    require(params, ("data_models", "ns", "draws", "tune"))
    dms = list(params["data_models"])
    ns = [int(v) for v in params["ns"]]
    cfg = SamplerConfig.from_params(params)
    syn = ["Unweighted", "LW"]
    src = ["Data"] + syn
    shape = (len(dms), len(ns), len(syn))
    delta = np.empty(shape)
    conv = np.empty(shape, dtype=bool)
    div = np.zeros(shape, dtype=int)
    rhat = np.empty(shape)
    ess = np.empty(shape)
    minw = np.full(shape, np.nan)
    n_down = np.zeros(shape)
    st = {s: np.empty((len(dms), len(ns), len(src))) for s in STATS}
    for a, dm in enumerate(dms):
        fam = family_for(dm)
        for b, n in enumerate(ns):
            x = simulate_data(dm, n, stream(seed, "data", dm, n))
            cm = compiled_model(fam, x)
            uw = mechanisms.unweighted(cm, x, sampler=cfg, seed=stream(seed, "Unweighted", dm, n))
            lw = mechanisms.lipschitz_weighted(cm, uw.fit, sampler=cfg, seed=stream(seed, "LW", dm, n))
            for c, r in enumerate((uw, lw)):
                delta[a, b, c] = r.privacy.delta
                conv[a, b, c] = bool(r.fit.diagnostics.ok)
                div[a, b, c] = int(r.fit.diagnostics.divergences)
                rhat[a, b, c] = float(r.fit.diagnostics.rhat_max)
                ess[a, b, c] = float(r.fit.diagnostics.ess_min)
                w = np.broadcast_to(r.weights, (n,))
                minw[a, b, c] = float(w.min())
                n_down[a, b, c] = float(np.mean(w < 0.5))
            for s, v in metrics.summary_stats(x).items():
                st[s][a, b, 0] = v
            for c, (nm, r) in enumerate(zip(syn, (uw, lw)), start=1):
                xs = synthesize(r.fit, stream(seed, "synthetic", dm, n, nm))
                for s, v in metrics.summary_stats(xs).items():
                    st[s][a, b, c] = v
    dims3 = ("data_model", "n", "synthesizer")
    return xr.Dataset(
        {
            "delta": (dims3, delta),
            "converged": (dims3, conv),
            "divergences": (dims3, div),
            "rhat_max": (dims3, rhat),
            "ess_min": (dims3, ess),
            "min_weight": (dims3, minw),
            "share_weight_below_half": (dims3, n_down),
            **{s: (("data_model", "n", "source"), v) for s, v in st.items()},
        },
        coords={"data_model": dms, "n": ns, "synthesizer": syn, "source": src},
    )
