"""Tables, captions and verdicts of the re-weighting chapter (synthetic results; one smoke run end to end)."""

from __future__ import annotations

import numpy as np
import pytest
from reweighting_fake import fake_results

from dpsynth import registry
from dpsynth.experiments import reweighting as rw
from dpsynth.experiments.reweighting import summaries as s

KEYS = [
    "reweighting_never_raises_delta",
    "weights_in_unit_interval",
    "replace_equals_remove",
    "lw_lowers_delta",
    "cw_lower_mean_weight",
    "sw_wider_posterior",
    "skewed_tails_shortened",
    "reweighting_lifts_weights",
    "reweighting_cw_reduces_tail_bias",
    "one_draw_wider_than_mixed",
    "intervals_overlap_paper",
    "local_bound_contracts",
    "fits_converged",
]


@pytest.fixture
def res():
    return fake_results()


def _by_key(res):
    return {v.key: v for v in rw.verdicts(res)}


def test_verdict_keys_and_types(res):
    vs = rw.verdicts(res)
    assert [v.key for v in vs] == KEYS
    for v in vs:
        assert v.holds in (True, False, None) and v.claim and v.evidence


def test_verdicts_hold_on_results_that_support_them(res):
    v = _by_key(res)
    for k in (
        "reweighting_never_raises_delta",
        "weights_in_unit_interval",
        "replace_equals_remove",
        "lw_lowers_delta",
        "cw_lower_mean_weight",
        "sw_wider_posterior",
        "skewed_tails_shortened",
        "reweighting_lifts_weights",
        "reweighting_cw_reduces_tail_bias",
        "one_draw_wider_than_mixed",
        "local_bound_contracts",
        "fits_converged",
    ):
        assert v[k].holds is True, k
    assert v["sw_wider_posterior"].numbers["sd_ratio"]["poisson"] == pytest.approx(2.0, rel=0.5)


def test_reweighting_verdict_fails_when_delta_rises(res):
    m = res.synthesizers
    m["delta_after"].loc[dict(data_model="nb_mixture", synthesizer="CW_final")] = 3.5
    m["delta"].loc[dict(data_model="nb_mixture", synthesizer="CW_final")] = 3.5
    assert _by_key(res)["reweighting_never_raises_delta"].holds is False


def test_weight_and_delta_verdicts_fail(res):
    m = res.synthesizers
    m["weight"].loc[dict(data_model="poisson", synthesizer="LW")] = 1.2
    m["delta"].loc[dict(data_model="poisson", synthesizer="LW")] = 9.0
    m["eps"].loc[dict(data_model="poisson", synthesizer="LW")] = 18.0
    m["mean_weight"].loc[dict(data_model="poisson", synthesizer="CW")] = 0.99
    v = _by_key(res)
    assert v["weights_in_unit_interval"].holds is False
    assert v["lw_lowers_delta"].holds is False
    assert v["replace_equals_remove"].holds is False  # eps_replace no longer equals eps
    assert v["cw_lower_mean_weight"].holds is False


def test_convergence_and_contraction_verdicts(res):
    res.synthesizers["converged"].loc[dict(data_model="poisson", synthesizer="SW")] = False
    v = _by_key(res)
    assert v["fits_converged"].holds is False and v["fits_converged"].numbers["not_converged"] == 1
    few = fake_results(replicates=2)
    assert _by_key(few)["local_bound_contracts"].holds is None  # too few databases to decide


def test_tables_are_narrow_and_use_registry_labels(res):
    tables = [
        s.fits_table(res),
        s.reweighting_table(res),
        s.table1(res),
        s.width_table(res),
        s.contraction_table(res),
        s.convergence_table(res),
    ]
    for t in tables:
        assert t.shape[1] <= 7
    fits = s.fits_table(res)
    assert fits.shape[0] == 12
    labels = set(fits.index.get_level_values("synthesizer"))
    assert labels == {registry.label(n) for n in rw.SYNTHESIZERS}
    assert "Unweighted (none)" in labels
    np.testing.assert_allclose(fits["ε (replace)"], fits["ε (remove)"])
    t1 = s.table1(res)
    assert t1.shape[0] == 4 * len(s.TABLE1_SOURCES) and set(t1.columns) == {"ours", "paper", "overlap"}
    conv = s.convergence_table(res)
    assert {"divergences", "not converged"} <= set(conv.columns)
    assert int(conv.loc["appendix contraction", "fits"]) == s.fitted(res.contraction).converged.size == 5 * 2 * 2 * 2
    assert int(conv.loc["Sections 3–4 (reported fits)", "fits"]) == 12  # "Data" is not a fit


def test_bias_and_width_summary(res):
    m = res.synthesizers.sel(data_model="nb_mixture")
    want = float(m["q15"].sel(synthesizer="CW").mean()) - float(np.quantile(m.x.values, 0.15))
    assert s.bias(res, "nb_mixture", "CW", "q15") == pytest.approx(want)
    ws = s.width_summary(res)
    assert ws["median_ratio"] > 1 and ws["n_intervals"] == 16
    assert ws["eps_lw_mixed"] == pytest.approx(ws["eps_lw"] * 50)


def test_one_synthesizer_dimension(res):
    for ds in (res.synthesizers, res.contraction):
        assert "source" not in ds.dims
        assert list(ds.synthesizer.values) == registry.order([str(v) for v in ds.synthesizer.values])
        assert str(ds.synthesizer.values[0]) == "Data"
        assert s.fit_names(ds) == [str(v) for v in ds.synthesizer.values[1:]]
    assert s.fit_names(res.synthesizers) == list(rw.SYNTHESIZERS)
    # statistics of the data sit on the "Data" row of the same dimension
    assert s.bias(res, "poisson", "Data", "mean") == pytest.approx(
        float(res.synthesizers["mean"].sel(data_model="poisson", synthesizer="Data").mean())
        - float(res.synthesizers.x.sel(data_model="poisson").mean())
    )


def test_data_row_does_not_change_verdicts(res):
    """NaN/False on the "Data" row (not a fit) is not counted as a failed fit or an out-of-range weight."""
    v = _by_key(res)
    assert v["fits_converged"].numbers == {"not_converged": 0, "fits": 12 + 40}
    assert v["weights_in_unit_interval"].holds is True and v["replace_equals_remove"].holds is True
    assert "Data" not in set(s.fits_table(res).index.get_level_values("synthesizer"))


def test_captions_and_settings(res):
    cap = s.captions(res)
    assert all(k.startswith(("fig-reweighting-", "tbl-reweighting-")) for k in cap)
    assert len(cap) == 17
    for text in cap.values():
        assert "smoke scale" in text
    assert "5 replicates" in cap["fig-reweighting-local-bounds"]
    assert "one record removed" in cap["tbl-reweighting-fits"] and "one record replaced" in cap["tbl-reweighting-fits"]
    txt = s.settings_markdown(res)
    assert "n = 60" in txt and "n_syn" not in txt and "synthetic_sets" not in txt


@pytest.mark.slow
def test_smoke_run_end_to_end(tmp_path):
    params = rw.Params.smoke()
    res = rw.run(params, cache_dir=tmp_path, progress=False)
    assert res.synthesizers.sizes["data_model"] == 2
    assert res.contraction.sizes["replicate"] == params.replicates
    v = {x.key: x for x in rw.verdicts(res)}
    assert [x.key for x in rw.verdicts(res)] == KEYS
    for k in ("reweighting_never_raises_delta", "weights_in_unit_interval", "replace_equals_remove", "lw_lowers_delta"):
        assert v[k].holds is True, (k, v[k].evidence)
    assert v["local_bound_contracts"].holds is None  # two databases per size cannot decide
    assert sorted(p.name.split("-")[1] for p in tmp_path.glob("reweighting-*.nc")) == ["contraction", "synthesizers"]
