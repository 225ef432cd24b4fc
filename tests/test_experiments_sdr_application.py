"""Replicate functions of the SDR application chapter on tiny settings."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from dpsynth import sdr
from dpsynth.experiments import sdr_application as app
from dpsynth.fitting import ConvergenceWarning
from dpsynth.privacy import CENSOR_TOL
from dpsynth.seeds import stream

pytestmark = pytest.mark.slow

TINY = dict(draws=100, tune=100, chains=2)
P1 = dict(sdr_path="", n1=60, data_seed=3, eps=5.0, salary_bound=1e6, ph_mode="research", keep_records=1, **TINY)
P2 = dict(sdr_path="", n2=60, data_seed=3, cw_radius=0.2, cw_kind="relative", cw_match=False, k0=0.95, tol=0.05,
          n_syn=3, keep_records=1, **TINY)


def _run(fn, r, params, seed=11):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return fn(r, stream(seed, r), params)


@pytest.fixture(scope="module")
def part1():
    return _run(app.censoring_replicate, 0, P1)


@pytest.fixture(scope="module")
def part2():
    return _run(app.reweighting_replicate, 0, P2)


def test_part1_structure_and_privacy(part1):
    assert list(part1.synthesizer.values) == list(app.PART1_ROWS)
    for v in ("delta", "eps", "n_censored", "n_truncated", "converged", "max_ecdf", "avg_ecdf", "mean", "median",
              "q15", "q90"):
        assert part1[v].dims == ("synthesizer",)
    assert part1.salary.shape == (len(app.PART1_ROWS), 60)
    fits = list(app.PART1_SYNTHESIZERS)
    np.testing.assert_allclose(part1.eps.sel(synthesizer=fits), 2 * part1.delta.sel(synthesizer=fits))
    assert float(part1.delta.sel(synthesizer="Censor_w")) <= 2.5 + CENSOR_TOL
    assert float(part1.delta.sel(synthesizer="Censor_uw")) <= 2.5 + CENSOR_TOL
    assert float(part1.eps.sel(synthesizer="PH")) == 5.0
    assert np.isnan(float(part1.delta.sel(synthesizer="PH")))
    # the data row holds the confidential salaries; synthetic salaries lie in [0, U]
    np.testing.assert_array_equal(part1.salary.sel(synthesizer="Data"), app.data_part1(P1).salary)
    syn = part1.salary.sel(synthesizer=["Weighted", "Censor_w", "PH"]).values
    assert np.all((syn >= 0) & (syn <= 1e6))
    assert part1.coef_unweighted.size == 11


def test_part2_structure_and_invariants(part2):
    assert list(part2.synthesizer.values) == list(app.PART2_SYNTHESIZERS)
    assert list(part2.source.values) == ["Data"] + list(app.PART2_SYNTHESIZERS)
    assert part2.delta_i.shape == (6, 60) and part2.weight.shape == (6, 60)
    assert part2.q90.shape == (7, 3)
    assert part2.mu_draw.shape == (6, 200)
    w = part2.weight.values
    assert np.all((w >= 0) & (w <= 1))
    for nm in ("LW_final", "CW_final"):
        start = nm.replace("_final", "")
        assert float(part2.delta.sel(synthesizer=nm)) <= float(part2.delta.sel(synthesizer=start)) * (1 + 1e-12)
    np.testing.assert_allclose(part2.delta, part2.delta_i.max("record"))
    assert np.all(part2.synthetic.values >= 0)


def test_same_seed_same_results(part1, part2):
    xr.testing.assert_identical(part1, _run(app.censoring_replicate, 0, P1))
    again = _run(app.reweighting_replicate, 0, P2)
    xr.testing.assert_identical(part2, again)


def test_not_kept_replicates_drop_record_vectors():
    ds = _run(app.censoring_replicate, 1, dict(P1, keep_records=1))
    assert np.all(np.isnan(ds.salary.values))
    assert np.isfinite(ds.delta.sel(synthesizer="Weighted"))


def test_file_source(tmp_path):
    d = sdr.standin_censoring(80, seed=1)
    f = d.frame.rename(columns={"salary": "SALARY", "gender": "GENDER", "age_group": "AGEGR", "weeks": "WKSWK"})
    f["FIELD"] = np.where(np.arange(80) < 70, "math", "other")
    path = tmp_path / "puf.csv"
    f.to_csv(path, index=False)
    got = app.data_part1(dict(sdr_path=str(path), n1=0, filters1={"FIELD": ["math"]}))
    assert got.n == 70 and got.source == "file"
    got2 = app.data_part2(dict(sdr_path=str(path), n2=50, data_seed=2))
    assert got2.n == 50
    pd.testing.assert_frame_equal(got2.frame, app.data_part2(dict(sdr_path=str(path), n2=50, data_seed=2)).frame)
