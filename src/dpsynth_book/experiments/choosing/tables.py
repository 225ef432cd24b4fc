"""Tables and computed text of the 'Choosing a mechanism' chapter.

The decision table (:func:`decision_table`) is read from the mechanisms' own specs
(:mod:`dpsynth.mechanisms`: guarantee, needs, cost, when to use); the odds
table (:func:`odds_table`) turns an epsilon into the largest change it allows in an intruder's
odds about one record. :func:`tradeoff_table` summarises the privacy and utility of every
synthesizer in the other chapters' shipped paper-scale results (:func:`shipped_studies`), and
:func:`tradeoff_markdown` states its findings in sentences.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

from dpsynth import mechanisms, registry
from dpsynth.validation import DataError

from ...result_files import ShippedResultsError, results_dir, shipped_path
from ...shipped import shipped_names
from ...studies import fit_names

__all__ = ["decision_table", "odds_table", "posterior_probability_bound", "TRADEOFF_STUDIES",
           "TRADEOFF_COLUMNS", "shipped_studies", "tradeoff_table", "tradeoff_markdown"]

def decision_table(keys: Sequence[str] | None = None) -> pd.DataFrame:
    """The decision table, read from the mechanisms' specs (:mod:`dpsynth.mechanisms`).

    One row per mechanism: its guarantee, what it needs besides the model, the MCMC fits one
    release costs, when to use it, and whether it runs through the ``Synthesizer`` and the command
    line (or why not). A mechanism added as one module appears here without any other edit.

    Parameters
    ----------
    keys : sequence of str, optional
        Registry keys to include (default: every private mechanism, in the registry's order, each
        once: an alias such as ``weighted`` is its mechanism's row, LW).
    """
    if keys is None:
        specs = [s for s in mechanisms.specs() if s.guarantee != "none" and s.alias_of is None]
    else:
        specs = [mechanisms.get(k) for k in keys]
    rows = [{"mechanism": s.name + ("a,b]" if s.pattern else ""), "guarantee": s.guarantee,
             "needs": _code_spans(s.needs),
             "MCMC fits": _code_spans(s.fits_per_release + _FITS_ELSEWHERE.get(s.key, lambda: "")()),
             "use it when": _code_spans(s.use_when)}
            for s in specs]
    return pd.DataFrame(rows).set_index("mechanism")


def _code_spans(text: str) -> str:
    """``text`` with every parameter name (a word with an underscore that is not a mechanism's name, such as
    ``match_max_iter``) in a code span, so that the page shows it as code, not as prose."""
    import re

    names = {s.name for s in mechanisms.specs()}
    return re.sub(r"(?<![\w`])([A-Za-z]\w*_\w+)(?![\w`])",
                  lambda m: m.group(1) if m.group(1) in names else f"`{m.group(1)}`", text)


def _cw_fits_in_the_sdr_chapter() -> str:
    """Where a chapter sets CW's search otherwise than the default: the SDR chapter's longer search."""
    from ..sdr_application.params import SDRApplicationParams

    p = SDRApplicationParams.paper()
    if not p.cw_match or p.cw_max_iter <= mechanisms.get("cw").params["match_max_iter"].default:
        return ""
    return f"; the SDR chapter's search allows up to {p.cw_max_iter} (its table counts the search's fits)"


#: Registry key -> the decision table's addition to its "MCMC fits", where a chapter's setting costs more.
_FITS_ELSEWHERE = {"cw": _cw_fits_in_the_sdr_chapter}


def posterior_probability_bound(prior: float | np.ndarray, eps: float | np.ndarray) -> np.ndarray:
    """Largest posterior probability an eps-DP release allows from a prior probability.

    An eps-DP release multiplies an intruder's odds about one record (e.g. "this person is in
    the data", or "their value is above c") by at most ``e^eps``: posterior odds <= prior odds
    times ``e^eps``.
    """
    p = np.asarray(prior, dtype=float)
    e = np.asarray(eps, dtype=float)
    if np.any((p <= 0) | (p >= 1)) or np.any(~np.isfinite(p)):
        raise DataError(f"`prior` must lie in (0, 1); got {prior!r}.")
    if np.any(e < 0) or np.any(~np.isfinite(e)):
        raise DataError(f"`eps` must be finite and >= 0; got {eps!r}.")
    odds = p / (1 - p) * np.exp(e)
    return odds / (1 + odds)


def odds_table(eps_grid: Sequence[float], priors: Sequence[float] = (0.01, 0.1, 0.5)) -> pd.DataFrame:
    """For each eps: the odds factor ``e^eps`` and the largest posterior probability per prior."""
    rows = {}
    for e in eps_grid:
        row = {"odds factor e^eps": float(np.exp(e))}
        for p in priors:
            row[f"prior {p:g} -> at most"] = float(posterior_probability_bound(p, e))
        rows[float(e)] = row
    return pd.DataFrame(rows).T.rename_axis("eps")


# --- privacy and utility across the book -----------------------------------------------------------

#: Shipped studies the privacy-utility figure reads, in the order of its panels.
TRADEOFF_STUDIES: tuple[str, ...] = ("censoring", "range_restriction", "reweighting-synthesizers", "sdr_censoring",
                                     "sdr_reweighting", "own_data")

#: Reader-facing names of the re-weighting study's generating models.
_DATA_MODEL_NAMES = {"poisson": "Poisson", "nb_mixture": "NB mixture"}

#: Columns of :func:`tradeoff_table`, in order.
TRADEOFF_COLUMNS = ("study", "source", "synthesizer", "guarantee", "eps_target", "eps", "eps_lo", "eps_hi", "max_ecdf",
                    "max_ecdf_lo", "max_ecdf_hi", "replicates", "releases")


def shipped_studies(names: Sequence[str] = TRADEOFF_STUDIES,
                    folder: str | os.PathLike | None = None) -> dict[str, xr.Dataset]:
    """Read the shipped result files that are present, without checking their parameters.

    The 'Choosing a mechanism' page summarises whatever the shipped paper-scale results hold, so
    unlike :func:`dpsynth_book.result_files.load` this does not compare the files' parameters with a preset.

    Parameters
    ----------
    names : sequence of str
        Study names (``results/<name>.nc``) to read if present; default :data:`TRADEOFF_STUDIES`.
    folder : path, optional
        Results folder (default :func:`dpsynth_book.result_files.results_dir`).

    Returns
    -------
    dict of str to xarray.Dataset
        The files present, in the order of ``names``; each has the attribute ``from_shipped = 1``
        and the synthesizer names the pages show (:func:`dpsynth.registry.with_display_names`).

    Raises
    ------
    ShippedResultsError
        If none of the files is present, or one cannot be read.
    """
    wanted = list(names)
    present = [n for n in shipped_names(folder) if n in wanted]
    if not present:
        where = results_dir() if folder is None else Path(folder)
        raise ShippedResultsError(
            f"none of the shipped results {', '.join(f'{n}.nc' for n in wanted)} is in {where}: run `make results` "
            f"to compute the paper-scale studies."
        )
    out = {}
    for n in sorted(present, key=wanted.index):
        p = shipped_path(n, folder)
        try:
            ds = xr.load_dataset(p, engine="h5netcdf")
        except (OSError, ValueError) as err:
            raise ShippedResultsError(f"the shipped result {p.name} cannot be read ({err}); recompute it with "
                                     f"`make results`.") from err
        ds.attrs["from_shipped"] = 1
        out[n] = registry.with_display_names(ds)
    return out


def _params(ds: xr.Dataset) -> dict:
    try:
        return dict(json.loads(ds.attrs.get("params", "{}")))
    except (TypeError, ValueError):
        return {}


def _size(ds: xr.Dataset, *candidates) -> str:
    """First available sample size among attributes/params ``candidates``, as text ("" if none)."""
    p = _params(ds)
    for c in candidates:
        v = ds.attrs.get(c, p.get(c))
        if v is not None and np.isfinite(float(v)) and float(v) > 0:
            return f", n = {int(v):,}"
    return ""


def _sdr_source(ds: xr.Dataset) -> str:
    src = ds.attrs.get("source")
    if src is None:
        src = "file" if _params(ds).get("sdr_path") else "stand-in"
    return "SDR stand-in" if src == "stand-in" else "SDR file"


def _fits(ds: xr.Dataset) -> list[str]:
    """Synthesizer names of ``ds`` that are fits: not "Data" (no guarantee), and ``is_fit`` where stored."""
    names = [str(n) for n in ds["synthesizer"].values]
    if "is_fit" in ds and "synthesizer" in ds["is_fit"].dims:
        names = fit_names(ds)
    return [n for n in names if registry.guarantee(n) is not None]


def _utility(ds: xr.Dataset, name: str) -> xr.DataArray:
    """``max_ecdf`` of synthesizer ``name`` (stored over ``synthesizer`` or, in older files, ``source``)."""
    v = ds["max_ecdf"]
    dim = "source" if "source" in v.dims else "synthesizer"
    return v.sel({dim: name})


def _cells(name: str, ds: xr.Dataset):
    """(study description, synthesizer, eps target, eps values, max-ECDF values) of one shipped study."""
    nan = float("nan")
    if name in ("censoring", "own_data"):
        study = (f"Beta{_size(ds, 'n')} (censoring study)" if name == "censoring"
                 else f"CPS 1988 wages{_size(ds, 'n')} (own data)")
        syn, target = ds["synthesizer"].values, ds["eps"].values
        for i in range(ds.sizes["fit"]):
            nm = str(syn[i])
            if registry.guarantee(nm) is None:
                continue
            yield study, nm, float(target[i]), ds["eps_remove"].isel(fit=i), ds["max_ecdf"].isel(fit=i)
    elif name == "range_restriction":
        n_main = int(ds.attrs["n_main"])
        if n_main not in ds["n_obs"].values:
            raise DataError(f"range_restriction: n_main = {n_main} is not among n_obs {ds['n_obs'].values.tolist()}.")
        s = ds.sel(n_obs=n_main)
        study = f"log-normal, n = {n_main} (range restriction)"
        for nm in _fits(s):
            yield study, nm, nan, s["eps"].sel(synthesizer=nm), s["max_ecdf"].sel(synthesizer=nm)
    elif name == "reweighting-synthesizers":
        size = _size(ds, "n")
        for dm in ds["data_model"].values:
            s = ds.sel(data_model=dm)
            study = f"{_DATA_MODEL_NAMES.get(str(dm), str(dm))}{size} (re-weighting study)"
            for nm in _fits(s):
                yield study, nm, nan, s["eps"].sel(synthesizer=nm), _utility(s, nm)
    elif name in ("sdr_censoring", "sdr_reweighting"):
        part = "censoring" if name == "sdr_censoring" else "re-weighting"
        size = _size(ds, "n", "n1" if part == "censoring" else "n2")
        study = f"{_sdr_source(ds)}{size} ({part} synthesizers)"
        target = float(_params(ds).get("eps", nan))
        for nm in _fits(ds):
            t = target if registry.spec(nm).takes_eps else nan
            yield study, nm, t, ds["eps"].sel(synthesizer=nm), _utility(ds, nm)
    else:
        raise DataError(f"no privacy-utility summary for study {name!r}; known: {', '.join(TRADEOFF_STUDIES)}.")


def _quartiles(values) -> tuple[float, float, float, int]:
    v = np.asarray(values, dtype=float).ravel()
    v = v[np.isfinite(v)]
    if v.size == 0:
        return float("nan"), float("nan"), float("nan"), 0
    lo, med, hi = np.percentile(v, [25, 50, 75])
    return float(med), float(lo), float(hi), int(v.size)


def tradeoff_table(studies: Mapping[str, xr.Dataset]) -> pd.DataFrame:
    """Privacy and utility of every synthesizer at every epsilon of the book's shipped studies.

    Parameters
    ----------
    studies : mapping of str to xarray.Dataset
        Study name -> its shipped result (:func:`shipped_studies`); the names of
        :data:`TRADEOFF_STUDIES` that are missing are skipped.

    Returns
    -------
    pandas.DataFrame
        One row per (study panel, synthesizer, eps target), columns :data:`TRADEOFF_COLUMNS`:
        ``study`` (reader-facing description; the re-weighting study has one per generating model),
        ``source`` (the shipped file's name), ``synthesizer`` (registry name), ``guarantee``
        (registry), ``eps_target`` (the target epsilon of a mechanism run at one, else NaN),
        ``eps`` with ``eps_lo``/``eps_hi`` (median and quartiles over replicates of the epsilon of
        one release with one record removed: the guarantee for censored and PH fits, the local
        ``eps_x = 2 Delta`` for aDP and unprotected fits), ``max_ecdf`` with ``max_ecdf_lo``/``max_ecdf_hi``
        (median and quartiles of the largest ECDF distance between a synthetic and the
        confidential data set, over replicates and, where a study keeps several synthetic sets,
        over those too), ``replicates`` (replicates with a finite eps) and ``releases`` (synthetic
        data sets the utility figures are over). "Data" rows and rows whose eps or max-ECDF is not
        finite are dropped.
    """
    rows = []
    for name in TRADEOFF_STUDIES:
        if name not in studies:
            continue
        for study, nm, target, eps, ecdf in _cells(name, studies[name]):
            e, e_lo, e_hi, reps = _quartiles(eps.values)
            u, u_lo, u_hi, rel = _quartiles(ecdf.values)
            rows.append({"study": study, "source": name, "synthesizer": nm, "guarantee": registry.guarantee(nm),
                         "eps_target": target, "eps": e, "eps_lo": e_lo, "eps_hi": e_hi, "max_ecdf": u,
                         "max_ecdf_lo": u_lo, "max_ecdf_hi": u_hi, "replicates": reps, "releases": rel})
    table = pd.DataFrame(rows, columns=list(TRADEOFF_COLUMNS))
    keep = np.isfinite(table["eps"].astype(float)) & np.isfinite(table["max_ecdf"].astype(float))
    table = table[keep].reset_index(drop=True)
    return table.astype({"eps_target": float, "eps": float, "replicates": int, "releases": int})


def _fmt_eps(v: float) -> str:
    return f"{v:.3g}"


#: Short names of the shipped studies, for the page's sentences.
_SHORT = {"censoring": "censoring study", "range_restriction": "range-restriction study",
          "reweighting-synthesizers": "re-weighting study", "sdr_censoring": "SDR application of the censoring paper",
          "sdr_reweighting": "SDR application of the re-weighting paper", "own_data": "CPS 1988 wages study"}


def _name(row) -> str:
    """Display name, with its epsilon when that differs from its target (PH-paper: half the target)."""
    nm = registry.spec(row["synthesizer"]).name if not registry.spec(row["synthesizer"]).pattern else row["synthesizer"]
    t = row["eps_target"]
    if np.isfinite(t) and not np.isclose(row["eps"], t, rtol=0.01):
        return f"{nm} (ε = {_fmt_eps(row['eps'])} with one record removed)"
    return nm


def _join(items: Sequence[str]) -> str:
    items = list(items)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def tradeoff_markdown(table: pd.DataFrame) -> str:
    """Two to four sentences on :func:`tradeoff_table`, every number formatted from the table.

    For each study panel with a strict-DP mechanism: at the largest target epsilon that every one of
    its DP mechanisms was run at, the DP mechanism with the smallest median max-ECDF distance, and
    the best aDP mechanism at that target. For the studies with aDP mechanisms only: the range of
    their local epsilons and median max-ECDF distances. Last, the local epsilon of the unprotected
    posterior.
    """
    out = []
    for study in pd.unique(table["study"]):
        sub = table[table["study"] == study]
        dp = sub[(sub["guarantee"] == "DP") & np.isfinite(sub["eps_target"])]
        if dp.empty:
            continue
        common = set.intersection(*(set(g["eps_target"]) for _, g in dp.groupby("synthesizer")))
        if not common:
            continue
        at, low = max(common), min(common)
        here = sub[np.isclose(sub["eps_target"], at)]
        best = here[here["guarantee"] == "DP"].sort_values("max_ecdf").iloc[0]
        s = (f"In the panel “{study}”, at the target ε = {_fmt_eps(at)} the strict-DP mechanism with the smallest "
             f"median max-ECDF distance is {_name(best)}, at {best['max_ecdf']:.3f}")
        adp = here[here["guarantee"] == "aDP"].sort_values("max_ecdf")
        if not adp.empty:
            a = adp.iloc[0]
            s += f"; the best aDP mechanism run at that target, {_name(a)}, reaches {a['max_ecdf']:.3f}"
            if a["max_ecdf"] > 0:
                s += f" (the DP distance is {best['max_ecdf'] / a['max_ecdf']:.2f} times the aDP one)"
        if low < at:
            there = sub[np.isclose(sub["eps_target"], low) & (sub["guarantee"] == "DP")].sort_values("max_ecdf")
            b = there.iloc[0]
            if b["synthesizer"] == best["synthesizer"]:
                s += f", and it is still the best DP mechanism at ε = {_fmt_eps(low)}"
            else:
                same = there.loc[there["synthesizer"] == best["synthesizer"], "max_ecdf"].iloc[0]
                s += (f", while at ε = {_fmt_eps(low)} the best DP mechanism is {_name(b)}, at {b['max_ecdf']:.3f}, "
                      f"against {same:.3f} for {registry.spec(best['synthesizer']).name}")
        out.append(s + ".")
    only = [s for s in pd.unique(table["study"]) if not (table.loc[table["study"] == s, "guarantee"] == "DP").any()]
    sub = table[table["study"].isin(only) & (table["guarantee"] == "aDP")]
    if not sub.empty:
        short = list(dict.fromkeys(_SHORT.get(v, v) for v in sub["source"]))
        lo, hi = sub.loc[sub["eps"].idxmin()], sub.loc[sub["eps"].idxmax()]
        where = lambda r: f"{_name(r)}, “{r['study']}”"  # noqa: E731
        verb, their = ("has", "its") if len(short) == 1 else ("have", "their")
        out.append(
            f"The {_join(short)} {verb} no strict-DP mechanism: the local ε of one release of {their} aDP "
            f"mechanisms runs from {_fmt_eps(lo['eps'])} ({where(lo)}) to {_fmt_eps(hi['eps'])} ({where(hi)}), "
            f"with median max-ECDF distances from {sub['max_ecdf'].min():.3f} to {sub['max_ecdf'].max():.3f}."
        )
    none = table[table["guarantee"] == "none"]
    if not none.empty:
        out.append(f"The unprotected posterior (Unweighted) has a local ε of {_fmt_eps(none['eps'].min())} to "
                   f"{_fmt_eps(none['eps'].max())} across the panels, with median max-ECDF distances from "
                   f"{none['max_ecdf'].min():.3f} to {none['max_ecdf'].max():.3f}.")
    return " ".join(out)


# --- what a release costs ------------------------------------------------------------------------

#: The public facts of each situation that decide what a release publishes and how its eps is split (as the
#: ``Synthesizer`` decides them before a fit): its relation (``"replace"`` when public covariates are carried,
#: so that the number of records is public), a DP released size (none when the size is public), a DP
#: reference (a categorical target's DP level counts), a calibration marginal, and the mechanism.
COST_SITUATIONS: dict[str, dict] = {
    "bounded marginal (no covariates), Censor_ref": dict(relation="remove", dp_size=True, dp_reference=False,
                                                         mechanism="censor_ref"),
    "bounded marginal (no covariates), Noise-aware": dict(relation="remove", dp_size=True, dp_reference=False,
                                                          mechanism="noise_aware", model_free=True),
    "regression or count (public covariates carried)": dict(relation="replace", dp_size=False, dp_reference=False,
                                                            mechanism="censor_ref"),
    "regression, calibrated to its DP marginal": dict(relation="replace", dp_size=False, dp_reference=False,
                                                      mechanism="censor_ref", dp_marginal=True),
    "category (public covariates carried)": dict(relation="replace", dp_size=False, dp_reference=True,
                                                 mechanism="censor_ref"),
}


def costs_table(eps: float = 1.0, keep_draws: int = 10) -> pd.DataFrame:
    """What one release publishes per situation at a total ``eps``, by the package's public budget rule.

    Computed by :meth:`dpsynth.release.budget.Budget.plan` from each situation's public facts
    (:data:`COST_SITUATIONS`), as a :class:`dpsynth.Synthesizer` plans them before its fit.

    Returns
    -------
    pandas.DataFrame
        One row per situation: the relation the statement is under; ``ε published`` (the total of the
        first release: the ``eps`` asked); the same release under the other relation (with one record
        replaced the draw, reference and marginal scale by the mechanism's replacement factor and the
        DP size costs nothing; with one record removed a release of the exact size has no finite eps);
        the shares of the released size, the reference, the calibration marginal and one draw; what a
        saved synthesizer keeping ``keep_draws`` draws is worth (all the releases its draws could
        make); and what each further release adds.
    """
    from dpsynth.privacy import neighbours_phrase
    from dpsynth.release.budget import Budget

    rows = {}
    for name, facts in COST_SITUATIONS.items():
        facts = dict(facts)
        mech = mechanisms.get(facts.pop("mechanism"))
        b = Budget.plan(eps, facts.pop("relation"), **facts)
        rem, rep = mech.eps_per_param
        if b.relation == "remove":  # the size is unchanged by a replacement: its DP count costs nothing there
            other = f"{(b.reference + b.marginal + (b.draw or 0.0)) * rep / rem:.3g} (one record replaced)"
        else:
            other = "none: the exact size is released (public because the covariates' rows are)"
        rows[name] = {"relation": neighbours_phrase(b.relation), "ε published": b.total,
                      "under the other relation": other,
                      "size": b.size, "reference": b.reference, "marginal": b.marginal, "one draw": b.draw,
                      f"saved, {keep_draws} draws": b.cost(keep_draws), "each further release": b.further}
    return pd.DataFrame(rows).T.rename_axis("situation")
