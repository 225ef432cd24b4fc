"""Tables and verdicts of the range-restriction chapter on small synthetic Datasets (no MCMC),
plus one end-to-end run of the smoke preset."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

from dpsynth.experiments import range_restriction as chapter
from dpsynth.experiments.range_restriction import summaries as S
from dpsynth.experiments.range_restriction.replicate import synthesizer_names

RANGES = ((0.4, 1.8), (0.6, 1.2))
NAMES = synthesizer_names(RANGES)
NS = [40, 80, 160]


def fake_study(*, replicates: int = 4, b_exceeds: bool = True, seed: int = 0) -> xr.Dataset:
    """A study Dataset shaped like the replicate's output, with chosen orderings of Delta."""
    rng = np.random.default_rng(seed)
    R, N, M = replicates, len(NS), len(NAMES)
    base = {"Unweighted": 9.0, "LW": 3.5, "A[0.4,1.8]": 1.3, "A[0.6,1.2]": 0.6,
            "B[0.4,1.8]": 5.0 if b_exceeds else 3.0, "B[0.6,1.2]": 8.0 if b_exceeds else 2.5,
            "B'[0.4,1.8]": 1.5, "B'[0.6,1.2]": 1.2}
    shrink = np.array([1.0, 0.5, 0.25])[None, :, None]  # the spread contracts with n
    noise = 0.2 * rng.standard_normal((R, N, M)) * shrink
    delta = np.array([base[m] for m in NAMES])[None, None, :] + noise
    dims = ("replicate", "n_obs", "synthesizer")
    coords = {"replicate": np.arange(R), "n_obs": NS, "synthesizer": NAMES, "range": ["[0.4,1.8]", "[0.6,1.2]"],
              "record": np.arange(NS[0])}
    nan = np.full((R, N, M), np.nan)
    lam = nan.copy()
    lam[..., NAMES.index("A[0.4,1.8]")] = 0.6
    lam[..., NAMES.index("A[0.6,1.2]")] = 0.8
    w_at_max = np.ones((R, N, M))
    nlp = nan.copy()
    for t in ("[0.4,1.8]", "[0.6,1.2]"):
        j = NAMES.index(f"B{t}")
        w_at_max[..., j] = 0.0
        nlp[..., j] = delta[..., j]          # weight 0: the bound is that record's -log P
    ecdf = np.full((R, N, M), 0.01)
    for t in ("[0.4,1.8]", "[0.6,1.2]"):
        ecdf[..., NAMES.index(f"A{t}")] = 0.005
    record = np.full((R, M, NS[0]), np.nan)
    record[0] = delta[0, 0][:, None] * np.linspace(0.1, 1.0, NS[0])[None, :]
    ds = xr.Dataset({
        "delta": (dims, delta), "eps": (dims, 2 * delta), "eps_replace": (dims, 4 * delta),
        "converged": (dims, np.ones((R, N, M), bool)), "divergences": (dims, np.zeros((R, N, M), np.int64)),
        "rhat_max": (dims, np.full((R, N, M), 1.002)), "ess_min": (dims, np.full((R, N, M), 400.0)),
        "q90": (dims, 9 + rng.standard_normal((R, N, M))), "q90_mixed": (dims, np.full((R, N, M), 9.0)),
        "avg_ecdf": (dims, ecdf), "avg_ecdf_mixed": (dims, ecdf * 0.8), "max_ecdf": (dims, ecdf * 10),
        "n_draws_mixed": (dims, np.full((R, N, M), 30)), "mean_lambda": (dims, lam),
        "weight_at_max": (dims, w_at_max), "x_rank_at_max": (dims, np.ones((R, N, M))),
        "neg_log_prob_at_max": (dims, nlp), "max_neg_log_prob": (dims, np.where(np.isnan(nlp), np.nan, nlp + 1)),
        "delta_trunc_unweighted": (("replicate", "n_obs", "range"), np.full((R, N, 2), 4.0)),
        "q90_data": (("replicate", "n_obs"), np.full((R, N), 9.5)),
        "record_delta": (("replicate", "synthesizer", "record"), record),
        "convergence_warnings": (("replicate",), np.zeros(R, np.int64)),
    }, coords=coords)
    ds = ds.assign_coords(guarantee=("synthesizer", ["none"] + ["aDP"] * 7))
    ds.attrs.update(n_main=NS[0], true_q90=9.8)
    return ds


def _by_key(vs):
    return {v.key: v for v in vs}


def test_verdicts_on_a_study_where_literal_b_exceeds_lw():
    v = _by_key(S.verdicts(fake_study()))
    assert set(v) == {"accounting_consistent", "lw_below_unweighted", "averaged_within_lw", "literal_b_within_lw",
                      "literal_b_exceeds_by_range_term", "literal_b_attained_by_zero_weight", "whole_term_within_lw",
                      "narrower_range_buys_more", "averaged_utility_within_lw", "utility_comparison_same_when_mixing",
                      "bound_contracts"}
    for k in set(v) - {"literal_b_within_lw"}:
        assert v[k].holds is True, (k, v[k].evidence)
    assert v["literal_b_within_lw"].holds is False
    assert v["literal_b_within_lw"].numbers["within"] == 0 and v["literal_b_within_lw"].numbers["cases"] == 24
    assert v["literal_b_attained_by_zero_weight"].numbers["exceed"] == 24
    assert v["narrower_range_buys_more"].numbers["narrow"] == "[0.6,1.2]"


def test_verdicts_when_literal_b_stays_below_lw_and_few_replicates():
    v = _by_key(S.verdicts(fake_study(b_exceeds=False, replicates=2)))
    assert v["literal_b_within_lw"].holds is True
    assert v["literal_b_attained_by_zero_weight"].holds is None     # nothing to explain
    assert v["literal_b_exceeds_by_range_term"].holds is None
    assert v["bound_contracts"].holds is None                        # too few replicates to tell


def test_zero_weight_verdict_fails_when_a_weighted_record_attains_the_bound():
    ds = fake_study()
    ds["weight_at_max"].loc[dict(replicate=0, n_obs=40, synthesizer="B[0.6,1.2]")] = 0.2
    v = _by_key(S.verdicts(ds))
    assert v["literal_b_attained_by_zero_weight"].holds is False
    assert v["literal_b_attained_by_zero_weight"].numbers["exceed_at_zero_weight"] == 23
    assert v["literal_b_exceeds_by_range_term"].holds is True     # -log P alone still exceeds LW's bound


def test_accounting_verdict_catches_a_wrong_eps():
    ds = fake_study()
    ds["eps_replace"] = 2 * ds["delta"]
    v = _by_key(S.verdicts(ds))["accounting_consistent"]
    assert v.holds is False and v.numbers["eps_replace_is_4_delta"] is False


def test_averaged_verdict_fails_when_a_exceeds_lw():
    ds = fake_study()
    ds["delta"].loc[dict(replicate=1, n_obs=80, synthesizer="A[0.4,1.8]")] = 10.0
    v = _by_key(S.verdicts(ds))["averaged_within_lw"]
    assert v.holds is False and v.numbers["within"] == v.numbers["cases"] - 1


def test_tables_are_narrow_and_labelled():
    ds = fake_study()
    tabs = [S.eps_table(ds), S.inequality_table(ds), S.decomposition_table(ds), S.mixing_table(ds),
            S.spread_table(ds), S.convergence_table(ds)]
    for t in tabs:
        assert t.shape[1] <= 7
    eps = S.eps_table(ds)
    assert "Unweighted (none)" in eps.index.get_level_values(0) and "B'[0.6,1.2] (aDP)" in eps.index.get_level_values(0)
    assert {"eps (remove)", "eps (replace)"} <= set(eps.columns)
    row = eps.loc[("LW (aDP)", 40)]
    assert row["eps (replace)"] == pytest.approx(2 * row["eps (remove)"])
    ineq = S.inequality_table(ds)
    assert list(ineq.columns) == ["n = 40", "n = 80", "n = 160"]
    assert ineq.loc["A[0.4,1.8] (aDP)", "n = 40"].startswith("4/4")
    assert "LW (aDP)" not in ineq.index
    conv = S.convergence_table(ds)
    assert "divergences (total)" in conv.columns and not any(i.startswith("B'") for i in conv.index)
    assert S.convergence_summary(ds)["fits"] == 6 * 3 * 4
    mix = S.mixing_table(ds)
    assert mix.loc["LW (aDP)", "eps remove (mixed)"] == pytest.approx(30 * mix.loc["LW (aDP)", "eps remove (one draw)"])
    assert S.decomposition_table(ds).loc[("[0.4,1.8]", 40), "attained at weight 0"] == "4/4"


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::dpsynth.fitting.ConvergenceWarning")
def test_smoke_preset_end_to_end(tmp_path):
    res = chapter.run(chapter.Params.smoke(), cache_dir=tmp_path, progress=False)
    assert res.names == NAMES[:] and res.study.sizes["replicate"] == chapter.Params.smoke().replicates
    v = _by_key(chapter.verdicts(res))
    for k in ("accounting_consistent", "lw_below_unweighted", "averaged_within_lw", "whole_term_within_lw"):
        assert v[k].holds is True, (k, v[k].evidence)
    assert v["literal_b_within_lw"].holds is False   # the literal reading fails on the tail records
    assert v["literal_b_exceeds_by_range_term"].holds is True
    again = chapter.run(chapter.Params.smoke(), cache_dir=tmp_path, progress=False)
    assert again.study.attrs["from_cache"] == 1
