"""Replicates of the censoring chapter (censoring paper [HWS22], Sections 3–4; supplement S3–S5).

One replicate draws a confidential data set ``x ~ Beta(0.5, 3)`` of size ``n``, fits the Beta
synthesizer (:class:`dpsynth.models.BetaFamily`) and builds every synthesizer of the study
(names and guarantee types from :mod:`dpsynth.registry`):

* **Unweighted** (none) and **Weighted** (LW weights, aDP) once per data set (they do not depend
  on eps);
* for each eps of the grid: **Weighted-e** (aDP), **Censor_uw** (DP), **Censor_w** (aDP: the
  papers' version, Lipschitz weights computed from the same confidential data, censored at
  eps/2), **Censor_w-pub** (DP: the Lipschitz rule fixed on an unweighted fit of a separate
  historical data set drawn from the same distribution, once per replicate), **PH** (DP,
  Laplace(1/eps) noise: eps with one record removed) and **PH-paper** (the papers' Laplace(2/eps):
  eps/2 with one record removed, eps with one record replaced), both in research mode on the
  public bound [0, 1], plus both again with a second data-independent bin rule;
* at the downscaling eps (Section 4.4): Weighted, Weighted-e and Censor_w again with the LW
  weights multiplied by the downscaling factor ``c``.

Every synthetic data set is generated from ONE posterior draw (:func:`dpsynth.synthesis.synthesize`).
For the synthesizers of :data:`MIX_SYNTHS` at ``mix_eps``, a record-wise-mixed data set (each
record from its own draw, :func:`dpsynth.synthesis.release` with ``mix_draws=True``) is also
kept, with the composed eps it costs.

For every synthesizer it keeps only what the chapter reports: the Lipschitz bound Delta, the eps
of one released draw with one record removed and replaced, the censoring count (Censor_*) or
truncation count (Weighted-e), the ECDF utilities of one synthetic data set, its mean, median,
15th and 90th percentiles, and the fit's R-hat, bulk ESS, divergences and whether it passed.
:func:`release_replicate` is one later "month" of the release workflow of Section 4.5.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Mapping

import numpy as np
import pandas as pd
import xarray as xr
from scipy import stats

from .. import datasets, mechanisms, metrics, registry
from ..fitting import ConvergenceWarning, Fit, SamplerConfig, compiled_model
from ..histogram import perturbed_histogram
from ..models import BetaFamily
from ..privacy import CENSOR_TOL
from ..seeds import stream
from ..studies import rows_to_dataset
from ..synthesis import release, synthesize
from ..weights import lipschitz_weights, scale_weights

__all__ = [
    "SYNTHS",
    "PH_SYNTHS",
    "MIX_SYNTHS",
    "DOWNSCALE_SYNTHS",
    "TRUE_BETA",
    "PAPER_TABLE1",
    "PAPER_TABLE_S5",
    "true_stats",
    "sampler_from",
    "replicate",
    "release_params",
    "release_replicate",
    "count_summary",
    "count_table",
    "fit_failures",
    "convergence_table",
]

#: Synthesizers of the main study (registry display names; Censor_w-pub only with ``public``).
SYNTHS = ("Unweighted", "Weighted", "Weighted-e", "Censor_w", "Censor_w-pub", "Censor_uw", "PH", "PH-paper")
#: The perturbed histogram both ways: (name, neighbour relation its eps is calibrated under).
PH_SYNTHS = (("PH", "remove"), ("PH-paper", "replace"))
#: Synthesizers with a record-wise-mixed release kept at ``mix_eps``.
MIX_SYNTHS = ("Weighted", "Censor_w", "Censor_w-pub", "Censor_uw")
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
        return {"rhat": np.nan, "ess": np.nan, "divergences": np.nan, "fit_ok": np.nan}
    d = fit.diagnostics
    return {"rhat": d.rhat_max, "ess": d.ess_min, "divergences": float(d.divergences), "fit_ok": float(d.ok)}


def _utility(x: np.ndarray, syn: np.ndarray) -> dict:
    e = metrics.ecdf_distances(x, syn)
    return {"max_ecdf": e.max_ecdf, "avg_ecdf": e.avg_ecdf, **metrics.summary_stats(syn)}


def _check_cap(res: mechanisms.MechanismResult, eps: float) -> None:
    if not res.privacy.delta <= eps / 2 + CENSOR_TOL:
        raise AssertionError(f"{res.name} at eps={eps}: Delta={res.privacy.delta} > eps/2")


def _mech_row(res: mechanisms.MechanismResult, x: np.ndarray, seed, *, mix_seed=None, **extra) -> dict:
    """One synthesizer's row; with ``mix_seed`` also a record-wise-mixed release (``mix_*``)."""
    p = res.privacy
    row = {
        "delta": p.delta,
        # eps of one released posterior draw (for aDP synthesizers: 2 Delta of this data set).
        "eps_remove": p.eps,
        "eps_replace": p.eps_replace,
        "n_censored": float(p.n_censored) if res.fit.censored else np.nan,
        "n_truncated": float(p.extra.get("n_truncated", np.nan)),
        # Records whose *unweighted* |log-likelihood| exceeds M at a draw of this fit: an
        # alternative count, used to investigate the published Censor_w counts.
        "n_exceed_unweighted": float((res.bounds.abs_loglik > p.bound).sum()) if res.fit.censored else np.nan,
        **_utility(x, synthesize(res.fit, seed)),
        **_fit_cols(res.fit),
        **extra,
    }
    if mix_seed is not None:
        mixed = release(res, mix_seed, mix_draws=True)
        e = metrics.ecdf_distances(x, mixed.values)
        row.update({"mix_max_ecdf": e.max_ecdf, "mix_avg_ecdf": e.avg_ecdf, "mix_eps": mixed.eps,
                    "mix_eps_replace": mixed.eps_replace, "mix_n_draws": float(mixed.n_draws_used)})
    return row


def _ph_row(x, eps, neighbours, bins, upper, seed) -> dict:
    ph = perturbed_histogram(x, eps, upper=upper, lower=0.0, bins=bins, mode="research", seed=seed,
                             neighbours=neighbours)
    return {"delta": np.nan, "eps_remove": ph.eps_remove, "eps_replace": ph.eps_replace, "noise_scale": ph.noise_scale,
            "n_censored": np.nan, "n_truncated": np.nan, **_utility(x, ph.synthetic), **_fit_cols(None)}


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
        (a second PH bin rule whose utilities are kept as ``ph_alt_*`` over ``ph_synth``; ``None``
        to skip), ``ph_upper`` (the public upper bound of the data, 1.0 for Beta data),
        ``public`` (default True: fit Censor_w-pub, with the LW rule fixed on a historical data
        set of the same size drawn from its own stream) and ``mix_eps`` (eps at which the
        synthesizers of :data:`MIX_SYNTHS` also release a record-wise-mixed data set; default
        the first of ``eps_grid``; ``None`` to skip).

    Returns
    -------
    xarray.Dataset
        Variables over ``(synth, eps)`` for the main study (eps-independent synthesizers and the
        confidential ``"Data"`` repeated at every eps; ``mix_*`` only at ``mix_eps``), ``ph_alt_*``
        over ``(ph_synth, eps)``, variables prefixed ``ds_`` over ``(ds_synth, scaling)`` for the
        downscaling comparison, ``hist_*`` diagnostics of the historical fit, and scalars
        ``x_min``, ``delta_unweighted`` and ``delta_weighted``.

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
    public = bool(params.get("public", True))
    mix_eps = params.get("mix_eps", eps_grid[0])
    mix_eps = None if mix_eps is None else float(mix_eps)
    upper = float(params.get("ph_upper", 1.0))
    x = datasets.beta_data(n, stream(seed, "data"), a=TRUE_BETA[0], b=TRUE_BETA[1])
    cm = compiled_model(_family(params), x)

    def mix(name, eps, *key):
        return stream(seed, "mix", name, *key) if (mix_eps is not None and eps == mix_eps and name in MIX_SYNTHS) else None

    with warnings.catch_warnings():
        # Non-convergence is recorded per fit (fit_ok, divergences) and reported by the chapter.
        warnings.simplefilter("ignore", ConvergenceWarning)
        uw = mechanisms.unweighted(cm, x, sampler=cfg, seed=stream(seed, "fit", "Unweighted"))
        lw = mechanisms.lipschitz_weighted(cm, uw.fit, sampler=cfg, seed=stream(seed, "fit", "Weighted"), name="Weighted")
        rule = hist = None
        if public:
            # A historical data set from the same distribution, on its own stream, fitted once
            # (unweighted); the LW rule fixed on it does not depend on x.
            x_hist = datasets.beta_data(n, stream(seed, "historical", "data"), a=TRUE_BETA[0], b=TRUE_BETA[1])
            hist = mechanisms.unweighted(cm, x_hist, sampler=cfg, seed=stream(seed, "fit", "historical"))
            rule = mechanisms.public_lipschitz_weights(cm, hist.fit, c=1.0)
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
                if name == "Weighted" and mix(name, eps) is not None:
                    row = {**row, **{kk: v for kk, v in _mech_row(lw, x, stream(seed, "syn", "Weighted"),
                                                                  mix_seed=mix(name, eps)).items() if kk.startswith("mix_")}}
                rows.append({"synth": name, "eps": eps, **row})
            we = mechanisms.weighted_e(cm, lw, eps, sampler=cfg, seed=stream(seed, "fit", "Weighted-e", k))
            cu = mechanisms.censored(cm, x, eps, sampler=cfg, seed=stream(seed, "fit", "Censor_uw", k))
            cw = mechanisms.censored(cm, x, eps, weights=lw.weights, sampler=cfg, seed=stream(seed, "fit", "Censor_w", k))
            results = [we, cu, cw]
            if rule is not None:
                results.append(mechanisms.censored_public(cm, x, eps, rule, sampler=cfg,
                                                          seed=stream(seed, "fit", "Censor_w-pub", k)))
            for res in results:
                if res.fit.censored:
                    _check_cap(res, eps)
                row = _mech_row(res, x, stream(seed, "syn", res.name, k), mix_seed=mix(res.name, eps, k))
                rows.append({"synth": res.name, "eps": eps, **row})
                if eps == ds_eps:
                    at_ds[res.name] = {kk: v for kk, v in row.items() if not kk.startswith("mix_")}
            for name, nb in PH_SYNTHS:
                rows.append({"synth": name, "eps": eps,
                             **_ph_row(x, eps, nb, params.get("ph_bins", "sqrt"), upper, stream(seed, "syn", name, k))})
                # PH is sensitive to its data-independent bin rule: keep the other rule of S1 too.
                alt_bins = params.get("ph_alt_bins", "log")
                if alt_bins is not None:
                    alt = _ph_row(x, eps, nb, alt_bins, upper, stream(seed, "syn", f"{name}-alt", k))
                    ph_alt.append({"ph_synth": name, "eps": eps,
                                   **{f"ph_alt_{k2}": alt[k2] for k2 in ("max_ecdf", "avg_ecdf", "mean", "median", "q15", "q90")}})
        main = rows_to_dataset(rows, ["synth", "eps"])
        if ph_alt:
            main = xr.merge([main, rows_to_dataset(ph_alt, ["ph_synth", "eps"])], join="outer", compat="no_conflicts")

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
        lw_ds = mechanisms.mechanism_result("Weighted", lw_ds_fit, c=c)
        we_ds = mechanisms.weighted_e(cm, lw_ds, ds_eps, sampler=cfg, seed=stream(seed, "fit", "Weighted-e", "ds"))
        cw_ds = mechanisms.censored(cm, x, ds_eps, weights=lw_ds_w, sampler=cfg, seed=stream(seed, "fit", "Censor_w", "ds"))
        _check_cap(cw_ds, ds_eps)
        for res in (lw_ds, we_ds, cw_ds):
            ds_rows.append({"ds_synth": res.name, "scaling": "downscale",
                            **_mech_row(res, x, stream(seed, "syn", res.name, "ds"))})
        for name in DOWNSCALE_SYNTHS:
            ds_rows.append({"ds_synth": name, "scaling": "none", **at_ds[name]})
    ds = rows_to_dataset(ds_rows, ["ds_synth", "scaling"])
    out = xr.merge([main, ds.rename({v: f"ds_{v}" for v in ds.data_vars})], join="outer", compat="no_conflicts")
    out["x_min"] = float(x.min())
    out["delta_unweighted"] = uw.privacy.delta
    out["delta_weighted"] = lw.privacy.delta
    if hist is not None:
        for kk, v in _fit_cols(hist.fit).items():
            out[f"hist_{kk}"] = v
        out["hist_delta"] = hist.privacy.delta
    return out


def release_params(rule: mechanisms.PublicLipschitzWeights) -> dict:
    """The ingredients of a public LW rule as JSON-able parameters of :func:`release_replicate`.

    The rule's (thinned) historical draws become lists, so they are part of the study's cache
    key: a different historical fit gives a different key.
    """
    return {"hist_draws": {k: [float(v) for v in np.asarray(a)] for k, a in rule.draws.items()},
            "hist_f_min": float(rule.f_min), "hist_f_max": float(rule.f_max), "c": float(rule.c), "g": float(rule.g)}


def _rule_from(cm, params: Mapping) -> mechanisms.PublicLipschitzWeights:
    draws = {k: np.asarray(v, dtype=float) for k, v in params["hist_draws"].items()}
    return mechanisms.PublicLipschitzWeights(compiled=cm, draws=draws, f_min=float(params["hist_f_min"]),
                                             f_max=float(params["hist_f_max"]), c=float(params["c"]),
                                             g=float(params.get("g", 0.0)))


#: The release workflow's synthesizers: (name, scaling).
RELEASE_ROWS = (("Censor_w-pub", "downscale"), ("Censor_w-pub", "none"), ("Censor_w", "downscale"), ("Censor_w", "none"))


def release_replicate(r: int, seed: np.random.SeedSequence, params: Mapping) -> xr.Dataset:
    """One later data set ("month") of the release workflow of Section 4.5.

    A new data set is drawn and released at the fixed ``eps`` with

    * **Censor_w-pub** (DP): the LW rule fixed on the historical fit (its ingredients are in
      ``params``, see :func:`release_params`), scaled by the calibrated ``c``
      (``scaling="downscale"``) and, for comparison, by 1 (``"none"``);
    * **Censor_w** (aDP, the papers' version): LW weights recomputed from this month's own
      unweighted fit, scaled by the same ``c`` and by 1.

    Parameters
    ----------
    params : mapping
        ``n``, ``eps``, ``c``, ``draws``, ``tune``, ``chains`` and the rule's ``hist_draws``,
        ``hist_f_min``, ``hist_f_max`` (and optionally ``g``).

    Returns
    -------
    xarray.Dataset
        Variables over ``(synth, scaling)``: Delta, eps, censoring count, utilities and
        diagnostics, plus the month's unweighted fit's ``fit_ok_unweighted`` and
        ``divergences_unweighted``.
    """
    n = int(params["n"])
    eps = float(params["eps"])
    c = float(params["c"])
    cfg = sampler_from(params)
    x = datasets.beta_data(n, stream(seed, "data"), a=TRUE_BETA[0], b=TRUE_BETA[1])
    cm = compiled_model(_family(params), x)
    rule = _rule_from(cm, params)
    rules = {"downscale": rule, "none": _rule_from(cm, {**params, "c": 1.0})}
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        uw = mechanisms.unweighted(cm, x, sampler=cfg, seed=stream(seed, "fit", "Unweighted"))
        w = lipschitz_weights(uw.bounds.abs_loglik)
        own = {"none": w, "downscale": scale_weights(w, c)}
        for name, scaling in RELEASE_ROWS:
            fseed = stream(seed, "fit", name, scaling)
            if name == "Censor_w-pub":
                res = mechanisms.censored_public(cm, x, eps, rules[scaling], sampler=cfg, seed=fseed)
            else:
                res = mechanisms.censored(cm, x, eps, weights=own[scaling], sampler=cfg, seed=fseed)
            _check_cap(res, eps)
            rows.append({"synth": name, "scaling": scaling, **_mech_row(res, x, stream(seed, "syn", name, scaling))})
    out = rows_to_dataset(rows, ["synth", "scaling"])
    out["fit_ok_unweighted"] = float(uw.fit.diagnostics.ok)
    out["divergences_unweighted"] = float(uw.fit.diagnostics.divergences)
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

    Synthesizers are shown by their registry labels, e.g. ``"Censor_w (aDP)"`` (the papers'
    version) and ``"Censor_w-pub (DP)"`` (ours only: the papers do not run it).

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
                out[(scaling, registry.label(name), "ours")] = ours
                out[(scaling, registry.label(name), "paper")] = PAPER_TABLE_S5[(scaling, name)]
        names = ["scaling", "synthesizer", "source"]
    else:
        shown = [s for s in ("Weighted-e", "Censor_w", "Censor_w-pub", "Censor_uw") if s in ds.synth.values]
        for eps in ds.eps.values:
            for name in shown:
                col = "n_truncated" if name == "Weighted-e" else "n_censored"
                out[(float(eps), registry.label(name), "ours")] = count_summary(ds[col].sel(synth=name, eps=eps).values)
                key = (int(eps), name) if float(eps).is_integer() else None
                if key in PAPER_TABLE1:
                    out[(float(eps), registry.label(name), "paper")] = PAPER_TABLE1[key]
        names = ["eps", "synthesizer", "source"]
    df = pd.DataFrame.from_dict(out, orient="index")
    df.index = pd.MultiIndex.from_tuples(df.index, names=names)
    return df


def _fits(ds: xr.Dataset) -> list[tuple[str, np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """Every MCMC fit of a study result once: (label, fit_ok, divergences, rhat, ess) arrays.

    Unweighted and Weighted are fitted once per replicate but stored at every eps; the "none"
    rows of the downscaling comparison repeat fits of the main study when the downscaling eps is
    on the grid (read from the study's ``params`` attribute), and the "none" Weighted row always
    does.
    """
    out = []
    for name in ds.synth.values:
        v = ds.sel(synth=name)
        if name in ("Unweighted", "Weighted"):
            v = v.isel(eps=0)
        ok = v["fit_ok"].values.ravel()
        if np.all(np.isnan(ok)):
            continue
        out.append((str(name), ok, v["divergences"].values.ravel(), v["rhat"].values.ravel(), v["ess"].values.ravel()))
    if "hist_fit_ok" in ds:
        out.append(("historical (Unweighted)", *(ds[f"hist_{k}"].values.ravel() for k in ("fit_ok", "divergences", "rhat", "ess"))))
    if "ds_fit_ok" in ds:
        on_grid = "params" not in ds.attrs or float(json.loads(ds.attrs["params"])["downscale_eps"]) in ds.eps.values
        for name in ds.ds_synth.values:
            scalings = ["downscale"] + ([] if on_grid or name == "Weighted" else ["none"])
            for scaling in scalings:
                v = ds.sel(ds_synth=name, scaling=scaling)
                out.append((f"{name}, downscaling study ({scaling})",
                            *(v[f"ds_{k}"].values.ravel() for k in ("fit_ok", "divergences", "rhat", "ess"))))
    return out


def fit_failures(ds: xr.Dataset) -> tuple[int, int]:
    """(failed, total) MCMC fits of a study result, counting each fit once (see :func:`_fits`).

    A fit fails when R-hat or bulk ESS misses its threshold or any divergence occurred.
    """
    failed = total = 0
    for _, ok, *_ in _fits(ds):
        v = ok[~np.isnan(ok)]
        failed += int((v == 0).sum())
        total += int(v.size)
    return failed, total


def convergence_table(ds: xr.Dataset) -> pd.DataFrame:
    """Per synthesizer: fits, failed fits, fits with divergences, total divergences, worst R-hat, least ESS."""
    rows = {}
    for name, ok, div, rhat, ess in _fits(ds):
        keep = ~np.isnan(ok)
        rows[name] = {"fits": int(keep.sum()), "failed": int((ok[keep] == 0).sum()),
                      "fits with divergences": int((div[keep] > 0).sum()), "divergences": int(np.nansum(div[keep])),
                      "max R-hat": float(np.nanmax(rhat[keep])) if keep.any() else np.nan,
                      "min bulk ESS": float(np.nanmin(ess[keep])) if keep.any() else np.nan}
    return pd.DataFrame.from_dict(rows, orient="index")
