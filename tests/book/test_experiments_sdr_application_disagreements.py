"""sdr_application.disagreements.censor_w_utility on constructed replicates (both outcomes) and shipped results."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

from dpsynth_book.experiments.sdr_application.disagreements import censor_w_utility, censor_w_utility_note

SYN = ["Data", "Unweighted", "LW", "Censor_w", "Censor_uw"]


def part1(avg, reps=10, seed=0, noise=1e-5):
    rng = np.random.default_rng(seed)
    a = np.array([[np.nan if s == "Data" else avg[s] + noise * rng.standard_normal() for s in SYN]
                  for _ in range(reps)])
    med = np.tile([80000.0, 86000.0, 86000.0, 85500.0, 83000.0], (reps, 1))
    cens = np.tile([np.nan, 0, 0, 0, 210], (reps, 1)).astype(float)
    dims = ("replicate", "synthesizer")
    return xr.Dataset({"avg_ecdf": (dims, a), "median": (dims, med), "n_censored": (dims, cens)},
                      coords={"replicate": range(reps), "synthesizer": SYN}, attrs={"source": "stand-in"})


def test_a_loss_shared_by_the_unweighted_fit_is_explained():
    v = censor_w_utility(part1({"Unweighted": 15e-4, "LW": 15e-4, "Censor_w": 15e-4, "Censor_uw": 6e-4}))
    assert v.holds is True and v.numbers["not_censoring"] and v.numbers["not_weights"] and v.numbers["model_fit"]
    assert v.numbers["median_error"]["Unweighted"] == pytest.approx(0.075)
    assert "stand-in" in v.evidence


def test_a_loss_through_the_weights_is_open():
    v = censor_w_utility(part1({"Unweighted": 6e-4, "LW": 15e-4, "Censor_w": 15e-4, "Censor_uw": 6e-4}))
    assert v.holds is False and not v.numbers["not_weights"] and v.numbers["not_censoring"]


def test_on_the_shipped_results(monkeypatch):
    from dpsynth_book import result_files
    from dpsynth_book.experiments.sdr_application import Params, run

    if not result_files.shipped_path("sdr_censoring").exists():
        pytest.skip("sdr_censoring.nc is not shipped here")
    monkeypatch.setenv("DPSYNTH_RESULTS", "use")
    res = run(Params.preset("paper"), progress=False)
    v = censor_w_utility(res.part1)
    assert v.numbers["censor_w_minus_lw"]["replicates"] == res.part1.sizes["replicate"]
    assert censor_w_utility_note(res).startswith((":::{admonition} Open:", ":::{admonition} Explained:"))
