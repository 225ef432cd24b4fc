"""Small constructed Datasets of the "Your own data" chapter (no MCMC) for the table, verdict and figure tests.

:func:`fake_study` and :func:`fake_units` build Datasets with the structure of the replicates'
output as :func:`dpsynth_book.studies.run_study` returns it (replicates concatenated along
``replicate``), with chosen values, so that every number a table or sentence shows can be
checked against its source and every verdict made to hold or fail.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr

from dpsynth import registry
from dpsynth_book.experiments.own_data import OwnDataResults, Params
from dpsynth_book.experiments.own_data.replicate import QUANTILES, UNIT_SETTINGS
from dpsynth_book.studies import fits_to_dataset

TERMS = ["intercept", "educ", "exper", "exper2", "ethnicity=cauc", "smsa=yes", "region=northeast", "region=south",
         "region=west", "parttime=yes"]
#: The analyst's coefficients on the confidential data.
TRUE_COEF = np.array([6.2, 0.09, 0.6, -0.12, 0.25, 0.17, 0.03, -0.05, -0.02, -1.1])
EPS = (1.0, 5.0)
N = 28155
QCOLS = [f"q{int(round(100 * a))}" for a in QUANTILES]
DATA_Q = [170.0, 308.0, 522.0, 783.0, 1100.0]
MODEL_BASED = ("Unweighted", "Weighted", "Censor_w", "Censor_uw")


def _diag(delta, n_censored, seconds, total, converged=True):
    return {"delta": delta, "eps_remove": 2 * delta, "eps_replace": 4 * delta, "n_censored": n_censored,
            "converged": converged, "rhat_max": 1.002, "ess_min": 400.0, "divergences": 0.0,
            "fit_seconds": seconds, "release_seconds": total}


def _nan_diag(eps, seconds):
    nan = float("nan")
    return {"delta": nan, "eps_remove": eps, "eps_replace": 2 * eps, "n_censored": nan, "converged": True,
            "rhat_max": nan, "ess_min": nan, "divergences": nan, "fit_seconds": seconds, "release_seconds": seconds}


def _util(r, offset):
    q = {c: v * (1 + offset) + r for c, v in zip(QCOLS, DATA_Q)}
    return {"max_ecdf": 0.02 + offset + 0.001 * r, "avg_ecdf": 1e-4 * (1 + 10 * offset) + 1e-6 * r, **q}


def fake_replicate(r: int, *, eps=EPS, unconverged=(), delta_excess=0.0, replace_ratio=2.0,
                   regression_kept=True, model_free_offset=0.02) -> xr.Dataset:
    """One replicate's Dataset with the structure of :func:`~dpsynth_book.experiments.own_data.replicate.replicate`.

    ``unconverged`` lists (synthesizer, eps) pairs whose fit failed its checks in this replicate;
    ``delta_excess`` is added to Censor_uw's Delta at the largest eps; ``replace_ratio`` scales
    PH's replaced epsilon; ``regression_kept`` makes Censor_uw's coefficients close to the data's
    (else OpenDP-Q's are closer); ``model_free_offset / eps`` is OpenDP-Q's max-ECDF above 0.02
    (Censor_uw's is ``0.05 / eps``, PH's ``0.2 / eps``).
    """
    nan = float("nan")
    rows = [{"synthesizer": "Data", "eps": nan, **{k: nan for k in _diag(0, 0, 0, 0)}, "converged": True,
             "max_ecdf": 0.0, "avg_ecdf": 0.0, **dict(zip(QCOLS, DATA_Q))}]
    coefs = [TRUE_COEF]
    close, far = TRUE_COEF + 0.01 * (r + 1), np.r_[TRUE_COEF[0], np.zeros(TRUE_COEF.size - 1)]
    t_base = 100.0 + 10 * r
    rows.append({"synthesizer": "Unweighted", "eps": nan, **_diag(20.0 + r, 0.0, t_base, t_base), **_util(r, 0.0)})
    coefs.append(TRUE_COEF + 0.001)
    rows.append({"synthesizer": "Weighted", "eps": nan, **_diag(3.0 + 0.5 * r, 0.0, 80.0, 80.0 + t_base),
                 **_util(r, 0.01)})
    coefs.append(TRUE_COEF + 0.002)
    for e in eps:
        excess = delta_excess if e == max(eps) else 0.0
        for name, total_extra, cens in (("Censor_w", t_base, 100.0 + r), ("Censor_uw", 0.0, 200.0 + 2 * r)):
            ok = (name, e) not in unconverged
            d = e / 2 + (excess if name == "Censor_uw" else 0.0)
            rows.append({"synthesizer": name, "eps": e, **_diag(d, cens / e, 90.0 + e, 90.0 + e + total_extra, ok),
                         **_util(r, 0.05 / e)})
            coefs.append(close if (name == "Censor_uw") == regression_kept else far)
        ph = _nan_diag(e, 0.01)
        ph["eps_replace"] = replace_ratio * e
        rows.append({"synthesizer": "PH", "eps": e, **ph, **_util(r, 0.2 / e)})
        coefs.append(far)
        rows.append({"synthesizer": "OpenDP-Q", "eps": e, **_nan_diag(e, 0.5), **_util(r, model_free_offset / e)})
        coefs.append(far if regression_kept else close)
    ds = fits_to_dataset(rows)
    ds["coef"] = xr.DataArray(np.vstack(coefs), dims=("fit", "term"), coords={"term": TERMS})
    ds["converged"] = ds["converged"].astype(bool)
    ds = ds.assign_coords(guarantee=("fit", [str(registry.guarantee(str(s)) or "") for s in ds.synthesizer.values]))
    ds["data_fingerprint"] = np.int64(12345)
    ds.attrs.update({"n": N, "unit": "thousands"})
    return ds


def fake_study(replicates: int = 3, **kw) -> xr.Dataset:
    """Replicates concatenated as :func:`dpsynth_book.studies.run_study` does."""
    reps = [fake_replicate(r, **kw) for r in range(replicates)]
    return registry.with_display_names(xr.concat(reps, dim=pd.Index(range(replicates), name="replicate")))


def fake_units(replicates: int = 2, *, dollars=0.95, thousands=0.02, offset=0.025, mechanisms=("Censor_w",),
               eps=(5.0, 10.0)) -> xr.Dataset:
    """The units study with chosen shares of records censored per setting (equal across eps)."""
    share = {"dollars": dollars, "thousands": thousands, "dollars, offset -log 1000": offset}
    reps = []
    for r in range(replicates):
        rows = []
        for s in UNIT_SETTINGS:
            for m in mechanisms:
                for e in eps:
                    rows.append({"setting": s, "mechanism": m, "eps": e, "n_censored": share[s] * N + r,
                                 "delta": 0.95 * e / 2, "bound": 0.95 * e / 2, "eps_stated": e, "draw_eps": 0.95 * e,
                                 "median": (150.0 if s == "dollars" else 520.0) + r,
                                 "max_ecdf": (0.7 if s == "dollars" else 0.03) + 0.01 * r,
                                 "converged": not (s == "dollars" and r == 0), "rhat_max": 1.0, "divergences": 0.0})
        ds = pd.DataFrame(rows).set_index(["setting", "mechanism", "eps"]).to_xarray()
        ds = ds.reindex(setting=list(UNIT_SETTINGS))
        ds["converged"] = ds["converged"].astype(bool)
        ds["median_data"] = 522.32
        ds["data_fingerprint"] = np.int64(1)
        ds["censoring_warnings"] = np.int64(len(mechanisms) * len(eps))
        ds.attrs.update({"n": N})
        reps.append(ds)
    return xr.concat(reps, dim=pd.Index(range(replicates), name="replicate"))


def fake_results(**kw) -> OwnDataResults:
    units_kw = {k: kw.pop(k) for k in ("dollars", "thousands", "offset") if k in kw}
    return OwnDataResults(params=Params.quick(), study=fake_study(**kw), units=fake_units(**units_kw))


# ------------------------------------------------------------------------------------------------
# the files and unit-free studies
# ------------------------------------------------------------------------------------------------

FILE_KINDS = {"cps1988": "continuous", "nmes1988": "count", "fishing": "categorical"}
FILE_TERMS = {"cps1988": ["intercept", "education", "experience"], "nmes1988": ["intercept", "chronic", "age"],
              "fishing": ["pier: intercept", "pier: income", "boat: intercept", "boat: income"]}
FILE_N = {"cps1988": 28155, "nmes1988": 4406, "fishing": 1182}
FILE_SECONDS = {"cps1988": 40.0, "nmes1988": 7.0, "fishing": 35.0}
SHARES = np.array([0.1, 0.15, 0.35, 0.4])


def fake_files(replicates: int = 3, *, eps=(1.0, 5.0), unconverged=(), coef_shift=1.0, reference_eps=0.1,
               size_eps=0.0, stated_shift=0.0) -> xr.Dataset:
    """The files study built by the replicate's own assembler from chosen measures (no MCMC).

    ``unconverged`` lists (file, eps, replicate) cells whose fit failed its checks; the synthetic
    coefficients are the original's plus ``coef_shift / eps`` original standard errors; the
    marginal distance is ``0.02 / eps`` (max-ECDF or TVD) and the pMSE ratio ``1 + 1 / eps``.
    """
    from dpsynth_book.experiments.own_data.files import CURVE_LEVELS, _files_dataset

    reps = []
    levels = np.array(CURVE_LEVELS)
    files = list(FILE_KINDS)
    for r in range(replicates):
        frames = {}
        originals = {}
        cells = {}
        for f in files:
            kind = FILE_KINDS[f]
            if kind == "categorical":
                frames[f] = pd.DataFrame({"mode": pd.Categorical(["beach"], categories=["beach", "pier", "boat",
                                                                                           "charter"])})
            else:
                frames[f] = pd.DataFrame({"y": [1.0]})
            frames[f] = frames[f].reindex(range(FILE_N[f])).ffill()
            terms = FILE_TERMS[f]
            co = np.arange(1.0, len(terms) + 1)
            se = np.full(len(terms), 0.1)
            base = {"terms": terms, "coef_original": co, "se_original": se, "dropped": []}
            for e in eps:
                shift = coef_shift / e
                m = dict(base, coef_synthetic=co + shift * se, overlap=np.full(len(terms), 1 - shift / 4),
                         pmse=0.001, pmse_null=0.001 / (1 + 1 / e), pmse_ratio=1 + 1 / e)
                if kind == "categorical":
                    m.update(share_original=SHARES, share_synthetic=SHARES + np.array([0.02, -0.02, 0, 0]) / e,
                             tvd=0.02 / e)
                else:
                    curve = np.exp(levels) if kind == "continuous" else np.floor(10 * levels)
                    m.update(max_ecdf=0.02 / e, avg_ecdf=1e-4 / e, curve_original=curve,
                             curve_synthetic=curve * (1 + 0.1 / e), n_off_scale=0)
                originals[f] = m
                cells[(f, float(e))] = {
                    "converged": (f, e, r) not in unconverged,
                    "rhat_max": 1.002, "ess_min": 400.0 + r, "divergences": 0.0, "n_censored": 10.0 / e + r,
                    "censored_share": (10.0 / e + r) / FILE_N[f], "eps_stated": e + stated_shift,
                    "reference_eps": reference_eps * e if kind == "categorical" else 0.0, "size_eps": size_eps,
                    "draw_eps": e - size_eps - (reference_eps * e if kind == "categorical" else 0.0),
                    "alpha": min(1.0, e / 4 / 2.5), "bound": e / 4,
                    "fit_seconds": FILE_SECONDS[f] + r, "release_seconds": FILE_SECONDS[f] + r + 0.5,
                    "relation": "replace", "measures": m, "mechanism": "Censor_ref", "model": "m"}
        reps.append(_files_dataset(files, [float(e) for e in eps], cells, originals, frames))
    return xr.concat(reps, dim=pd.Index(range(replicates), name="replicate"))


def fake_unitfree(replicates: int = 3, *, ref_censored=(20.0, 20.0, 20.0), uw_censored=(28000.0, 300.0, 28100.0),
                  noise=2.0, eps=(1.0, 5.0), ref_alpha_shift=0.0, ref_failed=()) -> xr.Dataset:
    """The unit-free study with chosen mean censored counts per unit (dollars, thousands, cents) and mechanism.

    Run ``r`` adds ``noise * (r - 1)`` records; the max-ECDF is ``count / N`` (at least 0.01). The
    statement is the default budget without covariates (5% for the released size, the draw the rest);
    ``ref_alpha_shift`` is added to Censor_ref's alpha in cents (a window that moved with the unit).
    ``ref_failed`` lists Censor_ref's fits ``(unit, eps, run)`` that failed their checks: each censors every
    record (max-ECDF 1), as a fit stuck far from the data does.
    """
    units = ("dollars", "thousands", "cents")
    reps = []
    for r in range(replicates):
        rows = []
        for mech, counts in (("Censor_ref", ref_censored), ("Censor_uw", uw_censored)):
            for unit, c in zip(units, counts):
                for e in eps:
                    failed = mech == "Censor_ref" and (unit, e, r) in ref_failed
                    n_c = float(N) if failed else c + noise * (r - 1)
                    draw = 0.95 * e
                    alpha = (min(1.0, draw / 2 / 2.5) + (ref_alpha_shift if unit == "cents" else 0.0)
                             if mech == "Censor_ref" else 1.0)
                    rows.append({"unit": unit, "mechanism": mech, "eps": e, "n_censored": n_c,
                                 "censored_share": n_c / N / 2,
                                 "median": 520.0 if n_c < N / 2 else 1.0, "max_ecdf": max(n_c / N, 0.01),
                                 "converged": not failed, "rhat_max": 1.0, "ess_min": 500.0, "divergences": 0.0,
                                 "n_nonfinite": 0.0, "eps_stated": e, "size_eps": 0.05 * e, "reference_eps": 0.0,
                                 "draw_eps": draw, "alpha": alpha, "bound": draw / 2, "fit_seconds": 5.0})
        ds = pd.DataFrame(rows).set_index(["unit", "mechanism", "eps"]).to_xarray().reindex(unit=list(units))
        ds["converged"] = ds["converged"].astype(bool)
        ds["median_data"] = 522.32
        ds["data_fingerprint"] = np.int64(2)
        ds.attrs.update({"n": N})
        reps.append(ds)
    return xr.concat(reps, dim=pd.Index(range(replicates), name="replicate"))


def fake_all(**kw) -> OwnDataResults:
    """The four studies: the older two from :func:`fake_results`, the files and unit-free studies faked."""
    files_kw = {k: kw.pop(k) for k in ("unconverged_files", "coef_shift") if k in kw}
    uf_kw = {k: kw.pop(k) for k in ("ref_censored", "uw_censored", "noise", "ref_alpha_shift", "ref_failed")
             if k in kw}
    if "unconverged_files" in files_kw:
        files_kw["unconverged"] = files_kw.pop("unconverged_files")
    res = fake_results(**kw)
    res.files = fake_files(**files_kw)
    res.unitfree = fake_unitfree(**uf_kw)
    return res
