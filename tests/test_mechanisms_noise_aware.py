"""Noise-aware: Laplace-noised 1-way and cell x bin counts on public bins, a posterior whose likelihood models the
noise, and synthetic data sets each drawn from one posterior draw.

The exact audit computes the worst log ratio of each Laplace measurement's output density for every neighbour
tried (one record removed; one replaced, within its cell or into another): for Laplace noise of scale ``b`` on
counts ``c`` it is ``||c - c'||_1 / b``, attained. MCMC tests (``slow``) are small: a few hundred records, 300 draws
and tuning steps per chain (the mechanism's retries double them while the checks fail).
"""

from __future__ import annotations

import dataclasses
import json
import math
import warnings

import numpy as np
import opendp.prelude as dp
import pandas as pd
import pytest

from dpsynth import Synthesizer, audit, mechanisms, registry
from dpsynth.mechanisms import noise_aware as na
from dpsynth.release.ledger import Ledger
from dpsynth.synthesizer import CovariatesIgnoredWarning
from dpsynth.validation import DataError

dp.enable_features("contrib")

N = 300
SAMPLER = {"draws": 300, "tune": 300}
BOUNDS = {"lower": 0.1, "upper": 40.0}


def wages(n: int = N, seed: int = 0) -> pd.DataFrame:
    """Lognormal wages, higher in the south."""
    rng = np.random.default_rng(seed)
    region = rng.choice(["north", "south"], n)
    return pd.DataFrame({"wage": np.exp(1.0 + 0.5 * (region == "south") + rng.normal(0.0, 0.4, n)),
                         "region": region})


def ks_distance(a, b) -> float:
    """Largest distance between the ECDFs of ``a`` and ``b``."""
    a, b = np.sort(np.asarray(a, dtype=float)), np.sort(np.asarray(b, dtype=float))
    grid = np.concatenate((a, b))
    fa = np.searchsorted(a, grid, side="right") / a.size
    fb = np.searchsorted(b, grid, side="right") / b.size
    return float(np.max(np.abs(fa - fb)))


def synth(df=None, *, eps=1.0, params=None, fit=True, seed=1, **kw) -> Synthesizer:
    """A noise-aware synthesizer of the wages by region (research mode), fitted unless ``fit=False``."""
    df = wages() if df is None else df
    kw = {"covariates": ["region"], "mode": "research", "sampler": SAMPLER, **kw}
    s = Synthesizer(df, "wage", mechanism="noise_aware", eps=eps, mechanism_params={**BOUNDS, **(params or {})}, **kw)
    if fit:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s.fit(seed=seed)
    return s


# --------------------------------------------------------------------------------------------
# the spec
# --------------------------------------------------------------------------------------------


def test_spec_is_a_strict_dp_model_free_mechanism_with_cells():
    spec = mechanisms.get("noise_aware")
    assert spec.name == "Noise-aware" and registry.guarantee("Noise-aware") == "DP"
    assert spec.takes_eps and not spec.uses_model and spec.covariate_use == "cells"
    assert spec.eps_per_param == (1.0, 2.0)
    assert spec.release_type is na.NoiseAwareRelease and spec.runnable
    # the composed measurement's eps from the settings alone: eps removed, 2 eps replaced
    assert spec.declared_eps({"eps": 0.7}, False, {}) == (0.7, 1.4)
    assert set(spec.targets) == {"continuous", "count", "categorical"}


def test_command_line_parameters_agree_with_the_other_mechanisms():
    params = mechanisms.catalog.cli_params()
    for name in ("lower", "upper", "bins", "scale", "cells", "mode", "marginal_share", "max_cells", "release_draws"):
        assert "noise_aware" in params[name][1], name
    spec = mechanisms.get("noise_aware")
    assert spec.params["cell_edges"].cli is None and spec.params["levels"].cli is None  # API only / filled in


# --------------------------------------------------------------------------------------------
# public bins and cells
# --------------------------------------------------------------------------------------------


def test_bins_are_log_spaced_when_lower_is_positive_and_linear_from_zero():
    b = na.binning({"lower": 1.0, "upper": 1000.0, "bins": 3})
    assert b.scale == "log" and np.allclose(b.edges, [1.0, 10.0, 100.0, 1000.0])
    b = na.binning({"lower": 0.0, "upper": 30.0, "bins": 3})
    assert b.scale == "linear" and np.allclose(b.edges, [0.0, 10.0, 20.0, 30.0])
    b = na.binning({"lower": 1.0, "upper": 31.0, "bins": 3, "scale": "linear"})
    assert np.allclose(b.edges, [1.0, 11.0, 21.0, 31.0])


def test_integer_bins_are_one_per_integer_from_zero_by_default():
    b = na.binning({"upper": 4.0, "scale": "integer"})
    assert b.n_bins == 5 and np.allclose(b.edges, np.arange(6) - 0.5)
    assert np.array_equal(b.index(np.array([0.0, 2.0, 4.0])), [0, 2, 4])
    assert np.array_equal(b.values(np.array([0, 3]), np.random.default_rng(0)), [0.0, 3.0])
    b = na.binning({"lower": 2.0, "upper": 4.0, "scale": "integer"})
    assert np.allclose(b.edges, [1.5, 2.5, 3.5, 4.5])


def test_a_categorical_target_has_one_bin_per_public_level():
    # what the Synthesizer fills in for a target with 3 public levels
    b = na.binning({"lower": -0.5, "upper": 2.5, "levels": 3, "bins": 30})
    assert b.n_bins == 3 and b.scale == "integer"
    assert np.array_equal(b.values(np.array([2, 0, 1]), np.random.default_rng(0)), [2.0, 0.0, 1.0])
    with pytest.raises(DataError, match="leave `scale` unset"):
        na.binning({"lower": -0.5, "upper": 2.5, "levels": 3, "scale": "log"})


def test_values_within_a_bin_stay_in_it():
    rng = np.random.default_rng(1)
    for scale in ("log", "log1p", "linear"):
        b = na.binning({"lower": 1.0, "upper": 100.0, "bins": 5, "scale": scale})
        assert b.n_bins == 7 and b.is_point[0] and b.is_point[-1]  # a point bin at each public bound
        k = rng.integers(0, b.n_bins, 2000)
        v = b.values(k, rng)
        assert (b.index(v) == k).all()
        assert (v[k == 0] == 1.0).all() and (v[k == 6] == 100.0).all()
    # log-uniform in a log bin: the median of the first of two log bins on [1, 100], [1, 10], is sqrt(10)
    v = na.binning({"lower": 1.0, "upper": 100.0, "bins": 2, "scale": "log"}).values(np.ones(4000, int), rng)
    assert np.median(v) == pytest.approx(math.sqrt(10.0), rel=0.05)


def test_zeros_and_heaps_keep_bins_of_their_own():
    """A spending column's exact zeros are the point bin at its lower bound; a heaped count's value its own bin."""
    spend = na.binning({"lower": 0.0, "upper": 50_000.0, "bins": 20})
    assert spend.scale == "log1p" and spend.index(np.array([0.0]))[0] == 0
    assert (spend.values(np.zeros(10, int), np.random.default_rng(0)) == 0.0).all()
    hours = na.binning({"lower": 0, "upper": 80, "kind": "count", "bins": 12})  # a count: one bin per integer
    assert hours.n_bins == 81 and (hours.values(np.full(5, 40), np.random.default_rng(0)) == 40).all()


@pytest.mark.parametrize("params, name", [
    ({"upper": 10.0}, "`lower`"),
    ({"lower": 0.0, "upper": 10.0, "scale": "log"}, "`lower` > 0"),
    ({"lower": 5.0, "upper": 1.0}, "`upper` > `lower`"),
    ({"upper": 0.5, "scale": "integer"}, "at least two integers"),
    ({"lower": 1.0}, "`upper`"),
])
def test_bad_bins_name_the_parameter(params, name):
    with pytest.raises(DataError, match=name):
        na.binning(params)


def test_cells_are_every_combination_of_public_levels():
    public = pd.DataFrame({"region": ["n", "s", "s"], "sex": pd.Categorical(["f", "f", "f"], categories=["f", "m"]),
                           "age": [20.0, 40.0, 60.0]})
    cols = na.cell_columns(public)
    assert [c.name for c in cols] == ["region", "sex"]  # the categorical covariates
    assert cols[1].levels == ("f", "m")  # declared levels, not only those that occur
    assert np.array_equal(na.cell_index(cols, public), [0, 2, 2])
    cols = na.cell_columns(public, cell_edges={"age": [30.0, 50.0]})
    assert [c.name for c in cols] == ["region", "sex", "age"] and math.prod(c.size for c in cols) == 12
    assert np.array_equal(na.cell_index(cols, public), [0, 7, 8])
    assert na.cell_columns(public, []) == ()
    # a level the cells were not made with is -1 (the release draws a new cell for it)
    assert na.cell_index(cols, public.assign(region=["n", "w", "s"]))[1] == -1


def test_cell_errors_name_the_fix():
    public = pd.DataFrame({"region": ["n", "s"], "age": [20.0, 40.0]})
    with pytest.raises(DataError, match="is numeric: give its public cut points in `cell_edges`"):
        na.cell_columns(public, ["age"])
    with pytest.raises(DataError, match="more than `max_cells` = 3"):
        na.cell_columns(public, cell_edges={"age": [10.0, 30.0]}, max_cells=3)
    with pytest.raises(DataError, match="not among the public covariates"):
        na.cell_columns(public, ["income"])
    with pytest.raises(DataError, match="`cells` does not list"):
        na.cell_columns(public, ["region"], {"age": [30.0]})


# --------------------------------------------------------------------------------------------
# the measurements and their exact audit
# --------------------------------------------------------------------------------------------


def test_noise_scales_split_eps_by_the_marginal_share():
    assert na.noise_scales(1.0, 0.25, 4) == (pytest.approx(4.0), pytest.approx(4.0 / 3.0))
    assert na.noise_scales(2.0, 0.5, 1) == (0.5, None)  # no cells: the whole eps on the 1-way histogram
    assert na.noise_scales(2.0, 0.0, 3) == (None, 0.5)
    with pytest.raises(DataError, match="marginal_share"):
        na.noise_scales(1e-12, 0.5, 2)


def test_research_noise_is_seeded_and_release_noise_comes_from_opendp(monkeypatch):
    bins, cells = np.array([0, 1, 1, 2]), np.array([0, 0, 1, 1])
    a = na.measure(bins, cells, 3, 2, 1.0, 0.5, mode="research", seeds=(1, 2))
    b = na.measure(bins, cells, 3, 2, 1.0, 0.5, mode="research", seeds=(1, 2))
    assert np.array_equal(a.marginal, b.marginal) and np.array_equal(a.table, b.table)
    calls = []
    original = dp.m.make_laplace

    def spy(*args, **kwargs):
        calls.append(kwargs.get("scale"))
        return original(*args, **kwargs)

    monkeypatch.setattr(dp.m, "make_laplace", spy)
    r = na.measure(bins, cells, 3, 2, 1.0, 0.5, mode="release")
    assert calls == [2.0, 2.0] and r.marginal.shape == (3,) and r.table.shape == (2, 3)
    assert r.eps_remove == pytest.approx(1.0) and r.eps_replace == pytest.approx(2.0)


def test_opendp_map_of_each_measurement_is_its_eps_part():
    """OpenDP's own privacy map of a Laplace measurement at the mechanism's scale: 1 / b per unit of L1 distance."""
    b1, b2 = na.noise_scales(0.8, 0.3, 4)
    for b, size in ((b1, 5), (b2, 20)):
        space = dp.vector_domain(dp.atom_domain(T=float, nan=False), size), dp.l1_distance(T=float)
        meas = dp.m.make_laplace(*space, scale=b)
        assert meas.map(1.0) == pytest.approx(1.0 / b) and meas.map(2.0) == pytest.approx(2.0 / b)
    assert 1.0 / b1 + 1.0 / b2 == pytest.approx(0.8)


AUDIT_N = 200
AUDIT_EPS = 0.6
AUDIT_BINS = na.binning({"lower": 0.1, "upper": 40.0, "bins": 12})
AUDIT_CELLS = 3


def _records(seed: int = 5) -> np.ndarray:
    """Records as (value, cell) rows."""
    rng = np.random.default_rng(seed)
    cells = rng.integers(0, AUDIT_CELLS, AUDIT_N)
    return np.column_stack((np.exp(1.0 + 0.3 * cells + rng.normal(0.0, 0.6, AUDIT_N)), cells))


def _ratios(rec: np.ndarray, other: np.ndarray, b1: float, b2: float) -> tuple[float, float]:
    """Exact worst log ratios of the 1-way histogram's and the table's output densities."""
    def counts(r):
        return na.true_counts(AUDIT_BINS.index(r[:, 0]), r[:, 1].astype(int), AUDIT_BINS.n_bins, AUDIT_CELLS)

    (m, t), (m2, t2) = counts(rec), counts(other)
    r1 = float(np.abs(m - m2).sum() / b1)
    # the 1-way part is the perturbed histogram's, as the audit module computes it
    assert r1 == pytest.approx(audit.histogram_log_ratio(rec[:, 0], other[:, 0], AUDIT_BINS.edges, b1))
    return r1, float(np.abs(t - t2).sum() / b2)


def _neighbours(rec: np.ndarray, relation: str) -> list[tuple[str, np.ndarray]]:
    rng = np.random.default_rng(11)

    def draw(g):  # a fresh record: any value inside the bounds, any cell
        return np.array([math.exp(g.uniform(math.log(0.1), math.log(40.0))), float(g.integers(AUDIT_CELLS))])

    if relation == "remove":
        return [(f"remove #{i}", audit.neighbour(rec, "remove", index=i)) for i in range(AUDIT_N)]
    out = audit.neighbour_set(rec, "replace", 200, rng, extremes=False, draw=draw)
    lo, hi = int(np.argmin(rec[:, 0])), int(np.argmax(rec[:, 0]))
    other = (rec[lo, 1] + 1) % AUDIT_CELLS
    out += [("smallest to the upper bound, another cell", audit.neighbour(rec, "replace", index=lo,
                                                                          value=np.array([40.0, other]))),
            ("largest to the lower bound, same cell", audit.neighbour(rec, "replace", index=hi,
                                                                       value=np.array([0.1, rec[hi, 1]]))),
            ("same bin, another cell", audit.neighbour(rec, "replace", index=0,
                                                        value=np.array([rec[0, 0], (rec[0, 1] + 1) % AUDIT_CELLS])))]
    return out


@pytest.mark.parametrize("share", [0.5, 0.2])
@pytest.mark.parametrize("relation, factor", [("remove", 1.0), ("replace", 2.0)])
def test_exact_audit_each_measurement_within_its_part_and_the_composition_within_eps(share, relation, factor):
    rec = _records()
    b1, b2 = na.noise_scales(AUDIT_EPS, share, AUDIT_CELLS)
    worst1 = worst2 = worst = 0.0
    for _, other in _neighbours(rec, relation):
        r1, r2 = _ratios(rec, other, b1, b2)
        worst1, worst2, worst = max(worst1, r1), max(worst2, r2), max(worst, r1 + r2)
    assert worst1 <= factor * share * AUDIT_EPS + 1e-12 and worst2 <= factor * (1 - share) * AUDIT_EPS + 1e-12
    assert worst <= factor * AUDIT_EPS + 1e-12
    assert worst == pytest.approx(factor * AUDIT_EPS)  # attained: the bound is tight
    # what the mechanism states for the same noise
    counts = na.NoisyCounts(None, None, b1, b2)
    assert (counts.eps_remove, counts.eps_replace)[relation == "replace"] == pytest.approx(factor * AUDIT_EPS)


def test_exact_audit_control_noise_at_half_the_scale_exceeds_eps():
    rec = _records()
    b1, b2 = na.noise_scales(AUDIT_EPS, 0.5, AUDIT_CELLS)
    worst = max(sum(_ratios(rec, other, b1 / 2.0, b2 / 2.0)) for _, other in _neighbours(rec, "remove"))
    assert worst == pytest.approx(2.0 * AUDIT_EPS) and worst > AUDIT_EPS
    # and a table measured with the sensitivity of removal misses replacement's: 2 eps, not eps
    worst = max(sum(_ratios(rec, other, b1, b2)) for _, other in _neighbours(rec, "replace"))
    assert worst > AUDIT_EPS


# --------------------------------------------------------------------------------------------
# the release (post-processing), without MCMC
# --------------------------------------------------------------------------------------------


def _two_draw_release(cells=()) -> na.NoiseAwareRelease:
    """A release whose draw 0 puts all mass in the first bin and draw 1 in the last."""
    b = na.binning({"lower": 1.0, "upper": 100.0, "bins": 4})
    C = math.prod(c.size for c in cells) if cells else 1
    probs = np.zeros((2, C, b.n_bins))
    probs[0, :, 0], probs[1, :, -1] = 1.0, 1.0
    return na.NoiseAwareRelease(binning=b, cells=tuple(cells), probs=probs, marginal=probs[:, 0, :],
                                cell_scale=1.0, cell_sizes=np.full(C, 10.0), scale_marginal=2.0, scale_table=None,
                                mode="research")


def test_each_synthetic_data_set_comes_from_one_posterior_draw():
    rel = _two_draw_release()
    first_bin = []
    for seed in range(40):
        v = rel.sample(50, np.random.default_rng(seed))
        low = v <= rel.binning.edges[1]
        assert low.all() or not low.any()  # never a mix of two draws
        first_bin.append(bool(low.all()))
    assert 0 < sum(first_bin) < 40  # both draws are used across data sets


def test_release_maps_rows_to_cells_and_draws_a_new_cell_for_an_unseen_level():
    col = na.CellColumn(name="region", levels=("n", "s"))
    rel = _two_draw_release((col,))
    probs = rel.probs.copy()
    probs[:, 1] = probs[:, 1, ::-1]  # cell "s" is the mirror image of cell "n"
    rel = dataclasses.replace(rel, probs=probs)
    public = pd.DataFrame({"region": ["n", "s"] * 20 + ["w"] * 10})
    v = rel.sample(50, np.random.default_rng(0), public)
    n_low, s_low = v[:40:2] <= rel.binning.edges[1], v[1:40:2] <= rel.binning.edges[1]
    assert (n_low != s_low).all()
    assert np.isfinite(v[40:]).all() and ((v >= 1.0) & (v <= 100.0)).all()
    with pytest.raises(DataError, match="public covariates"):
        rel.sample(5, np.random.default_rng(0), None)


def test_release_round_trips_through_plain_json():
    rel = _two_draw_release((na.CellColumn(name="age", edges=(30.0,)),))
    d = json.loads(json.dumps(rel.to_dict()))
    back = na.NoiseAwareRelease.from_dict(d)
    assert back.to_dict() == rel.to_dict() and back.eps_remove == pytest.approx(0.5)
    public = pd.DataFrame({"age": [20.0, 40.0, 25.0]})
    np.testing.assert_array_equal(back.sample(3, np.random.default_rng(4), public),
                                  rel.sample(3, np.random.default_rng(4), public))


# --------------------------------------------------------------------------------------------
# bad input through the Synthesizer (refused before any noise is drawn)
# --------------------------------------------------------------------------------------------


def test_missing_bounds_are_refused_naming_them():
    with pytest.raises(DataError, match="needs `upper`"):
        Synthesizer(wages(), "wage", covariates=["region"], mechanism="noise_aware", eps=1.0)
    with pytest.raises(DataError, match="needs `lower` for a continuous target"):
        Synthesizer(wages(), "wage", covariates=["region"], mechanism="noise_aware", eps=1.0,
                    mechanism_params={"upper": 40.0})


@pytest.mark.parametrize("params", [{"upper": 5.0}, {"lower": 2.0}])
def test_values_outside_the_bounds_are_clamped_not_refused(params):
    s = synth(params=params, fit=False)  # no refusal: the values are clamped when the mechanism runs
    lo, hi = s.public_bounds()
    x, moved = s._clamped_values()  # noqa: SLF001
    assert moved > 0 and x.min() >= lo and x.max() <= hi


def test_too_many_cells_and_bad_shares_are_refused_before_any_noise():
    df = wages().assign(sex=np.tile(["f", "m"], N // 2))
    s = synth(df, params={"max_cells": 3}, fit=False, covariates=["region", "sex"])
    with pytest.raises(DataError, match="more than `max_cells` = 3"):
        s.fit(seed=1)
    with pytest.raises(DataError, match="`marginal_share` = 1 leaves the cell x bin table unmeasured"):
        synth(params={"marginal_share": 1.0}, fit=False).fit(seed=1)
    with pytest.warns(CovariatesIgnoredWarning, match="does not depend on"):  # cells=[]: the region is not used
        no_cells = synth(params={"marginal_share": 0.5, "cells": []}, fit=False)
    with pytest.raises(DataError, match="there are no cells"):
        no_cells.fit(seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CovariatesIgnoredWarning)
        numeric = synth(wages().assign(age=np.linspace(20, 60, N)), params={"cells": ["age"]}, fit=False,
                        covariates=["region", "age"])
    with pytest.raises(DataError, match="`cell_edges`"):
        numeric.fit(seed=1)
    with pytest.raises(DataError, match="scale='integer' bins a count"):
        synth(params={"lower": 0.0, "scale": "integer"}, fit=False)


# --------------------------------------------------------------------------------------------
# through the Synthesizer (MCMC)
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fitted() -> Synthesizer:
    # 300 draws are few for 90 probabilities (the posterior's retries double them)
    return synth()


@pytest.mark.slow
def test_statement_total_is_eps_and_the_measurements_split_it(fitted):
    p = fitted.privacy
    assert p.guarantee == "DP" and p.relation == "replace" and p.mechanism == "noise_aware"
    assert p.eps == pytest.approx(1.0) and p.budget.draw == pytest.approx(1.0) and p.budget.size == 0.0
    assert fitted.plan.params["eps"] == pytest.approx(0.5)  # one record removed
    b1, b2 = na.noise_scales(0.5, 0.5, 2)
    assert p.extra["noise_scale_marginal"] == pytest.approx(b1) and p.extra["noise_scale_table"] == pytest.approx(b2)
    # bins from the public n (covariates carried) and the 1-way measurement's eps (na.auto_bins)
    # the 1-way half of eps 0.5 sets the interior bins; a point bin at each public bound comes on top
    assert p.extra["n_cells"] == 2 and p.extra["bins"] == na.auto_bins(N, 0.25) + 2
    assert p.model_free and p.draws_kept == 1
    assert "Noise-aware (strict DP): eps = 1 with one record replaced" in p.statement()


@pytest.mark.slow
def test_the_posterior_is_checked_and_its_diagnostics_reported(fitted):
    p = fitted.privacy
    assert 1.0 <= p.rhat_max < 1.05 and p.ess_min > 100 and p.divergences >= 0  # what the sampler reports
    assert p.converged == (p.rhat_max <= 1.01 and p.ess_min >= 200 and p.divergences == 0)  # judged on it
    assert "convergence: R-hat max" in p.diagnostics()


@pytest.mark.slow
def test_an_unconverged_posterior_is_reported_not_refused():
    s = synth(sampler={"draws": 20, "tune": 20, "ess_min": 10_000})
    assert not s.privacy.converged and np.isfinite(s.privacy.rhat_max)
    assert "FAILED THEIR CHECKS" in s.privacy.diagnostics()


@pytest.mark.slow
def test_releases_are_booked_once_per_fit(fitted):
    first = fitted.sample(allow_research=True, seed=2)
    second = fitted.sample(allow_research=True, seed=3)
    assert second.attrs["spend"] == 0.0 and "nothing new" in second.attrs["privacy_statement"]
    assert "any number of files drawn from this one release cost nothing more" in second.attrs["privacy_statement"]
    assert Ledger(fitted.dataset).total() == pytest.approx(1.0)  # the fit's one release, whichever file paid it
    assert list(first.columns) == ["wage", "region"] and len(first) == N
    assert first["wage"].between(0.1, 40.0).all()
    assert not first["wage"].equals(second["wage"])


@pytest.mark.slow
def test_save_and_load_round_trip(fitted, tmp_path):
    fitted.sample(allow_research=True, seed=2)  # the fit's release is booked
    fitted.save(tmp_path / "na.json")
    back = Synthesizer.load(tmp_path / "na.json")
    assert back.state.release.to_dict() == fitted.state.release.to_dict()
    assert back.privacy.statement() == fitted.privacy.statement()
    again, same = back.sample(allow_research=True, seed=5), fitted.sample(allow_research=True, seed=5)
    pd.testing.assert_frame_equal(again, same)
    assert again.attrs["spend"] == 0.0 and Ledger(fitted.dataset).total() == pytest.approx(1.0)


@pytest.mark.slow
def test_research_mode_is_reproducible_by_seed(fitted):
    again = synth()
    np.testing.assert_array_equal(again.state.release.probs, fitted.state.release.probs)
    pd.testing.assert_frame_equal(again.sample_unaccounted(seed=4), fitted.sample_unaccounted(seed=4))
    other = synth(seed=2)
    assert not np.array_equal(other.state.release.probs, fitted.state.release.probs)


@pytest.mark.slow
def test_synthetic_data_sets_reflect_the_posterior(fitted):
    rel = fitted.state.release
    assert rel.n_draws == 200 and rel.probs.shape == (200, 2, fitted.privacy.extra["bins"])
    assert rel.probs.std(axis=0).max() > 0.01  # the draws differ
    means = [np.log(fitted.sample_unaccounted(seed=k)["wage"]).mean() for k in range(12)]
    assert np.std(means) > 0.0
    # south earns more, as in the data: the cells keep the relation with the covariate
    rows = fitted.sample_unaccounted(seed=1)
    med = rows.groupby("region")["wage"].median()
    assert med["south"] > med["north"]


def _cdf_spread(s: Synthesizer) -> float:
    """Posterior sd of the population's CDF, at its worst bin."""
    return float(np.cumsum(s.state.release.population(), axis=1).std(axis=0).max())


@pytest.mark.slow
def test_noise_awareness_the_posterior_spread_shrinks_as_eps_grows():
    spreads = {eps: _cdf_spread(synth(eps=eps)) for eps in (0.3, 10.0)}
    assert spreads[10.0] < 0.5 * spreads[0.3]
    assert spreads[10.0] > 0.0  # the sampling uncertainty of n records remains


@pytest.mark.slow
def test_marginal_beats_the_perturbed_histogram_with_the_same_bounds():
    x = np.exp(np.random.default_rng(8).normal(6.0, 0.5, 2000))
    df = pd.DataFrame({"wage": x})
    bounds = {"lower": 1.0, "upper": 20_000.0}
    dist = {}
    for key in ("noise_aware", "ph"):
        s = Synthesizer(df, "wage", mechanism=key, eps=1.0, mode="research", mechanism_params=bounds,
                        sampler=SAMPLER)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s.fit(seed=3)
        dist[key] = np.mean([ks_distance(s.sample_unaccounted(seed=k)["wage"], x) for k in range(5)])
    # measured: about 0.03 (two samples of 2,000 differ by about that much) against PH's 0.18, whose 30
    # equal-width bins put almost every record in the first two
    assert dist["noise_aware"] < 0.06 and dist["noise_aware"] < 0.5 * dist["ph"]


@pytest.mark.slow
def test_categorical_and_count_targets():
    rng = np.random.default_rng(2)
    levels = ["low", "mid", "high"]
    cat = pd.DataFrame({"job": pd.Categorical(rng.choice(levels, 400, p=[0.6, 0.3, 0.1]), categories=levels)})
    s = Synthesizer(cat, "job", mechanism="noise_aware", eps=4.0, mode="research", sampler=SAMPLER)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s.fit(seed=1)
    assert s.plan.params["levels"] == 3  # filled in from the public levels
    sets = [s.sample_unaccounted(seed=k)["job"] for k in range(10)]
    assert all(set(out) <= set(levels) for out in sets)
    assert np.mean([(out == "low").mean() for out in sets]) == pytest.approx(0.6, abs=0.06)
    counts = pd.DataFrame({"visits": rng.poisson(3.0, 400)})
    s = Synthesizer(counts, "visits", mechanism="noise_aware", eps=4.0, mode="research", sampler=SAMPLER,
                    mechanism_params={"upper": 15})  # a count: one bin per integer
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s.fit(seed=1)
    sets = [s.sample_unaccounted(seed=k)["visits"] for k in range(10)]
    assert all(out.dtype == counts["visits"].dtype and out.between(0, 15).all() for out in sets)
    assert np.mean([out.mean() for out in sets]) == pytest.approx(3.0, abs=0.4)


def test_a_counts_bins_default_to_one_per_integer_within_reach():
    assert na.binning({"upper": 15, "kind": "count"}).scale == "integer"
    assert na.binning({"upper": 15, "kind": "count"}).edges[0] == -0.5
    wide = na.binning({"upper": 5000, "kind": "count", "bins": 20})  # integer-aligned bins, a point at each bound
    assert wide.scale == "integer" and wide.lower == 0.0 and wide.n_interior == 20 and wide.n_bins == 22
    assert na.binning({"lower": 0, "upper": 15, "kind": "count", "scale": "linear", "bins": 5}).scale == "linear"


def test_rounded_bins_sum_to_n_and_stay_within_one_of_the_expected_count():
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(12))
    for n in (1, 7, 300):
        k = na.rounded_bins(n, p, rng)
        counts = np.bincount(k, minlength=12)
        assert k.size == n and (np.abs(counts - n * p) < 1.0).all()


def test_calibrated_values_keep_the_order_and_take_the_released_marginal():
    rng = np.random.default_rng(1)
    values = rng.normal(size=400)
    flat = np.r_[0.0, np.full(10, 0.1), 0.0]  # nothing at the point bins, a tenth in each interior bin
    rel = na.NoiseAwareRelease(binning=na.binning({"lower": 1.0, "upper": 100.0, "bins": 10}), cells=(),
                               probs=np.tile(flat, (3, 1, 1)), marginal=np.tile(flat, (3, 1)), cell_scale=1.0,
                               cell_sizes=np.array([400.0]), scale_marginal=1.0, scale_table=None, mode="research",
                               synthesis="mean")
    out = na.calibrated_values(values, rel, rng)
    assert (np.argsort(out) == np.argsort(values)).all()  # the model's order, so its relations by rank
    assert out.min() >= 1.0 and out.max() <= 100.0
    assert np.bincount(rel.binning.index(out), minlength=12).tolist() == [0, *[40] * 10, 0]  # the released marginal


def test_the_bins_follow_n_and_eps_unless_given():
    assert na.auto_bins(1e6, 5.0) == na.MAX_AUTO_BINS and na.auto_bins(20, 0.1) == na.MIN_AUTO_BINS
    assert na.auto_bins(546, 0.285) == round((546 * 0.285 / 2) ** (2 / 3))
    s = synth(params={"cells": []})  # one record replaced: n is public
    assert s.privacy.extra["bins"] == na.auto_bins(N, 0.5) + 2  # and a point bin at each public bound
    given = synth(params={"cells": [], "bins": 12})
    assert given.privacy.extra["bins"] == 12 + 2


@pytest.mark.slow
def test_cells_of_a_confidential_column_take_their_sizes_from_the_noisy_counts():
    df = wages()
    df["grade"] = pd.Categorical(np.where(df["wage"] > df["wage"].median(), "high", "low"), categories=["low", "high"])
    kw = {"covariates": ["region", "grade"]}
    public = synth(df, params={"cells": ["region", "grade"]}, **kw)
    secret = synth(df, params={"cells": ["region", "grade"]}, confidential_covariates=["grade"], **kw)
    exact = np.bincount(na.cell_index(public.state.release.cells, df[["region", "grade"]]), minlength=4)
    assert public.state.release.cell_sizes.tolist() == exact.tolist()  # public rows
    assert secret.state.release.cell_sizes.tolist() != exact.tolist()  # from the noisy table
    from dpsynth.mechanisms import quantiles  # noqa: F401 - OpenDP-Q refuses such cells

    with pytest.raises(DataError, match="labels would leak"):
        Synthesizer(df, "wage", covariates=["region", "grade"], mechanism="opendp_quantiles", eps=1.0,
                    mechanism_params={"lower": 0.1, "upper": 40.0, "cells": ["grade"]},
                    confidential_covariates=["grade"]).fit(seed=1)


@pytest.mark.slow
def test_a_calibrated_model_releases_its_marginal_once_and_maps_its_values_onto_it(tmp_path):
    df = wages(seed=3)
    s = Synthesizer(df, "wage", covariates=["region"], mechanism="censor_ref", eps=2.0, mode="research",
                    sampler=SAMPLER, calibrate={"lower": 0.1, "upper": 40.0}).fit(seed=1)
    b = s.privacy.budget
    assert (b.total, b.marginal, b.draw) == pytest.approx((2.0, 0.5, 1.5))
    assert "0.5 for the target's DP marginal (once per fit" in s.privacy.statement()
    first, second = s.sample(allow_research=True, seed=1), s.sample(allow_research=True, seed=2)
    assert first.attrs["spend"] == pytest.approx(2.0) and second.attrs["spend"] == pytest.approx(1.5)
    assert first["wage"].between(0.1, 40.0).all()
    path = s.save(tmp_path / "s.json")
    back = Synthesizer.load(path)
    assert back.state.calibration.to_dict() == s.state.calibration.to_dict()
    with pytest.raises(DataError, match="model-free"):
        Synthesizer(df[["wage"]], "wage", mechanism="noise_aware", eps=2.0, mechanism_params=BOUNDS,
                    calibrate={"lower": 0.1, "upper": 40.0})
    with pytest.raises(DataError, match="unknown key"):
        Synthesizer(df[["wage"]], "wage", eps=2.0, calibrate={"low": 0.1, "upper": 40.0})
