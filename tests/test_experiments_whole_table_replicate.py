"""The "Releasing a whole table" replicate on the smoke preset: structure, privacy accounting, the peers.

The tests that run MST or AIM drive the real peers in ``.venv-peers`` and are skipped, with the
reason, when it is missing (``make peers`` builds it). Nothing here depends on the sampler's exact
output or its convergence (recorded, not asserted).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpsynth import peers
from dpsynth.experiments.whole_table import Params
from dpsynth.experiments.whole_table.params import METHOD_NAMES
from dpsynth.experiments.whole_table.replicate import METRICS, TABLES, chapter_table, replicate, table_utilities

pytestmark = [pytest.mark.filterwarnings("ignore::dpsynth.fitting.ConvergenceWarning"),
              pytest.mark.filterwarnings("ignore::dpsynth.synthesizer.CensoringWarning")]

SKIP_REASON = "the peers' environment .venv-peers is missing: run `make peers` to build it (SmartNoise MST and AIM)"


def _run(**kw) -> object:
    p = Params.preset("smoke", **kw)
    return replicate(0, np.random.SeedSequence(5), p.study_dict())


def test_chapter_tables_have_their_columns_and_kinds():
    p = Params.paper()
    for name, spec in TABLES.items():
        df = chapter_table(name, p)
        assert list(df.columns) == [*spec.targets, *spec.covariates]
        assert set(spec.kinds) == set(df.columns)
        numeric = [c for c in df.columns if spec.kinds[c] != "categorical"]
        assert set(spec.peer_bounds) == set(numeric)
        for c in numeric:  # the public bounds hold every value but a few extreme counts (clamped by the peer)
            lo, hi, bins = spec.peer_bounds[c]
            assert (df[c] >= lo).all() and (df[c] <= hi).mean() > 0.99 and bins >= 2
    assert len(chapter_table("nmes1988", p)) == p.nmes_n and len(chapter_table("house_prices", p)) == 546
    assert len(chapter_table("house_prices", Params.smoke())) == Params.smoke().n


def test_utilities_of_the_data_itself_are_perfect():
    spec = TABLES["house_prices"]
    df = chapter_table("house_prices", Params.paper())
    u = table_utilities(df, df.copy(), spec)
    assert u["marginal"] == 0 and u["pairwise"] == 0 and u["contingency"] == 0 and u["coef_rmse"] == 0
    assert u["coef_overlap"] == pytest.approx(1.0) and u["regression_degenerate"] == 0


def test_a_missing_level_gives_a_degenerate_regression_not_an_error():
    spec = TABLES["nmes1988"]
    df = chapter_table("nmes1988", Params.paper())
    syn = df.copy()
    syn["health"] = pd.Categorical(["average"] * len(df), categories=df["health"].cat.categories)
    u = table_utilities(df, syn, spec)
    assert u["regression_degenerate"] == 1 and np.isfinite(u["coef_rmse"]) and u["coef_rmse"] > 0
    assert u["marginal_categorical"] > 0.1


def test_missing_peers_fail_before_any_fit(monkeypatch, tmp_path):
    monkeypatch.setenv(peers.PEERS_PYTHON_ENV, str(tmp_path / "missing-python"))
    with pytest.raises(peers.PeerUnavailable, match="make peers"):
        _run(methods=("table", "mst"))


@pytest.mark.slow
def test_smoke_replicate_ours_and_independent_without_peers():
    ds = _run(methods=("table", "independent"), tables=("nmes1988",))
    assert list(ds["method"].values) == [METHOD_NAMES["table"], METHOD_NAMES["independent"]]
    for v in (*METRICS, "eps_remove", "eps_replace", "delta", "converged", "rhat_max"):
        assert ds[v].dims == ("table", "eps", "method")
    cell = ds.sel({"table": "nmes1988", "eps": 3.0})
    # ours and Independent split eps over three censor_ref conditionals; each adds its DP reference's eps
    assert (cell["eps_remove"] > 3.0).all() and (cell["eps_remove"] < 4.0).all()
    np.testing.assert_allclose(cell["eps_replace"], 2 * cell["eps_remove"])
    assert (cell["delta"] == 0).all()
    assert 0 <= float(cell["marginal"].min()) and float(cell["marginal"].max()) <= 1
    assert int(ds["n"].sel(table="nmes1988")) == Params.smoke().n


@pytest.mark.slow
def test_smoke_replicate_with_a_real_peer():
    if peers.peer_environment() is None:
        pytest.skip(SKIP_REASON)
    ds = _run(methods=("mst", "aim"), tables=("house_prices",))
    cell = ds.sel({"table": "house_prices", "eps": 3.0})
    assert list(ds["method"].values) == ["MST", "AIM"]
    np.testing.assert_allclose(cell["eps_remove"], 3.0)
    np.testing.assert_allclose(cell["delta"], Params.smoke().delta)
    assert bool(cell["converged"].all()) and np.isnan(cell["eps_replace"]).all()
    assert (cell["seconds"] > 0).all() and np.isfinite(cell["pmse_ratio"]).all()
