"""The configurations: every setting listed once, with its validator; the dict round trip refuses what it cannot
read."""

from __future__ import annotations

import inspect
from dataclasses import MISSING, fields

import numpy as np
import pandas as pd
import pytest

from dpsynth import Synthesizer, TableSynthesizer
from dpsynth.covariates import CovariateDesign
from dpsynth.mcmc_settings import SamplerConfig
from dpsynth.synthesizer_config import (
    TABLE_VALIDATORS,
    VALIDATORS,
    ConfigError,
    SynthesizerConfig,
    TableSynthesizerConfig,
    settings_of,
)
from dpsynth.validation import DataError


def _init_settings(cls) -> dict:
    """``cls.__init__``'s settings (but its data) and their defaults."""
    params = inspect.signature(cls.__init__).parameters
    return {n: p.default for n, p in params.items() if n not in ("self", "data")}


@pytest.mark.parametrize(("cls", "config", "table"), [(Synthesizer, SynthesizerConfig, VALIDATORS),
                                                      (TableSynthesizer, TableSynthesizerConfig, TABLE_VALIDATORS)])
def test_every_setting_is_a_field_with_the_signatures_default_and_a_validator(cls, config, table):
    """The settings are listed once (the configuration's fields); the public signature keeps them and their defaults."""
    init = _init_settings(cls)
    assert list(init) == list(settings_of(config)) == list(table)
    for f in fields(config):
        assert callable(f.metadata["validate"]) and f.default is not MISSING
        given = init[f.name]
        if given is not inspect.Parameter.empty:  # the required target(s): no default in the signature
            assert config.__dataclass_fields__[f.name].metadata["validate"](given) == \
                f.metadata["validate"](f.default), f.name


@pytest.mark.parametrize(("field", "value", "match"), [
    ("target", ["a", "b"], "whole-table release"),
    ("covariates", "region", "list of column names"),
    ("model", "gamma", "unknown `model`"),
    ("model", 3, "`model` must be a family name or a function"),
    ("mechanism", "censor", "`mechanism` must be one of the registry keys"),
    ("eps", -1.0, "`eps`"),
    ("bounds", (2.0, 1.0), "lower < upper"),
    ("model_params", [1], "`model_params` must be a dict"),
    ("unit", 0.0, "`unit`"),
    ("offset", np.inf, "`offset`"),
    ("sampler", 3, "`sampler` must be a SamplerConfig"),
    ("censor_warn_share", 2.0, "`censor_warn_share`"),
    ("neighbours", "swap", "`neighbours`"),
    ("n_release", 0, "`n_release`"),
    ("size_eps", 0.0, "`size_eps`"),
    ("keep_draws", 1.5, "`keep_draws`"),
    ("releases", 0, "`releases`"),
    ("progress", 1, "`progress`"),
    ("target_levels", "abc", "`target_levels`"),
    ("standardize", "yes", "`standardize`"),
    ("design", "x", "`design` must be a CovariateDesign"),
    ("subsample", -3, "`subsample`"),
    ("mode", "fast", "`mode`"),
    ("part_of", 3, "`part_of`"),
    ("confidential_covariates", "y", "list of column names"),
    ("calibrate", (1, 2), "`calibrate` must be a dict"),
])
def test_each_validator_names_its_setting(field, value, match):
    with pytest.raises(DataError, match=match):
        SynthesizerConfig(**{"target": "wage", field: value})
    with pytest.raises(DataError, match=match):  # the same check through the synthesizer's own signature
        Synthesizer(pd.DataFrame({"wage": [1.0, 2.0, 3.0]}), **{"target": "wage", field: value})


def test_the_configuration_is_normalised_frozen_and_round_trips():
    design = CovariateDesign(columns=("region",), levels={"region": ["a", "b"]})
    c = SynthesizerConfig(target="wage", covariates=["region"], model="lognormal_regression", mechanism="Censor_uw",
                          eps=2, sampler={"draws": 200}, bounds=(0, 10), target_levels=None, design=design,
                          mechanism_params={"c": 1.0, "historical": pd.DataFrame({"wage": [1.0]})})
    assert c.covariates == ("region",) and c.mechanism == "censor_uw" and c.eps == 2.0
    assert c.sampler == SamplerConfig(draws=200, mass_matrix="low_rank") and c.bounds == {"lower": 0.0, "upper": 10.0}
    with pytest.raises(AttributeError):
        c.eps = 3.0  # frozen
    d = c.to_dict()
    assert set(d) == set(settings_of(SynthesizerConfig)) and d["mechanism_params"] == {"c": 1.0}  # a table is not
    back = SynthesizerConfig.from_dict(d)
    assert back.design == design and back.sampler == c.sampler and back.to_dict() == d


def test_reading_a_configuration_refuses_a_missing_or_an_unknown_field():
    d = SynthesizerConfig(target="wage").to_dict()
    with pytest.raises(ConfigError, match="lacks the field 'unit' of SynthesizerConfig"):
        SynthesizerConfig.from_dict({k: v for k, v in d.items() if k != "unit"})
    with pytest.raises(ConfigError, match="unknown field 'colour'"):
        SynthesizerConfig.from_dict({**d, "colour": "red"})


def test_a_tables_per_column_settings_are_keyed_by_target():
    c = TableSynthesizerConfig(targets=["a", "b"], mechanisms={"b": "ph"}, bounds={"b": (0, 1)}, eps=1)
    assert c.mechanisms == {"a": "auto", "b": "ph"} and c.bounds == {"a": None, "b": (0, 1)}
    assert c.models == {"a": None, "b": None} and c.relation == "remove"
    with pytest.raises(DataError, match=r"names column\(s\) \['c'\] that are not targets"):
        TableSynthesizerConfig(targets=["a", "b"], models={"c": "poisson"})
    with pytest.raises(DataError, match="lists a column twice"):
        TableSynthesizerConfig(targets=["a", "a"])
    assert TableSynthesizerConfig.from_dict(c.to_dict()).to_dict() == c.to_dict()
