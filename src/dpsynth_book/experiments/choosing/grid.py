"""The head-to-head grid behind the choosing page's decision (study ``choosing-grid``).

Every strictly DP candidate (:data:`.grid_params.CANDIDATE_KEYS`) releases one column of a real
public file in each situation of the decision (:data:`SITUATIONS`), at each total eps of the book's
grid, through :class:`dpsynth.Synthesizer` with its defaults and the situation's public facts:
the column's public bounds where the candidate needs them, its public covariates carried. The
statement of every candidate publishes the eps asked, under the relation the package decides
before the fit (one record removed without covariates, replaced with them): the comparison is at
equal total eps under one relation.

Each run measures one synthetic data set (one posterior draw, or a model-free release) on the
situation's measure (:data:`MEASURES`): the largest ECDF distance of the column for a marginal or
a count, the root-mean-square error of the analyst's regression coefficients for a regression, the
total variation of the level shares for a category. A candidate is **usable** in a run when its
fit passed the convergence checks, censored at most half the records at a typical draw, and was
not refused; the reason is recorded otherwise (``why``). Random streams are addressed by the cell
``stream(seed, situation, eps, candidate)``, and every fit runs in research mode (its DP noise
seeded), so a cell recomputed alone repeats the shipped one on one machine.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
import xarray as xr

from dpsynth import metrics, table_metrics
from dpsynth.release.protocol import unusable_values
from dpsynth.seeds import stream
from dpsynth.validation import DataError

from ...public_data import islr_wage, nmes1988_table
from ...studies import data_fingerprint
from .grid_params import CANDIDATE_NAMES, GridParams

__all__ = ["GridSituation", "SITUATIONS", "MEASURES", "APPLIES", "MECHANISM_KEY", "CALIBRATED",
           "situation_frame", "cell", "grid_replicate"]

#: Why a synthetic column is judged, per measure.
MEASURES = {"marginal": "max ECDF distance of the column", "coef": "RMSE of the analyst's regression coefficients",
            "tvd": "total variation of the level shares"}
#: The candidates that apply to a column kind.
APPLIES = {"continuous": ("censor_ref", "censor_ref_calibrated", "censor_uw", "noise_aware", "ph", "opendp_quantiles"),
           "count": ("censor_ref", "censor_uw", "noise_aware", "ph", "opendp_quantiles"),
           "categorical": ("censor_ref", "censor_uw", "noise_aware")}
#: Candidates that are a registry mechanism with a setting: their registry key.
MECHANISM_KEY = {"censor_ref_calibrated": "censor_ref"}
#: Candidates whose values are calibrated to the column's DP marginal on its public bounds (``calibrate=``).
CALIBRATED = frozenset({"censor_ref_calibrated"})
#: Candidates that read the column's public bounds.
_BOUNDED = ("noise_aware", "ph", "opendp_quantiles")


@dataclass(frozen=True)
class GridSituation:
    """One situation of the decision on a real file.

    Attributes
    ----------
    title : str
        For captions.
    file : str
        ``"islr_wage"`` or ``"nmes1988"``.
    target : str
        The confidential column.
    covariates : tuple of str
        Public covariates carried (empty: the column alone).
    kinds : dict
        Column -> ``"continuous"``, ``"count"`` or ``"categorical"`` (target and covariates).
    bounds : tuple or None
        The target's public bounds ``(lower, upper)``, chosen without looking at the data.
    measure : str
        The situation's measure (:data:`MEASURES`).
    small : bool
        Whether the file is the fixed public subsample of ``small_n`` records.
    """

    title: str
    file: str
    target: str
    covariates: tuple
    kinds: dict
    bounds: tuple | None
    measure: str
    small: bool = False

    @property
    def kind(self) -> str:
        return self.kinds[self.target]


_WAGE_KINDS = {"wage": "continuous", "age": "continuous", "education": "categorical", "jobclass": "categorical",
               "health": "categorical", "maritl": "categorical"}
_NMES_KINDS = {"visits": "count", "chronic": "continuous", "health": "categorical", "age": "continuous",
               "gender": "categorical"}
#: The situations (wages of $10,000 to $350,000 a year, in thousands; at most 49 office visits a year).
SITUATIONS: dict[str, GridSituation] = {
    "bounded marginal": GridSituation("ISLR Wage, the wage alone (3,000 workers)", "islr_wage", "wage", (),
                                      _WAGE_KINDS, (10.0, 350.0), "marginal"),
    "regression": GridSituation("ISLR Wage, wage on age, education, job class and health", "islr_wage", "wage",
                                ("age", "education", "jobclass", "health"), _WAGE_KINDS, (10.0, 350.0), "coef"),
    "count": GridSituation("NMES 1988, office visits given chronic conditions, health, age and gender (1,000)",
                           "nmes1988", "visits", ("chronic", "health", "age", "gender"), _NMES_KINDS, (0.0, 49.0),
                           "marginal"),
    "category": GridSituation("NMES 1988, self-rated health given chronic conditions, age and gender (1,000)",
                              "nmes1988", "health", ("chronic", "age", "gender"), _NMES_KINDS, None, "tvd"),
    "small n, marginal": GridSituation("ISLR Wage, the wage alone on a fixed public subsample", "islr_wage", "wage",
                                       (), _WAGE_KINDS, (10.0, 350.0), "marginal", True),
    "small n, regression": GridSituation("ISLR Wage, the regression on a fixed public subsample", "islr_wage",
                                         "wage", ("age", "education", "jobclass", "health"), _WAGE_KINDS,
                                         (10.0, 350.0), "coef", True),
}


def situation_frame(name: str, p: GridParams) -> pd.DataFrame:
    """The file of situation ``name``: its target and covariates (categorical columns as pandas categoricals)."""
    sit = SITUATIONS[name]
    df = (islr_wage() if sit.file == "islr_wage" else nmes1988_table(p.nmes_n))
    df = df[[sit.target, *sit.covariates]].copy()
    for c in df.columns:
        if sit.kinds[c] == "categorical" and not isinstance(df[c].dtype, pd.CategoricalDtype):
            df[c] = pd.Categorical(df[c].astype(str))
        elif sit.kinds[c] == "continuous":
            df[c] = df[c].astype(float)
    if sit.small:
        idx = np.sort(np.random.default_rng(20261127).permutation(len(df))[: p.small_n])
        df = df.iloc[idx].reset_index(drop=True)
    return df


def _coef_rmse(original: pd.DataFrame, synthetic: pd.DataFrame, sit: GridSituation) -> float:
    if not sit.covariates:
        return float("nan")
    kinds = {c: sit.kinds[c] for c in (sit.target, *sit.covariates)}
    try:
        q0, _, terms = table_metrics.regression_fit(original, sit.target, list(sit.covariates), kinds, like=original)
        q1, _, _ = table_metrics.regression_fit(synthetic, sit.target, list(sit.covariates), kinds, like=original)
    except DataError:  # a level of a covariate missing, or no variation: no regression from this set
        return float("nan")
    keep = np.array([t != "intercept" for t in terms])
    return float(np.sqrt(np.mean((q1[keep] - q0[keep]) ** 2)))


def _measures(original: pd.DataFrame, synthetic: pd.DataFrame, sit: GridSituation) -> dict:
    x, y = original[sit.target], synthetic[sit.target]
    out = {"marginal": float("nan"), "coef": _coef_rmse(original, synthetic, sit), "tvd": float("nan")}
    if sit.kind == "categorical":
        levels = list(x.cat.categories)
        a = x.value_counts(normalize=True).reindex(levels, fill_value=0.0).to_numpy()
        b = pd.Series(np.asarray(y, dtype=object)).astype(str).value_counts(normalize=True)
        b = b.reindex([str(v) for v in levels], fill_value=0.0).to_numpy()
        out["tvd"] = float(0.5 * np.abs(a - b).sum())
    else:
        out["marginal"] = float(metrics.ecdf_distances(x.to_numpy(dtype=float), y.to_numpy(dtype=float)).max_ecdf)
    return out


def _unusable(values: pd.Series) -> list[str]:
    """Why the release protocol would refuse a numeric synthetic column, by its values alone
    (:func:`dpsynth.release.protocol.unusable_values`: here its non-finite ones); empty for a categorical one."""
    if isinstance(values.dtype, pd.CategoricalDtype) or not pd.api.types.is_numeric_dtype(values):
        return []
    return unusable_values(values.to_numpy(dtype=float))


def cell(df: pd.DataFrame, sit: GridSituation, key: str, eps: float, p: GridParams, seed) -> dict:
    """One candidate's release in one situation at one total eps: its measures, usability and the reason."""
    from dpsynth.synthesizer import Synthesizer

    nan = float("nan")
    out = {"value": nan, "marginal": nan, "coef": nan, "tvd": nan, "usable": False, "converged": False,
           "censored_share": nan, "eps_published": nan, "seconds": nan, "why": ""}
    if key not in APPLIES[sit.kind]:
        out["why"] = f"not applicable to a {sit.kind} column"
        return out
    kw: dict = {}
    if key in _BOUNDED and sit.bounds is not None:
        kw["mechanism_params"] = {"lower": sit.bounds[0], "upper": sit.bounds[1]}
    if key in CALIBRATED:
        kw["calibrate"] = {"lower": sit.bounds[0], "upper": sit.bounds[1]}
    start = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # censoring and ignored covariates are recorded, not warned
            s = Synthesizer(df, sit.target, covariates=list(sit.covariates) or None,
                            mechanism=MECHANISM_KEY.get(key, key), eps=eps,
                            sampler=p.sampler, progress=False, mode="research", **kw)
            s.fit(seed=stream(seed, "fit"))
            syn = s.sample_unaccounted(seed=stream(seed, "synthetic"))
            pr = s.privacy
            refused = _unusable(syn[sit.target])
            if not refused:
                out.update(_measures(df, syn, sit))
            out["converged"] = bool(pr.converged)
            out["censored_share"] = float(getattr(pr, "censored_typical", 0.0) or 0.0)
            out["eps_published"] = float(pr.eps)
    except (DataError, RuntimeError) as err:  # a refusal is a result: the candidate is not usable here
        out["seconds"] = time.perf_counter() - start
        out["why"] = f"refused: {(str(err).splitlines() or [''])[0][:200]}"
        return out
    except Exception as err:  # noqa: BLE001 - a failure is recorded with its type, never dropped, never a crash
        out["seconds"] = time.perf_counter() - start
        out["why"] = f"failed: {type(err).__name__}: {(str(err).splitlines() or [''])[0][:200]}"
        return out
    out["value"] = out[sit.measure]
    out["seconds"] = time.perf_counter() - start
    why = []
    if not out["converged"]:
        why.append("failed its convergence checks")
    if out["censored_share"] > 0.5:
        why.append(f"censored {out['censored_share']:.0%} of the records")
    if refused:  # the release protocol refuses such a file
        why.append(f"{'; '.join(refused)}, so its release would be refused")
    elif not np.isfinite(out["value"]):
        why.append("its synthetic data gave no value of the measure")
    out["usable"] = not why
    out["why"] = "; ".join(why)
    return out


def grid_replicate(r: int, seed: np.random.SeedSequence, params_mapping: Mapping) -> xr.Dataset:
    """One run of every applicable candidate in every situation at every eps.

    Returns
    -------
    xarray.Dataset
        Over ``(situation, eps, candidate)`` (candidate: display names, :data:`.grid_params.CANDIDATE_NAMES`):
        ``value`` (the situation's measure), ``marginal``, ``coef``, ``tvd``, ``usable``, ``converged``,
        ``censored_share`` (at a typical draw), ``eps_published`` (the statement's total under the relation the
        package decided: it equals the eps asked), ``seconds`` (fit and one synthetic set) and ``why`` (empty
        when usable: else why not, a refusal's first line, or "not applicable"). Over ``situation``: ``n`` and
        ``data_fingerprint``.
    """
    p = GridParams.from_mapping(params_mapping)
    rows, info = [], []
    for name in p.situations:
        sit = SITUATIONS[name]
        df = situation_frame(name, p)
        num = df[sit.target].cat.codes.to_numpy(dtype=float) if sit.kind == "categorical" else \
            df[sit.target].to_numpy(dtype=float)
        info.append({"situation": name, "n": len(df), "data_fingerprint": data_fingerprint(num)})
        for eps in [float(e) for e in p.eps]:
            for key in p.candidates:
                rows.append({"situation": name, "eps": eps, "candidate": CANDIDATE_NAMES[key],
                             **cell(df, sit, key, eps, p, stream(seed, name, eps, key))})
    ds = pd.DataFrame(rows).set_index(["situation", "eps", "candidate"]).to_xarray()
    ds = ds.reindex({"situation": list(p.situations), "candidate": [CANDIDATE_NAMES[k] for k in p.candidates]})
    for v in ("usable", "converged"):
        ds[v] = ds[v].fillna(False).astype(bool)
    ds["why"] = ds["why"].fillna("").astype(str)
    meta = pd.DataFrame(info).set_index("situation").to_xarray()
    ds["n"] = meta["n"].astype(np.int64)
    ds["data_fingerprint"] = meta["data_fingerprint"].astype(np.int64)
    ds.attrs.update({
        "eps_neighbours": "eps and eps_published: one record removed without covariates, one record replaced with "
                          "them (the relation the package decides before the fit)",
        "synthetic_data": "one synthetic data set per candidate, situation, eps and run (one posterior draw, or a "
                          "model-free release)",
    })
    return ds
