"""The whole-table chapter's real tables: NMES 1988's fixed subsample and AER's HousePrices."""

from __future__ import annotations

import pandas as pd
import pytest

from dpsynth.validation import DataError
from dpsynth_book.public_data import HOUSE_YES_NO, NMES_HEALTH_LEVELS, house_prices, nmes1988, nmes1988_table


def test_nmes_table_is_a_fixed_subsample():
    a, b = nmes1988_table(), nmes1988_table()
    pd.testing.assert_frame_equal(a, b)
    assert list(a.columns) == ["visits", "chronic", "health", "age", "gender"] and len(a) == 2000
    assert list(a["health"].cat.categories) == list(NMES_HEALTH_LEVELS)
    full = nmes1988()
    assert len(nmes1988_table(4406)) == len(full)
    small = nmes1988_table(100)  # rows of the file, in its order
    rows = set(full[list(small.columns)].astype(str).itertuples(index=False))
    assert set(small.astype(str).itertuples(index=False)) <= rows


@pytest.mark.parametrize("n", [10, 5000, 2.5, True])
def test_nmes_table_rejects_bad_sizes(n):
    with pytest.raises(DataError, match="`n`"):
        nmes1988_table(n)


def test_house_prices():
    df = house_prices()
    assert df.shape == (546, 5)
    assert list(df["aircon"].cat.categories) == list(HOUSE_YES_NO)
    assert df["price"].between(25000, 190000).all() and df["bedrooms"].dtype.kind == "i"
    assert df["stories"].between(1, 4).all()
