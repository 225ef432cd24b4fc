"""Verdicts of the range-restriction chapter and the numbers its prose quotes, on small synthetic Datasets
(no MCMC), plus one end-to-end run of the smoke preset."""

from __future__ import annotations

import importlib

import pytest
from range_restriction_fake import NAMES, fake_study

from dpsynth_book import book
from dpsynth_book.experiments import range_restriction as chapter
from dpsynth_book.experiments.range_restriction import verdicts

# the module (the package attribute ``range_restriction.verdicts`` is the function it re-exports)
V = importlib.import_module("dpsynth_book.experiments.range_restriction.verdicts")


def _by_key(vs):
    return {v.key: v for v in vs}


def test_verdicts_on_a_study_where_literal_b_exceeds_lw():
    v = _by_key(verdicts(fake_study()))
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
    v = _by_key(verdicts(fake_study(b_exceeds=False, replicates=2)))
    assert v["literal_b_within_lw"].holds is True
    assert v["literal_b_attained_by_zero_weight"].holds is None     # nothing to explain
    assert v["literal_b_exceeds_by_range_term"].holds is None
    assert v["bound_contracts"].holds is None                        # too few replicates to tell


def test_zero_weight_verdict_fails_when_a_weighted_record_attains_the_bound():
    ds = fake_study()
    ds["weight_at_max"].loc[dict(replicate=0, n_obs=40, synthesizer="B[0.6,1.2]")] = 0.2
    v = _by_key(verdicts(ds))
    assert v["literal_b_attained_by_zero_weight"].holds is False
    assert v["literal_b_attained_by_zero_weight"].numbers["exceed_at_zero_weight"] == 23
    assert v["literal_b_exceeds_by_range_term"].holds is True     # -log P alone still exceeds LW's bound


def test_accounting_verdict_catches_a_wrong_eps():
    ds = fake_study()
    ds["eps_replace"] = 2 * ds["delta"]
    v = _by_key(verdicts(ds))["accounting_consistent"]
    assert v.holds is False and v.numbers["eps_replace_is_4_delta"] is False


def test_averaged_verdict_fails_when_a_exceeds_lw():
    ds = fake_study()
    ds["delta"].loc[dict(replicate=1, n_obs=80, synthesizer="A[0.4,1.8]")] = 10.0
    v = _by_key(verdicts(ds))["averaged_within_lw"]
    assert v.holds is False and v.numbers["within"] == v.numbers["cases"] - 1


def test_convergence_numbers_count_each_fit_once():
    ds = fake_study()
    n = V.convergence_summary(ds)
    assert n["fits"] == 6 * 3 * 4  # B' re-uses B's fit
    assert n["not_converged"] == int((~ds["converged"].sel(synthesizer=[m for m in NAMES if not m.startswith("B'")])
                                      .values.astype(bool)).sum())
    assert {"fits_with_divergences", "divergences", "convergence_warnings", "not_converged_at_n"} <= set(n)
    keys = book.glue_values("range", V.text_numbers(ds))
    assert keys["range-convergence-fits"] == 72 and "range-convergence-convergence-warnings" in keys


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


def test_contraction_verdict_fails_when_the_spread_rises_at_the_largest_n():
    import numpy as np

    ds = fake_study(replicates=8)
    ns = [int(n) for n in ds["n_obs"].values]
    lw = ds["delta"].sel(synthesizer="LW")
    # the spread falls, then rises at the last step, while the median keeps rising (as in the shipped study)
    for n, iqr, level in zip(ns, (0.8, 0.4, 0.6), (3.4, 3.6, 4.0)):
        lw.loc[dict(n_obs=n)] = level + iqr * np.linspace(-1, 1, ds.sizes["replicate"])
    ds["delta"].loc[dict(synthesizer="LW")] = lw
    v = _by_key(verdicts(ds))["bound_contracts"]
    assert v.holds is False
    assert v.numbers["LW"]["iqr_not_falling"] == [(ns[1], ns[2])]
    assert f"at n = {ns[1]} to" in v.evidence and "the median rises at every step" in v.evidence
    n = V.contraction_numbers(ds)
    assert n["word"] == "does not hold" and n["rises"] == 1 and n["evidence"] == v.evidence
    assert n["median"][ns[-1]] == pytest.approx(4.0)
    keys = book.glue_values("range", V.text_numbers(ds))
    assert keys["range-contraction-word"] == "does not hold" and f"range-contraction-iqr-{ns[0]}" in keys
    assert V.contraction_numbers(fake_study())["word"] == "holds"
