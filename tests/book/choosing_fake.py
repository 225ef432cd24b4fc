"""Small shipped results of the other chapters, with the shipped files' structure (for the choosing tests)."""

from __future__ import annotations

import json

import numpy as np
import xarray as xr

from dpsynth import registry

NAN = float("nan")


def fake_censoring(reps=4):
    """The censoring file: dim ``fit`` with coords synthesizer and eps; "Data" first; ``ds_`` variables."""
    syn = ["Data", "Unweighted", "Weighted", "Censor_uw", "Censor_w", "PH", "PH-paper",
           "Censor_uw", "Censor_w", "PH", "PH-paper"]
    tgt = [NAN, NAN, NAN, 5, 5, 5, 5, 3, 3, 3, 3]
    r = np.arange(reps)[:, None]
    eps_remove = np.tile(np.array([NAN, 18.0, 5.5, 5, 5, 5, 2.5, 3, 3, 3, 1.5]), (reps, 1))
    eps_remove[:, 1] += r[:, 0]                         # Unweighted varies over replicates
    eps_remove[:, 2] = NAN                              # Weighted: no finite eps -> dropped
    ecdf = np.array([0.0, 0.03, 0.06, 0.10, 0.06, 0.08, 0.077, 0.2, 0.13, 0.076, 0.075]) + 0.01 * r
    return xr.Dataset(
        {"max_ecdf": (("replicate", "fit"), ecdf), "eps_remove": (("replicate", "fit"), eps_remove),
         "eps_replace": (("replicate", "fit"), 2 * eps_remove),
         "ds_max_ecdf": (("replicate", "ds_synthesizer", "scaling"), np.zeros((reps, 2, 2))),
         "ds_eps_remove": (("replicate", "ds_synthesizer", "scaling"), np.ones((reps, 2, 2)))},
        coords={"replicate": np.arange(reps), "synthesizer": ("fit", syn), "eps": ("fit", np.array(tgt, float)),
                "ds_synthesizer": ["Censor_w", "Weighted-e"], "scaling": ["downscale", "none"]},
        attrs={"params": json.dumps({"n": 2000, "eps_grid": [5.0, 3.0]}), "replicates": reps},
    )


def fake_range_restriction(reps=3):
    syn = ["Unweighted", "LW", "A[0.4,1.8]", "B[0.4,1.8]"]
    n_obs = [200, 400]
    base = np.array([18.0, 6.0, 2.4, 11.0])
    eps = np.stack([np.stack([base * (1 + j) + i for j in range(2)]) for i in range(reps)])
    ecdf = np.stack([np.stack([np.array([0.05, 0.08, 0.04, 0.12]) * (2 - j) + 0.01 * i for j in range(2)])
                     for i in range(reps)])
    return xr.Dataset(
        {"eps": (("replicate", "n_obs", "synthesizer"), eps), "max_ecdf": (("replicate", "n_obs", "synthesizer"), ecdf),
         "q90_data": (("replicate", "n_obs"), np.ones((reps, 2)))},
        coords={"replicate": np.arange(reps), "n_obs": n_obs, "synthesizer": syn,
                "guarantee": ("synthesizer", [registry.guarantee(s) for s in syn])},
        attrs={"n_main": 400, "params": json.dumps({"n": 400})},
    )


def fake_reweighting(sets=8):
    """The re-weighting file: "Data" first on ``synthesizer``, ``is_fit``, utility per synthetic set."""
    syn = ["Data", "Unweighted", "LW", "CW"]
    dms = ["poisson", "nb_mixture"]
    eps = np.array([[[NAN, 27.5, 9.1, 9.0], [NAN, 26.1, 10.7, 9.7]]])
    ecdf = np.zeros((1, 2, 4, sets))
    for a in range(2):
        for b in range(4):
            ecdf[0, a, b] = 0.01 * (1 + a + b) + 0.001 * np.arange(sets)
    return xr.Dataset(
        {"is_fit": (("replicate", "data_model", "synthesizer"), np.broadcast_to([False, True, True, True], (1, 2, 4))),
         "eps": (("replicate", "data_model", "synthesizer"), eps),
         "eps_replace": (("replicate", "data_model", "synthesizer"), eps),
         "max_ecdf": (("replicate", "data_model", "synthesizer", "syn_set"), ecdf)},
        coords={"replicate": [0], "data_model": dms, "synthesizer": syn, "syn_set": np.arange(sets)},
        attrs={"params": json.dumps({"n": 1000, "synthetic_sets": sets})},
    )


def fake_sdr_censoring(reps=2):
    """SDR Part 1: "Data" row (confidential salaries, no eps); one synthetic set per fit and replicate."""
    syn = ["Data", "Unweighted", "Censor_w", "Censor_uw", "PH", "PH-paper"]
    eps = np.tile([NAN, 17.2, 5.0, 5.0, 5.0, 2.5], (reps, 1))
    ecdf = np.tile([NAN, 0.094, 0.082, 0.086, 0.057, 0.052], (reps, 1)) + 0.002 * np.arange(reps)[:, None]
    return xr.Dataset(
        {"eps": (("replicate", "synthesizer"), eps), "max_ecdf": (("replicate", "synthesizer"), ecdf)},
        coords={"replicate": np.arange(reps), "synthesizer": syn},
        attrs={"source": "stand-in", "n": 1000, "params": json.dumps({"eps": 5.0, "n1": 1000, "sdr_path": ""})},
    )


def fake_sdr_reweighting(sets=6):
    syn = ["Data", "Unweighted", "LW", "SW"]
    ecdf = np.array([[0.02, 0.04, 0.05, 0.06]])[..., None] + 0.001 * np.arange(sets)
    return xr.Dataset(
        {"is_fit": (("replicate", "synthesizer"), [[False, True, True, True]]),
         "eps": (("replicate", "synthesizer"), [[NAN, 65.7, 26.6, 27.8]]),
         "max_ecdf": (("replicate", "synthesizer", "syn_set"), ecdf)},
        coords={"replicate": [0], "synthesizer": syn, "syn_set": np.arange(sets)},
        attrs={"params": json.dumps({"eps": 5.0, "n2": 1000, "sdr_path": ""})},
    )


def fake_studies():
    """Every study of :data:`dpsynth_book.experiments.choosing.TRADEOFF_STUDIES`, by name."""
    return {"censoring": fake_censoring(), "range_restriction": fake_range_restriction(),
            "reweighting-synthesizers": fake_reweighting(), "sdr_censoring": fake_sdr_censoring(),
            "sdr_reweighting": fake_sdr_reweighting()}
