"""Tables, sentences and verdicts of the "Your own data" chapter on small constructed Datasets (no MCMC).

:func:`fake_study` and :func:`fake_units` build Datasets with the structure of the replicates'
output as :func:`dpsynth.studies.run_study` returns it (replicates concatenated along
``replicate``), with chosen values, so that every number a table or sentence shows can be
checked against its source and every verdict made to hold or fail.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from dpsynth import registry
from dpsynth.experiments.own_data import OwnDataResults, Params
from dpsynth.experiments.own_data import summaries as S
from dpsynth.experiments.own_data.replicate import QUANTILES, UNIT_SETTINGS
from dpsynth.studies import fits_to_dataset

TERMS = ["intercept", "educ", "exper", "exper2", "ethnicity=cauc", "smsa=yes", "region=northeast", "region=south",
         "region=west", "parttime=yes"]
#: The analyst's coefficients on the confidential data.
TRUE_COEF = np.array([6.2, 0.09, 0.6, -0.12, 0.25, 0.17, 0.03, -0.05, -0.02, -1.1])
EPS = (1.0, 5.0)
N = 28155
QCOLS = [f"q{int(round(100 * a))}" for a in QUANTILES]
DATA_Q = [170.0, 308.0, 522.0, 783.0, 1100.0]
MODEL_BASED = ("Unweighted", "Weighted", "Censor_w", "Censor_uw")


def _diag(delta, n_censored, seconds, total, converged=True):
    return {"delta": delta, "eps_remove": 2 * delta, "eps_replace": 4 * delta, "n_censored": n_censored,
            "converged": converged, "rhat_max": 1.002, "ess_min": 400.0, "divergences": 0.0,
            "fit_seconds": seconds, "release_seconds": total}


def _nan_diag(eps, seconds):
    nan = float("nan")
    return {"delta": nan, "eps_remove": eps, "eps_replace": 2 * eps, "n_censored": nan, "converged": True,
            "rhat_max": nan, "ess_min": nan, "divergences": nan, "fit_seconds": seconds, "release_seconds": seconds}


def _util(r, offset):
    q = {c: v * (1 + offset) + r for c, v in zip(QCOLS, DATA_Q)}
    return {"max_ecdf": 0.02 + offset + 0.001 * r, "avg_ecdf": 1e-4 * (1 + 10 * offset) + 1e-6 * r, **q}


def fake_replicate(r: int, *, eps=EPS, unconverged=(), delta_excess=0.0, replace_ratio=2.0,
                   regression_kept=True, model_free_offset=0.02) -> xr.Dataset:
    """One replicate's Dataset with the structure of :func:`~dpsynth.experiments.own_data.replicate.replicate`.

    ``unconverged`` lists (synthesizer, eps) pairs whose fit failed its checks in this replicate;
    ``delta_excess`` is added to Censor_uw's Delta at the largest eps; ``replace_ratio`` scales
    PH's replaced epsilon; ``regression_kept`` makes Censor_uw's coefficients close to the data's
    (else OpenDP-Q's are closer); ``model_free_offset / eps`` is OpenDP-Q's max-ECDF above 0.02
    (Censor_uw's is ``0.05 / eps``, PH's ``0.2 / eps``).
    """
    nan = float("nan")
    rows = [{"synthesizer": "Data", "eps": nan, **{k: nan for k in _diag(0, 0, 0, 0)}, "converged": True,
             "max_ecdf": 0.0, "avg_ecdf": 0.0, **dict(zip(QCOLS, DATA_Q))}]
    coefs = [TRUE_COEF]
    close, far = TRUE_COEF + 0.01 * (r + 1), np.r_[TRUE_COEF[0], np.zeros(TRUE_COEF.size - 1)]
    t_base = 100.0 + 10 * r
    rows.append({"synthesizer": "Unweighted", "eps": nan, **_diag(20.0 + r, 0.0, t_base, t_base), **_util(r, 0.0)})
    coefs.append(TRUE_COEF + 0.001)
    rows.append({"synthesizer": "Weighted", "eps": nan, **_diag(3.0 + 0.5 * r, 0.0, 80.0, 80.0 + t_base),
                 **_util(r, 0.01)})
    coefs.append(TRUE_COEF + 0.002)
    for e in eps:
        excess = delta_excess if e == max(eps) else 0.0
        for name, total_extra, cens in (("Censor_w", t_base, 100.0 + r), ("Censor_uw", 0.0, 200.0 + 2 * r)):
            ok = (name, e) not in unconverged
            d = e / 2 + (excess if name == "Censor_uw" else 0.0)
            rows.append({"synthesizer": name, "eps": e, **_diag(d, cens / e, 90.0 + e, 90.0 + e + total_extra, ok),
                         **_util(r, 0.05 / e)})
            coefs.append(close if (name == "Censor_uw") == regression_kept else far)
        ph = _nan_diag(e, 0.01)
        ph["eps_replace"] = replace_ratio * e
        rows.append({"synthesizer": "PH", "eps": e, **ph, **_util(r, 0.2 / e)})
        coefs.append(far)
        rows.append({"synthesizer": "OpenDP-Q", "eps": e, **_nan_diag(e, 0.5), **_util(r, model_free_offset / e)})
        coefs.append(far if regression_kept else close)
    ds = fits_to_dataset(rows)
    ds["coef"] = xr.DataArray(np.vstack(coefs), dims=("fit", "term"), coords={"term": TERMS})
    ds["converged"] = ds["converged"].astype(bool)
    ds = ds.assign_coords(guarantee=("fit", [str(registry.guarantee(str(s)) or "") for s in ds.synthesizer.values]))
    ds["data_fingerprint"] = np.int64(12345)
    ds.attrs.update({"n": N, "unit": "thousands"})
    return ds


def fake_study(replicates: int = 3, **kw) -> xr.Dataset:
    """Replicates concatenated as :func:`dpsynth.studies.run_study` does."""
    reps = [fake_replicate(r, **kw) for r in range(replicates)]
    return xr.concat(reps, dim=pd.Index(range(replicates), name="replicate"))


def fake_units(replicates: int = 2, *, dollars=0.95, thousands=0.02, offset=0.025, mechanisms=("Censor_w",),
               eps=(5.0, 10.0)) -> xr.Dataset:
    """The units study with chosen shares of records censored per setting (equal across eps)."""
    share = {"dollars": dollars, "thousands": thousands, "dollars, offset -log 1000": offset}
    reps = []
    for r in range(replicates):
        rows = []
        for s in UNIT_SETTINGS:
            for m in mechanisms:
                for e in eps:
                    rows.append({"setting": s, "mechanism": m, "eps": e, "n_censored": share[s] * N + r,
                                 "delta": e / 2, "median": (150.0 if s == "dollars" else 520.0) + r,
                                 "max_ecdf": (0.7 if s == "dollars" else 0.03) + 0.01 * r,
                                 "converged": not (s == "dollars" and r == 0), "rhat_max": 1.0, "divergences": 0.0})
        ds = pd.DataFrame(rows).set_index(["setting", "mechanism", "eps"]).to_xarray()
        ds = ds.reindex(setting=list(UNIT_SETTINGS))
        ds["converged"] = ds["converged"].astype(bool)
        ds["median_data"] = 522.32
        ds["data_fingerprint"] = np.int64(1)
        ds["censoring_warnings"] = np.int64(len(mechanisms) * len(eps))
        ds.attrs.update({"n": N})
        reps.append(ds)
    return xr.concat(reps, dim=pd.Index(range(replicates), name="replicate"))


def fake_results(**kw) -> OwnDataResults:
    units_kw = {k: kw.pop(k) for k in ("dollars", "thousands", "offset") if k in kw}
    return OwnDataResults(params=Params.quick(), study=fake_study(**kw), units=fake_units(**units_kw))


def _by_key(vs):
    return {v.key: v for v in vs}


def _label(name, eps=None):
    return registry.label(name) + ("" if eps is None else f", ε={eps:g}")


# --------------------------------------------------------------------------------------------
# the fake has the replicate's structure
# --------------------------------------------------------------------------------------------


def test_fake_study_has_the_replicate_structure():
    from dpsynth.experiments.own_data.params import MECHANISM_KEYS
    from dpsynth.mechanisms import get

    ds = fake_study()
    assert dict(ds.sizes) == {"replicate": 3, "fit": 3 + 4 * len(EPS), "term": len(TERMS)}
    assert set(ds["synthesizer"].values) == {"Data", "Unweighted", *(get(k).name for k in MECHANISM_KEYS)}
    assert ds["coef"].dims == ("replicate", "fit", "term")


def test_fit_frame_and_accessors():
    res = fake_results()
    assert S.study_of(res) is res.study and S.study_of(res.study) is res.study
    assert S.units_of(res) is res.units and S.units_of(res.units) is res.units
    f = S.fit_frame(res)
    assert len(f) == 3 * res.study.sizes["fit"]
    assert {"replicate", "synthesizer", "eps", "delta", "converged", *QCOLS} <= set(f.columns)
    assert "coef" not in f.columns and f["eps"].dtype == float


# --------------------------------------------------------------------------------------------
# privacy table
# --------------------------------------------------------------------------------------------


def test_privacy_table_rows_columns_and_medians():
    study = fake_study(unconverged=[("Censor_uw", 5.0)])
    tab = S.privacy_table(study)
    assert list(tab.columns) == ["ε (one removed)", "ε (one replaced)", "Δ", "records censored", "converged",
                                 "time per release (s)"]
    assert tab.attrs["runs"] == 3
    # registry order, the eps-free fits first; Data is not a mechanism
    assert [i.removesuffix(" †") for i in tab.index] == [
        _label("Unweighted"), _label("Weighted"),
        *[_label(n, e) for e in EPS for n in ("Censor_w", "Censor_uw", "PH", "OpenDP-Q")]]
    # medians over the runs
    f = S.fit_frame(study)
    for name, eps, row in (("Unweighted", None, _label("Unweighted")), ("Censor_w", 5.0, _label("Censor_w", 5.0))):
        g = f[(f["synthesizer"] == name) & (f["eps"].isna() if eps is None else f["eps"] == eps)]
        assert tab.loc[row, "Δ"] == pytest.approx(np.median(g["delta"]))
        assert tab.loc[row, "ε (one removed)"] == pytest.approx(np.median(g["eps_remove"]))
        assert tab.loc[row, "ε (one replaced)"] == pytest.approx(np.median(g["eps_replace"]))
        assert tab.loc[row, "records censored"] == pytest.approx(np.median(g["n_censored"]))
        assert tab.loc[row, "time per release (s)"] == pytest.approx(np.median(g["release_seconds"]))
    assert tab.loc[_label("Unweighted"), "Δ"] == 21.0  # 20, 21, 22
    assert tab.loc[_label("Weighted"), "time per release (s)"] == 80.0 + 110.0


def test_privacy_table_marks_a_failed_run_and_the_fits_without_mcmc():
    tab = S.privacy_table(fake_study(unconverged=[("Censor_uw", 5.0)]))
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
    tab = S.privacy_table(ds)
    assert tab.loc[_label("Censor_w", 1.0) + " †", "converged"] == "2/3"


# --------------------------------------------------------------------------------------------
# utility and coefficient tables
# --------------------------------------------------------------------------------------------


def test_utility_table_means_over_runs():
    study = fake_study(unconverged=[("Censor_w", 1.0)])
    tab = S.utility_table(study)
    assert list(tab.columns) == ["max-ECDF", "avg-ECDF (×10⁴)", "10th pct ($)", "25th pct ($)", "50th pct ($)",
                                 "75th pct ($)", "90th pct ($)"]
    assert tab.index[0] == "Data" and tab.loc["Data", "max-ECDF"] == 0.0
    assert list(tab.loc["Data", ["10th pct ($)", "50th pct ($)", "90th pct ($)"]]) == [170.0, 522.0, 1100.0]
    assert _label("Censor_w", 1.0) + " †" in tab.index
    f = S.fit_frame(study)
    g = f[(f["synthesizer"] == "PH") & (f["eps"] == 5.0)]
    row = tab.loc[_label("PH", 5.0)]
    assert row["max-ECDF"] == pytest.approx(g["max_ecdf"].mean())
    assert row["avg-ECDF (×10⁴)"] == pytest.approx(1e4 * g["avg_ecdf"].mean())
    assert row["90th pct ($)"] == pytest.approx(g["q90"].mean()) and row["90th pct ($)"] != 1100.0
    assert len(tab) == 1 + 2 + 4 * len(EPS)


def test_coefficient_table_data_beside_the_mechanisms_at_eps():
    study = fake_study()
    tab = S.coefficient_table(study, 5.0)
    assert tab.index.name == "term" and list(tab.index) == TERMS
    assert list(tab.columns) == ["Data", _label("Unweighted"), _label("Weighted"),
                                 *[_label(n) for n in ("Censor_w", "Censor_uw", "PH", "OpenDP-Q")]]
    np.testing.assert_allclose(tab["Data"], TRUE_COEF)
    # the mean over runs of each run's coefficients: Censor_uw is TRUE + 0.01 (r + 1), r = 0, 1, 2
    np.testing.assert_allclose(tab[_label("Censor_uw")], TRUE_COEF + 0.02, atol=1e-12)
    i = int(np.flatnonzero((study["synthesizer"].values == "OpenDP-Q") & (study["eps"].values == 5.0))[0])
    np.testing.assert_allclose(tab[_label("OpenDP-Q")], study["coef"].isel(fit=i).mean("replicate"), atol=1e-12)
    sub = S.coefficient_table(study, 1.0, synthesizers=["Censor_uw", "OpenDP-Q"])
    assert list(sub.columns) == ["Data", _label("Censor_uw"), _label("OpenDP-Q")]
    assert S.coefficient_table(study, 2.0).shape[1] == 3  # no fit at eps 2: Data and the eps-free fits


# --------------------------------------------------------------------------------------------
# units table and the sentences
# --------------------------------------------------------------------------------------------


def test_units_table():
    units = fake_units(mechanisms=("Censor_w", "Censor_uw"))
    tab = S.units_table(units)
    assert tab.index.names == ["mechanism", "ε", "setting"]
    assert list(tab.columns) == [f"records censored (of {N:,})", "synthetic median ($)", "max-ECDF", "converged"]
    assert len(tab) == 2 * 2 * 3
    # registry order (Censor_w first), though the Dataset holds the mechanisms alphabetically
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


def test_units_markdown_has_the_numbers_of_the_study():
    units = fake_units(dollars=0.9, thousands=0.01, offset=0.012)
    text = S.units_markdown(units)
    pick = units.sel(mechanism="Censor_w", eps=10.0).mean("replicate")
    assert text.startswith(f"At ε = 10, {registry.label('Censor_w')} on the wages in dollars censors ")
    dol = float(pick["n_censored"].sel(setting="dollars"))
    thou = float(pick["n_censored"].sel(setting="thousands"))
    off = float(pick["n_censored"].sel(setting="dollars, offset -log 1000"))
    assert f"censors {dol:,.0f} of {N:,} records" in text
    assert f"thousands of dollars censors {thou:,.0f}" in text and f"it censors {off:,.0f}" in text
    assert "against the data's \\$522" in text and "synthetic median is \\$150" in text
    ecdf = {s: float(pick["max_ecdf"].sel(setting=s)) for s in UNIT_SETTINGS}
    assert f"(max-ECDF {ecdf['dollars']:.2f})" in text and f"max-ECDF {ecdf['thousands']:.2f});" in text
    assert text.endswith(f"(max-ECDF {ecdf['dollars, offset -log 1000']:.2f}).")
    # with both censorings, the sentence is about the first in the registry's order (Censor_w), as with one
    both = S.units_markdown(fake_units(dollars=0.9, thousands=0.01, offset=0.012, mechanisms=("Censor_w", "Censor_uw")))
    assert both.startswith(f"At ε = 10, {registry.label('Censor_w')} on the wages")


def test_fit_time_markdown_has_the_range_of_model_based_release_times():
    study = fake_study()
    text = S.fit_time_markdown(study)
    tab = S.privacy_table(study)
    times = tab.loc[[i for i in tab.index if not i.startswith(("PH", "OpenDP-Q"))], "time per release (s)"]
    assert f"took {times.min():.0f} to {times.max():.0f} s" in text
    # PH and OpenDP-Q (no MCMC, 0.01 and 0.5 s) are left out; Censor_w includes the unweighted fit
    assert times.min() == 91.0 and times.max() == 95.0 + 110.0
    assert "took 91 to 205 s" in text
    assert f"(n = {N:,})" in text and "3 run(s)" in text


# --------------------------------------------------------------------------------------------
# verdicts
# --------------------------------------------------------------------------------------------

KEYS = {"censored_within_bound", "privacy_relations", "unit_changes_censoring", "offset_is_a_unit",
        "marginal_favours_model_free", "model_keeps_regression"}


def test_verdicts_hold_on_results_where_the_claims_are_true():
    v = _by_key(S.verdicts(fake_results()))
    assert set(v) == KEYS
    for k in KEYS:
        assert v[k].holds is True, (k, v[k].evidence)
    assert v["censored_within_bound"].numbers["worst"] == pytest.approx(0.0, abs=1e-12)
    assert v["privacy_relations"].numbers == {"min": pytest.approx(2.0), "max": pytest.approx(2.0)}
    assert v["unit_changes_censoring"].numbers["dollars_min"] == pytest.approx(0.95, abs=1e-4)
    assert v["offset_is_a_unit"].numbers["gap"] == pytest.approx(0.005, abs=1e-9)
    n = v["model_keeps_regression"].numbers
    assert n["censor_uw"] < n["opendp_q"]
    assert "12 censored fits" in v["censored_within_bound"].evidence


def test_a_censored_fit_above_its_bound_breaks_censored_within_bound():
    v = _by_key(S.verdicts(fake_results(delta_excess=0.01)))
    assert v["censored_within_bound"].holds is False
    assert v["censored_within_bound"].numbers["worst"] == pytest.approx(0.01)


def test_a_wrong_replaced_epsilon_breaks_privacy_relations():
    v = _by_key(S.verdicts(fake_results(replace_ratio=1.0)))
    assert v["privacy_relations"].holds is False
    assert v["privacy_relations"].numbers["min"] == pytest.approx(1.0)
    # a censored fit's Delta above its bound changes eps_remove and eps_replace alike: the relation holds
    assert _by_key(S.verdicts(fake_results(delta_excess=0.01)))["privacy_relations"].holds is True


@pytest.mark.parametrize("dollars, thousands", [(0.4, 0.02), (0.95, 0.6)])
def test_unit_changes_censoring_fails_when_the_unit_does_not_matter(dollars, thousands):
    v = _by_key(S.verdicts(fake_results(dollars=dollars, thousands=thousands, offset=thousands)))
    assert v["unit_changes_censoring"].holds is False
    assert v["offset_is_a_unit"].holds is True


def test_offset_is_a_unit_fails_beyond_two_percent():
    v = _by_key(S.verdicts(fake_results(thousands=0.02, offset=0.06)))
    assert v["offset_is_a_unit"].holds is False
    assert v["offset_is_a_unit"].numbers["gap"] == pytest.approx(0.04, abs=1e-9)


def test_model_keeps_regression_fails_when_quantiles_are_closer():
    v = _by_key(S.verdicts(fake_results(regression_kept=False)))
    assert v["model_keeps_regression"].holds is False
    assert v["model_keeps_regression"].numbers["censor_uw"] > v["model_keeps_regression"].numbers["opendp_q"]
    for k in KEYS - {"model_keeps_regression"}:
        assert v[k].holds is True


def test_model_keeps_regression_needs_both_mechanisms():
    res = fake_results()
    keep = np.flatnonzero(res.study["synthesizer"].values != "OpenDP-Q")
    res = OwnDataResults(params=res.params, study=res.study.isel(fit=keep), units=res.units)
    assert set(_by_key(S.verdicts(res))) == KEYS - {"model_keeps_regression"}


def test_a_model_closer_to_the_marginal_breaks_marginal_favours_model_free():
    res = fake_results()
    study = fake_study(model_free_offset=0.1)  # OpenDP-Q (0.1/eps) and PH (0.2/eps) above Censor_uw (0.05/eps)
    res = OwnDataResults(params=res.params, study=study, units=res.units)
    v = _by_key(S.verdicts(res))["marginal_favours_model_free"]
    assert v.holds is False and v.numbers == {"wins": 0, "eps": len(EPS)}
    assert _by_key(S.verdicts(fake_results()))["marginal_favours_model_free"].numbers["wins"] == len(EPS)
