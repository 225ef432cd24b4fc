"""Tables and computed sentences of the "Your own data" chapter, from its study Datasets.

Every function takes the chapter's results object (:class:`~dpsynth.experiments.own_data.OwnDataResults`)
or the relevant Dataset, and returns a pandas DataFrame or Markdown text whose numbers come from
the results. A fit that failed its convergence checks is never dropped: the tables count them and
mark the row.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr

from ... import registry
from .replicate import QUANTILES

__all__ = ["study_of", "units_of", "fit_frame", "privacy_table", "utility_table", "coefficient_table",
           "units_table", "units_markdown", "fit_time_markdown", "verdicts", "QUANTILE_COLUMNS"]

#: The quantile variables, in order.
QUANTILE_COLUMNS = tuple(f"q{int(round(100 * a))}" for a in QUANTILES)
_DAGGER = " †"


def study_of(results) -> xr.Dataset:
    """The mechanism comparison Dataset of ``results`` (or ``results`` itself)."""
    return results.study if hasattr(results, "study") else results


def units_of(results) -> xr.Dataset:
    """The units Dataset of ``results`` (or ``results`` itself)."""
    return results.units if hasattr(results, "units") else results


def fit_frame(results) -> pd.DataFrame:
    """One row per (replicate, fit): synthesizer, eps and every scalar variable."""
    ds = study_of(results)
    scalar = [v for v in ds.data_vars if set(ds[v].dims) == {"replicate", "fit"}]
    frame = ds[scalar].to_dataframe().reset_index()
    frame["eps"] = frame["eps"].astype(float)
    return frame


def _key(frame: pd.DataFrame) -> pd.Series:
    return frame["synthesizer"].astype(str) + "|" + frame["eps"].map(lambda e: "" if np.isnan(e) else f"{e:g}")


def _ordered(frame: pd.DataFrame) -> pd.DataFrame:
    idx = {s.key: i for i, s in enumerate(registry.SYNTHESIZERS)}
    rank = frame["synthesizer"].map(lambda n: idx[registry.key_of(str(n))])
    return frame.assign(_r=rank, _e=frame["eps"].fillna(-1.0)).sort_values(["_e", "_r"]).drop(columns=["_r", "_e"])


def _median(s: pd.Series) -> float:
    """Median of the values that apply; NaN, without a warning, when none does (PH has no Delta)."""
    v = s.dropna()
    return float(v.median()) if len(v) else float("nan")


def _label(name: str, eps: float) -> str:
    return registry.label(name) + ("" if np.isnan(eps) else f", ε={eps:g}")


def privacy_table(results) -> pd.DataFrame:
    """Per mechanism and eps: guarantee, epsilon under both relations, Delta, censoring, convergence, time.

    Epsilons and Delta are the median over runs; "converged" counts the runs whose fits passed
    R-hat, ESS and divergence checks (a row with a failure is marked †); the release time is the
    median wall time of the fits one release needs (Weighted and Censor_w include the unweighted
    fit whose record bounds set their weights).
    """
    f = fit_frame(results)
    f = f[f["synthesizer"] != "Data"]
    runs = int(f["replicate"].nunique())
    rows = []
    for (name, eps), g in _ordered(f).groupby(["synthesizer", "eps"], sort=False, dropna=False):
        ok = int(g["converged"].sum())
        rows.append({
            "mechanism": _label(str(name), float(eps)) + ("" if ok == len(g) else _DAGGER),
            "ε (one removed)": _median(g["eps_remove"]),
            "ε (one replaced)": _median(g["eps_replace"]),
            "Δ": _median(g["delta"]),
            "records censored": _median(g["n_censored"]),
            "converged": f"{ok}/{len(g)}" if np.isfinite(g["rhat_max"]).any() else "no MCMC",
            "time per release (s)": _median(g["release_seconds"]),
        })
    out = pd.DataFrame(rows).set_index("mechanism")
    out.attrs["runs"] = runs
    return out


def utility_table(results) -> pd.DataFrame:
    """Per mechanism and eps: max- and mean-squared ECDF distance and the quantiles (dollars), mean over runs."""
    f = fit_frame(results)
    rows = []
    for (name, eps), g in _ordered(f).groupby(["synthesizer", "eps"], sort=False, dropna=False):
        bad = "" if bool(g["converged"].all()) else _DAGGER
        row = {"mechanism": ("Data" if name == "Data" else _label(str(name), float(eps))) + bad,
               "max-ECDF": float(g["max_ecdf"].mean()), "avg-ECDF (×10⁴)": 1e4 * float(g["avg_ecdf"].mean())}
        for q in QUANTILE_COLUMNS:
            row[f"{q[1:]}th pct ($)"] = float(g[q].mean())
        rows.append(row)
    return pd.DataFrame(rows).set_index("mechanism")


def coefficient_table(results, eps: float, synthesizers=None) -> pd.DataFrame:
    """The analyst's regression of log wage on the public covariates: Data beside each mechanism at ``eps``.

    Coefficients are the mean over runs of the least-squares fit to one synthetic data set. Columns
    are the registry labels (the epsilon is ``eps`` for every mechanism that takes one).
    """
    ds = study_of(results)
    e = ds["eps"].values
    keep = np.isnan(e) | np.isclose(e, float(eps))
    sub = ds.isel(fit=np.flatnonzero(keep))
    names = [str(n) for n in sub["synthesizer"].values]
    want = names if synthesizers is None else ["Data", *[n for n in synthesizers if n != "Data"]]
    cols = {}
    for i, name in enumerate(names):
        if name not in want:
            continue
        col = "Data" if name == "Data" else registry.label(name)
        cols[col] = sub["coef"].isel(fit=i).mean("replicate").to_series()
    out = pd.DataFrame(cols)
    out.index.name = "term"
    return out


def units_table(results) -> pd.DataFrame:
    """Units study: records censored, synthetic median and max-ECDF per setting, mechanism and eps (mean over runs)."""
    u = units_of(results)
    frame = u[["n_censored", "median", "max_ecdf", "converged"]].to_dataframe().reset_index()
    g = frame.groupby(["mechanism", "eps", "setting"], sort=False)
    out = g.agg(censored=("n_censored", "mean"), median=("median", "mean"), max_ecdf=("max_ecdf", "mean"),
                converged=("converged", "sum"), runs=("converged", "size")).reset_index()
    out["converged"] = out["converged"].astype(int).astype(str) + "/" + out["runs"].astype(str)
    rank = {m: i for i, m in enumerate(registry.order([str(m) for m in u["mechanism"].values]))}
    order = {s: i for i, s in enumerate(u["setting"].values)}
    out = out.assign(_m=out["mechanism"].map(rank), _s=out["setting"].map(order)).sort_values(["_m", "eps", "_s"])
    out = out.drop(columns=["_m", "_s", "runs"])
    out["mechanism"] = out["mechanism"].map(registry.label)
    out = out.rename(columns={"censored": f"records censored (of {int(u.attrs.get('n', 0)):,})",
                              "median": "synthetic median ($)", "max_ecdf": "max-ECDF", "eps": "ε"})
    return out.set_index(["mechanism", "ε", "setting"])


def units_markdown(results) -> str:
    """The units result in words, numbers from the units study (dollar signs escaped for MyST's math)."""
    u = units_of(results)
    mech = registry.order([str(m) for m in u["mechanism"].values])[0]
    eps_max = float(u["eps"].values.max())
    pick = u.sel(mechanism=mech, eps=eps_max).mean("replicate")
    n = int(u.attrs.get("n", 0))
    dol, thou = pick.sel(setting="dollars"), pick.sel(setting="thousands")
    off = pick.sel(setting="dollars, offset -log 1000")
    med = float(u["median_data"].values.ravel()[0])
    return (
        f"At ε = {eps_max:g}, {registry.label(mech)} on the wages in dollars censors "
        f"{float(dol['n_censored']):,.0f} of {n:,} records and its synthetic median is "
        f"\\${float(dol['median']):,.0f} against the data's \\${med:,.0f} (max-ECDF {float(dol['max_ecdf']):.2f}). "
        f"The same mechanism on the same wages in thousands of dollars censors {float(thou['n_censored']):,.0f} "
        f"(synthetic median \\${float(thou['median']):,.0f}, max-ECDF {float(thou['max_ecdf']):.2f}); in dollars "
        f"with the public offset −log 1000 it censors {float(off['n_censored']):,.0f} "
        f"(max-ECDF {float(off['max_ecdf']):.2f})."
    )


def fit_time_markdown(results) -> str:
    """The wall time of one release at the file's size, per model-based mechanism, from the study."""
    tab = privacy_table(results)
    ds = study_of(results)
    timed = tab[tab["converged"] != "no MCMC"]["time per release (s)"]
    lo, hi = float(timed.min()), float(timed.max())
    return (f"On the full file (n = {int(ds.attrs.get('n', 0)):,}) one release of a model-based mechanism took "
            f"{lo:.0f} to {hi:.0f} s of wall time (median over runs, {int(ds.sizes['replicate'])} run(s); the "
            f"fits of Weighted and Censor_w include the unweighted fit that sets their weights).")


def verdicts(results) -> list:
    """The chapter's claims checked on its results (:class:`dpsynth.verdicts.Verdict`).

    * ``censored_within_bound``: every censored fit has Delta <= eps/2 (asserted on every fit).
    * ``privacy_relations``: with one record replaced, every mechanism's epsilon is twice its
      one-removed figure (continuous densities take both signs; PH and OpenDP's quantiles move
      one record out of one bin or score and into another).
    * ``unit_changes_censoring``: in dollars the censored lognormal discards more than half of the
      records at every eps; in thousands it keeps most of them.
    * ``offset_is_a_unit``: dollars with the public offset ``-log 1000`` censor as many records as
      thousands (within Monte Carlo noise: 2% of n).
    * ``marginal_favours_model_free``: at every eps, PH or OpenDP-Q has a smaller mean max-ECDF
      than Censor_uw (the lognormal regression misses the shape of the marginal distribution).
    * ``model_keeps_regression``: at the largest eps, Censor_uw's synthetic data give the analyst's
      regression coefficients closer to the confidential ones than OpenDP-Q's (root mean squared
      difference over the covariate terms).
    """
    from ...verdicts import Verdict

    f = fit_frame(results)
    out = []
    cens = f[f["synthesizer"].isin(["Censor_w", "Censor_uw"])]
    worst = float((cens["delta"] - cens["eps"] / 2).max()) if len(cens) else float("nan")
    out.append(Verdict("censored_within_bound", "A censored likelihood keeps every record's term within ±ε/2",
                       bool(len(cens)) and worst <= 1e-9,
                       f"largest Δ − ε/2 over {len(cens)} censored fits: {worst:.2g}.", {"worst": worst}))
    priv = f[(f["synthesizer"] != "Data") & np.isfinite(f["eps_remove"])]
    ratio = (priv["eps_replace"] / priv["eps_remove"]).to_numpy()
    ok = bool(np.allclose(ratio, 2.0, rtol=1e-6))
    out.append(Verdict("privacy_relations", "With one record replaced, ε doubles", ok,
                       f"ratio ε(replaced)/ε(removed) from {ratio.min():.3g} to {ratio.max():.3g} over "
                       f"{ratio.size} fits.", {"min": float(ratio.min()), "max": float(ratio.max())}))
    u = units_of(results)
    n = float(u.attrs.get("n", 1))
    share = (u["n_censored"] / n).mean("replicate")
    dol = share.sel(setting="dollars")
    thou = share.sel(setting="thousands")
    off = share.sel(setting="dollars, offset -log 1000")
    holds = bool((dol > 0.5).all() and (thou < 0.5).all())
    out.append(Verdict("unit_changes_censoring", "The unit of a continuous variable decides how much is censored",
                       holds, f"share censored in dollars {float(dol.min()):.1%}–{float(dol.max()):.1%}; in thousands "
                       f"{float(thou.min()):.1%}–{float(thou.max()):.1%} (mechanisms × ε of the units study).",
                       {"dollars_min": float(dol.min()), "thousands_max": float(thou.max())}))
    gap = float(np.abs(off - thou).max())
    out.append(Verdict("offset_is_a_unit", "A public offset −log 1000 in dollars is the thousands fit",
                       gap <= 0.02, f"largest difference in the share censored: {gap:.2%} of the records.",
                       {"gap": gap}))
    eps_grid = sorted({float(e) for e in f["eps"] if np.isfinite(e)})
    means = f.groupby(["synthesizer", "eps"])["max_ecdf"].mean()
    model_free = [n for n in ("PH", "OpenDP-Q") if n in set(f["synthesizer"])]
    if "Censor_uw" in set(f["synthesizer"]) and model_free and eps_grid:
        wins = [e for e in eps_grid if min(means[(n, e)] for n in model_free) < means[("Censor_uw", e)]]
        out.append(Verdict("marginal_favours_model_free",
                           "For the wage's own distribution, a model-free DP release beats the misspecified model",
                           len(wins) == len(eps_grid),
                           f"the better of {' and '.join(model_free)} has a smaller mean max-ECDF than Censor_uw at "
                           f"{len(wins)} of {len(eps_grid)} ε; Unweighted, not private, has "
                           f"{float(f.loc[f['synthesizer'] == 'Unweighted', 'max_ecdf'].mean()):.3f}: the lognormal "
                           f"regression itself misses the shape of the wages.",
                           {"wins": len(wins), "eps": len(eps_grid)}))
    ds = study_of(results)
    top = float(np.nanmax(ds["eps"].values))
    have = set(ds["synthesizer"].values)
    if {"Censor_uw", "OpenDP-Q"} <= have:
        tab = coefficient_table(results, top).drop(index="intercept")
        rms = lambda col: float(np.sqrt(((tab[col] - tab["Data"]) ** 2).mean()))  # noqa: E731
        a, b = rms(registry.label("Censor_uw")), rms(registry.label("OpenDP-Q"))
        out.append(Verdict("model_keeps_regression",
                           "A model of the wage on the covariates keeps the analyst's regression; quantiles do not",
                           a < b, f"at ε = {top:g}, root mean squared coefficient error {a:.3f} (Censor_uw) against "
                           f"{b:.3f} (OpenDP-Q).", {"censor_uw": a, "opendp_q": b}))
    return out
