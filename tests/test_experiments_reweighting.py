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
    for v in ("delta", "eps", "eps_replace", "guarantee", "converged", "divergences", "k", "delta_before",
              "delta_after", "mean_weight", "rhat_max", "ess_min", "refit_converged", "refit_divergences",
              "mixed_n_draws"):
        assert ds[v].dims == ("synthesizer",)
    for v in ("delta_i", "weight", "synthetic"):
        assert ds[v].dims == ("synthesizer", "record")
    for s in ("mean", "median", "q15", "q90"):
        assert ds[s].dims == ("source", "syn_set")
        assert ds[f"{s}_mixed"].dims == ("synthesizer", "syn_set")
        assert np.all(np.isfinite(ds[f"{s}_mixed"]))
    # eps of one draw with one record removed is 2 Delta; the NB terms are <= 0, so replacement is the same
    np.testing.assert_allclose(ds.eps, 2 * ds.delta)
    np.testing.assert_allclose(ds.eps_replace, ds.eps)
    np.testing.assert_allclose(ds.delta, ds.delta_i.max("record"))
    # registry guarantees: Unweighted is not private, every weighted synthesizer is aDP
    assert str(ds.guarantee.sel(synthesizer="Unweighted").item()) == "none"
    assert all(str(ds.guarantee.sel(synthesizer=nm).item()) == "aDP" for nm in rw.SYNTHESIZERS[1:])
    assert np.issubdtype(ds.divergences.dtype, np.integer) and np.all(ds.divergences >= 0)
    # a fit with divergences is never counted as converged
    assert not np.any(ds.converged.values & (ds.divergences.values > 0))
    # record-wise mixing uses many distinct draws (one-draw sets use exactly one)
    assert np.all(ds.mixed_n_draws > 1)


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
    assert a.divergences.dims == ("data_model", "n", "synthesizer")
    assert np.all(a.divergences >= 0)
    assert not np.any(a.converged.values & (a.divergences.values > 0))
    b = _run(rw.contraction_replicate, 5, p)
    xr.testing.assert_identical(a, b)


def test_one_draw_synthesis_in_replicate(monkeypatch):
    """The utility sets come from synthesize (one draw per data set); mixing only via release(mix_draws=True)."""
    import dpsynth.synthesis as syn

    calls = {"synthesize": 0, "mixed": 0}
    orig_syn, orig_rel = rw.synthesize, rw.release

    def spy_syn(fit, seed=None, **kw):
        calls["synthesize"] += 1
        return orig_syn(fit, seed, **kw)

    def spy_rel(result, seed=None, *, mix_draws=False, **kw):
        assert mix_draws is True  # the replicate only uses release for the record-wise comparison
        calls["mixed"] += 1
        return orig_rel(result, seed, mix_draws=mix_draws, **kw)

    monkeypatch.setattr(rw, "synthesize", spy_syn)
    monkeypatch.setattr(rw, "release", spy_rel)
    p = dict(TINY, data_model="poisson", n=40, n_syn=2, draws=100, tune=100)
    ds = _run(rw.synthesizers_replicate, 3, p)
    assert calls == {"synthesize": 2 * len(rw.SYNTHESIZERS), "mixed": 2 * len(rw.SYNTHESIZERS)}
    assert syn.synthesize is orig_syn
    assert ds.synthetic.sizes["record"] == 40


def test_bad_data_model():
    with pytest.raises(ValueError, match="data_model"):
        rw.family_for("gamma")
    with pytest.raises(KeyError, match="missing"):
        rw.synthesizers_replicate(0, np.random.SeedSequence(0), {"data_model": "poisson"})
