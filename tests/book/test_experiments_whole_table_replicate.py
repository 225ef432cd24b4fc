"""The "Releasing a whole table" replicate on the smoke preset: structure, privacy accounting, the peers.

The tests that run MST or AIM drive the real peers in ``.venv-peers`` and are skipped, with the
reason, when it is missing (``make peers`` builds it). Nothing here depends on the sampler's exact
output or its convergence (recorded, not asserted).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpsynth_book import peers
from dpsynth_book.experiments.whole_table import Params
from dpsynth_book.experiments.whole_table.params import METHOD_NAMES
from dpsynth_book.experiments.whole_table.replicate import (
    METRICS,
    TABLES,
    chapter_table,
    interval_coverage,
    replicate,
    table_utilities,
)

pytestmark = [pytest.mark.filterwarnings("ignore::dpsynth.fitting.ConvergenceWarning"),
              pytest.mark.filterwarnings("ignore::dpsynth.synthesizer.CensoringWarning")]

SKIP_REASON = "the peers' environment .venv-peers is missing: run `make peers` to build it (SmartNoise MST and AIM)"


def _run(**kw) -> object:
    p = Params.preset("smoke", **kw)
    return replicate(0, np.random.SeedSequence(5), p.study_dict())


def test_chapter_tables_have_their_columns_kinds_and_public_bounds():
    p = Params.paper()
    for name, spec in TABLES.items():
        df = chapter_table(name, p)
        assert list(df.columns) == list(spec.columns) and set(spec.kinds) == set(df.columns)
        numeric = [c for c in df.columns if spec.kinds[c] != "categorical"]
        assert set(spec.bounds) == set(numeric)
        for c in numeric:  # the public bounds hold every value: the noise-aware columns refuse, never clip
            lo, hi, bins = spec.bounds[c]
            assert (df[c] >= lo).all() and (df[c] <= hi).all() and bins >= 2
        for c in df.columns:
            assert isinstance(df[c].dtype, pd.CategoricalDtype) == (spec.kinds[c] == "categorical")
    assert len(chapter_table("nmes1988", p)) == p.nmes_n and len(chapter_table("house_prices", p)) == 546
    assert len(chapter_table("islr_wage", p)) == 3000
    assert len(chapter_table("house_prices", Params.smoke())) == Params.smoke().n


def test_utilities_of_the_data_itself_are_perfect():
    spec = TABLES["house_prices"]
    df = chapter_table("house_prices", Params.paper())
    u = table_utilities(df, df.copy(), spec)
    assert u["marginal"] == 0 and u["pairwise"] == 0 and u["contingency"] == 0 and u["coef_rmse"] == 0
    assert interval_coverage(df, [df.copy()], spec)[0] == 1.0
    assert u["coef_overlap"] == pytest.approx(1.0) and u["regression_degenerate"] == 0


def test_a_missing_level_gives_a_degenerate_regression_not_an_error():
    spec = TABLES["nmes1988"]
    df = chapter_table("nmes1988", Params.paper())
    syn = df.copy()
    syn["health"] = pd.Categorical(["average"] * len(df), categories=df["health"].cat.categories)
    u = table_utilities(df, syn, spec)
    assert u["regression_degenerate"] == 1 and np.isfinite(u["coef_rmse"]) and u["coef_rmse"] > 0
    assert u["marginal_categorical"] > 0.1


def test_a_table_without_a_level_is_set_aside_from_the_intervals():
    spec = TABLES["nmes1988"]
    df = chapter_table("nmes1988", Params.paper())
    lost = df.copy()
    lost["health"] = pd.Categorical(["average"] * len(df), categories=df["health"].cat.categories)
    cov, width, used = interval_coverage(df, [df.copy(), lost, df.copy()], spec)
    assert used == 2 and cov == 1.0 and np.isfinite(width)
    assert np.isnan(interval_coverage(df, [lost], spec)[0]) and interval_coverage(df, [lost], spec)[2] == 0


def test_missing_peers_fail_before_any_fit(monkeypatch, tmp_path):
    monkeypatch.setenv(peers.PEERS_PYTHON_ENV, str(tmp_path / "missing-python"))
    with pytest.raises(peers.PeerUnavailable, match="make peers"):
        _run(methods=("auto", "mst"))


@pytest.mark.slow
def test_smoke_replicate_ours_publishes_the_total_and_combines_m_tables():
    ds = _run(methods=("auto", "censor_chain"), tables=("nmes1988",))
    assert list(ds["method"].values) == [METHOD_NAMES["auto"], METHOD_NAMES["censor_chain"]]
    for v in (*METRICS, "eps_total", "eps_implicates", "delta", "converged", "rhat_max"):
        assert ds[v].dims == ("table", "eps", "method")
    cell = ds.sel({"table": "nmes1988", "eps": 3.0})
    np.testing.assert_allclose(cell["eps_total"], 3.0)  # the statement publishes the eps asked for
    assert float(cell["eps_implicates"].sel({"method": METHOD_NAMES["auto"]})) == pytest.approx(3.0)
    assert np.isnan(float(cell["coverage"].sel({"method": METHOD_NAMES["censor_chain"]})))
    cov = float(cell["coverage"].sel({"method": METHOD_NAMES["auto"]}))
    assert 0.0 <= cov <= 1.0 or np.isnan(cov)
    assert (cell["delta"] == 0).all()
    assert 0 <= float(cell["marginal"].min()) and float(cell["marginal"].max()) <= 1
    assert int(ds["n"].sel(table="nmes1988")) == Params.smoke().n


@pytest.mark.slow
def test_the_peers_run_on_the_same_public_bounds():
    if peers.peer_environment() is None:
        pytest.skip(SKIP_REASON)
    ds = _run(methods=("mst",), tables=("nmes1988",))
    cell = ds.sel({"table": "nmes1988", "eps": 3.0, "method": METHOD_NAMES["mst"]})
    assert float(cell["delta"]) == Params.smoke().delta and float(cell["eps_total"]) == pytest.approx(3.0)
    assert np.isnan(float(cell["eps_implicates"])) and bool(cell["converged"])
    assert (cell["seconds"] > 0) and np.isfinite(cell["pmse_ratio"])
    assert "a987d84" in ds.attrs["peers"]  # their rows drawn with mbi's synthetic_data as fixed upstream
