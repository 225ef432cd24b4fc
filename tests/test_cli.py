"""The ``dpsynth`` command line: fit → save → release → ledger, budget refusal, and one-line errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpsynth import Synthesizer
from dpsynth.cli import main
from dpsynth.release.ledger import Ledger

SRC = str(Path(__file__).resolve().parents[1] / "src")
# the sampler settings of tests/test_synthesizer.py (CFG, PRIORS): convergence does not hinge on the seed
SAMPLER = [
    "--draws",
    "1500",
    "--tune",
    "1000",
    "--chains",
    "2",
    "--ess-min",
    "100",
    "--model-param",
    "mu_prior_sd=2",
    "--model-param",
    "sigma_prior_scale=1",
]
#: The total with one record replaced (covariates carried): a window of 4, as the Synthesizer tests use.
EPS = 8.0


def wages(n: int = 120, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    region = rng.choice(["north", "south", "west"], n)
    log_w = 0.2 + 0.4 * (region == "south") + rng.normal(0.0, 0.3, n)
    return pd.DataFrame({"wage": np.exp(log_w), "region": region, "age": rng.integers(20, 60, n)})


def fit_args(data, out, *extra):
    return [
        "fit",
        str(data),
        "--target",
        "wage",
        "--covariates",
        "region",
        "age",
        "--model",
        "lognormal",
        "--mechanism",
        "censor_uw",
        "--eps",
        str(EPS),
        *SAMPLER,
        "--seed",
        "1",
        "--out",
        str(out),
        *extra,
    ]


def error_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert err and err[-1].startswith("dpsynth: error: "), err
    assert not any("Traceback" in line for line in err)
    return err[-1]


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    """A synthesizer fitted by the CLI from a CSV that is deleted afterwards."""
    d = tmp_path_factory.mktemp("cli")
    data = d / "confidential.csv"
    wages().to_csv(data, index=False)
    code = main(fit_args(data, d / "syn.json"))
    assert code == 0
    data.unlink()  # the confidential file is gone before any release
    return d / "syn.json"


def ledger_of(syn) -> Ledger:
    s = Synthesizer.load(syn)
    return Ledger(s.dataset)


@pytest.mark.slow
def test_fit_release_twice_ledger_then_budget_refusal(fitted, tmp_path, capsys):
    """Acceptance: fit → save → (delete the data) → release twice → ledger 2·eps → over budget refused."""
    syn = tmp_path / "syn.json"
    syn.write_bytes(fitted.read_bytes())
    content = json.loads(syn.read_text())["content"]
    assert "wage" not in content["public_covariates"] and content["confidential"] is True
    assert not (fitted.parent / "confidential.csv").exists()
    ledger = ledger_of(syn)
    spent = ledger.total()
    eps = EPS  # the total asked, with one record replaced (covariates carried: their rows and n are public)
    budget = str(spent + 2 * eps)
    assert main(["release", str(syn), "--out", str(tmp_path / "r1.csv"), "--budget", budget, "--seed",
                 "1", "--allow-research"]) == 0
    out = capsys.readouterr().out
    assert "strict DP" in out and "eps = 8 with one record replaced" in out and "Delta" not in out
    # the second release through the installed entry point's module, in a fresh process
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "dpsynth",
            "release",
            str(syn),
            "--out",
            str(tmp_path / "r2.parquet"),
            "--budget",
            budget,
            "--seed",
            "2",
            "--allow-research",
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": SRC},
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    r1, r2 = pd.read_csv(tmp_path / "r1.csv"), pd.read_parquet(tmp_path / "r2.parquet")
    assert list(r1.columns) == list(r2.columns) == ["wage", "region", "age"] and len(r1) == len(r2) == 120
    assert (r1["wage"] > 0).all() and not np.allclose(r1["wage"], r2["wage"])
    assert ledger.total() == pytest.approx(spent + 2 * eps)

    assert main(["ledger", str(syn)]) == 0
    out = capsys.readouterr().out
    assert f"total eps = {spent + 2 * eps:g} with one record replaced" in out
    assert str(tmp_path / "r1.csv") in out and str(tmp_path / "r2.parquet") in out

    before = ledger.path.read_bytes()
    assert main(["release", str(syn), "--out", str(tmp_path / "r3.csv"), "--budget", budget, "--seed",
                 "3", "--allow-research"]) == 2
    line = error_line(capsys)
    assert "release refused" in line and "budget" in line
    assert not (tmp_path / "r3.csv").exists() and ledger.path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r1.csv", "r2.parquet", "syn.json"]


@pytest.mark.slow
def test_release_with_public_covariates_and_an_unseen_level(fitted, tmp_path, capsys):
    syn = tmp_path / "syn.json"
    syn.write_bytes(fitted.read_bytes())
    pub = tmp_path / "public.parquet"
    pd.DataFrame({"region": ["north", "west"] * 5, "age": [30] * 10, "other": range(10)}).to_parquet(pub)
    assert main(["release", str(syn), "--out", str(tmp_path / "ok.csv"), "--covariates-from",
                 str(pub), "--allow-research"]) == 0
    assert "10 rows, a size declared public" in capsys.readouterr().out
    ok = pd.read_csv(tmp_path / "ok.csv")
    assert list(ok.columns) == ["wage", "region", "age"] and list(ok["region"]) == ["north", "west"] * 5
    ledger = ledger_of(syn)
    before = ledger.path.read_bytes()
    new = tmp_path / "new.csv"
    pd.DataFrame({"region": ["north", "east"], "age": [30, 40]}).to_csv(new, index=False)
    assert main(["release", str(syn), "--out", str(tmp_path / "bad.csv"), "--covariates-from",
                 str(new), "--allow-research"]) == 2
    line = error_line(capsys)
    assert "covariate 'region'" in line and "['east'] not seen at fit time" in line
    assert not (tmp_path / "bad.csv").exists() and ledger.path.read_bytes() == before
    # a covariate column missing from the public file
    pd.DataFrame({"region": ["north"]}).to_csv(new, index=False)
    assert main(["release", str(syn), "--out", str(tmp_path / "bad.csv"), "--covariates-from",
                 str(new), "--allow-research"]) == 2
    assert "column 'age'" in error_line(capsys)
    assert not (tmp_path / "bad.csv").exists()


def test_hand_edited_synthesizer_is_refused(fitted, tmp_path, capsys):
    doc = json.loads(fitted.read_text())
    doc["content"]["privacy"]["budget"]["total"] = 0.1
    syn = tmp_path / "edited.json"
    syn.write_text(json.dumps(doc))
    assert main(["release", "--allow-research", str(syn), "--out", str(tmp_path / "r.csv")]) == 2
    assert "do not match their MAC" in error_line(capsys)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["edited.json"]


@pytest.mark.slow
def test_an_edited_ledger_stops_the_next_release_with_one_line(fitted, tmp_path, capsys):
    syn = tmp_path / "syn.json"
    syn.write_bytes(fitted.read_bytes())
    assert main(["release", "--allow-research", str(syn), "--out", str(tmp_path / "r1.csv"), "--seed", "5"]) == 0
    ledger = ledger_of(syn)
    saved = ledger.path.read_bytes()
    subprocess.run(["sed", "-i", 's/"guarantee": "DP"/"guarantee": "aDP"/', str(ledger.path)], check=True)
    try:
        assert main(["release", "--allow-research", str(syn), "--out", str(tmp_path / "r2.csv"), "--seed", "6"]) == 2
        line = error_line(capsys)
        assert f"ledger {ledger.path} line 2" in line and "no release of it is booked" in line
        assert "backup" not in line
        assert not (tmp_path / "r2.csv").exists()
        assert main(["ledger", str(syn)]) == 2
    finally:
        ledger.path.write_bytes(saved)  # the module's other tests use this data set's ledger


def test_fit_does_not_overwrite_without_force(tmp_path, csv, capsys):
    data = csv(wages(30))
    out = tmp_path / "s.json"
    out.write_text("{}")
    assert main(fit_args(data, out)) == 2
    assert "exists already" in error_line(capsys) and out.read_text() == "{}"
    assert main(fit_args(data, tmp_path / "missing" / "s.json")) == 2
    assert "does not exist; create it first" in error_line(capsys)
    assert not (tmp_path / "missing").exists()


@pytest.mark.slow
def test_fit_with_force_replaces(tmp_path, csv, capsys):
    data = csv(wages(30))
    out = tmp_path / "s.json"
    out.write_text("{}")
    assert main(fit_args(data, out, "--force")) == 0
    assert json.loads(out.read_text())["format"] == "dpsynth.synthesizer"
    err = capsys.readouterr().err
    assert "owner-readable only" in err and "CONFIDENTIAL (computed from the data; do not publish)" in err


def test_a_bom_semicolon_csv_needs_sep(tmp_path, capsys):
    """Acceptance: a CSV with a byte-order mark and ';' separators reads with --sep ';'."""
    data = tmp_path / "data.csv"
    wages(30).to_csv(data, index=False, sep=";", encoding="utf-8-sig")
    args = fit_args(data, tmp_path / "s.json")
    assert main(args) == 2
    line = error_line(capsys)
    assert "was read as one column" in line and "--sep ';'" in line
    from dpsynth.cli import read_table

    df = read_table(data, "DATA", sep=";")
    assert list(df.columns) == ["wage", "region", "age"] and len(df) == 30  # the BOM is not in the first name


# ----------------------------------------------------------------------------------- bad input: fast, no fit


@pytest.fixture
def csv(tmp_path):
    def write(df: pd.DataFrame, name: str = "data.csv") -> Path:
        p = tmp_path / name
        df.to_csv(p, index=False)
        return p

    return write


def assert_nothing_written(tmp_path, *inputs):
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in inputs)


def test_missing_data_file(tmp_path, capsys):
    assert main(fit_args(tmp_path / "nope.csv", tmp_path / "syn.json")) == 2
    line = error_line(capsys)
    assert "DATA file" in line and "nope.csv" in line and "does not exist" in line
    assert_nothing_written(tmp_path)


def test_missing_synthesizer_file(tmp_path, capsys):
    assert main(["release", "--allow-research", str(tmp_path / "syn.json"), "--out", str(tmp_path / "r.csv")]) == 2
    assert "SYNTH file" in error_line(capsys)
    assert main(["ledger", str(tmp_path / "syn.json")]) == 2
    assert "does not exist" in error_line(capsys)
    assert_nothing_written(tmp_path)


def test_missing_column(tmp_path, csv, capsys):
    data = csv(wages())
    args = fit_args(data, tmp_path / "syn.json")
    args[args.index("--target") + 1] = "pay"
    assert main(args) == 2
    line = error_line(capsys)
    assert "column 'pay' (--target) is not in DATA" in line and "'wage'" in line
    args = fit_args(data, tmp_path / "syn.json")
    args[args.index("--covariates") + 1] = "regio"
    assert main(args) == 2
    assert "column 'regio' (--covariates)" in error_line(capsys)
    assert_nothing_written(tmp_path, data)


def test_non_numeric_values(tmp_path, csv, capsys):
    df = wages(10).astype({"wage": object})
    df.loc[4, "wage"] = "twelve"
    data = csv(df)
    assert main(fit_args(data, tmp_path / "syn.json")) == 2
    line = error_line(capsys)
    assert "target column 'wage' holds numbers and text: 1 of 10 value(s) are not numbers (first at row 4: " \
           "'twelve'). Clean or convert the column" in line
    df.loc[4, "wage"] = "n/a"  # read as missing
    data = csv(df)
    assert main(fit_args(data, tmp_path / "syn.json")) == 2
    line = error_line(capsys)
    assert "column 'wage' (--target)" in line and "missing value(s) (first at row 4" in line
    assert_nothing_written(tmp_path, data)


def test_thousands_separators(tmp_path, csv, capsys):
    df = wages(10)
    df["wage"] = [f"{1000 * w:,.2f}" for w in df["wage"]]
    df.loc[0, "wage"] = "1,200.50"
    data = csv(df)
    assert main(fit_args(data, tmp_path / "syn.json")) == 2
    line = error_line(capsys)
    assert "column 'wage' (--target)" in line and "thousands separators" in line and "'1,200.50'" in line
    assert "--thousands" in line
    assert_nothing_written(tmp_path, data)


def test_values_outside_the_support(tmp_path, csv, capsys):
    df = wages(10)
    df.loc[3, "wage"] = -2.0
    data = csv(df)
    assert main(fit_args(data, tmp_path / "syn.json")) == 2
    line = error_line(capsys)
    assert "column 'wage' (--target) does not fit the lognormal model" in line and "support" in line
    assert_nothing_written(tmp_path, data)


def test_values_above_the_public_bound_are_clamped(tmp_path, csv, capsys):
    df = wages(10)
    df.loc[2, "wage"] = 50.0
    data = csv(df)
    args = [
        "fit",
        str(data),
        "--target",
        "wage",
        "--covariates",
        "region",
        "age",
        "--model",
        "lognormal",
        "--mechanism",
        "ph",
        "--eps",
        "1",
        "--lower",
        "0",
        "--upper",
        "10",
        "--out",
        str(tmp_path / "syn.json"),
    ]
    assert main(args) == 0  # public bounds clamp, never refuse: a refusal would tell whether one record lies outside
    out, err = capsys.readouterr()
    assert "values outside the public bounds [0, 10] are clamped to them" in out
    assert "1 value(s) clamped to the public bounds" in err and "CONFIDENTIAL" in err  # for the data holder only
    assert "clamped to the public bounds" not in out.replace("are clamped to them", "")


#: Bad input the command line refuses in one line before the home is touched, and the message (the API's own).
BAD_DATA = {
    "a value beyond float32": (lambda df: df.assign(wage=df["wage"].where(df.index != 3, 1e300)),
                               "target column 'wage' has the value 1e+300 at row 3, beyond what dpsynth holds"),
    "a covariate beyond float32": (lambda df: df.assign(age=df["age"].astype(float).where(df.index != 4, 1e39)),
                                   "covariate 'age' has the value 1e+39 at row 4"),
    "NaN in a covariate": (lambda df: df.assign(age=df["age"].astype(float).where(df.index != 2)),
                           "covariate 'age' has missing"),
    "one record": (lambda df: df.iloc[:1], "`data` has 1 record(s); synthesis needs at least 2"),
    "a constant target": (lambda df: df.assign(wage=3.0), "holds the same value in every record: the lognormal model"),
}


@pytest.mark.parametrize("case", list(BAD_DATA))
def test_bad_data_is_refused_as_by_the_api_before_the_home_is_touched(tmp_path, csv, capsys, monkeypatch, case):
    """Acceptance (C): the command line and the API apply the same checks (dpsynth.validation), all of them before the
    home (its key, its ledgers) is touched."""
    make, message = BAD_DATA[case]
    home = tmp_path / "fresh-home"
    monkeypatch.setenv("DPSYNTH_HOME", str(home))
    data = csv(make(wages(10)))
    assert main(fit_args(data, tmp_path / "syn.json")) == 2
    assert message in error_line(capsys)
    assert not home.exists()
    assert_nothing_written(tmp_path, data)


def test_bad_arguments_are_one_line_errors(tmp_path, csv, capsys):
    data = csv(wages(10))
    # eps missing for a censored mechanism: the package's message, as one line
    args = fit_args(data, tmp_path / "syn.json")
    i = args.index("--eps")
    del args[i : i + 2]
    assert main(args) == 2
    assert "pass eps=" in error_line(capsys)
    assert main(fit_args(data, tmp_path / "syn.txt")) == 2
    assert "--out" in error_line(capsys)
    assert main(["release", "--allow-research", str(tmp_path / "s.json"), "--out", str(tmp_path / "r.xlsx")]) == 2
    assert ".csv or .parquet" in error_line(capsys)
    assert main(["fit", str(data), "--target", "wage"]) == 2  # argparse usage error, no traceback
    assert "required" in capsys.readouterr().err
    assert_nothing_written(tmp_path, data)


@pytest.mark.slow
def test_ph_fit_saves_atomically_and_releases(tmp_path, csv, capsys):
    """A fit without MCMC: the saved file is complete, and no temporary file is left behind."""
    data = csv(wages(50))
    syn = tmp_path / "syn.json"
    args = [
        "fit",
        str(data),
        "--target",
        "wage",
        "--covariates",
        "region",
        "age",
        "--model",
        "lognormal",
        "--mechanism",
        "ph",
        "--eps",
        "1",
        "--lower",
        "0",
        "--upper",
        "10",
        "--seed",
        "0",
        "--out",
        str(syn),
    ]
    assert main(args) == 0
    cap = capsys.readouterr()
    # with covariates the relation is "replace" (their rows are public): eps = 1 is the total under it
    assert "PH (strict DP): eps = 1 with one record replaced for one released file" in cap.out
    assert "privacy budget: eps = 1 with one record replaced" in cap.err  # printed before the fit
    assert "fitting lognormal / ph (50 records, mechanism ph, total eps = 1" in cap.err
    assert "CONFIDENTIAL (computed from the data; do not publish): the fit took" in cap.err  # its time: the data's
    assert_nothing_written(tmp_path, data, syn)
    assert main(["release", "--allow-research", str(syn), "--out", str(tmp_path / "r.csv"), "--seed", "1"]) == 0
    assert pd.read_csv(tmp_path / "r.csv")["wage"].between(0, 10).all()


# ------------------------------------------------------------------------------- kinds of target


def modes(n: int = 300, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    z = rng.normal(size=n)
    eta = np.column_stack([np.zeros(n), 1.0 * z, -1.0 * z])
    prob = np.exp(eta) / np.exp(eta).sum(axis=1, keepdims=True)
    mode = np.array(["walk", "bus", "car"])[[rng.choice(3, p=pr) for pr in prob]]
    return pd.DataFrame({"mode": mode, "z": z})


def test_a_text_target_asks_for_its_levels(tmp_path, csv, capsys):
    data = csv(modes(40))
    args = ["fit", str(data), "--target", "mode", "--covariates", "z", "--eps", "2", "--out", str(tmp_path / "m.json")]
    assert main(args) == 2
    line = error_line(capsys)
    assert "column 'mode' (--target)" in line and "holds text" in line and "--target-levels bus car walk" in line
    assert main([*args, "--target-levels", "walk", "bus"]) == 2
    line = error_line(capsys)
    assert "['car'] that are not among --target-levels ['walk', 'bus']" in line
    assert_nothing_written(tmp_path, data)


@pytest.mark.slow
def test_a_categorical_target_through_fit_release_and_report(tmp_path, csv, capsys):
    frame = modes()
    data = csv(frame)
    syn = tmp_path / "m.json"
    assert (
        main(
            [
                "fit",
                str(data),
                "--target",
                "mode",
                "--target-levels",
                "walk",
                "bus",
                "car",
                "ferry",
                "--covariates",
                "z",
                "--mechanism",
                "censor_ref",
                "--eps",
                "3",
                "--seed",
                "2",
                "--out",
                str(syn),
                "--quiet",
            ]
        )
        == 0
    )
    err = capsys.readouterr().err
    assert "model: multinomial, chosen from column 'mode''s type" in err and "'ferry'" in err
    out = tmp_path / "released.csv"
    assert main(["release", "--allow-research", str(syn), "--out", str(out), "--seed", "3", "--quiet"]) == 0
    released = pd.read_csv(out)
    assert list(released.columns) == ["mode", "z"] and set(released["mode"]) <= {"walk", "bus", "car", "ferry"}
    assert main(["report", str(syn), "--data", str(data), "--released", str(out), "--out", str(tmp_path / "r")]) == 0
    assert (tmp_path / "r" / "figure-1-shares.png").is_file()


# ------------------------------------------------------------------------------- the whole-table release


def tables_frame(n: int = 300) -> pd.DataFrame:
    import sys

    sys.path.insert(0, str(Path(__file__).parent))
    from test_table_synthesizer import table

    df = table(n)
    df["mode"] = df["mode"].astype(str)
    return df


def test_table_arguments_are_one_line_errors(tmp_path, csv, capsys):
    data = csv(tables_frame(40))
    base = [
        "fit",
        str(data),
        "--targets",
        "income",
        "visits",
        "mode",
        "--covariates",
        "z",
        "region",
        "--eps",
        "3",
        "--out",
        str(tmp_path / "t.json"),
    ]
    assert main(base) == 2
    assert "column 'mode' (--targets)" in (line := error_line(capsys)) and "--levels mode=bus,car" in line
    assert main([*base, "--levels", "mode"]) == 2
    assert "must be COLUMN=LEVEL,LEVEL" in error_line(capsys)
    assert main([*base, "--levels", "pay=a,b"]) == 2
    assert "column 'pay' is not one of --targets" in error_line(capsys)
    assert main([*base, "--levels", "mode=bus,car,walk", "--target", "income"]) == 2
    assert "--targets (several columns, the whole-table release) goes without --target" in error_line(capsys)
    assert main(["fit", str(data), "--covariates", "z", "--eps", "3", "--out", str(tmp_path / "t.json")]) == 2
    assert "give the confidential column: --target COL" in error_line(capsys)
    assert_nothing_written(tmp_path, data)


@pytest.mark.slow
def test_a_table_through_fit_release_and_ledger(tmp_path, csv, capsys):
    data = csv(tables_frame())
    syn = tmp_path / "t.json"
    assert (
        main(
            [
                "fit",
                str(data),
                "--targets",
                "income",
                "visits",
                "mode",
                "--levels",
                "mode=bus,car,walk",
                "--covariates",
                "z",
                "region",
                "--mechanism",
                "censor_ref",
                "--eps",
                "12",
                # 300 records: the DP reference needs more than the default share (the flag reaches every column)
                "--reference-eps",
                "2",
                "--seed",
                "3",
                "--out",
                str(syn),
                "--quiet",
            ]
        )
        == 0
    )
    statement = capsys.readouterr().out
    assert "Whole-table release of 3 confidential column(s)" in statement and "Split: income:" in statement
    out = tmp_path / "released.csv"
    assert main(["release", "--allow-research", str(syn), "--out", str(out), "--seed", "4", "--quiet"]) == 0
    released = pd.read_csv(out)
    assert list(released.columns) == ["income", "visits", "mode", "z", "region"]
    assert set(released["mode"]) <= {"bus", "car", "walk"} and released["visits"].dtype == np.int64
    capsys.readouterr()
    assert main(["ledger", str(syn)]) == 0
    text = capsys.readouterr().out
    assert "Table(Censor_ref, Censor_ref, Censor_ref)" in text and "1 release(s)" in text
    report = tmp_path / "report"
    assert main(["report", str(syn), "--data", str(data), "--released", str(out), "--out", str(report)]) == 0
    assert (report / "report.html").exists() and (report / "figure-2-associations.png").exists()


def test_a_suggested_levels_flag_is_quoted_for_the_shell(tmp_path, csv, capsys):
    """Issue 28: a suggestion a user pastes runs as it reads: levels with spaces, '=' or '<' are quoted."""
    import shlex

    frame = pd.DataFrame({"health": ["<=Good", "Very Good", "<=Good", "Very Good"] * 10, "z": np.arange(40.0)})
    data = csv(frame)
    assert main(["fit", str(data), "--targets", "health", "--covariates", "z", "--eps", "1",
                 "--out", str(tmp_path / "t.json")]) == 2
    line = error_line(capsys)
    suggested = line.split("public levels, e.g. ")[1].split(" (the values")[0]
    assert shlex.split(suggested) == ["--levels", "health=<=Good,Very Good"]
    assert main(["fit", str(data), "--target", "health", "--covariates", "z", "--eps", "1",
                 "--out", str(tmp_path / "s.json")]) == 2
    suggested = error_line(capsys).split("public levels, e.g. ")[1].split(" (the values")[0]
    assert shlex.split(suggested) == ["--target-levels", "<=Good", "Very Good"]


def test_columns_that_are_neither_targets_nor_covariates_are_refused_or_dropped_on_request(tmp_path, csv, capsys):
    """Issue 28: the command line refuses what the API refuses, unless --drop-other-columns says otherwise."""
    data = csv(wages(30).assign(extra=1.0, other="x"))
    assert main(fit_args(data, tmp_path / "s.json")) == 2
    line = error_line(capsys)
    assert "['extra', 'other'] that are neither targets nor covariates" in line and "--drop-other-columns" in line
    assert not (tmp_path / "s.json").exists()


def test_duplicate_column_names_are_refused_in_one_line(tmp_path, capsys):
    data = tmp_path / "dup.csv"
    data.write_text("wage,region,wage\n1.0,a,2.0\n2.0,b,3.0\n")
    assert main(fit_args(data, tmp_path / "s.json")) == 2
    line = error_line(capsys)
    assert "wage" in line and "column" in line


def test_duplicate_columns_in_a_dataframe_are_refused_by_the_api():
    from dpsynth.validation import DataError

    df = pd.DataFrame([[1.0, 2.0, 3.0]] * 5, columns=["wage", "age", "wage"])
    with pytest.raises(DataError, match=r"two or more columns named \['wage'\]"):
        Synthesizer(df, "wage", covariates=["age"], eps=1.0)
