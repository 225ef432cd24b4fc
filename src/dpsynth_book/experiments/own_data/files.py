"""Two studies of the "Your own data" chapter: three real files with default settings, and a unit-free window.

:func:`files_replicate` (study ``own_data-files``) does, for each real file of
:data:`dpsynth_book.public_data.REAL_FILES` (CPS 1988 wages, continuous; NMES 1987-88 physician visits,
a count; the fishing mode, categorical) and each eps, what a newcomer types with the unit-free
censored model named::

    s = Synthesizer(df, target, covariates=list(file.covariates), mechanism="censor_ref", eps=eps,
                    progress=False)
    s.fit(seed=...)

with default settings otherwise (the model chosen from the target's type). A fit that fails its R-hat, ESS or
divergence checks is recorded as it is: the library runs every fit once (convergence decides nothing).
Censor_ref is named because the default, ``mechanism="auto"``, picks from the choosing page's
decision table, and this study is Censor_ref's on files it was not written for (the decision table
has its own study). ``sampler=`` is passed only when the preset's MCMC settings differ
from the sampler's defaults (quick and smoke scales; the paper scale uses the defaults). It then
draws one synthetic data set from one posterior draw (:meth:`dpsynth.Synthesizer.sample_unaccounted`,
research, not booked in a ledger) and measures it as the release report does
(:mod:`dpsynth.report`): ECDF distance, quantiles, the regression of the target on the covariates
and the pMSE for a numeric target; level shares, total variation distance, linear probability
models and the pMSE for a categorical one.

:func:`unitfree_replicate` (study ``own_data-unitfree``) fits the CPS wages (a marginal
lognormal, no covariates, as :func:`~dpsynth_book.experiments.own_data.replicate.units_replicate`) in
dollars, thousands and cents with Censor_ref (its default settings) and Censor_uw. Censor_ref's
statement, weight and window are the same in every unit by construction (each record's difference
from its own reference is unit-free); its censored count and utility must not move with the unit
beyond Monte Carlo error, while Censor_uw's censoring does.

Random streams are addressed by the cell (``stream(seed, file, eps)``, ``stream(seed, unit,
mechanism, eps)``), so a cell recomputed alone repeats the shipped one.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Mapping

import numpy as np
import pandas as pd
import xarray as xr

from dpsynth import metrics, registry
from dpsynth.covariates import CovariateDesign
from dpsynth.mcmc_settings import SamplerConfig
from dpsynth.report import _categorical_regression, _regression, _term_names, _transform, analysis_scale
from dpsynth.seeds import stream

from ...public_data import REAL_FILES, UNITS, cps1988
from ...studies import data_fingerprint
from .params import OwnDataParams

__all__ = ["CURVE_LEVELS", "SUMMARY_QUANTILES", "file_frame", "report_measures", "independent_columns",
           "files_replicate",
           "unitfree_replicate", "sampler_of"]

#: Quantile levels of the stored quantile curves (the report-style figure): 0.01, 0.02, ..., 0.99.
CURVE_LEVELS = tuple(round(k / 100, 2) for k in range(1, 100))
#: Quantile levels of the files table.
SUMMARY_QUANTILES = (0.1, 0.25, 0.5, 0.75, 0.9)


def file_frame(name: str, n: int = 0) -> pd.DataFrame:
    """The real file ``name`` as a newcomer loads it (:meth:`dpsynth_book.public_data.RealFile.load`).

    With ``n > 0`` the first ``n`` records of a fixed permutation (smoke tests only).
    """
    df = REAL_FILES[name].load()
    if n and n < len(df):
        idx = np.random.default_rng(20261123).permutation(len(df))[:n]
        df = df.iloc[np.sort(idx)].reset_index(drop=True)
    return df


def sampler_of(p: OwnDataParams) -> SamplerConfig | None:
    """The sampler to pass: None (the Synthesizer's default) when the preset's settings are the defaults."""
    from dpsynth.synthesizer import RELEASE_SAMPLER

    cfg = p.sampler
    d = SamplerConfig(**RELEASE_SAMPLER)
    same = (cfg.draws, cfg.tune, cfg.chains, cfg.mass_matrix) == (d.draws, d.tune, d.chains, d.mass_matrix)
    return None if same else cfg


def report_measures(original: pd.DataFrame, synthetic: pd.DataFrame, target: str, covariates, levels=None) -> dict:
    """The release report's measures of ``synthetic`` against ``original`` (:mod:`dpsynth.report`), without a page.

    Returns
    -------
    dict
        ``terms``, ``coef_original``, ``coef_synthetic``, ``se_original`` and ``overlap`` (the 95%
        interval overlap, Karr et al. 2006) of the report's regression (log or log(1 + y) of a
        numeric target, linear probability models of a categorical one), ``pmse``, ``pmse_null``,
        ``pmse_ratio``; for a numeric target ``max_ecdf``, ``avg_ecdf``, ``curve_original`` and
        ``curve_synthetic`` (quantiles at :data:`CURVE_LEVELS`), ``n_off_scale`` (synthetic values
        without the regression's scale, left out as the report does); for a categorical one
        ``share_original``, ``share_synthetic`` and ``tvd``.
    """
    covs = list(covariates)
    orig = original.reset_index(drop=True)
    rel = synthetic.reset_index(drop=True)
    design = CovariateDesign.from_frame(orig, covs)
    keep = independent_columns(design.matrix(orig))
    terms = [t for j, t in enumerate(_term_names(design)) if j in keep]
    X = design.matrix(orig)[:, keep]
    out: dict = {"dropped": [t for j, t in enumerate(_term_names(design)) if j not in keep]}
    if levels is not None:
        code = {str(v): i for i, v in enumerate(levels)}
        yc = orig[target].astype(str).map(code).to_numpy(dtype=int)
        ysc = rel[target].astype(str).map(code).to_numpy(dtype=int)
        k = len(levels)
        p = np.bincount(yc, minlength=k) / yc.size
        q = np.bincount(ysc, minlength=k) / ysc.size
        Xs = design.matrix(rel)[:, keep]
        reg = _categorical_regression(yc, X, ysc, Xs, terms, list(levels))
        onehot = lambda c: (c[:, None] == np.arange(1, k)[None, :]).astype(float)  # noqa: E731
        pm = metrics.pmse(np.column_stack([onehot(yc), X[:, 1:]]), np.column_stack([onehot(ysc), Xs[:, 1:]]))
        out.update(share_original=p, share_synthetic=q, tvd=0.5 * float(np.abs(p - q).sum()))
    else:
        ys_all = rel[target].to_numpy(dtype=float)
        finite = np.isfinite(ys_all)
        rel = rel.loc[finite].reset_index(drop=True)
        y, ys = orig[target].to_numpy(dtype=float), rel[target].to_numpy(dtype=float)
        kind, _ = analysis_scale(orig[target])
        ty = _transform(kind, y)
        with np.errstate(divide="ignore", invalid="ignore"):
            tys = _transform(kind, ys)
        on_scale = np.isfinite(tys)
        tys, Xs = tys[on_scale], design.matrix(rel.loc[on_scale].reset_index(drop=True))[:, keep]
        d = metrics.ecdf_distances(y, ys)
        reg = _regression(ty, X, tys, Xs, terms)
        pm = metrics.pmse(np.column_stack([ty, X[:, 1:]]), np.column_stack([tys, Xs[:, 1:]]))
        out.update(max_ecdf=float(d.max_ecdf), avg_ecdf=float(d.avg_ecdf),
                   curve_original=np.quantile(y, CURVE_LEVELS), curve_synthetic=np.quantile(ys, CURVE_LEVELS),
                   n_off_scale=int((~finite).sum() + (~on_scale).sum()))
    nan = np.full(len(reg.terms), np.nan)
    ok = reg.problem is None
    out.update(terms=list(reg.terms), coef_original=reg.original.coef if reg.original is not None else nan,
               coef_synthetic=reg.synthetic.coef if ok else nan, se_original=reg.original.se
               if reg.original is not None else nan, overlap=reg.overlap if ok else nan,
               pmse=float(pm.pmse), pmse_null=float(pm.null), pmse_ratio=float(pm.ratio))
    return out


def independent_columns(X: np.ndarray) -> list[int]:
    """Columns of the design kept for the regression: each one that raises the rank of those before it.

    The report's regression (:mod:`dpsynth.report`) drops constant columns only; a covariate that
    repeats another exactly (the fishing file's ``ppier`` is ``pbeach``: one travel cost) makes its
    least squares fail. The original's design decides, so the synthetic data are fitted on the
    same terms.
    """
    keep: list[int] = []
    for j in range(X.shape[1]):
        if np.linalg.matrix_rank(X[:, [*keep, j]]) == len(keep) + 1:
            keep.append(j)
    return keep


def _coef_summary(m: dict) -> dict:
    """RMS difference of the regression coefficients (all but the intercepts), raw and in original SEs."""
    keep = [i for i, t in enumerate(m["terms"]) if not str(t).endswith("intercept")]
    diff = (np.asarray(m["coef_synthetic"]) - np.asarray(m["coef_original"]))[keep]
    z = diff / np.asarray(m["se_original"])[keep]
    ov = np.asarray(m["overlap"], dtype=float)[keep]
    return {"coef_rms_diff": float(np.sqrt(np.mean(diff**2))), "coef_rms_z": float(np.sqrt(np.mean(z**2))),
            "coef_overlap": float(np.nanmean(ov)) if np.isfinite(ov).any() else float("nan")}


def files_replicate(r: int, seed: np.random.SeedSequence, params_mapping: Mapping) -> xr.Dataset:
    """One default fit and one synthetic data set per real file and eps.

    Returns
    -------
    xarray.Dataset
        Over ``(file, eps)``: ``converged``, ``rhat_max``, ``ess_min``, ``divergences``,
        ``n_censored``, ``censored_share`` (at a typical draw), ``eps_stated`` (the statement's total
        under its relation, ``relation``: one record replaced, the covariates' rows being public), its
        shares ``reference_eps`` (a categorical target's DP level counts), ``size_eps`` (the released
        size: 0 with one record replaced) and ``draw_eps`` (one posterior draw), Censor_ref's public weight
        ``alpha`` and censoring bound ``bound`` (M), ``fit_seconds``,
        ``release_seconds`` (fit and sample), ``pmse``, ``pmse_null``, ``pmse_ratio``,
        ``coef_rms_diff``, ``coef_rms_z`` (in the original's standard errors), ``coef_overlap``,
        ``max_ecdf``, ``avg_ecdf``, ``n_off_scale``, ``q10`` ... ``q90`` (numeric targets; NaN for
        the categorical one), ``tvd`` (categorical only); over ``(file, eps, level)`` the
        quantile curve ``curve_synthetic`` and ``share_synthetic``; over ``(file, eps, term)``
        ``coef_synthetic``, ``overlap``; over ``(file, level)`` / ``(file, term)`` the original's
        ``curve_original``, ``share_original``, ``coef_original``, ``se_original``;
        ``data_fingerprint`` digests every file.
    """
    from dpsynth.synthesizer import Synthesizer

    p = OwnDataParams.from_mapping(params_mapping)
    sampler = sampler_of(p)
    kw = {} if sampler is None else {"sampler": sampler}
    files = list(p.files)
    eps_grid = [float(e) for e in p.files_eps]
    cells: dict = {}
    originals: dict = {}
    frames = {}
    for name in files:
        f = REAL_FILES[name]
        df = file_frame(name, p.n)
        frames[name] = df
        for eps in eps_grid:
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the figures are recorded; a newcomer's warnings go to the log
                s = Synthesizer(df, f.target, covariates=list(f.covariates), mechanism="censor_ref", eps=eps,
                                progress=False, **kw)
                s.fit(seed=stream(seed, name, eps))
            t_fit = time.perf_counter() - t0
            pr = s.privacy  # the same whether or not the chains passed their checks (recorded, never dropped)
            syn = s.sample_unaccounted(seed=stream(seed, name, eps, "synthetic"))
            t_rel = time.perf_counter() - t0
            m = report_measures(df, syn, f.target, f.covariates, s.encoding.levels)
            cells[(name, eps)] = {
                "converged": bool(pr.converged),
                "rhat_max": float(pr.rhat_max), "ess_min": float(pr.ess_min), "divergences": float(pr.divergences),
                "n_censored": float(pr.n_censored), "censored_share": float(pr.censored_typical),
                "eps_stated": float(pr.eps), "reference_eps": float(pr.budget.reference),
                "size_eps": float(pr.budget.size), "draw_eps": float(pr.budget.draw),
                "alpha": float(pr.extra.get("alpha", np.nan)), "bound": float(pr.bound),
                "fit_seconds": t_fit, "release_seconds": t_rel, "relation": pr.relation, "measures": m,
                "mechanism": pr.name, "model": str(s.model),
            }
            originals[name] = m
    return _files_dataset(files, eps_grid, cells, originals, frames)


def _files_dataset(files, eps_grid, cells, originals, frames) -> xr.Dataset:
    terms = list(dict.fromkeys(t for m in originals.values() for t in m["terms"]))
    levels = list(dict.fromkeys(str(v) for name in files for v in
                                (frames[name][REAL_FILES[name].target].cat.categories
                                 if REAL_FILES[name].kind == "categorical" else [])))
    nf, ne, nt, nl, nc = len(files), len(eps_grid), len(terms), max(len(levels), 1), len(CURVE_LEVELS)
    scal = ["rhat_max", "ess_min", "divergences", "n_censored", "censored_share", "eps_stated",
            "reference_eps", "size_eps", "draw_eps", "alpha", "bound", "fit_seconds", "release_seconds", "pmse",
            "pmse_null", "pmse_ratio", "coef_rms_diff", "coef_rms_z", "coef_overlap", "max_ecdf", "avg_ecdf",
            "n_off_scale", "tvd",
            *[f"q{int(round(100 * a))}" for a in SUMMARY_QUANTILES]]
    arr = {v: np.full((nf, ne), np.nan) for v in scal}
    conv = np.zeros((nf, ne), dtype=bool)
    coef_s = np.full((nf, ne, nt), np.nan)
    overlap = np.full((nf, ne, nt), np.nan)
    curve_s = np.full((nf, ne, nc), np.nan)
    share_s = np.full((nf, ne, nl), np.nan)
    coef_o = np.full((nf, nt), np.nan)
    se_o = np.full((nf, nt), np.nan)
    curve_o = np.full((nf, nc), np.nan)
    share_o = np.full((nf, nl), np.nan)
    idx = {t: k for k, t in enumerate(terms)}
    lev_idx = {v: k for k, v in enumerate(levels)}
    for i, name in enumerate(files):
        o = originals.get(name)
        if o is not None:
            cols = [idx[t] for t in o["terms"]]
            coef_o[i, cols], se_o[i, cols] = o["coef_original"], o["se_original"]
            if "curve_original" in o:
                curve_o[i] = o["curve_original"]
            if "share_original" in o:
                cats = [str(v) for v in frames[name][REAL_FILES[name].target].cat.categories]
                share_o[i, [lev_idx[c] for c in cats]] = o["share_original"]
        for j, eps in enumerate(eps_grid):
            c = cells[(name, eps)]
            conv[i, j] = c["converged"]
            for v in ("rhat_max", "ess_min", "divergences", "n_censored", "censored_share", "eps_stated",
                      "reference_eps", "size_eps", "draw_eps", "alpha", "bound", "fit_seconds", "release_seconds"):
                arr[v][i, j] = c[v]
            m = c["measures"]
            if m is None:
                continue
            for v in ("pmse", "pmse_null", "pmse_ratio", "max_ecdf", "avg_ecdf", "n_off_scale", "tvd"):
                if v in m:
                    arr[v][i, j] = m[v]
            for v, val in _coef_summary(m).items():
                arr[v][i, j] = val
            cols = [idx[t] for t in m["terms"]]
            coef_s[i, j, cols], overlap[i, j, cols] = m["coef_synthetic"], m["overlap"]
            if "curve_synthetic" in m:
                curve_s[i, j] = m["curve_synthetic"]
                for a in SUMMARY_QUANTILES:
                    arr[f"q{int(round(100 * a))}"][i, j] = m["curve_synthetic"][CURVE_LEVELS.index(a)]
            if "share_synthetic" in m:
                cats = [str(v) for v in frames[name][REAL_FILES[name].target].cat.categories]
                share_s[i, j, [lev_idx[c] for c in cats]] = m["share_synthetic"]
    fe, ft = ("file", "eps"), ("file", "eps", "term")
    ds = xr.Dataset(
        {**{v: (fe, a) for v, a in arr.items()}, "converged": (fe, conv), "coef_synthetic": (ft, coef_s),
         "overlap": (ft, overlap), "curve_synthetic": (("file", "eps", "level"), curve_s),
         "share_synthetic": (("file", "eps", "mode_level"), share_s), "coef_original": (("file", "term"), coef_o),
         "se_original": (("file", "term"), se_o), "curve_original": (("file", "level"), curve_o),
         "share_original": (("file", "mode_level"), share_o)},
        coords={"file": files, "eps": eps_grid, "term": terms, "level": list(CURVE_LEVELS),
                "mode_level": levels or ["none"]},
    )
    for a in SUMMARY_QUANTILES:
        ds[f"q{int(round(100 * a))}_data"] = ("file", curve_o[:, CURVE_LEVELS.index(a)])
    ds = ds.assign_coords(kind=("file", [REAL_FILES[n].kind for n in files]),
                          target=("file", [REAL_FILES[n].target for n in files]),
                          n_records=("file", [len(frames[n]) for n in files]))
    # one digest per file, so that a check that recomputes one file compares it with the shipped one
    ds["data_fingerprint"] = ("file", np.array([data_fingerprint(_numeric(frames[n])) for n in files], dtype=np.int64))
    first = next(iter(cells.values()))
    ds.attrs.update({
        "mechanism": first["mechanism"], "relation": first["relation"],
        "models": "; ".join(f"{n}: {cells[(n, eps_grid[0])]['model']}" for n in files),
        "eps_neighbours": ("eps (the grid) and eps_stated: the total the statement publishes, with one record replaced "
                           "(the relation with covariates); its shares are reference_eps, size_eps and draw_eps"),
        "synthetic_data": "one synthetic data set per file, eps and run, from one posterior draw "
                          "(sample_unaccounted: research, not booked in a ledger)",
        "dropped_terms": "; ".join(f"{n}: {', '.join(originals[n]['dropped'])}" for n in files
                                   if originals.get(n) and originals[n]["dropped"]) or "none",
        "release_seconds": "fit (with a categorical target's DP reference) and one synthetic data set; the first fit "
                           "of a file in a process includes compiling its model",
    })
    return ds


def _numeric(df: pd.DataFrame) -> np.ndarray:
    """The file's values as numbers (category and string columns as their codes), for the fingerprint."""
    cols = []
    for c in df.columns:
        s = df[c]
        if pd.api.types.is_numeric_dtype(s) and not isinstance(s.dtype, pd.CategoricalDtype):
            cols.append(s.to_numpy(dtype=float))
        else:
            cols.append(pd.Categorical(s.astype(str)).codes.astype(float))
    return np.column_stack(cols)


def unitfree_replicate(r: int, seed: np.random.SeedSequence, params_mapping: Mapping) -> xr.Dataset:
    """Censor_ref (its defaults) and Censor_uw on the CPS wages in dollars, thousands and cents (marginal lognormal).

    The fits run in research mode (``mode="research"``): the one DP noise of a release without
    covariates, the released size's count, comes from the seeded streams, so every figure of a cell
    repeats from its seed on one machine. The synthetic data set has one record per fitted record.

    Returns
    -------
    xarray.Dataset
        Over ``(unit, mechanism, eps)``: ``n_censored``, ``censored_share`` (at a typical draw),
        ``median`` (synthetic, dollars), ``max_ecdf``, ``converged``, ``rhat_max``, ``ess_min``,
        ``divergences``, ``n_nonfinite``, ``eps_stated`` (the statement's total with one record
        removed) and its shares ``size_eps`` (the DP released size), ``reference_eps`` (a reference
        released from the data: 0 for the default record-wise reference) and ``draw_eps``; ``alpha``
        (Censor_ref's public weight; 1 for Censor_uw) and ``bound`` (the censoring bound M);
        ``fit_seconds``; ``median_data`` and ``data_fingerprint``.
    """
    from dpsynth.synthesizer import Synthesizer

    p = OwnDataParams.from_mapping(params_mapping)
    rows = []
    pick = np.sort(np.random.default_rng(20261123).permutation(28155)[: p.n]) if p.n else None
    dollars = cps1988("dollars")["wage"].to_numpy(dtype=float)
    dollars = dollars if pick is None else dollars[pick]
    # the data in dollars whatever units are studied (a check may recompute some of them)
    median_data, fingerprint = float(np.median(dollars)), data_fingerprint(dollars)
    for unit in p.unitfree_units:
        df = cps1988(unit)[["wage"]]
        if pick is not None:
            df = df.iloc[pick].reset_index(drop=True)
        x_dollars = df["wage"].to_numpy(dtype=float) * UNITS[unit]
        for key in p.unitfree_mechanisms:
            for eps in [float(e) for e in p.unitfree_eps]:
                t0 = time.perf_counter()
                s = Synthesizer(df, "wage", model="lognormal", mechanism=key, eps=eps,
                                model_params={"mu_prior_sd": float(p.beta_sd),
                                              "sigma_prior_scale": float(p.sigma_prior_scale)},
                                sampler=p.sampler, progress=False, mode="research")
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # the censoring count itself is the result
                    s.fit(seed=stream(seed, unit, key, eps))
                secs = time.perf_counter() - t0
                pr = s.privacy
                out = s.sample_unaccounted(seed=stream(seed, unit, key, eps, "synthetic"))  # research, not a release
                syn_dollars = out["wage"].to_numpy(dtype=float) * UNITS[unit]
                n_nonfinite = int((~np.isfinite(syn_dollars)).sum())
                syn_dollars = np.nan_to_num(syn_dollars, nan=np.finfo(float).max, posinf=np.finfo(float).max)
                rows.append({"unit": unit, "mechanism": registry.spec(key).name, "eps": eps,
                             "n_censored": float(pr.n_censored), "median": float(np.median(syn_dollars)),
                             "max_ecdf": metrics.ecdf_distances(x_dollars, syn_dollars).max_ecdf,
                             "converged": bool(pr.converged), "rhat_max": float(pr.rhat_max),
                             "ess_min": float(pr.ess_min), "divergences": float(pr.divergences),
                             "n_nonfinite": float(n_nonfinite), "censored_share": float(pr.censored_typical),
                             "eps_stated": float(pr.eps), "size_eps": float(pr.budget.size),
                             "reference_eps": float(pr.budget.reference), "draw_eps": float(pr.budget.draw),
                             "alpha": float(pr.extra.get("alpha", 1.0)), "bound": float(pr.bound),
                             "fit_seconds": secs})
    ds = pd.DataFrame(rows).set_index(["unit", "mechanism", "eps"]).to_xarray()
    ds = ds.reindex(unit=list(p.unitfree_units))
    ds["converged"] = ds["converged"].astype(bool)
    ds["median_data"] = median_data
    ds["data_fingerprint"] = fingerprint
    ds.attrs.update({"n": int(p.n or 28155),
                     "eps_neighbours": "eps and eps_stated: the total with one record removed (the relation without "
                                       "covariates); its shares size_eps, reference_eps and draw_eps",
                     "mode": "research: the released size's DP count from the seeded streams"})
    return ds
