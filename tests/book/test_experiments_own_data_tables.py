"""Tables of the "Your own data" chapter on small constructed Datasets (no MCMC)."""

from __future__ import annotations

import numpy as np
import pytest
from own_data_fake import EPS, QCOLS, TERMS, TRUE_COEF, N, fake_results, fake_study, fake_units

from dpsynth import registry
from dpsynth_book.experiments.own_data import tables as T
from dpsynth_book.experiments.own_data.replicate import UNIT_SETTINGS


def _label(name, eps=None):
    return registry.label(name) + ("" if eps is None else f", ε={eps:g}")


# --------------------------------------------------------------------------------------------
# the fake has the replicate's structure
# --------------------------------------------------------------------------------------------


def test_fake_study_has_the_replicate_structure():
    from dpsynth_book.experiments.own_data.params import OwnDataParams
    from dpsynth_book.experiments.own_data.replicate import synthesizer_names

    ds = fake_study()
    assert dict(ds.sizes) == {"replicate": 3, "fit": 3 + 4 * len(EPS), "term": len(TERMS)}
    assert set(ds["synthesizer"].values) <= {registry.display_name(n) for n in synthesizer_names(OwnDataParams())}
    assert ds["coef"].dims == ("replicate", "fit", "term")


def test_fit_frame_and_accessors():
    res = fake_results()
    assert T.study_of(res) is res.study and T.study_of(res.study) is res.study
    assert T.units_of(res) is res.units and T.units_of(res.units) is res.units
    f = T.fit_frame(res)
    assert len(f) == 3 * res.study.sizes["fit"]
    assert {"replicate", "synthesizer", "eps", "delta", "converged", *QCOLS} <= set(f.columns)
    assert "coef" not in f.columns and f["eps"].dtype == float


# --------------------------------------------------------------------------------------------
# privacy table
# --------------------------------------------------------------------------------------------


def test_privacy_table_rows_columns_and_medians():
    study = fake_study(unconverged=[("Censor_uw", 5.0)])
    tab = T.privacy_table(study)
    assert list(tab.columns) == ["ε (one removed)", "ε (one replaced)", "Δ", "records censored", "converged",
                                 "time per release (s)"]
    assert tab.attrs["runs"] == 3
    # the book's order, the eps-free fits first; Data is not a mechanism
    assert [i.removesuffix(" †") for i in tab.index] == [
        _label("Unweighted"), _label("LW"),
        *[_label(n, e) for e in EPS for n in ("Censor_w", "Censor_uw", "PH", "OpenDP-Q")]]
    # medians over the runs
    f = T.fit_frame(study)
    for name, eps, row in (("Unweighted", None, _label("Unweighted")), ("Censor_w", 5.0, _label("Censor_w", 5.0))):
        g = f[(f["synthesizer"] == name) & (f["eps"].isna() if eps is None else f["eps"] == eps)]
        assert tab.loc[row, "Δ"] == pytest.approx(np.median(g["delta"]))
        assert tab.loc[row, "ε (one removed)"] == pytest.approx(np.median(g["eps_remove"]))
        assert tab.loc[row, "ε (one replaced)"] == pytest.approx(np.median(g["eps_replace"]))
        assert tab.loc[row, "records censored"] == pytest.approx(np.median(g["n_censored"]))
        assert tab.loc[row, "time per release (s)"] == pytest.approx(np.median(g["release_seconds"]))
    assert tab.loc[_label("Unweighted"), "Δ"] == 21.0  # 20, 21, 22
    assert tab.loc[_label("LW"), "time per release (s)"] == 80.0 + 110.0


def test_privacy_table_marks_a_failed_run_and_the_fits_without_mcmc():
    tab = T.privacy_table(fake_study(unconverged=[("Censor_uw", 5.0)]))
    # the failure is in every replicate of the fake: 0 of 3 converged, and the row is marked
    assert tab.loc[_label("Censor_uw", 5.0) + " †", "converged"] == "0/3"
    assert tab.loc[_label("Censor_uw", 1.0), "converged"] == "3/3"
    assert sum(lab.endswith(" †") for lab in tab.index) == 1
    for e in EPS:
        for name in ("PH", "OpenDP-Q"):
            assert tab.loc[_label(name, e), "converged"] == "no MCMC"
            assert np.isnan(tab.loc[_label(name, e), "Δ"])
            assert tab.loc[_label(name, e), "ε (one removed)"] == e
    # one run in three failed: counted, not dropped
    ds = fake_study()
    i = int(np.flatnonzero((ds["synthesizer"].values == "Censor_w") & (ds["eps"].values == 1.0))[0])
    ds["converged"][1, i] = False
    tab = T.privacy_table(ds)
    assert tab.loc[_label("Censor_w", 1.0) + " †", "converged"] == "2/3"


# --------------------------------------------------------------------------------------------
# utility and coefficient tables
# --------------------------------------------------------------------------------------------


def test_utility_table_means_over_runs():
    study = fake_study(unconverged=[("Censor_w", 1.0)])
    tab = T.utility_table(study)
    assert list(tab.columns) == ["max-ECDF", "avg-ECDF (×10⁴)", "10th pct ($)", "25th pct ($)", "50th pct ($)",
                                 "75th pct ($)", "90th pct ($)"]
    assert tab.index[0] == "Data" and tab.loc["Data", "max-ECDF"] == 0.0
    assert list(tab.loc["Data", ["10th pct ($)", "50th pct ($)", "90th pct ($)"]]) == [170.0, 522.0, 1100.0]
    assert _label("Censor_w", 1.0) + " †" in tab.index
    f = T.fit_frame(study)
    g = f[(f["synthesizer"] == "PH") & (f["eps"] == 5.0)]
    row = tab.loc[_label("PH", 5.0)]
    assert row["max-ECDF"] == pytest.approx(g["max_ecdf"].mean())
    assert row["avg-ECDF (×10⁴)"] == pytest.approx(1e4 * g["avg_ecdf"].mean())
    assert row["90th pct ($)"] == pytest.approx(g["q90"].mean()) and row["90th pct ($)"] != 1100.0
    assert len(tab) == 1 + 2 + 4 * len(EPS)


def test_coefficient_table_data_beside_the_mechanisms_at_eps():
    study = fake_study()
    tab = T.coefficient_table(study, 5.0)
    assert tab.index.name == "term" and list(tab.index) == TERMS
    assert list(tab.columns) == ["Data", _label("Unweighted"), _label("LW"),
                                 *[_label(n) for n in ("Censor_w", "Censor_uw", "PH", "OpenDP-Q")]]
    np.testing.assert_allclose(tab["Data"], TRUE_COEF)
    # the mean over runs of each run's coefficients: Censor_uw is TRUE + 0.01 (r + 1), r = 0, 1, 2
    np.testing.assert_allclose(tab[_label("Censor_uw")], TRUE_COEF + 0.02, atol=1e-12)
    i = int(np.flatnonzero((study["synthesizer"].values == "OpenDP-Q") & (study["eps"].values == 5.0))[0])
    np.testing.assert_allclose(tab[_label("OpenDP-Q")], study["coef"].isel(fit=i).mean("replicate"), atol=1e-12)
    sub = T.coefficient_table(study, 1.0, synthesizers=["Censor_uw", "OpenDP-Q"])
    assert list(sub.columns) == ["Data", _label("Censor_uw"), _label("OpenDP-Q")]
    assert T.coefficient_table(study, 2.0).shape[1] == 3  # no fit at eps 2: Data and the eps-free fits


# --------------------------------------------------------------------------------------------
# units table and the sentences
# --------------------------------------------------------------------------------------------


def test_units_table():
    units = fake_units(mechanisms=("Censor_w", "Censor_uw"))
    tab = T.units_table(units)
    assert tab.index.names == ["mechanism", "ε", "setting"]
    assert list(tab.columns) == [f"records censored (of {N:,})", "synthetic median ($)", "max-ECDF", "converged"]
    assert len(tab) == 2 * 2 * 3
    # the book's order (Censor_w first), though the Dataset holds the mechanisms alphabetically
    assert list(units["mechanism"].values) == ["Censor_uw", "Censor_w"]
    assert list(tab.index.get_level_values(0).unique()) == [registry.label("Censor_w"), registry.label("Censor_uw")]
    assert list(tab.index.get_level_values(1)[:6]) == [5.0] * 3 + [10.0] * 3
    flat = tab.reset_index()
    first = flat[(flat["mechanism"] == registry.label("Censor_uw")) & (flat["ε"] == 5.0)]
    assert list(first["setting"]) == list(UNIT_SETTINGS)
    row = tab.loc[(registry.label("Censor_w"), 10.0, "dollars")]
    assert row[f"records censored (of {N:,})"] == pytest.approx(0.95 * N + 0.5)  # mean of r = 0, 1
    assert row["synthetic median ($)"] == pytest.approx(150.5) and row["max-ECDF"] == pytest.approx(0.705)
    assert row["converged"] == "1/2"
    assert tab.loc[(registry.label("Censor_w"), 10.0, "thousands"), "converged"] == "2/2"


# --------------------------------------------------------------------------------------------
# the files and unit-free studies
# --------------------------------------------------------------------------------------------


def test_files_tables_counts_and_means_come_from_the_study():
    from own_data_fake import fake_files

    ds = fake_files(unconverged=[("nmes1988", 1.0, 2)])
    fit, util = T.files_fit_table(ds), T.files_utility_table(ds)
    for tab in (fit, util):
        assert list(tab.index) == [(f, e) for f in ("cps1988", "nmes1988", "fishing") for e in (1.0, 5.0)]
        assert tab.shape[1] <= 7, list(tab.columns)  # a page's width
    assert fit.loc[("nmes1988", 1.0), "converged"] == "2/3"
    assert not any("retr" in str(c) for c in fit.columns)  # every fit is run once: no retries to count
    # an older shipped file carries a `retries` variable: it is read as it is and ignored
    old = ds.assign(retries=ds["rhat_max"] * 0 + 1)
    assert T.files_fit_table(old).equals(fit)
    assert fit.loc[("nmes1988", 5.0), "converged"] == "3/3"
    # the shares of the total asked (the index): a categorical target's DP counts, the draw the rest
    assert fit.loc[("fishing", 5.0), "ε reference"] == pytest.approx(0.5)
    assert fit.loc[("fishing", 5.0), "ε draw"] == pytest.approx(4.5)
    assert fit.loc[("cps1988", 5.0), "ε reference"] == 0.0 and fit.loc[("cps1988", 5.0), "ε draw"] == pytest.approx(5.0)
    assert fit.loc[("cps1988", 5.0), "α"] == pytest.approx(0.5)
    assert fit.loc[("nmes1988", 1.0), "time per release (s)"] == pytest.approx(7.0 + 1 + 0.5)
    # the categorical file shows its TVD, the numeric ones their max-ECDF (both 0.02 / eps in the fake)
    assert util.loc[("fishing", 5.0), "max-ECDF / TVD"] == pytest.approx(0.004)
    assert util.loc[("cps1988", 1.0), "max-ECDF / TVD"] == pytest.approx(0.02)
    assert util.loc[("fishing", 1.0), "target"] == "mode (categorical)"
    assert util.loc[("cps1988", 1.0), "coef. error (SEs)"] == pytest.approx(1.0)
    assert util.loc[("cps1988", 5.0), "pMSE ratio"] == pytest.approx(1.2)


def test_files_marginal_tables():
    from own_data_fake import SHARES, fake_files

    ds = fake_files()
    q = T.files_quantile_table(ds)
    assert list(q.index.get_level_values(0).unique()) == ["cps1988", "nmes1988"]  # numeric targets only
    assert q.loc[("cps1988", "original"), "50th pct"] == pytest.approx(np.exp(0.5))
    assert q.loc[("cps1988", "synthetic, ε=1"), "50th pct"] == pytest.approx(np.exp(0.5) * 1.1)
    s = T.files_share_table(ds)
    assert list(s.index) == [("fishing", "original"), ("fishing", "synthetic, ε=1"), ("fishing", "synthetic, ε=5")]
    np.testing.assert_allclose(s.loc[("fishing", "original")].to_numpy(), SHARES)
    assert s.loc[("fishing", "synthetic, ε=1"), "beach"] == pytest.approx(0.12)


def test_unitfree_table():
    from own_data_fake import fake_unitfree

    u = fake_unitfree(ref_censored=(20.0, 25.0, 30.0))
    tab = T.unitfree_table(u)
    col = f"records censored (of {N:,})"
    assert tab.loc[(_label("Censor_ref"), 5.0, "cents"), col] == pytest.approx(30.0)
    assert tab.loc[(_label("Censor_uw"), 1.0, "dollars"), col] == pytest.approx(28000.0)
    assert tab.loc[(_label("Censor_ref"), 1.0, "thousands"), "sd (censored)"] == pytest.approx(2.0)
    assert tab.loc[(_label("Censor_ref"), 1.0, "thousands"), "converged"] == "3/3"
    assert list(tab.index.get_level_values(2)[:3]) == ["dollars", "thousands", "cents"]


def test_the_tables_hold_the_numbers_the_verdicts_quote():
    """Every number a verdict quotes is in a table of the page (the tables the notebook shows, with
    :func:`verdict_numbers_table` and :func:`unit_spread_table`), apart from the declared ε grid and sizes;
    without the two tables the unit spreads and tolerances are not."""
    from own_data_fake import fake_all
    from test_page_check import _page

    from dpsynth_book import page_check
    from dpsynth_book.experiments.own_data import verdicts

    res = fake_all()
    vs = verdicts(res)
    top = max(EPS)
    shown = [T.privacy_table(res), T.utility_table(res), T.coefficient_table(res, top), T.files_fit_table(res),
             T.files_utility_table(res), T.units_table(res), T.unitfree_table(res)]
    new = [T.verdict_numbers_table(vs), T.unit_spread_table(res)]
    assert new[0].shape[1] == 1 and new[1].shape[1] <= 4
    declared = [float(e) for e in EPS] + [float(N)]
    assert page_check.unheld_numbers(_page(vs, shown + new), declared=declared) == []
    missing = {u[1] for u in page_check.unheld_numbers(_page(vs, shown), declared=declared)}
    assert "Censor_uw's censoring moves with the unit" in missing
