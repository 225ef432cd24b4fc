"""Salary scaling and design matrix of the SDR beta regression (dpsynth_book.sdr.design)."""

from __future__ import annotations

import numpy as np
import pytest

from dpsynth.validation import DataError
from dpsynth_book import sdr
from dpsynth_book.sdr import design


def test_scaling_keeps_zero_and_the_bound_inside_unit_interval():
    y = design.scale_salary(np.array([0.0, 50_000.0, design.PUBLIC_SALARY_BOUND]))
    assert np.all((y > 0) & (y < 1))
    np.testing.assert_allclose(design.unscale_salary(y), [0.0, 50_000.0, design.PUBLIC_SALARY_BOUND])
    with pytest.raises(DataError):
        design.scale_salary([-1.0])
    with pytest.raises(DataError):
        design.scale_salary([design.PUBLIC_SALARY_BOUND + 1])


def test_unscale_clips_to_the_public_range():
    np.testing.assert_allclose(design.unscale_salary([0.0, 1.0]), [0.0, design.PUBLIC_SALARY_BOUND])


def test_package_reexports_design_names():
    assert sdr.scale_salary is design.scale_salary and sdr.AGE_LEVELS == design.AGE_LEVELS


def test_design_matrix():
    d = sdr.standin_censoring(200, seed=1)
    X = design.design_matrix(d.frame)
    assert X.shape == (200, 11)
    assert len(design.design_names()) == 11
    np.testing.assert_array_equal(X[:, 0], 1.0)
    assert np.all(np.abs(X[:, -1]) <= 1.0)
    np.testing.assert_array_equal(X[:, 1], (d.frame["gender"] == "F").to_numpy(dtype=float))
    assert np.all(X[:, 2:10].sum(axis=1) <= 1)


@pytest.mark.parametrize("s", [[50_000.0, np.nan], [np.inf]])
def test_scale_salary_nan_names_s(s):
    with pytest.raises(DataError, match=r"`s` has 1 non-finite value"):
        design.scale_salary(s)


def test_scale_salary_out_of_bound_names_s():
    with pytest.raises(DataError, match=r"`s` must lie in \[0, 1,000,000\].*position 1"):
        design.scale_salary([10.0, 2_000_000.0])
    with pytest.raises(DataError, match=r"`bound` must be finite and > 0"):
        design.scale_salary([10.0], bound=np.nan)



def test_design_matrix_needs_covariates_and_known_age_groups():
    d = sdr.standin_censoring(50, seed=1)
    with pytest.raises(DataError, match="gender"):
        design.design_matrix(d.frame.drop(columns=["gender"]))
    f = d.frame.copy()
    f.loc[0, "age_group"] = 85
    with pytest.raises(DataError, match="age_levels"):
        design.design_matrix(f)
