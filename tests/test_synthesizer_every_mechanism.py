"""Every registered mechanism runs through the Synthesizer, and every strictly DP one through the CLI.

The parameters each mechanism needs come from one table here (public bounds, a radius, a historical
data set, a range); a mechanism that is added without an entry runs with its defaults, and one that
cannot run through the Synthesizer must say why in its spec.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from dpsynth import Synthesizer, cli, mechanisms, registry
from dpsynth.release.ledger import Ledger

N = 150
SAMPLER = {"draws": 300, "tune": 300}
PRIORS = {"beta_sd": 2.0, "sigma_prior_scale": 1.0}


def frame(n: int = N, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    region = rng.choice(["north", "south"], n)
    return pd.DataFrame({"wage": np.exp(1.0 + 0.3 * (region == "south") + rng.normal(0.0, 0.4, n)),
                         "region": region})


#: What each mechanism needs besides the model and eps (public bounds in the data's unit).
PARAMS = {
    "cw": {"radius": 0.5},
    "cw_final": {"radius": 0.5},
    "censor_w_public": {"historical": frame(seed=99)},
    "ph": {"lower": 0.0, "upper": 40.0, "mode": "research"},
    "ph_paper": {"lower": 0.0, "upper": 40.0, "mode": "research"},
    "opendp_quantiles": {"lower": 0.05, "upper": 40.0},
    "noise_aware": {"lower": 0.05, "upper": 40.0, "mode": "research"},
    "range_averaged": {"a": 0.5, "b": 1.5},
    "range_truncated": {"a": 0.5, "b": 1.5},
    "range_truncated_whole": {"a": 0.5, "b": 1.5},
    # 150 records are few for a DP release of the reference's location and scale at the default share
    "censor_ref": {"reference_eps": 2.0},
}
#: The total with one record replaced (covariates carried): a window of 4 for the censored mechanisms.
EPS = 8.0


@pytest.mark.slow
@pytest.mark.parametrize("key", mechanisms.list_mechanisms())
def test_every_mechanism_through_the_synthesizer(key):
    spec = mechanisms.get(key)
    df = frame()
    kw = dict(covariates=["region"], model="lognormal_regression", mechanism=key, eps=EPS if spec.takes_eps else None,
              mechanism_params=PARAMS.get(key), model_params=PRIORS, sampler=SAMPLER)
    if not spec.runnable:
        with pytest.raises(Exception, match=spec.not_runnable[:30]):
            Synthesizer(df, "wage", **kw)
        return
    s = Synthesizer(df, "wage", **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s.fit(seed=1)
    p = s.privacy
    assert p.mechanism == key and p.guarantee == spec.guarantee == registry.guarantee(key)
    assert registry.spec(p.name).key == key
    if spec.guarantee == "DP":  # the total asked is the total stated, every share inside it
        assert p.eps == pytest.approx(EPS) and p.budget.size + p.budget.reference + p.budget.draw == pytest.approx(EPS)
    if np.isfinite(p.bound) and spec.guarantee == "DP":  # a censored likelihood: Delta <= M on every fit
        assert p.delta <= p.bound + 1e-9 and p.bound == pytest.approx(p.budget.draw / 4)  # two-signed, replaced
    out = s.sample(allow_research=True, seed=2, allow_unusable=True)  # booked in the data set's ledger
    assert list(out.columns) == ["wage", "region"] and len(out) == N
    assert (out["wage"] >= 0).all()
    assert out.attrs["mechanism"] == key and out.attrs["accounted"]


def _cli_args(key: str, data, tmp_path) -> list[str]:
    args = ["fit", str(data), "--target", "wage", "--covariates", "region", "--model", "lognormal_regression",
            "--mechanism", key, "--eps", str(EPS), "--draws", str(SAMPLER["draws"]), "--tune", str(SAMPLER["tune"]),
            "--model-param", "beta_sd=2", "--model-param", "sigma_prior_scale=1",
            "--seed", "1", "--out", str(tmp_path / "s.json")]
    for name, value in PARAMS.get(key, {}).items():
        flag = "--" + name.replace("_", "-")
        if isinstance(value, pd.DataFrame):
            path = tmp_path / f"{name}.csv"
            value.to_csv(path, index=False)
            value = path
        args += [flag, str(value)]
    return args


@pytest.mark.slow
@pytest.mark.parametrize("key", [s.key for s in mechanisms.specs() if s.guarantee == "DP" and s.runnable])
def test_every_strictly_dp_mechanism_through_the_cli(key, tmp_path, capsys):
    data = tmp_path / "data.csv"
    frame().to_csv(data, index=False)
    assert cli.main(_cli_args(key, data, tmp_path)) == 0
    saved = json.loads((tmp_path / "s.json").read_text())["content"]
    assert saved["privacy"]["mechanism"] == key and saved["privacy"]["guarantee"] == "DP"
    out = tmp_path / "release.csv"
    assert cli.main(["release", "--allow-research",
                     str(tmp_path / "s.json"), "--out", str(out), "--seed", "2", "--allow-unusable"]) == 0
    released = pd.read_csv(out)
    assert len(released) == N and np.isfinite(released["wage"]).all()
    loaded = Synthesizer.load(tmp_path / "s.json")
    ledger = Ledger(loaded.dataset)
    rec = ledger.releases()[-1]
    assert rec["eps"] == pytest.approx(EPS) and rec["synthesizer"] == loaded.checksum
    assert rec["spend"] == pytest.approx(EPS)  # a new fit: its reference and its draw
    assert "strict DP" in capsys.readouterr().out


def test_a_parameter_of_another_mechanism_is_refused_on_the_command_line(tmp_path, capsys):
    data = tmp_path / "data.csv"
    frame().to_csv(data, index=False)
    args = _cli_args("censor_uw", data, tmp_path) + ["--radius", "2"]
    assert cli.main(args) == 2
    err = capsys.readouterr().err
    assert "--radius does not apply to the censor_uw mechanism; it is a parameter of cw, cw_final" in err
    assert not (tmp_path / "s.json").exists()
