"""reweighting.disagreements.contraction_ruled_out on constructed data sets (outcomes) and shipped results."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

from dpsynth_book.experiments.reweighting.disagreements import contraction_ruled_out


def contraction(sd_small, sd_large, reps=100, seed=0, level=3.5):
    """LW's Delta over data sets at n = 250, 1000, 4000 (Poisson only), normal with the given sds."""
    rng = np.random.default_rng(seed)
    sds = (sd_small, (sd_small + sd_large) / 2, sd_large)
    d = np.stack([level + s * rng.standard_normal(reps) for s in sds], axis=1)[:, None, :, None]
    dims = ("replicate", "data_model", "n", "synthesizer")
    return xr.Dataset({"delta": (dims, d), "converged": (dims, np.ones_like(d, dtype=bool))},
                      coords={"replicate": range(reps), "data_model": ["poisson"], "n": [250, 1000, 4000],
                              "synthesizer": ["LW"]}, attrs={"params": "{\"contraction_draws\": 1000}"})


def test_a_spread_that_clearly_grows_rules_the_explanations_out():
    v = contraction_ruled_out(contraction(0.1, 0.4))
    r = v.numbers["per_model"]["poisson"]
    assert v.holds is False and not r["within_sampling_error"]
    # the median sits at the paper's bound, but half the data sets exceed it: not a match of the bound
    assert r["bound"]["median_matched"] and not r["level_matched"] and r["bound"]["share_above"] > 0.3


def test_the_bound_matches_only_when_nearly_no_data_set_exceeds_it():
    from dpsynth_book.experiments.reweighting.disagreements import contraction_note

    class Res:  # what contraction_note reads
        def __init__(self, c):
            self.contraction = c
            self.params = type("P", (), {"n": 1000})()

    under = contraction(0.01, 0.04, level=3.3)  # every data set a little under the paper's 3.5
    v = contraction_ruled_out(under)
    assert v.numbers["per_model"]["poisson"]["level_matched"]
    assert "Ruled out: a different weight rule or data model, for Poisson" in contraction_note(Res(under))
    over = contraction(0.1, 0.4)
    note = contraction_note(Res(over))
    assert "Ruled out: a different weight rule" not in note
    assert "Not ruled out: a different rule for Δ, weights or data, for Poisson" in note


def test_a_spread_within_sampling_error_is_undecided():
    v = contraction_ruled_out(contraction(0.20, 0.21, reps=30))
    assert v.holds is None and v.numbers["per_model"]["poisson"]["within_sampling_error"]


def test_a_relative_reading_that_shrinks_supports_the_explanation():
    # the absolute spread grows, but the level grows faster: IQR/median shrinks
    c = contraction(0.1, 0.4)
    c["delta"].loc[dict(n=4000)] = c["delta"].sel(n=4000) * 10
    c["delta"].loc[dict(n=4000)] = 35 + (c["delta"].sel(n=4000) - 35) * 0.1 / 0.4 * 0.5
    v = contraction_ruled_out(c)
    r = v.numbers["per_model"]["poisson"]
    assert r["relative_iqr"][1] < r["relative_iqr"][0] and v.holds is True


def test_on_the_shipped_results(monkeypatch):
    from dpsynth_book import result_files
    from dpsynth_book.experiments.reweighting import Params, run
    from dpsynth_book.experiments.reweighting.disagreements import contraction_note

    if not result_files.shipped_path("reweighting-contraction").exists():
        pytest.skip("reweighting-contraction.nc is not shipped here")
    monkeypatch.setenv("DPSYNTH_RESULTS", "use")
    res = run(Params.preset("paper"), progress=False)
    v = contraction_ruled_out(res.contraction, paper_n=res.params.n)
    assert set(v.numbers["per_model"]) == {"poisson", "nb_mixture"}
    assert contraction_note(res).startswith((":::{admonition} Open:", ":::{admonition} Explained:"))


def test_the_spread_of_no_converged_fit_is_nan_not_an_error():
    from dpsynth_book.experiments.reweighting.disagreements import _iqr

    assert np.isnan(_iqr(np.array([])))
    assert _iqr(np.array([1.0, 2.0, 3.0, 4.0, 5.0])) == 2.0
