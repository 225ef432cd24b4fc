"""Replicate functions of the re-weighting chapter on tiny settings."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import xarray as xr

from dpsynth.experiments import reweighting as rw
from dpsynth.fitting import ConvergenceWarning

TINY = dict(n=80, draws=150, tune=150, chains=2, n_syn=3, cw_radius=0.1, cw_kind="relative", cw_match=True,
            k0=0.95, tol=0.05)


def _run(fn, seed, params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # tiny draws: convergence is not what is tested
        return fn(0, np.random.SeedSequence(seed), params)


@pytest.fixture(scope="module")
def synth_nb():
    return _run(rw.synthesizers_replicate, 11, dict(TINY, data_model="nb_mixture"))


@pytest.mark.slow
def test_synthesizers_structure(synth_nb):
    ds = synth_nb
    assert list(ds.synthesizer.values) == list(rw.SYNTHESIZERS)
    assert list(ds.source.values) == ["Data", *rw.SYNTHESIZERS]
    assert ds.sizes["record"] == TINY["n"] and ds.sizes["syn_set"] == TINY["n_syn"]
    for v in ("delta", "eps", "converged", "k", "delta_before", "delta_after", "mean_weight", "rhat_max"):
        assert ds[v].dims == ("synthesizer",)
    for v in ("delta_i", "weight", "synthetic"):
        assert ds[v].dims == ("synthesizer", "record")
    np.testing.assert_allclose(ds.eps, 2 * ds.delta)
    np.testing.assert_allclose(ds.delta, ds.delta_i.max("record"))


@pytest.mark.slow
def test_synthesizers_invariants(synth_nb):
    ds = synth_nb
    w = ds.weight.values
    assert np.all((w >= 0) & (w <= 1))
    assert np.all(ds.weight.sel(synthesizer="Unweighted") == 1)
    assert float(ds.delta.sel(synthesizer="LW")) < float(ds.delta.sel(synthesizer="Unweighted"))
    for nm in ("LW", "CW"):
        fin = ds.sel(synthesizer=f"{nm}_final")
        assert float(fin.delta_before) == pytest.approx(float(ds.delta.sel(synthesizer=nm)))
        assert float(fin.delta_after) <= float(fin.delta_before)
        assert float(fin.delta) == pytest.approx(float(fin.delta_after))
        assert 0 < float(fin.k) <= 1 or np.isnan(float(fin.k))
    sw = ds.weight.sel(synthesizer="SW").values
    assert np.allclose(sw, sw[0]) and float(ds.sw_alpha.sel(synthesizer="SW")) == pytest.approx(sw[0])
    # the "Data" source is a bootstrap of the confidential records: its values lie within their range
    x = ds.x.values
    assert float(ds["mean"].sel(source="Data").min()) >= x.min()
    assert float(ds["mean"].sel(source="Data").max()) <= x.max()


@pytest.mark.slow
def test_synthesizers_same_seed_same_result(synth_nb):
    again = _run(rw.synthesizers_replicate, 11, dict(TINY, data_model="nb_mixture"))
    xr.testing.assert_identical(synth_nb, again)


@pytest.mark.slow
def test_contraction_structure_and_reproducible():
    p = dict(data_models=["poisson", "nb_mixture"], ns=[40, 80], draws=150, tune=150, chains=2)
    a = _run(rw.contraction_replicate, 5, p)
    assert a.delta.dims == ("data_model", "n", "synthesizer")
    assert a.sizes == {"data_model": 2, "n": 2, "synthesizer": 2, "source": 3}
    assert np.all(a.delta.sel(synthesizer="LW") < a.delta.sel(synthesizer="Unweighted"))
    assert np.all(a.min_weight.sel(synthesizer="Unweighted") == 1)
    b = _run(rw.contraction_replicate, 5, p)
    xr.testing.assert_identical(a, b)


def test_bad_data_model():
    with pytest.raises(ValueError, match="data_model"):
        rw.family_for("gamma")
    with pytest.raises(KeyError, match="missing"):
        rw.synthesizers_replicate(0, np.random.SeedSequence(0), {"data_model": "poisson"})
