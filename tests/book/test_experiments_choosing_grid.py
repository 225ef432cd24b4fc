"""The choosing page's head-to-head grid: situations on real files, measures, usability, equal published eps."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpsynth.validation import DataError
from dpsynth_book.experiments.choosing.grid import (
    APPLIES,
    SITUATIONS,
    _measures,
    _unusable,
    cell,
    grid_replicate,
    situation_frame,
)
from dpsynth_book.experiments.choosing.grid_params import CANDIDATE_KEYS, CANDIDATE_NAMES, EPS_GRID, GridParams


def test_presets_cover_the_book_s_grid_and_are_validated():
    paper = GridParams.paper()
    assert paper.eps == EPS_GRID and set(paper.candidates) == set(CANDIDATE_KEYS) and paper.replicates >= 2
    assert set(paper.situations) == set(SITUATIONS)
    with pytest.raises(DataError, match="`situations`"):
        GridParams(situations=("whole table",))
    with pytest.raises(DataError, match="`small_n`"):
        GridParams(small_n=600)


def test_situations_are_real_files_with_their_public_facts():
    p = GridParams.paper()
    for name, sit in SITUATIONS.items():
        df = situation_frame(name, p)
        assert list(df.columns) == [sit.target, *sit.covariates]
        assert len(df) == (p.small_n if sit.small else (3000 if sit.file == "islr_wage" else p.nmes_n))
        if sit.bounds is not None:  # the public bounds hold the data (chosen without it; checked here)
            assert df[sit.target].min() >= sit.bounds[0] and df[sit.target].max() <= sit.bounds[1]
    for name in ("small n, marginal", "small n, regression"):
        assert SITUATIONS[name].small and len(situation_frame(name, p)) == p.small_n < 500


def test_the_data_itself_measures_zero_and_a_shuffled_column_does_not():
    p = GridParams.paper()
    df = situation_frame("regression", p)
    m = _measures(df, df.copy(), SITUATIONS["regression"])
    assert m["marginal"] == 0 and m["coef"] == 0 and np.isnan(m["tvd"])
    shuffled = df.copy()
    shuffled["wage"] = np.random.default_rng(0).permutation(df["wage"].to_numpy())
    m2 = _measures(df, shuffled, SITUATIONS["regression"])
    assert m2["marginal"] == 0 and m2["coef"] > 0.05  # the marginal kept, the relation lost
    cat = situation_frame("category", p)
    flat = cat.copy()
    flat["health"] = pd.Categorical(["average"] * len(cat), categories=cat["health"].cat.categories)
    assert _measures(cat, flat, SITUATIONS["category"])["tvd"] > 0.1


def test_a_candidate_that_does_not_apply_is_recorded_with_the_reason():
    p = GridParams.smoke()
    out = cell(situation_frame("category", p), SITUATIONS["category"], "ph", 1.0, p, np.random.SeedSequence(1))
    assert not out["usable"] and out["why"] == "not applicable to a categorical column"
    assert "ph" not in APPLIES["categorical"] and "censor_ref_calibrated" not in APPLIES["count"]


def test_opendp_q_releases_a_count_on_its_public_bounds_from_zero():
    # a count's public lower bound is 0: the default spacing is linear, not a refusal of log-spacing
    p = GridParams.smoke()
    out = cell(situation_frame("count", p), SITUATIONS["count"], "opendp_quantiles", 1.0, p,
               np.random.SeedSequence(2))
    assert SITUATIONS["count"].bounds[0] == 0
    assert out["usable"] and out["why"] == "" and 0 <= out["value"] <= 1, out["why"]


def test_non_finite_synthetic_values_are_refused_as_the_release_protocol_refuses_them():
    assert _unusable(pd.Series([1.0, np.inf, -np.inf, np.nan, 2.0])) == [
        "3 synthetic value(s) are not finite (a draw far in the tails overflowed)"]
    assert _unusable(pd.Series([1, 2, 3])) == []
    assert _unusable(pd.Series(pd.Categorical(["a", "b"]))) == []


@pytest.mark.slow
def test_smoke_grid_publishes_the_eps_asked_and_says_why_a_cell_is_unusable():
    p = GridParams.smoke()
    ds = grid_replicate(0, np.random.SeedSequence(3), p.study_dict())
    assert ds["value"].dims == ("situation", "eps", "candidate")
    assert list(ds["candidate"].values) == [CANDIDATE_NAMES[k] for k in p.candidates]
    ran = ~ds["why"].str.startswith("not applicable")
    np.testing.assert_allclose(ds["eps_published"].where(ran & ds["value"].notnull()).fillna(3.0), 3.0)
    assert bool(((ds["usable"]) == (ds["why"] == "")).all())  # usable exactly when no reason is recorded
    assert int(ds["n"].sel({"situation": "small n, regression"})) == p.small_n
