"""The Synthesizer: DataFrame in, mechanism by registry key, privacy report, save/load, release."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import warnings

import numpy as np
import pandas as pd
import pytest
from synthesizer_models import (
    changed_term,
    data_prior,
    kept_mean,
    lognormal_regression,
    no_weighted_loglik,
    pooled_location,
    unclamped_potential,
)

from dpsynth import Synthesizer
from dpsynth.fitting import ConvergenceWarning, SamplerConfig
from dpsynth.models import ModelSimulator
from dpsynth.release.ledger import BudgetExceeded, Ledger
from dpsynth.synthesizer import (
    CensoringWarning,
    ChecksumError,
    CovariatesIgnoredWarning,
    confidential_path,
)
from dpsynth.synthesizer_files import digest
from dpsynth.validation import DataError

# Long enough that convergence does not hinge on the seed: R-hat <= 1.01 held for 10 of 10 seeds
# (sampler output differs across machines, so a test must not rely on one seed converging).
CFG = SamplerConfig(draws=1500, tune=1000, chains=2, ess_min=100)
#: Priors of the shipped lognormal family, tight enough that a censored fit does not wander into the flat tails.
PRIORS = {"mu_prior_sd": 2.0, "sigma_prior_scale": 1.0}
#: The same for the lognormal regression, the default model with covariates.
REG_PRIORS = {"beta_sd": 2.0, "sigma_prior_scale": 1.0}


def wages(n: int = 120, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    region = rng.choice(["north", "south", "west"], n)
    log_w = 0.2 + 0.4 * (region == "south") + rng.normal(0.0, 0.3, n)
    return pd.DataFrame({"wage": np.exp(log_w), "region": region, "age": rng.integers(20, 60, n)})


@pytest.fixture(scope="module")
def df():
    return wages()


@pytest.fixture(scope="module")
def censor_uw(df):
    # eps is the total under the relation: one record replaced (covariates carried), so the window is 8 / 2 = 4
    return Synthesizer(df, "wage", covariates=["region", "age"], model="lognormal", mechanism="censor_uw", eps=8.0,
                       sampler=CFG, model_params=PRIORS).fit(seed=1)


@pytest.fixture(scope="module")
def user_censor_w(df):
    # a regression on raw age mixes slowly: more draws than CFG (converged for 10 of 10 seeds)
    cfg = SamplerConfig(draws=2000, tune=1000, chains=2, ess_min=100)
    return Synthesizer(df, "wage", covariates=["region", "age"], model=lognormal_regression, mechanism="censor_w",
                       eps=8.0, sampler=cfg).fit(seed=2)


# ----------------------------------------------------------------------------------- arguments


def test_eps_must_match_the_mechanism(df):
    with pytest.raises(DataError, match="pass eps="):
        Synthesizer(df, "wage", covariates=["region", "age"], mechanism="censor_uw")
    with pytest.raises(DataError, match="does not take `eps`"):
        Synthesizer(df, "wage", covariates=["region", "age"], mechanism="unweighted", eps=1.0)


@pytest.mark.parametrize("kwargs, match", [
    (dict(target="pay"), "column 'pay' is not in `data`"),
    (dict(target="wage", covariates=["region"]), "neither `target` nor `covariates`: \\['age'\\]"),
    (dict(target="wage", covariates="region"), "list of column names"),
    (dict(target="wage", covariates=["region", "age"], mechanism="censor"), "`mechanism` must be one of"),
    (dict(target="wage", covariates=["region", "age"], model="gamma"), "unknown `model`"),
    (dict(target="wage", covariates=["region", "age"], mechanism="cw"), "radius"),
    (dict(target="wage", covariates=["region", "age"], mechanism="ph", eps=1.0), "needs `lower`: public lower bound"),
    (dict(target="wage", covariates=["region", "age"], model="poisson", unit=1000.0), "`unit` applies to continuous"),
    (dict(target="wage", covariates=["region", "age"], unit=0.0), "`unit`"),
])
def test_bad_arguments_name_the_argument(df, kwargs, match):
    kw = {"mechanism": "unweighted", **kwargs}
    with pytest.raises(DataError, match=match):
        Synthesizer(df, **kw)


def test_target_must_be_numeric():
    bad = pd.DataFrame({"wage": ["1,200", "950"]})
    with pytest.raises(DataError, match="must be numeric.*thousands separators"):
        Synthesizer(bad, "wage", mechanism="unweighted")


@pytest.mark.parametrize("fn, match", [
    (no_weighted_loglik, r"adds observed variable\(s\) \['obs'\]: an unclamped likelihood"),
    (unclamped_potential, r"adds a potential 'extra' that depends on the confidential column"),
    (data_prior, r"parameter 'mu' has a prior that depends on the confidential column"),
    (kept_mean, r"keeps a deterministic 'xbar' computed from the confidential column"),
    (pooled_location, r"distribution whose parameters depend on the confidential column"),
    (changed_term, r"passes `dpsynth.weighted_loglik` a term other than `pm.logp\(dist, x\)`"),
])
def test_a_model_function_may_touch_the_data_only_through_the_clamped_likelihood(df, fn, match):
    s = Synthesizer(df[["wage"]], "wage", model=fn, mechanism="censor_uw", eps=1.0, sampler=CFG)
    with pytest.raises(DataError, match=match):
        s.fit(seed=0)


# ----------------------------------------------------------------------------------- fit and sample


@pytest.mark.slow
def test_censor_uw_reports_and_samples(df, censor_uw):
    p = censor_uw.privacy
    assert p.guarantee == "DP" and p.name == "Censor_uw"
    # covariates carried into the release: their rows, and n, are public, so the relation is "replace"
    assert p.relation == "replace" and p.eps == pytest.approx(8.0) and p.eps_draw == pytest.approx(8.0)
    assert p.budget.reference == 0.0 and p.budget.size == 0.0  # no reference; n public under replacement
    assert p.delta <= 2.0 + 1e-9 and p.bound == 2.0 and 0 <= p.n_censored <= len(df)
    assert p.converged and p.rhat_max <= CFG.rhat_max and p.ess_min >= CFG.ess_threshold and p.divergences == 0
    assert censor_uw.n_draws == 10  # the kept draws: one per release
    out = censor_uw.sample_unaccounted(seed=5)
    assert list(out.columns) == list(df.columns) and out.attrs["accounted"] is False
    pd.testing.assert_frame_equal(out[["region", "age"]], df[["region", "age"]].reset_index(drop=True))
    assert not np.allclose(out["wage"], df["wage"]) and (out["wage"] > 0).all()
    assert out["age"].dtype == df["age"].dtype
    assert out.attrs["privacy_statement"].startswith("NOT A RELEASE")
    # the public statement names no figure computed from the data
    st = p.statement()
    assert "strict DP" in st and "eps = 8 with one record replaced" in st and "Delta" not in st
    assert "censored" in p.diagnostics() and "do not publish" in p.diagnostics()
    # one posterior draw per set: the same draw and seed give the same set
    a = censor_uw.sample_unaccounted(seed=5, draw=3)
    np.testing.assert_array_equal(a["wage"], censor_uw.sample_unaccounted(seed=5, draw=3)["wage"])


@pytest.mark.slow
def test_plain_pymc_function_as_censor_w(df, user_censor_w):
    """Acceptance: a plain PyMC function (not a ModelFamily subclass) as Censor_w, Delta <= eps/2."""
    s = user_censor_w
    assert not isinstance(lognormal_regression, type)
    p = s.privacy
    assert p.name == "Censor_w" and p.guarantee == "aDP"
    assert p.delta <= 4.0 / 2 + 1e-9 and p.bound == pytest.approx(2.0)  # eps 8 replaced: a window of 4
    # the simulator is drawn from the model's own distribution at one posterior draw: for the draw
    # used, log wages of "south" records have mean beta_0 + beta_south and sd sigma
    big = pd.DataFrame({"region": ["south"] * 4000, "age": [30] * 4000})
    out = s.sample_unaccounted(seed=3, data=big, draw=7)
    assert isinstance(s._simulator, ModelSimulator)
    beta, sigma = s.draws["beta"][7], s.draws["sigma"][7]
    X = s.design(big)[0]  # intercept, region indicators, age centred and scaled (its rows are public)
    logw = np.log(out["wage"].to_numpy())
    assert logw.mean() == pytest.approx(X @ beta, abs=5 * sigma / np.sqrt(4000))
    assert logw.std() == pytest.approx(sigma, rel=0.08)


@pytest.mark.slow
def test_unseen_covariate_level_is_an_error(censor_uw):
    new = pd.DataFrame({"region": ["north", "east"], "age": [30, 40]})
    book = Ledger(censor_uw.dataset)
    before = len(book.releases())
    with pytest.raises(DataError, match=r"covariate 'region' has level\(s\) \['east'\] not seen at fit time"):
        censor_uw.sample(allow_research=True, seed=0, data=new)
    assert len(book.releases()) == before  # nothing booked


@pytest.mark.slow
def test_an_unconverged_fit_is_released_and_its_statement_does_not_say_so(df):
    """Whether the chains passed their checks is a figure of the data: it goes to the confidential diagnostics and
    decides nothing (no refusal, no override, no word in the public statement)."""
    tiny = SamplerConfig(draws=20, tune=20, chains=2)  # bulk ESS cannot reach 100 * chains
    with pytest.warns(ConvergenceWarning):
        s = Synthesizer(df, "wage", covariates=["region", "age"], mechanism="censor_uw", eps=4.0,
                        sampler=tiny).fit(seed=0)
    assert not s.privacy.converged
    assert "FAILED THEIR CHECKS" in s.privacy.diagnostics()
    out = s.sample(allow_research=True, seed=0, allow_unusable=True)
    assert "FAILED" not in out.attrs["privacy_statement"].upper()
    assert "MCMC" in out.attrs["privacy_statement"]  # the caveat every model-based statement carries
    assert not any("unconverged" in o for o in out.attrs["overrides"])
    booked = Ledger(s.dataset).releases()[-1]
    assert not any("unconverged" in o for o in booked["overrides"])


@pytest.mark.slow
def test_unit_changes_censoring_and_the_warning(df):
    cents = df.assign(wage=df["wage"] * 1000.0)
    with pytest.warns(CensoringWarning, match="CONFIDENTIAL.*unit"):
        bad = Synthesizer(cents, "wage", covariates=["region", "age"], mechanism="censor_uw", eps=8.0, sampler=CFG,
                          model_params=REG_PRIORS).fit(seed=4)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CensoringWarning)
        good = Synthesizer(cents, "wage", covariates=["region", "age"], mechanism="censor_uw", eps=8.0, sampler=CFG,
                           unit=1000.0, model_params=REG_PRIORS).fit(seed=4)
    assert bad.privacy.censored_share > 0.5 > good.privacy.censored_share
    out = good.sample_unaccounted(seed=1)
    assert np.median(out["wage"]) == pytest.approx(np.median(cents["wage"]), rel=0.5)


@pytest.mark.slow
def test_ph_samples_within_public_bounds(df, tmp_path):
    s = Synthesizer(df, "wage", covariates=["region", "age"], mechanism="ph", eps=1.0,
                    mechanism_params={"lower": 0.0, "upper": 10.0}).fit(seed=0)
    p = s.privacy
    assert p.extra["ph_mode"] == "research"  # a seeded fit is research mode: its noise comes from the seed too
    assert p.extra["bins"] == 30  # a public number of bins, never one computed from n
    # eps = 1 is the total with one record replaced (covariates carried): the histogram is calibrated to 1/2 removed
    assert p.guarantee == "DP" and p.eps == pytest.approx(1.0) and p.relation == "replace"
    assert s.plan.params["eps"] == pytest.approx(0.5)
    out = s.sample_unaccounted(seed=1)
    assert out["wage"].between(0.0, 10.0).all()
    s.save(tmp_path / "ph.json")
    back = Synthesizer.load(tmp_path / "ph.json")
    assert back.state.release.to_dict() == s.state.release.to_dict()  # the released histogram
    with pytest.raises(DataError, match="releases through the ledger only"):
        back.sample_unaccounted(seed=1)


# ----------------------------------------------------------------------------------- save / load / release


@pytest.mark.slow
def test_save_holds_no_confidential_data(df, user_censor_w, tmp_path):
    path = user_censor_w.save(tmp_path / "syn.json", include_confidential=True)
    doc = json.loads(path.read_text())
    text = path.read_text()
    model = {"kind": "function", "function": "synthesizer_models:lognormal_regression"}
    assert doc["content"]["config"]["model"] == model
    assert "weights" not in doc["content"] and repr(float(df["wage"].iloc[0])) not in text
    conf = confidential_path(path)
    assert "CONFIDENTIAL" in conf.name and conf.exists()
    assert conf.stat().st_mode & 0o077 == 0  # the confidential file is readable by its owner only
    cdoc = json.loads(conf.read_text())
    assert cdoc["confidential"] is True
    np.testing.assert_allclose(cdoc["values"], df["wage"])
    assert len(cdoc["weights"]) == len(df)
    assert path.stat().st_mode & 0o077 == 0  # the saved synthesizer too: it holds posterior draws
    assert doc["content"]["confidential"] is True and "10 posterior draw(s)" in doc["content"]["worth"]
    assert len(doc["content"]["draws"]["sigma"]) == 10  # only the kept draws
    loaded = Synthesizer.load(path)
    assert loaded.privacy == user_censor_w.privacy
    a = user_censor_w._synthetic_frame(user_censor_w.public, 9, 3)  # noqa: SLF001 - the same draw, the same seed
    b = loaded._synthetic_frame(loaded.public, 9, 3)  # noqa: SLF001
    pd.testing.assert_frame_equal(a, b)
    with pytest.raises(DataError, match="loaded without its confidential data"):
        loaded.fit(seed=0)


def _rehashed(path, tmp_path, edit, name="rehashed.json") -> object:
    """``path`` edited and every checksum recomputed, as an adversary who knows the format (not the key) would do."""
    doc = json.loads(path.read_text())
    edit(doc["content"])
    doc["sha256"] = digest(doc["content"])
    doc["mac"] = hashlib.sha256(json.dumps(doc["content"], sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    out = tmp_path / name
    out.write_text(json.dumps(doc))
    return out


def _consistent(c):
    """Settings eps 0.5, the report's budget and bound to match, on draws fitted at eps 8 (issue 27's edit)."""
    c["config"]["eps"] = 0.5
    c["privacy"]["budget"].update(total=0.5, draw=0.5)
    c["privacy"]["bound"] = 0.125
    c["plan"]["params"]["eps"] = 0.25


@pytest.mark.slow
@pytest.mark.parametrize("edit", [
    _consistent,
    lambda c: c["config"].__setitem__("eps", 40.0),
    lambda c: c["privacy"]["budget"].__setitem__("reference", 1e-6),
    lambda c: c.__setitem__("dataset", "0" * 32),
    lambda c: c["plan"].__setitem__("relation", "remove"),
    lambda c: c["privacy"].__setitem__("guarantee", "none"),
    lambda c: c["draws"]["mu"].__setitem__(0, 0.0),
], ids=["consistent", "eps", "reference", "dataset", "relation", "guarantee", "draw"])
def test_an_edited_and_rehashed_file_is_refused(censor_uw, tmp_path, edit):
    """Acceptance: any edit of a saved synthesizer, its checksums recomputed, is refused on load (its MAC)."""
    path = censor_uw.save(tmp_path / "syn.json")
    Synthesizer.load(path)  # the untouched file loads
    with pytest.raises(ChecksumError, match="do not match their MAC") as err:
        Synthesizer.load(_rehashed(path, tmp_path, edit))
    assert "\n" not in str(err.value)


@pytest.mark.slow
def test_a_file_from_another_home_is_refused_naming_the_fix(censor_uw, tmp_path, monkeypatch):
    """Acceptance: a saved file names its key; released from a home with another key, it is refused in one line."""
    from dpsynth.release.home import KeyMismatchError, NewHomeWarning, key_id
    from dpsynth.release.ledger import import_home

    path = censor_uw.save(tmp_path / "syn.json")
    written = json.loads(path.read_text())["key_id"]
    assert written == key_id()
    spent = Ledger(censor_uw.dataset).total()
    old_home = tmp_path / "old-home"
    shutil.copytree(os.environ["DPSYNTH_HOME"], old_home)  # a copy: the import seals it, not the session's home
    monkeypatch.setenv("DPSYNTH_HOME", str(tmp_path / "new-home"))
    with pytest.warns(NewHomeWarning, match="new secret key"):  # a new home is never silent
        new = key_id()
    with pytest.raises(KeyMismatchError, match=f"written under dpsynth key {written}.*dpsynth home import") as err:
        Synthesizer.load(path)
    assert "\n" not in str(err.value)
    import_home(old_home)  # the explicit way to move a home: its key joins this home's keyring, its ledgers come
    assert key_id() == new and Synthesizer.load(path).privacy == censor_uw.privacy
    assert Ledger(censor_uw.dataset).total() == spent  # its ledgers came with it


@pytest.mark.slow
def test_loaded_synthesizer_releases_without_the_data_and_budget_refusal_writes_nothing(censor_uw, tmp_path):
    path = censor_uw.save(tmp_path / "syn.json", include_confidential=True)
    confidential_path(path).unlink()
    s = Synthesizer.load(path)
    book = Ledger(s.dataset)
    spent = book.total()
    r1 = s.release(tmp_path / "r1.csv", budget=spent + 16.0, seed=1, allow_research=True)
    r2 = s.release(tmp_path / "r2.parquet", budget=spent + 16.0, seed=2, allow_research=True)
    assert r1.attrs["draw"] != r2.attrs["draw"]  # each release spends its own draw
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "r1.csv")[["region", "age"]], r1[["region", "age"]])
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "r2.parquet"), r2, check_like=True)
    assert pd.read_parquet(tmp_path / "r2.parquet").attrs == {}  # nothing but the data leaves in the file
    assert book.total() == pytest.approx(spent + 16.0)  # 2 x eps = 8 with one record replaced (no reference)
    assert [r["output"] for r in book.releases()][-2:] == [str(tmp_path / "r1.csv"), str(tmp_path / "r2.parquet")]
    before = book.path.read_bytes()
    with pytest.raises(BudgetExceeded, match="budget"):
        s.release(tmp_path / "r3.csv", budget=spent + 16.0, seed=3, allow_research=True)
    assert not (tmp_path / "r3.csv").exists() and book.path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r1.csv", "r2.parquet", "syn.json"]
    with pytest.raises(DataError, match=".csv or .parquet"):
        s.release(tmp_path / "r3.xlsx", seed=3, allow_research=True)
    with pytest.raises(DataError, match="exists already.*--force"):
        s.release(tmp_path / "r1.csv", seed=4, allow_research=True)
    with pytest.raises(DataError, match="does not exist; create it first"):
        s.release(tmp_path / "missing" / "r4.csv", seed=4, allow_research=True)
    assert book.path.read_bytes() == before  # refused releases book nothing


@pytest.mark.slow
def test_a_copied_synthesizer_shares_its_ledger(censor_uw, tmp_path):
    """Acceptance: the ledger is keyed by the data set, not by the file's name."""
    path = censor_uw.save(tmp_path / "s.json")
    copy = tmp_path / "elsewhere"
    copy.mkdir()
    (copy / "s_copy.json").write_bytes(path.read_bytes())
    a, b = Synthesizer.load(path), Synthesizer.load(copy / "s_copy.json")
    book = Ledger(a.dataset)
    n0, t0 = len(book.releases()), book.total()
    a.release(tmp_path / "a.csv", seed=1, allow_research=True)
    b.release(tmp_path / "b.csv", seed=2, allow_research=True)
    assert len(book.releases()) == n0 + 2 and book.total() == pytest.approx(t0 + 2 * a.privacy.eps)
    # a budget counts both files' releases
    with pytest.raises(BudgetExceeded):
        b.release(tmp_path / "c.csv", seed=3, budget=book.total(), allow_research=True)


@pytest.mark.slow
def test_sample_books_what_it_draws(censor_uw):
    """Acceptance: drawing synthetic data from a fitted synthesizer goes through the accounting."""
    book = Ledger(censor_uw.dataset)
    before = len(book.releases())
    outs = [censor_uw.sample(allow_research=True, seed=s) for s in range(3)]
    recs = book.releases()[before:]
    assert len(recs) == 3 and all(r["output"] == "<in memory>" for r in recs)
    assert [r["draw"] for r in recs] == [o.attrs["draw"] for o in outs]
    assert all(o.attrs["accounted"] for o in outs)


@pytest.mark.slow
def test_removal_needs_a_public_frame_for_covariates_and_a_dp_size_without(tmp_path):
    """Under one record removed the release's rows and size are inside the guarantee, and inside eps."""
    df = wages(seed=7)  # another data set: this module's fixtures released the usual one under replacement
    s = Synthesizer(df, "wage", covariates=["region", "age"], mechanism="censor_uw", eps=4.0, sampler=CFG,
                    model_params=REG_PRIORS, neighbours="remove").fit(seed=1)
    assert s.privacy.eps == pytest.approx(4.0) and s.privacy.budget.size == 0.0  # the size comes with the frame
    with pytest.raises(DataError, match="would reveal which records it holds"):
        s.release(tmp_path / "x.csv", seed=1, allow_research=True)
    frame = pd.DataFrame({"region": ["north", "south"] * 50, "age": [40] * 100})
    out = s.release(tmp_path / "x.csv", seed=1, data=frame, allow_research=True)
    assert len(out) == 100 and out.attrs["size"] == "public" and out.attrs["spend"] == pytest.approx(4.0)
    marginal = Synthesizer(df[["wage"]], "wage", mechanism="censor_uw", eps=4.0, sampler=CFG,
                           model_params=PRIORS).fit(seed=1)
    b = marginal.privacy.budget
    assert marginal.relation == "remove" and (b.total, b.size, b.draw) == pytest.approx((4.0, 0.2, 3.8))
    first, second = marginal.sample(allow_research=True, seed=1), marginal.sample(allow_research=True, seed=2)
    assert len(first) == len(second) == marginal.state.size.n  # the DP count, drawn once per fit
    assert first.attrs["spend"] == pytest.approx(4.0) and second.attrs["spend"] == pytest.approx(3.8)  # size once
    assert "a DP count" in first.attrs["privacy_statement"] and "earlier release" in second.attrs["privacy_statement"]
    declared = Synthesizer(df[["wage"]], "wage", mechanism="censor_uw", eps=4.0, sampler=CFG, model_params=PRIORS,
                           n_release=500).fit(seed=1)
    assert declared.privacy.budget.size == 0.0 and len(declared.sample(allow_research=True, seed=1)) == 500


@pytest.mark.slow
def test_a_fit_that_censored_most_records_is_not_refused_on_a_confidential_figure(df, tmp_path):
    """A refusal may depend on the released values only: the censored share (a figure of the data) is a
    confidential warning, never a refusal."""
    cents = df[["wage"]].assign(wage=df["wage"] * 1e6)  # in these units every record is censored
    with pytest.warns(CensoringWarning, match="^CONFIDENTIAL"):
        s = Synthesizer(cents, "wage", mechanism="censor_uw", eps=1.0, sampler=SamplerConfig(draws=200, tune=200),
                        n_release=50).fit(seed=0)
    assert s.privacy.censored_share > 0.9
    out = s.release(tmp_path / "u.csv", seed=0, allow_unusable=True, allow_research=True)
    assert not any("censored" in o for o in out.attrs["overrides"])
    assert "censored" not in out.attrs["privacy_statement"]


@pytest.mark.slow
def test_a_one_signed_censor_ref_fit_is_saved_and_loaded(tmp_path):
    """A Poisson model's saturated reference keeps its terms one-signed (M = eps, not eps / 2): the check of a loaded
    file re-derives the bound by the same rule as the fit (dpsynth.privacy.is_one_signed), so the file loads."""
    counts = pd.DataFrame({"visits": np.random.default_rng(3).poisson(3.0, 150)})
    s = Synthesizer(counts, "visits", model="poisson", mechanism="censor_ref", eps=2.0,
                    sampler=SamplerConfig(draws=200, tune=200, chains=2), progress=False).fit(seed=1)
    assert s.privacy.bound == pytest.approx(s.privacy.budget.draw)  # one-signed: the window's whole width
    back = Synthesizer.load(s.save(tmp_path / "pois.json"))
    assert back.privacy == s.privacy


def test_non_finite_synthetic_values_are_named(censor_uw):
    reasons = censor_uw._unusable(np.array([1.0, np.inf, 2.0]))  # noqa: SLF001
    assert any("1 synthetic value(s) are not finite" in r for r in reasons)
    assert any("support" in r for r in censor_uw._unusable(np.array([1.0, -2.0])))  # noqa: SLF001


@pytest.mark.slow
@pytest.mark.parametrize("mechanism, eps, params", [
    ("unweighted", None, {}), ("weighted", None, {}), ("lw", None, {}), ("sw", None, {}), ("lw_final", None, {}),
    ("cw", None, {"radius": 0.1}), ("cw_final", None, {"radius": 0.1}), ("weighted_e", 4.0, {}),
])
def test_every_mechanism_reports_its_registry_name_and_guarantee(df, mechanism, eps, params):
    from dpsynth import registry

    s = Synthesizer(df, "wage", covariates=["region", "age"], mechanism=mechanism, eps=eps, mechanism_params=params,
                    model_params=REG_PRIORS, sampler=CFG)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        s.fit(seed=3)
    spec = registry.spec(mechanism)
    assert s.privacy.name == spec.name and s.privacy.guarantee == spec.guarantee
    # uncensored: the local eps_x, 2 Delta removed, 4 Delta with one record replaced (covariates carried)
    assert s.privacy.relation == "replace" and s.privacy.eps == pytest.approx(4 * s.privacy.delta)
    assert len(s.sample_unaccounted(seed=0)) == len(df)


@pytest.mark.slow
def test_poisson_regression_on_encoded_covariates_keeps_integer_counts():
    rng = np.random.default_rng(1)
    region = rng.choice(["a", "b"], 150)
    d = pd.DataFrame({"visits": rng.poisson(np.where(region == "b", 6.0, 2.0)), "region": region})
    s = Synthesizer(d, "visits", covariates=["region"], model="poisson", mechanism="censor_uw", eps=12.0,
                    sampler=CFG).fit(seed=0)
    assert s.draws["beta"].shape[1] == 2  # intercept and the indicator of "b"
    # one-signed (log probabilities <= 0): the window [-M, 0] has width M: M removed, 2 M replaced, so the
    # total 12 with one record replaced is a window of 6
    assert s.privacy.bound == pytest.approx(6.0)
    assert s.privacy.eps == pytest.approx(12.0) and s.privacy.relation == "replace"
    out = s.sample_unaccounted(seed=0, data=pd.DataFrame({"region": ["a"] * 2000 + ["b"] * 2000}))
    assert out["visits"].dtype == d["visits"].dtype
    means = out.groupby("region")["visits"].mean()
    assert means["b"] > 2 * means["a"]


@pytest.mark.slow
def test_a_public_offset_moves_the_censoring(df):
    # log-likelihoods of these records lie around +-1; subtracting 3 pushes them below -M = -2
    kw = dict(covariates=["region", "age"], mechanism="censor_uw", eps=8.0, sampler=CFG, model_params=REG_PRIORS,
              censor_warn_share=1.0)
    plain = Synthesizer(df, "wage", **kw).fit(seed=1)
    shifted = Synthesizer(df, "wage", offset=3.0, **kw).fit(seed=1)
    assert shifted.privacy.n_censored > plain.privacy.n_censored
    assert shifted.privacy.eps == plain.privacy.eps == pytest.approx(8.0)


# ----------------------------------------------------------------------------------- lognormal_regression


def test_lognormal_regression_family_gets_the_design_width_and_priors(df):
    from dpsynth.models import LognormalRegression
    from dpsynth.synthesizer import FAMILIES

    assert FAMILIES["lognormal_regression"] is LognormalRegression
    s = Synthesizer(df, "wage", covariates=["region", "age"], model="lognormal_regression", mechanism="censor_uw",
                    eps=4.0, model_params={"beta_sd": 2.0, "sigma_prior_scale": 1.0})
    # intercept, region=south, region=west, age
    assert s.family() == LognormalRegression(n_coef=4, beta_sd=2.0, sigma_prior_scale=1.0)
    assert s._model_covariates(s._X) is s._X  # noqa: SLF001 - the design reaches the model
    # a continuous family: a public unit and offset are accepted
    s = Synthesizer(df[["wage", "region"]], "wage", covariates=["region"], model="lognormal_regression",
                    mechanism="censor_uw", eps=4.0, unit=1000.0, offset=-1.0)
    fam = s.family()
    assert fam.name == "lognormal_regression-offset" and fam.base == LognormalRegression(n_coef=3)


# ----------------------------------------------------------------------------------- unit-free default


@pytest.mark.slow
def test_the_default_censored_mechanism_does_not_depend_on_the_unit():
    """Acceptance: the same data in two units (x1000) with Censor_ref (the unit-free censored model): the same
    censored count and the same utility within Monte Carlo error."""
    from dpsynth.metrics import ecdf_distances

    rng = np.random.default_rng(11)
    wage = np.exp(4.65 + rng.normal(0.0, 0.35, 3000))  # dollars a week, say
    out = {}
    for unit, scale in (("dollars", 1.0), ("thousandths", 1000.0)):
        df = pd.DataFrame({"wage": wage * scale})
        s = Synthesizer(df, "wage", mechanism="censor_ref", eps=1.0, sampler=SamplerConfig(draws=1000, tune=1000),
                        n_release=3000)
        s.fit(seed=1)
        p = s.privacy
        assert p.guarantee == "DP" and p.eps == pytest.approx(1.0)  # the total: reference and draw inside it
        assert p.extra["reference_eps_remove"] <= p.budget.reference + 1e-12
        syn = s.sample_unaccounted(seed=2)["wage"].to_numpy() / scale
        out[unit] = (p.n_censored, ecdf_distances(wage, syn).max_ecdf, np.log(syn).mean(), np.log(syn).std())
    (c1, u1, m1, s1), (c2, u2, m2, s2) = out.values()
    assert c1 < 0.1 * 3000 and c2 < 0.1 * 3000  # Censor_uw censors all 3000 in either unit
    assert abs(c1 - c2) <= 3 * np.sqrt(max(c1, c2)) + 5
    assert abs(u1 - u2) < 0.05 and abs(m1 - m2) < 0.05 and abs(s1 - s2) < 0.05
    assert m1 == pytest.approx(4.65, abs=0.05) and s1 == pytest.approx(0.35, abs=0.05)


# ----------------------------------------------------------------------------------- kinds of target


def test_a_list_of_targets_points_to_the_whole_table_release(df):
    with pytest.raises(DataError, match="one column name.*whole-table"):
        Synthesizer(df, ["wage", "age"], mechanism="unweighted")


def test_a_text_target_without_levels_says_how_to_declare_them():
    bad = pd.DataFrame({"mode": ["boat", "pier", "boat", "beach"] * 10})
    with pytest.raises(DataError, match=r"levels are not declared.*target_levels=\[\.\.\.\]"):
        Synthesizer(bad, "mode")
    with pytest.raises(DataError, match=r"value\(s\) \['pier'\] outside its public levels"):
        Synthesizer(bad, "mode", target_levels=["beach", "boat"])
    with pytest.raises(DataError, match="at least two distinct"):
        Synthesizer(bad, "mode", target_levels=["boat"])


@pytest.mark.parametrize(("column", "levels", "kind", "model"), [
    (np.linspace(1.0, 9.0, 40), None, "continuous", "lognormal"),
    (np.arange(40, dtype=np.int64) % 7, None, "count", "negbin"),
    (pd.Categorical(["a", "b"] * 20, categories=["a", "b", "c"]), None, "categorical", "multinomial"),
    (np.array([True, False] * 20), None, "categorical", "multinomial"),
    (np.array(["x", "y"] * 20, dtype=object), ["y", "x"], "categorical", "multinomial"),
])
def test_the_model_comes_from_the_targets_type_never_its_values(column, levels, kind, model):
    frame = pd.DataFrame({"t": column})
    s = Synthesizer(frame, "t", target_levels=levels, mechanism="censor_ref", eps=1.0)
    assert s.encoding.kind == kind and s.model == model and s.mechanism == "censor_ref"
    if kind == "categorical":
        declared = list(levels) if levels is not None else (
            [False, True] if frame["t"].dtype == bool else list(frame["t"].cat.categories))
        assert list(s.encoding.levels) == declared  # 'c' is declared though it never occurs
    with_cov = Synthesizer(frame.assign(z=np.arange(40.0)), "t", covariates=["z"], target_levels=levels, eps=1.0)
    assert with_cov.model == {"lognormal": "lognormal_regression"}.get(model, model)


def test_covariates_a_mechanism_ignores_are_a_warning_naming_the_loss(df):
    with pytest.warns(CovariatesIgnoredWarning, match=r"ph mechanism synthesizes the marginal.*regression of 'wage' "
                                                      r"on \['region', 'age'\] is lost.*censor_ref"):
        Synthesizer(df, "wage", covariates=["region", "age"], mechanism="ph", eps=1.0,
                    mechanism_params={"lower": 0.1, "upper": 100.0})
    with pytest.warns(CovariatesIgnoredWarning, match=r"lognormal model takes no covariates.*"
                                                      r"model='lognormal_regression'"):
        Synthesizer(df, "wage", covariates=["region", "age"], model="lognormal", mechanism="censor_ref", eps=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CovariatesIgnoredWarning)
        Synthesizer(df, "wage", covariates=["region", "age"], mechanism="censor_ref", eps=1.0)  # the default model
        Synthesizer(df[["wage"]], "wage", mechanism="ph", eps=1.0, mechanism_params={"lower": 0.1, "upper": 100.0})


def test_public_covariates_are_standardised_only_when_their_rows_are_public(df):
    s = Synthesizer(df, "wage", covariates=["region", "age"], eps=1.0)
    assert s.relation == "replace"
    X = s.design(df[["region", "age"]])
    age = X[:, -1]
    assert abs(age.mean()) < 1e-9 and age.std() == pytest.approx(1.0, rel=0.02)
    raw = Synthesizer(df, "wage", covariates=["region", "age"], eps=1.0, neighbours="remove")
    np.testing.assert_array_equal(raw.design(df[["region", "age"]])[:, -1], df["age"].to_numpy(dtype=float))
    with pytest.raises(DataError, match="standardize=True.*one record removed.*public constants"):
        Synthesizer(df, "wage", covariates=["region", "age"], eps=1.0, neighbours="remove", standardize=True)


@pytest.mark.slow
def test_a_count_target_is_released_as_counts(tmp_path):
    rng = np.random.default_rng(5)
    n = 400
    z = rng.normal(size=n)
    visits = rng.negative_binomial(3, 3 / (3 + np.exp(1.2 + 0.5 * z)))
    frame = pd.DataFrame({"visits": visits.astype(np.int64), "z": z})
    s = Synthesizer(frame, "visits", covariates=["z"], mechanism="censor_ref", eps=2.0, progress=False).fit(seed=3)
    assert s.model == "negbin" and s.privacy.converged
    out = s.sample(allow_research=True, seed=4)
    assert out["visits"].dtype == np.int64 and (out["visits"] >= 0).all()
    np.testing.assert_array_equal(out["z"].to_numpy(), z)
    # the relation with z is kept: the log-mean slope is about 0.5
    slope = np.polyfit(z, np.log1p(out["visits"].to_numpy()), 1)[0]
    true_slope = np.polyfit(z, np.log1p(visits), 1)[0]
    assert abs(slope - true_slope) < 0.15


@pytest.mark.slow
def test_a_categorical_target_keeps_its_levels_through_release_save_load_and_report(tmp_path):
    rng = np.random.default_rng(6)
    n = 400
    z = rng.normal(size=n)
    eta = np.column_stack([np.zeros(n), 0.5 + 1.0 * z, -0.5 - 1.0 * z])
    prob = np.exp(eta) / np.exp(eta).sum(axis=1, keepdims=True)
    codes = np.array([rng.choice(3, p=pr) for pr in prob])
    levels = ["walk", "bus", "car", "boat"]  # 'boat' is a public level that never occurs
    frame = pd.DataFrame({"mode": pd.Categorical(np.array(levels)[codes], categories=levels), "z": z})
    s = Synthesizer(frame, "mode", covariates=["z"], mechanism="censor_ref", eps=3.0, progress=False).fit(seed=5)
    assert s.model == "multinomial" and s.privacy.converged and s.privacy.guarantee == "DP"
    out = s.sample(allow_research=True, seed=6)
    assert isinstance(out["mode"].dtype, pd.CategoricalDtype) and list(out["mode"].cat.categories) == levels
    # the relation with z is kept: 'bus' rises and 'car' falls with z, as in the data
    bus, car = (out["mode"] == "bus").to_numpy(), (out["mode"] == "car").to_numpy()
    assert z[bus].mean() > z[car].mean() + 0.5
    path = s.save(tmp_path / "mode.json")
    back = Synthesizer.load(path)
    assert list(back.encoding.levels) == levels
    again = back.sample(allow_research=True, seed=7)
    assert set(again["mode"].astype(str)) <= set(levels)
    page = s.report(out, tmp_path / "rep")
    html = page.read_text()
    assert "figure-1-shares.png" in html and "Total variation distance" in html and "bus: z" in html


def test_the_release_sampler_uses_the_low_rank_mass_matrix_unless_told_otherwise():
    df = pd.DataFrame({"wage": np.exp(np.random.default_rng(0).normal(6.0, 0.5, 50))})
    assert Synthesizer(df, "wage", eps=1.0).sampler.mass_matrix == "low_rank"
    merged = Synthesizer(df, "wage", eps=1.0, sampler={"draws": 500}).sampler
    assert (merged.draws, merged.mass_matrix) == (500, "low_rank")
    given = SamplerConfig(draws=500)
    assert Synthesizer(df, "wage", eps=1.0, sampler=given).sampler is given
    assert Synthesizer(df, "wage", eps=1.0, sampler={"mass_matrix": "diag"}).sampler.mass_matrix == "diag"


@pytest.mark.slow
def test_the_same_seed_gives_the_same_released_file_in_research_mode(tmp_path, monkeypatch):
    """Acceptance (issue 28): the same data, seed and settings give a byte-identical released file in research mode,
    every DP noise included (a categorical target's level counts, the released size's count); the statement says
    which mode made the file."""
    from dpsynth.release.home import NewHomeWarning

    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"mode": pd.Categorical(rng.choice(["a", "b", "c"], 150, p=[0.6, 0.3, 0.1]),
                                                 categories=["a", "b", "c"])})
    files = []
    for k in range(2):
        monkeypatch.setenv("DPSYNTH_HOME", str(tmp_path / f"home{k}"))  # each run as a new user
        with pytest.warns(NewHomeWarning):
            s = Synthesizer(frame, "mode", mechanism="censor_ref", eps=2.0, mode="research", progress=False,
                            sampler={"draws": 300, "tune": 300}).fit(seed=11)
        b = s.privacy.budget
        assert b.size > 0 and b.reference > 0  # both noises are in play
        out = s.release(tmp_path / f"r{k}.csv", seed=12, allow_research=True)
        files.append((tmp_path / f"r{k}.csv").read_bytes())
        assert "RESEARCH MODE" in out.attrs["privacy_statement"]
    assert files[0] == files[1]
    rel = Synthesizer(frame, "mode", eps=2.0, progress=False)
    assert rel.mode == "release"
    with pytest.raises(DataError, match="`mode` must be None"):
        Synthesizer(frame, "mode", eps=2.0, mode="test")


@pytest.mark.slow
def test_a_large_file_is_fitted_on_a_random_subsample_at_the_amplified_eps():
    """With n public (one record replaced), a fit may see a random subsample without replacement: a mechanism that is
    e-DP on it is log(1 + q (e^e - 1))-DP on the file, so the draw's share is spent amplified."""
    from dpsynth.release.budget import amplify

    df = wages(n=400, seed=5)
    s = Synthesizer(df, "wage", covariates=["region", "age"], mechanism="censor_ref", eps=2.0, subsample=100,
                    progress=False, sampler={"draws": 300, "tune": 300}).fit(seed=1)
    p = s.privacy
    assert p.budget.sample_rate == pytest.approx(0.25) and p.n == 100  # the records the fit saw
    run_eps = s.plan.params["eps"]  # the window's eps on the subsample (removal)
    assert amplify(2 * run_eps, 0.25) == pytest.approx(2.0)  # stated on the file, under replacement
    assert "fitted on a random 0.25 of the records" in p.statement()
    assert len(s.sample(allow_research=True, seed=2)) == 400  # a release covers every public row
    with pytest.raises(DataError, match="`subsample`"):
        Synthesizer(df, "wage", covariates=["region", "age"], eps=2.0, subsample=-3)


@pytest.mark.slow
def test_eps_pays_for_the_releases_asked_for_before_the_fit():
    """``releases=m``: the statement's eps is the total of m files from m draws; m releases spend exactly it."""
    df = wages(seed=11)
    s = Synthesizer(df[["wage"]], "wage", mechanism="censor_uw", eps=4.0, sampler=CFG, model_params=PRIORS,
                    releases=4).fit(seed=1)
    b = s.privacy.budget
    assert (b.total, b.size, b.draw, b.releases) == pytest.approx((4.0, 0.2, 0.95, 4))
    assert "eps = 4 with one record removed for 4 released files" in s.privacy.statement()
    spent = [s.sample(allow_research=True, seed=k).attrs["spend"] for k in range(4)]
    assert sum(spent) == pytest.approx(4.0) and len({round(v, 9) for v in spent[1:]}) == 1
    with pytest.raises(DataError, match="keep_draws"):
        Synthesizer(df[["wage"]], "wage", mechanism="censor_uw", eps=4.0, releases=11)
    ph = Synthesizer(df[["wage"]], "wage", mechanism="ph", eps=4.0, releases=5,
                     mechanism_params={"lower": 0.0, "upper": 5000.0}).fit(seed=1)
    assert ph.privacy.budget.releases == 1 and ph.privacy.budget.draw == pytest.approx(3.8)
    assert "cost nothing more" in ph.privacy.statement()


def test_a_value_outside_the_models_support_is_named_by_its_column():
    """A zero in a column the default models as positive: the error names the column, its model and both fixes."""
    df = pd.DataFrame({"w": np.r_[0.0, np.linspace(1.0, 50.0, 99)], "a": np.arange(100.0)})
    s = Synthesizer(df, "w", covariates=["a"], eps=1.0, mechanism="censor_ref", progress=False)
    with pytest.raises(DataError, match=r"target column 'w' \(model lognormal_regression\): `x` has 1 values below "
                                        r".*Transform or remove those records\. Or choose a model") as err:
        s.fit(seed=1)
    assert "\n" not in str(err.value)


# ----------------------------------------------------------------------------------- bad input: refused before the home


def _with(df: pd.DataFrame, column: str, row: int, value, dtype=None) -> pd.DataFrame:
    out = df.copy()
    out[column] = out[column].astype(dtype or (object if isinstance(value, str) else float))
    out.loc[row, column] = value
    return out


#: Each bad input, the Synthesizer's settings, and the one-line refusal it gets (API; the table's below).
BAD_INPUT = {
    "one record": (lambda df: df.iloc[:1], {}, r"`data` has 1 record\(s\); synthesis needs at least 2"),
    "a target beyond float32": (lambda df: _with(df, "wage", 3, 1e300), {},
                                r"target column 'wage' has the value 1e\+300 at row 3, beyond"),
    "a covariate beyond float32": (lambda df: _with(df, "age", 5, -1e300), {},
                                   r"covariate 'age' has the value -1e\+300 at row 5"),
    "NaN in a covariate": (lambda df: _with(df, "age", 2, np.nan), {}, r"covariate 'age' has missing"),
    "text in a numeric target": (lambda df: _with(df, "wage", 7, "n/a"), {},
                                 r"target column 'wage' holds numbers and text: 1 of 120 value\(s\) are not numbers "
                                 r"\(first at row 7: 'n/a'\)\. Clean or convert the column"),
    "a constant target": (lambda df: df.assign(wage=2.0), {},
                          r"target column 'wage' holds the same value in every record: the lognormal_regression "
                          r"model cannot fit a constant column .*bounds=\(lower, upper\) with mechanism='noise_aware'"),
    "a level not declared": (lambda df: df.assign(wage=df["region"]), {"target_levels": ["north", "south"]},
                             r"value\(s\) \['west'\] outside its public levels"),
}


@pytest.mark.parametrize("case", list(BAD_INPUT))
def test_bad_input_is_one_line_before_the_home_is_touched(df, tmp_path, monkeypatch, case):
    """Acceptance (C): every check of the input runs before the home is touched: a refusal leaves no key, no ledgers
    folder, no home folder (a NaN covariate used to create the key and the ledgers first)."""
    make, kw, match = BAD_INPUT[case]
    home = tmp_path / "fresh-home"
    monkeypatch.setenv("DPSYNTH_HOME", str(home))
    with pytest.raises(DataError, match=match) as err:
        Synthesizer(make(df), "wage", covariates=["region", "age"], **{"eps": 1.0, "progress": False, **kw})
    assert "\n" not in str(err.value)
    assert not home.exists()


@pytest.mark.parametrize("case", list(BAD_INPUT))
def test_a_tables_bad_input_is_refused_before_the_home_is_touched(df, tmp_path, monkeypatch, case):
    from dpsynth import TableSynthesizer

    make, kw, match = BAD_INPUT[case]
    kw = dict(kw)
    if "target_levels" in kw:
        kw["target_levels"] = {"wage": kw["target_levels"]}
    home = tmp_path / "fresh-home"
    monkeypatch.setenv("DPSYNTH_HOME", str(home))
    with pytest.raises(DataError, match=match):
        TableSynthesizer(make(df), ["wage"], covariates=["region", "age"], **{"eps": 1.0, "progress": False, **kw})
    assert not home.exists()


def test_a_constant_target_is_taken_by_a_mechanism_with_public_bounds(df):
    """The fix the refusal names: public bounds and a mechanism that takes a constant column."""
    s = Synthesizer(df[["wage"]].assign(wage=2.0), "wage", mechanism="ph", eps=1.0, bounds=(0.0, 10.0),
                    progress=False).fit(seed=1)
    assert s.sample_unaccounted(seed=1)["wage"].between(0.0, 10.0).all()
    with pytest.raises(DataError, match="holds the same value"):  # counts too, before any fit
        Synthesizer(df.assign(age=7), "age", covariates=["region", "wage"], eps=1.0, progress=False)


def test_values_beyond_the_public_bounds_are_clamped_in_a_table_too(df):
    """Public bounds clamp, never refuse (a refusal would tell whether one record lies outside them): the table
    clamps the column before any conditional sees it, and its diagnostics (confidential) count the values moved."""
    from dpsynth import TableSynthesizer

    t = TableSynthesizer(df, ["wage"], covariates=["region", "age"], eps=1.0, progress=False, mechanisms="ph",
                         bounds={"wage": (0.0, 1.5)})
    assert t._data["wage"].max() <= 1.5 and t._clamped["wage"] > 0  # noqa: SLF001
