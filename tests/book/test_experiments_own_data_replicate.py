"""The "Your own data" replicates on the smoke preset (400 CPS records, 100 draws): structure and invariants.

Nothing here depends on the sampler's exact output or on its convergence: the checks are the
structure of the Datasets, the privacy accounting (which holds for any draws) and properties of
the data themselves.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpsynth import metrics, registry
from dpsynth_book import presentation
from dpsynth_book.experiments.own_data import Params
from dpsynth_book.experiments.own_data.replicate import (
    QUANTILES,
    UNIT_SETTINGS,
    cell_labels,
    chapter_frame,
    replicate,
    synthesizer_names,
    units_replicate,
)
from dpsynth_book.public_data import cps1988, wage_design, wage_model_frame
from dpsynth_book.studies import data_fingerprint

pytestmark = [pytest.mark.filterwarnings("ignore::dpsynth.fitting.ConvergenceWarning")]

P = Params.smoke()
NAMES = ["Data", "Unweighted", "Weighted", "Censor_w", "Censor_uw", "PH", "OpenDP-Q"]
CENSORED = ["Censor_w", "Censor_uw"]
NO_MCMC = ["PH", "OpenDP-Q"]


@pytest.fixture(scope="module")
def study():
    return replicate(0, np.random.SeedSequence(7), P.study_dict())


@pytest.fixture(scope="module")
def units():
    return units_replicate(0, np.random.SeedSequence(7), P.study_dict())


@pytest.fixture(scope="module")
def data():
    """The smoke records: the frame, wages in dollars and the design."""
    df = chapter_frame(P)
    X, terms = wage_design(df)
    return df, df["wage"].to_numpy() * 1000.0, X, terms


def _row(ds, name):
    i = list(ds["synthesizer"].values).index(name)
    return ds.isel(fit=i)


# --------------------------------------------------------------------------------------------
# helpers (no MCMC)
# --------------------------------------------------------------------------------------------


def test_synthesizer_names_follow_the_registry():
    assert synthesizer_names(P) == NAMES == presentation.order(NAMES)
    sub = Params.preset("smoke", mechanisms=("opendp_quantiles", "censor_uw"))
    assert synthesizer_names(sub) == ["Data", "Unweighted", "Censor_uw", "OpenDP-Q"]


def test_chapter_frame_subsample_is_deterministic_and_from_the_file():
    a, b = chapter_frame(P), chapter_frame(P)
    pd.testing.assert_frame_equal(a, b)
    assert len(a) == P.n == 400 and list(a.index) == list(range(400))
    full = wage_model_frame(cps1988("thousands"))
    # the records are rows of the file, in file order, with the wage in the preset's unit (thousands)
    keys = ["educ", "exper", "ethnicity", "smsa", "region", "parttime", "wage"]
    merged = a.merge(full.reset_index(), on=keys, how="left")
    assert merged["index"].notna().all()
    # the same records whatever the unit
    dollars = chapter_frame(P, "dollars")
    np.testing.assert_allclose(dollars["wage"].to_numpy(), 1000.0 * a["wage"].to_numpy(), rtol=1e-12)
    pd.testing.assert_frame_equal(dollars.drop(columns="wage"), a.drop(columns="wage"))
    # another n: another subsample; n = 0: the whole file
    other = chapter_frame(Params.preset("smoke", n=60))
    assert len(other) == 60
    assert len(chapter_frame(Params.preset("smoke", n=0))) == 28155


def test_cell_labels():
    df = pd.DataFrame({"parttime": ["no", "yes", "no"], "smsa": ["yes", "yes", "no"], "x": [1, 2, 3]})
    np.testing.assert_array_equal(cell_labels(df, ("parttime", "smsa")), ["no/yes", "yes/yes", "no/no"])
    np.testing.assert_array_equal(cell_labels(df, ["smsa"]), ["yes", "yes", "no"])
    out = cell_labels(df, ())
    assert out.dtype == object and list(out) == ["all"] * 3
    frame = chapter_frame(P)
    labels = cell_labels(frame, P.quantile_cells)
    assert labels.shape == (P.n,) and set(labels) <= {f"{a}/{b}" for a in ("no", "yes") for b in ("no", "yes")}


# --------------------------------------------------------------------------------------------
# the mechanism comparison (slow: MCMC)
# --------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_study_structure(study, data):
    ds = study
    _, _, X, terms = data
    assert set(ds.dims) == {"fit", "term"} and ds.sizes["fit"] == len(NAMES)
    assert list(ds["synthesizer"].values) == NAMES
    np.testing.assert_array_equal(ds["eps"].values[:3], np.nan)
    assert list(ds["eps"].values[3:]) == [5.0] * 4
    assert list(ds["guarantee"].values) == [str(registry.guarantee(n) or "") for n in NAMES]
    assert list(ds["guarantee"].values) == ["", "none", "aDP", "aDP", "DP", "DP", "DP"]
    assert ds["coef"].dims == ("fit", "term") and list(ds["term"].values) == terms
    quantiles = [f"q{int(round(100 * a))}" for a in QUANTILES]
    for v in ("delta", "eps_remove", "eps_replace", "n_censored", "converged", "rhat_max", "ess_min", "divergences",
              "fit_seconds", "release_seconds", "max_ecdf", "avg_ecdf", *quantiles):
        assert ds[v].dims == ("fit",), v
    assert ds["converged"].dtype == bool
    assert ds.attrs["n"] == P.n and ds.attrs["unit"] == P.unit
    # every synthetic data set gives finite utilities and coefficients
    assert np.isfinite(ds["coef"].values).all()
    assert np.isfinite(ds["max_ecdf"].values).all() and ((ds["max_ecdf"] >= 0) & (ds["max_ecdf"] <= 1)).all()
    q = np.column_stack([ds[f"q{int(round(100 * a))}"].values for a in QUANTILES])
    assert (np.diff(q, axis=1) >= 0).all()


@pytest.mark.slow
def test_data_row_is_the_confidential_data(study, data):
    _, x_dollars, X, _ = data
    d = _row(study, "Data")
    assert float(d["max_ecdf"]) == 0.0 and float(d["avg_ecdf"]) == 0.0
    np.testing.assert_allclose(d["coef"].values, metrics.log_regression(x_dollars, X), rtol=1e-12)
    np.testing.assert_allclose([float(d[f"q{int(round(100 * a))}"]) for a in QUANTILES],
                               np.quantile(x_dollars, QUANTILES), rtol=1e-12)
    for v in ("delta", "eps_remove", "eps_replace", "n_censored"):
        assert np.isnan(float(d[v])), v
    assert int(study["data_fingerprint"]) == int(data_fingerprint(x_dollars, X))


@pytest.mark.slow
def test_privacy_accounting(study):
    ds = study
    fits = ds.isel(fit=np.flatnonzero(ds["synthesizer"].values != "Data"))
    # one record replaced: twice the figure with one removed, for every mechanism
    np.testing.assert_allclose(fits["eps_replace"], 2 * fits["eps_remove"], rtol=1e-12)
    assert (fits["eps_remove"] > 0).all()
    for name in CENSORED:
        r = _row(ds, name)
        eps = float(r["eps"])
        assert float(r["delta"]) <= eps / 2 + 1e-9
        assert float(r["eps_remove"]) == pytest.approx(eps)  # 2M, the bound, whatever Delta the draws reach
        assert 0 <= float(r["n_censored"]) <= P.n
    for name in NO_MCMC:
        r = _row(ds, name)
        assert float(r["eps_remove"]) <= float(r["eps"]) + 1e-12
        for v in ("delta", "n_censored", "rhat_max", "ess_min", "divergences"):
            assert np.isnan(float(r[v])), (name, v)
        assert bool(r["converged"])  # nothing to converge: never marked as a failure
    # not censored: eps with one record removed is 2 Delta; every model-based fit has its diagnostics
    for name in ("Unweighted", "Weighted"):
        r = _row(ds, name)
        assert float(r["eps_remove"]) == pytest.approx(2 * float(r["delta"]), rel=1e-12)
    for name in ["Unweighted", "Weighted", *CENSORED]:
        r = _row(ds, name)
        assert np.isfinite(float(r["rhat_max"])) and float(r["ess_min"]) > 0
    for name in ("Unweighted", "Weighted"):
        assert float(_row(ds, name)["n_censored"]) == 0.0
    # Weighted and Censor_w need the unweighted fit first: its time is part of their release
    base = float(_row(ds, "Unweighted")["fit_seconds"])
    for name in ("Weighted", "Censor_w"):
        r = _row(ds, name)
        assert float(r["release_seconds"]) == pytest.approx(float(r["fit_seconds"]) + base)
    for name in ("Unweighted", "Censor_uw", *NO_MCMC):
        r = _row(ds, name)
        assert float(r["release_seconds"]) == float(r["fit_seconds"])


@pytest.mark.slow
def test_data_fingerprint_depends_on_the_data_only(study):
    # another run (other seed, one mechanism): the same confidential data
    other = replicate(1, np.random.SeedSequence(8), Params.preset("smoke", mechanisms=("ph",)).study_dict())
    assert int(other["data_fingerprint"]) == int(study["data_fingerprint"])
    np.testing.assert_allclose(_row(other, "Data")["coef"].values, _row(study, "Data")["coef"].values, rtol=0)
    assert list(other["synthesizer"].values) == ["Data", "Unweighted", "PH"]
    # other data: another fingerprint
    small = replicate(0, np.random.SeedSequence(7), Params.preset("smoke", n=200, mechanisms=("ph",)).study_dict())
    assert int(small["data_fingerprint"]) != int(study["data_fingerprint"])
    assert small.attrs["n"] == 200


# --------------------------------------------------------------------------------------------
# the units study (slow: MCMC)
# --------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_units_structure(units):
    u = units
    assert dict(u.sizes) == {"setting": 3, "mechanism": 1, "eps": 1}
    assert list(u["setting"].values) == list(UNIT_SETTINGS) == ["dollars", "thousands", "dollars, offset -log 1000"]
    assert list(u["mechanism"].values) == ["Censor_w"] and list(u["eps"].values) == [10.0]
    for v in ("n_censored", "delta", "median", "max_ecdf", "converged", "rhat_max", "divergences"):
        assert u[v].dims == ("setting", "mechanism", "eps"), v
    assert u["converged"].dtype == bool and u.attrs["n"] == P.n
    assert (u["delta"] <= 10.0 / 2 + 1e-9).all()
    # no covariates: one record removed, the DP released size's 5% first; the window is half the draw's share
    np.testing.assert_allclose(u["eps_stated"].values, 10.0)
    np.testing.assert_allclose(u["draw_eps"].values, 9.5)
    np.testing.assert_allclose(u["bound"].values, 9.5 / 2)
    assert (u["delta"] <= u["bound"] + 1e-9).all()
    assert ((u["n_censored"] >= 0) & (u["n_censored"] <= P.n)).all()
    assert int(u["censoring_warnings"]) >= 0


@pytest.mark.slow
def test_units_decide_the_censoring(units):
    c = units["n_censored"].isel(mechanism=0, eps=0)
    dollars, thousands = float(c.sel(setting="dollars")), float(c.sel(setting="thousands"))
    offset = float(c.sel(setting="dollars, offset -log 1000"))
    # in dollars every record's log density is about -log 1000 lower: most records hit the clamp
    assert dollars > thousands and dollars > P.n / 2 and thousands < P.n / 2
    # the public offset -log 1000 makes the dollars fit the thousands fit (up to the prior and MC noise)
    assert abs(offset - thousands) <= 0.1 * P.n
    # the warning that a fit censored most records was raised (and counted) for the dollars fit
    assert int(units["censoring_warnings"]) >= 1


@pytest.mark.slow
def test_units_data_median_and_fingerprint(units, data):
    _, x_dollars, _, _ = data
    assert float(units["median_data"]) == pytest.approx(float(np.median(x_dollars)), rel=1e-12)
    # the units study reads the file in dollars (the first setting)
    dollars = chapter_frame(P, "dollars")["wage"].to_numpy()
    assert float(units["median_data"]) == float(np.median(dollars))
    assert int(units["data_fingerprint"]) == int(data_fingerprint(dollars))
    med = units["median"].values
    assert np.isfinite(med).all() and (med > 0).all()
