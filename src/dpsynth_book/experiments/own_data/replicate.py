"""The replicates of the "Your own data" chapter: the CPS 1988 weekly wages.

:func:`replicate` (study ``own_data``) runs every mechanism once on the real file, with a lognormal
regression of the wage on the public covariates (:class:`dpsynth.models.LognormalRegression`):

* **Unweighted** (none), the reference, and **Weighted** (aDP; Lipschitz weights from the
  unweighted fit, its epsilon reported after the fit), stored once with eps NaN;
* at each eps: **Censor_w** (aDP: weights computed from the same data), **Censor_uw** (DP), **PH**
  (DP, Laplace(1/eps) on a histogram of public range and bins) and **OpenDP-Q** (DP: quantiles
  released by OpenDP's private-quantile mechanism in each cell of public covariates, turned into
  synthetic wages, :func:`dpsynth.mechanisms.quantiles.dp_quantiles`).

Each mechanism releases ONE synthetic data set (for the model-based ones, from one posterior
draw), whose utility is measured against the confidential wages: ECDF distances, quantiles and
the analyst's regression of log wage on the public covariates. The mechanisms are run through the
registry at the study's eps, which is each mechanism's own epsilon for one release (one posterior
draw, or a model-free release) with one record removed; the "one record replaced" figure is stored
beside it. The synthetic data sets have the file's size, as a study's do: no size is released, so
no share of eps goes to one (a :class:`dpsynth.Synthesizer` carves the shares of a release out of
its total, :mod:`dpsynth.release.budget`). The fit's wall time and convergence diagnostics are kept; a
failed convergence check is recorded, never dropped.

:func:`units_replicate` (study ``own_data-units``) shows that a continuous density carries its
unit: a marginal lognormal censored at M (half the draw's share of the total eps) on the wages in
dollars, in thousands of dollars, and in dollars with the public offset ``-log 1000`` subtracted
from each record's log-likelihood (which is the thousands fit), through :class:`dpsynth.Synthesizer`
with its default budget (no covariates: one record removed, the DP released size's share first).
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Mapping

import numpy as np
import pandas as pd
import xarray as xr

from dpsynth import metrics, registry, synthetic_data
from dpsynth.fitting import compiled_model
from dpsynth.mechanisms import RunContext
from dpsynth.mechanisms import get as get_mechanism
from dpsynth.mechanisms import run as run_mechanism
from dpsynth.mechanisms.quantiles import cell_labels as _cell_labels
from dpsynth.models import LognormalRegression
from dpsynth.seeds import generator, stream

from ... import presentation
from ...public_data import UNITS, cps1988, wage_design, wage_model_frame
from ...studies import data_fingerprint, fits_to_dataset
from .params import OwnDataParams

__all__ = ["QUANTILES", "UNIT_SETTINGS", "chapter_frame", "cell_labels", "family", "synthesizer_names", "replicate",
           "units_replicate"]

#: Quantile levels of the utility comparison.
QUANTILES = (0.1, 0.25, 0.5, 0.75, 0.9)
#: Settings of the units study: label -> (unit, offset subtracted from each record's log-likelihood).
UNIT_SETTINGS = {
    "dollars": ("dollars", None),
    "thousands": ("thousands", None),
    "dollars, offset -log 1000": ("dollars", -math.log(1000.0)),
}


def chapter_frame(p: OwnDataParams, unit: str | None = None) -> pd.DataFrame:
    """The wage model's frame (:func:`dpsynth_book.public_data.wage_model_frame`) in ``unit`` (default ``p.unit``).

    With ``p.n > 0`` the first ``n`` records of a fixed permutation (smoke tests only).
    """
    df = wage_model_frame(cps1988(unit or p.unit))
    if p.n:
        idx = np.random.default_rng(20261123).permutation(len(df))[: p.n]
        df = df.iloc[np.sort(idx)].reset_index(drop=True)
    return df


def cell_labels(df: pd.DataFrame, columns) -> np.ndarray:
    """One public cell label per record: the levels of ``columns`` joined (``"all"`` without columns)."""
    return _cell_labels(df, columns)


def family(p: OwnDataParams, n_coef: int) -> LognormalRegression:
    """The lognormal regression with the study's priors."""
    return LognormalRegression(n_coef=n_coef, beta_sd=float(p.beta_sd), sigma_prior_scale=float(p.sigma_prior_scale),
                               slope_sd=None)


def synthesizer_names(p: OwnDataParams) -> list[str]:
    """Display names of the fits, in the book's order (Data and Unweighted first)."""
    return presentation.order(["Data", "Unweighted", *[get_mechanism(k).name for k in p.mechanisms]])


def _utility(x_dollars: np.ndarray, syn_dollars: np.ndarray, X: np.ndarray) -> tuple[dict, np.ndarray]:
    d = metrics.ecdf_distances(x_dollars, syn_dollars)
    q = np.quantile(syn_dollars, QUANTILES)
    row = {"max_ecdf": d.max_ecdf, "avg_ecdf": d.avg_ecdf,
           **{f"q{int(round(100 * a))}": float(v) for a, v in zip(QUANTILES, q)}}
    return row, metrics.log_regression(syn_dollars, X)


def _diag_row(res, seconds: float, total: float) -> dict:
    diag = res.fit.diagnostics
    p = res.privacy
    return {"delta": float(p.delta), "eps_remove": float(p.eps), "eps_replace": float(p.eps_replace),
            "n_censored": float(p.n_censored), "converged": bool(diag.ok), "rhat_max": float(diag.rhat_max),
            "ess_min": float(diag.ess_min), "divergences": float(diag.divergences), "fit_seconds": seconds,
            "release_seconds": total}


def _nan_diag(eps_remove: float, eps_replace: float, seconds: float) -> dict:
    nan = float("nan")
    return {"delta": nan, "eps_remove": eps_remove, "eps_replace": eps_replace, "n_censored": nan, "converged": True,
            "rhat_max": nan, "ess_min": nan, "divergences": nan, "fit_seconds": seconds, "release_seconds": seconds}


def replicate(r: int, seed: np.random.SeedSequence, params_mapping: Mapping) -> xr.Dataset:
    """One run of every mechanism on the CPS 1988 wages.

    Returns
    -------
    xarray.Dataset
        Over ``fit`` (coordinates ``synthesizer`` and ``eps``; eps NaN for Data, Unweighted and
        Weighted): ``delta``, ``eps_remove``, ``eps_replace``, ``n_censored``, ``converged``,
        ``rhat_max``, ``ess_min``, ``divergences``, ``fit_seconds`` (this fit),
        ``release_seconds`` (with the fits it needs first: Weighted and Censor_w include the
        unweighted fit), ``max_ecdf``, ``avg_ecdf``, ``q10`` ... ``q90`` (dollars); ``coef`` over
        ``(fit, term)``: the regression of log wage (dollars) on the public covariates. The
        variable ``data_fingerprint`` digests the wages; ``guarantee`` is a coordinate on ``fit``.
    """
    p = OwnDataParams.from_mapping(params_mapping)
    unit = UNITS[p.unit]
    df = chapter_frame(p)
    x = df["wage"].to_numpy(dtype=float)
    x_dollars = x * unit
    X, terms = wage_design(df)
    cfg = p.sampler
    fam = family(p, X.shape[1])
    # every mechanism by its registry key on one context: the unweighted fit is shared
    ctx = RunContext(x, family=fam, covariates=X, public=df, sampler=cfg, seed_fn=lambda *parts: stream(seed, *parts),
                     compiled=compiled_model(fam, x, X))
    rows: list[dict] = []
    coefs: list[np.ndarray] = []

    q_data = np.quantile(x_dollars, QUANTILES)
    rows.append({"synthesizer": "Data", "eps": np.nan, **_nan_diag(np.nan, np.nan, np.nan), "max_ecdf": 0.0,
                 "avg_ecdf": 0.0, **{f"q{int(round(100 * a))}": float(v) for a, v in zip(QUANTILES, q_data)}})
    coefs.append(metrics.log_regression(x_dollars, X))

    def add(name, eps, res, seconds, total, fit_stream):
        if res.fit is not None:  # one synthetic data set from one posterior draw
            syn = synthetic_data.synthesize(res.fit, stream(seed, fit_stream, "synthetic"))
            row = _diag_row(res, seconds, total)
        else:  # a model-free mechanism: one synthetic data set from its release
            syn = res.release.sample(x.size, generator(stream(seed, fit_stream, "synthetic")), df)
            row = _nan_diag(res.privacy.eps, res.privacy.eps_replace, seconds)
        util, coef = _utility(x_dollars, syn * unit, X)
        rows.append({"synthesizer": name, "eps": eps, **row, **util})
        coefs.append(coef)

    def timed(key, **kw):
        t = time.perf_counter()
        res = run_mechanism(key, ctx, **kw)
        return res, time.perf_counter() - t

    base, t_base = timed("unweighted")
    add("Unweighted", np.nan, base, t_base, t_base, "Unweighted")
    if "weighted" in p.mechanisms:
        lw, s = timed("weighted")
        add("Weighted", np.nan, lw, s, s + t_base, "Weighted")
    bounds = {"lower": p.lower / unit, "upper": p.upper / unit}
    for eps in [float(e) for e in p.eps]:
        for key in ("censor_w", "censor_uw"):
            if key in p.mechanisms:
                res, s = timed(key, eps=eps)
                # a release's time includes the fits it needs first (Censor_w's weights: the unweighted fit)
                needs_base = any(f is base.fit for f in res.fits)
                add(res.name, eps, res, s, s + (t_base if needs_base else 0.0), (res.name, eps))
        if "ph" in p.mechanisms:
            # the public file's size is public: the bin rule may use it
            res, s = timed("ph", eps=eps, bins=p.ph_bins, n_public=x.size, mode="research", **bounds)
            add("PH", eps, res, s, s, ("PH", eps))
        if "opendp_quantiles" in p.mechanisms:
            res, s = timed("opendp_quantiles", eps=eps, n_candidates=int(p.n_candidates), cells=p.quantile_cells,
                           **bounds)
            add("OpenDP-Q", eps, res, s, s, ("OpenDP-Q", eps))

    ds = fits_to_dataset(rows)
    ds["coef"] = xr.DataArray(np.vstack(coefs), dims=("fit", "term"), coords={"term": terms})
    ds["converged"] = ds["converged"].astype(bool)
    ds = ds.assign_coords(guarantee=("fit", [str(registry.guarantee(str(s)) or "") for s in ds.synthesizer.values]))
    ds["data_fingerprint"] = data_fingerprint(x_dollars, X)
    ds.attrs.update({
        "n": int(x.size), "unit": p.unit,
        "eps_neighbours": "eps_remove: each mechanism's own eps for one release (one draw), one record removed; "
                          "eps_replace: one record replaced; no released size is charged (a study, not a release)",
        "synthetic_data": "one synthetic data set per mechanism and run, from one posterior draw (models)",
    })
    return ds


def units_replicate(r: int, seed: np.random.SeedSequence, params_mapping: Mapping) -> xr.Dataset:
    """The censored lognormal in dollars, in thousands, and in dollars with the public offset ``-log 1000``.

    Returns
    -------
    xarray.Dataset
        Over ``(setting, mechanism, eps)``: ``n_censored``, ``delta``, ``bound`` (the censoring bound
        M: half the draw's share ``draw_eps`` of the total ``eps_stated``, one record removed, the DP
        released size's share taken out first), ``median`` (synthetic, in dollars), ``max_ecdf``,
        ``converged``, ``rhat_max``, ``divergences``, ``n_nonfinite`` (synthetic values that
        overflowed); ``median_data``;
        ``data_fingerprint``. Warnings that a fit censored most records are counted in
        ``censoring_warnings`` (the censoring count itself is the result).
    """
    from dpsynth.synthesizer import CensoringWarning, Synthesizer

    p = OwnDataParams.from_mapping(params_mapping)
    rows = []
    median_data = None
    fingerprint = None
    n_warn = 0
    for label, (unit, offset) in UNIT_SETTINGS.items():
        df = chapter_frame(p, unit)[["wage"]]
        x_dollars = df["wage"].to_numpy(dtype=float) * UNITS[unit]
        if median_data is None:
            median_data, fingerprint = float(np.median(x_dollars)), data_fingerprint(x_dollars)
        for key in p.units_mechanisms:
            for eps in [float(e) for e in p.units_eps]:
                s = Synthesizer(df, "wage", model="lognormal", mechanism=key, eps=eps, offset=offset,
                                model_params={"mu_prior_sd": float(p.beta_sd),
                                              "sigma_prior_scale": float(p.sigma_prior_scale)},
                                sampler=p.sampler)
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always", CensoringWarning)
                    s.fit(seed=stream(seed, label, key, eps))
                n_warn += sum(issubclass(w.category, CensoringWarning) for w in caught)
                for w in caught:
                    if not issubclass(w.category, CensoringWarning):
                        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
                pr = s.privacy
                out = s.sample_unaccounted(seed=stream(seed, label, key, eps, "synthetic"))  # research, not a release
                syn = out["wage"].to_numpy(dtype=float)
                syn_dollars = syn * UNITS[unit]
                # a fit that censored every record samples its prior: values can overflow to inf.
                # They are kept (as the largest float) and counted, so the ECDF distance shows the failure.
                n_nonfinite = int((~np.isfinite(syn_dollars)).sum())
                syn_dollars = np.nan_to_num(syn_dollars, nan=np.finfo(float).max, posinf=np.finfo(float).max)
                rows.append({"setting": label, "mechanism": registry.spec(key).name, "eps": eps,
                             "n_censored": float(pr.n_censored), "delta": float(pr.delta), "bound": float(pr.bound),
                             "eps_stated": float(pr.eps), "draw_eps": float(pr.budget.draw),
                             "median": float(np.median(syn_dollars)),
                             "max_ecdf": metrics.ecdf_distances(x_dollars, syn_dollars).max_ecdf,
                             "converged": bool(pr.converged), "rhat_max": float(pr.rhat_max),
                             "divergences": float(pr.divergences), "n_nonfinite": float(n_nonfinite)})
    ds = pd.DataFrame(rows).set_index(["setting", "mechanism", "eps"]).to_xarray()
    ds = ds.reindex(setting=list(UNIT_SETTINGS))
    ds["converged"] = ds["converged"].astype(bool)
    ds["median_data"] = median_data
    ds["data_fingerprint"] = fingerprint
    ds["censoring_warnings"] = np.int64(n_warn)
    ds.attrs.update({"n": int(p.n or 28155),
                     "offset": "the public constant subtracted from each record's log-likelihood before the clamp"})
    return ds
