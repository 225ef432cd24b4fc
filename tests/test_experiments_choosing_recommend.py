"""The choosing page's recommendation by situation and epsilon, read from shipped results."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

from dpsynth.experiments.choosing import recommend as R
from dpsynth.experiments.choosing import tables as T


def _study(rows, coef=None):
    """A study over (replicate, fit) like the chapters': rows (synthesizer, eps, max_ecdf per replicate)."""
    names = [r[0] for r in rows]
    eps = [r[1] for r in rows]
    ecdf = np.array([r[2] for r in rows], dtype=float).T  # replicate x fit
    ds = xr.Dataset({"max_ecdf": (("replicate", "fit"), ecdf),
                     "converged": (("replicate", "fit"), np.ones_like(ecdf, dtype=bool))},
                    coords={"synthesizer": ("fit", names), "eps": ("fit", np.array(eps, dtype=float))})
    if coef is not None:
        ds["coef"] = (("replicate", "fit", "term"), np.asarray(coef, dtype=float))
    return ds


def test_the_best_dp_mechanism_by_the_situation_s_utility():
    nan = np.nan
    # regression: Censor_uw has the better coefficients, PH the better marginal
    coef = np.zeros((2, 4, 2))
    coef[:, 0] = [1.0, 2.0]           # Data
    coef[:, 1] = [0.9, 2.0]           # Censor_uw: RMS 0.07
    coef[:, 2] = [0.0, 0.0]           # PH: no relation kept
    coef[:, 3] = [1.0, 2.0]           # LW (aDP): never recommended
    ds = _study([("Data", nan, [0, 0]), ("Censor_uw", 1.0, [0.08, 0.1]), ("PH", 1.0, [0.02, 0.03]),
                 ("LW", nan, [0.0, 0.0])], coef)
    t = R.recommendation_table({"own_data": ds}, eps_grid=(1.0, 2.0))
    reg = t.loc[("one variable, regression on public covariates", 1.0)]
    assert reg["mechanism"] == "Censor_uw" and reg["guarantee"] == "DP"
    assert reg["regression"] == pytest.approx(np.sqrt(0.01 / 2))
    assert reg["runner-up"].startswith("PH") and reg["it loses"]
    assert "ran ε = 1 only" in t.loc[("one variable, regression on public covariates", 2.0), "why"]
    # a situation whose study is missing says so
    assert t.loc[("one bounded variable, marginal only", 1.0), "why"] == "no shipped study measures this situation"


def test_marginal_situation_picks_the_smallest_distance():
    ds = _study([("Data", np.nan, [0, 0]), ("Censor_uw", 3.0, [0.09, 0.1]), ("PH", 3.0, [0.05, 0.06]),
                 ("Censor_w", 3.0, [0.01, 0.01])])  # Censor_w is aDP: not a candidate
    t = R.recommendation_table({"censoring": ds}, eps_grid=(3.0,))
    assert t.loc[("one bounded variable, marginal only", 3.0), "mechanism"] == "PH"


def test_every_situation_and_eps_has_a_cell_or_a_reason():
    t = R.recommendation_table({}, eps_grid=R.EPS_GRID)
    assert len(t) == len(R.SITUATIONS) * len(R.EPS_GRID)
    assert ((t["mechanism"] != "—") | (t["why"] != "")).all()


def test_a_changed_shipped_figure_changes_its_cell():
    studies = T.shipped_studies(R.RECOMMENDATION_STUDIES)
    if "own_data" not in studies:
        pytest.skip("results/own_data.nc is not shipped")
    before = R.recommendation_table(studies)
    cell = ("one variable, regression on public covariates", 5.0)
    chosen = before.loc[cell, "mechanism"]
    assert chosen != "—"
    ds = studies["own_data"].copy(deep=True)
    hit = (ds["synthesizer"].values == chosen) & np.isclose(ds["eps"].values, 5.0)
    ds["coef"][:, hit, :] += 10.0  # the recommended mechanism's regression made very wrong
    after = R.recommendation_table({**studies, "own_data": ds})
    assert after.loc[cell, "mechanism"] != chosen


def test_the_grid_has_a_row_per_eps_and_a_column_per_situation():
    ds = _study([("Data", np.nan, [0, 0]), ("Censor_uw", 3.0, [0.09, 0.1]), ("PH", 3.0, [0.05, 0.06])])
    t = R.recommendation_table({"censoring": ds}, eps_grid=(1.0, 3.0))
    g = R.recommendation_grid(t)
    assert list(g.index) == ["1", "3"] and list(g.columns) == list(R.SHORT_LABELS)
    assert g.loc["3", "bounded marginal"] == "PH 0.055"
    assert g.loc["1", "bounded marginal"] == "—"
