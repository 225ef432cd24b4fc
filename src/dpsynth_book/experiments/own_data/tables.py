"""Tables of the "Your own data" chapter, from its study Datasets.

Every function takes the chapter's results object (:class:`~dpsynth_book.experiments.own_data.OwnDataResults`)
or the relevant Dataset, and returns a pandas DataFrame whose numbers come from the results. A fit
that failed its convergence checks is never dropped: the tables count them and mark the row. The
verdicts and the numbers the chapter's prose quotes are in
:mod:`dpsynth_book.experiments.own_data.verdicts`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr

from dpsynth import registry

from ... import presentation
from .replicate import QUANTILES

__all__ = ["study_of", "units_of", "fit_frame", "privacy_table", "utility_table", "coefficient_table",
           "units_table", "QUANTILE_COLUMNS", "files_of", "unitfree_of", "static", "files_fit_table",
           "files_utility_table",
           "files_quantile_table", "files_share_table", "unitfree_table", "unit_spread_table", "CONVERGED_ONLY",
           "verdict_numbers_table"]

#: The quantile variables, in order.
QUANTILE_COLUMNS = tuple(f"q{int(round(100 * a))}" for a in QUANTILES)
_DAGGER = " †"


def _by_mechanism_then(out: pd.DataFrame, u, dim: str) -> pd.DataFrame:
    """Rows of a units table in the registry's mechanism order, then eps, then ``dim``'s order in ``u``;
    converged as "k/runs", mechanisms by their registry labels."""
    out = out.copy()
    out["converged"] = out["converged"].astype(int).astype(str) + "/" + out["runs"].astype(str)
    rank = {m: i for i, m in enumerate(presentation.order([str(m) for m in u["mechanism"].values]))}
    order = {s: i for i, s in enumerate(u[dim].values)}
    out = out.assign(_m=out["mechanism"].map(rank), _s=out[dim].map(order)).sort_values(["_m", "eps", "_s"])
    out = out.drop(columns=["_m", "_s", "runs"])
    out["mechanism"] = out["mechanism"].map(registry.label)
    return out


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
    rank = frame["synthesizer"].map(lambda n: presentation.look(str(n)).order)
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
    median wall time of the fits one release needs (LW and Censor_w include the unweighted
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
    out = _by_mechanism_then(out, u, "setting")
    out = out.rename(columns={"censored": f"records censored (of {int(u.attrs.get('n', 0)):,})",
                              "median": "synthetic median ($)", "max_ecdf": "max-ECDF", "eps": "ε"})
    return out.set_index(["mechanism", "ε", "setting"])


# ------------------------------------------------------------------------------------------------
# the three real files with default settings (study ``own_data-files``)
# ------------------------------------------------------------------------------------------------


def files_of(results) -> xr.Dataset:
    """The files Dataset of ``results`` (or ``results`` itself)."""
    return results.files if hasattr(results, "files") else results


def unitfree_of(results) -> xr.Dataset:
    """The unit-free Dataset of ``results`` (or ``results`` itself)."""
    return results.unitfree if hasattr(results, "unitfree") else results


def static(da: xr.DataArray) -> xr.DataArray:
    """A variable of the original data, the same in every run: its first replicate (run_study stacks every variable)."""
    return da.isel(replicate=0) if "replicate" in da.dims else da


def _files_rows(results):
    """(file, eps, the file's Dataset at eps, the file's kind) for every cell of the files study."""
    ds = files_of(results)
    for f in ds["file"].values:
        d = ds.sel(file=f)
        kind = str(static(d["kind"]).values)
        for e in ds["eps"].values:
            yield str(f), float(e), d.sel(eps=e), kind, d


def files_fit_table(results) -> pd.DataFrame:
    """Per real file and eps: the default fit's checks, what its statement is made of, and the time per release.

    Columns: runs that passed R-hat, ESS and divergence checks (``k/runs``; each fit is run once, a
    failed one is not rerun); the mean share of records censored at a typical draw; Censor_ref's public
    weight α; the shares of the total eps (the index, stated with one record replaced) that the reference
    (a categorical target's DP level counts) and the posterior draw take (medians over runs; the
    released size is public with covariates and takes nothing); the median time per release (the fit
    and one synthetic data set). The worst R-hat, ESS and divergences are in the Dataset; the
    convergence verdict quotes them. A ``retries`` variable of an older shipped file is not read.
    """
    runs = int(files_of(results).sizes["replicate"])
    rows = []
    for f, e, c, _kind, _d in _files_rows(results):
        conv = int(c["converged"].sum())
        rows.append({
            "file": f, "ε": e, "converged": f"{conv}/{runs}",
            "share censored": float(c["censored_share"].mean()), "α": float(c["alpha"].median()),
            "ε reference": float(c["reference_eps"].median()), "ε draw": float(c["draw_eps"].median()),
            "time per release (s)": float(c["release_seconds"].median()),
        })
    return pd.DataFrame(rows).set_index(["file", "ε"])


def files_utility_table(results) -> pd.DataFrame:
    """Per real file and eps: the release report's measures of one synthetic data set, mean over runs.

    Columns: the target and its kind; the marginal's distance (max-ECDF of a numeric target, total
    variation distance of the categorical one); the pMSE over its expectation under a correct
    synthesizer; the root mean squared difference of the regression coefficients (intercepts
    excluded) in the original's standard errors; the mean overlap of their 95% intervals.
    """
    rows = []
    for f, e, c, kind, d in _files_rows(results):
        marginal = c["tvd"] if kind == "categorical" else c["max_ecdf"]
        rows.append({
            "file": f, "ε": e, "target": f"{str(static(d['target']).values)} ({kind})",
            "max-ECDF / TVD": float(marginal.mean()), "pMSE ratio": float(c["pmse_ratio"].mean()),
            "coef. error (SEs)": float(c["coef_rms_z"].mean()), "interval overlap": float(c["coef_overlap"].mean()),
        })
    return pd.DataFrame(rows).set_index(["file", "ε"])


def files_quantile_table(results) -> pd.DataFrame:
    """Quantiles of each numeric target: the original beside the synthetic data at each eps (mean over runs)."""
    ds = files_of(results)
    numeric = [str(f) for f, k in zip(ds["file"].values, ds["kind"].values) if str(k) != "categorical"]
    rows = []
    qs = [v for v in ds.data_vars if v.startswith("q") and v.endswith("_data")]
    for f in numeric:
        d = ds.sel(file=f)
        rows.append({"file": f, "data": "original", **{f"{q[1:-5]}th pct": float(static(d[q])) for q in qs}})
        for e in ds["eps"].values:
            rows.append({"file": f, "data": f"synthetic, ε={float(e):g}",
                         **{f"{q[1:-5]}th pct": float(d.sel(eps=e)[q[:-5]].mean()) for q in qs}})
    return pd.DataFrame(rows).set_index(["file", "data"])


def files_share_table(results) -> pd.DataFrame:
    """Level shares of each categorical target: the original beside the synthetic data at each eps (mean over runs)."""
    ds = files_of(results)
    cat = [str(f) for f, k in zip(ds["file"].values, ds["kind"].values) if str(k) == "categorical"]
    rows = []
    for f in cat:
        d = ds.sel(file=f)
        orig = static(d["share_original"])
        levels = [str(v) for v, s in zip(ds["mode_level"].values, orig.values) if np.isfinite(s)]
        rows.append({"file": f, "data": "original", **{lev: float(orig.sel(mode_level=lev)) for lev in levels}})
        for e in ds["eps"].values:
            s = d["share_synthetic"].sel(eps=e).mean("replicate")
            rows.append({"file": f, "data": f"synthetic, ε={float(e):g}",
                         **{lev: float(s.sel(mode_level=lev)) for lev in levels}})
    return pd.DataFrame(rows).set_index(["file", "data"])


def unitfree_table(results) -> pd.DataFrame:
    """Unit-free study: records censored, synthetic median and max-ECDF per mechanism, eps and unit (mean ± sd)."""
    u = unitfree_of(results)
    frame = u[["n_censored", "median", "max_ecdf", "converged"]].to_dataframe().reset_index()
    g = frame.groupby(["mechanism", "eps", "unit"], sort=False)
    out = g.agg(censored=("n_censored", "mean"), censored_sd=("n_censored", "std"), median=("median", "mean"),
                max_ecdf=("max_ecdf", "mean"), max_ecdf_sd=("max_ecdf", "std"), converged=("converged", "sum"),
                runs=("converged", "size")).reset_index()
    out = _by_mechanism_then(out, u, "unit")
    out = out.rename(columns={"censored": f"records censored (of {int(u.attrs.get('n', 0)):,})",
                              "censored_sd": "sd (censored)", "median": "synthetic median ($)",
                              "max_ecdf": "max-ECDF", "max_ecdf_sd": "sd (max-ECDF)", "eps": "ε"})
    return out.set_index(["mechanism", "ε", "unit"])


def unit_spread(u, mechanism: str, var: str, floor: float, *, converged_only: bool = False) -> dict:
    """How far ``var`` of ``mechanism`` moves with the unit, against its Monte Carlo error, at each eps.

    At each eps: ``spread`` is the largest minus the smallest mean over runs among the units;
    ``tolerance`` is ``3 sqrt(2 / R) s`` with ``s`` the pooled standard deviation over the ``R`` runs
    within a unit (three standard errors of a difference of two means; units with one run do not enter
    ``s``), at least ``floor``.

    Parameters
    ----------
    u : xarray.Dataset
        The unit-free study (``replicate``, ``unit``, ``mechanism``, ``eps``).
    mechanism, var : str
        The mechanism and the variable compared across units.
    floor : float
        The smallest tolerance.
    converged_only : bool
        Judge the fits that passed their convergence checks only: a failed fit's count and utility are
        not the mechanism's, and its values would widen ``s``. ``R`` is then the fewest converged runs of
        a unit at that eps, and a unit with no converged run there is left out (``unjudged``); with
        fewer than two units left the spread is NaN and nothing is judged at that eps.

    Returns
    -------
    dict
        ``spread`` and ``tolerance`` (lists over eps), ``moves`` (any eps where spread > tolerance)
        and ``worst`` (the largest ratio spread / tolerance, NaN if nothing was judged);
        ``unjudged`` (per eps, the units left out) and ``failed`` (unit -> its fits that failed their
        checks, over every eps; counted whether or not ``converged_only``).
    """
    sub = u[var].sel(mechanism=mechanism).astype(float)
    ok = u["converged"].sel(mechanism=mechanism).astype(bool)
    failed = {str(k): int((~ok.sel(unit=k)).sum()) for k in u["unit"].values}
    if converged_only:
        sub = sub.where(ok)
    spreads, tols, unjudged = [], [], []
    for e in u["eps"].values:
        v = sub.sel(eps=e)
        runs = v.notnull().sum("replicate")
        left_out = [str(k) for k in v["unit"].values if int(runs.sel(unit=k)) == 0]
        v = v.sel(unit=[k for k in v["unit"].values if str(k) not in left_out])
        unjudged.append(left_out)
        if v.sizes["unit"] < 2:
            spreads.append(float("nan"))
            tols.append(float("nan"))
            continue
        R = int(runs.sel(unit=v["unit"]).min())
        means = v.mean("replicate")
        spread = float(means.max() - means.min())
        var_ = v.var("replicate", ddof=1)  # NaN for a unit with one run: pooled over the units with more
        sd = float(np.sqrt(var_.mean())) if var_.notnull().any() else 0.0
        spreads.append(spread)
        tols.append(max(3.0 * np.sqrt(2.0 / R) * sd, floor))
    ratio = [s / t for s, t in zip(spreads, tols) if np.isfinite(s)]
    return {"spread": spreads, "tolerance": tols, "moves": any(r > 1 for r in ratio),
            "worst": float(max(ratio)) if ratio else float("nan"), "unjudged": unjudged, "failed": failed}


#: Mechanisms whose spread across units is judged on converged fits only (:func:`unit_spread`): Censor_ref's claim
#: is that its fit does not move with the unit. Censor_uw's failures to converge are part of how it moves.
CONVERGED_ONLY = ("Censor_ref",)


def unit_spread_table(results) -> pd.DataFrame:
    """How far the unit-free study's results move with the unit, against their Monte Carlo tolerance.

    Per mechanism and ε (:func:`unit_spread`, floors 1 record and
    0.001, as the verdicts use them): the spread across units of the mean censored count and of the mean
    max-ECDF, each beside its tolerance (three standard errors of a difference of two means).
    Censor_ref's are over its converged fits only (:data:`CONVERGED_ONLY`), as its verdict judges them
    (:func:`unitfree_table` gives the converged runs); a unit without one at an ε is left out (NaN when
    fewer than two units are left).
    """
    u = unitfree_of(results)
    rows = []
    for mech in presentation.order([str(m) for m in u["mechanism"].values]):
        only = mech in CONVERGED_ONLY
        c = unit_spread(u, mech, "n_censored", 1.0, converged_only=only)
        d = unit_spread(u, mech, "max_ecdf", 1e-3, converged_only=only)
        for i, e in enumerate(u["eps"].values):
            rows.append({"mechanism": registry.label(mech), "ε": float(e), "spread, censored": c["spread"][i],
                         "tol., censored": c["tolerance"][i],
                         "spread, max-ECDF": d["spread"][i], "tol., max-ECDF": d["tolerance"][i]})
    return pd.DataFrame(rows).set_index(["mechanism", "ε"])


def verdict_numbers_table(verdicts) -> pd.DataFrame:
    """The figures the verdicts quote that the chapter's other tables do not show, as the verdicts write them.

    Parameters
    ----------
    verdicts : list of dpsynth_book.verdicts.Verdict
        :func:`dpsynth_book.experiments.own_data.verdicts` of the results, in the page's order.

    Returns
    -------
    pandas.DataFrame
        :func:`dpsynth_book.verdicts.quoted_numbers_table`: indexed by the verdict's number and the figure,
        one column ``value``: the censored fits and their largest Δ − ε/2, the fits compared under both
        neighbour relations, the shares censored
        in each unit, the offset's difference, Unweighted's max-ECDF, the regression errors, the
        files study's converged fits and their worst diagnostics, the statements' totals and shares,
        and how far Censor_ref's statement moves with the unit. The unit-free spreads are in
        :func:`unit_spread_table`.
    """
    from ...verdicts import quoted_numbers_table

    n = {v.key: v.numbers for v in verdicts}
    fig: dict = {}
    if "fits" in n.get("censored_within_bound", {}):
        c = n["censored_within_bound"]
        fig["censored_within_bound"] = [("censored fits", f"{c['fits']}"), ("largest Δ − ε/2", f"{c['worst']:.2g}")]
    if "fits" in n.get("privacy_relations", {}):
        c = n["privacy_relations"]
        fig["privacy_relations"] = [("fits compared", f"{c['fits']}"),
                                    ("ε (one replaced) / ε (one removed)", f"{c['min']:.3g} to {c['max']:.3g}")]
    if "dollars_max" in n.get("unit_changes_censoring", {}):
        c = n["unit_changes_censoring"]
        fig["unit_changes_censoring"] = [("share censored, dollars", f"{c['dollars_min']:.1%}–{c['dollars_max']:.1%}"),
                                         ("share censored, thousands",
                                          f"{c['thousands_min']:.1%}–{c['thousands_max']:.1%}")]
    if "offset_is_a_unit" in n:
        fig["offset_is_a_unit"] = [("largest difference in the share censored", f"{n['offset_is_a_unit']['gap']:.2%}")]
    if "unweighted" in n.get("marginal_favours_model_free", {}):
        fig["marginal_favours_model_free"] = [
            ("Unweighted's max-ECDF (mean)", f"{n['marginal_favours_model_free']['unweighted']:.3f}")]
    if "model_keeps_regression" in n:
        c = n["model_keeps_regression"]
        fig["model_keeps_regression"] = [
            (f"coefficient RMS error, {registry.label('Censor_uw')}", f"{c['censor_uw']:.3f}"),
            (f"coefficient RMS error, {registry.label('OpenDP-Q')}", f"{c['opendp_q']:.3f}")]
    if "converged" in n.get("defaults_converge", {}):
        c = n["defaults_converge"]
        fig["defaults_converge"] = [("default fits converged", f"{c['converged']} of {c['fits']}")]
        if "rhat_max" in c:
            fig["defaults_converge"] += [("worst R-hat", f"{c['rhat_max']:.3f}"),
                                         ("smallest bulk ESS", f"{c['ess_min']:.0f}"),
                                         ("divergences in all", f"{c['divergences']}")]
    if "gap" in n.get("statement_is_the_total", {}):
        c = n["statement_is_the_total"]
        rows = [("fits", f"{c['fits']}"), ("largest gap between the stated and the asked ε", f"{c['gap']:.2g}"),
                ("largest gap between the shares' sum and the stated ε", f"{c['parts']:.2g}")]
        if "reference_numeric" in c:
            rows.append(("reference ε, numeric targets (largest)", f"{c['reference_numeric']:.2g}"))
        if "reference_categorical_share" in c:
            rows.append(("reference's share, categorical target", f"{c['reference_categorical_share']:.0%}"))
        if "size_share_without_covariates" in c:
            rows.append(("released size's share, no covariates", f"{c['size_share_without_covariates']:.0%}"))
        fig["statement_is_the_total"] = rows
    if "exact" in n.get("censor_ref_unit_free", {}):
        c = n["censor_ref_unit_free"]
        fig["censor_ref_unit_free"] = [("largest difference across units of the statement's ε, its shares, α and M",
                                        f"{c['exact']:.2g}")]
        fig["censor_ref_unit_free"] += [(f"fits left out in {unit} (failed their checks)", f"{k}")
                                        for unit, k in c.get("failed", {}).items()]
    return quoted_numbers_table(verdicts, fig)
