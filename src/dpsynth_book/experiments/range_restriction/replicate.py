"""The replicate of the range-restriction study (the range-restriction slides [Hu et al.]).

One replicate draws, for every sample size ``n`` in ``ns``, a lognormal sample and fits on it

* ``Unweighted`` (all weights 1; not private, guarantee "none");
* ``LW``, the Lipschitz-weighted fit, which is range restriction with the range ``(-inf, inf)``;
* for every public range ``(a, b)``: ``A[a,b]`` (knowledge weights, "averaged"),
  ``B[a,b]`` (range-truncated sensitivity, literal reading ``|alpha f - log P|``) and
  ``B'[a,b]`` (whole-term reading ``|alpha (f - log P)|``; same fit as ``B[a,b]``).

Every mechanism but Unweighted is aDP: its weights (and, for (A), its knowledge probabilities)
are computed from the confidential data, and its bound is local. The names are the registry's
display names (:mod:`dpsynth.registry`), in the book's order.

It records per (n, synthesizer): Delta, eps with one record removed (``2 Delta``) and with one
record replaced (``4 Delta``: the lognormal log density takes both signs), the convergence
diagnostics of the fit (R-hat, bulk ESS, divergences), the utility of one synthetic data set
generated from one posterior draw (90th percentile, max-/avg-ECDF), and for the range variants
the mean knowledge probability (A) or the decomposition of the truncated bound (B). For
comparison only, it also records the utility of a record-wise mixed data set (each record from
its own draw, as the papers' code did; that release costs the composed eps of its draws).
Per-record Lipschitz bounds are kept only at ``n = params.n`` and only for the first
``params.record_replicates`` replicates.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
import xarray as xr

from dpsynth import metrics, models, registry, synthetic_data
from dpsynth.fitting import compiled_model
from dpsynth.mechanisms import RunContext
from dpsynth.mechanisms import run as run_mechanism
from dpsynth.seeds import stream

from ... import datasets, presentation
from ...studies import data_fingerprint
from .params import RangeRestrictionParams

__all__ = ["family", "range_tag", "synthesizer_names", "replicate"]


def family(params: RangeRestrictionParams) -> models.LognormalFamily:
    """The lognormal synthesizer with the study's prior hyperparameters."""
    return models.LognormalFamily(mu_prior_mean=0.0, mu_prior_sd=float(params.mu_prior_sd),
                                  sigma_prior_scale=float(params.sigma_prior_scale))


def range_tag(a: float, b: float) -> str:
    """``"[a,b]"`` as in the registry names, e.g. ``"[0.4,1.8]"``."""
    return f"[{float(a):g},{float(b):g}]"


def synthesizer_names(ranges) -> list[str]:
    """Registry display names in the book's order: Unweighted, LW, then every A, B, B' range."""
    names = ["Unweighted", "LW"]
    for a, b in ranges:
        t = range_tag(a, b)
        names += [f"A{t}", f"B{t}", f"B'{t}"]
    return presentation.order(names)


def replicate(r: int, seed: np.random.SeedSequence, params_mapping: Mapping) -> xr.Dataset:
    """One replicate of the range-restriction study.

    Parameters
    ----------
    r : int
        Replicate index (per-record vectors are kept when it is below ``record_replicates``).
    seed : numpy.random.SeedSequence
        The replicate's stream.
    params_mapping : mapping
        :meth:`RangeRestrictionParams.study_dict` output.

    Returns
    -------
    xarray.Dataset
        Variables on ``(n_obs, synthesizer)``: ``delta``, ``eps`` (one record removed, ``2 Delta``),
        ``eps_replace`` (one record replaced, ``4 Delta``), ``converged``, ``rhat_max``,
        ``ess_min``, ``divergences`` (of the synthesizer's fit; B' repeats B's), ``q90``,
        ``max_ecdf``, ``avg_ecdf`` (one synthetic data set from one draw), ``q90_mixed``,
        ``avg_ecdf_mixed``, ``n_draws_mixed`` (the same from record-wise mixing, for comparison),
        ``mean_lambda``, ``n_zero_weight``, ``weight_at_max``, ``x_rank_at_max``,
        ``neg_log_prob_at_max``, ``max_neg_log_prob``; ``q90_data`` on ``n_obs``;
        ``delta_trunc_unweighted`` on ``(n_obs, range)``; ``record_delta`` on
        ``(synthesizer, record)`` (NaN when not kept). The coordinate ``guarantee`` on
        ``synthesizer`` is the registry's guarantee type ("none" or "aDP"); the attributes
        ``n_main`` (``params.n``) and ``true_q90`` (the population 90th percentile).
    """
    p = RangeRestrictionParams.from_mapping(params_mapping)
    fam = family(p)
    cfg = p.sampler
    ranges = p.range_pairs
    names = synthesizer_names(ranges)
    n_main = int(p.n)
    keep_records = r < int(p.record_replicates)

    rows, range_rows, data_rows = [], [], []
    record_delta = np.full((len(names), n_main), np.nan)

    for n in [int(v) for v in p.ns]:
        x = datasets.lognormal_data(n, stream(seed, n, "data"), meanlog=float(p.meanlog), sdlog=float(p.sdlog))
        # every mechanism by its registry key on one context: the unweighted fit, log P of its draws
        # and (B)'s fit are computed once and shared by (A), (B) and (B')
        ctx = RunContext(x, family=fam, sampler=cfg, seed_fn=lambda *parts, n=n: stream(seed, n, *parts),
                         compiled=compiled_model(fam, x))
        data_rows.append({"n_obs": n, "q90_data": float(np.quantile(x, 0.9)), "data_fingerprint": data_fingerprint(x)})
        ranks = np.argsort(np.argsort(x)) / max(n - 1, 1)
        lw_rule = {"c": float(p.lw_c), "g": float(p.lw_g)}

        results = {"Unweighted": run_mechanism("unweighted", ctx), "LW": run_mechanism("lw", ctx, **lw_rule)}
        info: dict[str, dict] = {}
        for a, b in ranges:
            t = range_tag(a, b)
            res_a = run_mechanism("range_averaged", ctx, a=a, b=b, **lw_rule)
            res_b = run_mechanism("range_truncated", ctx, a=a, b=b, **lw_rule)
            # B' re-accounts B's fit: its (loglik, log P) matrices are re-used, not computed again
            res_b2 = run_mechanism("range_truncated_whole", ctx, a=a, b=b, **lw_rule)
            results[f"A{t}"], results[f"B{t}"], results[f"B'{t}"] = res_a, res_b, res_b2
            info[f"A{t}"] = {"mean_lambda": float(res_a.privacy.extra["mean_lambda"])}
            dec = res_b2.extra["decomposition"]
            info[f"B{t}"] = {"max_neg_log_prob": dec["max_neg_log_prob"], "neg_log_prob_at_max": -dec["log_prob"]}
            # with weight 1 both readings of (B) coincide: max_s |f - log P| of the base fit
            range_rows.append({"n_obs": n, "range": t, "delta_trunc_unweighted": res_b.extra["delta_trunc_unweighted"]})
            ctx.forget(("range_log_prob", float(a), float(b)))  # S x n: done with this range

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
            fit_name = name.replace("B'", "B")
            syn = synthetic_data.synthesize(res.fit, stream(seed, n, fit_name, "synthetic"))
            dist = metrics.ecdf_distances(x, syn)
            # for comparison only: record-wise mixing (each record from its own draw), which the
            # papers' code used; it releases up to n draws and costs their composed eps
            mixed = synthetic_data.release(res, stream(seed, n, fit_name, "synthetic-mixed"), mix_draws=True)
            dist_mixed = metrics.ecdf_distances(x, mixed.values)
            diag = res.fit.diagnostics
            row = {
                "n_obs": n, "synthesizer": name,
                "delta": float(res.privacy.delta), "eps": float(res.privacy.eps),
                "eps_replace": float(res.privacy.eps_replace),
                "converged": bool(diag.ok), "rhat_max": float(diag.rhat_max), "ess_min": float(diag.ess_min),
                "divergences": int(diag.divergences),
                "q90": float(np.quantile(syn, 0.9)), "max_ecdf": dist.max_ecdf, "avg_ecdf": dist.avg_ecdf,
                "q90_mixed": float(np.quantile(mixed.values, 0.9)), "avg_ecdf_mixed": dist_mixed.avg_ecdf,
                "n_draws_mixed": int(mixed.n_draws_used),
                "n_zero_weight": int((np.asarray(pw) == 0).sum()),
                "weight_at_max": float(np.asarray(pw)[imax]), "x_rank_at_max": float(ranks[imax]),
                "mean_lambda": np.nan, "max_neg_log_prob": np.nan, "neg_log_prob_at_max": np.nan,
            }
            row.update(info.get(name, {}))
            rows.append(row)
            if keep_records and n == n_main:
                record_delta[names.index(name)] = d_i

    ds = xr.merge([
        pd.DataFrame(rows).set_index(["n_obs", "synthesizer"]).to_xarray().reindex(synthesizer=names),
        pd.DataFrame(range_rows).set_index(["n_obs", "range"]).to_xarray(),
        pd.DataFrame(data_rows).set_index("n_obs").to_xarray(),
    ])
    ds["record_delta"] = xr.DataArray(record_delta, dims=("synthesizer", "record"),
                                      coords={"synthesizer": names, "record": np.arange(n_main)})
    ds["converged"] = ds["converged"].astype(bool)
    ds["divergences"] = ds["divergences"].astype(np.int64)
    ds = ds.assign_coords(guarantee=("synthesizer", [registry.guarantee(m) for m in names]))
    ds.attrs["n_main"] = n_main
    # the population 90th percentile of Lognormal(meanlog, sdlog), for the utility figure
    ds.attrs["true_q90"] = float(np.exp(p.meanlog + p.sdlog * 1.2815515655446004))
    ds.attrs["eps_neighbours"] = "eps: one record removed (2 Delta); eps_replace: one record replaced (4 Delta)"
    ds.attrs["synthetic_data"] = "one synthetic data set per fit, generated from one posterior draw"
    return ds
