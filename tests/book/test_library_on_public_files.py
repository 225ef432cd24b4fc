"""The library on the book's public files: acceptance tests that read a real file through ``dpsynth_book.public_data``.

They test the library (the eps asked is the eps published, a regression's covariate effect survives,
the default mechanism fits and releases), on the real public files the book's chapters use; the loaders
of those files are the compendium's, so the tests live here.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest

from dpsynth import Synthesizer, TableSynthesizer, cli
from dpsynth.fitting import SamplerConfig
from dpsynth.release.ledger import Ledger
from dpsynth.synthesizer import CensoringWarning
from dpsynth_book.public_data import islr_wage

#: Public covariates of the real wage file (ISLR's Wage): the release carries them, so n is public.
WAGE_COVARIATES = ["education", "jobclass", "race", "year"]
SMALL = {"draws": 500, "tune": 500}


@pytest.fixture
def fresh_home(tmp_path, monkeypatch):
    """A new user's home: the same real file released in another test's home does not count here."""
    from dpsynth.release.home import NewHomeWarning

    monkeypatch.setenv("DPSYNTH_HOME", str(tmp_path / "home"))
    with pytest.warns(NewHomeWarning):
        from dpsynth.release.home import secret_key

        secret_key()


# ----------------------------------------------------------------------------------- the eps published


@pytest.mark.slow
def test_the_eps_asked_is_the_eps_published_on_a_real_wage_file(tmp_path, fresh_home):
    """Acceptance: Synthesizer(df, "wage", covariates=[...], eps=1) states eps = 1 under the relation it printed
    before the fit, the saved file and the ledger say the same, and after one release the ledger's total is 1."""
    df = islr_wage()[["wage", *WAGE_COVARIATES]]
    s = Synthesizer(df, "wage", covariates=WAGE_COVARIATES, eps=1.0, sampler=SMALL, progress=False)
    plan = s.budget.plan_line("budget")
    assert s.relation == "replace" and plan.startswith("budget: eps = 1 with one record replaced")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CensoringWarning)
        s.fit(seed=1)
    p = s.privacy
    assert p.eps == 1.0 and "eps = 1 with one record replaced for one released file" in p.statement()
    assert p.budget.reference + p.budget.draw == pytest.approx(1.0) and p.budget.size == 0.0
    path = s.save(tmp_path / "wage.json")
    loaded = Synthesizer.load(path)
    assert loaded.privacy.eps == 1.0 and loaded.privacy.statement() == p.statement()
    out = loaded.release(tmp_path / "r1.csv", seed=2, budget=1.0, allow_research=True)
    book = Ledger(s.dataset)
    assert book.total() == pytest.approx(1.0) and out.attrs["spend"] == pytest.approx(1.0)
    assert "eps = 1 with one record replaced" in book.summary()
    # the second release pays only its draw (the reference was released once), and a budget of 1 refuses it
    from dpsynth.release.ledger import BudgetExceeded

    with pytest.raises(BudgetExceeded, match=f"adds {p.budget.draw:.4g}, total"):
        loaded.release(tmp_path / "r2.csv", seed=3, budget=1.0, allow_research=True)
    second = loaded.release(tmp_path / "r2.csv", seed=3, budget=1.0 + p.budget.draw, allow_research=True)
    assert second.attrs["spend"] == pytest.approx(p.budget.draw)
    assert book.total() == pytest.approx(1.0 + p.budget.draw)


@pytest.mark.slow
def test_a_table_at_eps_one_publishes_one(tmp_path, fresh_home):
    df = islr_wage()[["wage", "age", *WAGE_COVARIATES]]
    t = TableSynthesizer(df, ["wage", "age"], covariates=WAGE_COVARIATES, eps=1.0, sampler=SMALL, progress=False)
    assert t.budget.total == 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CensoringWarning)
        t.fit(seed=1)
    assert t.privacy.eps == pytest.approx(1.0) and "strict DP eps = 1 with one record replaced" in \
        t.privacy.statement()
    t.release(tmp_path / "t.csv", seed=2, allow_research=True)
    assert Ledger(t.dataset).total() == pytest.approx(1.0)


@pytest.mark.slow
def test_the_command_line_prints_the_eps_it_publishes_before_the_fit(tmp_path, capsys, fresh_home):
    data = tmp_path / "wage.csv"
    islr_wage()[["wage", *WAGE_COVARIATES]].to_csv(data, index=False)
    args = ["fit", str(data), "--target", "wage", "--covariates", *WAGE_COVARIATES, "--eps", "1", "--draws", "500",
            "--tune", "500", "--seed", "1", "--out", str(tmp_path / "s.json"), "--quiet"]
    assert cli.main(args) == 0
    cap = capsys.readouterr()
    plan = [line for line in cap.err.splitlines() if "privacy budget" in line]
    fitting = [i for i, line in enumerate(cap.err.splitlines()) if line.startswith("dpsynth: fitting")]
    assert plan and "eps = 1 with one record replaced" in plan[0]
    assert cap.err.splitlines().index(plan[0]) < fitting[0]  # printed before the fit
    assert "eps = 1 with one record replaced for one released file" in cap.out
    assert cli.main(["release", "--allow-research", str(tmp_path / "s.json"), "--out", str(tmp_path / "r.csv"),
                     "--seed", "2", "--budget", "1", "--quiet"]) == 0
    assert "strict-DP spend of this data set: eps = 1 of budget 1" in capsys.readouterr().out


# ----------------------------------------------------------------------------------- a regression on CPS wages


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::dpsynth.fitting.ConvergenceWarning")
def test_lognormal_regression_on_cps_wages_keeps_the_covariate_effect():
    from dpsynth.metrics import log_regression
    from dpsynth_book.public_data import WAGE_CATEGORICAL, WAGE_NUMERIC, cps1988, wage_design, wage_model_frame

    frame = wage_model_frame(cps1988("thousands")).iloc[::90].reset_index(drop=True)  # 313 records
    covs = [*WAGE_NUMERIC, *WAGE_CATEGORICAL]
    s = Synthesizer(frame[["wage", *covs]], "wage", covariates=covs, model="lognormal_regression",
                    mechanism="censor_uw", eps=12.0, sampler=SamplerConfig(draws=300, tune=300, chains=2),
                    censor_warn_share=1.0).fit(seed=3)
    p = s.privacy
    assert p.guarantee == "DP" and p.name == "Censor_uw"
    assert p.delta <= 3.0 + 1e-9 and p.eps == pytest.approx(12.0) and p.relation == "replace"
    assert s.draws["beta"].shape[1] == 10
    out = s.sample_unaccounted(seed=4)
    pd.testing.assert_frame_equal(out[covs], frame[covs])
    assert (out["wage"] > 0).all() and np.isfinite(out["wage"]).all()
    X, terms = wage_design(frame)
    coef = dict(zip(terms, log_regression(out["wage"], X)))
    # part-time work lowers the weekly wage by about two thirds (log -1.1): a model of the wage keeps it
    assert coef["parttime=yes"] < -0.3


# ----------------------------------------------------------------------------------- the default mechanism


@pytest.mark.slow
def test_the_default_fits_and_releases_a_real_file():
    df = islr_wage()[["wage", "age", "education"]].sample(300, random_state=1).reset_index(drop=True)
    s = Synthesizer(df, "wage", covariates=["age", "education"], eps=3, mode="research", progress=False,
                    sampler={"draws": 500, "tune": 500})
    assert s.mechanism_requested == "auto" and s.choice is not None
    s.fit(seed=1)
    syn = s.sample_unaccounted(seed=2)
    assert len(syn) == len(df) and list(syn.columns) == list(df.columns)
    assert s.privacy.budget.total == pytest.approx(3.0)
    assert re.search(r"eps = 3\b", syn.attrs["privacy_statement"])
