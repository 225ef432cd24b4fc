"""Verdicts of the "Releasing a whole table" chapter: each made to hold and to fail on constructed Datasets."""

from __future__ import annotations

import pytest
from whole_table_fake import AIM, BASE, CHAIN, METHODS, MST, OURS, fake_results

from dpsynth_book.experiments.whole_table import verdicts
from dpsynth_book.experiments.whole_table.tables import TARGETS
from dpsynth_book.experiments.whole_table.verdicts import cell_values, text_numbers


def _v(results):
    return {v.key: v for v in verdicts(results)}


def _with(var, **vals):
    return {var: {**BASE[var], **vals}}


def test_default_fake_verdicts_hold():
    v = _v(fake_results())
    for key in TARGETS:
        assert v[f"target_{key}"].holds is True, (key, v[f"target_{key}"].evidence)
    assert v["target_coverage"].holds is True and v["models_converged"].holds is True
    assert v["auto_beats_chain"].holds is True
    assert v["target_pmse_mid"].numbers["cells"] == 4 and v["target_pmse_low"].numbers["cells"] == 2


@pytest.mark.parametrize("key, base", [
    ("target_pmse_mid", _with("pmse_ratio", **{MST: 1.5})),
    ("target_pmse_low", _with("pmse_ratio", **{OURS: 5.0})),
    ("target_marginal_numeric", _with("marginal_numeric", **{OURS: 0.2})),
    ("target_marginal_categorical", _with("marginal_categorical", **{OURS: 0.013})),
    ("target_coef_rmse", _with("coef_rmse", **{AIM: 0.05})),
    ("target_pmse_int", _with("pmse_int_ratio", **{MST: 3.0})),
    ("target_seconds", _with("seconds", **{OURS: 100.0})),
    ("target_coverage", _with("coverage", **{OURS: 0.8})),
    ("auto_beats_chain", _with("marginal_numeric", **{CHAIN: 0.01})),
])
def test_each_verdict_can_fail(key, base):
    v = _v(fake_results(base=base))[key]
    assert v.holds is False, v.evidence


def test_the_categorical_target_allows_twice_the_peer():
    assert _v(fake_results(base=_with("marginal_categorical", **{OURS: 0.011})))["target_marginal_categorical"].holds


def test_unconverged_runs_fail_the_convergence_verdict():
    v = _v(fake_results(unconverged=2))["models_converged"]
    assert v.holds is False and v.numbers["unconverged"] == 2 and "2 of" in v.evidence


def test_missing_methods_leave_verdicts_undecided():
    v = _v(fake_results(methods=(OURS, CHAIN)))
    assert v["target_pmse_mid"].holds is None and v["target_seconds"].holds is None
    assert v["auto_beats_chain"].holds is True


def test_cell_values_and_text_numbers():
    tab = cell_values(fake_results(), "pairwise")
    assert set(tab.columns) == set(METHODS)
    n = text_numbers(fake_results())
    assert n["runs"] == 3 and n["eps_min"] == 1.0 and n["eps_max"] == 5.0 and n["implicates"] == 5
    assert n["tables"] == 2 and n["cells"] == 6
    assert n["top"]["aim"]["seconds"] == pytest.approx(BASE["seconds"][AIM])
    assert n["top"]["auto"]["coef"] == pytest.approx(BASE["coef_rmse"][OURS] / 5 ** 0.5)
    assert n["chain_gain"] == pytest.approx(BASE["marginal_numeric"][OURS] / BASE["marginal_numeric"][CHAIN])
    only = text_numbers(fake_results(methods=(OURS, CHAIN)))
    assert set(only["top"]) == set(n["top"]) and only["top"]["mst"]["coef"] != only["top"]["mst"]["coef"]  # NaN


def test_pmse_misses_counts_the_missed_cells_and_what_their_marginals_did():
    from dpsynth_book.experiments.whole_table.verdicts import pmse_misses

    none = pmse_misses(fake_results())
    assert none["judged"] == 6 and none["missed"] == 0 and none["worst_table"] == ""
    # ours 5x the better peer everywhere: every judged cell missed; numeric marginals better, categories worse
    m = pmse_misses(fake_results(base=_with("pmse_ratio", **{OURS: 12.5})))
    assert m["judged"] == 6 and m["missed"] == 6
    assert m["numeric_worse"] == 0 and m["categorical_worse"] == 6
    assert m["ours_numeric"] < m["peer_numeric"] and m["ours_categorical"] > m["peer_categorical"]
    assert m["worst_ratio"] == pytest.approx(12.5 / 2.5) and m["worst_table"] in ("house_prices", "nmes1988")
    # only ε = 1 is judged against 1.5 times the peer: ours at 1.4 times misses the ε = 3, 5 cells only
    m = pmse_misses(fake_results(base=_with("pmse_ratio", **{OURS: 3.5})))
    assert m["missed"] == 4 and m["worst_eps"] in (3.0, 5.0)
    assert pmse_misses(fake_results(methods=(OURS, CHAIN)))["judged"] == 0
    got = text_numbers(fake_results())["miss"]
    assert got["judged"] == 6 and got["missed"] == 0 and set(got) == set(none)


def test_coverage_misses_counts_the_cells_below_the_target_and_their_width():
    from dpsynth_book.experiments.whole_table.verdicts import coverage_misses

    none = coverage_misses(fake_results())
    assert none["judged"] == 6 and none["missed"] == 0 and none["width"] != none["width"]  # NaN
    m = coverage_misses(fake_results(base=_with("coverage", **{OURS: 0.8})))
    assert m["missed"] == 6 and m["missed_low"] == 2 and m["eps_low"] == 1.0
    assert m["coverage"] == pytest.approx(0.8) and m["width"] == pytest.approx(BASE["width_ratio"][OURS])
    assert coverage_misses(fake_results(methods=(CHAIN, MST)))["judged"] == 0
    assert text_numbers(fake_results())["cover"]["judged"] == 6
