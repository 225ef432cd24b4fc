"""Tables of the "Releasing a whole table" chapter, on constructed Datasets (tests/whole_table_fake.py)."""

from __future__ import annotations

import numpy as np
import pytest
from whole_table_fake import AIM, BASE, EPS, MST, OURS, fake_results, fake_study

from dpsynth.experiments.whole_table.tables import (
    COLUMNS,
    comparison_table,
    mean_frame,
    peer_bins_table,
    privacy_table,
    tables_table,
)


def test_mean_frame_averages_the_runs():
    f = mean_frame(fake_study())
    row = f[(f["table"] == "nmes1988") & (f["eps"] == 1.0) & (f["method"] == OURS)].iloc[0]
    assert row["pairwise"] == pytest.approx(BASE["pairwise"][OURS])  # spread -/+ 10% averages out; eps 1
    assert row["runs"] == 3 and row["converged_runs"] == 3


def test_comparison_table_one_row_per_eps_and_method():
    tab = comparison_table(fake_results(), "house_prices")
    assert list(tab.columns) == list(COLUMNS.values())
    assert len(tab) == len(EPS) * 4
    v = tab.loc[(5.0, AIM), COLUMNS["coef_rmse"]]
    assert v == pytest.approx(BASE["coef_rmse"][AIM] / np.sqrt(5.0))
    with pytest.raises(KeyError, match="cps"):
        comparison_table(fake_results(), "cps1988")


def test_comparison_table_marks_unconverged_runs():
    tab = comparison_table(fake_results(unconverged=1), "house_prices")
    names = tab.loc[1.0].index.tolist()
    assert f"{OURS} *" in names and OURS not in names
    assert OURS in tab.loc[3.0].index  # only the failed cell is marked
    assert OURS in comparison_table(fake_results(unconverged=1), "nmes1988").loc[1.0].index


def test_privacy_table_states_relations_and_convergence():
    tab = privacy_table(fake_results(unconverged=2))
    ours = tab.loc[("house_prices", 1.0, OURS)]
    assert ours["converged runs"] == "1 / 3"
    assert ours["ε replaced"] == pytest.approx(2 * ours["ε removed"])
    peer = tab.loc[("nmes1988", 3.0, MST)]
    assert peer["converged runs"] == "no MCMC" and peer["δ"] == 1e-6 and np.isnan(peer["ε replaced"])


def test_tables_table_describes_the_files():
    tab = tables_table(fake_study())
    assert tab.loc["house_prices", "rows"] == 546 and tab.loc["nmes1988", "rows"] == 1000
    assert tab.loc["nmes1988", "confidential (order)"].startswith("visits (count)")
    assert "price ~" in tab.loc["house_prices", "regression"]


def test_peer_bins_table_lists_every_numeric_column():
    tab = peer_bins_table(fake_study())
    assert ("house_prices", "price") in tab.index and ("nmes1988", "gender") not in tab.index
    assert tab.loc[("nmes1988", "visits"), "bin width"] == 1.0  # counts: one bin per whole number
    assert tab.loc[("house_prices", "bedrooms"), "bins"] == 6
