"""A user's model function against the forms of the adversarial review, on the real release path.

Every form in ``user_model_attacks`` was once accepted and stated "Censor_uw (strict DP)". For each, a test shows
(a) that the package now refuses it, or accepts it where it cannot leak (the function is built with ``x`` holding a
public placeholder, so whatever it computes from ``x.get_value()`` holds nothing of the data), and (b) a **control**:
the same function built the old way (``x`` holding the data) carries the outlier's value into the model, the saved
file or the released files, so the test would see the leak. The data: 50 records, and their neighbour with one
record replaced by an outlier at e^6 = 403.429. The MCMC tests (small, seeded in the harness) are marked slow.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pymc as pm
import pytensor.tensor as pt
import pytest
import user_model_attacks as attacks
from pytensor.compile.sharedvalue import SharedVariable
from pytensor.graph.basic import Constant
from synthesizer_models import lognormal_no_covariates, lognormal_regression

import dpsynth.models.user_function as user_function
from dpsynth import Synthesizer, fitting, synthesizer_fit
from dpsynth.distinguishing import threshold_game
from dpsynth.fitting import CompiledModel, SamplerConfig, compiled_model
from dpsynth.models import PyMCFunctionFamily
from dpsynth.synthesizer_files import read_saved, write_saved
from dpsynth.validation import DataError

TESTS = Path(__file__).resolve().parent
SRC = TESTS.parent / "src"
N = 50
OUTLIER = float(np.exp(6.0))  # 403.429
_VALUES = np.exp(np.random.default_rng(0).normal(0.0, 0.35, N))
D = pd.DataFrame({"x": _VALUES})
D_PRIME = pd.DataFrame({"x": np.r_[OUTLIER, _VALUES[1:]]})  # one record replaced by the outlier
SMALL = {"draws": 150, "tune": 150, "chains": 2}


def _synth(fn, frame, **kw) -> Synthesizer:
    # one record replaced: the neighbours of the games (D and D' differ in one record's value)
    opts = dict(mechanism="censor_uw", eps=1.0, neighbours="replace", sampler=SMALL,
                progress=False)
    return Synthesizer(frame, "x", model=fn, **{**opts, **kw})


def _package_build(fn, frame):
    """The model the release path builds for ``fn`` on ``frame`` (the family CompiledModel builds)."""
    s = _synth(fn, frame)
    model = s.family().build(s._x, s._model_covariates(s._X))  # noqa: SLF001
    return model, model._dpsynth_dist  # noqa: SLF001


def _old_build(fn, frame):
    """The control: ``fn`` built the old way, ``x`` holding the confidential values."""
    x = frame["x"].to_numpy(dtype=float)
    with pm.Model() as model:
        dist = fn(pm.Data("x", x), pm.Data("X", np.ones((x.size, 1))))
    return model, dist


def _graph_numbers(model, dist) -> np.ndarray:
    """Every number the model's graphs hold: constants, and the values of shared variables other than x and X."""
    roots = [dist, *model.free_RVs, *model.deterministics, *model.potentials]
    out = [np.zeros(0)]
    for v in user_function._variables(roots):  # noqa: SLF001
        value = v.data if isinstance(v, Constant) else (
            v.get_value() if isinstance(v, SharedVariable) and v.name not in ("x", "X") else None)
        try:
            out.append(np.ravel(np.asarray(value, dtype=float)))
        except (TypeError, ValueError):
            continue
    return np.concatenate(out)


def _holds_outlier(model, dist) -> bool:
    """Whether the outlier's value (or its log) is held anywhere in the model's graphs."""
    nums = _graph_numbers(model, dist)
    return bool(np.isclose(nums, OUTLIER, rtol=1e-9).any() or np.isclose(nums, 6.0, rtol=1e-9).any())


# --------------------------------------------------------------------------------------------- refused forms

REFUSED = [
    ("potential_from_value", r"holds a constant of shape \(50,\) in the potential 'extra'"),
    ("closure_copy", r"holds a constant of shape \(50,\) in the potential 'extra'"),
    ("shared_copy", r"uses a shared variable \('x_copy'.*in the potential 'extra'"),
    ("custom_logp_reads_x", r"uses a `pm.CustomDist` / `pm.DensityDist`.*in the returned distribution"),
    ("hand_built_likelihood", r"registers a likelihood 'loglik' that is not the one `dpsynth.weighted_loglik` builds"),
]


@pytest.mark.parametrize("form, match", REFUSED, ids=[f for f, _ in REFUSED])
def test_a_form_the_check_can_see_is_refused_on_the_release_path(form, match, monkeypatch):
    monkeypatch.setattr(attacks, "FRAME", D_PRIME)
    with pytest.raises(DataError, match=match) as err:
        _synth(attacks.FORMS[form], D_PRIME).fit(seed=0)
    assert "\n" not in str(err.value) and f"user_model_attacks:{form}" in str(err.value)


@pytest.mark.parametrize("form", ["potential_from_value", "closure_copy", "shared_copy"])
def test_control_a_copy_of_the_column_carries_the_outlier_into_the_model(form, monkeypatch):
    """Built the old way, the copy (a constant, a shared variable) holds the outlier's exact value."""
    monkeypatch.setattr(attacks, "FRAME", D_PRIME)
    assert _holds_outlier(*_old_build(attacks.FORMS[form], D_PRIME))
    monkeypatch.setattr(attacks, "FRAME", D)
    assert not _holds_outlier(*_old_build(attacks.FORMS[form], D))


def _point_eval(model, var, **point):
    from pytensor.graph.replace import graph_replace

    rvs = {rv: pt.constant(np.asarray(point[rv.name], dtype=rv.dtype)) for rv in model.free_RVs}
    return np.asarray(graph_replace(var, rvs, strict=False).eval(), dtype=float)


def test_control_a_custom_logp_that_reads_x_makes_each_term_depend_on_every_record():
    """Built the old way, the CustomDist's term of an unchanged record moves with the outlier: no clamp bounds it."""
    terms = {}
    for key, frame in (("D", D), ("D'", D_PRIME)):
        model, dist = _old_build(attacks.custom_logp_reads_x, frame)
        terms[key] = _point_eval(model, pm.logp(dist, model["x"]), mu=0.0, sigma=1.0)
    # record 1 is the same in D and D', yet its term moved by log(e^6) - max log D
    assert terms["D'"][1] - terms["D"][1] > 4.0


def test_control_a_hand_built_likelihood_is_unclamped(monkeypatch):
    """With the check switched off, the hand-registered likelihood moves by far more than the clamp allows (2M)."""
    monkeypatch.setattr(user_function, "verify_model", lambda *a, **k: None)
    model, _ = _package_build(attacks.hand_built_likelihood, D)
    M = 0.5
    totals = []
    for frame in (D, D_PRIME):
        pm.set_data({"x": frame["x"].to_numpy(float), "bound": np.asarray(M)}, model=model)
        totals.append(float(_point_eval(model, model["loglik"], mu=0.0, sigma=1.0)))
    assert abs(totals[1] - totals[0]) > 10 * 2 * M


# --------------------------------------------------------------------------------------------- accepted forms


@pytest.mark.parametrize("form", ["prior_from_value", "deterministic_from_value", "censored_at_value"])
def test_what_a_function_reads_off_x_at_build_time_holds_nothing_of_the_data(form):
    model, dist = _package_build(attacks.FORMS[form], D_PRIME)
    assert not _holds_outlier(model, dist)  # the placeholder was read, not the data
    assert np.all(model["x"].get_value() == user_function.PLACEHOLDERS["continuous"])
    control_model, control_dist = _old_build(attacks.FORMS[form], D_PRIME)  # the control: built the old way
    assert _holds_outlier(control_model, control_dist)


def test_the_number_of_records_read_at_build_time_is_a_public_one():
    """With one record removed n is private: x's placeholder has the declared size (or a public constant before a
    DP count exists), never n; the control, built the old way, centres the prior at n = 50."""
    def prior_mean(model):
        return float(model["mu"].owner.op.dist_params(model["mu"].owner)[0].eval())

    s = Synthesizer(D, "x", model=attacks.prior_from_size, mechanism="censor_uw", eps=1.0, n_release=60,
                    progress=False)
    assert prior_mean(s.family().build(s._x, None)) == 60.0  # noqa: SLF001 - the declared size
    s = Synthesizer(D, "x", model=attacks.prior_from_size, mechanism="censor_uw", eps=1.0, progress=False)
    assert prior_mean(s.family().build(s._x, None)) == user_function.PLACEHOLDER_SIZE  # noqa: SLF001
    assert prior_mean(_old_build(attacks.prior_from_size, D)[0]) == N  # the control
    with pytest.raises(DataError, match=r"returns a distribution of fixed shape \(100,\): give it one entry per "
                                        r"record with shape=x.shape"):
        s = Synthesizer(D, "x", model=attacks.fixed_size, mechanism="censor_uw", eps=1.0, progress=False)
        s.family().build(s._x, None)  # noqa: SLF001


def test_a_closure_is_not_detected_and_the_statement_says_so(monkeypatch):
    """A closure over the data frame builds graphs no inspection can tell from honest ones: it is accepted, it holds
    the outlier, and the guarantee is stated as conditional on the function reading the data through x only."""
    monkeypatch.setattr(attacks, "FRAME", D_PRIME)
    model, dist = _package_build(attacks.closure_over_frame, D_PRIME)
    assert _holds_outlier(model, dist)  # the limitation, shown
    condition = user_function.guarantee_condition(attacks.closure_over_frame)
    assert "reads the confidential data only through its argument x" in condition
    assert "a closure or a global reading them cannot be detected" in condition
    assert "user_model_attacks:closure_over_frame" in condition
    assert "closure" in user_function.__doc__ and "cannot be checked" in user_function.__doc__


# --------------------------------------------------------------------------------------------- the cache


class _Stub:
    """A compiled model that builds the family's model and compiles nothing (the cache's behaviour alone)."""

    def __init__(self, family, x, covariates=None):
        self.family = family
        self.model = family.build(np.asarray(x, dtype=float), covariates)


def test_a_model_function_is_never_served_a_model_built_on_other_data(monkeypatch):
    monkeypatch.setattr(fitting, "_CACHE", {})
    monkeypatch.setattr(fitting, "CompiledModel", _Stub)
    fam = PyMCFunctionFamily(fn=attacks.closure_over_frame)
    x0, x1 = D["x"].to_numpy(float), D_PRIME["x"].to_numpy(float)
    monkeypatch.setattr(attacks, "FRAME", D_PRIME)
    m1 = compiled_model(fam, x1)
    assert compiled_model(fam, x1) is m1  # the same data: reused
    monkeypatch.setattr(attacks, "FRAME", D)
    m0 = compiled_model(fam, x0)
    assert m0 is not m1  # another data set: built again, the closure read again
    assert _holds_outlier(m1.model, m1.model._dpsynth_dist) and not _holds_outlier(m0.model, m0.model._dpsynth_dist)
    for k in range(fitting.USER_CACHE_SIZE + 2):  # a bounded number of user models is kept
        compiled_model(fam, x0 + k + 1)
    assert sum(isinstance(key[0], PyMCFunctionFamily) for key in fitting._CACHE) == fitting.USER_CACHE_SIZE


def test_a_shipped_family_keeps_its_compile_once_reuse(monkeypatch):
    from dpsynth.models import LognormalFamily

    monkeypatch.setattr(fitting, "_CACHE", {})
    monkeypatch.setattr(fitting, "CompiledModel", _Stub)
    fam = LognormalFamily()
    assert compiled_model(fam, D["x"].to_numpy(float)) is compiled_model(fam, D_PRIME["x"].to_numpy(float))


@pytest.mark.slow
def test_reusing_a_model_built_on_other_data_gives_this_datas_answer():
    """The D1 / D0 experiment: what once served D1's outlier to a fit of D0. Nothing of the data enters the build, so
    a model built on D' and refitted on D samples exactly what a model built on D does (same seed)."""
    fam = PyMCFunctionFamily(fn=attacks.prior_from_value)
    x0, x1 = D["x"].to_numpy(float), D_PRIME["x"].to_numpy(float)
    cfg = SamplerConfig(**SMALL)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reused = CompiledModel(fam, x1).fit(x0, bound=0.5, sampler=cfg, seed=3, keep_idata=False)
        fresh = CompiledModel(fam, x0).fit(x0, bound=0.5, sampler=cfg, seed=3, keep_idata=False)
    for k in ("mu", "sigma"):
        np.testing.assert_array_equal(reused.draws[k], fresh.draws[k])


# --------------------------------------------------------------------------------------------- MCMC: release path


def _released_log_mean(fn, frame, seed: int) -> float:
    s = _synth(fn, frame)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s.fit(seed=seed)
    # what an adversary reads off the released file
    return float(np.log(s.sample(seed=seed, allow_research=True)["x"]).mean())


def _game(fn, trials: int = 30) -> float:
    """The empirical eps of the released files' mean log value, on D against D' (seeded in the harness)."""
    a = [_released_log_mean(fn, D, t) for t in range(trials)]
    b = [_released_log_mean(fn, D_PRIME, 1000 + t) for t in range(trials)]
    return threshold_game(a, b)


@pytest.mark.slow
def test_game_a_prior_read_off_x_cannot_distinguish_neighbours_and_the_old_build_does(monkeypatch):
    """A prior centred at ``max log x.get_value()``: on the release path (a placeholder) the game stays within its
    eps = 1; the control, built the old way, tells D from D' (the outlier moves the prior to 6)."""
    honest = _game(attacks.prior_from_value)
    assert honest <= 1.0
    monkeypatch.setattr(fitting, "_CACHE", {})  # no model built the new way is served to the control
    monkeypatch.setattr(PyMCFunctionFamily, "build_values",
                        lambda self, x, cov: (np.asarray(x, dtype=float), np.ones((len(x), 1))))
    leaky = _game(attacks.prior_from_value)
    assert leaky > 1.0


@pytest.mark.slow
def test_a_saved_file_keeps_the_free_parameters_only_and_states_the_condition(tmp_path, monkeypatch):
    """A deterministic once saved the outlier's exact value (403.429) in a file stated strict DP. Now the file keeps
    the draws of the free parameters only, and its statement is conditional; the control (built the old way, every
    draw kept) writes the value into the file."""
    s = _synth(attacks.deterministic_from_value, D_PRIME)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s.fit(seed=1)
    path = s.save(tmp_path / "s.json")
    text = path.read_text()
    content = json.loads(text)["content"]
    assert sorted(content["draws"]) == ["mu", "sigma"] and "403.42" not in text
    condition = user_function.guarantee_condition(attacks.deterministic_from_value)
    assert content["privacy"]["condition"] == condition
    statement = s.privacy.statement()
    assert statement.startswith(f"Censor_uw (strict DP {condition}): eps = 1 with one record replaced")
    back = Synthesizer.load(path)
    assert back.privacy.statement() == statement and len(back.sample(seed=2, allow_research=True)) == N
    # a file whose statement lost its condition (an earlier version's) is refused
    content["privacy"]["condition"] = ""
    write_saved(tmp_path / "old.json", content)
    with pytest.raises(DataError, match="stated as conditional: refit it"):
        Synthesizer.load(tmp_path / "old.json")
    assert read_saved(path) is not None
    # the control: built the old way, every draw kept (at the fit and at the save)
    monkeypatch.setattr(fitting, "_CACHE", {})
    monkeypatch.setattr(PyMCFunctionFamily, "build_values",
                        lambda self, x, cov: (np.asarray(x, dtype=float), np.ones((len(x), 1))))
    monkeypatch.setattr(synthesizer_fit, "kept_draws", lambda fit, keep, *, model_function: dict(fit.draws))
    monkeypatch.setattr(Synthesizer, "_saved_draws", lambda self: dict(self.draws))
    leaky = _synth(attacks.deterministic_from_value, D_PRIME)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        leaky.fit(seed=1)
    assert "403.42" in leaky.save(tmp_path / "leaky.json").read_text()


# --------------------------------------------------------------------------------------------- from the shell


def _dpsynth(*args: str, home: Path) -> subprocess.CompletedProcess:
    # the tests folder on the path: the model function is importable as synthesizer_models:fn (a package named
    # `tests` installed in the environment would shadow tests.synthesizer_models)
    env = {**os.environ, "DPSYNTH_HOME": str(home), "PYTHONPATH": os.pathsep.join([str(SRC), str(TESTS)])}
    return subprocess.run([sys.executable, "-m", "dpsynth", *args], capture_output=True, text=True, env=env,
                          cwd=str(TESTS.parent), timeout=900)


@pytest.mark.slow
@pytest.mark.parametrize("covariates", [False, True], ids=["no covariates", "covariates"])
def test_a_model_function_from_the_shell_fits_in_one_process_and_releases_in_another(tmp_path, covariates):
    """`dpsynth fit --model synthesizer_models:fn` on the default mechanism (auto: Censor_ref at the model's
    prior point), then `dpsynth release` in a new process (which builds the model again, from placeholders)."""
    home = tmp_path / "home"
    frame = D.copy()
    fn = "lognormal_regression" if covariates else "lognormal_no_covariates"
    extra = []
    if covariates:
        frame["z"] = np.random.default_rng(1).normal(size=N)
        extra = ["--covariates", "z", "--mechanism", "censor_ref", "--reference", "prior"]
    frame.to_csv(tmp_path / "data.csv", index=False)
    fit = _dpsynth("fit", str(tmp_path / "data.csv"), "--target", "x", "--model", f"synthesizer_models:{fn}",
                   "--eps", "2", "--draws", "200", "--tune", "200", "--seed", "1",
                   "--out", str(tmp_path / "s.json"), *extra, home=home)
    assert fit.returncode == 0, fit.stderr
    assert f"strict DP if the model function synthesizer_models:{fn} reads the confidential data only" in fit.stdout
    if not covariates:
        assert "reference='prior'" in fit.stderr  # auto said what it chose, and why
    saved = json.loads((tmp_path / "s.json").read_text())["content"]
    assert saved["plan"]["params"]["reference"] == "prior" and saved["privacy"]["condition"]
    rel = _dpsynth("release", str(tmp_path / "s.json"), "--out", str(tmp_path / "r.csv"), "--seed", "2",
                   "--allow-research", home=home)
    assert rel.returncode == 0, rel.stderr
    out = pd.read_csv(tmp_path / "r.csv")
    assert len(out) > 0 and (out["x"] > 0).all() and np.isfinite(out["x"]).all()
    if covariates:
        assert len(out) == N and list(out.columns) == ["x", "z"]


@pytest.mark.slow
def test_auto_with_a_model_function_picks_censor_ref_at_the_prior_point_and_releases_after_load(tmp_path,
                                                                                                monkeypatch):
    own = pd.DataFrame({"x": 1.1 * _VALUES})  # a data set of its own: its ledger counts under one record removed
    s = Synthesizer(own, "x", model=lognormal_no_covariates, eps=2.0, sampler=SMALL,
                    progress=False)
    assert s.mechanism == "censor_ref" and s.plan.params["reference"] == "prior"
    assert "reference='prior'" in s.choice.reason and "synthesizer_models:lognormal_no_covariates" in s.choice.reason
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s.fit(seed=4)
    assert s.privacy.extra["reference_source"] == "prior"
    path = s.save(tmp_path / "s.json")
    monkeypatch.setattr(fitting, "_CACHE", {})  # as in a new process: nothing compiled
    out = Synthesizer.load(path).sample(seed=5, allow_research=True)
    assert len(out) > 0 and (out["x"] > 0).all()
    with pytest.raises(DataError, match="reference`='prior'"):  # named Censor_ref without a reference: the fix
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            Synthesizer(D, "x", model=lognormal_regression, mechanism="censor_ref", eps=2.0, sampler=SMALL,
                        progress=False).fit(seed=0)
