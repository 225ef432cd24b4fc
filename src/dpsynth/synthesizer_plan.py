"""What is fixed before a synthesizer's fit: :class:`SynthesizerPlan`, from its configuration and public facts.

A :class:`dpsynth.Synthesizer` goes in three steps: its configuration
(:class:`~dpsynth.synthesizer_config.SynthesizerConfig`, the user's settings, each checked alone), its
plan (this module: everything decided before the fit), its fitted state
(:class:`~dpsynth.synthesizer_fit.FittedState`). The plan is computed by :meth:`SynthesizerPlan.make` from
the configuration and the :class:`PublicFacts` of the data (the target's encoding, from its type and
declared levels; the public covariate rows; the number of records, read only where it is public, or
for the sampler's length), and holds:

* the mechanism: named, or picked by ``mechanism="auto"`` from public facts (:func:`auto_choice`, the
  book's decision table), with the bounds and the calibration its choice fills in;
* the model (a shipped family's name, the default from the target's type, or a model function),
  the sampler (with the release's default length) and the neighbour relation;
* the covariates' design (their public encoding), the mechanism's parameters resolved in the
  model's unit (its ``run`` gets them), and the budget (:class:`~dpsynth.release.budget.Budget`: the total
  and its shares under the relation).

Every check of the settings together, and against the target's kind, is made here, before the fit; a
refusal names the setting. The plan's round trip (:meth:`~SynthesizerPlan.to_dict`,
:meth:`~SynthesizerPlan.from_dict`) is part of a saved file (:mod:`dpsynth.synthesizer_io`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from . import mechanisms
from .choice import AUTO, Choice, column_choice, is_auto, model_function_choice
from .covariates import CovariateDesign
from .mcmc_settings import SamplerConfig
from .models import FAMILIES, OffsetFamily, PyMCFunctionFamily
from .models.user_function import PLACEHOLDER_SIZE, PLACEHOLDERS, qualname
from .privacy import check_neighbours
from .release.budget import Budget, subsample_rate
from .release.mode import check_mode
from .synthesizer_checks import check_kinds
from .synthesizer_config import (
    RELEASE_SAMPLER,
    SynthesizerConfig,
    check_bounds,
    dump_design,
    dump_model,
    load_design,
    load_model,
    plain_params,
)
from .target import TargetEncoding
from .validation import DataError, _is_number, check_bool, check_eps

if TYPE_CHECKING:  # pragma: no cover
    from .mechanisms.contract import MechanismSpec
    from .models import ModelFamily

__all__ = ["SynthesizerPlan", "PublicFacts", "auto_choice", "model_family", "public_size"]


def auto_choice(kind: str, eps, *, n: int, has_covariates: bool, relation: str, bounds=None,
                model_function: str | None = None) -> Choice:
    """What ``mechanism="auto"`` picks (:func:`dpsynth.choice.column_choice`), from public facts only.

    ``n`` (the number of records) is read only when it is public: with one record replaced
    (``relation="replace"``, the default when covariates are carried); with one record removed the
    table is read as if ``n`` were unknown. ``bounds`` as checked by
    :func:`~dpsynth.synthesizer_config.check_bounds`. With a user's model function (``model_function``, its
    ``module:qualname``), Censor_ref at the model's prior point (:func:`dpsynth.choice.model_function_choice`).
    """
    if eps is None:
        raise DataError("mechanism='auto' needs the total `eps`: auto needs the total eps to read the book's "
                        "decision table at it. Pass eps=..., or name a mechanism.")
    eps = check_eps(eps, "eps")
    public_n = int(n) if relation == "replace" else None
    choice = column_choice(kind, eps, public_n, has_covariates=has_covariates, bounds=bounds)
    return choice if model_function is None else model_function_choice(choice, model_function)


def _same(a, b) -> bool:
    return _is_number(a) and _is_number(b) and float(a) == float(b)


def _given_bounds(bounds: dict | None, given: Mapping | None, kind: str) -> dict | None:
    """With ``auto``, public ``lower``/``upper`` given in ``mechanism_params`` count as ``bounds`` (they must agree)."""
    given = dict(given or {})
    pair = {k: given[k] for k in ("lower", "upper") if given.get(k) is not None}
    if not pair or kind == "categorical":
        return bounds
    if bounds is None:
        return check_bounds(pair, kind) if len(pair) == 2 else None
    for k, v in pair.items():
        if not _same(v, bounds[k]):
            raise DataError(f"`mechanism_params` {k}={v!r} disagrees with `bounds` {k}={bounds[k]:g}; give the public "
                            f"bounds once (bounds=(lower, upper)).")
    return bounds


def _choice_params(choice: Choice, given: Mapping | None, bounds: dict | None) -> dict:
    """``mechanism_params`` for the mechanism ``auto`` chose: the choice's public parameters (bounds) filled in.

    A value given for one of them wins and must agree; ``lower``/``upper`` that served as the bounds are dropped for a
    chosen mechanism that takes none."""
    spec = mechanisms.get(choice.mechanism)
    out = dict(given or {})
    for k, v in choice.params.items():
        if out.get(k) is None:
            out[k] = v
        elif k in ("lower", "upper") and not _same(out[k], v):
            raise DataError(f"`mechanism_params` {k}={out[k]!r} disagrees with the public bounds given ({k}={v!r}); "
                            f"give them once (bounds=(lower, upper)).")
    if bounds is not None:
        for k in ("lower", "upper"):
            if k not in spec.params:
                out.pop(k, None)
    return out


def _bounds_params(spec: MechanismSpec, given: Mapping | None, bounds: dict) -> dict:
    """``bounds`` as the ``lower``/``upper`` of a named mechanism that takes them (else a DataError saying which do)."""
    if "lower" not in spec.params or "upper" not in spec.params:
        takes = [s.key for s in mechanisms.specs() if s.runnable and "lower" in s.params and "upper" in s.params]
        raise DataError(f"`bounds` are the public lower and upper bounds of the mechanisms that take them "
                        f"({', '.join(takes)}); the {spec.key} mechanism takes none. Leave `bounds` out, use "
                        f"calibrate={{'lower': L, 'upper': U}} to calibrate a model's values to the target's DP "
                        f"marginal, or mechanism='auto'.")
    out = dict(given or {})
    for k, v in bounds.items():
        if out.get(k) is None:
            out[k] = v
        elif not _same(out[k], v):
            raise DataError(f"`mechanism_params` {k}={out[k]!r} disagrees with `bounds` {k}={v:g}; give the public "
                            f"bounds once (bounds=(lower, upper)).")
    return out


def _check_chosen_params(spec: MechanismSpec, choice: Choice, given: Mapping | None) -> None:
    """With ``auto``, ``mechanism_params`` must be parameters of the mechanism chosen (said with the choice)."""
    unknown = sorted(set(given or {}) - set(spec.params))
    if unknown:
        raise DataError(f"mechanism='auto' chose {spec.key} ({choice.reason}), which has no "
                        f"parameter(s) {', '.join(map(repr, unknown))}; its parameters are: "
                        f"{', '.join(spec.params) or 'none'}. Name the mechanism these parameters are for "
                        f"(mechanism=...), or leave them out.")


def _check_model_settings(config: SynthesizerConfig, model: str | Callable) -> None:
    """The model's settings together: priors and an offset for a shipped family, a unit and an offset for a density."""
    if config.model_params and not isinstance(model, str):
        raise DataError("`model_params` are for shipped families; put the priors in your model function.")
    continuous = FAMILIES[model].continuous if isinstance(model, str) else True
    for nm in ("unit", "offset"):
        if getattr(config, nm) is not None and not continuous:
            raise DataError(f"`{nm}` applies to continuous data; the {model} model is discrete.")
    if config.offset is not None and not isinstance(model, str):
        raise DataError("`offset` is applied to shipped families; subtract it inside your model function.")


def _check_calibrate(calibrate: Mapping | None, spec: MechanismSpec, kind: str, eps: float | None) -> float | None:
    """Check ``calibrate`` (before any fit); return its explicit eps share, if any."""
    if calibrate is None:
        return None
    known = {"lower", "upper", "bins", "scale", "share"}
    unknown = sorted(set(calibrate) - known)
    if unknown:
        raise DataError(f"`calibrate` has unknown key(s) {unknown}; its keys are {sorted(known)} (e.g. "
                        f"calibrate={{'lower': 1.0, 'upper': 500.0}}).")
    if not (spec.uses_model and spec.takes_eps):
        raise DataError(f"`calibrate` maps a model's synthetic values onto a DP marginal; the {spec.key} "
                        f"mechanism is {'model-free' if not spec.uses_model else 'not run at a target eps'}. "
                        f"Use it with a model-based mechanism such as censor_ref, or leave it out.")
    if kind == "categorical":
        raise DataError("`calibrate` is for a numeric target; a categorical target's levels come from its model "
                        "(or use mechanism='noise_aware' for its DP level shares).")
    if "upper" not in calibrate:
        raise DataError("`calibrate` needs public bounds: {'lower': L, 'upper': U} in the data's unit, chosen "
                        "without looking at the data.")
    share = calibrate.get("share")
    if share is None:
        return None
    if not _is_number(share) or not 0 < float(share) < 1:
        raise DataError(f"`calibrate['share']` must be a number in (0, 1) (its share of eps); got {share!r}.")
    return float(share) * eps


def _covariate_design(design: CovariateDesign | None, standardize: bool | None, covs: list[str], relation: str,
                      public: pd.DataFrame) -> CovariateDesign:
    if design is not None:
        if tuple(design.columns) != tuple(covs):
            raise DataError(f"`design` must be a CovariateDesign of the covariates {covs}; got {design!r}.")
        if standardize is not None:
            raise DataError("give `design` (a fixed encoding of the covariates) or `standardize`, not both.")
        return design
    if standardize is None:
        standardize = relation == "replace"
    elif check_bool(standardize, "standardize") and relation == "remove":
        raise DataError(
            "`standardize=True` with one record removed would centre the covariates at figures of "
            "the data; centre them at public constants yourself, or use neighbours='replace' "
            "(their rows are then public)."
        )
    return CovariateDesign.from_frame(public, covs, standardize=standardize)


def public_size(public_n: int | None) -> int:
    """The number of records a model function is built for: ``n`` when it is public (one record replaced), a
    declared size, else :data:`~dpsynth.models.user_function.PLACEHOLDER_SIZE`: never a confidential ``n``, and not a
    DP count either (a new one at each fit would build the model again)."""
    return max(int(public_n), 1) if public_n is not None else PLACEHOLDER_SIZE


def model_family(model: str | Callable, *, model_params: Mapping | None, offset: float | None, kind: str,
                 n_levels: int | None, n_coef: int, public_n: int | None) -> ModelFamily:
    """The :class:`~dpsynth.models.ModelFamily` a synthesizer fits: a shipped family (its priors, its levels, its
    design's width, wrapped with a public offset) or a model function's adapter (built with placeholders of the
    target's kind and a public size, never the data)."""
    if callable(model):
        return PyMCFunctionFamily(fn=model, n_coef=n_coef, placeholder=PLACEHOLDERS[kind],
                                  build_size=public_size(public_n))
    kw = dict(model_params or {})
    if FAMILIES[model].categorical:
        kw["n_levels"] = n_levels
    fam = FAMILIES[model](**kw)
    if fam.takes_covariates:
        fam = fam.with_design(n_coef)
    return fam if offset is None else OffsetFamily(base=fam, offset=offset)


def takes_covariates(model: str | Callable) -> bool:
    """Whether the model reads the covariates' design (a model function, or a regression family)."""
    return callable(model) or FAMILIES[model].takes_covariates


@dataclass(frozen=True)
class PublicFacts:
    """What a plan reads of the data besides the configuration.

    Attributes
    ----------
    encoding : TargetEncoding
        The target's encoding, from its type and its declared levels (never its values).
    public : pandas.DataFrame
        The covariates' rows (public: declared so by the user).
    n : int
        The number of records: read where it is public (one record replaced), and for the length of the release
        sampler's chains (:func:`~dpsynth.mcmc_settings.release_iterations`).
    """

    encoding: TargetEncoding
    public: pd.DataFrame
    n: int


def _public_n(config: SynthesizerConfig, relation: str, n: int | None) -> int | None:
    """The number of records when it is public: declared (``n_release``), or n with one record replaced."""
    if config.n_release is not None:
        return config.n_release
    return int(n) if relation == "replace" and n is not None else None


@dataclass(frozen=True)
class SynthesizerPlan:
    """What is fixed before the fit (the module docstring).

    Attributes
    ----------
    choice : Choice or None
        What ``mechanism="auto"`` chose (the mechanism, the bounds it was given, the calibration, the reason), or
        None when a mechanism was named.
    mechanism_requested : str
        ``"auto"``, or the registry key named.
    mechanism : str
        The registry key run.
    model : str or callable
        The shipped family's name (the default from the target's type when none was given) or the model function.
    sampler : SamplerConfig
        The MCMC settings (the release sampler by default, with fewer iterations on a large file).
    relation : str
        The neighbour relation of every eps.
    calibrate : dict or None
        The calibration to the target's DP marginal (given, or filled in by ``auto``).
    mechanism_params : dict
        The mechanism's parameters as given (with the bounds ``auto`` or ``bounds`` filled in): the record of the
        settings, which the command line shows.
    params : dict
        The mechanism's parameters resolved in the model's unit: what its ``run`` gets.
    budget : Budget
        The total and its shares under the relation (:mod:`dpsynth.release.budget`).
    design : CovariateDesign
        The covariates' public encoding.
    mode_setting : str or None
        The mode asked for (``mode``, or the mechanism's own ``mode`` parameter); None: the fit decides.
    mode : str
        The run's mode: ``mode_setting`` or ``"release"`` until the fit decides it (:meth:`for_mode`).
    """

    choice: Choice | None
    mechanism_requested: str
    mechanism: str
    model: Any
    sampler: SamplerConfig
    relation: str
    calibrate: dict | None
    mechanism_params: dict
    params: dict
    budget: Budget
    design: CovariateDesign
    mode_setting: str | None = None
    mode: str = "release"

    @property
    def spec(self) -> MechanismSpec:
        """The mechanism's spec (:mod:`dpsynth.mechanisms`)."""
        return mechanisms.get(self.mechanism)

    @classmethod
    def make(cls, config: SynthesizerConfig, facts: PublicFacts) -> SynthesizerPlan:
        """The plan of ``config`` on data with these public facts; a :class:`DataError` names a setting that does not
        suit the others or the target."""
        from .mcmc_settings import release_iterations

        encoding, covs = facts.encoding, list(config.covariates)
        kind = encoding.kind
        bounds = check_bounds(config.bounds, kind)
        relation = check_neighbours(config.relation)
        given, calibrate, choice = config.mechanism_params, config.calibrate, None
        if is_auto(config.mechanism):
            bounds = _given_bounds(bounds, given, kind)
            function = qualname(config.model) if callable(config.model) else None
            choice = auto_choice(kind, config.eps, n=facts.n, has_covariates=bool(covs), relation=relation,
                                 bounds=bounds, model_function=function)
            given = _choice_params(choice, given, bounds)
            if calibrate is None and choice.calibrate is not None:
                calibrate = dict(choice.calibrate)
        model = config.model if config.model is not None else encoding.default_model(bool(covs))
        sampler = config.sampler or SamplerConfig(**{**RELEASE_SAMPLER, "draws": release_iterations(facts.n),
                                                     "tune": release_iterations(facts.n)})
        spec = mechanisms.get(config.mechanism if choice is None else choice.mechanism)
        if not spec.runnable:
            raise DataError(f"the {spec.key} mechanism cannot run through the Synthesizer: {spec.not_runnable}")
        _check_model_settings(config, model)
        # bounds that cut an ordinal model's bins go to the mechanism only if it takes bounds too
        if choice is None and bounds is not None and not (model == "ordinal" and "upper" not in spec.params):
            given = _bounds_params(spec, given, bounds)
        elif choice is not None:
            _check_chosen_params(spec, choice, given)
        check_kinds(spec, model, encoding, config.target, bool(covs))
        if config.n_release is not None and relation == "replace":
            raise DataError(
                "`n_release` declares a public size under one record removed; with one record replaced the "
                "size is n. Give a public frame of covariates at release (data=) for another size."
            )
        if config.releases > config.keep_draws:
            raise DataError(f"`releases` ({config.releases}) exceeds `keep_draws` ({config.keep_draws}): each release "
                            f"needs its own posterior draw; keep at least as many draws.")
        conf = list(config.confidential_covariates)
        if any(c not in covs for c in conf):
            raise DataError(f"`confidential_covariates` {conf} must be among the covariates {covs}.")
        design = _covariate_design(config.design, config.standardize, covs, relation, facts.public)
        base = cls(choice=choice, mechanism_requested=AUTO if choice is not None else spec.key, mechanism=spec.key,
                   model=model, sampler=sampler, relation=relation, calibrate=calibrate, mechanism_params={},
                   params={}, budget=Budget(relation, None), design=design, mode_setting=check_mode(config.mode),
                   mode=config.mode or "release")
        return base._resolved(config, facts, dict(given or {}))

    def _resolved(self, config: SynthesizerConfig, facts: PublicFacts, given: dict) -> SynthesizerPlan:
        """The mechanism's parameters in the model's unit and the budget's plan."""
        spec, encoding, relation = self.spec, facts.encoding, self.relation
        recorded = {k: v for k, v in given.items()
                    if k not in spec.params or (spec.params[k].cli is not None and not spec.params[k].table)}
        converted = {}
        for k, v in given.items():
            p = spec.params.get(k)
            if p is not None and p.table and isinstance(v, pd.DataFrame):
                v = self.model_arrays(config, encoding, v, k)
            elif p is not None and p.in_data_unit and config.unit is not None and _is_number(v):
                v = float(v) / config.unit
            converted[k] = v
        K, public_n = encoding.n_levels, _public_n(config, relation, facts.n)
        fills = {
            "public_size": public_n,
            "levels_lower": None if K is None else -0.5,
            "levels_upper": None if K is None else K - 0.5,
            "levels_bins": K,
            "target_kind": encoding.kind,
            "confidential_covariates": list(config.confidential_covariates) or None,
            "synthesis": "mean" if config.releases == 1 else "draw",
        }
        for k, p in spec.params.items():  # public values for parameters that may take them
            if p.fill is not None and converted.get(k) is None and fills.get(p.fill) is not None:
                converted[k] = fills[p.fill]
        mode_setting = self.mode_setting
        if "mode" in spec.params:
            if given.get("mode") is not None:  # the mechanism's `mode` is the synthesizer's (dpsynth.release.mode)
                wanted = check_mode(given["mode"], "mechanism_params['mode']")
                if mode_setting not in (None, wanted):
                    raise DataError(f"`mechanism_params` mode={wanted!r} disagrees with the synthesizer's "
                                    f"mode={mode_setting!r}; give `mode` once.")
                mode_setting = wanted
            converted["mode"] = mode_setting or "release"  # a mechanism's own noise follows the synthesizer's mode
        dp_ref = bool(spec.releases_reference is not None and spec.uses_model
                      and spec.releases_reference(converted, self.family(config, encoding, public_n)))
        strict = spec.takes_eps and spec.guarantee == "DP" and spec.uses_model
        q = subsample_rate(public_n if relation == "replace" else None, config.subsample) if strict else 1.0
        dp_size = config.part_of is None and relation == "remove" and not config.covariates and config.n_release is None
        eps = config.eps
        budget = Budget.plan(eps if spec.takes_eps else None, relation, dp_size=dp_size, dp_reference=dp_ref,
                             size_eps=config.size_eps, reference_eps=converted.get("reference_eps") if dp_ref else None,
                             sample_rate=q, releases=config.releases, dp_marginal=self.calibrate is not None,
                             marginal_eps=_check_calibrate(self.calibrate, spec, encoding.kind, eps),
                             model_free=not spec.uses_model)
        if spec.takes_eps and eps is None:
            spec.resolve(converted, None)  # raises, naming `eps`
        if not spec.takes_eps and eps is not None:
            spec.resolve(converted, eps)  # raises: the mechanism takes no eps
        if dp_ref:
            converted["reference_eps"] = budget.on_sample(budget.reference)
        params = spec.resolve(converted, budget.mechanism_eps(spec.eps_per_param))
        return dataclasses.replace(self, mechanism_params=recorded, params=params, budget=budget,
                                   mode_setting=mode_setting, mode=mode_setting or "release")

    def family(self, config: SynthesizerConfig, encoding: TargetEncoding, public_n: int | None) -> ModelFamily:
        """The model family fitted (:func:`model_family`) for this plan's model and design."""
        return model_family(self.model, model_params=config.model_params, offset=config.offset, kind=encoding.kind,
                            n_levels=encoding.n_levels, n_coef=self.design.n_columns, public_n=public_n)

    def model_arrays(self, config: SynthesizerConfig, encoding: TargetEncoding, frame: pd.DataFrame,
                     name: str) -> tuple[np.ndarray, np.ndarray | None]:
        """A frame laid out like the confidential data (a mechanism's ``historical`` table), as the model's
        ``(x, covariates)``."""
        target, covs = config.target, list(config.covariates)
        missing = [c for c in [target, *covs] if c not in frame.columns]
        if missing:
            raise DataError(
                f"`{name}` lacks column(s) {missing}; it must be laid out like the confidential data "
                f"(columns {[target, *covs]})."
            )
        x = encoding.to_model(frame[target])
        X = self.design.matrix(frame[covs].reset_index(drop=True))
        return x, X if takes_covariates(self.model) else None

    def for_mode(self, mode: str) -> SynthesizerPlan:
        """This plan in the mode the fit decided (:func:`dpsynth.release.mode.resolve_mode`): a mechanism's own noise
        follows it."""
        params = {**self.params, "mode": mode} if "mode" in self.spec.params else self.params
        return dataclasses.replace(self, mode=mode, params=params)

    def to_dict(self) -> dict:
        """Plain JSON (a saved file's ``"plan"``); a table or a dict parameter served the fit and is not written."""
        from .synthesizer_files import jsonable

        return jsonable({
            "choice": None if self.choice is None else dataclasses.asdict(self.choice),
            "mechanism_requested": self.mechanism_requested, "mechanism": self.mechanism,
            "model": dump_model(self.model), "sampler": dataclasses.asdict(self.sampler), "relation": self.relation,
            "calibrate": self.calibrate, "mechanism_params": plain_params(self.mechanism_params),
            "params": plain_params(self.params), "budget": self.budget.to_dict(), "design": dump_design(self.design),
            "mode_setting": self.mode_setting, "mode": self.mode,
        })

    @classmethod
    def from_dict(cls, d: Mapping) -> SynthesizerPlan:
        """Read :meth:`to_dict`."""
        c = d["choice"]
        choice = None if c is None else Choice(str(c["mechanism"]), dict(c.get("params") or {}), c.get("calibrate"),
                                               str(c.get("reason", "")))
        return cls(choice=choice, mechanism_requested=str(d["mechanism_requested"]), mechanism=str(d["mechanism"]),
                   model=load_model(d["model"]), sampler=SamplerConfig(**d["sampler"]),
                   relation=check_neighbours(d["relation"]), calibrate=d["calibrate"],
                   mechanism_params=dict(d["mechanism_params"]), params=dict(d["params"]), budget=Budget(**d["budget"]),
                   design=load_design(d["design"]), mode_setting=d["mode_setting"], mode=str(d["mode"]))
