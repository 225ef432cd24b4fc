"""One object from a DataFrame to a released synthetic data set: :class:`Synthesizer`.

``Synthesizer(df, target="wage", covariates=["region"], model="lognormal_regression",
mechanism="censor_uw", eps=1.0).fit(seed=1).sample(seed=2)`` fits one confidential column with a
shipped model family (:data:`dpsynth.models.FAMILIES`) or a plain PyMC model-building function
(:mod:`dpsynth.models.user_function`), runs any registered mechanism on it by key
(:mod:`dpsynth.mechanisms`; ``mechanisms.list_mechanisms()``), reports its privacy
(:class:`SynthesizerPrivacy`) and returns synthetic DataFrames generated from ONE posterior draw
each (or from the released state of a model-free mechanism). :meth:`Synthesizer.save` and
:meth:`Synthesizer.load` read and write a self-describing JSON file, and :meth:`Synthesizer.release`
writes a sample and records it in a ledger (:mod:`dpsynth.synthesizer_files`).

The Synthesizer knows no mechanism by name: it converts the data and the mechanism's parameters
(public bounds into the model's unit, a historical DataFrame into model arrays) and calls the
mechanism's ``run``.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from . import mechanisms
from .covariates import CovariateDesign
from .models import FAMILIES, ModelFamily, OffsetFamily, PyMCFunctionFamily, family_class
from .models.user_function import import_function, qualname
from .seeds import SeedLike, generator, stream
from .synthesizer_files import ChecksumError, confidential_path, jsonable
from .validation import (
    DataError,
    _is_number,
    check_bool,
    check_optional_finite,
    check_positive,
    check_share,
    check_table_columns,
)

if TYPE_CHECKING:  # pragma: no cover
    import os
    from pathlib import Path

    from .fitting import CompiledModel, SamplerConfig

__all__ = [
    "Synthesizer",
    "SynthesizerPrivacy",
    "PyMCFunctionFamily",
    "CensoringWarning",
    "UnconvergedError",
    "ChecksumError",
    "FAMILIES",
    "confidential_path",
]


def __getattr__(name: str):
    if name == "MECHANISMS":  # the runnable registry keys, read from the mechanisms' specs
        return tuple(mechanisms.runnable_keys())
    raise AttributeError(f"module 'dpsynth.synthesizer' has no attribute {name!r}")


class CensoringWarning(UserWarning):
    """A censored fit censored more than the stated share of records: the mechanism mostly discarded the data."""


class UnconvergedError(RuntimeError):
    """A privacy figure was asked of a fit that failed its convergence checks."""


@dataclass(frozen=True)
class SynthesizerPrivacy:
    """What a fitted :class:`Synthesizer` reports.

    Attributes
    ----------
    mechanism, name : str
        Registry key and display name.
    guarantee : str
        ``"none"``, ``"aDP"`` or ``"DP"``, from the mechanism's spec.
    delta : float
        Local Lipschitz bound (NaN for a model-free mechanism).
    eps_remove, eps_replace : float
        Epsilon of one release with one record removed / replaced.
    bound : float
        Censoring bound M (inf when not censored).
    n_censored, n : int
        Records censored at one or more draws, and records fitted.
    rhat_max, ess_min : float
        Worst R-hat and bulk ESS over every fit the mechanism ran (NaN without MCMC).
    divergences : int
        Divergent transitions over every fit.
    converged : bool
        Whether every fit passed its checks.
    released : str
        What one release is, in words (``"one posterior draw"``, or the model-free mechanism's release).
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
    released: str = "one released posterior draw"
    extra: dict = field(default_factory=dict)

    @property
    def censored_share(self) -> float:
        """Share of the records censored."""
        return self.n_censored / self.n

    def statement(self) -> str:
        """One sentence: guarantee, eps under both neighbour relations, Delta and censoring."""
        kind = {"none": "not private", "aDP": "asymptotic DP (local bound only)", "DP": "strict DP"}[self.guarantee]
        s = (f"{self.name} ({kind}): eps = {self.eps_remove:.4g} with one record removed, {self.eps_replace:.4g} "
             f"with one record replaced, for {self.released}")
        if np.isfinite(self.delta):
            s += f"; Delta = {self.delta:.4g}"
        if np.isfinite(self.bound):
            s += f", censoring bound M = {self.bound:.4g}, {self.n_censored} of {self.n} records censored"
        return s + ("" if self.converged else "; THE FIT FAILED ITS CONVERGENCE CHECKS") + "."

    def to_dict(self) -> dict:
        """Plain-JSON dict (floats, ints, str, bool)."""
        return dataclasses.asdict(self)


def _target_values(s: pd.Series, unit: float | None) -> np.ndarray:
    if not pd.api.types.is_numeric_dtype(s) or pd.api.types.is_bool_dtype(s):
        raise DataError(f"target column {s.name!r} must be numeric; it has dtype {s.dtype} (convert it first, e.g. "
                        f"remove thousands separators and use pd.to_numeric).")
    x = s.to_numpy(dtype=float)
    if not np.isfinite(x).all():
        bad = int(np.flatnonzero(~np.isfinite(x))[0])
        raise DataError(f"target column {s.name!r} has missing or infinite values (first at row {bad}).")
    return x / unit if unit is not None else x


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
        A shipped family (:data:`dpsynth.models.FAMILIES`) or a PyMC model-building function
        (:mod:`dpsynth.models.user_function`).
    mechanism : str
        A registry key (``dpsynth.mechanisms.list_mechanisms()``).
    eps : float, optional
        Target epsilon, required exactly when the mechanism takes one (its spec's ``takes_eps``).
    model_params : dict, optional
        Keyword arguments of the shipped family (priors), e.g. ``{"mu_prior_sd": 5.0}``.
    mechanism_params : dict, optional
        The mechanism's parameters, from its spec's table (``dpsynth.mechanisms.get(key).params``),
        e.g. ``{"radius": 5.0}`` for ``cw``, ``{"lower": 0, "upper": 1e5}`` for ``ph`` (public bounds
        in the data's unit), ``{"historical": df_2019}`` for ``censor_w_public``.
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

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from dpsynth import Synthesizer
    >>> df = pd.DataFrame({"wage": np.random.default_rng(1).lognormal(6, 0.5, 300)})
    >>> s = Synthesizer(df, "wage", model="lognormal", mechanism="ph", eps=1.0,
    ...                 mechanism_params={"lower": 0, "upper": 20000}).fit()
    >>> s.privacy.guarantee
    'DP'
    >>> len(s.sample(seed=2))
    300
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
        covs = check_table_columns(data, target, covariates)
        self._settings(target, covs, model, mechanism, eps, model_params, unit, offset, sampler,
                       censor_warn_share, allow_unconverged)
        self.columns = list(data.columns)
        self.dtypes = {c: str(data[c].dtype) for c in self.columns}
        self.public = data[covs].reset_index(drop=True).copy()
        self._design = CovariateDesign.from_frame(self.public, covs)
        self._x = _target_values(data[target], self.unit)
        self._X = self._design.matrix(self.public)
        self._run_params = self._resolve_params(mechanism_params)
        self.draws: dict | None = None
        self._release_state = None
        self._privacy: SynthesizerPrivacy | None = None
        self._weights: np.ndarray | None = None
        self._cm: CompiledModel | None = None
        self._simulator = None

    # ------------------------------------------------------------------ settings and data
    def _settings(self, target, covs, model, mechanism, eps, model_params, unit, offset, sampler,
                  censor_warn_share, allow_unconverged) -> None:
        from .fitting import SamplerConfig

        self.target, self.covariates = target, covs
        if isinstance(model, str):
            family_class(model)  # an unknown name raises, listing the shipped ones
        elif not callable(model):
            raise DataError(f"`model` must be a family name or a function; got {model!r}.")
        self.model = model
        if not isinstance(mechanism, str) or mechanisms.lookup_name(mechanism) is None:
            raise DataError(f"`mechanism` must be one of the registry keys {mechanisms.runnable_keys()}; got "
                            f"{mechanism!r}.")
        self.spec = mechanisms.get(mechanism)
        if not self.spec.runnable:
            raise DataError(f"the {mechanism} mechanism cannot run through the Synthesizer: {self.spec.not_runnable}")
        self.mechanism = self.spec.key
        self.eps = eps
        self.model_params = dict(model_params or {})
        if self.model_params and not isinstance(model, str):
            raise DataError("`model_params` are for shipped families; put the priors in your model function.")
        continuous = FAMILIES[model].continuous if isinstance(model, str) else True
        for nm, v in (("unit", unit), ("offset", offset)):
            if v is not None and not continuous:
                raise DataError(f"`{nm}` applies to continuous data; the {model} model is discrete.")
        self.unit = None if unit is None else check_positive(unit, "unit")
        self.offset = check_optional_finite(offset, "offset")
        if self.offset is not None and not isinstance(model, str):
            raise DataError("`offset` is applied to shipped families; subtract it inside your model function.")
        if isinstance(sampler, Mapping):
            sampler = SamplerConfig(**sampler)
        if sampler is not None and not isinstance(sampler, SamplerConfig):
            raise DataError(f"`sampler` must be a SamplerConfig or a dict of its fields; got {sampler!r}.")
        self.sampler = sampler or SamplerConfig()
        self.censor_warn_share = check_share(censor_warn_share, "censor_warn_share")
        self.allow_unconverged = check_bool(allow_unconverged, "allow_unconverged")

    def _resolve_params(self, given: Mapping | None) -> dict:
        """The mechanism's checked parameters in the model's unit (and its checks against the data)."""
        given = dict(given or {})
        self.mechanism_params = {k: v for k, v in given.items()
                                 if k not in self.spec.params or (self.spec.params[k].cli is not None
                                                                  and not self.spec.params[k].table)}
        converted = {}
        for k, v in given.items():
            p = self.spec.params.get(k)
            if p is not None and p.table and isinstance(v, pd.DataFrame):
                v = self._model_arrays(v, k)
            elif p is not None and p.in_data_unit and self.unit is not None and _is_number(v):
                v = float(v) / self.unit
            converted[k] = v
        params = self.spec.resolve(converted, self.eps)
        self.eps = params.get("eps")
        if self.spec.check_data is not None and self._x is not None:
            self.spec.check_data(self._x, params)
        return params

    def _model_arrays(self, frame: pd.DataFrame, name: str) -> tuple[np.ndarray, np.ndarray | None]:
        """A frame laid out like the confidential data, as the model's ``(x, covariates)``."""
        missing = [c for c in [self.target, *self.covariates] if c not in frame.columns]
        if missing:
            raise DataError(f"`{name}` lacks column(s) {missing}; it must be laid out like the confidential data "
                            f"(columns {[self.target, *self.covariates]}).")
        x = _target_values(frame[self.target], self.unit)
        X = self._design.matrix(frame[self.covariates].reset_index(drop=True))
        return x, self._model_covariates(X)

    @property
    def levels(self) -> dict:
        """Categorical covariate -> its levels recorded at fit time."""
        return self._design.levels

    def design(self, public: pd.DataFrame) -> np.ndarray:
        """Design matrix of public covariates: intercept, numeric columns, indicators of every level but the first.

        Raises
        ------
        DataError
            For a missing column, a missing value or a level not seen at fit time.
        """
        return self._design.matrix(public)

    # ------------------------------------------------------------------ model
    def family(self) -> ModelFamily:
        """The :class:`ModelFamily` fitted (shipped, wrapped with an offset, or the function adapter)."""
        p = self._X.shape[1]
        if callable(self.model):
            return PyMCFunctionFamily(fn=self.model, n_coef=p)
        fam = FAMILIES[self.model](**self.model_params)
        if fam.takes_covariates:
            fam = fam.with_design(p)
        return fam if self.offset is None else OffsetFamily(base=fam, offset=self.offset)

    def _takes_covariates(self) -> bool:
        return callable(self.model) or FAMILIES[self.model].takes_covariates

    def _model_covariates(self, X: np.ndarray) -> np.ndarray | None:
        return X if self._takes_covariates() else None

    def _compiled(self) -> CompiledModel:
        if self._cm is None:
            from .fitting import compiled_model

            fam = self.family()
            x0 = self._x if self._x is not None else np.full(self._X.shape[0], fam.placeholder)
            self._cm = compiled_model(fam, x0, self._model_covariates(self._X))
        return self._cm

    # ------------------------------------------------------------------ fit
    def fit(self, seed: SeedLike = None) -> Synthesizer:
        """Run the mechanism on the data; sets :attr:`privacy` and the posterior draws. Returns ``self``."""
        if self._x is None:
            raise DataError("this synthesizer was loaded without its confidential data; it can sample and release, "
                            "not fit. Build a new Synthesizer from the data to refit.")
        uses_model = self.spec.uses_model
        ctx = mechanisms.RunContext(
            self._x, family=self.family() if uses_model else None,
            covariates=self._model_covariates(self._X) if uses_model else None, public=self.public,
            sampler=self.sampler, seed_fn=lambda *parts: stream(seed, "synthesizer", *parts),
            compiled=self._compiled() if uses_model else None)
        res = self.spec.run(ctx, dict(self._run_params))
        p = res.privacy
        self._privacy = SynthesizerPrivacy(
            mechanism=self.mechanism, name=res.name, guarantee=p.guarantee, delta=float(p.delta),
            eps_remove=float(p.eps), eps_replace=float(p.eps_replace), bound=float(p.bound),
            n_censored=int(p.n_censored), n=int(self._x.size), rhat_max=float(res.rhat_max),
            ess_min=float(res.ess_min), divergences=res.divergences, converged=res.converged,
            released="one released posterior draw" if res.fit is not None else f"the release of {res.name}",
            extra=jsonable({k: v for k, v in p.extra.items() if isinstance(v, (int, float, str, bool, np.number))}),
        )
        if res.fit is not None:
            self.draws = {k: np.asarray(v) for k, v in res.fit.draws.items()}
            self._weights = np.asarray(res.weights, dtype=float)
            self._release_state = None
        else:
            self.draws, self._weights, self._release_state = None, None, res.release
        self._warn_censoring()
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
        """Posterior draws available for releases (1 for a model-free mechanism, released once)."""
        self.privacy  # noqa: B018 - raises if unfitted or unconverged
        return 1 if self.draws is None else int(next(iter(self.draws.values())).shape[0])

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
        if self._release_state is not None:
            values = self._release_state.sample(n, rng, public[self.covariates].reset_index(drop=True))
        elif callable(self.model):
            if self._simulator is None:
                from .models import ModelSimulator

                self._simulator = ModelSimulator(self._compiled())
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
            spec = {"kind": "function", "function": qualname(self.model)}
            import_function(spec["function"])  # fails now, not at load time, for a lambda or local function
        else:
            spec = {"kind": "family", "family": self.model, "params": jsonable(self.model_params)}
        public = {c: (self.public[c].astype(str).tolist() if c in self.levels else
                      self.public[c].to_numpy(dtype=float).tolist()) for c in self.covariates}
        return jsonable({
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
            "release": None if self._release_state is None else self._release_state.to_dict(),
        })

    def save(self, path: str | os.PathLike, *, include_confidential: bool = False) -> Path:
        """Write the fitted synthesizer to a JSON file (no pickle) with a SHA-256 of its contents.

        The file holds the posterior draws (or a model-free mechanism's release), the model (family
        name and parameters, or the model function's ``module:qualname``), the settings, the
        covariate levels and public covariates, and the privacy report. It never holds the
        confidential column or the record weights; with ``include_confidential=True`` they go to
        ``<stem>.CONFIDENTIAL.json`` beside it, readable by its owner only.

        Returns
        -------
        pathlib.Path
            The path written.
        """
        from .synthesizer_files import write_confidential, write_saved

        path = write_saved(path, self._content())
        if include_confidential:
            write_confidential(path, self.target, self._x * (self.unit or 1.0), self._weights)
        return path

    @classmethod
    def load(cls, path: str | os.PathLike) -> Synthesizer:
        """Read a saved synthesizer; verifies its SHA-256 (:class:`ChecksumError` if edited).

        The loaded synthesizer samples and releases without the confidential data; it cannot refit.
        """
        from pathlib import Path

        from .synthesizer_files import read_saved

        path = Path(path)
        content = read_saved(path)
        st = content["settings"]
        spec = content["model"]
        model = spec["family"] if spec["kind"] == "family" else import_function(spec["function"])
        self = cls.__new__(cls)
        self._settings(st["target"], st["covariates"], model, st["mechanism"], st["eps"], spec.get("params"),
                       st["unit"], st["offset"], st["sampler"], st["censor_warn_share"], st["allow_unconverged"])
        self.columns, self.dtypes = st["columns"], st["dtypes"]
        self._design = CovariateDesign(columns=tuple(self.covariates), levels=content["levels"])
        self.public = pd.DataFrame({c: content["public_covariates"][c] for c in self.covariates},
                                   columns=self.covariates)
        for c in self.covariates:
            if c not in self.levels:
                self.public[c] = self.public[c].astype(self.dtypes[c])
        self._x = None
        self._X = self.design(self.public)
        self._run_params = self._resolve_params(st["mechanism_params"])
        self._privacy = SynthesizerPrivacy(**content["privacy"])
        self.draws = None if content["draws"] is None else {k: np.asarray(v, dtype=float)
                                                            for k, v in content["draws"].items()}
        rel = content.get("release")
        self._release_state = None if rel is None else self.spec.release_type.from_dict(rel)
        self._weights, self._cm, self._simulator = None, None, None
        self.path = path
        return self

    @property
    def checksum(self) -> str:
        """SHA-256 of the synthesizer's saved contents (identifies it in a ledger)."""
        from .synthesizer_files import digest

        return digest(self._content())

    # ------------------------------------------------------------------ release
    def release(self, path_out: str | os.PathLike, *, ledger: str | os.PathLike, budget: float | None = None,
                seed: SeedLike = None, data: pd.DataFrame | None = None) -> pd.DataFrame:
        """Sample one synthetic data set, write it atomically (CSV or Parquet by extension) and record it.

        ``data`` holds the public covariates of the synthetic records (default: those of the fitted
        data), as in :meth:`sample`. A draw not yet released in this ledger is used when one is
        left, so every release spends its own epsilon. With ``budget``, a strict-DP release that
        would bring the ledger's DP total above it is refused (:class:`dpsynth.ledger.BudgetExceeded`)
        and nothing is written.
        """
        from .synthesizer_files import release_to_file

        p = self.privacy
        return release_to_file(path_out, ledger=ledger, budget=budget, seed=seed, ident=self.checksum, privacy=p,
                               n_draws=self.n_draws, sample=lambda sd, draw: self.sample(sd, data=data, draw=draw))
