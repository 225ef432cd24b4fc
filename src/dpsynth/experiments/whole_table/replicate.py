"""The replicate of the "Releasing a whole table" chapter: four ways to release three confidential columns.

:func:`replicate` (study ``whole_table``) runs, on each real table (:data:`TABLES`) and at each eps
(one record removed), every method once and releases ONE synthetic table from each:

* **Chain rule (ours)**: :class:`dpsynth.TableSynthesizer` with its defaults (each column's model
  from its type, the ``censor_ref`` mechanism, strict DP): the confidential columns in a public
  order, each conditional on the public covariates and the columns before it; eps split equally
  and composed;
* **Independent**: each confidential column its own synthesizer on the public covariates only
  (a one-column :class:`~dpsynth.TableSynthesizer` with the same defaults) at eps / 3, the three
  composed as ours are; the relations between confidential columns are then carried only through
  the covariates;
* **MST** and **AIM**: SmartNoise's synthesizers (:func:`dpsynth.peers.run_peer`) at (eps, delta)
  on the whole table (covariates included: they have no notion of public columns), every
  numeric column cut into bins on PUBLIC bounds (:data:`TABLES`), categorical levels as snsynth
  reads them. They run in the peers' environment ``.venv-peers``; without it the replicate raises
  :class:`dpsynth.peers.PeerUnavailable` (the book renders from the shipped results).

Utilities of each synthetic table against the confidential one (:mod:`dpsynth.table_metrics`):
the confidential columns' marginal distances (max ECDF for numbers, TVD for the categorical one),
the absolute differences of the pairwise associations over every pair with at least one
confidential column, a downstream regression's coefficients (RMS error and mean CI overlap), the
pMSE and its ratio to its null expectation, and the wall time. The privacy figures stored beside
them name their neighbour relation; a failed convergence check is recorded, never dropped.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
import xarray as xr

from ... import metrics, table_metrics
from ...public_data import house_prices, nmes1988_table
from ...seeds import stream
from ...studies import data_fingerprint
from ...validation import DataError
from .params import METHOD_NAMES, WholeTableParams

__all__ = ["TableSpec", "TABLES", "METRICS", "chapter_table", "table_utilities", "replicate"]


@dataclass(frozen=True)
class TableSpec:
    """A real table of the chapter: its columns, their kinds, the peers' public bins and the analyst's regression.

    Attributes
    ----------
    title : str
        For captions.
    targets : tuple of str
        The confidential columns, in the public order ours synthesizes them.
    covariates : tuple of str
        Public columns.
    kinds : dict
        Column -> ``"continuous"``, ``"count"`` or ``"categorical"``.
    peer_bounds : dict
        Numeric column -> ``(lower, upper, bins)``: the peers' public bounds and equal-width bins
        (counts: bins of whole numbers, so the midpoints are the counts themselves).
    outcome : str
        The regression's outcome (numeric; on its analysis scale, :func:`dpsynth.table_metrics.analysis_values`).
    predictors : tuple of str
        Its predictors.
    """

    title: str
    targets: tuple
    covariates: tuple
    kinds: dict
    peer_bounds: dict
    outcome: str
    predictors: tuple


#: The chapter's tables. Bounds are round public numbers chosen without looking at the data (a
#: house sold for at most $200,000 in 1987 Windsor, a lot of at most 17,000 square feet, at most
#: 6 bedrooms and 4 stories; at most 49 office visits a year, 8 chronic conditions, ages 65 to 110).
TABLES: dict[str, TableSpec] = {
    "house_prices": TableSpec(
        "House prices, Windsor 1987 (546 sales)", ("price", "bedrooms", "aircon"), ("lotsize", "stories"),
        {"price": "continuous", "bedrooms": "count", "aircon": "categorical", "lotsize": "continuous",
         "stories": "count"},
        {"price": (0.0, 200000.0, 20), "bedrooms": (0.5, 6.5, 6), "lotsize": (1000.0, 17000.0, 16),
         "stories": (0.5, 4.5, 4)},
        "price", ("bedrooms", "aircon", "lotsize", "stories")),
    "nmes1988": TableSpec(
        "NMES 1987-88 (fixed public subsample)", ("visits", "chronic", "health"), ("age", "gender"),
        {"visits": "count", "chronic": "count", "health": "categorical", "age": "continuous",
         "gender": "categorical"},
        {"visits": (-0.5, 49.5, 50), "chronic": (-0.5, 8.5, 9), "age": (6.5, 11.0, 9)},
        "visits", ("chronic", "health", "age", "gender")),
}

#: The utility and cost variables of the study (see :func:`replicate`).
METRICS = ("marginal", "marginal_numeric", "marginal_categorical", "pairwise", "contingency", "coef_rmse",
           "coef_overlap", "pmse", "pmse_ratio", "regression_degenerate", "seconds")


def chapter_table(name: str, p: WholeTableParams) -> pd.DataFrame:
    """The table ``name`` as the study uses it (columns: targets then covariates).

    NMES 1988 is the fixed public subsample of ``p.nmes_n`` rows; with ``p.n > 0`` each table is cut
    to the first ``n`` rows of a fixed permutation (smoke tests only).
    """
    spec = TABLES[name]
    df = house_prices() if name == "house_prices" else nmes1988_table(p.nmes_n)
    df = df[[*spec.targets, *spec.covariates]]
    if p.n and p.n < len(df):
        idx = np.sort(np.random.default_rng(20261125).permutation(len(df))[: p.n])
        df = df.iloc[idx].reset_index(drop=True)
    return df


def table_utilities(original: pd.DataFrame, synthetic: pd.DataFrame, spec: TableSpec) -> dict:
    """The utilities of one synthetic table (every key of :data:`METRICS` but ``seconds``)."""
    kinds = {c: spec.kinds[c] for c in (*spec.targets, *spec.covariates)}
    target_kinds = {c: kinds[c] for c in spec.targets}
    marg = table_metrics.marginal_table(original, synthetic, target_kinds)
    cat = marg["kind"] == "categorical"
    pw = table_metrics.pairwise_table(original, synthetic, kinds)
    pw = pw[pw["a"].isin(spec.targets) | pw["b"].isin(spec.targets)]
    try:
        reg = table_metrics.regression_table(original, synthetic, spec.outcome, list(spec.predictors), kinds)
        degenerate = 0.0
    except DataError:  # the synthetic design is rank deficient (e.g. a level that never occurs)
        reg, degenerate = _min_norm_regression(original, synthetic, spec, kinds), 1.0
    reg = reg.drop(index="intercept")
    pm = metrics.pmse(table_metrics.table_features(original, kinds),
                      table_metrics.table_features(synthetic, kinds, like=original))
    return {
        "marginal": float(marg["distance"].mean()),
        "marginal_numeric": float(marg.loc[~cat, "distance"].mean()) if (~cat).any() else np.nan,
        "marginal_categorical": float(marg.loc[cat, "distance"].mean()) if cat.any() else np.nan,
        "pairwise": float(np.nanmean(np.abs(pw["difference"].to_numpy(dtype=float)))),
        "contingency": float(pw["contingency_tvd"].mean()),
        "coef_rmse": float(np.sqrt(np.mean((reg["synthetic"] - reg["original"]) ** 2))),
        "coef_overlap": _nanmean(reg["overlap"].to_numpy(dtype=float)),
        "pmse": float(pm.pmse),
        "pmse_ratio": float(pm.ratio),
        "regression_degenerate": degenerate,
    }


def _nanmean(v: np.ndarray) -> float:
    return float(np.nanmean(v)) if np.isfinite(v).any() else float("nan")


def _min_norm_regression(original: pd.DataFrame, synthetic: pd.DataFrame, spec: TableSpec, kinds: dict) -> pd.DataFrame:
    """The analyst's regression when the synthetic design is rank deficient: the minimum-norm least-squares
    coefficients (0 for a level that never occurs), no intervals (overlap NaN)."""
    from ...table_metrics import _design, _levels, analysis_values  # noqa: PLC2701 - the same design as regression_table

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


def _ours(df: pd.DataFrame, spec: TableSpec, eps: float, p: WholeTableParams, seed) -> tuple[pd.DataFrame, dict]:
    from ...table_synthesizer import TableSynthesizer

    t = TableSynthesizer(df, list(spec.targets), covariates=list(spec.covariates), eps=eps, sampler=p.sampler,
                         progress=False, allow_unconverged=True)
    t.fit(seed=stream(seed, "fit"))
    syn = t.sample_unaccounted(seed=stream(seed, "synthetic"))  # research: one draw of each conditional
    pr = t.privacy
    return syn, {"eps_remove": pr.eps_remove, "eps_replace": pr.eps_replace, "delta": 0.0,
                 "converged": bool(pr.converged), "n_unconverged": float(sum(not q.converged for q in pr.parts)),
                 "rhat_max": float(max(q.rhat_max for q in pr.parts)),
                 "divergences": float(sum(q.divergences for q in pr.parts))}


def _independent(df: pd.DataFrame, spec: TableSpec, eps: float, p: WholeTableParams,
                 seed) -> tuple[pd.DataFrame, dict]:
    from ...table_synthesizer import TableSynthesizer

    out = df[list(spec.covariates)].copy()
    parts = []
    for col in spec.targets:
        t = TableSynthesizer(df[[col, *spec.covariates]], [col], covariates=list(spec.covariates),
                             eps=eps / len(spec.targets), sampler=p.sampler, progress=False, allow_unconverged=True)
        t.fit(seed=stream(seed, "fit", col))
        out[col] = t.sample_unaccounted(seed=stream(seed, "synthetic", col))[col].to_numpy()
        parts.extend(t.privacy.parts)
    pr_remove = float(sum(q.eps_remove for q in parts))
    pr_replace = float(sum(q.eps_replace for q in parts))
    return out[list(df.columns)], {
        "eps_remove": pr_remove, "eps_replace": pr_replace, "delta": 0.0,
        "converged": all(q.converged for q in parts), "n_unconverged": float(sum(not q.converged for q in parts)),
        "rhat_max": float(max(q.rhat_max for q in parts)), "divergences": float(sum(q.divergences for q in parts))}


def _peer(name: str) -> Callable:
    def run(df: pd.DataFrame, spec: TableSpec, eps: float, p: WholeTableParams, seed) -> tuple[pd.DataFrame, dict]:
        from ...peers import run_peer

        categorical = [c for c in df.columns if spec.kinds[c] == "categorical"]
        syn, info = run_peer(name, df, epsilon=eps, delta=p.delta, categorical=categorical,
                             continuous_bounds={c: spec.peer_bounds[c] for c in df.columns if c not in categorical},
                             seed=_seed_int(stream(seed, "peer")))
        spent = float(info.get("epsilon_spent", {}).get("total", eps))
        nan = float("nan")
        # (eps, delta)-DP with one record added or removed; nothing is claimed for one record replaced
        return syn, {"eps_remove": spent, "eps_replace": nan, "delta": float(p.delta), "converged": True,
                     "n_unconverged": 0.0, "rhat_max": nan, "divergences": nan}
    return run


_METHODS: dict[str, Callable] = {"table": _ours, "independent": _independent, "mst": _peer("mst"),
                                 "aim": _peer("aim")}


def replicate(r: int, seed: np.random.SeedSequence, params_mapping: Mapping) -> xr.Dataset:
    """One run of every method on every table at every eps.

    Random streams are addressed by the cell ``stream(seed, table, eps, method)``, so one cell
    recomputed alone repeats the shipped one.

    Returns
    -------
    xarray.Dataset
        Over ``(table, eps, method)`` (method: display names, :data:`.params.METHOD_NAMES`): the
        utilities :data:`METRICS` (``seconds``: the method's wall time, fit and one synthetic
        table); ``eps_remove`` (the total eps of the release with one record removed: ours
        includes the columns' DP references), ``eps_replace`` (one record replaced; NaN for the
        peers, whose guarantee is stated for one record added or removed), ``delta`` (0 for
        strict DP), ``converged`` (every conditional passed its convergence checks; True for the
        peers, which have none), ``n_unconverged``, ``rhat_max``, ``divergences``. Over ``table``:
        ``n`` and ``data_fingerprint``.

    Raises
    ------
    dpsynth.peers.PeerUnavailable
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
        numeric = [df[c].to_numpy(dtype=float) if spec.kinds[c] != "categorical"
                   else df[c].cat.codes.to_numpy(dtype=float) if isinstance(df[c].dtype, pd.CategoricalDtype)
                   else pd.factorize(df[c], sort=True)[0].astype(float) for c in df.columns]
        per_table.append({"table": name, "n": len(df), "data_fingerprint": data_fingerprint(*numeric)})
        for eps in [float(e) for e in p.eps]:
            for key in p.methods:
                cell = stream(seed, name, eps, key)
                start = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    syn, privacy = _METHODS[key](df, spec, eps, p, cell)
                seconds = time.perf_counter() - start
                rows.append({"table": name, "eps": eps, "method": METHOD_NAMES[key], **privacy,
                             **table_utilities(df, syn, spec), "seconds": seconds})
    ds = pd.DataFrame(rows).set_index(["table", "eps", "method"]).to_xarray()
    ds = ds.reindex({"table": list(p.tables), "method": [METHOD_NAMES[k] for k in p.methods]})
    ds["converged"] = ds["converged"].astype(bool)
    info = pd.DataFrame(per_table).set_index("table").to_xarray()
    ds["n"] = info["n"].astype(np.int64)
    ds["data_fingerprint"] = info["data_fingerprint"].astype(np.int64)
    ds.attrs.update({
        "eps_neighbours": ("eps (the grid) and eps_remove: one record removed (the peers: added or removed); "
                           "eps_replace: one record replaced (ours only)"),
        "synthetic_data": "one synthetic table per method, table, eps and run (ours: one posterior draw per "
                          "conditional)",
        "peers": "SmartNoise smartnoise-synth MST and AIM at (eps, delta), numeric columns binned on public bounds",
    })
    return ds
