"""Tables of the range-restriction chapter on small synthetic Datasets (no MCMC)."""

from __future__ import annotations

import pytest
from range_restriction_fake import fake_study

from dpsynth_book.experiments.range_restriction import tables as T


def test_tables_are_narrow_and_labelled():
    ds = fake_study()
    tabs = [T.eps_table(ds), T.inequality_table(ds), T.decomposition_table(ds), T.mixing_table(ds),
            T.spread_table(ds), T.convergence_table(ds)]
    for t in tabs:
        assert t.shape[1] <= 7
    eps = T.eps_table(ds)
    assert "Unweighted (none)" in eps.index.get_level_values(0) and "B'[0.6,1.2] (aDP)" in eps.index.get_level_values(0)
    assert {"local εₓ (remove)", "local εₓ (replace)"} <= set(eps.columns)
    row = eps.loc[("LW (aDP)", 40)]
    assert row["local εₓ (replace)"] == pytest.approx(2 * row["local εₓ (remove)"])
    ineq = T.inequality_table(ds)
    assert list(ineq.columns) == ["n = 40", "n = 80", "n = 160"]
    assert ineq.loc["A[0.4,1.8] (aDP)", "n = 40"].startswith("4/4")
    assert "LW (aDP)" not in ineq.index
    conv = T.convergence_table(ds)
    assert "divergences (total)" in conv.columns and not any(i.startswith("B'") for i in conv.index)
    mix = T.mixing_table(ds)
    lw = mix.loc["LW (aDP)"]
    assert lw["local εₓ remove (mixed)"] == pytest.approx(30 * lw["local εₓ remove (one draw)"])
    assert T.decomposition_table(ds).loc[("[0.4,1.8]", 40), "attained at weight 0"] == "4/4"


def test_the_tables_hold_the_numbers_the_verdicts_quote():
    """Every number a verdict quotes is in a table of the page (the tables the notebook shows, with
    :func:`verdict_numbers_table`: the replicate-and-n counts and the mean λ), apart from the sample sizes and
    the replicates; without that table the counts are not (12 replicates, above the small integers spared)."""
    from test_page_check import _page

    from dpsynth_book import page_check
    from dpsynth_book.experiments.range_restriction import verdicts

    ds = fake_study(replicates=12)
    vs = verdicts(ds)
    shown = [T.eps_table(ds), T.inequality_table(ds), T.decomposition_table(ds), T.mixing_table(ds),
             T.spread_table(ds), T.convergence_table(ds)]
    declared = [float(n) for n in ds["n_obs"].values] + [12.0]
    numbers = T.verdict_numbers_table(vs)
    assert numbers.shape[1] == 1 and numbers.index.names == ["verdict", "figure"]
    cases = 12 * ds.sizes["n_obs"] * 2
    assert f"{cases}" in set(numbers["value"])
    assert page_check.unheld_numbers(_page(vs, shown + [numbers]), declared=declared) == []
    assert {u[0] for u in page_check.unheld_numbers(_page(vs, shown), declared=declared)} >= {f"{cases}"}
