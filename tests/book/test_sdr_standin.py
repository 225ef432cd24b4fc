"""Stand-in SDR samples (dpsynth_book.sdr.standin): seeded and calibrated to the papers' published summaries."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpsynth.validation import DataError
from dpsynth_book import sdr
from dpsynth_book.sdr import standin


def test_standins_match_published_summaries_and_are_seeded():
    a = standin.standin_censoring(1000, seed=5)
    b = standin.standin_censoring(1000, seed=5)
    pd.testing.assert_frame_equal(a.frame, b.frame)
    assert a.is_standin
    s = sdr.salary_summary(a.salary)
    for k, v in standin.CENSORING_TARGETS.items():
        assert abs(s[k] / v - 1) < 0.03, (k, s[k], v)
    assert set(a.frame["age_group"]) <= set(sdr.AGE_LEVELS)
    assert a.frame["weeks"].between(2, 52).all()
    assert (a.frame["weeks"] == 52).mean() > 0.7
    assert np.all(a.salary == np.round(a.salary))

    r = standin.standin_reweighting(1000, seed=5)
    s = sdr.salary_summary(r.salary)
    for k in ("mean", "median", "sd"):
        assert abs(s[k] / standin.REWEIGHTING_TARGETS[k] - 1) < 0.03, (k, s[k])
    assert s["min"] == 0 and s["max"] == 509_000
    tab = r.summary_table()
    assert list(tab.columns) == ["this sample", "published"]


def test_standin_salaries_stay_below_the_public_bound_and_have_provenance():
    a = standin.standin_censoring(300, seed=2)
    assert a.salary.max() < sdr.PUBLIC_SALARY_BOUND and a.salary.min() >= 0
    assert a.steps_table()["n_after"].tolist() == [300]
    assert "stand-in" in a.description and a.targets == standin.CENSORING_TARGETS
    assert not np.array_equal(a.salary, standin.standin_censoring(300, seed=3).salary)


@pytest.mark.parametrize("fn, n", [(standin.standin_censoring, 1), (standin.standin_reweighting, 2),
                                   (standin.standin_censoring, 10.5)])
def test_standin_sizes_are_checked(fn, n):
    with pytest.raises(DataError, match="`n`"):
        fn(n)


def test_standin_frame_columns():
    assert list(standin.standin_censoring(20, seed=1).frame.columns) == ["salary", "gender", "age_group", "weeks"]
    assert list(standin.standin_reweighting(20, seed=1).frame.columns) == ["salary"]
    assert isinstance(standin.standin_reweighting(20, seed=1).frame, pd.DataFrame)
