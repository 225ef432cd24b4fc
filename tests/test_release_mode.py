"""Release mode and research mode (:mod:`dpsynth.release.mode`), and the distinguishing game a known seed loses.

The game, on the real release path: an adversary who knows the seed (seeds are published with papers and
notebooks) re-runs the pipeline on a candidate data set D and compares the released file with the one it
sees. In research mode the file is a function of the data and the seed, so the comparison tells D from its
neighbour D' (one record replaced by an outlier) every time: the control. In release mode every random choice
comes from the system's entropy, whatever the seed says, so two runs on D itself differ and the comparison
tells nothing.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from dpsynth import Synthesizer, TableSynthesizer
from dpsynth.release.mode import ResearchModeError, SeedIgnoredWarning, check_mode, release_seed, resolve_mode
from dpsynth.validation import DataError

SAMPLER = {"draws": 100, "tune": 100}


def neighbours(n: int = 60) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(5)
    d = pd.DataFrame({"w": rng.lognormal(1.0, 0.5, n), "g": np.tile(["a", "b"], n // 2)})
    d2 = d.copy()
    d2.loc[7, "w"] = float(np.exp(6.0))  # one record replaced
    return d, d2


def released(df: pd.DataFrame, *, mode, seed, **kw) -> pd.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = Synthesizer(df, "w", covariates=["g"], eps=1.0, mode=mode, progress=False, **kw).fit(seed=seed)
        return s.sample(seed=seed, allow_research=mode == "research")


def same(a: pd.DataFrame, b: pd.DataFrame) -> bool:
    return a.to_csv(index=False) == b.to_csv(index=False)


# --------------------------------------------------------------------------------------------- the rules


def test_a_seed_makes_research_mode_and_no_seed_release_mode():
    assert resolve_mode(None, 1) == ("research", 1)
    assert resolve_mode(None, None) == ("release", None)
    assert resolve_mode("research", None) == ("research", None)
    with pytest.warns(SeedIgnoredWarning, match="ignored"):
        assert resolve_mode("release", 1) == ("release", None)
    with pytest.raises(DataError, match="`mode` must be None"):
        check_mode("secure")


def test_a_research_fit_is_released_only_when_asked_and_a_release_fit_ignores_the_seed():
    with pytest.raises(ResearchModeError, match="allow_research=True"):
        release_seed("research", 1, allow_research=False)
    assert release_seed("research", 1, allow_research=True) == 1
    with pytest.warns(SeedIgnoredWarning):
        assert release_seed("release", 1, allow_research=False) is None


def test_the_readme_path_with_a_seed_is_research_and_its_release_is_refused_then_recorded(tmp_path):
    d, _ = neighbours()
    d = d[["w"]]
    s = Synthesizer(d, "w", mechanism="ph", eps=1.0, bounds=(0.05, 50), progress=False).fit(seed=1)
    assert s.mode == "research" and "RESEARCH MODE" in s.privacy.statement()
    with pytest.raises(ResearchModeError):
        s.release(tmp_path / "r.csv", seed=1)
    assert not (tmp_path / "r.csv").exists()
    out = s.release(tmp_path / "r.csv", seed=1, allow_research=True)
    assert any(o.startswith("research mode") for o in out.attrs["overrides"])
    s.save(tmp_path / "s.json")
    back = Synthesizer.load(tmp_path / "s.json")
    assert back.mode == "research"
    with pytest.raises(ResearchModeError):
        back.sample()
    private = Synthesizer(d, "w", mechanism="ph", eps=1.0, bounds=(0.05, 50), progress=False).fit()
    assert private.mode == "release" and "release mode" in private.privacy.statement()


def test_a_table_follows_the_same_rule():
    d, _ = neighbours()
    d = d.assign(v=np.arange(len(d)) % 5)
    t = TableSynthesizer(d, ["w", "v"], covariates=["g"], eps=2.0, mechanisms="ph", progress=False,
                         mechanism_params={"w": {"lower": 0.05, "upper": 50}, "v": {"lower": 0, "upper": 4}})
    t.fit(seed=3)
    assert t.mode == "research" and all(p.mode == "research" for p in t.parts.values())
    with pytest.raises(ResearchModeError):
        t.sample()
    assert "RESEARCH MODE" in t.privacy.statement()


# --------------------------------------------------------------------------------------------- the games


@pytest.mark.slow
@pytest.mark.parametrize("mechanism, kw", [("ph", {"bounds": (0.05, 500)}),
                                           ("censor_ref", {"sampler": SAMPLER})])
def test_a_known_seed_tells_neighbours_apart_in_research_mode_only(mechanism, kw):
    d, d2 = neighbours()
    seed = 1
    # control: research mode, where the adversary's re-run on D reproduces the file released from D
    seen_d = released(d, mode="research", seed=seed, mechanism=mechanism, **kw)
    seen_d2 = released(d2, mode="research", seed=seed, mechanism=mechanism, **kw)
    rerun = released(d, mode="research", seed=seed, mechanism=mechanism, **kw)
    assert same(seen_d, rerun) and not same(seen_d2, rerun)  # the game wins every time: a deterministic function
    # release mode: the same seed is ignored, so the re-run on D matches neither the file from D nor from D'
    seen_d = released(d, mode="release", seed=seed, mechanism=mechanism, **kw)
    seen_d2 = released(d2, mode="release", seed=seed, mechanism=mechanism, **kw)
    rerun = released(d, mode="release", seed=seed, mechanism=mechanism, **kw)
    assert not same(seen_d, rerun) and not same(seen_d2, rerun)
