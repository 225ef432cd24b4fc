"""SDR loader (dpsynth_book.sdr.loader): fixture files written here, in the PUF's layout."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpsynth_book import sdr
from dpsynth_book.sdr import loader


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


def test_zero_salary_is_kept(tmp_path):
    f = _fixture_frame()
    f.loc[0, "SALARY"] = 0
    path = tmp_path / "x.csv"
    f.to_csv(path, index=False)
    d = sdr.load_sdr(path)
    assert d.n == len(f) and d.salary.min() == 0


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
    msg = rf"column 'SALARY' \(salary\) has 1 reserved survey code\(s\) \[{code}\].*row 6.*`filters`"
    with pytest.raises(sdr.SDRFileError, match=msg):
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


def test_top_coded_salary_at_the_bound_is_accepted(tmp_path):
    f = _fixture_frame()
    f.loc[1, "SALARY"] = int(sdr.PUBLIC_SALARY_BOUND)
    path = tmp_path / "x.csv"
    f.to_csv(path, index=False)
    assert loader.load_sdr(path).salary.max() == sdr.PUBLIC_SALARY_BOUND


def test_file_digest_changes_with_content(puf_csv, tmp_path):
    other = tmp_path / "other.csv"
    other.write_text(puf_csv.read_text() + "\n")
    assert len(loader.file_digest(puf_csv)) == 16
    assert loader.file_digest(puf_csv) == sdr.file_digest(puf_csv) != loader.file_digest(other)
