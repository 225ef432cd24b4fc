"""``mechanism="auto"``, the default of ``Synthesizer`` and of ``dpsynth fit``: the book's decision table.

The expected choice is always read from :func:`dpsynth.choice.column_choice` (the shipped table, whatever it
holds), never written here: these tests hold the Synthesizer and the command line to the table.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpsynth import Synthesizer, choice
from dpsynth.cli import main
from dpsynth.validation import DataError

#: Public bounds of the test columns (chosen by their construction, not read from them).
CONTINUOUS_BOUNDS = (0.0, 400.0)
COUNT_BOUNDS = (0, 60)
#: A number of records above and below choice.SMALL_N.
LARGE_N, SMALL_N = 640, 200


def frame(kind: str, n: int, covariates: bool, seed: int = 0) -> pd.DataFrame:
    """A real-ish column of ``kind`` (a positive continuous one, a count, a pandas Categorical) with a categorical and a
    numeric covariate when asked."""
    rng = np.random.default_rng(seed)
    region = rng.choice(["north", "south", "west"], n)
    age = rng.integers(20, 60, n).astype(float)
    if kind == "continuous":
        y = np.exp(2.5 + 0.3 * (region == "south") + 0.01 * (age - 40) + rng.normal(0.0, 0.4, n))
    elif kind == "count":
        y = rng.poisson(4.0 + 2.0 * (region == "south"), n).astype(np.int64)
    else:
        y = pd.Categorical(rng.choice(["bus", "car", "bike"], n), categories=["bike", "bus", "car"])
    df = pd.DataFrame({"y": y})
    if covariates:
        df["region"] = pd.Categorical(region, categories=["north", "south", "west"])
        df["age"] = age
    return df


def situation_data(situation: str) -> list[tuple[str, int, bool]]:
    """(kind, n, with covariates) of data in ``situation`` (several where it holds several kinds of column)."""
    return {
        "bounded marginal": [("continuous", LARGE_N, False)],
        "regression": [("continuous", LARGE_N, True)],
        "count": [("count", LARGE_N, True), ("count", LARGE_N, False)],
        "category": [("categorical", LARGE_N, True), ("categorical", LARGE_N, False)],
        "small n, marginal": [("continuous", SMALL_N, False)],  # n public: one record replaced (REPLACED_ALONE)
        "small n, regression": [("continuous", SMALL_N, True)],
    }[situation]


#: Situations whose column without covariates is read with its number of records public (one record replaced).
REPLACED_ALONE = ("small n, marginal",)
#: (situation, eps, kind, n, with covariates, with bounds): every cell of the table, with and without public bounds
#: (a categorical target takes none).
CASES = [(sit, eps, kind, n, covs, b) for sit, row in choice.decision_table().items() for eps in sorted(row)
         for kind, n, covs in situation_data(sit) for b in (True, False) if not (b and kind == "categorical")]


def build(kind, n, covs, eps, bounds, **kw) -> Synthesizer:
    df = frame(kind, n, covs)
    return Synthesizer(df, "y", covariates=["region", "age"] if covs else None, eps=eps, bounds=bounds,
                       progress=False, **kw)


@pytest.mark.filterwarnings("ignore::dpsynth.synthesizer.CovariatesIgnoredWarning")
@pytest.mark.parametrize(("situation", "eps", "kind", "n", "covs", "with_bounds"), CASES,
                         ids=[f"{s}-{e:g}-{k}-{n}-{'cov' if c else 'alone'}-{'bounds' if b else 'no-bounds'}"
                              for s, e, k, n, c, b in CASES])
def test_auto_is_the_decision_table_at_every_situation_and_eps(situation, eps, kind, n, covs, with_bounds):
    bounds = None if not with_bounds else (COUNT_BOUNDS if kind == "count" else CONTINUOUS_BOUNDS)
    # n is public with one record replaced, the default with covariates; without them it is not read
    replaced = covs or situation in REPLACED_ALONE
    public_n = n if replaced else None
    assert choice.situation_of(kind, public_n, has_covariates=covs) == situation  # the data is in the situation
    want = choice.column_choice(kind, eps, public_n, has_covariates=covs, bounds=bounds)
    s = build(kind, n, covs, eps, bounds, **({} if covs or not replaced else {"neighbours": "replace"}))
    assert s.choice == want and s.mechanism_requested == choice.AUTO
    assert s.mechanism == want.mechanism and s.fitted is False  # construction only: nothing fitted
    assert s.budget.total == pytest.approx(eps)
    if kind != "categorical":  # (a categorical one runs on its public level codes' range)
        for k in ("lower", "upper"):
            assert s.plan.params.get(k) == want.params.get(k)  # the bounds the mechanism runs with
    assert s.calibrate == want.calibrate
    assert s.choice.reason.startswith("auto:")
    row = choice.decision_table()[situation]
    cell = row[max([e for e in row if e <= eps], default=min(row))]
    if not with_bounds and cell["needs_bounds"] and cell["mechanism"] is not None:
        assert s.mechanism == "censor_ref" and s.calibrate is None and "bounds" in s.choice.reason
        assert "--lower and --upper" in s.choice.reason  # the knob that gets the table's pick, in both interfaces


def test_between_tabulated_eps_the_cell_at_or_below_is_read():
    grid = sorted(choice.decision_table()["regression"])
    s = build("continuous", LARGE_N, True, (grid[0] + grid[1]) / 2, CONTINUOUS_BOUNDS)
    at = choice.column_choice("continuous", grid[0], LARGE_N, has_covariates=True, bounds=CONTINUOUS_BOUNDS)
    assert (s.choice.mechanism, s.choice.params, s.choice.calibrate) == (at.mechanism, at.params, at.calibrate)


def test_with_one_record_removed_n_is_not_read():
    """With covariates but neighbours='remove', n is not public: a small file is not put in the "small n" row."""
    s = build("continuous", SMALL_N, True, 2.0, None, neighbours="remove")
    assert s.choice == choice.column_choice("continuous", 2.0, None, has_covariates=True)


def test_the_reason_is_printed_with_progress_only(capsys):
    df = frame("continuous", LARGE_N, True)
    s = Synthesizer(df, "y", covariates=["region", "age"], eps=1.0, progress=True)
    err = capsys.readouterr().err
    assert s.choice.reason in err and err.lstrip().startswith("auto:")
    Synthesizer(df, "y", covariates=["region", "age"], eps=1.0, progress=False)
    assert "auto:" not in capsys.readouterr().err
    Synthesizer(df, "y", covariates=["region", "age"], eps=1.0, mechanism="censor_ref", progress=True)
    assert "auto:" not in capsys.readouterr().err


@pytest.mark.parametrize("bounds", [(5.0, 1.0), (3.0, 3.0), (1.0,), 7.0, "wide", {"lower": 1.0}, (0.0, np.inf),
                                    (0.0, True)])
def test_bad_bounds_name_bounds(bounds):
    with pytest.raises(DataError, match="`bounds`"):
        build("continuous", LARGE_N, True, 1.0, bounds)


def test_bounds_on_a_categorical_target_are_refused():
    with pytest.raises(DataError, match="`bounds`.*categorical"):
        build("categorical", LARGE_N, True, 1.0, (0.0, 2.0))


def test_auto_needs_the_total_eps():
    with pytest.raises(DataError, match="auto needs the total eps"):
        build("continuous", LARGE_N, True, None, None)


def test_mechanism_params_bounds_must_agree_with_bounds():
    with pytest.raises(DataError, match="disagrees"):
        build("continuous", LARGE_N, False, 1.0, (0.0, 100.0), mechanism_params={"lower": 0.0, "upper": 90.0})
    with pytest.raises(DataError, match="disagrees"):
        build("continuous", LARGE_N, False, 1.0, (0.0, 100.0), mechanism="ph",
              mechanism_params={"lower": 0.0, "upper": 90.0})


def test_mechanism_params_bounds_count_as_bounds_under_auto():
    a = build("continuous", LARGE_N, False, 1.0, None, mechanism_params={"lower": 0.0, "upper": 400.0})
    b = build("continuous", LARGE_N, False, 1.0, (0.0, 400.0))
    assert a.choice == b.choice and a.plan.params == b.plan.params


def test_a_user_calibrate_wins_over_the_choice():
    cal = {"lower": 0.0, "upper": 300.0, "bins": 20}
    s = build("continuous", LARGE_N, True, 1.0, None, calibrate=cal)
    if not (s.spec.uses_model and s.spec.takes_eps):  # pragma: no cover - a model-free pick takes no calibration
        pytest.skip("the table picks a model-free mechanism here")
    assert s.calibrate == cal


def test_named_mechanism_takes_bounds_as_its_lower_and_upper():
    s = build("continuous", LARGE_N, False, 1.0, (0.0, 400.0), mechanism="ph")
    assert s.choice is None and s.mechanism_requested == "ph"
    assert (s.plan.params["lower"], s.plan.params["upper"]) == (0.0, 400.0)
    with pytest.raises(DataError, match=r"`bounds`.*\bph\b.*calibrate="):
        build("continuous", LARGE_N, False, 1.0, (0.0, 400.0), mechanism="censor_ref")


def test_the_table_never_passes_auto_down():
    from dpsynth import TableSynthesizer

    # a categorical column first: the second column's design needs no fitted part
    df = frame("continuous", LARGE_N, True).assign(mode=frame("categorical", LARGE_N, False)["y"])
    t = TableSynthesizer(df, ["mode", "y"], ["region", "age"], eps=2.0, progress=False)
    for j, target in enumerate(t.targets):
        part = t._part(j)  # noqa: SLF001 - the column's Synthesizer, built as the fit builds it
        assert part.mechanism == t.mechanisms[target] != choice.AUTO
        assert part.choice is None and part.mechanism_requested == t.mechanisms[target]


# --------------------------------------------------------------------------------------------
# the command line
# --------------------------------------------------------------------------------------------


def cli_args(data, out, *extra):
    # short MCMC settings, should the table pick a model (only that the command runs is checked)
    return ["fit", str(data), "--target", "y", "--eps", "2", "--draws", "200", "--tune", "200", "--chains", "1",
            "--ess-min", "10", "--seed", "1", "--quiet", "--out", str(out), *extra]


def test_cli_default_is_auto_and_says_why(tmp_path, capsys):
    data = tmp_path / "d.csv"
    frame("continuous", 80, False).to_csv(data, index=False)
    lo, hi = CONTINUOUS_BOUNDS
    assert main(cli_args(data, tmp_path / "s.json", "--lower", str(lo), "--upper", str(hi))) == 0
    err = capsys.readouterr().err
    want = choice.column_choice("continuous", 2.0, None, has_covariates=False, bounds=CONTINUOUS_BOUNDS)
    assert f"dpsynth: {want.reason}" in err and "auto:" in err
    assert err.index("auto:") < err.index("fitting")
    assert f"mechanism {want.mechanism}" in err
    s = Synthesizer.load(tmp_path / "s.json")  # the saved synthesizer keeps the resolved key and the choice
    assert s.mechanism == want.mechanism and s.mechanism_requested == "auto" and s.choice == want


def test_cli_named_mechanism_prints_no_auto_line(tmp_path, capsys):
    data = tmp_path / "d.csv"
    frame("continuous", 80, False).to_csv(data, index=False)
    assert main(cli_args(data, tmp_path / "s.json", "--mechanism", "censor_ref")) == 0
    err = capsys.readouterr().err
    assert "auto:" not in err and "mechanism censor_ref" in err
    s = Synthesizer.load(tmp_path / "s.json")
    assert s.choice is None and s.mechanism_requested == "censor_ref"


def test_cli_auto_needs_eps_and_both_bounds(tmp_path, capsys):
    data = tmp_path / "d.csv"
    frame("continuous", 80, False).to_csv(data, index=False)
    args = [a for a in cli_args(data, tmp_path / "s.json") if a not in ("--eps", "2")]
    assert main(args) == 2
    assert "--eps" in capsys.readouterr().err
    assert main(cli_args(data, tmp_path / "s.json", "--lower", "0")) == 2
    assert "--lower and --upper" in capsys.readouterr().err
    assert not (tmp_path / "s.json").exists()
