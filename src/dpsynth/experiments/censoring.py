"""Replicates of the censoring chapter (censoring paper, Sections 3–4; supplement S3–S5).

One replicate draws a confidential data set ``x ~ Beta(0.5, 3)`` of size ``n``, fits the Beta
synthesizer (:class:`dpsynth.models.BetaFamily`) and builds every synthesizer of the study:

* **Unweighted** and **Weighted** (LW weights, aDP) once per data set (they do not depend on eps);
* for each eps of the grid: **Weighted-e** (aDP), **Censor_uw** (DP), **Censor_w** (DP) and **PH**
  (DP, research mode, public bound [0, 1]);
* at the downscaling eps (Section 4.4): Weighted, Weighted-e and Censor_w again with the LW
  weights multiplied by the downscaling factor ``c``.

For every synthesizer it keeps only what the chapter reports: the Lipschitz bound Delta, the
censoring count (Censor_*) or truncation count (Weighted-e), the ECDF utilities of one synthetic
data set, its mean, median, 15th and 90th percentiles, and the fit's R-hat, bulk ESS and whether
they passed. :func:`release_replicate` is one later "month" of the release workflow of
Section 4.5 (a downscaling factor calibrated on a historical data set, applied with censoring).
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Mapping

import numpy as np
import pandas as pd
import xarray as xr
from scipy import stats

from .. import datasets, mechanisms, metrics
from ..fitting import ConvergenceWarning, Fit, SamplerConfig, compiled_model
from ..histogram import perturbed_histogram
from ..models import BetaFamily
from ..seeds import stream
from ..studies import rows_to_dataset
from ..synthesis import synthesize
from ..weights import scale_weights

__all__ = [
    "SYNTHS",
    "DOWNSCALE_SYNTHS",
    "TRUE_BETA",
    "PAPER_TABLE1",
    "PAPER_TABLE_S5",
    "true_stats",
    "sampler_from",
    "replicate",
    "release_replicate",
    "count_summary",
    "count_table",
    "fit_failures",
]

#: Synthesizers of the main study, in the paper's order (the guarantee types are in dpsynth.plots).
SYNTHS = ("Unweighted", "Weighted", "Weighted-e", "Censor_uw", "Censor_w", "PH")
#: Synthesizers re-run with downscaled weights (Section 4.4).
DOWNSCALE_SYNTHS = ("Weighted", "Weighted-e", "Censor_w")
#: The data-generating distribution of the study.
TRUE_BETA = (0.5, 3.0)

_COLS = ("min", "Q1", "median", "mean", "Q3", "max", "sd")


def _row(*vals):
    return dict(zip(_COLS, vals))


#: The censoring paper's Table 1: records (of n = 2000) truncated by Weighted-e or censored by
#: Censor_w / Censor_uw, summarised over R = 100 replicates; keyed by (eps, synthesizer).
PAPER_TABLE1 = {
    (5, "Weighted-e"): _row(0, 0, 0, 29, 55, 166, 48.80),
    (5, "Censor_w"): _row(0, 0, 0, 110, 260, 341, 129.59),
    (5, "Censor_uw"): _row(196, 236, 244, 247, 255, 296, 17.44),
    (4, "Weighted-e"): _row(0, 130, 219, 195, 272, 364, 103.48),
    (4, "Censor_w"): _row(0, 404, 425, 408, 440, 549, 92.56),
    (4, "Censor_uw"): _row(340, 398, 419, 419, 435, 481, 26.73),
    (3, "Weighted-e"): _row(400, 536, 574, 573, 618, 684, 60.62),
    (3, "Censor_w"): _row(655, 715, 741, 741, 763, 831, 35.66),
    (3, "Censor_uw"): _row(737, 787, 806, 809, 829, 888, 32.85),
}

#: The supplement's Table S5 (eps = 4) without and with downscaling; keyed by (scaling, synthesizer).
PAPER_TABLE_S5 = {
    ("none", "Weighted-e"): _row(0, 130, 219, 195, 272, 364, 103.48),
    ("none", "Censor_w"): _row(0, 404, 425, 408, 440, 549, 92.56),
    ("downscale", "Weighted-e"): _row(0, 0, 93, 91, 165, 269, 86.49),
    ("downscale", "Censor_w"): _row(0, 0, 0, 144, 328, 413, 165.66),
}


def true_stats(a: float = TRUE_BETA[0], b: float = TRUE_BETA[1]) -> dict[str, float]:
    """Analytical mean, median, 15th and 90th percentiles of Beta(a, b)."""
    d = stats.beta(a, b)
    return {"mean": float(d.mean()), "median": float(d.median()), "q15": float(d.ppf(0.15)), "q90": float(d.ppf(0.90))}


def sampler_from(params: Mapping) -> SamplerConfig:
    """The :class:`SamplerConfig` of a parameter mapping (``draws``, ``tune``, ``chains``)."""
    return SamplerConfig(
        draws=int(params["draws"]), tune=int(params["tune"]), chains=int(params["chains"]),
        cores=params.get("cores"),
    )


def _family(params: Mapping) -> BetaFamily:
    return BetaFamily(lambda_min=float(params.get("lambda_min", 0.1)), lambda_alpha=float(params.get("lambda_alpha", 1.5)))


def _fit_cols(fit: Fit | None) -> dict:
    if fit is None:
        return {"rhat": np.nan, "ess": np.nan, "fit_ok": np.nan}
    d = fit.diagnostics
    return {"rhat": max(d.rhat.values()), "ess": min(d.ess_bulk.values()), "fit_ok": float(d.ok)}


def _utility(x: np.ndarray, syn: np.ndarray) -> dict:
    e = metrics.ecdf_distances(x, syn)
    return {"max_ecdf": e.max_ecdf, "avg_ecdf": e.avg_ecdf, **metrics.summary_stats(syn)}


def _mech_row(res: mechanisms.MechanismResult, x: np.ndarray, seed, **extra) -> dict:
    p = res.privacy
    return {
        "delta": p.delta,
        "n_censored": float(p.n_censored) if res.fit.censored else np.nan,
        "n_truncated": float(p.extra.get("n_truncated", np.nan)),
        # Records whose *unweighted* |log-likelihood| exceeds M at a draw of this fit: an
        # alternative count, used to investigate the published Censor_w counts.
        "n_exceed_unweighted": float((res.bounds.abs_loglik > p.bound).sum()) if res.fit.censored else np.nan,
        **_utility(x, synthesize(res.fit, seed)),
        **_fit_cols(res.fit),
        **extra,
    }


def replicate(r: int, seed: np.random.SeedSequence, params: Mapping) -> xr.Dataset:
    """One replicate of the censoring study.

    Parameters
    ----------
    r : int
        Replicate index (the seed already addresses it; kept for the study driver's signature).
    seed : numpy.random.SeedSequence
        This replicate's stream.
    params : mapping
        ``n``, ``eps_grid``, ``draws``, ``tune``, ``chains``, ``downscale`` (factor ``c`` in
        (0, 1]), ``downscale_eps``, ``ph_bins`` (``"sqrt"``, ``"log"`` or an int), ``ph_alt_bins``
        (a second PH bin rule whose utilities are kept as ``ph_alt_*``; ``None`` to skip) and
        ``ph_upper`` (the public upper bound of the data, 1.0 for Beta data).

    Returns
    -------
    xarray.Dataset
        Variables over ``(synth, eps)`` for the main study (eps-independent synthesizers and the
        confidential ``"Data"`` repeated at every eps), variables prefixed ``ds_`` over
        ``(ds_synth, scaling)`` for the downscaling comparison, and scalars ``x_min`` and
        ``delta_unweighted``.

    Raises
    ------
    AssertionError
        If a censored synthesizer reports ``Delta > eps / 2``.
    """
    n = int(params["n"])
    eps_grid = [float(e) for e in params["eps_grid"]]
    cfg = sampler_from(params)
    c = float(params["downscale"])
    ds_eps = float(params["downscale_eps"])
    x = datasets.beta_data(n, stream(seed, "data"), a=TRUE_BETA[0], b=TRUE_BETA[1])
    cm = compiled_model(_family(params), x)

    with warnings.catch_warnings():
        # Non-convergence is recorded per fit (fit_ok) and reported by the chapter.
        warnings.simplefilter("ignore", ConvergenceWarning)
        uw = mechanisms.unweighted(cm, x, sampler=cfg, seed=stream(seed, "fit", "Unweighted"))
        lw = mechanisms.lipschitz_weighted(cm, uw.fit, sampler=cfg, seed=stream(seed, "fit", "Weighted"), name="Weighted")
        fixed = {
            "Unweighted": _mech_row(uw, x, stream(seed, "syn", "Unweighted")),
            "Weighted": _mech_row(lw, x, stream(seed, "syn", "Weighted")),
            "Data": {**_utility(x, x), **_fit_cols(None)},
        }
        rows = []
        ph_alt = []
        at_ds: dict[str, dict] = {}
        for k, eps in enumerate(eps_grid):
            for name, row in fixed.items():
                rows.append({"synth": name, "eps": eps, **row})
            we = mechanisms.weighted_e(cm, lw, eps, sampler=cfg, seed=stream(seed, "fit", "Weighted-e", k))
            cu = mechanisms.censored(cm, x, eps, sampler=cfg, seed=stream(seed, "fit", "Censor_uw", k))
            cw = mechanisms.censored(cm, x, eps, weights=lw.weights, sampler=cfg, seed=stream(seed, "fit", "Censor_w", k))
            for res in (we, cu, cw):
                if res.name.startswith("Censor") and not res.privacy.delta <= eps / 2 + 1e-9:
                    raise AssertionError(f"{res.name} at eps={eps}: Delta={res.privacy.delta} > eps/2")
                row = _mech_row(res, x, stream(seed, "syn", res.name, k))
                rows.append({"synth": res.name, "eps": eps, **row})
                if eps == ds_eps:
                    at_ds[res.name] = row
            ph = perturbed_histogram(x, eps, upper=float(params.get("ph_upper", 1.0)), lower=0.0,
                                     bins=params.get("ph_bins", "sqrt"), mode="research",
                                     seed=stream(seed, "syn", "PH", k))
            rows.append({"synth": "PH", "eps": eps, "delta": np.nan, "n_censored": np.nan, "n_truncated": np.nan,
                         **_utility(x, ph.synthetic), **_fit_cols(None)})
            # PH is sensitive to its data-independent bin rule: keep the other rule of S1 too.
            alt_bins = params.get("ph_alt_bins", "log")
            if alt_bins is not None:
                ph2 = perturbed_histogram(x, eps, upper=float(params.get("ph_upper", 1.0)), lower=0.0,
                                          bins=alt_bins, mode="research", seed=stream(seed, "syn", "PH-alt", k))
                ph_alt.append({"eps": eps, **{f"ph_alt_{k2}": v for k2, v in _utility(x, ph2.synthetic).items()}})
        main = rows_to_dataset(rows, ["synth", "eps"])
        if ph_alt:
            main = xr.merge([main, rows_to_dataset(ph_alt, ["eps"])], join="outer", compat="no_conflicts")

        # Section 4.4: the same three synthesizers with the LW weights scaled by c.
        ds_rows = []
        if ds_eps not in eps_grid:
            # The comparison's "none" rows need the plain fits at ds_eps too.
            we0 = mechanisms.weighted_e(cm, lw, ds_eps, sampler=cfg, seed=stream(seed, "fit", "Weighted-e", "ds0"))
            cw0 = mechanisms.censored(cm, x, ds_eps, weights=lw.weights, sampler=cfg, seed=stream(seed, "fit", "Censor_w", "ds0"))
            for res in (we0, cw0):
                at_ds[res.name] = _mech_row(res, x, stream(seed, "syn", res.name, "ds0"))
        at_ds["Weighted"] = fixed["Weighted"]
        lw_ds_w = scale_weights(lw.weights, c)
        lw_ds_fit = cm.fit(x, weights=lw_ds_w, sampler=cfg, seed=stream(seed, "fit", "Weighted", "ds"))
        lw_ds = mechanisms._result("Weighted", lw_ds_fit, c=c)
        we_ds = mechanisms.weighted_e(cm, lw_ds, ds_eps, sampler=cfg, seed=stream(seed, "fit", "Weighted-e", "ds"))
        cw_ds = mechanisms.censored(cm, x, ds_eps, weights=lw_ds_w, sampler=cfg, seed=stream(seed, "fit", "Censor_w", "ds"))
        if not cw_ds.privacy.delta <= ds_eps / 2 + 1e-9:
            raise AssertionError(f"downscaled Censor_w: Delta={cw_ds.privacy.delta} > eps/2")
        for res in (lw_ds, we_ds, cw_ds):
            ds_rows.append({"ds_synth": res.name, "scaling": "downscale",
                            **_mech_row(res, x, stream(seed, "syn", res.name, "ds"))})
        for name in DOWNSCALE_SYNTHS:
            ds_rows.append({"ds_synth": name, "scaling": "none", **at_ds[name]})
    out = main
    if ds_rows:
        ds = rows_to_dataset(ds_rows, ["ds_synth", "scaling"])
        out = xr.merge([main, ds.rename({v: f"ds_{v}" for v in ds.data_vars})], join="outer", compat="no_conflicts")
    out["x_min"] = float(x.min())
    out["delta_unweighted"] = uw.privacy.delta
    out["delta_weighted"] = lw.privacy.delta
    return out


def release_replicate(r: int, seed: np.random.SeedSequence, params: Mapping) -> xr.Dataset:
    """One later data set ("month") of the release workflow of Section 4.5.

    A new data set is drawn, the unweighted model is fitted to get its LW weights, and Censor_w is
    fitted at the fixed ``eps`` with the weights scaled by the fixed ``c`` calibrated on the
    historical data set (``scaling="downscale"``); for comparison, also without scaling
    (``scaling="none"``).

    Parameters
    ----------
    params : mapping
        ``n``, ``eps``, ``c``, ``draws``, ``tune``, ``chains``.

    Returns
    -------
    xarray.Dataset
        Variables over ``scaling``: Delta, censoring count, utilities and diagnostics, plus the
        unweighted fit's ``fit_ok_unweighted``.
    """
    n = int(params["n"])
    eps = float(params["eps"])
    c = float(params["c"])
    cfg = sampler_from(params)
    x = datasets.beta_data(n, stream(seed, "data"), a=TRUE_BETA[0], b=TRUE_BETA[1])
    cm = compiled_model(_family(params), x)
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        uw = mechanisms.unweighted(cm, x, sampler=cfg, seed=stream(seed, "fit", "Unweighted"))
        from ..weights import lipschitz_weights

        w = lipschitz_weights(uw.bounds.abs_loglik)
        for scaling, ww in (("none", w), ("downscale", scale_weights(w, c))):
            cw = mechanisms.censored(cm, x, eps, weights=ww, sampler=cfg, seed=stream(seed, "fit", "Censor_w", scaling))
            if not cw.privacy.delta <= eps / 2 + 1e-9:
                raise AssertionError(f"Censor_w ({scaling}): Delta={cw.privacy.delta} > eps/2")
            rows.append({"scaling": scaling, **_mech_row(cw, x, stream(seed, "syn", "Censor_w", scaling))})
    out = rows_to_dataset(rows, ["scaling"])
    out["fit_ok_unweighted"] = float(uw.fit.diagnostics.ok)
    return out


def count_summary(values) -> dict[str, float]:
    """Min, Q1, median, mean, Q3, max and sd of counts over replicates (NaNs dropped)."""
    v = np.asarray(values, dtype=float)
    v = v[~np.isnan(v)]
    if v.size == 0:
        return {k: np.nan for k in _COLS}
    q1, med, q3 = np.quantile(v, [0.25, 0.5, 0.75])
    sd = float(v.std(ddof=1)) if v.size > 1 else np.nan
    return dict(zip(_COLS, (v.min(), q1, med, v.mean(), q3, v.max(), sd)))


def count_table(ds: xr.Dataset, *, downscale: bool = False) -> pd.DataFrame:
    """Table 1 (or S5 with ``downscale=True``): our count summaries beside the paper's.

    Returns
    -------
    pandas.DataFrame
        Indexed by (eps or scaling, synthesizer, source), with source ``"ours"`` or ``"paper"``.
    """
    out = {}
    if downscale:
        for scaling in ("none", "downscale"):
            for name in ("Weighted-e", "Censor_w"):
                col = "ds_n_truncated" if name == "Weighted-e" else "ds_n_censored"
                ours = count_summary(ds[col].sel(ds_synth=name, scaling=scaling).values)
                out[(scaling, name, "ours")] = ours
                out[(scaling, name, "paper")] = PAPER_TABLE_S5[(scaling, name)]
        names = ["scaling", "synthesizer", "source"]
    else:
        for eps in ds.eps.values:
            for name in ("Weighted-e", "Censor_w", "Censor_uw"):
                col = "n_truncated" if name == "Weighted-e" else "n_censored"
                out[(float(eps), name, "ours")] = count_summary(ds[col].sel(synth=name, eps=eps).values)
                key = (int(eps), name) if float(eps).is_integer() else None
                if key in PAPER_TABLE1:
                    out[(float(eps), name, "paper")] = PAPER_TABLE1[key]
        names = ["eps", "synthesizer", "source"]
    df = pd.DataFrame.from_dict(out, orient="index")
    df.index = pd.MultiIndex.from_tuples(df.index, names=names)
    return df


def fit_failures(ds: xr.Dataset) -> tuple[int, int]:
    """(failed, total) MCMC fits of a study result, counting each fit once.

    Unweighted and Weighted are fitted once per replicate but stored at every eps; the
    "none" rows of the downscaling comparison repeat fits of the main study when the
    downscaling eps is on the grid (read from the study's ``params`` attribute), and the
    "none" Weighted row always does.
    """
    failed = total = 0
    for name in ds.synth.values:
        ok = ds["fit_ok"].sel(synth=name)
        if name in ("Unweighted", "Weighted"):
            ok = ok.isel(eps=0)
        v = ok.values[~np.isnan(ok.values)]
        failed += int((v == 0).sum())
        total += int(v.size)
    if "ds_fit_ok" in ds:
        # "none" rows repeat main-study fits only when the downscaling eps is on the grid.
        on_grid = "params" not in ds.attrs or float(json.loads(ds.attrs["params"])["downscale_eps"]) in ds.eps.values
        ok = ds["ds_fit_ok"]
        parts = [ok.sel(scaling="downscale").values.ravel()]
        if not on_grid:
            parts.append(ok.sel(ds_synth=["Weighted-e", "Censor_w"], scaling="none").values.ravel())
        v = np.concatenate(parts)
        v = v[~np.isnan(v)]
        failed += int((v == 0).sum())
        total += int(v.size)
    return failed, total
