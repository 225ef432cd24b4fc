"""A small synthetic study Dataset of the range-restriction chapter (no MCMC), for the table, verdict and
figure tests."""

from __future__ import annotations

import numpy as np
import xarray as xr

from dpsynth_book.experiments.range_restriction.replicate import synthesizer_names

RANGES = ((0.4, 1.8), (0.6, 1.2))
NAMES = synthesizer_names(RANGES)
NS = [40, 80, 160]


def fake_study(*, replicates: int = 4, b_exceeds: bool = True, seed: int = 0) -> xr.Dataset:
    """A study Dataset shaped like the replicate's output, with chosen orderings of Delta."""
    rng = np.random.default_rng(seed)
    R, N, M = replicates, len(NS), len(NAMES)
    base = {"Unweighted": 9.0, "LW": 3.5, "A[0.4,1.8]": 1.3, "A[0.6,1.2]": 0.6,
            "B[0.4,1.8]": 5.0 if b_exceeds else 3.0, "B[0.6,1.2]": 8.0 if b_exceeds else 2.5,
            "B'[0.4,1.8]": 1.5, "B'[0.6,1.2]": 1.2}
    shrink = np.array([1.0, 0.5, 0.25])[None, :, None]  # the spread contracts with n
    # the same standardised noise at every n, scaled down: every spread falls at every step of n
    noise = 0.2 * rng.standard_normal((R, 1, M)) * shrink
    delta = np.array([base[m] for m in NAMES])[None, None, :] + noise
    dims = ("replicate", "n_obs", "synthesizer")
    coords = {"replicate": np.arange(R), "n_obs": NS, "synthesizer": NAMES, "range": ["[0.4,1.8]", "[0.6,1.2]"],
              "record": np.arange(NS[0])}
    nan = np.full((R, N, M), np.nan)
    lam = nan.copy()
    lam[..., NAMES.index("A[0.4,1.8]")] = 0.6
    lam[..., NAMES.index("A[0.6,1.2]")] = 0.8
    w_at_max = np.ones((R, N, M))
    nlp = nan.copy()
    for t in ("[0.4,1.8]", "[0.6,1.2]"):
        j = NAMES.index(f"B{t}")
        w_at_max[..., j] = 0.0
        nlp[..., j] = delta[..., j]          # weight 0: the bound is that record's -log P
    ecdf = np.full((R, N, M), 0.01)
    for t in ("[0.4,1.8]", "[0.6,1.2]"):
        ecdf[..., NAMES.index(f"A{t}")] = 0.005
    record = np.full((R, M, NS[0]), np.nan)
    record[0] = delta[0, 0][:, None] * np.linspace(0.1, 1.0, NS[0])[None, :]
    ds = xr.Dataset({
        "delta": (dims, delta), "eps": (dims, 2 * delta), "eps_replace": (dims, 4 * delta),
        "converged": (dims, np.ones((R, N, M), bool)), "divergences": (dims, np.zeros((R, N, M), np.int64)),
        "rhat_max": (dims, np.full((R, N, M), 1.002)), "ess_min": (dims, np.full((R, N, M), 400.0)),
        "q90": (dims, 9 + rng.standard_normal((R, N, M))), "q90_mixed": (dims, np.full((R, N, M), 9.0)),
        "avg_ecdf": (dims, ecdf), "avg_ecdf_mixed": (dims, ecdf * 0.8), "max_ecdf": (dims, ecdf * 10),
        "n_draws_mixed": (dims, np.full((R, N, M), 30)), "mean_lambda": (dims, lam),
        "weight_at_max": (dims, w_at_max), "x_rank_at_max": (dims, np.ones((R, N, M))),
        "neg_log_prob_at_max": (dims, nlp), "max_neg_log_prob": (dims, np.where(np.isnan(nlp), np.nan, nlp + 1)),
        "delta_trunc_unweighted": (("replicate", "n_obs", "range"), np.full((R, N, 2), 4.0)),
        "q90_data": (("replicate", "n_obs"), np.full((R, N), 9.5)),
        "record_delta": (("replicate", "synthesizer", "record"), record),
        "convergence_warnings": (("replicate",), np.zeros(R, np.int64)),
    }, coords=coords)
    ds = ds.assign_coords(guarantee=("synthesizer", ["none"] + ["aDP"] * 7))
    ds.attrs.update(n_main=NS[0], true_q90=9.8)
    return ds
