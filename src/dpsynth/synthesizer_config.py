"""The settings of a synthesizer: one frozen dataclass per synthesizer, each field with its validator.

:class:`SynthesizerConfig` holds every setting a user gives :class:`dpsynth.Synthesizer` (its keyword
arguments), :class:`TableSynthesizerConfig` those of :class:`dpsynth.TableSynthesizer`. They are the
one place the settings are listed: each field is declared once, with its default and its validator
(:func:`setting`), and :data:`VALIDATORS` / :data:`TABLE_VALIDATORS` are the tables read from them
(field name -> validator, as ArviZ's ``rcParams`` holds one validator per key: a lookup, no chain of
``if``). A validator checks one field alone and returns its normal form (a tuple of column names, a
:class:`~dpsynth.mcmc_settings.SamplerConfig`); what depends on the data or on other fields (the target's kind,
the mechanism ``auto`` picks, the budget) is decided by the plan (:mod:`dpsynth.synthesizer_plan`).

:meth:`SynthesizerConfig.to_dict` and :meth:`SynthesizerConfig.from_dict` are the configuration's round
trip through a saved file (:mod:`dpsynth.synthesizer_io`, after pymc-marketing's ``ModelIO``): a model
function is written as its ``module:qualname``, a sampler and a covariate design as their fields; a
mechanism parameter that is a table or a dict (a historical data set, a public ``theta_0``) served the
fit and is not written. :meth:`~SynthesizerConfig.from_dict` refuses a dict that lacks a field or has an
unknown one, naming it.

Examples
--------
>>> from dpsynth.synthesizer_config import SynthesizerConfig
>>> c = SynthesizerConfig(target="wage", covariates=["region"], mechanism="censor_uw", eps=2)
>>> c.covariates, c.eps, c.keep_draws
(('region',), 2.0, 10)
>>> SynthesizerConfig.from_dict(c.to_dict()) == c
True
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from .choice import AUTO, is_auto
from .covariates import CovariateDesign
from .mcmc_settings import RELEASE_MASS_MATRIX, SamplerConfig
from .privacy import check_neighbours
from .release.mode import check_mode
from .validation import (
    DataError,
    _is_number,
    check_bool,
    check_eps,
    check_names,
    check_optional_finite,
    check_positive,
    check_share,
    positive_count,
)

__all__ = ["SynthesizerConfig", "TableSynthesizerConfig", "VALIDATORS", "TABLE_VALIDATORS", "PER_COLUMN",
           "RELEASE_SAMPLER", "setting", "settings_of", "check_bounds", "ConfigError"]

#: The MCMC settings a synthesizer uses unless told otherwise (on top of
#: :class:`~dpsynth.mcmc_settings.SamplerConfig`'s defaults): the low-rank modified mass matrix,
#: which halves the gradient evaluations of a regression with correlated coefficients (measured by
#: ``benchmarks/bench_release.py``) and leaves the posterior unchanged.
RELEASE_SAMPLER: Mapping = {"mass_matrix": RELEASE_MASS_MATRIX}


class ConfigError(DataError):
    """A configuration that lacks a field or has an unknown one (a file written by another version, or a save of a
    synthesizer whose settings are not all in its configuration)."""


def setting(default: Any, validate: Callable[[Any], Any]) -> Any:
    """A configuration field: its default and its validator (``validate(value) -> normal form``, or a DataError
    naming the setting)."""
    return field(default=default, metadata={"validate": validate})


def settings_of(config_class: type) -> tuple[str, ...]:
    """The names of a configuration's fields, in order."""
    return tuple(f.name for f in fields(config_class))


# ----------------------------------------------------------------------------------------------- validators


def _optional(check: Callable[[Any, str], Any], name: str) -> Callable[[Any], Any]:
    return lambda v: None if v is None else check(v, name)


def _target(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        raise DataError(
            f"`target` must be one column name; got {list(value)!r}. To synthesize several "
            f"confidential columns together, keeping their joint relations, use the whole-table "
            f"release (dpsynth.TableSynthesizer)."
        )
    if not isinstance(value, str):
        raise DataError(f"`target` must be column names (strings); got {value!r}.")
    return value


def _columns(name: str) -> Callable[[Any], tuple[str, ...]]:
    def check(value: Any) -> tuple[str, ...]:
        if value is None:
            return ()
        if isinstance(value, str):
            raise DataError(f"`{name}` must be a list of column names; got the string {value!r} "
                            f"(write {name}=[{value!r}]).")
        return check_names(value, name)

    return check


def _model(value: Any) -> str | Callable | None:
    if value is None or callable(value):
        return value
    if isinstance(value, str):
        from .models import family_class

        family_class(value)  # an unknown name raises, listing the shipped ones
        return value
    raise DataError(f"`model` must be a family name or a function; got {value!r}.")


def _mechanism(value: Any) -> str:
    from . import mechanisms

    if is_auto(value):
        return AUTO
    spec = mechanisms.lookup_name(value) if isinstance(value, str) else None
    if spec is None:
        raise DataError(f"`mechanism` must be one of the registry keys {mechanisms.runnable_keys()}; got {value!r}.")
    if not spec.runnable:
        raise DataError(f"the {value} mechanism cannot run through the Synthesizer: {spec.not_runnable}")
    return spec.key


def _mapping(name: str, example: str) -> Callable[[Any], dict | None]:
    def check(value: Any) -> dict | None:
        if value is None:
            return None
        if not isinstance(value, Mapping):
            raise DataError(f"`{name}` must be a dict (e.g. {name}={example}); got {value!r}.")
        return dict(value)

    return check


def check_bounds(bounds: Any, kind: str | None = None) -> dict | None:
    """Public bounds of a numeric target, ``(lower, upper)`` or ``{"lower": L, "upper": U}``, as
    ``{"lower": L, "upper": U}`` (None: none given); a :class:`DataError` naming ``bounds`` otherwise (and for a
    categorical target's, when its ``kind`` is given)."""
    if bounds is None:
        return None
    if kind == "categorical":
        raise DataError("`bounds` are public bounds of a numeric target; this target is categorical (its public "
                        "levels are its range: target_levels). Leave `bounds` out.")
    if isinstance(bounds, Mapping):
        extra = sorted(set(bounds) - {"lower", "upper"})
        if extra or "lower" not in bounds or "upper" not in bounds:
            raise DataError(f"`bounds` must be (lower, upper) or {{'lower': L, 'upper': U}} (public bounds in the "
                            f"data's unit, chosen without looking at the data); got {dict(bounds)!r}.")
        pair = (bounds["lower"], bounds["upper"])
    elif isinstance(bounds, (str, bytes)) or not isinstance(bounds, (Sequence, np.ndarray)) or len(bounds) != 2:
        raise DataError(f"`bounds` must be two numbers (lower, upper): public bounds in the data's unit, chosen "
                        f"without looking at the data; got {bounds!r}.")
    else:
        pair = tuple(bounds)
    if not all(_is_number(v) and np.isfinite(float(v)) for v in pair):
        raise DataError(f"`bounds` must be two finite numbers (lower, upper); got {bounds!r}.")
    lo, hi = float(pair[0]), float(pair[1])
    if not lo < hi:
        raise DataError(f"`bounds` need lower < upper; got lower={lo:g}, upper={hi:g}.")
    return {"lower": lo, "upper": hi}


def _sampler(value: Any) -> SamplerConfig | None:
    if isinstance(value, Mapping):
        return SamplerConfig(**{**RELEASE_SAMPLER, **value})
    if value is not None and not isinstance(value, SamplerConfig):
        raise DataError(f"`sampler` must be a SamplerConfig or a dict of its fields; got {value!r}.")
    return value


def _levels(value: Any) -> tuple | None:
    if value is None:
        return None
    if isinstance(value, (str, bytes)) or not isinstance(value, (Sequence, np.ndarray)):
        raise DataError(f"`target_levels` must be a list of the target's public levels; got {value!r}.")
    return tuple(value)


def _design(value: Any) -> CovariateDesign | None:
    if value is not None and not isinstance(value, CovariateDesign):
        raise DataError(f"`design` must be a CovariateDesign (a fixed encoding of the covariates); got {value!r}.")
    return value


def _subsample(value: Any) -> int | bool | None:
    if value is not None and not isinstance(value, bool) and not (
            isinstance(value, (int, np.integer)) and value >= 1):
        raise DataError(f"`subsample` must be None (the rule), True, False or a number of records; got {value!r}.")
    return int(value) if isinstance(value, np.integer) else value


def _part_of(value: Any) -> str | None:
    if value is not None and not isinstance(value, str):
        raise DataError(f"`part_of` must be the data set id of a whole table (a string); got {value!r}.")
    return value


# ----------------------------------------------------------------------------------------------- file forms


def _plain(v: Any) -> bool:
    return v is None or isinstance(v, (bool, int, float, str, np.number))


def dump_model(model: str | Callable | None) -> dict | None:
    """A model as a saved file holds it: a shipped family's name, or a model function's ``module:qualname`` (which
    must import: a lambda or a local function is refused here, not when the file is read)."""
    if model is None:
        return None
    if callable(model):
        from .models.user_function import import_function, qualname

        name = qualname(model)
        import_function(name)
        return {"kind": "function", "function": name}
    return {"kind": "family", "family": model}


def load_model(saved: Mapping | None) -> str | Callable | None:
    """Read :func:`dump_model`."""
    if saved is None:
        return None
    if saved["kind"] == "function":
        from .models.user_function import import_function

        return import_function(saved["function"])
    return str(saved["family"])


def dump_design(design: CovariateDesign | None) -> dict | None:
    """A covariate design's fields."""
    if design is None:
        return None
    return {"columns": list(design.columns), "levels": design.levels,
            "scaling": {c: list(v) for c, v in design.scaling.items()}, "transforms": dict(design.transforms)}


def load_design(saved: Mapping | None) -> CovariateDesign | None:
    """Read :func:`dump_design`."""
    if saved is None:
        return None
    return CovariateDesign(columns=tuple(saved["columns"]), levels={c: list(v) for c, v in saved["levels"].items()},
                           scaling={c: tuple(v) for c, v in saved["scaling"].items()},
                           transforms=dict(saved.get("transforms") or {}))


def plain_params(params: Mapping | None) -> dict | None:
    """The plain values of a mechanism's parameters (a table or a dict served the fit and is not written)."""
    return None if params is None else {k: v for k, v in params.items() if _plain(v)}


def _dump_sampler(s: SamplerConfig | None) -> dict | None:
    return None if s is None else dataclasses.asdict(s)


#: Fields written in another form than their value (field -> (dump, load)); the others are plain JSON.
_COLUMN_FORMS: dict[str, tuple[Callable, Callable]] = {
    "model": (dump_model, load_model),
    "sampler": (_dump_sampler, lambda d: d),
    "design": (dump_design, load_design),
    "mechanism_params": (plain_params, lambda d: d),
}


def _check_keys(cls: type, saved: Mapping) -> None:
    names = settings_of(cls)
    missing = [n for n in names if n not in saved]
    if missing:
        raise ConfigError(f"its configuration lacks the field {missing[0]!r} of {cls.__name__}")
    unknown = [k for k in saved if k not in names]
    if unknown:
        raise ConfigError(f"its configuration has the unknown field {unknown[0]!r} (not a field of {cls.__name__})")


class _Config:
    """What both configurations share: validation at construction, the dict round trip."""

    _FORMS: Mapping[str, tuple[Callable, Callable]] = {}

    def __post_init__(self) -> None:
        for f in fields(self):  # the table of validators: a lookup per field
            object.__setattr__(self, f.name, f.metadata["validate"](getattr(self, f.name)))

    def to_dict(self) -> dict:
        """Every field as plain JSON (a saved file's ``"config"``)."""
        from .synthesizer_files import jsonable

        return {f.name: jsonable(self._FORMS[f.name][0](getattr(self, f.name)) if f.name in self._FORMS
                                 else getattr(self, f.name)) for f in fields(self)}

    @classmethod
    def from_arguments(cls, arguments: Mapping):
        """The configuration of a synthesizer's keyword arguments (its ``__init__``'s ``locals()``): each field from
        the argument of its name (``tests/test_synthesizer_config.py`` checks the signature lists every field)."""
        return cls(**{name: arguments[name] for name in settings_of(cls)})

    @classmethod
    def from_dict(cls, saved: Mapping):
        """Read :meth:`to_dict`; a :class:`ConfigError` names a missing or an unknown field."""
        _check_keys(cls, saved)
        return cls(**{k: cls._FORMS[k][1](v) if k in cls._FORMS else v for k, v in saved.items()})


@dataclass(frozen=True)
class SynthesizerConfig(_Config):
    """Every setting of a :class:`dpsynth.Synthesizer`, checked one by one (its parameters' documentation says what
    each means).

    A field's validator checks it alone and returns its normal form (column names as a tuple, a sampler dict as a
    :class:`~dpsynth.mcmc_settings.SamplerConfig`, ``mechanism`` as a registry key or ``"auto"``); the plan
    (:class:`dpsynth.synthesizer_plan.SynthesizerPlan`) checks the fields together and against the data.
    """

    target: str = setting(None, _target)
    covariates: tuple[str, ...] = setting((), _columns("covariates"))
    model: str | Callable | None = setting(None, _model)
    mechanism: str = setting(AUTO, _mechanism)
    eps: float | None = setting(None, _optional(check_eps, "eps"))
    bounds: dict | None = setting(None, check_bounds)
    model_params: dict | None = setting(None, _mapping("model_params", "{'mu_prior_sd': 5.0}"))
    mechanism_params: dict | None = setting(None, _mapping("mechanism_params", "{'lower': 0, 'upper': 1e5}"))
    unit: float | None = setting(None, _optional(check_positive, "unit"))
    offset: float | None = setting(None, lambda v: check_optional_finite(v, "offset"))
    sampler: SamplerConfig | None = setting(None, _sampler)
    censor_warn_share: float = setting(0.5, lambda v: check_share(v, "censor_warn_share"))
    neighbours: str | None = setting(None, _optional(lambda v, _: check_neighbours(v), "neighbours"))
    n_release: int | None = setting(None, _optional(positive_count, "n_release"))
    size_eps: float | None = setting(None, _optional(check_eps, "size_eps"))
    keep_draws: int = setting(10, lambda v: positive_count(v, "keep_draws"))
    releases: int = setting(1, lambda v: positive_count(v, "releases"))
    progress: bool = setting(True, lambda v: check_bool(v, "progress"))
    target_levels: tuple | None = setting(None, _levels)
    standardize: bool | None = setting(None, _optional(check_bool, "standardize"))
    design: CovariateDesign | None = setting(None, _design)
    subsample: int | bool | None = setting(None, _subsample)
    mode: str | None = setting(None, check_mode)
    part_of: str | None = setting(None, _part_of)
    confidential_covariates: tuple[str, ...] = setting((), _columns("confidential_covariates"))
    calibrate: dict | None = setting(None, _mapping("calibrate", "{'lower': 1.0, 'upper': 500.0}"))

    _FORMS = _COLUMN_FORMS

    @property
    def relation(self) -> str:
        """The neighbour relation: ``neighbours``, or ``"replace"`` with covariates (their rows are public) and
        ``"remove"`` without."""
        return self.neighbours if self.neighbours is not None else ("replace" if self.covariates else "remove")


# ----------------------------------------------------------------------------------------------- the table's


def _targets(value: Any) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, Sequence) or not value:
        raise DataError(
            f"`targets` must be a list of column names (at least one); got {value!r}. For one "
            f"column, dpsynth.Synthesizer does the same with fewer settings."
        )
    targets = tuple(str(t) for t in value)
    if len(set(targets)) != len(targets):
        raise DataError(f"`targets` lists a column twice: {list(targets)}.")
    return targets


def _eps_split(value: Any) -> dict | list | None:
    if value is None or isinstance(value, Mapping):
        return None if value is None else dict(value)
    return list(value)


def _any(value: Any) -> Any:
    return value


def _per_column_dict(name: str) -> Callable[[Any], Any]:
    def check(value: Any) -> Any:
        if value is not None and not isinstance(value, Mapping):
            raise DataError(f"`{name}` must be a dict keyed by target column, e.g. {{'price': (1000, 500000)}} "
                            f"(public bounds, chosen without looking at the data).")
        return value

    return check


def _levels_by_column(value: Any) -> Any:
    if not (isinstance(value, Mapping) or value is None):
        raise DataError("`target_levels` must be a dict keyed by target column (the public levels of each categorical "
                        "one).")
    return value


def per_column(value: Any, targets: Sequence[str], name: str, default: Any = None) -> dict:
    """A per-column setting: one value for every column, or a dict keyed by column (naming no other column)."""
    if isinstance(value, Mapping):
        unknown = [k for k in value if k not in targets]
        if unknown:
            raise DataError(f"`{name}` names column(s) {unknown} that are not targets {list(targets)}.")
        return {t: value.get(t, default) for t in targets}
    return {t: default if value is None else value for t in targets}


#: The table's settings given per column (one value, or a dict keyed by column), with the default of a column left
#: out: expanded into a dict keyed by target when the configuration is built.
PER_COLUMN: dict[str, Any] = {"models": None, "mechanisms": AUTO, "model_params": None, "mechanism_params": None,
                              "target_levels": None, "calibrate": None, "bounds": None}


def _dump_columns(value: Mapping | None, dump: Callable) -> dict | None:
    return None if value is None else {t: dump(v) for t, v in value.items()}


@dataclass(frozen=True)
class TableSynthesizerConfig(_Config):
    """Every setting of a :class:`dpsynth.TableSynthesizer`; the per-column ones (:data:`PER_COLUMN`) as a dict keyed
    by target.

    Examples
    --------
    >>> c = TableSynthesizerConfig(targets=["a", "b"], mechanisms={"b": "ph"})
    >>> c.mechanisms
    {'a': 'auto', 'b': 'ph'}
    """

    targets: tuple[str, ...] = setting(None, _targets)
    covariates: tuple[str, ...] = setting((), _columns("covariates"))
    eps: float | None = setting(None, _optional(check_eps, "eps"))
    eps_split: dict | list | None = setting(None, _eps_split)
    models: Any = setting(None, _any)
    mechanisms: Any = setting(None, _any)
    model_params: Any = setting(None, _any)
    mechanism_params: Any = setting(None, _any)
    target_levels: Any = setting(None, _levels_by_column)
    neighbours: str | None = setting(None, _optional(lambda v, _: check_neighbours(v), "neighbours"))
    n_release: int | None = setting(None, _optional(positive_count, "n_release"))
    size_eps: float | None = setting(None, _optional(check_eps, "size_eps"))
    sampler: SamplerConfig | None = setting(None, _sampler)
    keep_draws: int = setting(10, lambda v: positive_count(v, "keep_draws"))
    releases: int = setting(1, lambda v: positive_count(v, "releases"))
    progress: bool = setting(True, lambda v: check_bool(v, "progress"))
    standardize: bool | None = setting(None, _optional(check_bool, "standardize"))
    censor_warn_share: float = setting(0.5, lambda v: check_share(v, "censor_warn_share"))
    mode: str | None = setting(None, check_mode)
    calibrate: Any = setting(None, _per_column_dict("calibrate"))
    bounds: Any = setting(None, _per_column_dict("bounds"))

    _FORMS = {
        "models": (lambda v: _dump_columns(v, dump_model), lambda d: _dump_columns(d, load_model)),
        "mechanism_params": (lambda v: _dump_columns(v, plain_params), lambda d: d),
        "sampler": (_dump_sampler, lambda d: d),
    }

    def __post_init__(self) -> None:
        super().__post_init__()
        for name, default in PER_COLUMN.items():  # one value or a dict, as a dict keyed by target
            object.__setattr__(self, name, per_column(getattr(self, name), self.targets, name, default))

    @property
    def relation(self) -> str:
        """The neighbour relation: ``neighbours``, or ``"replace"`` with covariates and ``"remove"`` without."""
        return self.neighbours if self.neighbours is not None else ("replace" if self.covariates else "remove")


#: Field -> validator of :class:`SynthesizerConfig` (read from its fields: the settings are listed once).
VALIDATORS: dict[str, Callable[[Any], Any]] = {f.name: f.metadata["validate"] for f in fields(SynthesizerConfig)}
#: Field -> validator of :class:`TableSynthesizerConfig`.
TABLE_VALIDATORS: dict[str, Callable[[Any], Any]] = {f.name: f.metadata["validate"]
                                                      for f in fields(TableSynthesizerConfig)}
