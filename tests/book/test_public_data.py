"""The CPS 1988 wage file (``dpsynth_book.public_data``): rows, columns, units, the model frame and design."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpsynth import Synthesizer
from dpsynth.validation import DataError
from dpsynth_book.public_data import (
    CPS1988,
    REFERENCE_EDUCATION,
    REFERENCE_EXPERIENCE,
    UNITS,
    WAGE_CATEGORICAL,
    WAGE_NUMERIC,
    cps1988,
    wage_design,
    wage_model_frame,
)

COLUMNS = ["wage", "education", "experience", "ethnicity", "smsa", "region", "parttime"]
LEVELS = {"ethnicity": ["afam", "cauc"], "smsa": ["no", "yes"], "region": ["midwest", "northeast", "south", "west"],
          "parttime": ["no", "yes"]}


@pytest.fixture(scope="module")
def dollars() -> pd.DataFrame:
    return cps1988()


@pytest.fixture(scope="module")
def frame(dollars) -> pd.DataFrame:
    return wage_model_frame(dollars)


# --------------------------------------------------------------------------------------------
# cps1988
# --------------------------------------------------------------------------------------------


def test_rows_columns_and_dtypes(dollars):
    assert len(dollars) == CPS1988.n == 28155
    assert list(dollars.columns) == COLUMNS
    assert dollars["wage"].dtype == np.float64
    assert dollars["education"].dtype == np.int64 and dollars["experience"].dtype == np.int64
    for c in WAGE_CATEGORICAL:
        assert pd.api.types.is_string_dtype(dollars[c]), c
        assert sorted(dollars[c].unique()) == LEVELS[c], c
    assert list(dollars.index) == list(range(len(dollars)))
    assert not dollars.isna().any().any()


def test_wages_are_positive_and_finite(dollars):
    w = dollars["wage"].to_numpy()
    assert np.isfinite(w).all() and (w > 0).all()
    # weekly wages in dollars: tens to tens of thousands, with a median of some hundreds
    assert 10 < w.min() and w.max() < 1e5 and 100 < np.median(w) < 2000
    # experience is age - education - 6 and may be negative; education is in years
    assert dollars["experience"].min() < 0 and dollars["education"].between(0, 25).all()


def test_thousands_are_dollars_over_1000_exactly(dollars):
    thousands = cps1988("thousands")
    assert UNITS == {"dollars": 1.0, "thousands": 1000.0, "cents": 0.01}
    np.testing.assert_array_equal(thousands["wage"].to_numpy(), dollars["wage"].to_numpy() / 1000.0)
    pd.testing.assert_frame_equal(thousands.drop(columns="wage"), dollars.drop(columns="wage"))
    pd.testing.assert_frame_equal(cps1988("dollars"), dollars)


def test_cents_are_dollars_times_100_exactly(dollars):
    cents = cps1988("cents")
    np.testing.assert_array_equal(cents["wage"].to_numpy(), dollars["wage"].to_numpy() * 100.0)
    pd.testing.assert_frame_equal(cents.drop(columns="wage"), dollars.drop(columns="wage"))
    # a wage in cents is a wage in dollars times the public unit, to rounding
    np.testing.assert_allclose(cents["wage"].to_numpy() * UNITS["cents"], dollars["wage"].to_numpy(), rtol=1e-15)


def test_each_call_returns_a_fresh_frame(dollars):
    a = cps1988()
    a.loc[0, "wage"] = -1.0
    assert cps1988().loc[0, "wage"] == dollars.loc[0, "wage"] > 0


@pytest.mark.parametrize("unit", ["cent", "Dollars", "", None, 1000.0])
def test_bad_unit_is_a_data_error_naming_unit(unit):
    with pytest.raises(DataError, match="`unit`"):
        cps1988(unit)


# --------------------------------------------------------------------------------------------
# wage_model_frame
# --------------------------------------------------------------------------------------------


def test_model_frame_centres_with_the_public_constants(dollars, frame):
    assert (REFERENCE_EDUCATION, REFERENCE_EXPERIENCE) == (12.0, 20.0)
    assert list(frame.columns) == ["wage", *WAGE_NUMERIC, *WAGE_CATEGORICAL]
    assert len(frame) == len(dollars)
    np.testing.assert_array_equal(frame["wage"].to_numpy(), dollars["wage"].to_numpy())
    np.testing.assert_array_equal(frame["educ"].to_numpy(), dollars["education"].to_numpy() - 12.0)
    exper = (dollars["experience"].to_numpy() - 20.0) / 10.0
    np.testing.assert_allclose(frame["exper"].to_numpy(), exper, rtol=0, atol=1e-15)
    np.testing.assert_allclose(frame["exper2"].to_numpy(), exper**2, rtol=1e-15, atol=0)
    for c in ("educ", "exper", "exper2"):
        assert frame[c].dtype == np.float64
    for c in WAGE_CATEGORICAL:
        assert list(frame[c]) == list(dollars[c])
    # by hand, on the first record: education 7, experience 45
    assert (dollars.loc[0, "education"], dollars.loc[0, "experience"]) == (7, 45)
    assert frame.loc[0, "educ"] == -5.0 and frame.loc[0, "exper"] == 2.5 and frame.loc[0, "exper2"] == 6.25


def test_model_frame_keeps_the_unit():
    f = wage_model_frame(cps1988("thousands"))
    np.testing.assert_array_equal(f["wage"].to_numpy(), cps1988("thousands")["wage"].to_numpy())


@pytest.mark.parametrize("drop", [["wage"], ["experience"], ["region", "parttime"]])
def test_model_frame_names_the_missing_columns(dollars, drop):
    with pytest.raises(DataError, match="lacks") as err:
        wage_model_frame(dollars.drop(columns=drop))
    for c in drop:
        assert repr(c) in str(err.value)


# --------------------------------------------------------------------------------------------
# wage_design
# --------------------------------------------------------------------------------------------

TERMS = ["intercept", "educ", "exper", "exper2", "ethnicity=cauc", "smsa=yes", "region=northeast", "region=south",
         "region=west", "parttime=yes"]


def test_design_term_names(frame):
    X, names = wage_design(frame)
    assert names == TERMS
    # built from the rule: numeric columns, then every level but the first in sorted order
    rule = ["intercept", *WAGE_NUMERIC, *[f"{c}={lev}" for c in WAGE_CATEGORICAL for lev in LEVELS[c][1:]]]
    assert names == rule
    assert X.shape == (len(frame), len(names)) and X.dtype == np.float64


def test_design_is_full_rank_and_matches_the_frame(frame):
    X, names = wage_design(frame)
    assert np.linalg.matrix_rank(X) == X.shape[1]
    np.testing.assert_array_equal(X[:, 0], 1.0)
    for c in WAGE_NUMERIC:
        np.testing.assert_array_equal(X[:, names.index(c)], frame[c].to_numpy())
    for c in WAGE_CATEGORICAL:
        for lev in LEVELS[c][1:]:
            col = X[:, names.index(f"{c}={lev}")]
            assert set(np.unique(col)) <= {0.0, 1.0}
            np.testing.assert_array_equal(col == 1.0, (frame[c] == lev).to_numpy())
        # the baseline level is the rows where every indicator of the column is 0
        ind = X[:, [names.index(f"{c}={lev}") for lev in LEVELS[c][1:]]]
        assert (ind.sum(axis=1) <= 1).all()
        np.testing.assert_array_equal(ind.sum(axis=1) == 0, (frame[c] == LEVELS[c][0]).to_numpy())


def test_design_levels_are_sorted_not_in_order_of_appearance(frame):
    # reversed rows: the first level seen changes, the encoding does not
    rev = frame.iloc[::-1].reset_index(drop=True)
    X, names = wage_design(rev)
    X0, names0 = wage_design(frame)
    assert names == names0
    np.testing.assert_array_equal(X, X0[::-1])


def test_design_has_the_encoding_of_the_synthesizer(frame):
    covs = [*WAGE_NUMERIC, *WAGE_CATEGORICAL]
    sub = frame.iloc[::7].reset_index(drop=True)  # every 7th record: all levels present
    X, _ = wage_design(sub)
    s = Synthesizer(sub[["wage", *covs]], "wage", covariates=covs, model="lognormal_regression",
                    mechanism="censor_uw", eps=1.0, standardize=False)
    np.testing.assert_array_equal(s.design(sub[covs]), X)
    assert s.family().n_coef == X.shape[1]
    # by default (covariates public under replacement) the numeric columns are centred and scaled
    z = Synthesizer(sub[["wage", *covs]], "wage", covariates=covs, model="lognormal_regression",
                    mechanism="censor_uw", eps=1.0).design(sub[covs])
    assert z.shape == X.shape and np.all(z[:, 0] == 1)
    moved = ~np.all(z == X, axis=0)
    assert moved.any()
    np.testing.assert_allclose(z[:, moved].mean(axis=0), 0, atol=1e-9)


def test_design_names_the_missing_columns(frame):
    with pytest.raises(DataError, match="lacks") as err:
        wage_design(frame.drop(columns=["exper2", "smsa"]))
    assert "exper2" in str(err.value) and "smsa" in str(err.value)
    with pytest.raises(DataError, match="lacks"):
        wage_design(cps1988())  # the raw file, not the model frame


# --------------------------------------------------------------------------------------------
# the other real files: a count and a categorical confidential variable
# --------------------------------------------------------------------------------------------


def test_nmes1988_visits_are_counts_with_public_covariates():
    from dpsynth_book.public_data import nmes1988

    df = nmes1988()
    assert df.shape == (4406, 7) and df["visits"].dtype == np.int64 and (df["visits"] >= 0).all()
    assert set(df["health"]) == {"poor", "average", "excellent"}


def test_fishing_mode_has_the_documented_levels():
    from dpsynth_book.public_data import FISHING_MODES, fishing

    df = fishing()
    assert len(df) == 1182 and tuple(df["mode"].cat.categories) == FISHING_MODES
    assert df["mode"].notna().all()


@pytest.mark.parametrize("name", ["cps1988", "nmes1988", "fishing"])
def test_real_files_give_their_target_kind_from_its_type(name):
    from dpsynth.target import TargetEncoding
    from dpsynth_book.public_data import real_file

    f = real_file(name)
    df = f.load()
    assert list(df.columns) == [f.target, *f.covariates]
    assert TargetEncoding.from_series(df[f.target]).kind == f.kind


def test_unknown_real_file_is_a_clear_error():
    from dpsynth_book.public_data import real_file

    with pytest.raises(DataError, match="unknown real file 'cps'"):
        real_file("cps")
