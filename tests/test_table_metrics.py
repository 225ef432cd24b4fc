"""The measures of a whole-table release: marginals, pairwise associations, contingency tables, regressions."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpsynth.metrics import pmse
from dpsynth.table_metrics import (
    analysis_values,
    association,
    association_matrix,
    contingency_tvd,
    marginal_table,
    pairwise_table,
    regression_coverage,
    regression_table,
    table_features,
)
from dpsynth.validation import DataError

KINDS = {"wage": "continuous", "visits": "count", "mode": "categorical", "z": "continuous"}


def frame(n: int = 2000, rho: float = 0.7, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    z = rng.normal(size=n)
    e = rho * z + np.sqrt(1 - rho**2) * rng.normal(size=n)
    wage = np.exp(2 + 0.5 * e)
    visits = rng.poisson(np.exp(0.5 + 0.4 * e))
    mode = np.where(e + rng.normal(0, 0.5, n) > 0, "car", "bus")
    return pd.DataFrame({"wage": wage, "visits": visits, "mode": mode, "z": z})


def test_identical_tables_have_zero_distances():
    df = frame()
    m = marginal_table(df, df, KINDS)
    assert (m["distance"] == 0).all() and list(m["measure"]) == ["max ECDF", "max ECDF", "TVD", "max ECDF"]
    p = pairwise_table(df, df, KINDS)
    assert len(p) == 6 and (p["difference"] == 0).all() and (p["contingency_tvd"] == 0).all()


def test_association_measures_are_unit_free_and_named():
    df = frame()
    assert association(df.wage, df.z, "continuous", "continuous")[0] == "Spearman"
    assert association(df.wage, df["mode"], "continuous", "categorical")[0] == "eta"
    assert association(df["mode"], df["mode"], "categorical", "categorical") == ("Cramér's V", pytest.approx(1.0))
    a = association(df.wage, df.z, "continuous", "continuous")[1]
    b = association(df.wage * 1000, df.z, "continuous", "continuous")[1]
    assert a == pytest.approx(b) and 0.6 < a < 0.75


def test_independent_columns_lose_the_association():
    """Shuffling one column keeps its marginal and breaks its relations: the measures see exactly that."""
    df = frame()
    shuffled = df.copy()
    shuffled["wage"] = np.random.default_rng(1).permutation(df["wage"].to_numpy())
    assert marginal_table(df, shuffled, KINDS).loc["wage", "distance"] == 0
    p = pairwise_table(df, shuffled, KINDS).set_index(["a", "b"])
    assert abs(p.loc[("wage", "z"), "difference"]) > 0.5
    assert p.loc[("wage", "z"), "contingency_tvd"] > 0.2  # about 0.29 for rho = 0.7
    assert p.loc[("visits", "z"), "difference"] == 0
    m = association_matrix(shuffled, KINDS)
    assert np.allclose(m.to_numpy(), m.to_numpy().T, equal_nan=True) and (np.diag(m) == 1).all()


def test_contingency_cells_come_from_the_original():
    df = frame(500)
    syn = df.copy()
    syn["wage"] = df["wage"] * 10  # every synthetic wage above the original's top quintile edge
    assert contingency_tvd(df, syn, "wage", "mode", KINDS) > 0.7


def test_regression_table_side_by_side_and_off_scale_values():
    df = frame()
    r = regression_table(df, df, "wage", ["z", "mode", "visits"], KINDS)
    assert list(r.index) == ["intercept", "z", "mode=car", "visits"]
    assert np.allclose(r["original"], r["synthetic"]) and np.allclose(r["overlap"], 1)
    syn = df.copy()
    syn.loc[:9, "wage"] = 0.0  # no log
    r = regression_table(df, syn, "wage", ["z"], KINDS)
    assert r.attrs["dropped"] == {"original": 0, "synthetic": 10}
    assert r.loc["z", "original"] == pytest.approx(0.35, abs=0.05)  # 0.5 * rho on the log scale
    with pytest.raises(DataError, match="categorical"):
        regression_table(df, df, "mode", ["z"], KINDS)
    with pytest.raises(DataError, match="no entry for pay"):
        regression_table(df, df, "wage", ["pay"], KINDS)


def test_features_for_the_pmse():
    df = frame(400)
    f = table_features(df, KINDS)
    assert f.shape == (400, 4)  # wage, visits, mode=car, z
    assert np.allclose(f[:, 0], np.log(df.wage)) and np.allclose(f[:, 1], np.log1p(df.visits))
    shuffled = df.sample(frac=1.0, random_state=0).reset_index(drop=True)
    assert pmse(f, table_features(shuffled, KINDS, like=df)).pmse == pytest.approx(0.0, abs=1e-12)
    other = frame(400, seed=3)
    other["wage"] *= 3
    assert pmse(f, table_features(other, KINDS, like=df)).ratio > 10


def test_analysis_scale_is_decided_by_the_original():
    s = pd.Series([1.0, 2.0, 4.0])
    assert np.allclose(analysis_values(pd.Series([-1.0, 2.0]), "continuous", like=s), [np.nan, np.log(2)],
                       equal_nan=True)
    assert np.allclose(analysis_values(pd.Series([-1.0, 2.0]), "continuous"), [-1.0, 2.0])


@pytest.mark.parametrize(("kinds", "match"), [({}, "is empty"), ({"wage": "money"}, "use one of"),
                                              ({"pay": "continuous"}, "no column 'pay'")])
def test_bad_kinds_name_the_problem(kinds, match):
    with pytest.raises(DataError, match=match):
        marginal_table(frame(50), frame(50), kinds)


def _linear(n, rng, beta=(1.0, 2.0), sd=1.0):
    x = rng.normal(size=n)
    return pd.DataFrame({"y": beta[0] + beta[1] * x + rng.normal(0, sd, n), "x": x})


def _posterior_sets(original, m, rng, shift=0.0):
    """m fully synthetic tables, each from its own posterior draw of a correct model (flat priors)."""
    n = len(original)
    X = np.column_stack([np.ones(n), original["x"]])
    bhat, *_ = np.linalg.lstsq(X, original["y"], rcond=None)
    s = np.std(original["y"] - X @ bhat, ddof=2)
    cov = s**2 * np.linalg.inv(X.T @ X)
    out = []
    for _ in range(m):
        mu, sx = original["x"].mean() + rng.normal(0, original["x"].std() / np.sqrt(n)), original["x"].std()
        b = rng.multivariate_normal(bhat, cov) + [0.0, shift]
        x = rng.normal(mu, sx, n)
        out.append(pd.DataFrame({"y": b[0] + b[1] * x + rng.normal(0, s, n), "x": x}))
    return out


@pytest.mark.parametrize("rule", ["partial", "full"])
def test_combined_intervals_cover_the_confidential_estimate(rule):
    rng = np.random.default_rng(3)
    kinds = {"y": "continuous", "x": "continuous"}
    hits, widths = [], []
    for _ in range(60):
        orig = _linear(300, rng)
        cov = regression_coverage(orig, _posterior_sets(orig, 5, rng), "y", ["x"], kinds, rule=rule)
        assert list(cov.index) == ["x"]
        hits.append(bool(cov["covered"].iloc[0]))
        widths.append(cov["width_ratio"].iloc[0])
    assert np.mean(hits) >= 0.9
    assert np.mean(widths) > 1.0  # wider than the confidential data's own interval


def test_a_biased_synthesizer_fails_to_cover():
    rng = np.random.default_rng(4)
    kinds = {"y": "continuous", "x": "continuous"}
    hits = []
    for _ in range(30):
        orig = _linear(300, rng)
        sets = _posterior_sets(orig, 5, rng, shift=0.5)  # the slope moved by about eight standard errors
        hits.append(bool(regression_coverage(orig, sets, "y", ["x"], kinds)["covered"].iloc[0]))
    assert np.mean(hits) < 0.2


def test_one_set_is_used_as_if_real_and_rank_deficiency_is_named():
    rng = np.random.default_rng(5)
    orig = _linear(200, rng)
    kinds = {"y": "continuous", "x": "continuous"}
    cov = regression_coverage(orig, [orig], "y", ["x"], kinds)
    assert bool(cov["covered"].iloc[0]) and cov["width_ratio"].iloc[0] == pytest.approx(1.0)
    flat = orig.assign(x=1.0)
    with pytest.raises(DataError, match="rank deficient"):
        regression_coverage(orig, [flat, flat], "y", ["x"], kinds)
    with pytest.raises(DataError, match="synthetic_sets"):
        regression_coverage(orig, [], "y", ["x"], kinds)
