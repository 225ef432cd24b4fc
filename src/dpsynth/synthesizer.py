"""One object from a DataFrame to a released synthetic data set: :class:`Synthesizer`.

``Synthesizer(df, target="wage", covariates=["region"], model="lognormal", mechanism="censor_uw",
eps=1.0).fit(seed=1).sample(seed=2)`` fits one confidential column with a shipped model family or
a plain PyMC model-building function, runs a registered mechanism on it, reports its privacy
(:class:`SynthesizerPrivacy`) and returns synthetic DataFrames generated from ONE posterior draw
each. :meth:`Synthesizer.save` writes a self-describing JSON file (no pickle) with a SHA-256 of its
contents, without the confidential data; :meth:`Synthesizer.load` verifies the checksum;
:meth:`Synthesizer.release` writes a sample atomically and records it in a
:class:`dpsynth.ledger.Ledger`.

A user model is a function ``fn(x, X)`` called inside a ``pm.Model`` context, with ``x`` the
confidential column and ``X`` the design matrix (intercept first, then the encoded covariates) as
``pm.Data``. It defines its priors, writes the per-record log-likelihood through
:func:`dpsynth.weighted_loglik` and returns the observation distribution (an unregistered
``pm.<Dist>.dist(...)`` of one entry per record, e.g. ``pm.LogNormal.dist(mu, sigma,
shape=x.shape)``). The synthetic records are drawn from that distribution at one posterior draw:
no simulator is written by hand.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import json
import math
import os
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from . import mechanisms, registry
from .fitting import CompiledModel, Fit, SamplerConfig, compiled_model
from .models import (
    BetaFamily,
    BetaRegression,
    LognormalFamily,
    LognormalRegression,
    ModelFamily,
    NegBinomialRegression,
    PoissonRegression,
)
from .paths import atomic_write
from .seeds import SeedLike, generator, stream
from .validation import DataError, check_eps, check_positive
from .weights import lipschitz_weights

__all__ = [
    "Synthesizer",
    "SynthesizerPrivacy",
    "PyMCFunctionFamily",
    "CensoringWarning",
    "UnconvergedError",
    "ChecksumError",
    "FAMILIES",
    "MECHANISMS",
]

#: Shipped families by name.
FAMILIES: dict[str, type[ModelFamily]] = {
    "lognormal": LognormalFamily,
    "lognormal_regression": LognormalRegression,
    "beta": BetaFamily,
    "poisson": PoissonRegression,
    "negbin": NegBinomialRegression,
    "beta_regression": BetaRegression,
}
_REGRESSION = {"poisson", "negbin", "beta_regression", "lognormal_regression"}
_CONTINUOUS = {"lognormal", "lognormal_regression", "beta", "beta_regression"}

#: Registry keys the Synthesizer runs.
MECHANISMS = ("unweighted", "weighted", "lw", "cw", "sw", "lw_final", "cw_final", "weighted_e", "censor_uw",
              "censor_w", "ph")
FORMAT = "dpsynth.synthesizer"
FORMAT_VERSION = 1


class CensoringWarning(UserWarning):
    """A censored fit censored more than the stated share of records: the mechanism mostly discarded the data."""


class UnconvergedError(RuntimeError):
    """A privacy figure was asked of a fit that failed its convergence checks."""


class ChecksumError(DataError):
    """A saved synthesizer's contents do not match its stored SHA-256 (edited or corrupted)."""


@dataclass(frozen=True)
class PyMCFunctionFamily(ModelFamily):
    """Adapter: a plain PyMC model-building function as a :class:`ModelFamily`.

    Parameters
    ----------
    fn : callable
        ``fn(x, X) -> distribution``; see the module docstring.
    n_coef : int
        Columns of the design matrix ``X`` (intercept included).
    """

    fn: Callable = None
    n_coef: int = 1
    name: str = "pymc_function"

    def data_values(self, x: np.ndarray, covariates: np.ndarray | None) -> dict[str, np.ndarray]:
        X = np.ones((x.shape[0], 1)) if covariates is None else covariates
        return {"x": x, "X": X}

    def record_logp(self, data):  # pragma: no cover - build() is overridden
        raise NotImplementedError

    def build(self, x: np.ndarray, covariates: np.ndarray | None = None):
        import pymc as pm

        from .likelihood import _ATTR, likelihood_term

        values = self.data_values(x, covariates)
        with pm.Model() as model:
            xd, Xd = pm.Data("x", values["x"]), pm.Data("X", values["X"])
            dist = self.fn(xd, Xd)
            term = getattr(model, _ATTR, None)
            if term is None:
                raise DataError(
                    f"the model function {_qualname(self.fn)} did not call `dpsynth.weighted_loglik`; write its "
                    f"per-record log-likelihood through it, e.g. `dpsynth.weighted_loglik(pm.logp(dist, x))`."
                )
        if dist is None or not hasattr(dist, "owner") or dist.owner is None:
            raise DataError(
                f"the model function {_qualname(self.fn)} must return the observation distribution "
                f"(e.g. `pm.LogNormal.dist(mu, sigma, shape=x.shape)`), from which synthetic records are drawn; "
                f"got {dist!r}."
            )
        model._dpsynth_dist = dist  # noqa: SLF001
        likelihood_term(model)
        return model

    def simulate(self, draws, rng, covariates=None):  # pragma: no cover - the Synthesizer uses _ModelSimulator
        raise NotImplementedError("use the Synthesizer, which draws from the model's own distribution")


@dataclass(frozen=True)
class _Offset(ModelFamily):
    """A shipped family with a public constant subtracted from each record log-likelihood."""

    base: ModelFamily = None
    offset: float = 0.0

    @property
    def name(self) -> str:  # type: ignore[override]
        return f"{self.base.name}-offset"

    @property
    def needs_covariates(self) -> bool:  # type: ignore[override]
        return self.base.needs_covariates

    def check_data(self, x, covariates=None):
        return self.base.check_data(x, covariates)

    def data_values(self, x, covariates):
        return self.base.data_values(x, covariates)

    def record_logp(self, data):
        return self.base.record_logp(data) - self.offset

    def simulate(self, draws, rng, covariates=None):
        return self.base.simulate(draws, rng, covariates)


class _ModelSimulator:
    """Draws from a model's observation distribution at given parameter values, compiled once."""

    def __init__(self, cm: CompiledModel) -> None:
        import pytensor
        import pytensor.tensor as pt
        from pymc.pytensorf import compile as pm_compile
        from pytensor.graph.replace import graph_replace

        model = cm.model
        dist = model._dpsynth_dist  # noqa: SLF001
        rvs = model.free_RVs
        self.names = [rv.name for rv in rvs]
        ins = [pt.tensor(name=rv.name, shape=rv.type.shape, dtype=rv.dtype) for rv in rvs]
        out = graph_replace(dist, dict(zip(rvs, ins)), strict=False)
        self.fn = pm_compile(ins, out, random_seed=0)
        rng_type = pytensor.tensor.random.type.RandomGeneratorType
        self.rngs = [v for v in self.fn.get_shared() if isinstance(v.type, rng_type)]
        self.cm = cm

    def __call__(self, draw: Mapping[str, np.ndarray], n: int, X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        import pymc as pm
        from pymc.pytensorf import reseed_rngs

        pm.set_data({"x": np.ones(n), "X": X}, model=self.cm.model)
        reseed_rngs(self.rngs, int(rng.integers(2**63)))
        out = np.asarray(self.fn(*[np.asarray(draw[k]) for k in self.names]), dtype=float)
        if out.shape != (n,):
            raise DataError(f"the model's distribution gave shape {out.shape}, expected ({n},): give it one entry "
                            f"per record (e.g. shape=x.shape).")
        return out


@dataclass(frozen=True)
class SynthesizerPrivacy:
    """What a fitted :class:`Synthesizer` reports.

    Attributes
    ----------
    mechanism, name : str
        Registry key and display name.
    guarantee : str
        ``"none"``, ``"aDP"`` or ``"DP"``, from the registry.
    delta : float
        Local Lipschitz bound (NaN for PH).
    eps_remove, eps_replace : float
        Epsilon of one released draw with one record removed / replaced.
    bound : float
        Censoring bound M (inf when not censored).
    n_censored, n : int
        Records censored at one or more draws, and records fitted.
    rhat_max, ess_min : float
        Worst R-hat and bulk ESS over every fit the mechanism ran (NaN for PH).
    divergences : int
        Divergent transitions over every fit.
    converged : bool
        Whether every fit passed its checks.
    extra : dict
        Mechanism-specific numbers.
    """

    mechanism: str
    name: str
    guarantee: str
    delta: float
    eps_remove: float
    eps_replace: float
    bound: float
    n_censored: int
    n: int
    rhat_max: float
    ess_min: float
    divergences: int
    converged: bool
    extra: dict = field(default_factory=dict)

    @property
    def censored_share(self) -> float:
        """Share of the records censored."""
        return self.n_censored / self.n

    def statement(self) -> str:
        """One sentence: guarantee, eps under both neighbour relations, Delta and censoring."""
        kind = {"none": "not private", "aDP": "asymptotic DP (local bound only)", "DP": "strict DP"}[self.guarantee]
        what = "the noisy histogram" if self.mechanism == "ph" else "one released posterior draw"
        s = (f"{self.name} ({kind}): eps = {self.eps_remove:.4g} with one record removed, {self.eps_replace:.4g} "
             f"with one record replaced, for {what}")
        if np.isfinite(self.delta):
            s += f"; Delta = {self.delta:.4g}"
        if np.isfinite(self.bound):
            s += f", censoring bound M = {self.bound:.4g}, {self.n_censored} of {self.n} records censored"
        return s + ("" if self.converged else "; THE FIT FAILED ITS CONVERGENCE CHECKS") + "."

    def to_dict(self) -> dict:
        """Plain-JSON dict (floats, ints, str, bool)."""
        return dataclasses.asdict(self)


def _qualname(fn) -> str:
    return f"{getattr(fn, '__module__', '?')}:{getattr(fn, '__qualname__', repr(fn))}"


def _import_function(spec: str) -> Callable:
    mod, _, qual = spec.partition(":")
    if not mod or not qual or "<" in qual:
        raise DataError(f"cannot import the model function {spec!r}: it must be a module-level function "
                        f"(module:qualname), not a lambda or a nested function.")
    obj = importlib.import_module(mod)
    for part in qual.split("."):
        obj = getattr(obj, part)
    return obj


def _is_categorical(s: pd.Series) -> bool:
    return not pd.api.types.is_numeric_dtype(s) or pd.api.types.is_bool_dtype(s)


def _canonical(obj) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=True).encode()


def _jsonable(v):
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, np.ndarray):
        return _jsonable(v.tolist())
    if isinstance(v, (np.bool_, bool)):
        return bool(v)
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (np.floating, float)):
        return float(v)
    return v


class Synthesizer:
    """Differentially private synthesis of one confidential column of a DataFrame.

    Parameters
    ----------
    data : pandas.DataFrame
        The confidential column and the public covariates (and no other column).
    target : str
        The confidential column.
    covariates : sequence of str, optional
        Public columns, carried through to the synthetic data; numeric ones enter a regression
        family's design as they are, categorical ones (strings, categories, booleans) as indicator
        columns of every level but the first (levels recorded at fit time).
    model : str or callable
        A shipped family (:data:`FAMILIES`) or a PyMC model-building function (module docstring).
    mechanism : str
        A registry key in :data:`MECHANISMS`.
    eps : float, optional
        Target epsilon, required exactly when the mechanism takes one (``registry.spec(key).takes_eps``).
    model_params : dict, optional
        Keyword arguments of the shipped family (priors), e.g. ``{"mu_prior_sd": 5.0}``.
    mechanism_params : dict, optional
        ``cw``/``cw_final``: ``radius`` (required) and ``kind``; ``ph``: ``lower`` and ``upper``
        (required public bounds, in the data's unit), ``bins`` and ``mode``: ``"release"`` (the
        default: Laplace noise from OpenDP's sampler, safe against floating-point attacks, not
        seeded) or ``"research"`` (seeded numpy noise, reproducible; not for a real release).
    unit : float, optional
        Public unit of a continuous target: the model sees ``x / unit``, the synthetic data are
        multiplied back. Choose it without looking at the data.
    offset : float, optional
        Public constant subtracted from each record's log-likelihood before the clamp (shipped
        families only). Choose it without looking at the data.
    sampler : SamplerConfig or dict, optional
        MCMC settings.
    censor_warn_share : float
        A :class:`CensoringWarning` is raised when a censored fit censors more than this share.
    allow_unconverged : bool
        Report privacy figures of a fit that failed its convergence checks (else they raise).
    """

    def __init__(
        self,
        data: pd.DataFrame,
        target: str,
        *,
        covariates: Sequence[str] | None = None,
        model: str | Callable = "lognormal",
        mechanism: str = "censor_uw",
        eps: float | None = None,
        model_params: Mapping | None = None,
        mechanism_params: Mapping | None = None,
        unit: float | None = None,
        offset: float | None = None,
        sampler: SamplerConfig | Mapping | None = None,
        censor_warn_share: float = 0.5,
        allow_unconverged: bool = False,
    ) -> None:
        if not isinstance(data, pd.DataFrame):
            raise DataError(f"`data` must be a pandas DataFrame; got {type(data).__name__}.")
        covs = [] if covariates is None else list(covariates)
        if isinstance(covariates, str):
            raise DataError(f"`covariates` must be a list of column names; got the string {covariates!r} "
                            f"(write covariates=[{covariates!r}]).")
        for c in [target, *covs]:
            if c not in data.columns:
                raise DataError(f"column {c!r} is not in `data`; its columns are {list(data.columns)}.")
        if target in covs:
            raise DataError(f"`target` {target!r} is also listed in `covariates`; a column is one or the other.")
        extra = [c for c in data.columns if c != target and c not in covs]
        if extra:
            raise DataError(f"`data` has columns that are neither `target` nor `covariates`: {extra}; select the "
                            f"columns to synthesise first (data[[target, *covariates]]) or list them as covariates.")
        self._settings(target, covs, model, mechanism, eps, model_params, mechanism_params, unit, offset, sampler,
                       censor_warn_share, allow_unconverged)
        self.columns = list(data.columns)
        self.dtypes = {c: str(data[c].dtype) for c in self.columns}
        self.levels = {c: self._levels(data[c]) for c in covs if _is_categorical(data[c])}
        self.public = data[covs].reset_index(drop=True).copy()
        self._x = self._target_values(data[target])
        self._X = self.design(self.public)
        self.draws: dict | None = None
        self._privacy: SynthesizerPrivacy | None = None
        self._weights: np.ndarray | None = None
        self._ph: dict | None = None
        self._cm: CompiledModel | None = None
        self._simulator = None

    # ------------------------------------------------------------------ settings and data
    def _settings(self, target, covs, model, mechanism, eps, model_params, mechanism_params, unit, offset, sampler,
                  censor_warn_share, allow_unconverged) -> None:
        if not isinstance(target, str):
            raise DataError(f"`target` must be a column name (a string); got {target!r}.")
        self.target, self.covariates = target, covs
        if isinstance(model, str):
            if model not in FAMILIES:
                raise DataError(f"unknown `model` {model!r}; shipped families: {list(FAMILIES)}, or pass a PyMC "
                                f"model-building function.")
        elif not callable(model):
            raise DataError(f"`model` must be a family name or a function; got {model!r}.")
        self.model = model
        if not isinstance(mechanism, str) or mechanism not in MECHANISMS:
            raise DataError(f"`mechanism` must be one of {list(MECHANISMS)} (registry keys); got {mechanism!r}.")
        self.mechanism = mechanism
        takes = registry.spec(mechanism).takes_eps
        if takes and eps is None:
            raise DataError(f"the {mechanism} mechanism is run at a target `eps`; pass eps=... (e.g. eps=1.0).")
        if not takes and eps is not None:
            raise DataError(f"the {mechanism} mechanism does not take `eps` (its epsilon is reported after the fit); "
                            f"remove eps={eps!r} or choose a censored mechanism (censor_uw, censor_w, weighted_e, ph).")
        self.eps = None if eps is None else check_eps(eps)
        self.model_params = dict(model_params or {})
        if self.model_params and not isinstance(model, str):
            raise DataError("`model_params` are for shipped families; put the priors in your model function.")
        self.mechanism_params = dict(mechanism_params or {})
        if mechanism in ("cw", "cw_final") and "radius" not in self.mechanism_params:
            raise DataError(f"the {mechanism} mechanism needs mechanism_params={{'radius': r}} "
                            f"(and optionally 'kind').")
        if mechanism == "ph" and not {"lower", "upper"} <= set(self.mechanism_params):
            raise DataError("the ph mechanism needs public bounds: mechanism_params={'lower': a, 'upper': b}.")
        continuous = (model in _CONTINUOUS) if isinstance(model, str) else True
        for nm, v in (("unit", unit), ("offset", offset)):
            if v is not None and not continuous:
                raise DataError(f"`{nm}` applies to continuous data; the {model} model is discrete.")
        self.unit = None if unit is None else check_positive(unit, "unit")
        if offset is not None:
            if isinstance(offset, bool) or not isinstance(offset, (int, float)) or not math.isfinite(offset):
                raise DataError(f"`offset` must be a finite number (a public constant); got {offset!r}.")
            if not isinstance(model, str):
                raise DataError("`offset` is applied to shipped families; subtract it inside your model function.")
        self.offset = None if offset is None else float(offset)
        if isinstance(sampler, Mapping):
            sampler = SamplerConfig(**sampler)
        if sampler is not None and not isinstance(sampler, SamplerConfig):
            raise DataError(f"`sampler` must be a SamplerConfig or a dict of its fields; got {sampler!r}.")
        self.sampler = sampler or SamplerConfig()
        if isinstance(censor_warn_share, bool) or not isinstance(censor_warn_share, (int, float)) or not (
                0 <= censor_warn_share <= 1):
            raise DataError(f"`censor_warn_share` must be a share in [0, 1]; got {censor_warn_share!r}.")
        self.censor_warn_share = float(censor_warn_share)
        if not isinstance(allow_unconverged, bool):
            raise DataError(f"`allow_unconverged` must be True or False; got {allow_unconverged!r}.")
        self.allow_unconverged = allow_unconverged

    @staticmethod
    def _levels(s: pd.Series) -> list[str]:
        if s.isna().any():
            raise DataError(f"covariate {s.name!r} has missing values; fill or drop them first.")
        return sorted({str(v) for v in s})

    def _target_values(self, s: pd.Series) -> np.ndarray:
        if not pd.api.types.is_numeric_dtype(s) or pd.api.types.is_bool_dtype(s):
            raise DataError(f"target column {s.name!r} must be numeric; it has dtype {s.dtype} (convert it first, e.g. "
                            f"remove thousands separators and use pd.to_numeric).")
        x = s.to_numpy(dtype=float)
        if not np.isfinite(x).all():
            bad = int(np.flatnonzero(~np.isfinite(x))[0])
            raise DataError(f"target column {s.name!r} has missing or infinite values (first at row {bad}).")
        return x / self.unit if self.unit is not None else x

    def design(self, public: pd.DataFrame) -> np.ndarray:
        """Design matrix of public covariates: intercept, numeric columns, indicators of every level but the first.

        Raises
        ------
        DataError
            For a missing column, a missing value or a level not seen at fit time.
        """
        cols = [np.ones(len(public))]
        for c in self.covariates:
            if c not in public.columns:
                raise DataError(f"covariate column {c!r} is missing; its columns are {list(public.columns)}.")
            s = public[c]
            if c in self.levels:
                vals = s.astype(str)
                unseen = sorted(set(vals) - set(self.levels[c]))
                if s.isna().any() or unseen:
                    raise DataError(f"covariate {c!r} has level(s) {unseen or ['<missing>']} not seen at fit time "
                                    f"(known levels: {self.levels[c]}); the model has no coefficient for them.")
                cols += [(vals == lev).to_numpy(dtype=float) for lev in self.levels[c][1:]]
            else:
                if not pd.api.types.is_numeric_dtype(s):
                    raise DataError(f"covariate {c!r} was numeric at fit time but has dtype {s.dtype} now.")
                v = s.to_numpy(dtype=float)
                if not np.isfinite(v).all():
                    raise DataError(f"covariate {c!r} has missing or infinite values.")
                cols.append(v)
        return np.column_stack(cols)

    # ------------------------------------------------------------------ model
    def family(self) -> ModelFamily:
        """The :class:`ModelFamily` fitted (shipped, wrapped with an offset, or the function adapter)."""
        p = self._X.shape[1]
        if callable(self.model):
            return PyMCFunctionFamily(fn=self.model, n_coef=p)
        kw = dict(self.model_params)
        if self.model in _REGRESSION:
            kw["n_coef"] = p
        fam = FAMILIES[self.model](**kw)
        return fam if self.offset is None else _Offset(base=fam, offset=self.offset)

    def _model_covariates(self, X: np.ndarray) -> np.ndarray | None:
        if callable(self.model) or self.model in _REGRESSION:
            return X
        return None

    def _compiled(self) -> CompiledModel:
        if self._cm is None:
            fam = self.family()
            x0 = self._x if self._x is not None else self._placeholder_x()
            self._cm = compiled_model(fam, x0, self._model_covariates(self._X))
        return self._cm

    def _placeholder_x(self) -> np.ndarray:
        return np.full(self._X.shape[0], 0.5 if self.model in ("beta", "beta_regression") else 1.0)

    # ------------------------------------------------------------------ fit
    def fit(self, seed: SeedLike = None) -> Synthesizer:
        """Run the mechanism on the data; sets :attr:`privacy` and the posterior draws. Returns ``self``."""
        if self._x is None:
            raise DataError("this synthesizer was loaded without its confidential data; it can sample and release, "
                            "not fit. Build a new Synthesizer from the data to refit.")
        if self.mechanism == "ph":
            return self._fit_ph(seed)
        cm = self._compiled()
        x, cov, cfg = self._x, self._model_covariates(self._X), self.sampler
        fits: list[Fit] = []
        key, eps, mp = self.mechanism, self.eps, self.mechanism_params

        def seed_of(step):
            return stream(seed, "synthesizer", step)

        def base():
            r = mechanisms.unweighted(cm, x, covariates=cov, sampler=cfg, seed=seed_of("unweighted"))
            fits.append(r.fit)
            return r

        def lw(b):
            r = mechanisms.lipschitz_weighted(cm, b.fit, sampler=cfg, seed=seed_of("lw"),
                                              name="Weighted" if key == "weighted" else "LW")
            fits.append(r.fit)
            return r

        def cw():
            r = mechanisms.count_weighted(cm, x, radius=mp["radius"], kind=mp.get("kind", "absolute"), covariates=cov,
                                          sampler=cfg, seed=seed_of("cw"))
            fits.append(r.fit)
            return r

        if key == "unweighted":
            res = base()
        elif key in ("weighted", "lw"):
            res = lw(base())
        elif key == "cw":
            res = cw()
        elif key == "sw":
            b = base()
            res = mechanisms.scalar_weighted(cm, b.fit, lw(b).privacy.delta, sampler=cfg, seed=seed_of("sw"))
        elif key == "lw_final":
            res = mechanisms.reweighted(cm, lw(base()), sampler=cfg, seed=seed_of("final"))
        elif key == "cw_final":
            res = mechanisms.reweighted(cm, cw(), sampler=cfg, seed=seed_of("final"))
        elif key == "weighted_e":
            res = mechanisms.weighted_e(cm, lw(base()), eps, sampler=cfg, seed=seed_of("weighted_e"))
        elif key == "censor_uw":
            res = mechanisms.censored(cm, x, eps, covariates=cov, sampler=cfg, seed=seed_of("censor_uw"))
        elif key == "censor_w":
            w = lipschitz_weights(base().fit.bounds.abs_loglik)
            res = mechanisms.censored(cm, x, eps, weights=w, covariates=cov, sampler=cfg, seed=seed_of("censor_w"),
                                      name="Censor_w")
        else:  # pragma: no cover - checked in __init__
            raise AssertionError(key)
        if not any(res.fit is f for f in fits):
            fits.append(res.fit)
        diags = [f.diagnostics for f in fits]
        p = res.privacy
        n = int(x.size)
        self._privacy = SynthesizerPrivacy(
            mechanism=key, name=res.name, guarantee=p.guarantee, delta=float(p.delta), eps_remove=float(p.eps),
            eps_replace=float(p.eps_replace), bound=float(p.bound), n_censored=int(p.n_censored), n=n,
            rhat_max=float(max(d.rhat_max for d in diags)), ess_min=float(min(d.ess_min for d in diags)),
            divergences=int(sum(d.divergences for d in diags)), converged=all(d.ok for d in diags),
            extra=_jsonable({k: v for k, v in p.extra.items() if isinstance(v, (int, float, str, bool, np.number))}),
        )
        self.draws = {k: np.asarray(v) for k, v in res.fit.draws.items()}
        self._weights = np.asarray(res.weights, dtype=float)
        self._warn_censoring()
        return self

    def _fit_ph(self, seed: SeedLike) -> Synthesizer:
        from .histogram import perturbed_histogram

        mp = self.mechanism_params
        lo, hi = float(mp["lower"]), float(mp["upper"])
        if self.unit is not None:
            lo, hi = lo / self.unit, hi / self.unit
        mode = mp.get("mode", "release")
        r = perturbed_histogram(self._x, self.eps, lower=lo, upper=hi, bins=mp.get("bins", "sqrt"), mode=mode,
                                seed=stream(seed, "synthesizer", "ph") if mode == "research" else None,
                                neighbours="remove", n_synthetic=1)
        self._ph = {"edges": np.asarray(r.edges), "noisy_counts": np.asarray(r.noisy_counts)}
        nan = float("nan")
        self._privacy = SynthesizerPrivacy(
            mechanism="ph", name="PH", guarantee=registry.guarantee("PH"), delta=nan, eps_remove=float(r.eps_remove),
            eps_replace=float(r.eps_replace), bound=float("inf"), n_censored=0, n=int(self._x.size), rhat_max=nan,
            ess_min=nan, divergences=0, converged=True, extra={"noise_scale": float(r.noise_scale), "ph_mode": mode},
        )
        return self

    def _warn_censoring(self) -> None:
        p = self._privacy
        if np.isfinite(p.bound) and p.censored_share > self.censor_warn_share:
            warnings.warn(
                f"{p.name} censored {p.n_censored} of {p.n} records ({p.censored_share:.0%}, more than "
                f"censor_warn_share={self.censor_warn_share:g}): the mechanism has mostly discarded the data. A "
                f"continuous density carries its unit: choose a public `unit=` (or `offset=`) that puts the records' "
                f"log-likelihoods within +-eps/2, or raise eps.", CensoringWarning, stacklevel=2)

    # ------------------------------------------------------------------ privacy
    @property
    def fitted(self) -> bool:
        """Whether the synthesizer has been fitted (or loaded)."""
        return self._privacy is not None

    @property
    def privacy(self) -> SynthesizerPrivacy:
        """The privacy report; raises :class:`UnconvergedError` for a fit that failed convergence.

        Pass ``allow_unconverged=True`` at construction to read it anyway.
        """
        if self._privacy is None:
            raise DataError("the synthesizer is not fitted; call .fit(seed=...) first.")
        if not self._privacy.converged and not self.allow_unconverged:
            p = self._privacy
            raise UnconvergedError(
                f"the {p.name} fit failed its convergence checks (R-hat max {p.rhat_max:.3f}, bulk ESS min "
                f"{p.ess_min:.0f}, {p.divergences} divergences): its privacy figure is not reported. Increase "
                f"draws/tune, or pass allow_unconverged=True to accept it.")
        return self._privacy

    @property
    def n_draws(self) -> int:
        """Posterior draws available for releases (1 for PH, whose noisy histogram is released once)."""
        self.privacy  # noqa: B018 - raises if unfitted or unconverged
        return 1 if self._ph is not None else int(next(iter(self.draws.values())).shape[0])

    # ------------------------------------------------------------------ sampling
    def sample(self, seed: SeedLike = None, *, data: pd.DataFrame | None = None, draw: int | None = None
               ) -> pd.DataFrame:
        """One synthetic data set, every record generated from ONE posterior draw.

        Parameters
        ----------
        seed : int or SeedSequence
            Chooses the draw (unless ``draw`` is given) and the records.
        data : pandas.DataFrame, optional
            Public covariates of the synthetic records (default: those of the fitted data).
        draw : int, optional
            Index of the posterior draw to use.

        Returns
        -------
        pandas.DataFrame
            The same columns as the fitted data; ``attrs["privacy_statement"]``, ``attrs["privacy"]``
            and ``attrs["draw"]`` state what was released.
        """
        p = self.privacy
        public = self.public if data is None else data
        if not isinstance(public, pd.DataFrame):
            raise DataError(f"`data` must be a DataFrame of the public covariates; got {type(public).__name__}.")
        X = self.design(public)
        n = X.shape[0]
        base = stream(seed, "sample")
        rng = generator(stream(base, "records"))
        S = self.n_draws
        if draw is None:
            s = int(generator(stream(base, "draw")).integers(S))
        elif isinstance(draw, bool) or not isinstance(draw, (int, np.integer)) or not 0 <= draw < S:
            raise DataError(f"`draw` must be an integer in [0, {S}); got {draw!r}.")
        else:
            s = int(draw)
        if self._ph is not None:
            values = self._sample_ph(n, rng)
        elif callable(self.model):
            if self._simulator is None:
                self._simulator = _ModelSimulator(self._compiled())
            values = self._simulator({k: v[s] for k, v in self.draws.items()}, n, X, rng)
        else:
            fam = self.family()
            values = fam.simulate({k: np.repeat(v[s:s + 1], n, axis=0) for k, v in self.draws.items()}, rng,
                                  self._model_covariates(X))
        values = np.asarray(values, dtype=float)
        if self.unit is not None:
            values = values * self.unit
        out = public[self.covariates].reset_index(drop=True).copy()
        out[self.target] = self._cast(values)
        out = out[[c for c in self.columns]]
        out.attrs["privacy_statement"] = p.statement()
        out.attrs["privacy"] = p.to_dict()
        out.attrs["draw"] = s
        return out

    def _sample_ph(self, n: int, rng: np.random.Generator) -> np.ndarray:
        edges, noisy = self._ph["edges"], self._ph["noisy_counts"]
        m = noisy.size
        probs = np.full(m, 1.0 / m) if noisy.sum() <= 0 else noisy / noisy.sum()
        which = rng.choice(m, size=n, p=probs)
        return rng.uniform(edges[which], edges[which + 1])

    def _cast(self, values: np.ndarray):
        dt = self.dtypes[self.target]
        if np.issubdtype(np.dtype(dt), np.integer) and np.isfinite(values).all():
            return values.astype(dt)
        return values

    # ------------------------------------------------------------------ save / load
    def _content(self) -> dict:
        if self._privacy is None:
            raise DataError("fit the synthesizer before saving it.")
        if callable(self.model):
            spec = {"kind": "function", "function": _qualname(self.model)}
            _import_function(spec["function"])  # fails now, not at load time, for a lambda or local function
        else:
            spec = {"kind": "family", "family": self.model, "params": _jsonable(self.model_params)}
        public = {c: (self.public[c].astype(str).tolist() if c in self.levels else
                      self.public[c].to_numpy(dtype=float).tolist()) for c in self.covariates}
        return _jsonable({
            "model": spec,
            "settings": {
                "target": self.target, "covariates": self.covariates, "columns": self.columns, "dtypes": self.dtypes,
                "mechanism": self.mechanism, "eps": self.eps, "mechanism_params": self.mechanism_params,
                "unit": self.unit, "offset": self.offset, "sampler": dataclasses.asdict(self.sampler),
                "censor_warn_share": self.censor_warn_share, "allow_unconverged": self.allow_unconverged,
            },
            "levels": self.levels,
            "public_covariates": public,
            "privacy": self._privacy.to_dict(),
            "draws": None if self.draws is None else {k: v for k, v in self.draws.items()},
            "ph": self._ph,
        })

    def save(self, path: str | os.PathLike, *, include_confidential: bool = False) -> Path:
        """Write the fitted synthesizer to a JSON file (no pickle) with a SHA-256 of its contents.

        The file holds the posterior draws, the model (family name and parameters, or the model
        function's ``module:qualname``), the settings, the covariate levels and public covariates,
        and the privacy report. It never holds the confidential column or the record weights; with
        ``include_confidential=True`` they go to ``<stem>.CONFIDENTIAL.json`` beside it.

        Returns
        -------
        pathlib.Path
            The path written.
        """
        path = Path(path)
        content = self._content()
        doc = {"format": FORMAT, "version": FORMAT_VERSION, "sha256": hashlib.sha256(_canonical(content)).hexdigest(),
               "content": content}
        _atomic_write_text(path, json.dumps(doc, allow_nan=True))
        if include_confidential:
            conf = {"format": FORMAT + ".confidential", "confidential": True,
                    "warning": "CONFIDENTIAL: the confidential column and the record weights; do not release.",
                    "target": self.target, "values": _jsonable(self._x * (self.unit or 1.0)),
                    "weights": None if self._weights is None else _jsonable(self._weights)}
            # readable by its owner only: it holds the confidential data
            _atomic_write_text(confidential_path(path), json.dumps(conf, allow_nan=True), mode=0o600)
        return path

    @classmethod
    def load(cls, path: str | os.PathLike) -> Synthesizer:
        """Read a saved synthesizer; verifies its SHA-256 (:class:`ChecksumError` if edited).

        The loaded synthesizer samples and releases without the confidential data; it cannot refit.
        """
        path = Path(path)
        try:
            doc = json.loads(path.read_text())
        except json.JSONDecodeError as e:
            raise DataError(f"{path} is not a saved synthesizer (not JSON: {e}).") from None
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            raise DataError(f"{path} is not a saved synthesizer (format {doc.get('format')!r}, expected {FORMAT!r}).")
        if doc.get("version") != FORMAT_VERSION:
            raise DataError(f"{path} has format version {doc.get('version')!r}; this dpsynth reads {FORMAT_VERSION}.")
        content = doc["content"]
        digest = hashlib.sha256(_canonical(content)).hexdigest()
        if digest != doc.get("sha256"):
            raise ChecksumError(f"{path}: its contents do not match the stored SHA-256 (the file was edited or is "
                                f"corrupted); refusing to load a privacy report that may have been changed.")
        st = content["settings"]
        spec = content["model"]
        model = spec["family"] if spec["kind"] == "family" else _import_function(spec["function"])
        self = cls.__new__(cls)
        self._settings(st["target"], st["covariates"], model, st["mechanism"], st["eps"],
                       spec.get("params"), st["mechanism_params"], st["unit"], st["offset"], st["sampler"],
                       st["censor_warn_share"], st["allow_unconverged"])
        self.columns, self.dtypes, self.levels = st["columns"], st["dtypes"], content["levels"]
        self.public = pd.DataFrame({c: content["public_covariates"][c] for c in self.covariates},
                                   columns=self.covariates)
        for c in self.covariates:
            if c not in self.levels:
                self.public[c] = self.public[c].astype(self.dtypes[c])
        self._x = None
        self._X = self.design(self.public)
        self._privacy = SynthesizerPrivacy(**content["privacy"])
        self.draws = None if content["draws"] is None else {k: np.asarray(v, dtype=float)
                                                            for k, v in content["draws"].items()}
        self._ph = None if content["ph"] is None else {k: np.asarray(v, dtype=float) for k, v in content["ph"].items()}
        self._weights, self._cm, self._simulator = None, None, None
        self.path = path
        return self

    @property
    def checksum(self) -> str:
        """SHA-256 of the synthesizer's saved contents (identifies it in a ledger)."""
        return hashlib.sha256(_canonical(self._content())).hexdigest()

    # ------------------------------------------------------------------ release
    def release(self, path_out: str | os.PathLike, *, ledger: str | os.PathLike, budget: float | None = None,
                seed: SeedLike = None, data: pd.DataFrame | None = None) -> pd.DataFrame:
        """Sample one synthetic data set, write it atomically (CSV or Parquet by extension) and record it.

        ``data`` holds the public covariates of the synthetic records (default: those of the fitted
        data), as in :meth:`sample`.

        A draw not yet released in this ledger is used when one is left, so every release spends its
        own epsilon. With ``budget``, a strict-DP release that would bring the ledger's DP total above
        it is refused (:class:`dpsynth.ledger.BudgetExceeded`) and nothing is written.
        """
        from .ledger import Ledger

        path_out = Path(path_out)
        suffix = path_out.suffix.lower()
        if suffix not in (".csv", ".parquet"):
            raise DataError(f"`path_out` must end in .csv or .parquet; got {path_out.name!r}.")
        p = self.privacy
        led = Ledger(ledger)
        ident = self.checksum
        with led.locked() as book:
            used = {r["draw"] for r in book.records() if r["synthesizer"] == ident}
            base = stream(seed, "release")
            rng = generator(stream(base, "draw"))
            free = [s for s in range(self.n_draws) if s not in used]
            draw = int(rng.choice(free)) if free else int(rng.integers(self.n_draws))
            new_spend = 0.0 if draw in used else p.eps_remove
            book.check_budget(p.guarantee, new_spend, budget)
            df = self.sample(stream(base, "sample"), data=data, draw=draw)
            _atomic_write_frame(df, path_out)
            book.append(mechanism=p.mechanism, name=p.name, guarantee=p.guarantee, eps=p.eps_remove,
                        eps_replace=p.eps_replace, draw=draw, output=str(path_out), synthesizer=ident,
                        new_spend=new_spend)
        return df


def confidential_path(path: str | os.PathLike) -> Path:
    """Where ``save(..., include_confidential=True)`` writes the confidential data."""
    path = Path(path)
    return path.with_name(path.stem + ".CONFIDENTIAL.json")


def _atomic_write_text(path: Path, text: str, *, mode: int = 0o644) -> None:
    atomic_write(path, lambda tmp: Path(tmp).write_text(text), mode=mode)


def _atomic_write_frame(df: pd.DataFrame, path: Path) -> None:
    csv = path.suffix.lower() == ".csv"
    atomic_write(path, lambda tmp: df.to_csv(tmp, index=False) if csv else df.to_parquet(tmp, index=False))
