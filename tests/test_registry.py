"""The one synthesizer registry: keys, names and guarantees; labels agree with the mechanisms."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import simulated
from fit_helpers import SMALL

from dpsynth import mechanisms, registry
from dpsynth.fitting import ConvergenceWarning
from dpsynth.mechanisms import histogram
from dpsynth.privacy import CENSOR_TOL
from dpsynth.validation import DataError


def test_every_entry_has_a_valid_guarantee_and_no_look():
    for s in registry.SYNTHESIZERS:
        assert s.guarantee in (None, "none", "aDP", "DP"), s
        assert not hasattr(s, "colour") and not hasattr(s, "order"), s  # how a figure draws it is the book's


def test_guarantees_as_the_papers_and_the_audit_require():
    assert registry.guarantee("Data") is None
    assert registry.guarantee("Unweighted") == "none"
    for n in ("Weighted", "LW", "CW", "SW", "LW_final", "CW_final", "Weighted-e", "A[0.4,1.8]", "B[0.4,1.8]",
              "B'[0.6,1.2]"):
        assert registry.guarantee(n) == "aDP", n
    # Censor_w with weights from the same data is not strictly DP; with public weights it is
    assert registry.guarantee("Censor_w") == "aDP"
    for n in ("Censor_w-pub", "Censor_uw", "PH", "PH-paper"):
        assert registry.guarantee(n) == "DP", n


def test_labels_and_keys():
    assert registry.label("Censor_uw") == "Censor_uw (DP)"
    assert registry.label("Unweighted") == "Unweighted (none)"
    assert registry.label("Data") == "Data"
    assert registry.label("censor_w_public") == "Censor_w-pub (DP)"
    assert registry.label("B'[0.4,1.8]") == "B'[0.4,1.8] (aDP)"
    assert registry.key_of("Weighted-e") == "weighted_e"


@pytest.mark.parametrize("bad", ["Mystery", "A[0.4,1.8", "Censor", "", "B[]x"])
def test_unknown_names_are_errors(bad):
    with pytest.raises(KeyError, match="unknown synthesizer"):
        registry.spec(bad)


def test_names_in_the_catalogue_s_order():
    assert [s.key for s in registry.entries()][:4] == ["data", "unweighted", "weighted", "lw"]
    names = registry.names()
    assert names.index("Unweighted") < names.index("LW") < names.index("Censor_w") < names.index("PH")


# ------------------------------------------------------------------------------------------
# the label of every registered mechanism agrees with what the mechanism computes
# ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def beta_results(beta_cm):
    """One run of every model-based mechanism on a small Beta data set."""
    x = simulated.beta_data(300, 11)
    hist = simulated.beta_data(300, 12)
    eps = 3.0
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        uw = mechanisms.unweighted(beta_cm, x, sampler=SMALL, seed=1)
        lw = mechanisms.lipschitz_weighted(beta_cm, uw.fit, sampler=SMALL, seed=2, name="Weighted")
        out["Unweighted"] = uw
        out["Weighted"] = lw
        out["LW"] = mechanisms.lipschitz_weighted(beta_cm, uw.fit, sampler=SMALL, seed=3)
        out["CW"] = mechanisms.count_weighted(beta_cm, x, radius=0.05, sampler=SMALL, seed=4)
        out["SW"] = mechanisms.scalar_weighted(beta_cm, uw.fit, lw.privacy.delta, sampler=SMALL, seed=5, max_iter=2)
        out["LW_final"] = mechanisms.reweighted(beta_cm, out["LW"], sampler=SMALL, seed=6, max_iter=2)
        out["CW_final"] = mechanisms.reweighted(beta_cm, out["CW"], sampler=SMALL, seed=7, max_iter=2)
        out["Weighted-e"] = mechanisms.weighted_e(beta_cm, lw, eps, sampler=SMALL, seed=8)
        out["Censor_uw"] = mechanisms.censored(beta_cm, x, eps, sampler=SMALL, seed=9)
        out["Censor_w"] = mechanisms.censored(beta_cm, x, eps, weights=lw.weights, sampler=SMALL, seed=10)
        hfit = mechanisms.unweighted(beta_cm, hist, sampler=SMALL, seed=11).fit
        rule = mechanisms.public_lipschitz_weights(beta_cm, hfit)
        out["Censor_w-pub"] = mechanisms.censored_public(beta_cm, x, eps, rule, sampler=SMALL, seed=12)
    return eps, out


@pytest.mark.slow
def test_every_mechanism_label_agrees_with_what_it_computes(beta_results):
    eps, out = beta_results
    for name, res in out.items():
        assert res.guarantee == registry.guarantee(name), name
        assert res.label == registry.label(name)
        if res.guarantee == "DP":
            # censored, with Delta <= eps/2 and eps = 2M reported
            assert res.fit.censored and res.privacy.delta <= eps / 2 + CENSOR_TOL, name
            assert res.privacy.eps == pytest.approx(eps) and res.privacy.eps_replace == pytest.approx(2 * eps)
        elif res.guarantee == "aDP":
            # weights computed from the confidential data: a local bound only
            assert not np.all(res.weights == 1.0) or name == "Censor_w", name
        else:
            assert name == "Unweighted" and not res.fit.censored and np.all(res.weights == 1.0)
    # a DP name on an uncensored fit is refused
    with pytest.raises(AssertionError, match="censored"):
        mechanisms.mechanism_result("Censor_uw", out["Unweighted"].fit)


def test_ph_label_agrees_with_its_noise():
    x = simulated.beta_data(200, 3)
    res = histogram.perturbed_histogram(x, 2.0, upper=1.0, seed=1)
    assert res.guarantee == registry.guarantee("PH") == "DP"


def test_one_name_per_mechanism_weighted_is_shown_as_lw():
    # the censoring paper's "Weighted" is the re-weighting paper's LW: one recipe, one name on every page
    assert registry.aliases() == {"Weighted": "LW"}
    for name in ("Weighted", "weighted", "LW", "lw"):
        assert registry.display_name(name) == "LW", name
    assert registry.display_name("Weighted-e") == "Weighted-e"  # a mechanism of its own (a target eps)
    assert registry.display_name("censor_w_public") == "Censor_w-pub"
    assert registry.display_name("A[0.4,1.8]") == "A[0.4,1.8]" and registry.display_name("Data") == "Data"
    assert registry.label("Weighted") == registry.label("LW") == "LW (aDP)"
    assert "Weighted" not in registry.names() and "LW" in registry.names()
    assert registry.spec("weighted").key == "weighted"  # both keys still work for the API and the CLI
    with pytest.raises(KeyError, match="unknown synthesizer"):
        registry.display_name("Mystery")


def test_result_names_are_mapped_to_the_names_shown():
    import xarray as xr

    ds = xr.Dataset({"delta": (("replicate", "fit"), np.ones((2, 3)))},
                    coords={"synthesizer": ("fit", ["Unweighted", "Weighted", "Weighted-e"]),
                            "ds_synthesizer": ["Weighted", "Censor_w"], "variant": ["Weighted, alpha = 1", "x"]})
    out = registry.with_display_names(ds)
    assert list(out["synthesizer"].values) == ["Unweighted", "LW", "Weighted-e"]
    assert list(out["ds_synthesizer"].values) == ["LW", "Censor_w"]
    assert list(out["variant"].values) == ["Weighted, alpha = 1", "x"]  # not a name coordinate
    assert list(ds["synthesizer"].values)[1] == "Weighted"  # the input (a shipped file) keeps its names
    both = xr.Dataset(coords={"synthesizer": ["Weighted", "LW"]})
    with pytest.raises(DataError, match="two names"):
        registry.with_display_names(both)


def test_every_spec_shows_the_name_the_registry_shows():
    """A result's label (``MechanismSpec.shown_name``) and the pages (``registry.display_name``) agree."""
    from dpsynth.mechanisms import catalog

    for s in catalog.specs():
        if not s.pattern:  # a pattern's results are named by their parameters, e.g. "A[0.4,1.8]"
            assert s.shown_name == registry.display_name(s.key), s.key


def test_the_names_of_a_guarantee_come_from_the_registry_in_its_order():
    dp = registry.with_guarantee("DP")
    assert "Censor_ref" in dp and "Noise-aware" in dp and "LW" not in dp and "Unweighted" not in dp
    assert dp == [n for n in registry.names() if registry.guarantee(n) == "DP"]
    assert registry.listed("DP").endswith(f" and {dp[-1]}") and registry.listed("none") == "Unweighted"
    with pytest.raises(DataError, match="`guarantee`"):
        registry.with_guarantee("strict")
