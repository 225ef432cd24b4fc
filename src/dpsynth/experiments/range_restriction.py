"""Replicate of the range-restriction study (the slides on privacy amplification by range restriction).

One replicate draws, for every sample size ``n`` in ``params["ns"]``, a lognormal sample and fits
on it

* ``Unweighted`` (all weights 1; not private, guarantee "none");
* ``LW``, the Lipschitz-weighted fit, which is range restriction with the range ``(-inf, inf)``;
* for every public range ``(a, b)``: ``A[a,b]`` (knowledge weights, "averaged"),
  ``B[a,b]`` (range-truncated sensitivity, literal reading ``|alpha f - log P|``) and
  ``B'[a,b]`` (whole-term reading ``|alpha (f - log P)|``; same fit as ``B[a,b]``).

Every mechanism but Unweighted is aDP: its weights (and, for (A), its knowledge probabilities)
are computed from the confidential data, and its bound is local. The names are the registry's
display names (:mod:`dpsynth.registry`), in the registry's order.

It records per (n, mechanism): Delta, eps with one record removed (``2 Delta``) and with one
record replaced (``4 Delta``: the lognormal log density takes both signs), the convergence
diagnostics of the fit (R-hat, bulk ESS, divergences), the utility of one synthetic data set
generated from one posterior draw (90th percentile, max-/avg-ECDF), and for the range variants
the mean knowledge probability (A) or the decomposition of the truncated bound (B). For
comparison only, it also records the utility of a record-wise mixed data set (each record from
its own draw, as the papers' code did; that release costs the composed eps of its draws).
Per-record Lipschitz bounds are kept only at ``n = params["n"]`` and only for the first
``params["record_replicates"]`` replicates.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
import xarray as xr

from .. import datasets, mechanisms, metrics, models, range_readings, registry, synthesis
from ..fitting import SamplerConfig, compiled_model
from ..seeds import stream

__all__ = ["DEFAULT_PARAMS", "family", "mechanism_names", "replicate"]

#: Small defaults (the notebook's quick scale is built from these).
DEFAULT_PARAMS: dict = {
    "meanlog": 1.0,
    "sdlog": 1.0,
    "n": 400,
    "ns": [200, 400, 1600, 6400],
    "ranges": [[0.4, 1.8], [0.6, 1.2]],
    "draws": 500,
    "tune": 500,
    "chains": 2,
    "mu_prior_sd": 10.0,
    "sigma_prior_scale": 5.0,
    "lw_c": 1.0,
    "lw_g": 0.0,
    "record_replicates": 1,
}


def family(params: Mapping) -> models.LognormalFamily:
    """The lognormal synthesizer with the study's prior hyperparameters."""
    return models.LognormalFamily(
        mu_prior_mean=0.0,
        mu_prior_sd=float(params.get("mu_prior_sd", 10.0)),
        sigma_prior_scale=float(params.get("sigma_prior_scale", 5.0)),
    )


def _range_tag(a: float, b: float) -> str:
    return f"[{a:g},{b:g}]"


def mechanism_names(ranges) -> list[str]:
    """Registry display names in the registry's order: Unweighted, LW, then every A, B, B' range."""
    names = ["Unweighted", "LW"]
    for a, b in ranges:
        t = _range_tag(a, b)
        names += [f"A{t}", f"B{t}", f"B'{t}"]
    return registry.order(names)


def _check(params: Mapping) -> dict:
    p = {**DEFAULT_PARAMS, **dict(params)}
    ns = [int(v) for v in p["ns"]]
    if int(p["n"]) not in ns:
        raise ValueError(f"params['n']={p['n']} must be one of params['ns']={ns}.")
    for a, b in p["ranges"]:
        if not (0 <= a < b):
            raise ValueError(f"each range must satisfy 0 <= a < b; got {(a, b)}.")
    return p


def replicate(replicate: int, seed: np.random.SeedSequence, params: Mapping) -> xr.Dataset:
    """One replicate of the range-restriction study.

    Parameters
    ----------
    replicate : int
        Replicate index (per-record vectors are kept when it is below ``record_replicates``).
    seed : numpy.random.SeedSequence
        The replicate's stream.
    params : mapping
        See :data:`DEFAULT_PARAMS`.

    Returns
    -------
    xarray.Dataset
        Variables on ``(n_obs, mechanism)``: ``delta``, ``eps`` (one record removed, ``2 Delta``),
        ``eps_replace`` (one record replaced, ``4 Delta``), ``converged``, ``rhat_max``,
        ``ess_min``, ``divergences`` (of the mechanism's fit; B' repeats B's), ``q90``,
        ``max_ecdf``, ``avg_ecdf`` (one synthetic data set from one draw), ``q90_mixed``,
        ``avg_ecdf_mixed``, ``n_draws_mixed`` (the same from record-wise mixing, for comparison),
        ``mean_lambda``, ``n_zero_weight``, ``weight_at_max``, ``x_rank_at_max``,
        ``neg_log_prob_at_max``, ``max_neg_log_prob``; ``q90_data`` on
        ``n_obs``; ``delta_trunc_unweighted`` on ``(n_obs, range)``; ``record_delta`` on
        ``(mechanism, record)`` (NaN when not kept). The coordinate ``guarantee`` on
        ``mechanism`` is the registry's guarantee type ("none" or "aDP").
    """
    p = _check(params)
    fam = family(p)
    cfg = SamplerConfig(draws=int(p["draws"]), tune=int(p["tune"]), chains=int(p["chains"]))
    ranges = [(float(a), float(b)) for a, b in p["ranges"]]
    names = mechanism_names(ranges)
    n_main = int(p["n"])
    keep_records = replicate < int(p.get("record_replicates", 1))

    rows, range_rows, data_rows = [], [], []
    record_delta = np.full((len(names), n_main), np.nan)

    for n in [int(v) for v in p["ns"]]:
        x = datasets.lognormal_data(n, stream(seed, n, "data"), meanlog=float(p["meanlog"]), sdlog=float(p["sdlog"]))
        cm = compiled_model(fam, x)
        data_rows.append({"n_obs": n, "q90_data": float(np.quantile(x, 0.9))})
        ranks = np.argsort(np.argsort(x)) / max(n - 1, 1)

        results = {}
        results["Unweighted"] = mechanisms.unweighted(cm, x, sampler=cfg, seed=stream(seed, n, "Unweighted"))
        base = results["Unweighted"].fit
        results["LW"] = mechanisms.lipschitz_weighted(
            cm, base, c=float(p["lw_c"]), g=float(p["lw_g"]), sampler=cfg, seed=stream(seed, n, "LW"))
        info: dict[str, dict] = {}
        for a, b in ranges:
            t = _range_tag(a, b)
            # log P of the base fit is computed once and shared by (A) and (B)
            base_lp = mechanisms.range_log_prob(base, a, b)
            resA = mechanisms.range_averaged(cm, base, results["LW"].weights, a, b, sampler=cfg,
                                             seed=stream(seed, n, f"A{t}"), name=f"A{t}", base_log_prob=base_lp)
            resB = mechanisms.range_truncated(cm, base, a, b, c=float(p["lw_c"]), g=float(p["lw_g"]), sampler=cfg,
                                              seed=stream(seed, n, f"B{t}"), name=f"B{t}", base_log_prob=base_lp)
            del base_lp
            resB2 = range_readings.whole_term_truncated(resB, name=f"B'{t}")
            results[f"A{t}"], results[f"B{t}"], results[f"B'{t}"] = resA, resB, resB2
            info[f"A{t}"] = {"mean_lambda": float(resA.privacy.extra["mean_lambda"])}
            dec = resB2.extra["decomposition"]
            info[f"B{t}"] = {"max_neg_log_prob": dec["max_neg_log_prob"], "neg_log_prob_at_max": -dec["log_prob"]}
            # with weight 1 both readings of (B) coincide: max_s |f - log P| of the base fit
            range_rows.append({"n_obs": n, "range": t, "delta_trunc_unweighted": resB.extra["delta_trunc_unweighted"]})

        for name in names:
            res = results[name]
            d_i = res.bounds.delta_i
            imax = int(np.argmax(d_i))
            pw = res.weights
            if name.startswith("A["):
                # privacy weights of (A) are (1 - lambda) alpha; the likelihood uses alpha*
                pw = res.extra["privacy_weights"]
            # one synthetic data set from one posterior draw (the one-draw eps covers it);
            # B' shares B's fit, so it shares B's synthetic data set too
            syn = synthesis.synthesize(res.fit, stream(seed, n, name.replace("B'", "B"), "synthetic"))
            dist = metrics.ecdf_distances(x, syn)
            # for comparison only: record-wise mixing (each record from its own draw), which the
            # papers' code used; it releases up to n draws and costs their composed eps
            mixed = synthesis.release(res, stream(seed, n, name.replace("B'", "B"), "synthetic-mixed"),
                                      mix_draws=True)
            dist_mixed = metrics.ecdf_distances(x, mixed.values)
            row = {
                "n_obs": n,
                "mechanism": name,
                "delta": float(res.privacy.delta),
                "eps": float(res.privacy.eps),
                "eps_replace": float(res.privacy.eps_replace),
                "converged": bool(res.fit.diagnostics.ok),
                "rhat_max": float(res.fit.diagnostics.rhat_max),
                "ess_min": float(res.fit.diagnostics.ess_min),
                "divergences": int(res.fit.diagnostics.divergences),
                "q90": float(np.quantile(syn, 0.9)),
                "max_ecdf": dist.max_ecdf,
                "avg_ecdf": dist.avg_ecdf,
                "q90_mixed": float(np.quantile(mixed.values, 0.9)),
                "avg_ecdf_mixed": dist_mixed.avg_ecdf,
                "n_draws_mixed": int(mixed.n_draws_used),
                "n_zero_weight": int((np.asarray(pw) == 0).sum()),
                "weight_at_max": float(np.asarray(pw)[imax]),
                "x_rank_at_max": float(ranks[imax]),
                "mean_lambda": np.nan,
                "max_neg_log_prob": np.nan,
                "neg_log_prob_at_max": np.nan,
            }
            row.update(info.get(name, {}))
            rows.append(row)
            if keep_records and n == n_main:
                record_delta[names.index(name)] = d_i

    ds = xr.merge([
        _frame(rows, ["n_obs", "mechanism"], names),
        pd.DataFrame(range_rows).set_index(["n_obs", "range"]).to_xarray(),
        pd.DataFrame(data_rows).set_index("n_obs").to_xarray(),
    ])
    ds["record_delta"] = xr.DataArray(
        record_delta, dims=("mechanism", "record"),
        coords={"mechanism": names, "record": np.arange(n_main)},
    )
    ds["converged"] = ds["converged"].astype(bool)
    ds["divergences"] = ds["divergences"].astype(np.int64)
    ds = ds.assign_coords(guarantee=("mechanism", [registry.guarantee(m) for m in names]))
    ds.attrs["eps_neighbours"] = "eps: one record removed (2 Delta); eps_replace: one record replaced (4 Delta)"
    ds.attrs["synthetic_data"] = "one synthetic data set per fit, generated from one posterior draw"
    return ds


def _frame(rows, index, names) -> xr.Dataset:
    ds = pd.DataFrame(rows).set_index(index).to_xarray()
    return ds.reindex(mechanism=names)
