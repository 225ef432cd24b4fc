"""Small synthetic results of the censoring chapter (no MCMC) for the summary and figure tests."""

from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr

from dpsynth import registry
from dpsynth_book.experiments.censoring import CensoringResults, Params
from dpsynth_book.experiments.censoring.replicate import true_stats
from dpsynth_book.studies import fits_to_dataset, rows_to_dataset

#: Utility rank of each synthesizer (1 = best): Weighted best, PH worst, Censor_w above Censor_uw.
RANK = {"Data": 0, "Unweighted": 1, "Weighted": 1, "Censor_w": 2, "Censor_w-pub": 3, "Weighted-e": 4, "Censor_uw": 5,
        "PH": 6, "PH-paper": 7}
EPS = (4.0, 3.0)


def _row(name, eps, rng, r):
    t = true_stats()
    q = RANK[name] * (1 + 0.01 * r)
    mcmc = not name.startswith("PH") and name != "Data"
    censored = name.startswith("Censor")
    delta = {"Unweighted": 7.0 + r, "Weighted": 1.8 + 0.2 * r}.get(name, (eps / 2 if censored else 1.9 + 0.1 * r))
    row = {"synthesizer": name, "eps": eps, "delta": delta, "eps_remove": 2 * delta, "eps_replace": 4 * delta,
           "noise_scale": (1 / eps if name == "PH" else 2 / eps) if name.startswith("PH") else np.nan,
           "n_censored": (600 - 100 * eps + 10 * r) if censored else np.nan,
           "n_truncated": (5.0 - eps + r) if name == "Weighted-e" else np.nan,
           "n_exceed_unweighted": (700 - 100 * eps) if censored else np.nan,
           "max_ecdf": 0.01 * q, "avg_ecdf": 0.001 * q, "mean": t["mean"] + 0.001 * q,
           "median": t["median"] + 0.001 * q, "q15": t["q15"] + 0.001 * q, "q90": t["q90"] + 0.001 * q,
           "mcmc": mcmc, "converged": bool(mcmc and r == 0) or not mcmc, "rhat": 1.0 + 0.01 * r if mcmc else np.nan,
           "ess": 400.0 if mcmc else np.nan, "divergences": r if mcmc else 0}
    if name in ("Weighted", "Censor_w", "Censor_w-pub", "Censor_uw") and (eps == 4.0 or np.isnan(eps)):
        row.update(mix_max_ecdf=0.008 * q, mix_avg_ecdf=0.0008 * q, mix_eps=150 * row["eps_remove"],
                   mix_eps_replace=150 * row["eps_replace"], mix_n_draws=150.0)
    if name == "Weighted-e":
        # eps = 4: above eps/2 in the last replicate only; eps = 3: always above, the refit raising kept records.
        row["delta"] = 1.9 + 0.1 * r if eps == 4.0 else 1.7 + 0.1 * r
        above = float(row["delta"] > eps / 2)
        row.update(n_above_target=above * (3.0 + r), n_risen=above * (3.0 + r), refit_shift_sd=-0.5 * above)
    if name.startswith("PH"):
        row.update({f"ph_alt_{k}": row[k] * 1.5 for k in ("max_ecdf", "avg_ecdf", "mean", "median", "q15", "q90")})
    if name == "Data":
        row.update(max_ecdf=0.0, avg_ecdf=0.0, delta=np.nan, eps_remove=np.nan, eps_replace=np.nan)
    return row


def fake_results(replicates: int = 3, *, break_bound: bool = False) -> CensoringResults:
    """Results with a known ordering of utilities; ``break_bound`` puts Censor_uw above eps/2."""
    rng = np.random.default_rng(0)
    mains, downs, rels = [], [], []
    for r in range(replicates):
        rows = [_row(k, np.nan, rng, r) for k in ("Data", "Unweighted", "Weighted")]
        rows += [_row(k, e, rng, r) for e in EPS for k in ("Weighted-e", "Censor_w", "Censor_w-pub", "Censor_uw", "PH",
                                                            "PH-paper")]
        if break_bound and r == 0:
            rows[-3]["delta"] = 5.0
        ds = fits_to_dataset(rows)
        # Milder weights: "shift" censors 0 in the first replicate at eps = 4, else near the paper's medians.
        mild = np.array([[0.0 if r == 0 else 425.0 + r, 741.0 + r], [100.0 + r, 200.0 + r]])
        ds["milder_n_censored"] = xr.DataArray(mild, dims=("lw_variant", "lw_eps"),
                                               coords={"lw_variant": ["shift", "power"], "lw_eps": list(EPS)})
        ds["milder_converged"] = ds["milder_n_censored"] >= 0
        ds["x_min"] = 1e-6 * (r + 1)
        ds["delta_unweighted"] = 7.0 + r
        ds["delta_weighted"] = 1.8 + 0.2 * r
        for k, v in (("converged", True), ("rhat", 1.0), ("ess", 300.0), ("divergences", 0), ("delta", 7.0)):
            ds[f"hist_{k}"] = v
        ds["convergence_warnings"] = r
        mains.append(ds)
        drows = [{"synthesizer": k, "scaling": s, "own_fit": s == "downscale",
                  "delta": (1.6 if s == "downscale" else 2.0) + 0.01 * r,
                  "n_censored": (0.0 if s == "downscale" else 50.0) if k == "Censor_w" else np.nan,
                  "n_truncated": (1.0 if s == "downscale" else 20.0) if k == "Weighted-e" else np.nan,
                  "avg_ecdf": 0.002, "max_ecdf": 0.02 + 0.001 * r, "mean": true_stats()["mean"] + 0.001 * r,
                  "median": true_stats()["median"], "q90": true_stats()["q90"] - 0.002 * r,
                  "q15": true_stats()["q15"], "converged": True, "divergences": 0, "rhat": 1.0,
                  "ess": 500.0} for k in ("Weighted", "Weighted-e", "Censor_w") for s in ("none", "downscale")]
        downs.append(rows_to_dataset(drows, ["synthesizer", "scaling"]))
        rrows = [{"synthesizer": k, "scaling": s, "delta": 1.4, "eps_remove": 3.0, "eps_replace": 6.0,
                  "n_censored": 0.0 if s == "downscale" else 70.0, "max_ecdf": 0.05, "avg_ecdf": 0.003, "q15": 0.01,
                  "converged": True, "divergences": 0, "rhat": 1.0, "ess": 400.0}
                 for k in ("Censor_w-pub", "Censor_w") for s in ("downscale", "none")]
        rel = rows_to_dataset(rrows, ["synthesizer", "scaling"])
        rel["converged_unweighted"] = True
        rel["divergences_unweighted"] = 0
        rels.append(rel)
    idx = pd.Index(range(replicates), name="replicate")
    # named as run_study names them: the stored "Weighted" reads LW
    study, down, release = (registry.with_display_names(xr.concat(x, dim=idx)) for x in (mains, downs, rels))
    draws = np.random.default_rng(1)
    fig1 = xr.Dataset({"phi": (("synthesizer", "draw"), np.stack([draws.normal(0.14, 0.008, 400),
                                                                  draws.normal(0.30, 0.02, 400)])),
                       "delta": ("synthesizer", [7.0, 0.5]), "n_censored": ("synthesizer", [0.0, 900.0]),
                       "converged": ("synthesizer", [True, False]), "divergences": ("synthesizer", [0, 2]),
                       "rhat": ("synthesizer", [1.0, 1.02]), "ess": ("synthesizer", [400.0, 90.0]),
                       "convergence_warnings": 1},
                      coords={"synthesizer": ["Unweighted", "Censor_uw"]}).expand_dims(replicate=[0])
    cal = xr.Dataset({"c": 0.7, "delta": 1.45, "trace_c": ("step", [1.0, 0.5, 0.75, 0.7]),
                      "trace_delta": ("step", [2.1, 1.1, 1.55, 1.45]), "converged": True, "divergences": 0,
                      "rhat": 1.0, "ess": 400.0, "convergence_warnings": 2}).expand_dims(replicate=[0])
    params = Params.preset("smoke", replicates=replicates, eps_grid=EPS, mix_eps=4.0)
    return CensoringResults(params=params, study=study, downscale=down, figure1=fig1, calibration=cal, release=release,
                            reference=fake_reference(replicates))


#: eps of the fake Censor_ref study (a grid of two).
REF_EPS = (4.0, 1.0)


def fake_reference(replicates: int = 3, *, alphas=(1.0, 0.5, 0.25), widens=(1.0, 4.0), ref_censors=None,
                   over_bound: bool = False) -> xr.Dataset:
    """A Censor_ref study with known orderings (no MCMC), laid out like ``reference_replicate``'s output.

    Censor_uw censors 40% at eps = 1 and 10% at eps = 4, Censor_w-pub half as much, Censor_ref with its
    defaults (each record's own reference) 2% (or ``ref_censors``), a common theta_0 (DP median,
    historical) 2.5%; a smaller fixed alpha censors fewer records and widens the posterior; the DP
    median unwidened (widen 1) censors 5% and biases the mean by -0.03. Only the DP median variants
    charge a reference (0.1). ``over_bound`` puts one fit above eps/2.
    """
    from dpsynth.mechanisms.censored_reference import default_alpha
    from dpsynth_book.experiments.censoring.reference import charges_reference, variant_settings, variants

    names = variants(alphas, widens)
    truth = true_stats()["mean"]
    reps = []
    for r in range(replicates):
        rows = []
        for eps in REF_EPS:
            low = eps == 1.0
            for v in names:
                s = variant_settings(v)
                a = s["alpha"] if s["alpha"] is not None else default_alpha(eps)
                share = {"Censor_uw": 0.4 if low else 0.1, "Censor_w-pub": 0.2 if low else 0.05}.get(v)
                if share is None:  # Censor_ref: its own references, or a common theta_0
                    own = ref_censors if ref_censors is not None else 0.02
                    share = own if s["reference"] == "record" else 0.025
                sd = 0.004
                bias = 0.1 * share
                if s["synthesizer"] == "Censor_ref":
                    if s["alpha"] is not None:
                        share, sd = 0.03 * s["alpha"], 0.004 / np.sqrt(s["alpha"])
                    if s["widen"] == 1.0:
                        share, bias = 0.05, -0.03
                dp = charges_reference(v)
                rows.append({"eps": eps, "variant": v, "delta": eps / 2 * (0.9 if s["alpha"] == 0.25 else 1.0),
                             "eps_remove": eps + 0.1 * dp, "eps_replace": 2 * eps + 0.2 * dp,
                             "reference_eps_remove": 0.1 * dp,
                             "alpha": a if s["synthesizer"] == "Censor_ref" else np.nan,
                             "widen": s["widen"] if s["widen"] is not None else np.nan,
                             "n_censored": 2000 * share + r, "share_censored": share + r / 2000,
                             "phi_mean": truth + bias + 0.001 * r, "phi_sd": sd * (1 + 0.01 * r), "lam_mean": 3.5,
                             "lam_sd": 0.1, "converged": True, "rhat": 1.0, "ess": 400.0, "divergences": 0,
                             "max_ecdf": 0.02 + share * 0.5 + 0.001 * r, "avg_ecdf": 0.005, "mean": truth,
                             "median": 0.07, "q15": 0.01, "q90": 0.4})
        if over_bound and r == 0:
            rows[0]["delta"] = 5.0
        ds = rows_to_dataset(rows, ["eps", "variant"]).reindex(variant=names)
        ds["true_mean"] = truth
        ds["data_fingerprint"] = np.int64(r)
        reps.append(ds)
    return xr.concat(reps, dim=pd.Index(range(replicates), name="replicate"))
