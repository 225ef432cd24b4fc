"""The numbers that explain the peers' analyst numbers (:mod:`dpsynth_book.experiments.whole_table.peers_notes`).

Constructed tables with the NMES spec: a table drawn as mbi 1.1.0 draws (each column handed out in the order of
the rows inside its parent groups) against the same values shuffled within those groups (the fixed draw).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from whole_table_fake import AIM, EPS, MST, fake_study

from dpsynth_book.experiments.whole_table.peers_notes import (
    bin_midpoints,
    peer_cells,
    peer_trends,
    row_order,
    synthetic_notes,
)
from dpsynth_book.experiments.whole_table.replicate import TABLES

SPEC = TABLES["nmes1988"]


def nmes_like(n: int = 800, seed: int = 0) -> pd.DataFrame:
    """Columns of the chapter's NMES table: visits rise with chronic conditions, not with age."""
    rng = np.random.default_rng(seed)
    chronic = np.minimum(rng.poisson(1.6, n), 8)
    visits = np.minimum(rng.poisson(2.0 + 2.5 * chronic), 49)
    age = np.round(np.clip(6.6 + rng.exponential(0.8, n), 6.6, 10.9), 1)
    return pd.DataFrame({
        "gender": pd.Categorical(rng.choice(["female", "male"], n, p=[0.6, 0.4])),
        "health": pd.Categorical(rng.choice(["poor", "average", "excellent"], n, p=[0.14, 0.77, 0.09])),
        "age": age, "chronic": chronic.astype(np.int64), "visits": visits.astype(np.int64)})


def binned(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` as the peers return it: age on its bin midpoints (counts' bins hold one whole number each)."""
    lo, hi, bins = SPEC.bounds["age"]
    out = frame.copy()
    k = np.minimum((bins * (frame["age"] - lo) / (hi - lo)).astype(int), bins - 1)
    out["age"] = bin_midpoints(lo, hi, bins)[k]
    return out


def drawn_in_row_order(frame: pd.DataFrame, parent: str, children=("age", "visits"), *, shuffle: bool,
                       seed: int = 1) -> pd.DataFrame:
    """Keep ``parent``; within each of its groups, hand the children's values out in the order of the rows (mbi 1.1.0)
    or in a random order (the fix). Each child's values given the parent are unchanged."""
    rng = np.random.default_rng(seed)
    out = frame.copy()
    for _, idx in frame.groupby(parent, observed=True).groups.items():
        idx = np.sort(np.asarray(idx))
        for c in children:
            vals = np.sort(frame.loc[idx, c].to_numpy())
            out.loc[idx, c] = rng.permutation(vals) if shuffle else vals
    return out


def test_bin_midpoints_are_snsynths():
    np.testing.assert_allclose(bin_midpoints(6.5, 11.0, 9), 6.75 + 0.5 * np.arange(9))
    # a count's bins hold one whole number each: the rounded midpoints are the numbers 0..49
    np.testing.assert_array_equal(bin_midpoints(0, 49, 50, integer=True), np.arange(50))
    np.testing.assert_array_equal(bin_midpoints(0, 8, 9, integer=True), np.arange(9))


def test_row_order_is_small_for_data_and_large_for_a_draw_in_row_order():
    df = nmes_like()
    ro = row_order(df, SPEC.kinds)
    assert set(ro.index) == set(SPEC.columns)
    assert ro.abs().max() < 0.12  # about 1/sqrt(n) for rows in no particular order
    bad = row_order(drawn_in_row_order(df, "chronic", shuffle=False), SPEC.kinds)
    assert bad["visits"] > 0.3 and bad["age"] > 0.3
    good = row_order(drawn_in_row_order(df, "chronic", shuffle=True), SPEC.kinds)
    assert good.abs().max() < 0.12


def test_notes_tell_the_row_order_draw_from_the_fixed_one():
    df = nmes_like()
    bad = synthetic_notes(df, binned(drawn_in_row_order(df, "chronic", shuffle=False)), SPEC)
    good = synthetic_notes(df, binned(drawn_in_row_order(df, "chronic", shuffle=True)), SPEC)
    # the draw in row order makes age and visits comonotone within each chronic group
    assert bad["row_order_max"] > 0.3 and good["row_order_max"] < 0.12
    assert bad["assoc_gap_pair"] == "age~visits" and bad["assoc_gap_max"] > 0.3
    assert bad["assoc_synthetic"] > bad["assoc_original"] + 0.3
    assert good["assoc_gap_max"] < 0.15
    assert bad["coef_error_term"] == "age" and bad["coef_error_max"] > 5 * good["coef_error_max"]
    assert bad["coef_rmse"] > 3 * good["coef_rmse"]
    # the candidates ruled out: the same binning, the same distinct values, a design as well conditioned
    for notes in (bad, good):
        assert notes["midpoint_share_age"] == 1.0 and notes["distinct_age"] <= 9
        assert notes["midpoint_share_visits"] == 1.0 and notes["midpoint_share_chronic"] == 1.0
        assert notes["distinct_visits"] == notes["distinct_original_visits"]
        assert notes["condition_number"] < 3 * notes["condition_number_original"]
    assert synthetic_notes(df, df, SPEC)["midpoint_share_age"] < 0.2  # the data's ages are not midpoints


def test_a_rank_deficient_table_gives_no_regression_numbers():
    df = nmes_like()
    syn = df.copy()
    syn["health"] = pd.Categorical(["average"] * len(df), categories=df["health"].cat.categories)
    notes = synthetic_notes(df, syn, SPEC)
    assert np.isnan(notes["coef_rmse"]) and notes["coef_error_term"] == ""
    assert np.isfinite(notes["row_order_max"])


def test_peer_cells_and_trends_from_the_study():
    # AIM's coefficient RMSE jumps at the largest eps on NMES; MST's coverage falls
    base = fake_study()
    ds = base.copy(deep=True)
    ds["coef_rmse"].loc[{"table": "nmes1988", "method": AIM, "eps": EPS[-1]}] = 4.0
    ds["coverage"].loc[{"table": "nmes1988", "method": MST}] = np.array([0.4, 0.2, 0.0])[None, :]
    cells = peer_cells(ds)
    assert set(cells["method"]) == {MST, AIM} and (cells["runs"] == 3).all()
    row = cells[(cells["table"] == "nmes1988") & (cells["method"] == AIM) & (cells["eps"] == EPS[-1])].iloc[0]
    assert row["mean"] == pytest.approx(4.0) and row["min"] == row["max"] == pytest.approx(4.0)
    t = peer_trends(ds)
    assert t["eps_low"] == EPS[0] and t["eps_high"] == EPS[-1]
    assert t["aim_coef_rmse_high"] == pytest.approx(4.0) and t["aim_jump_eps"] == EPS[-1]
    assert t["mst_coverage_low"] == pytest.approx(0.4) and t["mst_coverage_high"] == pytest.approx(0.0)
    assert np.isnan(t["mst_jump_eps"])
    assert peer_cells(ds.sel({"method": [m for m in ds["method"].values if m not in (MST, AIM)]})).empty


def test_the_page_says_how_the_peers_rows_were_drawn_from_the_study_s_own_record():
    import xarray as xr

    from dpsynth_book.experiments.whole_table import peers_notes

    old = xr.Dataset(attrs={"peers": "SmartNoise smartnoise-synth MST and AIM at (eps, delta)"})
    new = xr.Dataset(attrs={"peers": "rows drawn with mbi's synthetic_data as fixed upstream (commit a987d84)"})
    assert "Caveat" in peers_notes.sampling_caveat(old) and "overstated" in peers_notes.sampling_caveat(old)
    assert "Caveat" not in peers_notes.sampling_caveat(new) and "fixed upstream" in peers_notes.sampling_caveat(new)
