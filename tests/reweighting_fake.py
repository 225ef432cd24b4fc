"""Small synthetic results of the re-weighting chapter's studies (no MCMC), for summary and figure tests."""

from __future__ import annotations

import numpy as np
import xarray as xr

from dpsynth.experiments.reweighting import Params, ReweightingResults
from dpsynth.experiments.reweighting.replicate import SYNTHESIZERS


def fake_results(*, n: int = 60, sets: int = 8, replicates: int = 5, seed: int = 0) -> ReweightingResults:
    """Results shaped like :func:`dpsynth.experiments.reweighting.run`'s, with made-up values.

    The values satisfy the chapter's claims: re-weighting lowers Delta a little, weights lie in
    [0, 1], LW's Delta is below Unweighted's, CW's mean weight below LW's, SW's posterior wider.
    """
    rng = np.random.default_rng(seed)
    params = Params.preset("smoke", n=n, synthetic_sets=sets, replicates=replicates, contraction_sizes=(n // 2,))
    names = list(SYNTHESIZERS)
    dms = list(params.data_models)
    sources = ["Data", *names]
    parts = []
    for _dm in dms:
        x = rng.poisson(100, n).astype(float)
        delta = np.array([8.0, 3.0, 2.95, 3.0, 2.97, 2.9])
        weight = np.clip(
            np.stack(
                [
                    np.ones(n),
                    rng.uniform(0.6, 1, n),
                    rng.uniform(0.2, 1, n),
                    np.full(n, 0.4),
                    rng.uniform(0.7, 1, n),
                    rng.uniform(0.5, 1, n),
                ]
            ),
            0,
            1,
        )
        delta_i = delta[:, None] * rng.uniform(0.1, 1, (len(names), n))
        delta_i[:, 0] = delta
        truth = {
            "mean": x.mean(),
            "median": np.median(x),
            "q15": np.quantile(x, 0.15),
            "q90": np.quantile(x, 0.9),
            "max_ecdf": 0.05,
        }
        # sources: Data, Unweighted, LW, CW, SW, LW_final, CW_final; LW, CW, SW shorten the tails, CW_final less
        shift = {"q15": np.array([0, 0, 3, 5, 3, 2, 1.0]), "q90": np.array([0, 0, -3, -5, -3, -2, -1.0])}
        stats = {
            s: truth[s] + shift.get(s, np.zeros(len(sources)))[:, None] + rng.normal(0, 0.3, (len(sources), sets))
            for s in truth
        }
        mixed = {
            f"{s}_mixed": (
                ("synthesizer", "syn_set"),
                stats[s][1:] * 0 + stats[s][1:].mean(1, keepdims=True) + rng.normal(0, 0.1, (len(names), sets)),
            )
            for s in ("mean", "median", "q15", "q90")
        }
        mu = 100 + rng.normal(0, 1, (len(names), 40)) * np.array([1, 1, 1.2, 2.0, 1, 1])[:, None]
        ds = xr.Dataset(
            {
                "delta": ("synthesizer", delta),
                "eps": ("synthesizer", 2 * delta),
                "eps_replace": ("synthesizer", 2 * delta),
                "guarantee": ("synthesizer", np.array(["none"] + ["aDP"] * 5)),
                "converged": ("synthesizer", np.ones(6, bool)),
                "divergences": ("synthesizer", np.zeros(6, int)),
                "k": ("synthesizer", [np.nan] * 4 + [0.95, 0.9]),
                "delta_before": ("synthesizer", [np.nan] * 4 + [3.0, 2.95]),
                "delta_after": ("synthesizer", [np.nan] * 4 + [2.97, 2.9]),
                "n_fits": ("synthesizer", [1, 1, 3, 4, 2, 2]),
                "search_converged": ("synthesizer", np.ones(6, bool)),
                "min_weight": ("synthesizer", weight.min(1)),
                "max_weight": ("synthesizer", weight.max(1)),
                "mean_weight": ("synthesizer", weight.mean(1)),
                "sw_alpha": ("synthesizer", [np.nan] * 3 + [0.4, np.nan, np.nan]),
                "rhat_max": ("synthesizer", np.full(6, 1.003)),
                "ess_min": ("synthesizer", np.full(6, 500.0)),
                "delta_refit": ("synthesizer", [np.nan] * 4 + [3.01, 2.93]),
                "refit_converged": ("synthesizer", np.ones(6, bool)),
                "refit_divergences": ("synthesizer", np.zeros(6, int)),
                "mixed_n_draws": ("synthesizer", np.full(6, 50.0)),
                "delta_i": (("synthesizer", "record"), delta_i),
                "weight": (("synthesizer", "record"), weight),
                "synthetic": (("synthesizer", "record"), rng.poisson(100, (len(names), n)).astype(float)),
                "x": ("record", x),
                "mu_draw": (("synthesizer", "draw"), mu),
                **{s: (("source", "syn_set"), v) for s, v in stats.items()},
                **mixed,
                "cw_radius": ((), 0.2),
                "cw_fits": ((), 3),
                "cw_radius_matched": ((), True),
            },
            coords={
                "synthesizer": names,
                "source": sources,
                "record": np.arange(n),
                "draw": np.arange(40),
                "syn_set": np.arange(sets),
            },
        )
        parts.append(ds)
    main = xr.concat(parts, dim=xr.Variable("data_model", dms))
    main["convergence_warnings"] = 0
    ns = list(params.sizes)
    shape = (replicates, len(dms), len(ns), 2)
    base = np.array([8.0, 3.0])
    delta = base * (1 + rng.uniform(-0.1, 0.1, shape)) * (1 + 0.0 * np.arange(len(ns)))[None, None, :, None]
    # the relative spread shrinks with n
    delta = base + (delta - base) / np.arange(1, len(ns) + 1)[None, None, :, None]
    contr = xr.Dataset(
        {
            "delta": (("replicate", "data_model", "n", "synthesizer"), delta),
            "converged": (("replicate", "data_model", "n", "synthesizer"), np.ones(shape, bool)),
            "divergences": (("replicate", "data_model", "n", "synthesizer"), np.zeros(shape, int)),
            "rhat_max": (("replicate", "data_model", "n", "synthesizer"), np.full(shape, 1.002)),
            "ess_min": (("replicate", "data_model", "n", "synthesizer"), np.full(shape, 400.0)),
            **{
                s: (
                    ("replicate", "data_model", "n", "source"),
                    100 + rng.normal(0, 2, (replicates, len(dms), len(ns), 3)),
                )
                for s in ("mean", "median", "q15", "q90")
            },
            "convergence_warnings": ("replicate", np.zeros(replicates, int)),
        },
        coords={
            "replicate": np.arange(replicates),
            "data_model": dms,
            "n": ns,
            "synthesizer": ["Unweighted", "LW"],
            "source": ["Data", "Unweighted", "LW"],
        },
    )
    return ReweightingResults(params=params, synthesizers=main, contraction=contr)
