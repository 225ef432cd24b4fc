"""The files and unit-free studies of "Your own data" (``dpsynth_book.experiments.own_data.files``).

The helpers are checked on constructed frames (no MCMC); the two replicates run at smoke scale
(400 records, 100 draws): their structure, the privacy accounting, streams addressed by the cell,
and what does not depend on the sampler's exact output.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpsynth_book.experiments.own_data import Params
from dpsynth_book.experiments.own_data.files import (
    CURVE_LEVELS,
    SUMMARY_QUANTILES,
    file_frame,
    files_replicate,
    independent_columns,
    report_measures,
    sampler_of,
    unitfree_replicate,
)
from dpsynth_book.public_data import FISHING_MODES, REAL_FILES, cps1988
from dpsynth_book.studies import data_fingerprint

pytestmark = [pytest.mark.filterwarnings("ignore::dpsynth.fitting.ConvergenceWarning")]


# --------------------------------------------------------------------------------------------
# helpers (no MCMC)
# --------------------------------------------------------------------------------------------


def _numeric_frame(n=500, seed=1):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    g = rng.choice(["a", "b", "c"], size=n)
    y = np.exp(1.0 + 0.5 * x + 0.3 * (g == "b") + 0.2 * rng.normal(size=n))
    return pd.DataFrame({"y": y, "x": x, "g": g})


def test_identical_data_measure_as_identical():
    df = _numeric_frame()
    m = report_measures(df, df.copy(), "y", ["x", "g"])
    assert m["max_ecdf"] == 0.0 and m["avg_ecdf"] == 0.0 and m["n_off_scale"] == 0
    assert m["terms"] == ["intercept", "x", "g=b", "g=c"] and m["dropped"] == []
    np.testing.assert_allclose(m["coef_synthetic"], m["coef_original"])
    np.testing.assert_allclose(m["overlap"], 1.0)
    np.testing.assert_allclose(m["curve_synthetic"], m["curve_original"])
    assert len(m["curve_original"]) == len(CURVE_LEVELS) == 99
    # the regression is on log y (a positive target), as the report's: slope 0.5 on x
    assert m["coef_original"][1] == pytest.approx(0.5, abs=0.05)
    assert m["pmse"] < m["pmse_null"]


def test_a_shifted_release_is_measured_as_shifted():
    df = _numeric_frame()
    syn = df.copy()
    syn["y"] = df["y"] * 2.0
    m = report_measures(df, syn, "y", ["x", "g"])
    assert m["max_ecdf"] > 0.3
    # log 2 added to the intercept, slopes unchanged
    assert m["coef_synthetic"][0] - m["coef_original"][0] == pytest.approx(np.log(2.0))
    np.testing.assert_allclose(m["coef_synthetic"][1:], m["coef_original"][1:], atol=1e-10)
    assert m["pmse_ratio"] > 10


def test_non_finite_and_non_positive_values_are_left_out_and_counted():
    df = _numeric_frame()
    syn = df.copy()
    syn.loc[:2, "y"] = [np.inf, 0.0, -1.0]
    m = report_measures(df, syn, "y", ["x", "g"])
    assert m["n_off_scale"] == 3  # one not finite, two without a log


def test_categorical_target_shares_and_tvd():
    rng = np.random.default_rng(3)
    n = 400
    levels = ["u", "v", "w"]
    df = pd.DataFrame({"c": pd.Categorical(rng.choice(levels, n, p=[0.5, 0.3, 0.2]), categories=levels),
                       "x": rng.normal(size=n)})
    syn = df.copy()
    syn["c"] = pd.Categorical(["u"] * n, categories=levels)
    m = report_measures(df, syn, "c", ["x"], levels)
    p = df["c"].value_counts(normalize=True).reindex(levels).to_numpy()
    np.testing.assert_allclose(m["share_original"], p)
    np.testing.assert_allclose(m["share_synthetic"], [1.0, 0.0, 0.0])
    assert m["tvd"] == pytest.approx(1.0 - p[0])
    # linear probability models of each level but the first
    assert m["terms"] == ["v: intercept", "v: x", "w: intercept", "w: x"]
    assert "max_ecdf" not in m


def test_independent_columns_drop_an_exact_repeat():
    rng = np.random.default_rng(0)
    a = rng.normal(size=50)
    X = np.column_stack([np.ones(50), a, rng.normal(size=50), a, 2 * a + 1])
    assert independent_columns(X) == [0, 1, 2]
    # the fishing file: the pier's price is the beach's, and the regression keeps one of them
    df = REAL_FILES["fishing"].load()
    np.testing.assert_array_equal(df["pbeach"], df["ppier"])
    m = report_measures(df, df.copy(), "mode", REAL_FILES["fishing"].covariates, FISHING_MODES)
    assert m["dropped"] == ["ppier"] and len(m["terms"]) == 3 * 5


def test_sampler_is_passed_only_when_it_differs_from_the_default():
    assert sampler_of(Params.paper()) is None
    cfg = sampler_of(Params.smoke())
    assert cfg is not None and (cfg.draws, cfg.tune) == (100, 100)
    assert sampler_of(Params.quick()) is not None  # tune 500


def test_file_frame_is_the_newcomer_s_file_or_a_fixed_subsample():
    full = file_frame("nmes1988")
    assert len(full) == 4406 and list(full.columns) == ["visits", *REAL_FILES["nmes1988"].covariates]
    sub = file_frame("nmes1988", 400)
    assert len(sub) == 400 and sub.equals(file_frame("nmes1988", 400))
    assert isinstance(file_frame("fishing", 100)["mode"].dtype, pd.CategoricalDtype)


# --------------------------------------------------------------------------------------------
# the replicates at smoke scale
# --------------------------------------------------------------------------------------------

P = Params.preset("smoke", files=("nmes1988", "fishing"), unitfree_units=("dollars", "thousands", "cents"))


@pytest.fixture(scope="module")
def files():
    return files_replicate(0, np.random.SeedSequence(7), P.files_dict())


@pytest.fixture(scope="module")
def unitfree():
    return unitfree_replicate(0, np.random.SeedSequence(7), P.unitfree_dict())


@pytest.mark.slow
def test_files_structure_and_accounting(files):
    assert list(files["file"].values) == ["nmes1988", "fishing"] and list(files["eps"].values) == [5.0]
    assert list(files["kind"].values) == ["count", "categorical"]
    assert list(files["n_records"].values) == [400, 400]
    assert files.attrs["mechanism"] == "Censor_ref" and files.attrs["relation"] == "replace"
    assert files.attrs["dropped_terms"] == "fishing: ppier"
    # the statement is the total asked, with one record replaced; the count's reference is each record's own
    # (free), the category's DP level counts take their share (10%) of it; the draw gets the rest
    np.testing.assert_allclose(files["eps_stated"].values, 5.0)
    ref = files["reference_eps"].values[:, 0]
    assert ref[0] == 0 and ref[1] == pytest.approx(0.5)
    np.testing.assert_allclose(files["draw_eps"].values[:, 0], 5.0 - ref)
    # with covariates the rows are public: the released size costs nothing
    assert (files["size_eps"] == 0).all()
    # the window: alpha = min(1, M / 2.5), M from the draw's share (one record replaced: the mechanism's eps is half)
    assert ((files["alpha"] > 0) & (files["alpha"] <= 1)).all()
    np.testing.assert_allclose(files["alpha"].values, np.minimum(1.0, files["bound"].values / 2.5))
    assert ((files["censored_share"] >= 0) & (files["censored_share"] <= 1)).all()
    assert (files["release_seconds"] >= files["fit_seconds"]).all() and (files["fit_seconds"] > 0).all()
    # the numeric target has a quantile curve, the categorical one level shares and a TVD
    nmes, fish = files.sel(file="nmes1988", eps=5.0), files.sel(file="fishing", eps=5.0)
    assert np.isfinite(nmes["curve_synthetic"]).all() and np.isnan(fish["curve_synthetic"]).all()
    assert np.isfinite(nmes["max_ecdf"]) and np.isnan(nmes["tvd"]) and np.isfinite(fish["tvd"])
    assert float(fish["share_synthetic"].sum()) == pytest.approx(1.0)
    assert float(files.sel(file="fishing")["share_original"].sum()) == pytest.approx(1.0)
    for a in SUMMARY_QUANTILES:
        q = f"q{int(round(100 * a))}"
        assert float(nmes[q]) == float(nmes["curve_synthetic"].sel(level=a))
    # each file's coefficients on its own terms; the original's from the data
    have = np.isfinite(files["coef_original"].sel(file="nmes1988")).values
    assert have.sum() == 8 and np.isfinite(files["coef_synthetic"].sel(file="nmes1988", eps=5.0).values[have]).all()
    assert np.isfinite(files[["pmse_ratio", "coef_rms_z", "coef_overlap"]].to_array()).all()
    df = file_frame("nmes1988", 400)
    np.testing.assert_allclose(float(files.sel(file="nmes1988")["q50_data"]), np.quantile(df["visits"], 0.5))


@pytest.mark.slow
def test_files_streams_are_addressed_by_the_cell(files):
    """One file recomputed alone repeats its cell of the two-file run (the shipped check recomputes one)."""
    alone = files_replicate(0, np.random.SeedSequence(7), {**P.files_dict(), "files": ["nmes1988"]})
    a, b = alone.sel(file="nmes1988", eps=5.0), files.sel(file="nmes1988", eps=5.0)
    # the data and the statement repeat exactly; the fit's outcomes are compared by the staleness check within
    # their Monte Carlo tolerance (a sampler may differ across machines)
    for v in ("eps_stated", "reference_eps", "draw_eps", "alpha", "bound"):
        assert float(a[v].values) == pytest.approx(float(b[v].values), rel=1e-9), v
    assert int(a["data_fingerprint"]) == int(b["data_fingerprint"])


@pytest.mark.slow
def test_unitfree_structure_and_the_unit(unitfree):
    u = unitfree
    assert list(u["unit"].values) == ["dollars", "thousands", "cents"]
    assert set(u["mechanism"].values) == {"Censor_ref", "Censor_uw"} and list(u["eps"].values) == [5.0]
    n = 400
    uw = u["n_censored"].sel(mechanism="Censor_uw", eps=5.0)
    # Censor_uw: a density in dollars or cents puts nearly every record below -eps/2
    assert float(uw.sel(unit="dollars")) > n / 2 and float(uw.sel(unit="cents")) > n / 2
    assert float(uw.sel(unit="thousands")) < n / 2
    # Censor_ref: few records in every unit (each record's own reference: nothing released, nothing to land off)
    ref = u["n_censored"].sel(mechanism="Censor_ref", eps=5.0)
    assert (ref < 0.1 * n).all(), ref.values
    # both statements are the total asked, one record removed: 5% for the DP released size, the draw the rest
    np.testing.assert_allclose(u["eps_stated"].values, 5.0)
    np.testing.assert_allclose(u["size_eps"].values, 0.25)
    np.testing.assert_allclose(u["reference_eps"].values, 0.0)
    np.testing.assert_allclose(u["draw_eps"].values, 4.75)
    # the window: M = 4.75 / 2; Censor_ref's alpha = min(1, M / 2.5), the same in every unit; Censor_uw unweighted
    np.testing.assert_allclose(u["bound"].values, 4.75 / 2)
    np.testing.assert_allclose(u["alpha"].sel(mechanism="Censor_ref").values, 4.75 / 2 / 2.5)
    np.testing.assert_allclose(u["alpha"].sel(mechanism="Censor_uw").values, 1.0)
    # the data, in dollars, whatever the units studied
    d = np.sort(np.random.default_rng(20261123).permutation(28155)[:n])
    dollars = cps1988("dollars")["wage"].to_numpy()[d]
    assert int(u["data_fingerprint"]) == int(data_fingerprint(dollars))
    assert float(u["median_data"]) == pytest.approx(float(np.median(dollars)))


@pytest.mark.slow
def test_unitfree_one_pair_repeats_the_shipped_cells(unitfree):
    d = {**P.unitfree_dict(), "unitfree_units": ["dollars", "cents"], "unitfree_mechanisms": ["censor_uw"]}
    pair = unitfree_replicate(0, np.random.SeedSequence(7), d)
    assert int(pair["data_fingerprint"]) == int(unitfree["data_fingerprint"])
    for unit in ("dollars", "cents"):
        a = pair.sel(unit=unit, mechanism="Censor_uw", eps=5.0)
        b = unitfree.sel(unit=unit, mechanism="Censor_uw", eps=5.0)
        assert float(a["n_censored"]) == float(b["n_censored"]) and float(a["max_ecdf"]) == float(b["max_ecdf"])
