"""own_data.disagreements.censor_uw_hump on constructed runs (both outcomes) and on the shipped results."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpsynth_book.experiments.own_data.disagreements import censor_uw_hump, censor_uw_hump_note

DATA = {"q10": 180.0, "q50": 520.0, "q90": 1070.0}


def frame(ecdf, q50, q10=225.0, q90=990.0, runs=5, noise=0.001, seed=1):
    """Runs of Censor_uw at eps 0.5, 1, 2, 5 with given mean max-ECDF and median per eps, plus Data rows."""
    rng = np.random.default_rng(seed)
    rows = [{"replicate": r, "synthesizer": "Data", "eps": np.nan, "max_ecdf": 0.0, "n_censored": np.nan, **DATA}
            for r in range(runs)]
    for e, m, med, cens in zip((0.5, 1.0, 2.0, 5.0), ecdf, q50, (900, 700, 360, 50)):
        for r in range(runs):
            rows.append({"replicate": r, "synthesizer": "Censor_uw", "eps": e,
                         "max_ecdf": m + noise * rng.standard_normal(), "n_censored": cens,
                         "q10": q10, "q50": med + 2 * rng.standard_normal(), "q90": q90})
    return pd.DataFrame(rows)


def test_location_shift_is_explained():
    v = censor_uw_hump(frame((0.065, 0.072, 0.087, 0.05), (513, 506, 490, 495)), n=1000)
    assert v.holds is True
    n = v.numbers
    assert (n["eps_low"], n["eps_peak"]) == (0.5, 2.0) and n["noise_ruled_out"] and n["located"]
    assert not n["flattened_to_prior"] and n["censored_share"][0.5] == pytest.approx(0.9)


def test_a_rise_within_monte_carlo_error_is_open():
    v = censor_uw_hump(frame((0.065, 0.0652, 0.0655, 0.05), (513, 513, 513, 513), noise=0.01), n=1000)
    assert v.holds is False and not v.numbers["noise_ruled_out"]
    assert censor_uw_hump_note(frame((0.065, 0.0652, 0.0655, 0.05), (513,) * 4, noise=0.01)).startswith(
        ":::{admonition} Open:")


def test_a_flattened_posterior_is_not_the_location_explanation():
    # synthetic spread wider than the data's at the smallest eps: the prior-flattening reading is not ruled out
    v = censor_uw_hump(frame((0.065, 0.072, 0.087, 0.05), (513, 506, 490, 495), q10=100.0, q90=2000.0), n=1000)
    assert v.holds is False and v.numbers["flattened_to_prior"]


def test_on_the_shipped_results(monkeypatch):
    from dpsynth_book import result_files
    from dpsynth_book.experiments.own_data import Params, run

    if not result_files.shipped_path("own_data").exists():
        pytest.skip("own_data.nc is not shipped here")
    monkeypatch.setenv("DPSYNTH_RESULTS", "use")
    res = run(Params.preset("paper"), progress=False)
    v = censor_uw_hump(res)
    assert v.numbers["runs"] == res.study.sizes["replicate"] and v.holds in (True, False)
    assert censor_uw_hump_note(res).startswith((":::{admonition} Open:", ":::{admonition} Explained:"))
