"""The choosing page's decision from the head-to-head grid, and the package's copy of it (decisions.json)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from dpsynth import choice
from dpsynth_book import result_files
from dpsynth_book.experiments.choosing import recommend
from dpsynth_book.experiments.choosing.grid import SITUATIONS
from dpsynth_book.experiments.choosing.grid_params import CANDIDATE_KEYS, CANDIDATE_NAMES

SITS = list(SITUATIONS)
EPS = [1.0, 5.0]
CANDS = [CANDIDATE_NAMES[k] for k in CANDIDATE_KEYS]


def fake_grid(R: int = 3) -> xr.Dataset:
    """Every candidate usable with value = its position / 10 (Censor_ref best), then edits per test."""
    shape = (R, len(SITS), len(EPS), len(CANDS))
    value = np.broadcast_to(np.arange(1, len(CANDS) + 1) / 10.0, shape).copy()
    ds = xr.Dataset(
        {"value": (("replicate", "situation", "eps", "candidate"), value),
         "usable": (("replicate", "situation", "eps", "candidate"), np.ones(shape, bool)),
         "why": (("replicate", "situation", "eps", "candidate"), np.full(shape, "", dtype=object)),
         "eps_published": (("replicate", "situation", "eps", "candidate"), np.broadcast_to(
             np.array(EPS)[None, None, :, None], shape).copy()),
         "seconds": (("replicate", "situation", "eps", "candidate"), np.ones(shape))},
        coords={"replicate": range(R), "situation": SITS, "eps": EPS, "candidate": CANDS})
    return ds


def _cell(t, sit, eps):
    return t[(t["situation"] == sit) & (t["eps"] == eps)].iloc[0]


def test_the_pick_is_the_best_usable_decision_candidate_with_its_stability():
    ds = fake_grid()
    # Censor_uw is the best on the numbers, but it is not a decision candidate (its censoring moves with the unit)
    ds["value"].loc[{"candidate": "Censor_uw"}] = 0.01
    # PH best in two runs of three on the marginal at eps 5
    ds["value"].loc[{"situation": "bounded marginal", "eps": 5.0, "candidate": "PH", "replicate": [0, 1]}] = 0.05
    ds["value"].loc[{"situation": "bounded marginal", "eps": 5.0, "candidate": "PH", "replicate": 2}] = 0.15
    t = recommend.recommendation_table(ds)
    assert "Censor_uw" not in set(t["name"])
    c = _cell(t, "bounded marginal", 1.0)
    assert c["mechanism"] == "censor_ref" and c["stability"] == "3 of 3 runs" and c["runner_up"] == \
        "Censor_ref + calibration"
    r = _cell(t, "bounded marginal", 5.0)
    assert r["mechanism"] == "ph" and r["needs_bounds"] and r["stability"] == "2 of 3 runs"
    assert r["value"] == pytest.approx((0.05 + 0.05 + 0.15) / 3)


def test_a_candidate_unusable_in_one_run_is_not_picked_and_an_empty_cell_says_why():
    ds = fake_grid()
    ds["usable"].loc[{"situation": "count", "eps": 1.0, "candidate": "Censor_ref", "replicate": 1}] = False
    ds["why"].loc[{"situation": "count", "eps": 1.0, "candidate": "Censor_ref", "replicate": 1}] = "censored 80%"
    for cand in CANDS:
        ds["usable"].loc[{"situation": "small n, regression", "eps": 1.0, "candidate": cand}] = False
        ds["why"].loc[{"situation": "small n, regression", "eps": 1.0, "candidate": cand}] = \
            "failed its convergence checks"
    t = recommend.recommendation_table(ds)
    assert _cell(t, "count", 1.0)["name"] != "Censor_ref"
    empty = _cell(t, "small n, regression", 1.0)
    assert pd.isna(empty["mechanism"]) and empty["name"] == "none usable"
    assert recommend.decisions(t)["table"]["small n, regression"]["1.0"]["mechanism"] is None
    assert "failed its convergence checks" in empty["reason"]
    grid = recommend.recommendation_grid(t)
    assert grid.loc[1.0, "small n, regression"] == "none usable" and not grid.isna().any().any()


@pytest.mark.parametrize("situation", ["regression", "small n, regression"])
def test_a_release_of_the_column_alone_is_no_candidate_where_the_measure_is_the_regression(situation):
    """PH and OpenDP-Q drop the covariates: the "no relationship" baseline of a regression, never its pick."""
    ds = fake_grid()
    for cand in ("PH", "OpenDP-Q"):
        ds["value"].loc[{"situation": situation, "candidate": cand}] = 0.001
    t = recommend.recommendation_table(ds)
    picks = set(t[t["situation"] == situation]["name"])
    assert picks.isdisjoint({"PH", "OpenDP-Q"}) and picks == {"Censor_ref"}
    assert "PH" in set(t[t["situation"] == "bounded marginal"]["name"]) or True  # the marginal keeps them


def test_a_pick_within_the_runner_up_s_interval_is_a_tie_and_a_clear_one_is_not():
    ds = fake_grid(R=5)
    noisy = np.array([0.05, 0.30, 0.08, 0.25, 0.12])  # the runner-up's mean 0.16 > 0.1, but its runs straddle 0.1
    ds["value"].loc[{"situation": "count", "eps": 1.0, "candidate": "Noise-aware"}] = noisy
    t = recommend.recommendation_table(ds)
    tied, clear = _cell(t, "count", 1.0), _cell(t, "count", 5.0)
    assert tied["name"] == "Censor_ref" and tied["tie"] and np.isfinite(tied["half_width"])
    assert not clear["tie"] and clear["half_width"] == pytest.approx(0.0)
    grid = recommend.recommendation_grid(t)
    assert "tie with" in grid.loc[1.0, "count"] and "tie" not in grid.loc[5.0, "count"]
    assert "best in 5 of 5" in grid.loc[5.0, "count"]
    assert recommend.tie_count(t)[0] >= 1 and recommend.decisions(t)["table"]["count"]["1.0"]["tie"] is True


def test_the_mean_interval_is_student_s():
    m, h = recommend.mean_interval([1.0, 2.0, 3.0, np.nan])
    assert m == pytest.approx(2.0) and h == pytest.approx(4.302653 / np.sqrt(3), rel=1e-5)
    assert np.isnan(recommend.mean_interval([1.0])[1])


def test_a_calibrated_pick_is_censor_ref_with_calibrate_and_a_categorical_noise_aware_needs_no_bounds():
    ds = fake_grid()
    ds["value"].loc[{"situation": "regression", "candidate": "Censor_ref + calibration"}] = 0.01
    ds["value"].loc[{"situation": "category", "candidate": "Noise-aware"}] = 0.01
    t = recommend.recommendation_table(ds)
    reg, cat = _cell(t, "regression", 1.0), _cell(t, "category", 1.0)
    assert reg["mechanism"] == "censor_ref" and reg["calibrate"] and reg["needs_bounds"]
    assert cat["mechanism"] == "noise_aware" and not cat["needs_bounds"]
    d = recommend.decisions(t)
    assert d["table"]["regression"]["1.0"]["calibrate"] is True and set(d["table"]) == set(SITUATIONS)


def test_the_package_s_decisions_are_the_shipped_grid_s():
    """``mechanism="auto"`` reads decisions.json: it must be what the book's table computes from the shipped grid."""
    grid = xr.open_dataset(result_files.shipped_path("choosing-grid"), engine="h5netcdf")
    want = recommend.decisions(recommend.recommendation_table(grid))
    got = json.loads(recommend.DECISIONS_PATH.read_text(encoding="utf-8"))
    assert got["table"] == want["table"], "run recommend.write_decisions(shipped grid) and commit decisions.json"
    table = choice.decision_table()
    for sit, row in want["table"].items():
        for e, cell in row.items():
            assert table[sit][float(e)]["mechanism"] == cell["mechanism"]
