"""Replicate functions of the SDR application chapter on tiny settings (MCMC: slow)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from dpsynth.fitting import ConvergenceWarning
from dpsynth.privacy import CENSOR_TOL
from dpsynth.seeds import stream
from dpsynth_book import presentation, sdr
from dpsynth_book.experiments.sdr_application import replicate as app

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
    assert list(app.PART1_ROWS[-2:]) == ["PH", "PH-paper"]
    for v in ("delta", "eps", "eps_replace", "eps_local", "noise_scale", "n_censored", "n_truncated", "converged",
              "mcmc", "divergences", "rhat_max", "ess_min", "max_ecdf", "avg_ecdf", "mean", "median", "q15", "q90",
              "avg_ecdf_mixed", "eps_mixed"):
        assert part1[v].dims == ("synthesizer",), v
    assert part1.salary.shape == (len(app.PART1_ROWS), 60)
    fits = list(app.PART1_SYNTHESIZERS)
    sel = lambda v, c: part1[v].sel(synthesizer=c)  # noqa: E731
    # removal: 2 Delta for the uncensored fits, 2M = eps for the censored ones; local 2 Delta for all
    unc = ["Unweighted", "Weighted", "Weighted-e"]
    np.testing.assert_allclose(sel("eps", unc), 2 * sel("delta", unc))
    np.testing.assert_allclose(sel("eps", ["Censor_w", "Censor_uw"]), 5.0)
    np.testing.assert_allclose(sel("eps_local", fits), 2 * sel("delta", fits))
    # replacement: beta regression log densities take both signs, so every fit's figure doubles
    np.testing.assert_allclose(sel("eps_replace", fits), 2 * sel("eps", fits))
    assert float(sel("delta", "Censor_w")) <= 2.5 + CENSOR_TOL
    assert float(sel("delta", "Censor_uw")) <= 2.5 + CENSOR_TOL
    # PH at eps with one record removed (Laplace(1/eps)); PH-paper is the papers' Laplace(2/eps)
    assert float(sel("eps", "PH")) == 5.0 and float(sel("eps_replace", "PH")) == 10.0
    assert float(sel("noise_scale", "PH")) == pytest.approx(0.2)
    assert float(sel("eps", "PH-paper")) == 2.5 and float(sel("eps_replace", "PH-paper")) == 5.0
    assert float(sel("noise_scale", "PH-paper")) == pytest.approx(0.4)
    for ph in ("PH", "PH-paper"):
        assert np.isnan(float(sel("delta", ph))) and not bool(sel("mcmc", ph)) and np.isnan(float(sel("rhat_max", ph)))
    assert part1.mcmc.sel(synthesizer=fits).values.all() and part1.converged.dtype == bool
    # diagnostics: recorded per fit; a fit with divergences is not converged
    div = sel("divergences", fits).values
    assert np.all((div >= 0) & (div == np.round(div)))
    assert np.all(sel("converged", fits).values[div > 0] == 0)
    assert np.all(sel("rhat_max", fits).values >= 0.99) and np.all(sel("ess_min", fits).values > 0)
    # record-wise mixing (comparison only) composes eps over the distinct draws it used
    assert np.all(sel("eps_mixed", fits).values >= sel("eps", fits).values)
    # the data row holds the confidential salaries; synthetic salaries lie in [0, U]
    np.testing.assert_array_equal(part1.salary.sel(synthesizer="Data"), app.data_part1(P1).salary)
    syn = part1.salary.sel(synthesizer=["Weighted", "Censor_w", "PH", "PH-paper"]).values
    assert np.all((syn >= 0) & (syn <= 1e6))
    assert part1.coef_unweighted.size == 11


def test_part2_structure_and_invariants(part2):
    # one synthesizer dimension: "Data" (bootstrap resamples for the statistics; not a fit) and the fits,
    # in the book's order
    rows = ["Data"] + list(app.PART2_SYNTHESIZERS)
    assert list(part2.synthesizer.values) == list(app.PART2_ROWS) == presentation.order(rows) == rows
    assert "source" not in part2.dims and "source" not in part2.coords
    assert part2.is_fit.dtype == bool and part2.is_fit.values.tolist() == [False] + [True] * 6
    assert part2.delta_i.shape == (7, 60) and part2.weight.shape == (7, 60)
    assert part2.q90.dims == ("synthesizer", "syn_set") and part2.q90.shape == (7, 3)
    assert part2.mu_draw.shape == (7, 200)
    fits = part2.sel(synthesizer=list(app.PART2_SYNTHESIZERS))
    data = part2.sel(synthesizer="Data")
    w = fits.weight.values
    assert np.all((w >= 0) & (w <= 1))
    for nm in ("LW_final", "CW_final"):
        start = nm.replace("_final", "")
        assert float(part2.delta.sel(synthesizer=nm)) <= float(part2.delta.sel(synthesizer=start)) * (1 + 1e-12)
    np.testing.assert_allclose(fits.delta, fits.delta_i.max("record"))
    assert np.all(fits.synthetic.values >= 0)
    # NB log probabilities are <= 0, a window of width Delta: Delta removed, 2 Delta replaced; n_syn sets: n_syn * eps
    np.testing.assert_allclose(fits.eps, fits.delta)
    np.testing.assert_allclose(fits.eps_replace, 2 * fits.eps)
    np.testing.assert_allclose(fits.eps_all_sets, 3 * fits.eps)
    for v in ("divergences", "rhat_max", "ess_min"):
        assert part2[v].dims == ("synthesizer",) and np.all(np.isfinite(fits[v]))
    assert part2.converged.dtype == bool and part2.search_converged.dtype == bool
    assert np.all(fits.converged.values[fits.divergences.values > 0] == 0)
    # the "Data" row is not a fit: NaN per-fit floats, 0 counts, False booleans; its statistics are finite
    for v in ("delta", "eps", "eps_replace", "eps_all_sets", "rhat_max", "ess_min", "k", "mean_weight",
              "min_weight", "mu_mean", "delta_i", "weight", "synthetic", "mu_draw"):
        assert np.all(np.isnan(data[v].values)), v
    assert float(data.divergences) == 0 and float(data.n_fits) == 0
    assert not bool(data.converged) and not bool(data.search_converged)
    for v in ("mean", "median", "q15", "q90", "max_ecdf", "avg_ecdf"):
        assert np.all(np.isfinite(part2[v].values)), v


def test_same_seed_same_results(part1, part2):
    xr.testing.assert_identical(part1, _run(app.censoring_replicate, 0, P1))
    again = _run(app.reweighting_replicate, 0, P2)
    xr.testing.assert_identical(part2, again)


def _topcoded_file(tmp_path, U=1e6):
    """The stand-in written as a PUF-like CSV with its top salary top-coded AT the public bound U."""
    d = sdr.standin_censoring(60, seed=3)
    f = d.frame.rename(columns={"salary": "SALARY", "gender": "GENDER", "age_group": "AGEGR", "weeks": "WKSWK"})
    f.loc[f["SALARY"].idxmax(), "SALARY"] = U
    path = tmp_path / "topcoded.csv"
    f.to_csv(path, index=False)
    return str(path)


def test_topcoded_at_bound_and_not_kept_replicates(tmp_path, monkeypatch):
    # a salary equal to the public bound U lies in [0, U]: loading, scaling, the fits and both histograms accept it
    calls = []
    real = app.synthesize

    def spy(fit, seed=None, **kw):
        calls.append(kw)
        return real(fit, seed, **kw)

    monkeypatch.setattr(app, "synthesize", spy)
    params = dict(P1, sdr_path=_topcoded_file(tmp_path), n1=0, keep_records=1)
    assert np.sum(app.data_part1(params).salary == 1e6) == 1
    ds = _run(app.censoring_replicate, 1, params)
    assert ds.attrs["n_at_bound"] == 1 and ds.attrs["source"] == "file"
    assert np.all(np.isnan(ds.salary.values))  # replicate 1 is not kept
    assert np.isfinite(ds.delta.sel(synthesizer="Weighted"))
    assert np.all(np.isfinite(ds.avg_ecdf.sel(synthesizer=["PH", "PH-paper"])))
    # one synthetic data set per fit, each from one posterior draw (synthesize's default: no draw mixing)
    assert len(calls) == len(app.PART1_SYNTHESIZERS) and all(kw == {} for kw in calls)


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
