"""Verdicts of the re-weighting chapter and the numbers its prose and captions quote (synthetic results;
one smoke run end to end)."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from reweighting_fake import fake_results

from dpsynth import book
from dpsynth.experiments import reweighting as rw

# the module (the package attribute ``reweighting.verdicts`` is the function it re-exports)
V = importlib.import_module("dpsynth.experiments.reweighting.verdicts")

KEYS = [
    "reweighting_never_raises_delta",
    "weights_in_unit_interval",
    "one_signed_window",
    "lw_lowers_delta",
    "cw_lower_mean_weight",
    "sw_wider_posterior",
    "skewed_tails_shortened",
    "reweighting_lifts_weights",
    "reweighting_cw_reduces_tail_bias",
    "one_draw_wider_than_mixed",
    "intervals_overlap_paper",
    "local_bound_contracts",
    "fits_converged",
]


@pytest.fixture
def res():
    return fake_results()


def _by_key(res):
    return {v.key: v for v in rw.verdicts(res)}


def test_verdict_keys_and_types(res):
    vs = rw.verdicts(res)
    assert [v.key for v in vs] == KEYS
    for v in vs:
        assert v.holds in (True, False, None) and v.claim and v.evidence


def test_verdicts_hold_on_results_that_support_them(res):
    v = _by_key(res)
    for k in (
        "reweighting_never_raises_delta",
        "weights_in_unit_interval",
        "one_signed_window",
        "lw_lowers_delta",
        "cw_lower_mean_weight",
        "sw_wider_posterior",
        "skewed_tails_shortened",
        "reweighting_lifts_weights",
        "reweighting_cw_reduces_tail_bias",
        "one_draw_wider_than_mixed",
        "local_bound_contracts",
        "fits_converged",
    ):
        assert v[k].holds is True, k
    assert v["sw_wider_posterior"].numbers["sd_ratio"]["poisson"] == pytest.approx(2.0, rel=0.5)


def test_reweighting_verdict_fails_when_delta_rises(res):
    m = res.synthesizers
    m["delta_after"].loc[dict(data_model="nb_mixture", synthesizer="CW_final")] = 3.5
    m["delta"].loc[dict(data_model="nb_mixture", synthesizer="CW_final")] = 3.5
    assert _by_key(res)["reweighting_never_raises_delta"].holds is False


def test_weight_and_delta_verdicts_fail(res):
    m = res.synthesizers
    m["weight"].loc[dict(data_model="poisson", synthesizer="LW")] = 1.2
    m["delta"].loc[dict(data_model="poisson", synthesizer="LW")] = 9.0
    m["eps"].loc[dict(data_model="poisson", synthesizer="LW")] = 18.0
    m["mean_weight"].loc[dict(data_model="poisson", synthesizer="CW")] = 0.99
    v = _by_key(res)
    assert v["weights_in_unit_interval"].holds is False
    assert v["lw_lowers_delta"].holds is False
    assert v["one_signed_window"].holds is False  # eps no longer equals delta
    assert v["cw_lower_mean_weight"].holds is False


def test_convergence_and_contraction_verdicts(res):
    res.synthesizers["converged"].loc[dict(data_model="poisson", synthesizer="SW")] = False
    v = _by_key(res)
    assert v["fits_converged"].holds is False and v["fits_converged"].numbers["not_converged"] == 1
    few = fake_results(replicates=2)
    assert _by_key(few)["local_bound_contracts"].holds is None  # too few databases to decide


def test_bias_and_width_summary(res):
    m = res.synthesizers.sel(data_model="nb_mixture")
    want = float(m["q15"].sel(synthesizer="CW").mean()) - float(np.quantile(m.x.values, 0.15))
    assert V.bias(res, "nb_mixture", "CW", "q15") == pytest.approx(want)
    ws = V.width_summary(res)
    assert ws["median_ratio"] > 1 and ws["n_intervals"] == 16
    assert ws["eps_lw_mixed"] == pytest.approx(ws["eps_lw"] * 50)
    # statistics of the data sit on the "Data" row of the same dimension
    assert V.bias(res, "poisson", "Data", "mean") == pytest.approx(
        float(res.synthesizers["mean"].sel(data_model="poisson", synthesizer="Data").mean())
        - float(res.synthesizers.x.sel(data_model="poisson").mean())
    )


def test_data_row_does_not_change_verdicts(res):
    """NaN/False on the "Data" row (not a fit) is not counted as a failed fit or an out-of-range weight."""
    v = _by_key(res)
    assert v["fits_converged"].numbers == {"not_converged": 0, "fits": 12 + 40, "sections": (0, 12),
                                           "appendix": (0, 40)}
    assert v["weights_in_unit_interval"].holds is True and v["one_signed_window"].holds is True


def test_settings_numbers_are_values_not_names(res):
    n = V.settings_numbers(res)
    assert (n["scale"], n["n"], n["synthetic_sets"], n["replicates"]) == ("smoke", 60, 8, 5)
    assert n["sizes"] == "30, 60" and n["cw_search"] == "on" and n["k_start"] == pytest.approx(0.95)
    assert all(not isinstance(v, (list, tuple, dict)) for v in n.values())


def test_caption_numbers(res):
    n = V.caption_numbers(res)
    m = res.synthesizers.sel(data_model="nb_mixture")
    assert n["bounds"]["nb_mixture"]["delta_lw"] == pytest.approx(float(m.delta.sel(synthesizer="LW")))
    assert n["bounds"]["poisson"]["n"] == 60 and set(n["bounds"]) == {"poisson", "nb_mixture"}
    assert n["mixture_bias"]["CW"]["q15"] == pytest.approx(V.bias(res, "nb_mixture", "CW", "q15"))
    assert list(n["mixture_bias"]) == ["Unweighted", "LW", "CW", "SW"]
    assert 0 <= n["below_half"]["LW"] <= 1 and 0 <= n["lost_weight"]["CW"] <= 1
    assert n["k"] == pytest.approx({"LW_final": 0.95, "CW_final": 0.9})
    assert n["mean_weight"]["CW_final"] > n["mean_weight"]["CW"]
    assert n["databases"] == 5 and list(n["lw_median"]["poisson"]) == [30, 60]
    assert n["lw_range"]["poisson"]["min"] <= n["lw_range"]["poisson"]["max"]
    assert (n["not_converged"], n["convergence_warnings"]) == (0, 0)
    res.synthesizers["converged"].loc[dict(data_model="poisson", synthesizer="SW")] = False
    assert V.caption_numbers(res)["not_converged"] == 1


def test_text_numbers_glue_under_fixed_keys(res):
    keys = book.glue_values("reweighting", V.text_numbers(res))
    for key in ("reweighting-settings-n", "reweighting-settings-sizes", "reweighting-settings-cw-search",
                "reweighting-captions-bounds-nb-mixture-delta-lw", "reweighting-captions-lw-median-poisson-60"):
        assert key in keys, key


@pytest.mark.slow
def test_smoke_run_end_to_end(tmp_path):
    params = rw.Params.smoke()
    res = rw.run(params, cache_dir=tmp_path, progress=False)
    assert res.synthesizers.sizes["data_model"] == 2
    assert res.contraction.sizes["replicate"] == params.replicates
    v = {x.key: x for x in rw.verdicts(res)}
    assert [x.key for x in rw.verdicts(res)] == KEYS
    for k in ("reweighting_never_raises_delta", "weights_in_unit_interval", "one_signed_window", "lw_lowers_delta"):
        assert v[k].holds is True, (k, v[k].evidence)
    assert v["local_bound_contracts"].holds is None  # two databases per size cannot decide
    assert sorted(p.name.split("-")[1] for p in tmp_path.glob("reweighting-*.nc")) == ["contraction", "synthesizers"]
