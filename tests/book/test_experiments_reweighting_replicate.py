"""Replicate functions of the re-weighting chapter on tiny settings."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import xarray as xr

from dpsynth.fitting import ConvergenceWarning
from dpsynth_book import presentation
from dpsynth_book.experiments import reweighting as rw
from dpsynth_book.experiments.reweighting import replicate as rep

TINY = rw.Params.preset("smoke", n=80, synthetic_sets=3, draws=150, tune=150).study_dict()


def _run(fn, seed, params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # tiny draws: convergence is not what is tested
        return fn(0, np.random.SeedSequence(seed), params)


@pytest.fixture(scope="module")
def synth():
    return _run(rw.synthesizers_replicate, 11, TINY)


@pytest.mark.slow
def test_synthesizers_structure(synth):
    ds = synth
    assert list(ds.data_model.values) == list(rw.DATA_MODELS)
    # one synthesizer dimension: "Data" and the fits, in the book's order
    assert list(ds.synthesizer.values) == list(rw.SYNTHESIZER_COORD) == presentation.order(["Data", *rw.SYNTHESIZERS])
    assert list(ds.synthesizer.values) == ["Data", *rw.SYNTHESIZERS] and "source" not in ds.dims
    assert ds.is_fit.dtype == bool
    assert list(ds.is_fit.all("data_model").values) == [nm != "Data" for nm in ds.synthesizer.values]
    assert ds.sizes["record"] == TINY["n"] and ds.sizes["syn_set"] == TINY["synthetic_sets"]
    for v in (
        "delta",
        "eps",
        "eps_replace",
        "guarantee",
        "converged",
        "divergences",
        "k",
        "delta_before",
        "delta_after",
        "mean_weight",
        "rhat_max",
        "ess_min",
        "refit_converged",
        "refit_divergences",
        "mixed_n_draws",
    ):
        assert ds[v].dims == ("data_model", "synthesizer")
    for v in ("delta_i", "weight", "synthetic"):
        assert ds[v].dims == ("data_model", "synthesizer", "record")
    for s in ("mean", "median", "q15", "q90", "max_ecdf"):
        assert ds[s].dims == ("data_model", "synthesizer", "syn_set")
        assert np.all(np.isfinite(ds[s]))  # "Data": bootstrap resamples
    for s in ("mean", "median", "q15", "q90"):
        assert np.all(np.isfinite(ds[f"{s}_mixed"].sel(synthesizer=list(rw.SYNTHESIZERS))))
    assert ds.cw_radius.dims == ("data_model",) and ds.cw_radius_matched.dtype == bool
    # eps of one draw with one record removed: the count models' terms are <= 0, a window of width Delta
    fits = ds.sel(synthesizer=list(rw.SYNTHESIZERS))
    assert np.all(np.isfinite(fits.delta)) and np.all(np.isfinite(fits.delta_i))
    np.testing.assert_allclose(fits.eps, fits.delta)  # Poisson and NB terms are <= 0: a window of width Delta
    np.testing.assert_allclose(fits.eps_replace, 2 * fits.eps)
    np.testing.assert_allclose(fits.delta, fits.delta_i.max("record"))
    assert set(np.unique(ds.guarantee.sel(synthesizer="Unweighted").values)) == {"none"}
    assert set(np.unique(ds.guarantee.sel(synthesizer=list(rw.SYNTHESIZERS[1:])).values)) == {"aDP"}
    assert np.issubdtype(ds.divergences.dtype, np.integer) and np.all(ds.divergences >= 0)
    assert not np.any(ds.converged.values & (ds.divergences.values > 0))
    assert np.all(fits.mixed_n_draws > 1)  # record-wise mixing uses many draws; one-draw sets use one


@pytest.mark.slow
def test_data_row_is_not_a_fit(synth):
    data = synth.sel(synthesizer="Data")
    assert not np.any(data.is_fit) and np.all(synth.is_fit.sel(synthesizer=list(rw.SYNTHESIZERS)))
    for v in ("delta", "eps", "eps_replace", "k", "mean_weight", "rhat_max", "delta_refit", "mixed_n_draws"):
        assert np.all(np.isnan(data[v])), v
    for v in ("delta_i", "weight", "synthetic", "mu_draw", "mean_mixed", "q90_mixed"):
        assert np.all(np.isnan(data[v])), v
    for v in ("converged", "search_converged", "refit_converged"):
        assert synth[v].dtype == bool and not np.any(data[v]), v
    assert np.all(data.divergences == 0) and np.all(data.n_fits == 0)
    assert set(np.unique(data.guarantee.values)) == {""}


@pytest.mark.slow
def test_synthesizers_invariants(synth):
    for dm in rw.DATA_MODELS:
        ds = synth.sel(data_model=dm)
        w = ds.weight.sel(synthesizer=list(rw.SYNTHESIZERS)).values
        assert np.all((w >= 0) & (w <= 1))
        assert np.all(ds.weight.sel(synthesizer="Unweighted") == 1)
        assert float(ds.delta.sel(synthesizer="LW")) < float(ds.delta.sel(synthesizer="Unweighted"))
        for nm in ("LW", "CW"):
            fin = ds.sel(synthesizer=f"{nm}_final")
            assert float(fin.delta_before) == pytest.approx(float(ds.delta.sel(synthesizer=nm)))
            assert float(fin.delta_after) <= float(fin.delta_before)
            assert float(fin.delta) == pytest.approx(float(fin.delta_after))
        sw = ds.weight.sel(synthesizer="SW").values
        assert np.allclose(sw, sw[0]) and float(ds.sw_alpha.sel(synthesizer="SW")) == pytest.approx(sw[0])
        x = ds.x.values
        assert (
            x.min()
            <= float(ds["mean"].sel(synthesizer="Data").min())
            <= float(ds["mean"].sel(synthesizer="Data").max())
            <= x.max()
        )


@pytest.mark.slow
def test_synthesizers_same_seed_same_result(synth):
    xr.testing.assert_identical(synth, _run(rw.synthesizers_replicate, 11, TINY))


@pytest.mark.slow
def test_contraction_structure_and_reproducible():
    p = rw.Params.preset("smoke", n=80, contraction_sizes=(40,), draws=150, tune=150).study_dict()
    a = _run(rw.contraction_replicate, 5, p)
    assert a.delta.dims == ("data_model", "n", "synthesizer")
    assert a.sizes == {"data_model": 2, "n": 2, "synthesizer": 3}
    assert list(a.synthesizer.values) == list(rw.CONTRACTION_COORD) == ["Data", "Unweighted", "LW"]
    assert list(a.is_fit.values) == [False, True, True]
    assert a["mean"].dims == ("data_model", "n", "synthesizer") and np.all(np.isfinite(a["mean"]))
    data = a.sel(synthesizer="Data")
    assert np.all(np.isnan(data.delta)) and not np.any(data.converged) and np.all(data.divergences == 0)
    assert a.converged.dtype == bool
    assert list(a.n.values) == [40, 80]
    assert np.all(a.delta.sel(synthesizer="LW") < a.delta.sel(synthesizer="Unweighted"))
    assert np.all(a.min_weight.sel(synthesizer="Unweighted") == 1)
    assert not np.any(a.converged.values & (a.divergences.values > 0))
    xr.testing.assert_identical(a, _run(rw.contraction_replicate, 5, p))


def test_one_draw_synthesis_in_replicate(monkeypatch):
    """Utility sets come from synthesize (one draw per data set); mixing only via release(mix_draws=True)."""
    calls = {"synthesize": 0, "mixed": 0}
    orig_syn, orig_rel = rep.synthesize, rep.release

    def spy_syn(fit, seed=None, **kw):
        calls["synthesize"] += 1
        return orig_syn(fit, seed, **kw)

    def spy_rel(result, seed=None, *, mix_draws=False, **kw):
        assert mix_draws is True  # the replicate only uses release for the record-wise comparison
        calls["mixed"] += 1
        return orig_rel(result, seed, mix_draws=mix_draws, **kw)

    monkeypatch.setattr(rep, "synthesize", spy_syn)
    monkeypatch.setattr(rep, "release", spy_rel)
    p = rw.Params.preset("smoke", n=40, synthetic_sets=2, data_models=("poisson",)).study_dict()
    ds = _run(rw.synthesizers_replicate, 3, p)
    assert calls == {"synthesize": 2 * len(rw.SYNTHESIZERS), "mixed": 2 * len(rw.SYNTHESIZERS)}
    assert ds.synthetic.sizes["record"] == 40


def test_bad_data_model():
    with pytest.raises(ValueError, match="data_model"):
        rw.family_for("gamma")
    with pytest.raises(ValueError, match="data_model"):
        rw.simulate_data("gamma", 10, 0)
