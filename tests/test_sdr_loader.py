"""SDR loader and stand-in (dpsynth.sdr): fixture files written here, in the PUF's layout."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpsynth import sdr
from dpsynth.validation import DataError


def _fixture_frame(n: int = 30) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame({
        "REFID": np.arange(n),
        "SALARY": rng.integers(40_000, 200_000, size=n),
        "GENDER": rng.choice(["F", "M"], size=n),
        "AGEGR": rng.choice(sdr.AGE_LEVELS, size=n),
        "WKSWK": rng.choice([52, 40, 36], size=n),
        "NDGMED": np.where(np.arange(n) % 3 == 0, "7", "1"),
        "EMSECDT": np.where(np.arange(n) % 2 == 0, "11", "21"),
    })


@pytest.fixture
def puf_csv(tmp_path):
    path = tmp_path / "sdr2017.csv"
    _fixture_frame().to_csv(path, index=False)
    return path


def test_load_csv_reads_standard_columns(puf_csv):
    d = sdr.load_sdr(puf_csv)
    assert d.source == "file" and not d.is_standin
    assert list(d.frame.columns) == ["salary", "gender", "age_group", "weeks"]
    assert d.n == 30
    raw = pd.read_csv(puf_csv)
    np.testing.assert_array_equal(d.salary, raw["SALARY"].to_numpy(dtype=float))
    assert set(d.frame["gender"]) <= {"F", "M"}


def test_filters_are_explicit_and_counted(puf_csv):
    d = sdr.load_sdr(puf_csv, filters={"NDGMED": ["7"], "EMSECDT": [11]})
    raw = pd.read_csv(puf_csv, dtype=str)
    keep = (raw["NDGMED"] == "7") & (raw["EMSECDT"] == "11")
    assert d.n == int(keep.sum())
    steps = d.steps_table()
    assert steps["n_after"].tolist()[1] == int((raw["NDGMED"] == "7").sum())
    assert steps["n_after"].tolist()[-1] == d.n


def test_salary_only_variables(puf_csv):
    d = sdr.load_sdr(puf_csv, variables=("salary",))
    assert list(d.frame.columns) == ["salary"]


def test_custom_column_names(tmp_path):
    f = _fixture_frame().rename(columns={"SALARY": "salary_usd"})
    path = tmp_path / "x.csv"
    f.to_csv(path, index=False)
    with pytest.raises(sdr.SDRFileError, match="salary_usd|SALARY"):
        sdr.load_sdr(path)
    d = sdr.load_sdr(path, columns={"salary": "salary_usd"})
    assert d.n == len(f)


def test_missing_column_names_it(tmp_path):
    path = tmp_path / "x.csv"
    _fixture_frame().drop(columns=["WKSWK"]).to_csv(path, index=False)
    with pytest.raises(sdr.SDRFileError, match=r"WKSWK.*columns=SDRColumns"):
        sdr.load_sdr(path)


def test_malformed_csv(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("SALARY,GENDER,AGEGR,WKSWK\n50000,F,30,52\n60000,M,35,52,EXTRA,FIELDS\n")
    with pytest.raises(sdr.SDRFileError, match="not a well-formed CSV"):
        sdr.load_sdr(path)


def test_empty_and_garbage_files(tmp_path):
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(sdr.SDRFileError, match="empty"):
        sdr.load_sdr(empty)
    sas = tmp_path / "bad.sas7bdat"
    sas.write_bytes(b"this is not a SAS file")
    with pytest.raises(sdr.SDRFileError, match="SAS data set"):
        sdr.load_sdr(sas)
    other = tmp_path / "x.xlsx"
    other.write_bytes(b"")
    with pytest.raises(sdr.SDRFileError, match="unsupported file type"):
        sdr.load_sdr(other)
    with pytest.raises(sdr.SDRFileError, match="does not exist"):
        sdr.load_sdr(tmp_path / "nope.csv")


def test_non_numeric_salary(tmp_path):
    f = _fixture_frame().astype({"SALARY": object})
    f.loc[4, "SALARY"] = "abc"
    path = tmp_path / "x.csv"
    f.to_csv(path, index=False)
    with pytest.raises(sdr.SDRFileError, match=r"'SALARY'.*non-numeric.*row 5"):
        sdr.load_sdr(path)


@pytest.mark.parametrize(
    "column, value, pattern",
    [
        ("SALARY", -5, r"'SALARY'.*negative"),
        ("SALARY", 9_999_998, r"'SALARY'.*reserved survey code.*filters"),
        ("SALARY", 1_500_000, r"'SALARY'.*above the public bound"),
        ("WKSWK", 60, r"'WKSWK'.*2-52"),
        ("WKSWK", 1, r"'WKSWK'.*2-52"),
        ("GENDER", "X", r"'GENDER'.*unknown code"),
        ("AGEGR", 85, r"'AGEGR'.*age_levels"),
    ],
)
def test_out_of_range_values_raise(tmp_path, column, value, pattern):
    f = _fixture_frame().astype({column: object})
    f.loc[3, column] = value
    path = tmp_path / "x.csv"
    f.to_csv(path, index=False)
    with pytest.raises(sdr.SDRFileError, match=pattern):
        sdr.load_sdr(path)


def test_missing_value_is_an_error(tmp_path):
    f = _fixture_frame().astype({"SALARY": object})
    f.loc[2, "SALARY"] = None
    path = tmp_path / "x.csv"
    f.to_csv(path, index=False)
    with pytest.raises(sdr.SDRFileError, match="missing value"):
        sdr.load_sdr(path)


def test_zero_salary_is_kept_and_scaled_inside_unit_interval(tmp_path):
    f = _fixture_frame()
    f.loc[0, "SALARY"] = 0
    path = tmp_path / "x.csv"
    f.to_csv(path, index=False)
    d = sdr.load_sdr(path)
    assert d.n == len(f) and d.salary.min() == 0
    y = sdr.scale_salary(np.array([0.0, 50_000.0, sdr.PUBLIC_SALARY_BOUND]))
    assert np.all((y > 0) & (y < 1))
    np.testing.assert_allclose(sdr.unscale_salary(y), [0.0, 50_000.0, sdr.PUBLIC_SALARY_BOUND])
    with pytest.raises(DataError):
        sdr.scale_salary([-1.0])
    with pytest.raises(DataError):
        sdr.scale_salary([sdr.PUBLIC_SALARY_BOUND + 1])


def test_standins_match_published_summaries_and_are_seeded():
    a = sdr.standin_censoring(1000, seed=5)
    b = sdr.standin_censoring(1000, seed=5)
    pd.testing.assert_frame_equal(a.frame, b.frame)
    assert a.is_standin
    s = sdr.salary_summary(a.salary)
    for k, v in sdr.CENSORING_TARGETS.items():
        assert abs(s[k] / v - 1) < 0.03, (k, s[k], v)
    assert set(a.frame["age_group"]) <= set(sdr.AGE_LEVELS)
    assert a.frame["weeks"].between(2, 52).all()
    assert (a.frame["weeks"] == 52).mean() > 0.7
    assert np.all(a.salary == np.round(a.salary))

    r = sdr.standin_reweighting(1000, seed=5)
    s = sdr.salary_summary(r.salary)
    for k in ("mean", "median", "sd"):
        assert abs(s[k] / sdr.REWEIGHTING_TARGETS[k] - 1) < 0.03, (k, s[k])
    assert s["min"] == 0 and s["max"] == 509_000
    tab = r.summary_table()
    assert list(tab.columns) == ["this sample", "published"]


def test_design_matrix():
    d = sdr.standin_censoring(200, seed=1)
    X = sdr.design_matrix(d.frame)
    assert X.shape == (200, 11)
    assert len(sdr.design_names()) == 11
    np.testing.assert_array_equal(X[:, 0], 1.0)
    assert np.all(np.abs(X[:, -1]) <= 1.0)
    np.testing.assert_array_equal(X[:, 1], (d.frame["gender"] == "F").to_numpy(dtype=float))
    assert np.all(X[:, 2:10].sum(axis=1) <= 1)


def test_subsample():
    d = sdr.standin_reweighting(100, seed=1)
    s = sdr.subsample(d, 30, seed=2)
    assert s.n == 30 and s.steps[-1]["n_after"] == 30
    pd.testing.assert_frame_equal(s.frame, sdr.subsample(d, 30, seed=2).frame)
    assert sdr.subsample(d, 500, seed=2).n == 100


@pytest.mark.parametrize("code", sdr.RESERVED_SALARY_CODES)
def test_reserved_salary_codes_refused_whatever_the_bound(tmp_path, code):
    f = _fixture_frame().astype({"SALARY": object})
    f.loc[5, "SALARY"] = code
    path = tmp_path / "x.csv"
    f.to_csv(path, index=False)
    # a bound above the code must not let it in as a salary
    with pytest.raises(sdr.SDRFileError, match=rf"column 'SALARY' \(salary\) has 1 reserved survey code\(s\) \[{code}\].*row 6.*`filters`"):
        sdr.load_sdr(path, salary_bound=20_000_000.0)


def test_reserved_salary_codes_can_be_filtered_out(tmp_path):
    f = _fixture_frame()
    f["SALARY"] = f["SALARY"].astype(object)
    f.loc[5, "SALARY"] = 9_999_998
    f["EMPLOYED"] = np.where(np.arange(len(f)) == 5, "N", "Y")
    path = tmp_path / "x.csv"
    f.to_csv(path, index=False)
    d = sdr.load_sdr(path, variables=("salary",), filters={"EMPLOYED": ["Y"]})
    assert d.n == len(f) - 1 and d.salary.max() < 9_999_998


@pytest.mark.parametrize("s", [[50_000.0, np.nan], [np.inf]])
def test_scale_salary_nan_names_s(s):
    with pytest.raises(DataError, match=r"`s` has 1 non-finite value"):
        sdr.scale_salary(s)


def test_scale_salary_out_of_bound_names_s():
    with pytest.raises(DataError, match=r"`s` must lie in \[0, 1,000,000\].*position 1"):
        sdr.scale_salary([10.0, 2_000_000.0])
    with pytest.raises(DataError, match=r"`bound` must be finite and > 0"):
        sdr.scale_salary([10.0], bound=np.nan)
