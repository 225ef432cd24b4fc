"""Replicate functions of the re-weighting chapter (re-weighting paper, Sections 2-4 and appendix).

Two studies; each replicate receives :meth:`ReweightingParams.study_dict` and rebuilds the
parameters with :meth:`ReweightingParams.from_mapping`:

* :func:`synthesizers_replicate` generates one confidential data set per generating model
  (Poisson and the negative binomial mixture) and fits Unweighted, LW, CW, SW, LW_final and
  CW_final on it. It keeps the per-record vectors the figures need (by-record Lipschitz bounds and
  weights), the pooled draws of the mean parameter ``mu = exp(beta)``, the four summary statistics
  of ``synthetic_sets`` synthetic data sets per synthesizer (and of as many bootstrap resamples of
  the confidential data), and one synthetic data set per synthesizer for the distribution plots.
  Every synthetic data set is generated from ONE posterior draw
  (:func:`dpsynth.synthetic_data.synthesize`), which is what the one-draw ``eps`` covers; releasing all
  ``m`` of them would cost ``m * eps`` (:func:`dpsynth.synthetic_data.composed_eps`), so they are drawn
  only to show the Monte Carlo spread of one release. For comparison the same statistics are also
  kept for as many data sets made by record-wise mixing of draws (the papers' practice; its eps is
  composed over the distinct draws used).
* :func:`contraction_replicate` generates one data set per generating model and per sample size
  and records the local Lipschitz bound ``Delta`` of the Unweighted and LW fits (the appendix's
  local-to-global study), plus the summary statistics of the data and of one synthetic data set
  per fit.

Both results have ONE dimension for the synthesizer, ``synthesizer``, whose coordinate is
:data:`SYNTHESIZER_COORD` (resp. "Data", "Unweighted", "LW"): "Data" (the confidential records;
bootstrap resamples of them for the utility statistics) and the fitted synthesizers, in registry
order. "Data" is not a fit: the boolean variable ``is_fit`` is false there, and every per-fit
variable holds NaN (floats), False (booleans), 0 (counts) or "" (strings) on that row.

Both are module-level so that :func:`dpsynth_book.studies.run_study` can run them on other processes.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import xarray as xr

from dpsynth import metrics, models
from dpsynth.fitting import SamplerConfig, compiled_model
from dpsynth.mechanisms import RunContext
from dpsynth.mechanisms import run as run_mechanism
from dpsynth.seeds import generator, stream
from dpsynth.synthetic_data import release, synthesize

from ... import datasets, presentation
from ...studies import data_fingerprint
from .params import DATA_MODELS, ReweightingParams

__all__ = [
    "SYNTHESIZERS",
    "SYNTHESIZER_COORD",
    "CONTRACTION_COORD",
    "STATS",
    "family_for",
    "simulate_data",
    "synthesizers_replicate",
    "contraction_replicate",
]

#: Synthesizers fitted by :func:`synthesizers_replicate`, in fitting order (registry display names).
SYNTHESIZERS = ("Unweighted", "LW", "CW", "SW", "LW_final", "CW_final")
#: The ``synthesizer`` coordinate of :func:`synthesizers_replicate`: "Data" and the fits, the book's order.
SYNTHESIZER_COORD = tuple(presentation.order(["Data", *SYNTHESIZERS]))
#: The ``synthesizer`` coordinate of :func:`contraction_replicate`.
CONTRACTION_COORD = tuple(presentation.order(["Data", "Unweighted", "LW"]))

#: Summary statistics of a data set: mean, median, 15th and 90th percentiles.
STATS = metrics.STAT_NAMES

_SCALARS = (
    "delta",
    "eps",
    "eps_replace",
    "guarantee",
    "converged",
    "divergences",
    "k",
    "delta_before",
    "delta_after",
    "n_fits",
    "search_converged",
    "min_weight",
    "max_weight",
    "mean_weight",
    "sw_alpha",
    "rhat_max",
    "ess_min",
    "delta_refit",
    "refit_converged",
    "refit_divergences",
)

#: Values of the per-fit scalars on the "Data" row (not a fit): NaN, False, 0 or "" by type.
_NOT_A_FIT = {
    "guarantee": "",
    "converged": False,
    "divergences": 0,
    "n_fits": 0,
    "search_converged": False,
    "refit_converged": False,
    "refit_divergences": 0,
}


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


def _fit_all(x: np.ndarray, data_model: str, p: ReweightingParams, seed) -> tuple[dict, object, float, int, bool]:
    """Fit the six synthesizers on ``x``; returns (results, compiled model, CW radius, CW fits, matched)."""
    fam = family_for(data_model)
    # every mechanism by its registry key on one context: the unweighted, LW and CW fits are shared
    ctx = RunContext(x, family=fam, sampler=p.sampler, seed_fn=lambda *parts: stream(seed, *parts),
                     compiled=compiled_model(fam, x))
    cw = {"radius": p.cw_start_radius, "kind": p.cw_ball, "match_delta": bool(p.cw_match_lw),
          "match_tol": p.cw_tolerance}
    k = {"k0": p.k_start, "k_tol": p.reweight_tolerance}
    res = {"Unweighted": run_mechanism("unweighted", ctx), "LW": run_mechanism("lw", ctx),
           "CW": run_mechanism("cw", ctx, **cw), "SW": run_mechanism("sw", ctx),
           "LW_final": run_mechanism("lw_final", ctx, **k), "CW_final": run_mechanism("cw_final", ctx, **cw, **k)}
    c = res["CW"]
    return (res, ctx.compiled, float(c.extra["radius"]), int(c.extra["n_fits"]),
            bool(c.extra.get("radius_matched", False)))


def _scalars(res: dict, refits: dict) -> dict[str, list]:
    """Per-fit scalars over :data:`SYNTHESIZER_COORD` ("Data" gets :data:`_NOT_A_FIT` or NaN)."""
    nan = float("nan")
    scal = {k: [] for k in _SCALARS}
    for nm in SYNTHESIZER_COORD:
        if nm not in res:
            for k in _SCALARS:
                scal[k].append(_NOT_A_FIT.get(k, nan))
            continue
        r, ex, rf = res[nm], res[nm].extra, refits.get(nm)
        d = r.fit.diagnostics
        w = np.asarray(r.weights, dtype=float)
        row = {
            "delta": r.privacy.delta,
            "eps": r.privacy.eps,
            "eps_replace": r.privacy.eps_replace,
            "guarantee": str(r.privacy.guarantee),
            "converged": bool(d.ok),
            "divergences": int(d.divergences),
            "k": float(ex.get("k", nan)),
            "delta_before": float(ex.get("delta_before", nan)),
            "delta_after": float(ex.get("delta_after", nan)),
            "n_fits": int(ex.get("n_fits", 1)),
            "search_converged": bool(ex.get("converged", True)),
            "min_weight": float(np.min(w)),
            "max_weight": float(np.max(w)),
            "mean_weight": float(np.mean(w)),
            "sw_alpha": float(ex.get("alpha", nan)),
            "rhat_max": float(d.rhat_max),
            "ess_min": float(d.ess_min),
            "delta_refit": nan if rf is None else float(rf.bounds.delta),
            "refit_converged": True if rf is None else bool(rf.diagnostics.ok),
            "refit_divergences": 0 if rf is None else int(rf.diagnostics.divergences),
        }
        for k in _SCALARS:
            scal[k].append(row[k])
    return scal


def _one_model(data_model: str, p: ReweightingParams, seed) -> xr.Dataset:
    n, m = p.n, p.synthetic_sets
    x = simulate_data(data_model, n, stream(seed, "data"))
    res, cm, radius, cw_fits, matched = _fit_all(x, data_model, p, seed)
    names = list(SYNTHESIZERS)
    # A fresh refit of each re-weighted synthesizer's final weights with a new seed: the search keeps
    # the refit whose (Monte Carlo) Delta fell below the start, so an independent refit shows how
    # much of that is sampling luck.
    refits = {
        nm: cm.fit(x, weights=res[nm].weights, sampler=p.sampler, seed=stream(seed, "refit", nm))
        for nm in ("LW_final", "CW_final")
    }
    scal = _scalars(res, refits)

    # Utility: m synthetic data sets per synthesizer, each from ONE posterior draw, and m bootstrap
    # resamples of the confidential records for "Data"; for comparison, m record-wise mixed sets.
    # Every array runs over SYNTHESIZER_COORD ("Data" first); the per-fit rows of "Data" stay NaN.
    rows = list(SYNTHESIZER_COORD)
    at = {nm: i for i, nm in enumerate(rows)}
    nan = float("nan")
    stats = {s: np.empty((len(rows), m)) for s in (*STATS, "max_ecdf")}
    mixed = {s: np.full((len(rows), m), nan) for s in STATS}
    mixed_draws = np.full(len(rows), nan)
    one_syn = np.full((len(rows), n), nan)
    delta_i = np.full((len(rows), n), nan)
    weight = np.full((len(rows), n), nan)
    rng_boot = generator(stream(seed, "bootstrap"))
    d = at["Data"]
    for j in range(m):
        xb = x[rng_boot.integers(n, size=n)]
        for s, v in metrics.summary_stats(xb).items():
            stats[s][d, j] = v
        stats["max_ecdf"][d, j] = metrics.ecdf_distances(x, xb).max_ecdf
    for nm in names:
        a = at[nm]
        delta_i[a] = res[nm].bounds.delta_i
        weight[a] = np.broadcast_to(res[nm].weights, (n,))
        for j in range(m):
            xs = synthesize(res[nm].fit, stream(seed, "synthetic", nm, j))
            if j == 0:
                one_syn[a] = xs
            for s, v in metrics.summary_stats(xs).items():
                stats[s][a, j] = v
            stats["max_ecdf"][a, j] = metrics.ecdf_distances(x, xs).max_ecdf
        used = []
        for j in range(m):
            rel = release(res[nm], stream(seed, "mixed", nm, j), mix_draws=True)
            used.append(rel.n_draws_used)
            for s, v in metrics.summary_stats(rel.values).items():
                mixed[s][a, j] = v
        mixed_draws[a] = float(np.mean(used))

    mu_fit = {nm: np.exp(res[nm].fit.draws["beta"][:, 0]) for nm in names}
    mu = np.full((len(rows), len(mu_fit[names[0]])), nan)
    for nm, v in mu_fit.items():
        mu[at[nm]] = v
    return xr.Dataset(
        {
            "is_fit": ("synthesizer", np.array([nm != "Data" for nm in rows], dtype=bool)),
            **{k: ("synthesizer", np.asarray(v)) for k, v in scal.items()},
            "delta_i": (("synthesizer", "record"), delta_i),
            "weight": (("synthesizer", "record"), weight),
            "synthetic": (("synthesizer", "record"), one_syn),
            "x": ("record", x),
            "data_fingerprint": data_fingerprint(x),
            "mu_draw": (("synthesizer", "draw"), mu),
            **{s: (("synthesizer", "syn_set"), v) for s, v in stats.items()},
            **{f"{s}_mixed": (("synthesizer", "syn_set"), v) for s, v in mixed.items()},
            "mixed_n_draws": ("synthesizer", mixed_draws),
            "cw_radius": ((), radius),
            "cw_fits": ((), cw_fits),
            "cw_radius_matched": ((), matched),
        },
        coords={
            "synthesizer": rows,
            "record": np.arange(n),
            "draw": np.arange(mu.shape[1]),
            "syn_set": np.arange(m),
        },
    )


def synthesizers_replicate(replicate: int, seed: np.random.SeedSequence, params: Mapping) -> xr.Dataset:
    """Fit the six synthesizers of Sections 3-4 on one simulated data set per generating model.

    Parameters
    ----------
    replicate : int
        Replicate index (only used in the output coordinate by the study driver).
    seed : numpy.random.SeedSequence
        This replicate's stream; each generating model gets its own sub-stream.
    params : mapping
        :meth:`ReweightingParams.study_dict` output.

    Returns
    -------
    xarray.Dataset
        The ``synthesizer`` coordinate is :data:`SYNTHESIZER_COORD`: "Data" and the six fits in
        the book's order; ``is_fit`` (bool) is false for "Data", whose per-fit values are NaN
        (floats), False (booleans), 0 (counts) or "" (``guarantee``).
        Over ``data_model`` and ``synthesizer``: ``is_fit``, ``delta``, ``eps`` (one draw, one record
        removed: ``2 Delta``), ``eps_replace`` (one record replaced; equal to ``eps`` here, the Poisson and NB
        log-likelihood terms being <= 0), ``guarantee`` (registry type: "none" or "aDP"),
        ``converged`` (R-hat, ESS and no divergences), ``divergences``, ``k``, ``delta_before``,
        ``delta_after``, ``n_fits``, ``search_converged``, ``min_weight``, ``max_weight``,
        ``mean_weight``, ``sw_alpha``, ``rhat_max``, ``ess_min``, ``delta_refit`` (Delta of an
        independent refit of the final weights, re-weighted synthesizers only) with
        ``refit_converged`` and ``refit_divergences``, ``mixed_n_draws`` (mean number of distinct
        draws a record-wise mixed data set used); per data model ``cw_radius``, ``cw_fits``,
        ``cw_radius_matched``; per record ``x`` and, per synthesizer, ``delta_i``, ``weight``,
        ``synthetic`` (one-draw); per synthesizer and draw ``mu_draw``; per synthesizer (with
        "Data") and synthetic set ``mean``, ``median``, ``q15``, ``q90``, ``max_ecdf`` (one-draw
        sets; bootstrap resamples for "Data"); per synthesizer and set ``mean_mixed``,
        ``median_mixed``, ``q15_mixed``, ``q90_mixed`` (record-wise mixing; NaN for "Data").
    """
    p = ReweightingParams.from_mapping(params)
    parts = [_one_model(dm, p, stream(seed, dm)) for dm in p.data_models]
    return xr.concat(parts, dim=xr.Variable("data_model", list(p.data_models)))


def contraction_replicate(replicate: int, seed: np.random.SeedSequence, params: Mapping) -> xr.Dataset:
    """Appendix study: local Lipschitz bounds of Unweighted and LW on fresh data sets.

    For every generating model and every sample size of :attr:`ReweightingParams.sizes`, draw a
    data set, fit Unweighted and LW with ``contraction_draws`` / ``contraction_tune``, and record
    ``delta`` (the local Lipschitz bound), ``converged`` (R-hat, ESS and no divergences),
    ``divergences``, and the summary statistics of the data and of one synthetic data set (one
    posterior draw) per fit.

    Returns
    -------
    xarray.Dataset
        Over ``data_model``, ``n`` and ``synthesizer`` (:data:`CONTRACTION_COORD`: "Data",
        "Unweighted", "LW"): the statistics ``mean``, ``median``, ``q15``, ``q90`` (of the data
        for "Data"), and per fit ``delta``, ``converged``, ``divergences``, ``rhat_max``,
        ``ess_min``, ``min_weight``, ``share_weight_below_half``; "Data" is not a fit (``is_fit``
        false over ``synthesizer``): NaN, False and 0 there.
    """
    p = ReweightingParams.from_mapping(params)
    dms, ns = list(p.data_models), list(p.sizes)
    cfg = SamplerConfig(draws=p.contraction_draws, tune=p.contraction_tune, chains=p.chains, mass_matrix=p.mass_matrix)
    rows = list(CONTRACTION_COORD)
    at = {nm: i for i, nm in enumerate(rows)}
    shape = (len(dms), len(ns), len(rows))
    out = {k: np.full(shape, np.nan) for k in ("delta", "rhat_max", "ess_min", "min_weight", "share_weight_below_half")}
    conv = np.zeros(shape, dtype=bool)
    div = np.zeros(shape, dtype=int)
    st = {s: np.empty(shape) for s in STATS}
    fingerprint = np.zeros((len(dms), len(ns)), dtype=np.int64)
    for a, dm in enumerate(dms):
        fam = family_for(dm)
        for b, n in enumerate(ns):
            x = simulate_data(dm, n, stream(seed, "data", dm, n))
            fingerprint[a, b] = data_fingerprint(x)
            ctx = RunContext(x, family=fam, sampler=cfg, compiled=compiled_model(fam, x),
                             seed_fn=lambda step, *parts, dm=dm, n=n: stream(seed, step, dm, n, *parts))
            uw, lw = run_mechanism("unweighted", ctx), run_mechanism("lw", ctx)
            for s, v in metrics.summary_stats(x).items():
                st[s][a, b, at["Data"]] = v
            for nm, r in (("Unweighted", uw), ("LW", lw)):
                c = at[nm]
                d = r.fit.diagnostics
                w = np.broadcast_to(r.weights, (n,))
                out["delta"][a, b, c] = r.privacy.delta
                out["rhat_max"][a, b, c] = float(d.rhat_max)
                out["ess_min"][a, b, c] = float(d.ess_min)
                out["min_weight"][a, b, c] = float(w.min())
                out["share_weight_below_half"][a, b, c] = float(np.mean(w < 0.5))
                conv[a, b, c] = bool(d.ok)
                div[a, b, c] = int(d.divergences)
                xs = synthesize(r.fit, stream(seed, "synthetic", dm, n, nm))
                for s, v in metrics.summary_stats(xs).items():
                    st[s][a, b, c] = v
    dims3 = ("data_model", "n", "synthesizer")
    return xr.Dataset(
        {
            "is_fit": ("synthesizer", np.array([nm != "Data" for nm in rows], dtype=bool)),
            **{k: (dims3, v) for k, v in out.items()},
            "converged": (dims3, conv),
            "divergences": (dims3, div),
            **{s: (dims3, v) for s, v in st.items()},
            "data_fingerprint": (("data_model", "n"), fingerprint),
        },
        coords={"data_model": dms, "n": ns, "synthesizer": rows},
    )
