"""Verdicts of the "Releasing a whole table" chapter: each made to hold and to fail on constructed Datasets."""

from __future__ import annotations

import pytest
from whole_table_fake import AIM, BASE, INDEP, METHODS, MST, OURS, fake_results

from dpsynth.experiments.whole_table import verdicts
from dpsynth.experiments.whole_table.verdicts import cell_values, text_numbers


def _v(results):
    return {v.key: v for v in verdicts(results)}


def _with(var, **vals):
    return {var: {**BASE[var], **vals}}


def test_default_fake_verdicts():
    v = _v(fake_results())
    assert v["chain_keeps_pairs"].holds is True
    assert v["chain_regression_vs_peers"].holds is True
    assert v["chain_pmse_vs_peers"].holds is True
    assert v["peers_categorical_marginal"].holds is True
    assert v["peers_numeric_marginal"].holds is True
    assert v["peers_faster"].holds is True
    assert v["models_converged"].holds is True
    assert v["chain_keeps_pairs"].numbers["wins"] == 6


@pytest.mark.parametrize("key, base", [
    ("chain_keeps_pairs", _with("pairwise", **{INDEP: 0.01})),
    ("chain_regression_vs_peers", _with("coef_rmse", **{AIM: 0.05})),
    ("chain_pmse_vs_peers", _with("pmse_ratio", **{MST: 1.5})),
    ("peers_categorical_marginal", _with("marginal_categorical", **{OURS: 0.01})),
    ("peers_numeric_marginal", _with("marginal_numeric", **{OURS: 0.01})),
    ("peers_faster", _with("seconds", **{OURS: 10.0})),
])
def test_each_verdict_can_fail(key, base):
    assert _v(fake_results(base=base))[key].holds is False


def test_unconverged_runs_fail_the_convergence_verdict():
    v = _v(fake_results(unconverged=2))["models_converged"]
    assert v.holds is False and v.numbers["unconverged"] == 2 and "2 of" in v.evidence


def test_missing_methods_leave_verdicts_undecided():
    v = _v(fake_results(methods=(OURS, INDEP)))
    assert v["chain_keeps_pairs"].holds is True
    assert v["chain_regression_vs_peers"].holds is None and v["peers_faster"].holds is None


def test_cell_values_and_text_numbers():
    tab = cell_values(fake_results(), "pairwise")
    assert list(tab.columns) == sorted(METHODS) or set(tab.columns) == set(METHODS)
    n = text_numbers(fake_results())
    assert n["runs"] == 3 and n["eps_min"] == 1.0 and n["eps_max"] == 5.0
    assert n["tables"] == 2 and n["cells"] == 6
    assert n["top"]["aim"]["seconds"] == pytest.approx(BASE["seconds"][AIM])
    assert n["top"]["table"]["pairwise"] == pytest.approx(BASE["pairwise"][OURS] / 5 ** 0.5)
    only = text_numbers(fake_results(methods=(OURS, INDEP)))
    assert set(only["top"]) == set(n["top"]) and only["top"]["mst"]["coef"] != only["top"]["mst"]["coef"]  # NaN
    assert n["ours_eps_remove"] == pytest.approx(1.2) and n["ours_eps_replace"] == pytest.approx(2.4)
