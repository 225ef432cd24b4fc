"""Save and load apart from the model (ModelIO-style): configuration, plan and fitted state written and rebuilt; a
setting that would not be written refuses the save; a file whose configuration lacks a field or has an unknown one
refuses to load, in one line naming it."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from dpsynth import Synthesizer
from dpsynth.synthesizer_config import ConfigError, SynthesizerConfig
from dpsynth.synthesizer_files import FORMAT_VERSION, jsonable, read_saved, write_saved
from dpsynth.validation import DataError


@pytest.fixture(scope="module")
def ph():
    """A model-free fit (a perturbed histogram): no MCMC, so these tests are quick."""
    df = pd.DataFrame({"wage": np.random.default_rng(4).lognormal(1.0, 0.4, 200)})
    return Synthesizer(df, "wage", mechanism="ph", eps=1.0, bounds=(0.0, 20.0), progress=False).fit(seed=1)


def test_a_saved_file_holds_the_configuration_the_plan_and_the_state(ph, tmp_path):
    path = ph.save(tmp_path / "ph.json")
    doc = json.loads(path.read_text())
    assert doc["version"] == FORMAT_VERSION
    content = doc["content"]
    assert content["config"] == ph.config.to_dict() and content["plan"] == ph.plan.to_dict()
    same = lambda a, b: json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)  # noqa: E731 - NaN == NaN
    assert content["fit_id"] == ph.fit_id and same(content["privacy"], jsonable(ph.privacy.to_dict()))
    back = Synthesizer.load(path)
    assert back.config == ph.config and back.plan == ph.plan and same(back.state.to_dict(), ph.state.to_dict())
    assert back.budget == ph.budget and back.relation == ph.relation and back.mechanism_requested == "ph"
    assert back.state.release.to_dict() == ph.state.release.to_dict()


def test_load_rebuilds_through_the_classmethod_constructor(ph, tmp_path, monkeypatch):
    """No attribute of a loaded synthesizer is set outside its constructor from the configuration."""
    seen = []
    original = Synthesizer.from_config.__func__

    def spy(cls, config, plan, **kw):
        seen.append(config)
        return original(cls, config, plan, **kw)

    monkeypatch.setattr(Synthesizer, "from_config", classmethod(spy))
    back = Synthesizer.load(ph.save(tmp_path / "ph.json"))
    assert seen == [ph.config] and back.config is seen[0]


def test_save_refuses_a_setting_that_would_not_be_written(ph, tmp_path, monkeypatch):
    """As pymc-marketing's ModelIO refuses to save when an __init__ parameter is not in its attributes."""
    written = SynthesizerConfig.to_dict

    monkeypatch.setattr(SynthesizerConfig, "to_dict", lambda self: {k: v for k, v in written(self).items()
                                                                      if k != "keep_draws"})
    with pytest.raises(ConfigError, match="the setting 'keep_draws' of Synthesizer is not in what would be written"):
        ph.save(tmp_path / "a.json")
    monkeypatch.setattr(SynthesizerConfig, "to_dict", written)

    class Wider(Synthesizer):  # a setting added to __init__ without its configuration field
        def __init__(self, data, target, *, colour="red", **kw):
            super().__init__(data, target, **kw)

    wider = Wider.from_config(ph.config, ph.plan, encoding=ph.encoding, columns=ph.columns, dtypes=ph.dtypes,
                              public=ph.public, state=ph.state, dataset=ph.dataset)
    with pytest.raises(ConfigError, match="the setting 'colour' of Wider"):
        wider.save(tmp_path / "b.json")
    assert not (tmp_path / "a.json").exists() and not (tmp_path / "b.json").exists()


@pytest.mark.parametrize(("edit", "match"), [
    (lambda c: c["config"].pop("unit"), "its configuration lacks the field 'unit' of SynthesizerConfig"),
    (lambda c: c["config"].__setitem__("colour", "red"), "its configuration has the unknown field 'colour'"),
])
def test_load_refuses_a_configuration_it_cannot_read_in_one_line(ph, tmp_path, edit, match):
    """A file written under this home's key (so its MAC holds) by a version whose settings differ."""
    content = read_saved(ph.save(tmp_path / "ph.json"))
    edit(content)
    write_saved(tmp_path / "other.json", content)
    with pytest.raises(DataError, match=f"refusing to load: {match}") as err:
        Synthesizer.load(tmp_path / "other.json")
    assert "\n" not in str(err.value)


def test_a_file_of_the_previous_format_is_refused_naming_the_fix(ph, tmp_path):
    path = ph.save(tmp_path / "ph.json")
    doc = json.loads(path.read_text())
    doc["version"] = FORMAT_VERSION - 1
    (tmp_path / "old.json").write_text(json.dumps(doc))
    with pytest.raises(DataError, match="fit the synthesizer again"):
        Synthesizer.load(tmp_path / "old.json")
