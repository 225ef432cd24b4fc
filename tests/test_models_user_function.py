"""A user's PyMC model function: it may touch the data only through the clamped likelihood the package builds.

The bypass of issue 27 (an unclamped likelihood added beside the clamped one) is played as a distinguishing game
on neighbouring data sets through the real release path: with the package's check, such a model is refused; with
the check switched off (the control), the game proves eps > 1 from the released files alone; an honest model
stays within its eps.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from synthesizer_models import lognormal_no_covariates, lognormal_observed_too

import dpsynth.models.user_function as user_function
from dpsynth import Synthesizer, cli
from dpsynth.distinguishing import threshold_game
from dpsynth.validation import DataError

TESTS = str(Path(__file__).resolve().parent)
X = np.exp(np.random.default_rng(0).normal(0.0, 1.0, 20))
D = pd.DataFrame({"x": X})
D_PRIME = pd.DataFrame({"x": np.r_[X, 1e6]})  # one record added, far out
TRIALS = 40


def _spreads(model, frame) -> np.ndarray:
    out = []
    for t in range(TRIALS):
        s = Synthesizer(frame, "x", model=model, mechanism="censor_uw", eps=1.0, n_release=200,
                        sampler={"draws": 300, "tune": 300}, progress=False)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s.fit(seed=t)
        # what an adversary reads off the released file
        out.append(np.log(s.sample(allow_research=True, seed=t)["x"]).std())
    return np.array(out)


@pytest.mark.slow
def test_an_unclamped_likelihood_beside_the_clamped_one_is_refused_and_would_leak(monkeypatch):
    with pytest.raises(DataError, match="adds observed variable"):
        Synthesizer(D, "x", model=lognormal_observed_too, mechanism="censor_uw", eps=1.0, n_release=200).fit(seed=0)
    honest = threshold_game(_spreads(lognormal_no_covariates, D), _spreads(lognormal_no_covariates, D_PRIME))
    assert honest <= 1.0  # within its eps = 1 (one record removed; the size declared public)
    monkeypatch.setattr(user_function, "verify_model", lambda *a, **k: None)  # the control: the check switched off
    leaky = threshold_game(_spreads(lognormal_observed_too, D), _spreads(lognormal_observed_too, D_PRIME))
    assert leaky > 1.0  # the game detects the unclamped likelihood


@pytest.mark.slow
def test_a_model_that_ignores_the_covariates_fits_and_releases():
    df = pd.DataFrame({"x": X, "z": np.arange(20.0)})
    s = Synthesizer(df, "x", covariates=["z"], model=lognormal_no_covariates, mechanism="censor_uw", eps=4.0,
                    sampler={"draws": 300, "tune": 300}, progress=False).fit(seed=1)
    out = s.sample(allow_research=True, seed=2)
    assert len(out) == 20 and (out["x"] > 0).all()


@pytest.mark.slow
def test_a_model_function_from_the_command_line(tmp_path, capsys, monkeypatch):
    """Acceptance: `dpsynth fit --model module:function` works end to end (fit, save, release, load)."""
    monkeypatch.syspath_prepend(TESTS)
    data = tmp_path / "x.csv"
    D.to_csv(data, index=False)
    assert cli.main(["fit", str(data), "--target", "x", "--model", "synthesizer_models:lognormal_no_covariates",
                     "--mechanism", "censor_uw", "--eps", "2", "--n-release", "20", "--draws", "300", "--tune", "300",
                     "--seed", "1", "--out", str(tmp_path / "s.json"), "--quiet"]) == 0
    # the guarantee of a model function is conditional: no check can see a closure over the data
    assert ("Censor_uw (strict DP if the model function synthesizer_models:lognormal_no_covariates reads the "
            "confidential data only through its argument x; a closure or a global reading them cannot be detected): "
            "eps = 2 with one record removed") in capsys.readouterr().out
    assert cli.main(["release", "--allow-research",
                     str(tmp_path / "s.json"), "--out", str(tmp_path / "r.csv"), "--seed", "2",
                     "--quiet"]) == 0
    assert len(pd.read_csv(tmp_path / "r.csv")) == 20
    assert cli.main(["fit", str(data), "--target", "x", "--model", "synthesizer_models:nothing_here", "--eps", "2",
                     "--out", str(tmp_path / "t.json")]) == 2
    assert "cannot import the model function" in capsys.readouterr().err
    assert "synthesizer_models" in sys.modules
