"""The replicate of the "Releasing a whole table" chapter: four ways to release a table whose every column
is confidential.

:func:`replicate` (study ``whole_table``) runs, on each real table (:data:`TABLES`) and at each total
eps (one record removed; for the peers, added or removed: the same relation), every method once:

* **Ours (auto)**: :class:`dpsynth.TableSynthesizer` with its defaults (``mechanisms="auto"``,
  :func:`dpsynth.choice.table_column_choice`) and the table's public bounds: categorical columns and
  narrow counts from their noise-aware DP counts in cells of the earlier columns, continuous columns
  and wide counts by the censored regression on every earlier column, calibrated to their DP
  marginal. The released size is a DP count (its share is in the total);
* **Censored chain**: every column by the censored regression on the columns before it
  (``mechanisms="censor_ref"``, no calibration: the package's default before this chapter's study);
* **MST** and **AIM**: SmartNoise's synthesizers (:func:`dpsynth_book.peers.run_peer`) at (eps, delta),
  every numeric column cut into bins on the same PUBLIC bounds (:data:`TABLES`), categorical levels
  as snsynth reads them; they release exactly n rows (nothing of their eps goes to the size). They
  run in the peers' environment ``.venv-peers``, and their rows are drawn from their fitted models with
  mbi's ``synthetic_data`` as fixed upstream (``mbi_sampling_fix``: mbi 1.1.0 drew a column's values in
  the order of the rows within its parents' groups, which made columns comonotone;
  :mod:`.peers_notes`); without the environment the replicate raises
  :class:`dpsynth_book.peers.PeerUnavailable` (the book renders from the shipped results).

Each method releases ONE synthetic table at the total eps, measured against the confidential one
(:func:`table_utilities`). Intervals: ours is fitted a second time with ``releases=m``
(:attr:`.params.WholeTableParams.implicates`), so that the same total eps pays for ``m`` tables
(its noise-aware columns cost nothing per table; its model-based columns' draws share the rest),
and the analyst's regression is combined over them (:func:`dpsynth.table_metrics.regression_coverage`);
the peers' one table is used as if it were real. A failed convergence check is recorded, never
dropped.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
import xarray as xr

from dpsynth import metrics, table_metrics
from dpsynth.seeds import stream
from dpsynth.validation import DataError

from ...public_data import house_prices, islr_wage, nmes1988_table
from ...studies import data_fingerprint
from .params import METHOD_NAMES, WholeTableParams

__all__ = ["TableSpec", "TABLES", "METRICS", "chapter_table", "table_utilities", "interval_coverage", "replicate"]


@dataclass(frozen=True)
class TableSpec:
    """A real table of the chapter: its columns in the synthesis order, their kinds, public bounds and the analyst's
    regression.

    Attributes
    ----------
    title : str
        For captions.
    columns : tuple of str
        Every column (all confidential), in the public order the chain synthesizes them.
    kinds : dict
        Column -> ``"continuous"``, ``"count"`` or ``"categorical"``.
    bounds : dict
        Numeric column -> ``(lower, upper, peer_bins)``: public bounds chosen without looking at the data
        (ours: the noise-aware bins and the calibration; the peers: equal-width bins, ``peer_bins`` of them).
    outcome : str
        The regression's outcome (numeric; on its analysis scale, :func:`dpsynth.table_metrics.analysis_values`).
    predictors : tuple of str
        Its predictors.
    """

    title: str
    columns: tuple
    kinds: dict
    bounds: dict
    outcome: str
    predictors: tuple

    @property
    def public_bounds(self) -> dict:
        """Numeric column -> ``(lower, upper)``."""
        return {c: (lo, hi) for c, (lo, hi, _) in self.bounds.items()}


#: The chapter's tables. Bounds are round public numbers chosen without looking at the data (a house sold for
#: $10,000 to $200,000 in 1987 Windsor, a lot of 1,000 to 17,000 square feet, 1 to 4 stories and 1 to 6 bedrooms;
#: ages 65 to 110 in decades, at most 8 chronic conditions and 49 office visits a year; workers aged 18 to 80
#: earning $10,000 to $350,000).
TABLES: dict[str, TableSpec] = {
    "house_prices": TableSpec(
        "House prices, Windsor 1987 (546 sales)", ("aircon", "stories", "bedrooms", "lotsize", "price"),
        {"aircon": "categorical", "stories": "count", "bedrooms": "count", "lotsize": "continuous",
         "price": "continuous"},
        {"stories": (1, 4, 4), "bedrooms": (1, 6, 6), "lotsize": (1000.0, 17000.0, 16),
         "price": (10000.0, 200000.0, 19)},
        "price", ("lotsize", "bedrooms", "stories", "aircon")),
    "nmes1988": TableSpec(
        "NMES 1987-88 (fixed public subsample of 1,000)", ("gender", "health", "age", "chronic", "visits"),
        {"gender": "categorical", "health": "categorical", "age": "continuous", "chronic": "count",
         "visits": "count"},
        {"age": (6.5, 11.0, 9), "chronic": (0, 8, 9), "visits": (0, 49, 50)},
        "visits", ("chronic", "health", "age", "gender")),
    "islr_wage": TableSpec(
        "Mid-Atlantic wages, 2003-09 (3,000 workers)", ("education", "jobclass", "maritl", "health", "age", "wage"),
        {"education": "categorical", "jobclass": "categorical", "maritl": "categorical", "health": "categorical",
         "age": "continuous", "wage": "continuous"},
        {"age": (18.0, 80.0, 31), "wage": (10.0, 350.0, 34)},
        "wage", ("age", "education", "jobclass", "health", "maritl")),
}

#: The utility and cost variables of the study (see :func:`replicate`).
METRICS = ("marginal", "marginal_numeric", "marginal_categorical", "pairwise", "contingency", "coef_rmse",
           "coef_overlap", "pmse_ratio", "pmse_int_ratio", "regression_degenerate", "coverage", "width_ratio",
           "seconds")


def chapter_table(name: str, p: WholeTableParams) -> pd.DataFrame:
    """The table ``name`` as the study uses it: its columns in the chain's order, categorical columns as pandas
    categoricals with their public levels, numeric ones as numbers (ages as floats: a continuous column).

    NMES 1988 is the fixed public subsample of ``p.nmes_n`` rows; with ``p.n > 0`` each table is cut
    to the first ``n`` rows of a fixed permutation (smoke tests only).
    """
    spec = TABLES[name]
    loader = {"house_prices": house_prices, "nmes1988": lambda: nmes1988_table(p.nmes_n), "islr_wage": islr_wage}
    df = loader[name]()[list(spec.columns)].copy()
    for c, k in spec.kinds.items():
        if k == "categorical" and not isinstance(df[c].dtype, pd.CategoricalDtype):
            df[c] = pd.Categorical(df[c].astype(str))
        elif k == "continuous":
            df[c] = df[c].astype(float)
    if p.n and p.n < len(df):
        idx = np.sort(np.random.default_rng(20261125).permutation(len(df))[: p.n])
        df = df.iloc[idx].reset_index(drop=True)
    return df


def table_utilities(original: pd.DataFrame, synthetic: pd.DataFrame, spec: TableSpec) -> dict:
    """The utilities of one synthetic table (every key of :data:`METRICS` but ``coverage``, ``width_ratio`` and
    ``seconds``)."""
    kinds = dict(spec.kinds)
    marg = table_metrics.marginal_table(original, synthetic, kinds)
    cat = marg["kind"] == "categorical"
    pw = table_metrics.pairwise_table(original, synthetic, kinds)
    try:
        reg = table_metrics.regression_table(original, synthetic, spec.outcome, list(spec.predictors), kinds)
        degenerate = 0.0
    except DataError:  # the synthetic design is rank deficient (e.g. a level that never occurs)
        reg, degenerate = _min_norm_regression(original, synthetic, spec, kinds), 1.0
    reg = reg.drop(index="intercept")
    a = table_metrics.table_features(original, kinds)
    b = table_metrics.table_features(synthetic, kinds, like=original)
    return {
        "marginal": float(marg["distance"].mean()),
        "marginal_numeric": float(marg.loc[~cat, "distance"].mean()) if (~cat).any() else np.nan,
        "marginal_categorical": float(marg.loc[cat, "distance"].mean()) if cat.any() else np.nan,
        "pairwise": float(np.nanmean(np.abs(pw["difference"].to_numpy(dtype=float)))),
        "contingency": float(pw["contingency_tvd"].mean()),
        "coef_rmse": float(np.sqrt(np.mean((reg["synthetic"] - reg["original"]) ** 2))),
        "coef_overlap": _nanmean(reg["overlap"].to_numpy(dtype=float)),
        "pmse_ratio": float(metrics.pmse(a, b).ratio),
        "pmse_int_ratio": float(metrics.pmse(a, b, interactions=True).ratio),
        "regression_degenerate": degenerate,
    }


def interval_coverage(original: pd.DataFrame, sets, spec: TableSpec) -> tuple[float, float, int]:
    """Share of the regression's coefficients whose 95% interval (one table as if real, or ``m`` combined) covers
    the confidential estimate, the median ratio of its width to the confidential interval's, and the number of
    tables used.

    A synthetic table whose design is rank deficient (a level of a predictor that never occurs in it)
    cannot give the analyst's regression: it is set aside, as an analyst would (a decision made from the
    synthetic tables alone, so a post-processing), and the others are combined. With no table left the
    coverage and width are NaN and 0 tables are used.
    """
    usable = []
    for s in sets:
        try:
            table_metrics.regression_fit(s, spec.outcome, list(spec.predictors), dict(spec.kinds), like=original)
        except DataError:
            continue
        usable.append(s)
    if not usable:
        return float("nan"), float("nan"), 0
    cov = table_metrics.regression_coverage(original, usable, spec.outcome, list(spec.predictors), dict(spec.kinds))
    return float(cov["covered"].mean()), float(cov["width_ratio"].median()), len(usable)


def _nanmean(v: np.ndarray) -> float:
    return float(np.nanmean(v)) if np.isfinite(v).any() else float("nan")


def _min_norm_regression(original: pd.DataFrame, synthetic: pd.DataFrame, spec: TableSpec, kinds: dict) -> pd.DataFrame:
    """The analyst's regression when the synthetic design is rank deficient: the minimum-norm least-squares
    coefficients (0 for a level that never occurs), no intervals (overlap NaN)."""
    from dpsynth.table_metrics import _design, _levels, analysis_values  # noqa: PLC2701 - the same design as regression_table

    levels = {c: _levels(original[c]) for c in spec.predictors if kinds[c] == "categorical"}
    coefs = []
    for frame in (original, synthetic):
        y = analysis_values(frame[spec.outcome], kinds[spec.outcome], like=original[spec.outcome])
        X, terms = _design(frame, list(spec.predictors), kinds, levels, original)
        ok = np.isfinite(y) & np.all(np.isfinite(X), axis=1)
        coefs.append(np.linalg.lstsq(X[ok], y[ok], rcond=None)[0])
    return pd.DataFrame({"original": coefs[0], "synthetic": coefs[1], "overlap": np.nan},
                        index=pd.Index(terms, name="term"))


def _seed_int(seq: np.random.SeedSequence) -> int:
    return int(seq.generate_state(1, dtype=np.uint32)[0])


def _table(df: pd.DataFrame, spec: TableSpec, eps: float, p: WholeTableParams, mechanisms: str | None,
           releases: int = 1):
    from dpsynth.table_synthesizer import TableSynthesizer

    kw = {"bounds": spec.public_bounds} if mechanisms is None else {"mechanisms": mechanisms}
    return TableSynthesizer(df, list(spec.columns), eps=eps, sampler=p.sampler, progress=False,
                            mode="research", releases=releases, keep_draws=max(10, releases), **kw)


def _checks(t) -> dict:
    pr = t.privacy
    return {"eps_total": float(pr.eps), "delta": 0.0, "converged": bool(pr.converged),
            "n_unconverged": float(sum(not q.converged for q in pr.parts)),
            "rhat_max": float(np.nanmax([q.rhat_max for q in pr.parts])),
            "divergences": float(sum(q.divergences for q in pr.parts))}


def _ours(mechanisms: str | None) -> Callable:
    def run(df: pd.DataFrame, spec: TableSpec, eps: float, p: WholeTableParams, seed) -> dict:
        start = time.perf_counter()
        t = _table(df, spec, eps, p, mechanisms).fit(seed=stream(seed, "fit"))
        syn = t.sample_unaccounted(seed=stream(seed, "synthetic"))  # research: the first release's table
        out = {**_checks(t), **table_utilities(df, syn, spec), "seconds": time.perf_counter() - start}
        if mechanisms is None:  # m tables at the same total eps: a second fit with releases=m
            m = int(p.implicates)
            tm = _table(df, spec, eps, p, mechanisms, releases=m).fit(seed=stream(seed, "fit", "implicates"))
            sets = [tm.sample_unaccounted(seed=stream(seed, "implicate", k), draw=k, synthesis="draw")
                    for k in range(m)]
            out["coverage"], out["width_ratio"], out["coverage_sets"] = interval_coverage(df, sets, spec)
            out["eps_implicates"] = float(tm.privacy.eps)
        else:
            out["coverage"] = out["width_ratio"] = out["eps_implicates"] = out["coverage_sets"] = float("nan")
        return out
    return run


def _peer(name: str) -> Callable:
    def run(df: pd.DataFrame, spec: TableSpec, eps: float, p: WholeTableParams, seed) -> dict:
        from ...peers import run_peer

        start = time.perf_counter()
        categorical = [c for c in df.columns if spec.kinds[c] == "categorical"]
        syn, info = run_peer(name, df, epsilon=eps, delta=p.delta, categorical=categorical,
                             continuous_bounds={c: spec.bounds[c] for c in df.columns if c not in categorical},
                             seed=_seed_int(stream(seed, "peer")))
        spent = float(info.get("epsilon_spent", {}).get("total", eps))
        nan = float("nan")
        cov, width, used = interval_coverage(df, [syn], spec)  # their one table used as if it were real
        return {"eps_total": spent, "delta": float(p.delta), "converged": True, "n_unconverged": 0.0,
                "rhat_max": nan, "divergences": nan, **table_utilities(df, syn, spec),
                "seconds": time.perf_counter() - start, "coverage": cov, "width_ratio": width,
                "coverage_sets": float(used), "eps_implicates": nan}
    return run


_METHODS: dict[str, Callable] = {"auto": _ours(None), "censor_chain": _ours("censor_ref"), "mst": _peer("mst"),
                                 "aim": _peer("aim")}


def replicate(r: int, seed: np.random.SeedSequence, params_mapping: Mapping) -> xr.Dataset:
    """One run of every method on every table at every eps.

    Random streams are addressed by the cell ``stream(seed, table, eps, method)``, so one cell
    recomputed alone repeats the shipped one (ours in research mode; the peers' OpenDP noise is not seeded).

    Returns
    -------
    xarray.Dataset
        Over ``(table, eps, method)`` (method: display names, :data:`.params.METHOD_NAMES`): the
        utilities :data:`METRICS` (``seconds``: the method's wall time, fit and one synthetic table;
        ``coverage`` and ``width_ratio``: the analyst's intervals, ours combined over ``implicates``
        tables of a second fit at the same total, the peers' one table as if real; ``coverage_sets``: the
        tables whose regression could be fitted, those with a level missing set aside); ``eps_total``
        (what the statement publishes, one record removed: ours includes the released size's share;
        the peers' (eps, delta) for one record added or removed), ``eps_implicates`` (ours: the total
        of the ``m`` tables), ``delta`` (0 for strict DP), ``converged`` (every conditional passed its
        checks; True for the peers, which have none), ``n_unconverged``, ``rhat_max``,
        ``divergences``. Over ``table``: ``n`` and ``data_fingerprint``.

    Raises
    ------
    dpsynth_book.peers.PeerUnavailable
        If MST or AIM is asked for and the peers' environment ``.venv-peers`` is missing
        (``make peers`` builds it).
    """
    p = WholeTableParams.from_mapping(params_mapping)
    if any(m in ("mst", "aim") for m in p.methods):
        from ...peers import _require_environment

        _require_environment(None)  # fail before any fit, with the message that says `make peers`
    rows, per_table = [], []
    for name in p.tables:
        spec = TABLES[name]
        df = chapter_table(name, p)
        numeric = [df[c].cat.codes.to_numpy(dtype=float) if spec.kinds[c] == "categorical"
                   else df[c].to_numpy(dtype=float) for c in df.columns]
        per_table.append({"table": name, "n": len(df), "data_fingerprint": data_fingerprint(*numeric)})
        for eps in [float(e) for e in p.eps]:
            for key in p.methods:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    out = _METHODS[key](df, spec, eps, p, stream(seed, name, eps, key))
                rows.append({"table": name, "eps": eps, "method": METHOD_NAMES[key], **out})
    ds = pd.DataFrame(rows).set_index(["table", "eps", "method"]).to_xarray()
    ds = ds.reindex({"table": list(p.tables), "method": [METHOD_NAMES[k] for k in p.methods]})
    ds["converged"] = ds["converged"].astype(bool)
    info = pd.DataFrame(per_table).set_index("table").to_xarray()
    ds["n"] = info["n"].astype(np.int64)
    ds["data_fingerprint"] = info["data_fingerprint"].astype(np.int64)
    ds.attrs.update({
        "eps_neighbours": "eps, eps_total and eps_implicates: one record removed (the peers: added or removed)",
        "synthetic_data": "one synthetic table per method, table, eps and run; ours also m tables of a second fit "
                          "whose total is the same eps (releases=m), for the intervals",
        "peers": "SmartNoise smartnoise-synth MST and AIM at (eps, delta), numeric columns binned on the same public "
                 "bounds; they release exactly n rows; rows drawn with mbi's synthetic_data as fixed upstream "
                 "(mbi commit a987d84; peers/run_peer.py, mbi_sampling_fix)",
    })
    return ds
