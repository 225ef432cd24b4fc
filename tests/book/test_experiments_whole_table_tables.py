"""Tables of the "Releasing a whole table" chapter, on constructed Datasets (tests/book/whole_table_fake.py)."""

from __future__ import annotations

import numpy as np
import pytest
from whole_table_fake import AIM, BASE, CHAIN, EPS, MST, OURS, fake_results, fake_study

from dpsynth_book.experiments.whole_table.tables import (
    COLUMNS,
    comparison_table,
    mean_frame,
    privacy_table,
    tables_table,
    targets_table,
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
    assert len(comparison_table(fake_results(), "house_prices", eps=[1, 5])) == 8
    with pytest.raises(KeyError, match="cps"):
        comparison_table(fake_results(), "cps1988")


def test_comparison_table_marks_unconverged_runs():
    tab = comparison_table(fake_results(unconverged=1), "house_prices")
    names = tab.loc[1.0].index.tolist()
    assert f"{OURS} *" in names and OURS not in names
    assert OURS in tab.loc[3.0].index  # only the failed cell is marked


def test_privacy_table_states_what_is_published_and_convergence():
    tab = privacy_table(fake_results(unconverged=2))
    ours = tab.loc[("house_prices", 1.0, OURS)]
    assert ours["converged runs"] == "1 / 3" and ours["ε published (one record removed)"] == pytest.approx(1.0)
    assert ours["ε of m tables"] == pytest.approx(1.0)
    peer = tab.loc[("nmes1988", 3.0, MST)]
    assert peer["converged runs"] == "no MCMC" and peer["δ"] == 1e-6 and np.isnan(peer["ε of m tables"])


def test_tables_table_describes_the_files_and_autos_choice():
    tab = tables_table(fake_study())
    assert tab.loc["house_prices", "rows"] == 546 and tab.loc["nmes1988", "rows"] == 1000
    cols = tab.loc["house_prices"].iloc[2]
    assert cols.startswith("aircon (categorical: noise-aware)") and "price (continuous, 10000 to 200000: " \
        "censor-ref + calibration)" in cols
    assert "price ~" in tab.loc["house_prices", "regression"]


def test_targets_table_judges_ours_against_the_better_peer():
    tab = targets_table(fake_results())
    row = tab.loc[("pMSE ratio (main effects)", "house_prices")]
    row = row[row["criterion"] == "≤ the better peer's"].iloc[0]
    assert row["ε"] == "3, 5" and row["cells met"] == "2 of 2"
    assert row["peer"] == pytest.approx(BASE["pmse_ratio"][AIM] * np.mean(1 / np.sqrt([3.0, 5.0])))
    slow = tab.loc[[("fit and one table (s)", "nmes1988")]].iloc[0]
    assert slow["peer"] == pytest.approx(BASE["seconds"][AIM])  # the slower peer
    cov = tab.loc[[("95% intervals cover the confidential estimate (peers: one table as if real)", "house_prices")]]
    assert cov.iloc[0]["ours"] == pytest.approx(BASE["coverage"][OURS])
    assert cov.iloc[0]["peer"] == pytest.approx(BASE["coverage"][AIM])
    assert CHAIN not in set(tab.index.get_level_values(0))
