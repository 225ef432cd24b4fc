"""Replicates of the censoring chapter (the censoring paper, Sections 3–4; supplement S3–S5).

:func:`replicate` is one replicate of the Monte Carlo study. It draws a confidential data set
``x ~ Beta(0.5, 3)`` of size ``n``, fits the Beta synthesizer (:class:`dpsynth.models.BetaFamily`)
and builds every synthesizer of the study (names and guarantee types from :mod:`dpsynth.registry`):

* **Unweighted** (none) and **Weighted** (LW weights, aDP) once per data set (they do not depend
  on eps, so they are stored once, with eps NaN);
* for each eps of the grid: **Weighted-e** (aDP), **Censor_uw** (DP), **Censor_w** (aDP: the
  papers' version, Lipschitz weights computed from the same confidential data, censored at
  eps/2), **Censor_w-pub** (DP: the LW rule fixed on an unweighted fit of a separate historical
  data set drawn from the same distribution, once per replicate), **PH** (DP, Laplace(1/eps):
  eps with one record removed) and **PH-paper** (the papers' Laplace(2/eps): eps/2 with one
  record removed), in research mode on the public bound [0, 1], each also with a second
  data-independent bin rule (``ph_alt_*``);
* for Weighted-e, how its refit moved (``n_above_target``, ``n_risen``, ``refit_shift_sd``: see
  :func:`_refit_cols`);
* at the downscaling eps (Section 4.4): Weighted, Weighted-e and Censor_w again with the LW
  weights multiplied by the downscaling factor ``c``;
* at each eps, Censor_w's censoring count with MILDER weights (:data:`MILDER_LW`, see
  :func:`milder_weights`): one censored fit per variant, only the count and convergence kept.

Every synthetic data set is generated from ONE posterior draw (:func:`dpsynth.synthetic_data.synthesize`).
At ``mix_eps`` the synthesizers of :data:`MIX_SYNTHS` also release a record-wise-mixed data set
(:func:`dpsynth.synthetic_data.release` with ``mix_draws=True``), kept with the composed eps it costs.

The one-data-set studies go through the same driver (one replicate each, cached):
:func:`figure1_replicate` (prior, posterior and censored posterior of ``phi``),
:func:`calibration_replicate` (the release workflow's historical fit, calibrated ``c`` and public
LW rule) and :func:`release_replicate` (one later "month" of the release workflow).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import xarray as xr
from scipy import stats

from dpsynth import mechanisms, metrics
from dpsynth.fitting import Fit, compiled_model
from dpsynth.mechanisms import RunContext
from dpsynth.mechanisms import run as run_mechanism
from dpsynth.models import BetaFamily
from dpsynth.privacy import CENSOR_TOL
from dpsynth.registry import display_name, key_of
from dpsynth.seeds import generator, stream
from dpsynth.synthetic_data import release, synthesize
from dpsynth.weights import lipschitz_weights

from ... import datasets
from ...studies import data_fingerprint, fits_to_dataset, rows_to_dataset
from .params import CensoringParams

__all__ = [
    "SYNTHS",
    "PH_SYNTHS",
    "MIX_SYNTHS",
    "DOWNSCALE_SYNTHS",
    "MIX_NAMES",
    "DOWNSCALE_NAMES",
    "RELEASE_ROWS",
    "MILDER_LW",
    "milder_weights",
    "TRUE_BETA",
    "true_stats",
    "replicate",
    "split_study",
    "figure1_replicate",
    "calibration_replicate",
    "release_params",
    "release_replicate",
]

#: Synthesizers of the main study (registry display names; Censor_w-pub only with ``public``).
SYNTHS = ("Unweighted", "Weighted", "Weighted-e", "Censor_w", "Censor_w-pub", "Censor_uw", "PH", "PH-paper")
#: The perturbed histogram both ways: (name, registry key). PH's eps is calibrated with one record
#: removed, PH-paper's (the papers' Laplace(2/eps)) with one record replaced.
PH_SYNTHS = (("PH", "ph"), ("PH-paper", "ph_paper"))
#: Synthesizers with a record-wise-mixed release kept at ``mix_eps``.
MIX_SYNTHS = ("Weighted", "Censor_w", "Censor_w-pub", "Censor_uw")
#: Synthesizers re-run with downscaled weights (Section 4.4).
DOWNSCALE_SYNTHS = ("Weighted", "Weighted-e", "Censor_w")
#: :data:`MIX_SYNTHS` and :data:`DOWNSCALE_SYNTHS` as the loaded results name them (the files store the
#: censoring paper's "Weighted"; :func:`dpsynth.registry.display_name` shows it as LW).
MIX_NAMES = tuple(display_name(n) for n in MIX_SYNTHS)
DOWNSCALE_NAMES = tuple(display_name(n) for n in DOWNSCALE_SYNTHS)
#: The release workflow's synthesizers: (name, scaling).
RELEASE_ROWS = (("Censor_w-pub", "downscale"), ("Censor_w-pub", "none"), ("Censor_w", "downscale"),
                ("Censor_w", "none"))
#: Milder variants of the LW weights (closer to 1), name -> (shift g, power p): alpha_i = clip(1 - r_i^p + g, 0, 1),
#: the LW rule's own ``g`` and ``power`` (:mod:`dpsynth.mechanisms.lipschitz`).
MILDER_LW = {"shift g = 0.25": (0.25, 1.0), "shift g = 0.5": (0.5, 1.0), "power 1 - r^2": (0.0, 2.0)}
#: The data-generating distribution of the study.
TRUE_BETA = (0.5, 3.0)

_UTIL = ("max_ecdf", "avg_ecdf", "mean", "median", "q15", "q90")


def true_stats(a: float = TRUE_BETA[0], b: float = TRUE_BETA[1]) -> dict[str, float]:
    """Analytical mean, median, 15th and 90th percentiles of Beta(a, b)."""
    d = stats.beta(a, b)
    return {"mean": float(d.mean()), "median": float(d.median()), "q15": float(d.ppf(0.15)), "q90": float(d.ppf(0.90))}


def milder_weights(abs_loglik, g: float = 0.0, p: float = 1.0) -> np.ndarray:
    """LW weights made milder: ``alpha_i = clip(1 - r_i^p + g, 0, 1)``.

    ``r_i`` is the LW rule's scaled ``max_s |f|`` (:func:`dpsynth.weights.lipschitz_weights`);
    ``g = 0, p = 1`` gives the LW weights themselves, ``g > 0`` shifts every weight up, ``p > 1``
    lowers ``r_i^p`` below ``r_i`` (so raises the weight) except at the extremes ``r_i = 0, 1``.
    Records with a non-finite ``f_i`` keep weight 0.
    """
    if p <= 0:
        raise ValueError(f"`p` must be > 0; got {p!r}.")
    return lipschitz_weights(abs_loglik, c=1.0, g=g, power=p)


def _family(p: CensoringParams) -> BetaFamily:
    return BetaFamily(lambda_min=p.lambda_min, lambda_alpha=p.lambda_alpha)


def _data(n: int, seed) -> np.ndarray:
    return datasets.beta_data(n, seed, a=TRUE_BETA[0], b=TRUE_BETA[1])


def _fit_cols(fit: Fit | None) -> dict:
    """Diagnostics of one fit; ``mcmc`` is False for rows without a fit (PH, Data)."""
    if fit is None:
        return {"mcmc": False, "converged": True, "rhat": np.nan, "ess": np.nan, "divergences": 0}
    d = fit.diagnostics
    return {"mcmc": True, "converged": bool(d.ok), "rhat": d.rhat_max, "ess": d.ess_min,
            "divergences": int(d.divergences)}


def _utility(x: np.ndarray, syn: np.ndarray) -> dict:
    e = metrics.ecdf_distances(x, syn)
    return {"max_ecdf": e.max_ecdf, "avg_ecdf": e.avg_ecdf, **metrics.summary_stats(syn)}


def _check_cap(res: mechanisms.MechanismResult, eps: float) -> None:
    if not res.privacy.delta <= eps / 2 + CENSOR_TOL:
        raise AssertionError(f"{res.name} at eps={eps}: Delta={res.privacy.delta} > eps/2")


_NAN_REFIT = {"n_above_target": np.nan, "n_risen": np.nan, "refit_shift_sd": np.nan}


def _refit_cols(we: mechanisms.MechanismResult, lw: mechanisms.MechanismResult, eps: float) -> dict:
    """How Weighted-e's refit moved: records above eps/2 after the refit, and the shift of ``phi``.

    ``n_above_target`` counts the refit's records with ``Delta_i > eps/2``; ``n_risen`` those of
    them whose LW ``Delta_i`` was at or under eps/2 (so they were kept, and their bound rose with
    the refit); ``refit_shift_sd`` is the refit's posterior mean of ``phi`` minus the LW fit's, in
    LW posterior standard deviations.
    """
    m = eps / 2
    above = np.asarray(we.bounds.delta_i) > m + CENSOR_TOL
    risen = above & (np.asarray(lw.bounds.delta_i) <= m)
    phi_lw, phi_we = (np.asarray(r.fit.draws["phi"], dtype=float).ravel() for r in (lw, we))
    sd = float(phi_lw.std())
    return {"n_above_target": float(above.sum()), "n_risen": float(risen.sum()),
            "refit_shift_sd": float((phi_we.mean() - phi_lw.mean()) / sd) if sd > 0 else np.nan}


_NAN_MIX = {"mix_max_ecdf": np.nan, "mix_avg_ecdf": np.nan, "mix_eps": np.nan, "mix_eps_replace": np.nan,
            "mix_n_draws": np.nan}
_NAN_ALT = {f"ph_alt_{k}": np.nan for k in _UTIL}


def _mech_row(res: mechanisms.MechanismResult, x: np.ndarray, seed, *, mix_seed=None) -> dict:
    """One synthesizer's row; with ``mix_seed`` also a record-wise-mixed release (``mix_*``)."""
    p = res.privacy
    row = {
        "delta": p.delta,
        # eps of one released posterior draw (for aDP synthesizers: 2 Delta of this data set).
        "eps_remove": p.eps,
        "eps_replace": p.eps_replace,
        "noise_scale": np.nan,
        "n_censored": float(p.n_censored) if res.fit.censored else np.nan,
        "n_truncated": float(p.extra.get("n_truncated", np.nan)),
        # Records whose *unweighted* |log-likelihood| exceeds M at a draw of this fit: an
        # alternative count, used to investigate the published Censor_w counts.
        "n_exceed_unweighted": float((res.bounds.abs_loglik > p.bound).sum()) if res.fit.censored else np.nan,
        **_utility(x, synthesize(res.fit, seed)),
        **_fit_cols(res.fit),
        **_NAN_MIX,
        **_NAN_ALT,
        **_NAN_REFIT,
    }
    if mix_seed is not None:
        mixed = release(res, mix_seed, mix_draws=True)
        e = metrics.ecdf_distances(x, mixed.values)
        row.update({"mix_max_ecdf": e.max_ecdf, "mix_avg_ecdf": e.avg_ecdf, "mix_eps": mixed.eps,
                    "mix_eps_replace": mixed.eps_replace, "mix_n_draws": float(mixed.n_draws_used)})
    return row


def _ph(ctx: RunContext, key: str, eps: float, bins, seed) -> tuple[np.ndarray, mechanisms.MechanismResult]:
    """One perturbed histogram (research mode, public bound [0, 1]) and one synthetic data set from it."""
    # the study's size n is a design constant, public: a bin rule may use it (a release's may not use a confidential n)
    res = run_mechanism(key, ctx, eps=eps, lower=0.0, upper=1.0, bins=bins, n_public=ctx.n, mode="research")
    return res.release.sample(ctx.n, generator(seed)), res


def _ph_row(ctx: RunContext, key: str, eps: float, p: CensoringParams, seed, alt_seed) -> dict:
    syn, res = _ph(ctx, key, eps, p.ph_bins, seed)
    pr = res.privacy
    row = {"delta": np.nan, "eps_remove": pr.eps, "eps_replace": pr.eps_replace, "noise_scale": pr.extra["noise_scale"],
           "n_censored": np.nan, "n_truncated": np.nan, "n_exceed_unweighted": np.nan, **_utility(ctx.x, syn),
           **_fit_cols(None), **_NAN_MIX, **_NAN_ALT, **_NAN_REFIT}
    if p.ph_alt_bins is not None:
        # PH is sensitive to its data-independent bin rule: keep the other rule of the supplement too.
        alt = _utility(ctx.x, _ph(ctx, key, eps, p.ph_alt_bins, alt_seed)[0])
        row.update({f"ph_alt_{k}": alt[k] for k in _UTIL})
    return row


def replicate(r: int, seed: np.random.SeedSequence, params: Mapping) -> xr.Dataset:
    """One replicate of the censoring study.

    Parameters
    ----------
    r : int
        Replicate index (the seed already addresses it; kept for the study driver's signature).
    seed : numpy.random.SeedSequence
        This replicate's stream.
    params : mapping
        :meth:`CensoringParams.study_dict` output.

    Returns
    -------
    xarray.Dataset
        Variables over ``fit`` (coordinates ``synthesizer`` and ``eps``, eps NaN for Data,
        Unweighted and Weighted) for the main study; ``milder_n_censored`` and ``milder_converged``
        over ``(lw_variant, lw_eps)``: Censor_w with the weights of :data:`MILDER_LW`; variables prefixed ``ds_`` over
        ``(ds_synthesizer, scaling)`` for the downscaling comparison, with ``ds_own_fit`` False
        where a "none" row repeats a fit of the main study; ``hist_*`` diagnostics of the
        historical fit; scalars ``x_min``, ``delta_unweighted`` and ``delta_weighted``. Split it
        with :func:`split_study`.

    Raises
    ------
    AssertionError
        If a censored synthesizer reports ``Delta > eps / 2``.
    """
    p = CensoringParams.from_mapping(params)
    cfg = p.sampler
    eps_grid = [float(e) for e in p.eps_grid]
    ds_eps, mix_eps = float(p.downscale_eps), float(p.mix_eps)
    x = _data(p.n, stream(seed, "data"))
    # every mechanism by its registry key on one context: the unweighted and LW fits are shared
    ctx = RunContext(x, family=_family(p), sampler=cfg, seed_fn=lambda *parts: stream(seed, "fit", *parts),
                     compiled=compiled_model(_family(p), x))

    def mix(name, eps, *key):
        return stream(seed, "mix", name, *key) if (eps == mix_eps and name in MIX_SYNTHS) else None

    uw = run_mechanism("unweighted", ctx)
    lw = run_mechanism("weighted", ctx)
    x_hist = None
    if p.public:
        # A historical data set from the same distribution, on its own stream, fitted once
        # (unweighted) by Censor_w-pub; the LW rule fixed on it does not depend on x.
        x_hist = _data(p.n, stream(seed, "historical", "data"))
    lw_row = _mech_row(lw, x, stream(seed, "syn", "Weighted"), mix_seed=stream(seed, "mix", "Weighted"))
    rows = [
        {"synthesizer": "Data", **_utility(x, x), **_fit_cols(None)},
        {"synthesizer": "Unweighted", **_mech_row(uw, x, stream(seed, "syn", "Unweighted"))},
        {"synthesizer": "Weighted", **lw_row},
    ]
    at_ds: dict[str, dict] = {}
    mild_n = np.full((len(MILDER_LW), len(eps_grid)), np.nan)
    mild_ok = np.zeros((len(MILDER_LW), len(eps_grid)), dtype=bool)
    hist_fit = None
    for k, eps in enumerate(eps_grid):
        for j, (g, pw) in enumerate(MILDER_LW.values()):
            # Only the count is needed: no synthetic data from these fits.
            mres = run_mechanism("censor_w", ctx, eps=eps, g=g, power=pw)
            mild_n[j, k], mild_ok[j, k] = float(mres.privacy.n_censored), bool(mres.fit.diagnostics.ok)
        we = run_mechanism("weighted_e", ctx, eps=eps)
        cu = run_mechanism("censor_uw", ctx, eps=eps)
        cw = run_mechanism("censor_w", ctx, eps=eps)
        results = [we, cu, cw]
        if x_hist is not None:
            cwp = run_mechanism("censor_w_public", ctx, eps=eps, historical=(x_hist, None))
            hist_fit = cwp.fits[0]
            results.append(cwp)
        for res in results:
            if res.fit.censored:
                _check_cap(res, eps)
            row = _mech_row(res, x, stream(seed, "syn", res.name, k), mix_seed=mix(res.name, eps, k))
            if res is we:
                row.update(_refit_cols(we, lw, eps))
            rows.append({"synthesizer": res.name, "eps": eps, **row})
            if eps == ds_eps:
                at_ds[res.name] = {**row, "own_fit": False}
        for name, key in PH_SYNTHS:
            syn_seeds = stream(seed, "syn", name, k), stream(seed, "syn", f"{name}-alt", k)
            rows.append({"synthesizer": name, "eps": eps, **_ph_row(ctx, key, eps, p, *syn_seeds)})
    for row in rows:
        if row["synthesizer"] in ("Data", "Unweighted", "Weighted"):
            row.setdefault("eps", np.nan)
    main = fits_to_dataset(rows)

    # Section 4.4: the same three synthesizers with the LW weights scaled by c.
    if ds_eps not in eps_grid:
        # The comparison's "none" rows need the plain fits at ds_eps too.
        for key in ("weighted_e", "censor_w"):
            res = run_mechanism(key, ctx, eps=ds_eps)
            at_ds[res.name] = {**_mech_row(res, x, stream(seed, "syn", res.name, "ds0")), "own_fit": True}
    at_ds["Weighted"] = {**lw_row, "own_fit": False}
    c = float(p.downscale)
    lw_ds = run_mechanism("weighted", ctx, c=c)
    we_ds = run_mechanism("weighted_e", ctx, eps=ds_eps, c=c)
    cw_ds = run_mechanism("censor_w", ctx, eps=ds_eps, c=c)
    _check_cap(cw_ds, ds_eps)
    ds_rows = [{"ds_synthesizer": res.name, "scaling": "downscale", "own_fit": True,
                **_mech_row(res, x, stream(seed, "syn", res.name, "ds"))} for res in (lw_ds, we_ds, cw_ds)]
    ds_rows += [{"ds_synthesizer": name, "scaling": "none", **at_ds[name]} for name in DOWNSCALE_SYNTHS]
    keep = ("own_fit", "delta", "eps_remove", "eps_replace", "n_censored", "n_truncated", *_UTIL, "mcmc", "converged",
            "rhat", "ess", "divergences")
    ds = rows_to_dataset([{k: v for k, v in row.items() if k in keep or k in ("ds_synthesizer", "scaling")}
                          for row in ds_rows], ["ds_synthesizer", "scaling"])
    out = xr.merge([main, ds.rename({v: f"ds_{v}" for v in ds.data_vars})])
    coords = {"lw_variant": list(MILDER_LW), "lw_eps": eps_grid}
    out["milder_n_censored"] = xr.DataArray(mild_n, dims=("lw_variant", "lw_eps"), coords=coords)
    out["milder_converged"] = xr.DataArray(mild_ok, dims=("lw_variant", "lw_eps"), coords=coords)
    out["x_min"] = float(x.min())
    out["data_fingerprint"] = data_fingerprint(x, *([x_hist] if x_hist is not None else []))
    out["delta_unweighted"] = uw.privacy.delta
    out["delta_weighted"] = lw.privacy.delta
    if hist_fit is not None:
        for kk, v in _fit_cols(hist_fit).items():
            if kk != "mcmc":
                out[f"hist_{kk}"] = v
        out["hist_delta"] = hist_fit.bounds.delta
    return out


def split_study(study: xr.Dataset) -> tuple[xr.Dataset, xr.Dataset]:
    """The main study's fits and the downscaling comparison of a :func:`replicate` result.

    Returns
    -------
    (main, downscale) : tuple of xarray.Dataset
        ``main`` holds every variable without the ``ds_`` prefix (the ``fit`` dimension and the
        per-replicate scalars); ``downscale`` the ``ds_`` variables, renamed without the prefix,
        over ``(synthesizer, scaling)``.
    """
    ds_vars = [v for v in study.data_vars if v.startswith("ds_")]
    main = study.drop_vars(ds_vars + ["ds_synthesizer", "scaling"], errors="ignore")
    down = study[ds_vars].drop_vars(["synthesizer", "eps"], errors="ignore")
    down = down.rename({v: v[3:] for v in ds_vars}).rename({"ds_synthesizer": "synthesizer"})
    down.attrs = dict(study.attrs)
    return main, down


def figure1_replicate(r: int, seed: np.random.SeedSequence, params: Mapping) -> xr.Dataset:
    """The illustration: posterior and censored posterior (Censor_uw at ``fig1_eps``) of ``phi`` on one data set.

    Returns
    -------
    xarray.Dataset
        ``phi`` over ``(synthesizer, draw)`` for Unweighted (the posterior) and Censor_uw (the
        censored posterior), with each fit's ``delta``, ``eps_remove``, ``eps_replace``,
        ``n_censored``, ``converged``, ``divergences``, ``rhat`` and ``ess``; and the true mean.
    """
    p = CensoringParams.from_mapping(params)
    x = _data(p.n, stream(seed, "figure1", "data"))
    ctx = RunContext(x, family=_family(p), sampler=p.sampler, seed_fn=lambda *parts: stream(seed, "figure1", *parts))
    post = run_mechanism("unweighted", ctx)
    cens = run_mechanism("censor_uw", ctx, eps=p.fig1_eps)
    _check_cap(cens, p.fig1_eps)
    names = ["Unweighted", "Censor_uw"]
    res = [post, cens]
    cols = {k: ("synthesizer", [_fit_cols(m.fit)[k] for m in res]) for k in ("converged", "rhat", "ess", "divergences")}
    return xr.Dataset(
        {"phi": (("synthesizer", "draw"), np.stack([np.asarray(m.fit.draws["phi"], dtype=float) for m in res])),
         "delta": ("synthesizer", [m.privacy.delta for m in res]),
         "eps_remove": ("synthesizer", [m.privacy.eps for m in res]),
         "eps_replace": ("synthesizer", [m.privacy.eps_replace for m in res]),
         "n_censored": ("synthesizer", [float(post.privacy.n_censored), float(cens.privacy.n_censored)]),
         **cols, "true_mean": true_stats()["mean"], "data_fingerprint": data_fingerprint(x)},
        coords={"synthesizer": names},
    )


def calibration_replicate(r: int, seed: np.random.SeedSequence, params: Mapping) -> xr.Dataset:
    """The release workflow's calibration on a historical data set (Section 4.5).

    Fits the historical data set (unweighted), calibrates the downscaling factor ``c`` with
    :func:`dpsynth.mechanisms.calibrate_downscale` so that the Weighted Delta lands just under
    ``release_eps / 2``, and fixes the public LW rule (200 thinned draws) with that ``c``.

    Returns
    -------
    xarray.Dataset
        ``c``, ``delta`` (Weighted Delta at ``c``), ``trace_c`` / ``trace_delta`` over ``step``,
        the historical fit's ``delta_unweighted``, ``converged``, ``divergences``, ``rhat``,
        ``ess``, and the rule's ingredients (``rule_<param>`` over ``rule_draw``, ``f_min``,
        ``f_max``, ``g``), which :func:`release_params` turns into the release study's parameters.
    """
    p = CensoringParams.from_mapping(params)
    x_hist = _data(p.n, stream(seed, "release", "historical"))
    cm = compiled_model(_family(p), x_hist)
    hist = mechanisms.unweighted(cm, x_hist, sampler=p.sampler, seed=stream(seed, "release", "historical-fit"))
    calib = mechanisms.calibrate_downscale(cm, hist.fit, p.release_eps, sampler=p.sampler,
                                           seed=stream(seed, "release", "calibrate"))
    rule = mechanisms.public_lipschitz_weights(cm, hist.fit, c=calib.c, max_draws=200)
    trace = np.asarray(calib.trace, dtype=float)
    fc = _fit_cols(hist.fit)
    return xr.Dataset({
        "c": calib.c, "delta": calib.delta, "delta_unweighted": hist.privacy.delta,
        "trace_c": ("step", trace[:, 0]), "trace_delta": ("step", trace[:, 1]),
        **{k: fc[k] for k in ("converged", "rhat", "ess", "divergences")},
        **{f"rule_{k}": ("rule_draw", np.asarray(v, dtype=float)) for k, v in rule.draws.items()},
        "f_min": rule.f_min, "f_max": rule.f_max, "g": rule.g, "data_fingerprint": data_fingerprint(x_hist),
    })


def release_params(calibration: xr.Dataset, p: CensoringParams) -> dict:
    """Parameters of :func:`release_replicate` from a calibration result (one replicate).

    The rule's (thinned) historical draws become lists, so they are part of the release study's
    cache key: a different historical fit gives a different key.
    """
    cal = calibration.isel(replicate=0) if "replicate" in calibration.dims else calibration
    draws = {v[5:]: [float(t) for t in cal[v].values] for v in cal.data_vars if v.startswith("rule_")}
    return {**p.study_dict(), "hist_draws": draws, "hist_f_min": float(cal["f_min"]), "hist_f_max": float(cal["f_max"]),
            "c": float(cal["c"]), "g": float(cal["g"])}


def _rule_from(cm, params: Mapping, c: float) -> mechanisms.PublicLipschitzWeights:
    draws = {k: np.asarray(v, dtype=float) for k, v in params["hist_draws"].items()}
    return mechanisms.PublicLipschitzWeights(compiled=cm, draws=draws, f_min=float(params["hist_f_min"]),
                                             f_max=float(params["hist_f_max"]), c=float(c),
                                             g=float(params.get("g", 0.0)))


def release_replicate(r: int, seed: np.random.SeedSequence, params: Mapping) -> xr.Dataset:
    """One later data set ("month") of the release workflow of Section 4.5.

    A new data set is drawn and released at the fixed ``release_eps`` with

    * **Censor_w-pub** (DP): the LW rule fixed on the historical fit (its ingredients are in
      ``params``, see :func:`release_params`), scaled by the calibrated ``c``
      (``scaling="downscale"``) and, for comparison, by 1 (``"none"``);
    * **Censor_w** (aDP, the papers' version): LW weights recomputed from this month's own
      unweighted fit, scaled by the same ``c`` and by 1.

    Returns
    -------
    xarray.Dataset
        Variables over ``(synthesizer, scaling)``: Delta, eps, censoring count, utilities and
        diagnostics, plus the month's unweighted fit's ``converged_unweighted`` and
        ``divergences_unweighted``.
    """
    p = CensoringParams.from_mapping(params)
    eps, c, cfg = float(p.release_eps), float(params["c"]), p.sampler
    x = _data(p.n, stream(seed, "data"))
    ctx = RunContext(x, family=_family(p), sampler=cfg, seed_fn=lambda *parts: stream(seed, "fit", *parts))
    scale = {"downscale": c, "none": 1.0}
    # Censor_w-pub: the historical rule scaled by c; the papers' Censor_w: LW weights from this
    # month's own unweighted fit, scaled by the same c
    settings = {"censor_w_public": lambda sc: {"rule": _rule_from(ctx.compiled, params, sc)},
                "censor_w": lambda sc: {"c": sc}}
    rows = []
    for name, scaling in RELEASE_ROWS:
        key = key_of(name)
        res = run_mechanism(key, ctx, eps=eps, **settings[key](scale[scaling]))
        _check_cap(res, eps)
        row = _mech_row(res, x, stream(seed, "syn", name, scaling))
        rows.append({"synthesizer": name, "scaling": scaling,
                     **{k: v for k, v in row.items() if not k.startswith(("mix_", "ph_alt_")) and k not in _NAN_REFIT}})
    out = rows_to_dataset(rows, ["synthesizer", "scaling"])
    uw = run_mechanism("unweighted", ctx)  # the month's unweighted fit, behind Censor_w's weights
    out["converged_unweighted"] = bool(uw.fit.diagnostics.ok)
    out["divergences_unweighted"] = int(uw.fit.diagnostics.divergences)
    out["data_fingerprint"] = data_fingerprint(x)
    return out
