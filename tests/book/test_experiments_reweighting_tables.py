"""Tables of the re-weighting chapter (synthetic results, no MCMC)."""

from __future__ import annotations

import numpy as np
import pytest
from reweighting_fake import fake_results

from dpsynth import registry
from dpsynth_book import presentation
from dpsynth_book.experiments import reweighting as rw
from dpsynth_book.experiments.reweighting import tables as s


@pytest.fixture
def res():
    return fake_results()


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
    np.testing.assert_allclose(fits["ε (replace)"], 2 * fits["ε (remove)"])
    t1 = s.table1(res)
    assert t1.shape[0] == 4 * len(s.TABLE1_SOURCES) and set(t1.columns) == {"ours", "paper", "overlap"}
    conv = s.convergence_table(res)
    assert {"divergences", "not converged"} <= set(conv.columns)
    assert int(conv.loc["appendix contraction", "fits"]) == s.fitted(res.contraction).converged.size == 5 * 2 * 2 * 2
    assert int(conv.loc["Sections 3–4 (reported fits)", "fits"]) == 12  # "Data" is not a fit
    assert "Data" not in set(fits.index.get_level_values("synthesizer"))


def test_data_value_is_a_statistic_of_the_confidential_records(res):
    m = res.synthesizers.sel(data_model="poisson")
    assert s.data_value(m, "mean") == pytest.approx(float(m.x.mean()))
    assert s.data_value(m, "q90") == pytest.approx(float(np.quantile(m.x.values, 0.9)))


def test_one_synthesizer_dimension(res):
    for ds in (res.synthesizers, res.contraction):
        assert "source" not in ds.dims
        assert list(ds.synthesizer.values) == presentation.order([str(v) for v in ds.synthesizer.values])
        assert str(ds.synthesizer.values[0]) == "Data"
        assert s.fit_names(ds) == [str(v) for v in ds.synthesizer.values[1:]]
    assert s.fit_names(res.synthesizers) == list(rw.SYNTHESIZERS)


def test_the_tables_hold_the_numbers_the_verdicts_quote(res):
    """Every number a verdict quotes is in a table of the page (the tables the notebook shows, with
    :func:`verdict_numbers_table`), apart from the declared settings; without that table some are not."""
    from test_page_check import _page

    from dpsynth_book import page_check

    vs = rw.verdicts(res)
    shown = [s.fits_table(res), s.reweighting_table(res), s.table1(res),
             s.width_table(res).drop(columns="mixed overlaps paper"),
             s.contraction_table(res).drop(columns=["min", "max"]), s.convergence_table(res)]
    declared = page_check.declared_numbers(res.params)
    numbers = s.verdict_numbers_table(vs)
    assert numbers.shape[1] == 1 and numbers.index.names == ["verdict", "figure"]
    place = {v.key: i for i, v in enumerate(vs, start=1)}
    assert place["one_draw_wider_than_mixed"] in numbers.index.get_level_values("verdict")
    assert page_check.unheld_numbers(_page(vs, shown + [numbers]), declared=declared) == []
    assert page_check.unheld_numbers(_page(vs, shown), declared=declared)
