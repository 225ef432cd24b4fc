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
    # PH best in two runs of three on the regression at eps 5
    ds["value"].loc[{"situation": "regression", "eps": 5.0, "candidate": "PH", "replicate": [0, 1]}] = 0.05
    ds["value"].loc[{"situation": "regression", "eps": 5.0, "candidate": "PH", "replicate": 2}] = 0.15
    t = recommend.recommendation_table(ds)
    assert "Censor_uw" not in set(t["name"])
    c = _cell(t, "bounded marginal", 1.0)
    assert c["mechanism"] == "censor_ref" and c["stability"] == "3 of 3 runs" and c["runner_up"] == \
        "Censor_ref + calibration"
    r = _cell(t, "regression", 5.0)
    assert r["mechanism"] == "ph" and r["needs_bounds"] and r["stability"] == "2 of 3 runs"
    assert r["value"] == pytest.approx((0.05 + 0.05 + 0.15) / 3)


def test_a_candidate_unusable_in_one_run_is_not_picked_and_an_empty_cell_says_why():
    ds = fake_grid()
    ds["usable"].loc[{"situation": "count", "eps": 1.0, "candidate": "Censor_ref", "replicate": 1}] = False
    ds["why"].loc[{"situation": "count", "eps": 1.0, "candidate": "Censor_ref", "replicate": 1}] = "censored 80%"
    for cand in CANDS:
        ds["usable"].loc[{"situation": "small n", "eps": 1.0, "candidate": cand}] = False
        ds["why"].loc[{"situation": "small n", "eps": 1.0, "candidate": cand}] = "failed its convergence checks"
    t = recommend.recommendation_table(ds)
    assert _cell(t, "count", 1.0)["name"] != "Censor_ref"
    empty = _cell(t, "small n", 1.0)
    assert pd.isna(empty["mechanism"]) and empty["name"] == "none usable"
    assert recommend.decisions(t)["table"]["small n"]["1.0"]["mechanism"] is None
    assert "failed its convergence checks" in empty["reason"]
    grid = recommend.recommendation_grid(t)
    assert grid.loc[1.0, "small n"] == "none usable" and not grid.isna().any().any()


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
