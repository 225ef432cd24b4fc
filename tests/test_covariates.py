"""Public covariates: the rows a release is made for."""

from __future__ import annotations

import pandas as pd
import pytest

from dpsynth.validation import DataError


def test_public_rows_are_checked_and_laid_out_for_a_release():
    from dpsynth.covariates import public_rows

    df = pd.DataFrame({"a": [1.0, 2.0], "b": ["x", "y"], "other": [0, 0]}, index=[5, 7])
    got = public_rows(df, ["b", "a"])
    assert list(got.columns) == ["b", "a"] and list(got.index) == [0, 1]
    assert public_rows(df, []).shape == (2, 0)
    with pytest.raises(DataError, match="`data` lacks the covariate column"):
        public_rows(df, ["c"])
    with pytest.raises(DataError, match="`data` has no rows"):
        public_rows(df.iloc[:0], ["a"])
    with pytest.raises(DataError, match="`data` must be a DataFrame"):
        public_rows(df.to_numpy(), ["a"])
