"""Small synthetic results of the re-weighting chapter's studies (no MCMC), for summary and figure tests."""

from __future__ import annotations

import numpy as np
import xarray as xr

from dpsynth_book.experiments.reweighting import Params, ReweightingResults
from dpsynth_book.experiments.reweighting.replicate import CONTRACTION_COORD, SYNTHESIZER_COORD, SYNTHESIZERS


def _with_data(values, fill=np.nan) -> np.ndarray:
    """Per-fit values over SYNTHESIZERS -> over SYNTHESIZER_COORD, with ``fill`` on the "Data" row (not a fit)."""
    v = np.asarray(values)
    out = np.full((len(SYNTHESIZER_COORD), *v.shape[1:]), fill, dtype=np.result_type(v, np.asarray(fill)))
    for i, nm in enumerate(SYNTHESIZERS):
        out[SYNTHESIZER_COORD.index(nm)] = v[i]
    return out


def fake_results(*, n: int = 60, sets: int = 8, replicates: int = 5, seed: int = 0) -> ReweightingResults:
    """Results shaped like :func:`dpsynth_book.experiments.reweighting.run`'s, with made-up values.

    The values satisfy the chapter's claims: re-weighting lowers Delta a little, weights lie in
    [0, 1], LW's Delta is below Unweighted's, CW's mean weight below LW's, SW's posterior wider.
    As in the real results, ``synthesizer`` holds "Data" (not a fit: ``is_fit`` false, per-fit values
    NaN, False, 0 or "") and the synthesizers.
    """
    rng = np.random.default_rng(seed)
    params = Params.preset("smoke", n=n, synthetic_sets=sets, replicates=replicates, contraction_sizes=(n // 2,))
    names = list(SYNTHESIZERS)
    dms = list(params.data_models)
    rows = list(SYNTHESIZER_COORD)
    is_fit = np.array([nm != "Data" for nm in rows])
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
        # rows: Data, Unweighted, LW, CW, SW, LW_final, CW_final; LW, CW, SW shorten the tails, CW_final less
        shift = {"q15": np.array([0, 0, 3, 5, 3, 2, 1.0]), "q90": np.array([0, 0, -3, -5, -3, -2, -1.0])}
        stats = {
            s: truth[s] + shift.get(s, np.zeros(len(rows)))[:, None] + rng.normal(0, 0.3, (len(rows), sets))
            for s in truth
        }
        mixed = {
            f"{s}_mixed": (
                ("synthesizer", "syn_set"),
                _with_data(
                    stats[s][1:] * 0 + stats[s][1:].mean(1, keepdims=True) + rng.normal(0, 0.1, (len(names), sets))
                ),
            )
            for s in ("mean", "median", "q15", "q90")
        }
        mu = 100 + rng.normal(0, 1, (len(names), 40)) * np.array([1, 1, 1.2, 2.0, 1, 1])[:, None]
        ds = xr.Dataset(
            {
                "is_fit": ("synthesizer", is_fit),
                "delta": ("synthesizer", _with_data(delta)),
                "eps": ("synthesizer", _with_data(delta)),
                "eps_replace": ("synthesizer", _with_data(2 * delta)),
                "guarantee": ("synthesizer", _with_data(np.array(["none"] + ["aDP"] * 5), "")),
                "converged": ("synthesizer", _with_data(np.ones(6, bool), False)),
                "divergences": ("synthesizer", _with_data(np.zeros(6, int), 0)),
                "k": ("synthesizer", _with_data([np.nan] * 4 + [0.95, 0.9])),
                "delta_before": ("synthesizer", _with_data([np.nan] * 4 + [3.0, 2.95])),
                "delta_after": ("synthesizer", _with_data([np.nan] * 4 + [2.97, 2.9])),
                "n_fits": ("synthesizer", _with_data([1, 1, 3, 4, 2, 2], 0)),
                "search_converged": ("synthesizer", _with_data(np.ones(6, bool), False)),
                "min_weight": ("synthesizer", _with_data(weight.min(1))),
                "max_weight": ("synthesizer", _with_data(weight.max(1))),
                "mean_weight": ("synthesizer", _with_data(weight.mean(1))),
                "sw_alpha": ("synthesizer", _with_data([np.nan] * 3 + [0.4, np.nan, np.nan])),
                "rhat_max": ("synthesizer", _with_data(np.full(6, 1.003))),
                "ess_min": ("synthesizer", _with_data(np.full(6, 500.0))),
                "delta_refit": ("synthesizer", _with_data([np.nan] * 4 + [3.01, 2.93])),
                "refit_converged": ("synthesizer", _with_data(np.ones(6, bool), False)),
                "refit_divergences": ("synthesizer", _with_data(np.zeros(6, int), 0)),
                "mixed_n_draws": ("synthesizer", _with_data(np.full(6, 50.0))),
                "delta_i": (("synthesizer", "record"), _with_data(delta_i)),
                "weight": (("synthesizer", "record"), _with_data(weight)),
                "synthetic": (
                    ("synthesizer", "record"),
                    _with_data(rng.poisson(100, (len(names), n)).astype(float)),
                ),
                "x": ("record", x),
                "mu_draw": (("synthesizer", "draw"), _with_data(mu)),
                **{s: (("synthesizer", "syn_set"), v) for s, v in stats.items()},
                **mixed,
                "cw_radius": ((), 0.2),
                "cw_fits": ((), 3),
                "cw_radius_matched": ((), True),
            },
            coords={
                "synthesizer": rows,
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
    crows = list(CONTRACTION_COORD)
    cdims = ("replicate", "data_model", "n", "synthesizer")

    def fits(values, fill=np.nan):
        """Values over (..., Unweighted, LW) -> over CONTRACTION_COORD, ``fill`` on the "Data" row."""
        v = np.asarray(values)
        out = np.full((*v.shape[:-1], len(crows)), fill, dtype=np.result_type(v, np.asarray(fill)))
        out[..., crows.index("Unweighted")] = v[..., 0]
        out[..., crows.index("LW")] = v[..., 1]
        return out

    base = np.array([8.0, 3.0])
    delta = base * (1 + rng.uniform(-0.1, 0.1, shape)) * (1 + 0.0 * np.arange(len(ns)))[None, None, :, None]
    # the relative spread shrinks with n
    delta = base + (delta - base) / np.arange(1, len(ns) + 1)[None, None, :, None]
    contr = xr.Dataset(
        {
            "is_fit": ("synthesizer", np.array([nm != "Data" for nm in crows])),
            "delta": (cdims, fits(delta)),
            "converged": (cdims, fits(np.ones(shape, bool), False)),
            "divergences": (cdims, fits(np.zeros(shape, int), 0)),
            "rhat_max": (cdims, fits(np.full(shape, 1.002))),
            "ess_min": (cdims, fits(np.full(shape, 400.0))),
            **{
                s: (cdims, 100 + rng.normal(0, 2, (replicates, len(dms), len(ns), 3)))
                for s in ("mean", "median", "q15", "q90")
            },
            "convergence_warnings": ("replicate", np.zeros(replicates, int)),
        },
        coords={
            "replicate": np.arange(replicates),
            "data_model": dms,
            "n": ns,
            "synthesizer": crows,
        },
    )
    return ReweightingResults(params=params, synthesizers=main, contraction=contr)
