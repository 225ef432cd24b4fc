"""One object from a DataFrame to a released synthetic data set: :class:`Synthesizer`.

``Synthesizer(df, target="wage", covariates=["region"], model="lognormal_regression",
mechanism="censor_uw", eps=1.0).fit(seed=1).sample(seed=2)`` fits one confidential column with a
shipped model family (:data:`dpsynth.models.FAMILIES`) or a plain PyMC model-building function
(:mod:`dpsynth.models.user_function`), runs any registered mechanism on it by key
(:mod:`dpsynth.mechanisms`; ``mechanisms.list_mechanisms()``), reports its privacy
(:class:`SynthesizerPrivacy`) and returns synthetic DataFrames generated from ONE posterior draw
each (or from the released state of a model-free mechanism). :meth:`Synthesizer.save` and
:meth:`Synthesizer.load` read and write a self-describing JSON file (:mod:`dpsynth.synthesizer_files`).

Every synthetic data set handed out goes through the accounting: :meth:`Synthesizer.sample` and
:meth:`Synthesizer.release` book it in the ledger of the confidential data set
(:class:`dpsynth.ledger.Ledger`) before returning or writing it; only
:meth:`Synthesizer.sample_unaccounted` does not, for research, as its name says.

What a release covers (the book's introduction, "Neighbouring data sets"):

* the posterior draw, at the mechanism's epsilon under the synthesizer's neighbour relation;
* the released size: with one record *removed*, a DP count of the records (OpenDP, ``size_eps``,
  charged once) or a size declared public (``n_release``, or the rows of a public frame of
  covariates given at release); with one record *replaced*, ``n`` is public;
* the covariates carried into the file: the confidential file's own covariate rows reveal which
  records it holds, so they are released only under one record replaced (the default when there
  are covariates: they were declared public), or replaced by a public frame given at release.

Figures computed from the data (Delta, the censored count, n) are shown to the data holder only
(:meth:`SynthesizerPrivacy.diagnostics`), never written into a release.

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
from .mcmc_settings import RELEASE_MASS_MATRIX
from .models import FAMILIES, ModelFamily, OffsetFamily, PyMCFunctionFamily, family_class
from .models.user_function import import_function, qualname
from .privacy import check_neighbours, neighbours_phrase
from .release_size import DEFAULT_SIZE_EPS, ReleaseSize, dp_count
from .seeds import SeedLike, generator, stream
from .synthesizer_files import ChecksumError, confidential_path, jsonable
from .target import TargetEncoding
from .validation import (
    DataError,
    _is_number,
    check_bool,
    check_count,
    check_eps,
    check_optional_finite,
    check_positive,
    check_share,
    check_table_columns,
    positive_count,
)

if TYPE_CHECKING:  # pragma: no cover
    import os
    from pathlib import Path

    from .fitting import CompiledModel
    from .mcmc_settings import SamplerConfig

__all__ = [
    "Synthesizer",
    "SynthesizerPrivacy",
    "UnusableReleaseError",
    "CovariatesIgnoredWarning",
    "PyMCFunctionFamily",
    "CensoringWarning",
    "UnconvergedError",
    "ChecksumError",
    "FAMILIES",
    "confidential_path",
    "RELEASE_SAMPLER",
]

#: The MCMC settings a :class:`Synthesizer` uses unless told otherwise (on top of
#: :class:`~dpsynth.mcmc_settings.SamplerConfig`'s defaults): the low-rank modified mass matrix,
#: which halves the gradient evaluations of a regression with correlated coefficients (measured by
#: ``benchmarks/bench_release.py``) and leaves the posterior unchanged.
RELEASE_SAMPLER: Mapping = {"mass_matrix": RELEASE_MASS_MATRIX}


def __getattr__(name: str):
    if name == "MECHANISMS":  # the runnable registry keys, read from the mechanisms' specs
        return tuple(mechanisms.runnable_keys())
    raise AttributeError(f"module 'dpsynth.synthesizer' has no attribute {name!r}")


class CensoringWarning(UserWarning):
    """A censored fit censored more than the stated share of records: the mechanism mostly discarded the data."""


class UnconvergedError(RuntimeError):
    """A privacy figure was asked of a fit that failed its convergence checks."""


class CovariatesIgnoredWarning(UserWarning):
    """Covariates were given that the mechanism or the model does not use: their relation with the target is lost."""


class UnusableReleaseError(DataError):
    """A release was refused: its values are unusable (non-finite, outside the support or bounds, a fit that
    censored nearly every record); nothing was written or booked."""


@dataclass(frozen=True)
class SynthesizerPrivacy:
    """What a fitted :class:`Synthesizer` reports.

    Attributes
    ----------
    mechanism, name : str
        Registry key and display name.
    guarantee : str
        ``"none"``, ``"aDP"`` or ``"DP"``, from the mechanism's spec.
    relation : str
        The neighbour relation of the synthesizer's ledger and statement (``"remove"`` or ``"replace"``).
    delta : float
        Local Lipschitz bound (NaN for a model-free mechanism). Computed from the data: confidential.
    eps_remove, eps_replace : float
        Epsilon of one release's draw with one record removed / replaced.
    bound : float
        Censoring bound M (inf when not censored).
    n_censored, n : int
        Records censored at one or more draws, and records fitted. Confidential.
    rhat_max, ess_min : float
        Worst R-hat and bulk ESS over every fit the mechanism ran (NaN without MCMC).
    divergences : int
        Divergent transitions over every fit.
    converged : bool
        Whether every fit passed its checks.
    released : str
        What one release is, in words (``"one released posterior draw"``, or a model-free release).
    draws_kept : int
        Posterior draws the synthesizer keeps (1 for a model-free release): whoever holds it can
        release each of them, so holding it is worth ``draws_kept`` times eps.
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
    relation: str = "remove"
    draws_kept: int = 1
    extra: dict = field(default_factory=dict)

    @property
    def eps(self) -> float:
        """Epsilon of one release's draw under the synthesizer's relation."""
        return self.eps_remove if self.relation == "remove" else self.eps_replace

    @property
    def censored_share(self) -> float:
        """Share of the records censored."""
        return self.n_censored / self.n

    def statement(self) -> str:
        """The public statement of one release's draw: guarantee and eps under the relation (no figure of the data).

        The released size and any override are added by the release (:meth:`Synthesizer.release`).
        """
        kind = {
            "none": "not private",
            "aDP": "asymptotic DP: a local bound, for this data set only",
            "DP": "strict DP",
        }[self.guarantee]
        other = "replaced" if self.relation == "remove" else "removed"
        other_eps = self.eps_replace if self.relation == "remove" else self.eps_remove
        s = (
            f"{self.name} ({kind}): eps = {self.eps:.4g} with {neighbours_phrase(self.relation)} "
            f"({other_eps:.4g} with one record {other}), for {self.released}"
        )
        return s + ("" if self.converged else "; THE FIT FAILED ITS CONVERGENCE CHECKS") + "."

    def worth(self) -> str:
        """What holding the synthesizer (its kept draws) is worth under sequential composition."""
        k = self.draws_kept
        if not self.released.endswith("posterior draw"):
            return (
                f"it holds {self.released}: sharing it is worth its eps = {self.eps:.4g} with "
                f"{neighbours_phrase(self.relation)}, and the figures it holds of the data are confidential. Keep "
                f"it confidential."
            )
        return (
            f"it holds {k} posterior draw(s): whoever has it can release each of them, so sharing it is worth up "
            f"to {k} x {self.eps:.4g} = {k * self.eps:.4g} with {neighbours_phrase(self.relation)} (plus a "
            f"released size's eps). Keep it confidential."
        )

    def diagnostics(self) -> str:
        """The figures computed from the data, for the data holder only (never for publication)."""
        s = f"confidential (computed from the data; do not publish): n = {self.n}"
        if np.isfinite(self.delta):
            s += f", Delta = {self.delta:.4g}"
        if np.isfinite(self.bound):
            s += f", censoring bound M = {self.bound:.4g}, {self.n_censored} of {self.n} records censored"
        if np.isfinite(self.rhat_max):
            s += (
                f"; convergence: R-hat max {self.rhat_max:.3f}, bulk ESS min {self.ess_min:.0f}, "
                f"{self.divergences} divergence(s)"
            )
        return s + "."

    def to_dict(self) -> dict:
        """Plain-JSON dict (floats, ints, str, bool)."""
        return dataclasses.asdict(self)


def _show_progress(progress: bool) -> bool:
    """Progress bars only on a terminal (not in a pipe, a log file or a notebook's captured output)."""
    import sys

    return bool(progress) and sys.stderr.isatty()


def _bar(show: bool, desc: str, **kw):
    """A tqdm bar on standard error (disabled when not shown)."""
    from tqdm import tqdm

    return tqdm(desc=desc, disable=not show, leave=False, **kw)


class Synthesizer:
    """Differentially private synthesis of one confidential column of a DataFrame.

    Parameters
    ----------
    data : pandas.DataFrame
        The confidential column and the public covariates (and no other column).
    target : str
        The confidential column: continuous (floats), a count (integers) or categorical (a pandas
        ``Categorical``, strings or booleans, with public levels: see ``target_levels``). One
        column; several go to the whole-table release.
    covariates : sequence of str, optional
        Public columns, carried through to the synthetic data; numeric ones enter a regression
        family's design centred and scaled when their rows are public (``standardize``),
        categorical ones (strings, categories, booleans) as indicator columns of every level but
        the first (levels recorded at fit time).
    model : str or callable, optional
        A shipped family (:data:`dpsynth.models.FAMILIES`) or a PyMC model-building function
        (:mod:`dpsynth.models.user_function`). Default: from the target's *type* (never its
        values): ``lognormal`` / ``lognormal_regression`` for a continuous target, ``negbin`` for
        counts, ``multinomial`` for a categorical one (the regression when there are covariates).
    mechanism : str
        A registry key (``dpsynth.mechanisms.list_mechanisms()``).
    eps : float, optional
        The mechanism's epsilon with **one record removed** (the book's convention), required
        exactly when the mechanism takes one (its spec's ``takes_eps``). The statement and the
        ledger carry the figure under the synthesizer's relation (``neighbours``): with one
        record replaced, the default with covariates, it is ``2 eps`` for the model-based
        mechanisms; a DP reference (``censor_ref``) or a DP released size adds its own small
        epsilon, charged and stated.
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
        MCMC settings. Default: :class:`SamplerConfig` with ``mass_matrix="low_rank"``
        (:data:`RELEASE_SAMPLER`; a dict is read on top of it), which halves the gradient
        evaluations of a regression without changing the posterior.
    censor_warn_share : float
        A :class:`CensoringWarning` is raised when a censored fit censors more than this share.
    allow_unconverged : bool
        Report privacy figures of a fit that failed its convergence checks (else they raise);
        every release then records the override.
    neighbours : {"remove", "replace"}, optional
        The neighbour relation of the statement and the ledger. Default: ``"remove"`` (one record
        removed, the book's) without covariates; ``"replace"`` with covariates, whose rows (and so
        the number of records) were declared public and are carried into the release.
    n_release : int, optional
        A released size declared public (one record removed); by default the size is a DP count.
    size_eps : float
        Epsilon of the DP count of the released size (one record removed), charged once.
    keep_draws : int
        Posterior draws kept (evenly spaced over the pooled chains); each release uses one, and
        whoever holds the synthesizer could release all of them (:meth:`SynthesizerPrivacy.worth`).
    max_censored_share : float
        A release from a fit that censored more than this share of records is refused (the
        mechanism mostly discarded the data), unless ``allow_unusable=True`` at the release.
    retries : int
        A fit that fails its convergence checks is run again with twice the draws and tuning
        steps, at most this many times; :attr:`fit_log` says what was done.
    progress : bool
        Progress bars on fits (the sampler's, and one over the mechanism's fits) and releases,
        shown only when standard error is a terminal.
    target_levels : sequence, optional
        The public levels of a categorical target (required unless it is a pandas ``Categorical``,
        whose categories are taken, or boolean): the levels that occur in the confidential data are
        themselves a figure of it.
    standardize : bool, optional
        Centre and scale numeric covariates by their mean and standard deviation. Default: when
        their rows are public (one record replaced, the default with covariates), since the
        constants then cost nothing; with one record removed they would be figures of the data.
    design : CovariateDesign, optional
        A fixed encoding of the covariates (levels, public transforms and constants) instead of
        one recorded from ``data``; :class:`dpsynth.TableSynthesizer` gives one for the confidential
        columns it uses as predictors.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from dpsynth import Synthesizer
    >>> df = pd.DataFrame({"wage": np.random.default_rng(1).lognormal(6, 0.5, 300)})
    >>> s = Synthesizer(df, "wage", model="lognormal", mechanism="ph", eps=1.0,
    ...                 mechanism_params={"lower": 0, "upper": 20000}).fit()
    >>> s.privacy.guarantee
    'DP'
    >>> released = s.sample(seed=2)  # booked in the data set's ledger  # doctest: +SKIP
    """

    def __init__(
        self,
        data: pd.DataFrame,
        target: str,
        *,
        covariates: Sequence[str] | None = None,
        model: str | Callable | None = None,
        mechanism: str = "censor_ref",
        eps: float | None = None,
        model_params: Mapping | None = None,
        mechanism_params: Mapping | None = None,
        unit: float | None = None,
        offset: float | None = None,
        sampler: SamplerConfig | Mapping | None = None,
        censor_warn_share: float = 0.5,
        allow_unconverged: bool = False,
        neighbours: str | None = None,
        n_release: int | None = None,
        size_eps: float = DEFAULT_SIZE_EPS,
        keep_draws: int = 10,
        max_censored_share: float = 0.9,
        retries: int = 2,
        progress: bool = True,
        target_levels: Sequence | None = None,
        standardize: bool | None = None,
        design: CovariateDesign | None = None,
    ) -> None:
        from .ledger import dataset_id

        if isinstance(target, (list, tuple)):
            raise DataError(
                f"`target` must be one column name; got {list(target)!r}. To synthesize several "
                f"confidential columns together, keeping their joint relations, use the whole-table "
                f"release (dpsynth.TableSynthesizer)."
            )
        covs = check_table_columns(data, target, covariates)
        self.encoding = TargetEncoding.from_series(
            data[target], levels=target_levels, unit=None if unit is None else check_positive(unit, "unit")
        )
        if model is None:
            model = self.encoding.default_model(bool(covs))
        self._settings(
            target,
            covs,
            model,
            mechanism,
            eps,
            model_params,
            unit,
            offset,
            sampler,
            censor_warn_share,
            allow_unconverged,
        )
        self.relation = check_neighbours(neighbours if neighbours is not None else ("replace" if covs else "remove"))
        self._check_kinds()
        self.n_release = None if n_release is None else positive_count(n_release, "n_release")
        if self.n_release is not None and self.relation == "replace":
            raise DataError(
                "`n_release` declares a public size under one record removed; with one record replaced the "
                "size is n. Give a public frame of covariates at release (data=) for another size."
            )
        self.size_eps = check_eps(size_eps, "size_eps")
        self.keep_draws = positive_count(keep_draws, "keep_draws")
        self.max_censored_share = check_share(max_censored_share, "max_censored_share")
        self.retries = check_count(retries, "retries", minimum=0)
        self.progress = check_bool(progress, "progress")
        self.dataset = dataset_id(data, [target, *covs], self.relation)
        self._size: ReleaseSize | None = None
        self.columns = list(data.columns)
        self.dtypes = {c: str(data[c].dtype) for c in self.columns}
        self.public = data[covs].reset_index(drop=True).copy()
        if design is not None:
            if not isinstance(design, CovariateDesign) or tuple(design.columns) != tuple(covs):
                raise DataError(f"`design` must be a CovariateDesign of the covariates {covs}; got {design!r}.")
            if standardize is not None:
                raise DataError("give `design` (a fixed encoding of the covariates) or `standardize`, not both.")
            self._design = design
        else:
            if standardize is None:
                standardize = self.relation == "replace"
            elif check_bool(standardize, "standardize") and self.relation == "remove":
                raise DataError(
                    "`standardize=True` with one record removed would centre the covariates at figures of "
                    "the data; centre them at public constants yourself, or use neighbours='replace' "
                    "(their rows are then public)."
                )
            self._design = CovariateDesign.from_frame(self.public, covs, standardize=standardize)
        #: Set by a whole-table release for its parts: the table, not the part, sets the released size.
        self._table_part = False
        self._x = self.encoding.to_model(data[target])
        self._X = self._design.matrix(self.public)
        self._run_params = self._resolve_params(mechanism_params)
        self._warn_ignored_covariates()
        self.draws: dict | None = None
        self._release_state = None
        self._privacy: SynthesizerPrivacy | None = None
        self._weights: np.ndarray | None = None
        self._cm: CompiledModel | None = None
        self._simulator = None

    # ------------------------------------------------------------------ settings and data
    def _settings(
        self,
        target,
        covs,
        model,
        mechanism,
        eps,
        model_params,
        unit,
        offset,
        sampler,
        censor_warn_share,
        allow_unconverged,
    ) -> None:
        from .mcmc_settings import SamplerConfig

        self.target, self.covariates = target, covs
        if isinstance(model, str):
            family_class(model)  # an unknown name raises, listing the shipped ones
        elif not callable(model):
            raise DataError(f"`model` must be a family name or a function; got {model!r}.")
        self.model = model
        if not isinstance(mechanism, str) or mechanisms.lookup_name(mechanism) is None:
            raise DataError(
                f"`mechanism` must be one of the registry keys {mechanisms.runnable_keys()}; got {mechanism!r}."
            )
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
            sampler = SamplerConfig(**{**RELEASE_SAMPLER, **sampler})
        if sampler is not None and not isinstance(sampler, SamplerConfig):
            raise DataError(f"`sampler` must be a SamplerConfig or a dict of its fields; got {sampler!r}.")
        self.sampler = sampler or SamplerConfig(**RELEASE_SAMPLER)
        self.censor_warn_share = check_share(censor_warn_share, "censor_warn_share")
        self.allow_unconverged = check_bool(allow_unconverged, "allow_unconverged")

    def _check_kinds(self) -> None:
        """The target's kind must suit the model and the mechanism."""
        kind = self.encoding.kind
        if kind not in self.spec.targets:
            raise DataError(
                f"the {self.spec.key} mechanism synthesizes {' or '.join(self.spec.targets)} variables; "
                f"target {self.target!r} is {kind}. Choose another mechanism (e.g. censor_ref)."
            )
        if isinstance(self.model, str) and self.spec.uses_model:
            fam = FAMILIES[self.model]
            if (kind == "categorical") != bool(fam.categorical):
                want = self.encoding.default_model(bool(self.covariates))
                raise DataError(
                    f"the {self.model} model does not synthesize a {kind} target ({self.target!r}); use "
                    f"model={want!r}, or leave `model` out to take it."
                )

    def _warn_ignored_covariates(self) -> None:
        """Say what is lost when covariates are given that the mechanism or the model does not use."""
        if not self.covariates:
            return
        lost = (
            f"the released file carries the covariates, but the synthetic {self.target!r} does not depend on "
            f"them: the regression of {self.target!r} on {self.covariates} is lost"
        )
        if self.spec.covariate_use == "none":
            msg = (
                f"the {self.spec.key} mechanism synthesizes the marginal of {self.target!r}: {lost}. To keep it, "
                f"use a model-based mechanism, e.g. mechanism='censor_ref' with a regression model."
            )
        elif self.spec.covariate_use == "cells":
            numeric = [c for c in self.covariates if c not in self.levels]
            cells = self._run_params.get("cells")
            cells = [c for c in self.covariates if c in self.levels] if cells is None else list(cells)
            unused = [c for c in self.covariates if c not in cells]
            if not unused:
                return
            msg = (
                f"the {self.spec.key} mechanism uses covariates only as cells of categorical levels "
                f"({cells or 'none'}): the synthetic {self.target!r} does not depend on {unused}"
                + (f" (numeric: {numeric})" if numeric else "")
                + ". To keep that relation, use a model-based "
                "mechanism, e.g. mechanism='censor_ref' with a regression model."
            )
        elif self.spec.uses_model and not self._takes_covariates():
            want = self.encoding.default_model(True)
            msg = (
                f"the {self.model} model takes no covariates: {lost}. To keep it, use model={want!r} (or leave "
                f"`model` out)."
            )
        else:
            return
        warnings.warn(msg, CovariatesIgnoredWarning, stacklevel=3)

    def _resolve_params(self, given: Mapping | None) -> dict:
        """The mechanism's checked parameters in the model's unit (and its checks against the data)."""
        given = dict(given or {})
        self.mechanism_params = {
            k: v
            for k, v in given.items()
            if k not in self.spec.params or (self.spec.params[k].cli is not None and not self.spec.params[k].table)
        }
        converted = {}
        for k, v in given.items():
            p = self.spec.params.get(k)
            if p is not None and p.table and isinstance(v, pd.DataFrame):
                v = self._model_arrays(v, k)
            elif p is not None and p.in_data_unit and self.unit is not None and _is_number(v):
                v = float(v) / self.unit
            converted[k] = v
        K = self.encoding.n_levels
        fills = {
            "public_size": self._public_n(),
            "levels_lower": None if K is None else -0.5,
            "levels_upper": None if K is None else K - 0.5,
            "levels_bins": K,
        }
        for k, p in self.spec.params.items():  # public values for parameters that may take them
            if p.fill is not None and converted.get(k) is None and fills.get(p.fill) is not None:
                converted[k] = fills[p.fill]
        params = self.spec.resolve(converted, self.eps)
        self.eps = params.get("eps")
        if self.spec.check_data is not None and self._x is not None:
            self.spec.check_data(self._x, params)
        return params

    def _public_n(self) -> int | None:
        """The number of records when it is public: declared (``n_release``), or n with one record replaced."""
        if self.n_release is not None:
            return self.n_release
        if self.relation == "replace" and self._x is not None:
            return int(self._x.size)
        return None

    def _model_arrays(self, frame: pd.DataFrame, name: str) -> tuple[np.ndarray, np.ndarray | None]:
        """A frame laid out like the confidential data, as the model's ``(x, covariates)``."""
        missing = [c for c in [self.target, *self.covariates] if c not in frame.columns]
        if missing:
            raise DataError(
                f"`{name}` lacks column(s) {missing}; it must be laid out like the confidential data "
                f"(columns {[self.target, *self.covariates]})."
            )
        x = self.encoding.to_model(frame[self.target])
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
        kw = dict(self.model_params)
        if FAMILIES[self.model].categorical:
            kw["n_levels"] = self.encoding.n_levels
        fam = FAMILIES[self.model](**kw)
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
            raise DataError(
                "this synthesizer was loaded without its confidential data; it can sample and release, "
                "not fit. Build a new Synthesizer from the data to refit."
            )
        uses_model = self.spec.uses_model
        show = _show_progress(self.progress)
        with _bar(show, f"{self.spec.name}: fits", unit="fit") as bar:
            ctx = mechanisms.RunContext(
                self._x,
                family=self.family() if uses_model else None,
                covariates=self._model_covariates(self._X) if uses_model else None,
                public=self.public,
                sampler=dataclasses.replace(self.sampler, progress=show),
                seed_fn=lambda *parts: stream(seed, "synthesizer", *parts),
                compiled=self._compiled() if uses_model else None,
                retries=self.retries,
                on_fit=lambda step: (bar.set_postfix_str(step), bar.update()),
            )
            res = self.spec.run(ctx, dict(self._run_params))
        #: What the fit did besides fitting once (retries of fits that failed their checks).
        self.fit_log = list(ctx.log)
        p = res.privacy
        self._privacy = SynthesizerPrivacy(
            mechanism=self.mechanism,
            name=res.name,
            guarantee=p.guarantee,
            delta=float(p.delta),
            eps_remove=float(p.eps),
            eps_replace=float(p.eps_replace),
            bound=float(p.bound),
            n_censored=int(p.n_censored),
            n=int(self._x.size),
            rhat_max=float(res.rhat_max),
            ess_min=float(res.ess_min),
            divergences=res.divergences,
            converged=res.converged,
            released="one released posterior draw" if res.fit is not None else f"the release of {res.name}",
            relation=self.relation,
            draws_kept=1 if res.fit is None else min(self.keep_draws, res.fit.n_draws),
            extra=jsonable(
                {
                    **{k: v for k, v in p.extra.items() if isinstance(v, (int, float, str, bool, np.number))},
                    "retries": sum(1 for line in ctx.log if "refitted" in line),
                }
            ),
        )
        if res.fit is not None:
            S = res.fit.n_draws
            keep = np.unique(np.linspace(0, S - 1, min(self.keep_draws, S)).round().astype(int))
            self.draws = {k: np.asarray(v)[keep] for k, v in res.fit.draws.items()}
            self._weights = np.asarray(res.weights, dtype=float)
            self._release_state = None
        else:
            self.draws, self._weights, self._release_state = None, None, res.release
        self._size = self._released_size()
        self._warn_censoring()
        return self

    def _released_size(self) -> ReleaseSize | None:
        """The size of a release over the fitted records (None: a public frame must be given at release)."""
        if self._table_part:
            return None  # the table sets its size once
        if self.relation == "replace":
            return ReleaseSize(n=int(self._x.size), how="replace")
        if self.covariates:
            return None  # the file's own covariate rows would reveal which records it holds
        if self.n_release is not None:
            return ReleaseSize(n=self.n_release, how="public")
        return dp_count(self._x, self.size_eps)

    def _warn_censoring(self) -> None:
        p = self._privacy
        if np.isfinite(p.bound) and p.censored_share > self.censor_warn_share:
            warnings.warn(
                f"{p.name} censored {p.n_censored} of {p.n} records ({p.censored_share:.0%}, more than "
                f"censor_warn_share={self.censor_warn_share:g}): the mechanism has mostly discarded the data. A "
                f"continuous density carries its unit: choose a public `unit=` (or `offset=`) that puts the records' "
                f"log-likelihoods within +-eps/2, or raise eps.",
                CensoringWarning,
                stacklevel=2,
            )

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
                f"draws/tune, or pass allow_unconverged=True to accept it."
            )
        return self._privacy

    @property
    def n_draws(self) -> int:
        """Posterior draws available for releases (1 for a model-free mechanism, released once)."""
        self.privacy  # noqa: B018 - raises if unfitted or unconverged
        return 1 if self.draws is None else int(next(iter(self.draws.values())).shape[0])

    # ------------------------------------------------------------------ synthetic values
    def _synthetic_frame(self, public: pd.DataFrame, seed: SeedLike, draw: int) -> pd.DataFrame:
        """One synthetic data set for the rows of ``public`` (covariates; no columns without them), from ``draw``.

        ``attrs["model_values"]`` holds the synthetic values on the model's scale (for the checks).
        """
        X = self.design(public)
        n = X.shape[0]
        rng = generator(stream(seed, "records"))
        if self._release_state is not None:
            values = self._release_state.sample(n, rng, public[self.covariates].reset_index(drop=True))
        elif callable(self.model):
            if self._simulator is None:
                from .models import ModelSimulator

                self._simulator = ModelSimulator(self._compiled())
            values = self._simulator({k: v[draw] for k, v in self.draws.items()}, n, X, rng)
        else:
            fam = self.family()
            with np.errstate(over="ignore", under="ignore"):
                values = fam.simulate(
                    {k: np.repeat(v[draw : draw + 1], n, axis=0) for k, v in self.draws.items()},
                    rng,
                    self._model_covariates(X),
                )
        values = np.asarray(values, dtype=float)
        out = public[self.covariates].reset_index(drop=True).copy()
        out[self.target] = self.encoding.from_model(values)
        out = out[[c for c in self.columns]]
        out.attrs["model_values"] = values
        return out

    def _pick_draw(self, seed: SeedLike, draw: int | None, used=()) -> int:
        S = self.n_draws
        if draw is not None:
            if isinstance(draw, bool) or not isinstance(draw, (int, np.integer)) or not 0 <= draw < S:
                raise DataError(f"`draw` must be an integer in [0, {S}); got {draw!r}.")
            return int(draw)
        free = [s for s in range(S) if s not in used]
        rng = generator(stream(seed, "draw"))
        return int(rng.choice(free)) if free else int(rng.integers(S))

    def sample_unaccounted(
        self, seed: SeedLike = None, *, data: pd.DataFrame | None = None, draw: int | None = None
    ) -> pd.DataFrame:
        """For research only: one synthetic data set that is NOT booked in any ledger. Do not publish it.

        It has one row per fitted record (or per row of ``data``), whatever the neighbour relation,
        so under one record removed even its size is outside the guarantee. Studies use it to
        measure utility; a release uses :meth:`sample` or :meth:`release`.
        """
        p = self.privacy
        public = self.public if data is None else self._public_frame(data)
        if data is None and not self.covariates and self._x is not None:
            public = pd.DataFrame(index=range(self._x.size))
        base = stream(seed, "sample")
        out = self._synthetic_frame(public, base, self._pick_draw(base, draw))
        out.attrs = {
            "privacy_statement": "NOT A RELEASE: drawn for research, not booked in any ledger. " + p.statement(),
            "accounted": False,
        }
        return out

    def _public_frame(self, data) -> pd.DataFrame:
        if not isinstance(data, pd.DataFrame):
            raise DataError(f"`data` must be a DataFrame of the public covariates; got {type(data).__name__}.")
        missing = [c for c in self.covariates if c not in data.columns]
        if missing:
            raise DataError(f"`data` lacks the covariate column(s) {missing}; its columns are {list(data.columns)}.")
        if len(data) == 0:
            raise DataError("`data` has no rows: a release has one synthetic record per row of public covariates.")
        frame = data[self.covariates].reset_index(drop=True)
        if not self.covariates:
            frame = pd.DataFrame(index=range(len(data)))
        self.design(frame)  # an unseen level fails here, before the ledger is touched
        return frame

    def _release_frame(self, data) -> tuple[pd.DataFrame, ReleaseSize]:
        """The public rows of a release and how its size is set."""
        if data is not None:
            frame = self._public_frame(data)
            return frame, ReleaseSize(n=len(frame), how="public")
        if self._size is None:
            raise DataError(
                "with one record removed, releasing the confidential file's own covariate rows would reveal which "
                "records it holds (and how many). Give a public frame of covariates for the synthetic records "
                "(data=... / --covariates-from), or fit with neighbours='replace' (the covariate rows and n are then "
                "public and eps is the one-record-replaced figure)."
            )
        if self.covariates:
            return self.public, self._size
        return pd.DataFrame(index=range(self._size.n)), self._size

    def _unusable(self, values: np.ndarray) -> list[str]:
        """Why a release's values (on the model's scale) are unusable; empty when they are fine."""
        p = self._privacy
        reasons = []
        if np.isfinite(p.bound) and p.censored_share > self.max_censored_share:
            reasons.append(
                f"the fit censored {p.censored_share:.0%} of the records (more than max_censored_share="
                f"{self.max_censored_share:g}): the mechanism discarded nearly all the data"
            )
        finite = np.isfinite(values)
        if not finite.all():
            reasons.append(
                f"{int((~finite).sum())} synthetic value(s) are not finite (a draw far in the tails overflowed)"
            )
        v = values[finite]
        if v.size and isinstance(self.model, str) and self.spec.uses_model:
            try:
                self.family().check_data(
                    v, None if not self._takes_covariates() else np.ones((v.size, self._X.shape[1]))
                )
            except DataError as e:
                why = " ".join(str(e).split())
                reasons.append(f"synthetic values outside the {self.model} model's support ({why})")
        lo, hi = self._run_params.get("lower"), self._run_params.get("upper")
        if v.size and lo is not None and hi is not None and ((v < lo) | (v > hi)).any():
            reasons.append(
                f"synthetic values outside the public bounds [{lo * (self.unit or 1):g}, {hi * (self.unit or 1):g}]"
            )
        return reasons

    # ------------------------------------------------------------------ releases (booked)
    def sample(
        self,
        seed: SeedLike = None,
        *,
        data: pd.DataFrame | None = None,
        budget: float | None = None,
        allow_unusable: bool = False,
    ) -> pd.DataFrame:
        """One released synthetic data set, booked in the data set's ledger, returned in memory.

        As :meth:`release` without writing a file. Every record comes from ONE posterior draw
        (one not released before while one is left, so each release spends its own eps).
        """
        return self._release(None, seed=seed, data=data, budget=budget, force=False, allow_unusable=allow_unusable)

    def release(
        self,
        path_out: str | os.PathLike,
        *,
        seed: SeedLike = None,
        data: pd.DataFrame | None = None,
        budget: float | None = None,
        force: bool = False,
        allow_unusable: bool = False,
    ) -> pd.DataFrame:
        """Release one synthetic data set: book it in the data set's ledger and write it (CSV or Parquet).

        Parameters
        ----------
        path_out : path-like
            ``.csv`` or ``.parquet``; its folder must exist, and an existing file is refused unless
            ``force=True``. The file holds the synthetic data only (no figure of the confidential data).
        seed : int or SeedSequence, optional
            Chooses the draw and the records.
        data : pandas.DataFrame, optional
            A public frame of covariates for the synthetic records (its rows set the released size,
            declared public). Default: the fitted records' (see the module docstring for what that covers).
        budget : float, optional
            A strict-DP release that would bring the ledger's total above it is refused
            (:class:`dpsynth.ledger.BudgetExceeded`).
        allow_unusable : bool
            Release values that fail the usability checks (non-finite, outside the support or the
            public bounds, a fit that censored nearly every record); the statement and the ledger
            record it. Otherwise such a release is refused (:class:`UnusableReleaseError`).

        Returns
        -------
        pandas.DataFrame
            The released data; ``attrs["privacy_statement"]`` says what it covers.
        """
        return self._release(path_out, seed=seed, data=data, budget=budget, force=force, allow_unusable=allow_unusable)

    def _release(self, path_out, *, seed, data, budget, force, allow_unusable) -> pd.DataFrame:
        from .ledger import Ledger
        from .synthesizer_files import check_output_path, write_frame

        p = self.privacy  # raises for an unconverged fit unless allow_unconverged
        out = None if path_out is None else check_output_path(path_out, force=check_bool(force, "force"))
        allow_unusable = check_bool(allow_unusable, "allow_unusable")
        frame, size = self._release_frame(data)
        overrides = [] if p.converged else ["unconverged fit (allow_unconverged)"]
        ident = self.checksum
        with (
            _bar(_show_progress(self.progress), "release", total=3, unit="step") as bar,
            Ledger(self.dataset, self.relation).locked() as book,
        ):
            mine = [r for r in book.records() if r["kind"] == "release" and r["synthesizer"] == ident]
            base = stream(seed, "release")
            draw = self._pick_draw(base, None, used={r["draw"] for r in mine})
            eps_draw = 0.0 if any(r["draw"] == draw for r in mine) else p.eps
            eps_size = size.eps if size.how == "dp_count" and not any(r["eps_size"] > 0 for r in mine) else 0.0
            spend = (eps_draw if p.guarantee == "DP" else 0.0) + eps_size
            book.check_budget(p.guarantee, spend, budget)
            df = self._synthetic_frame(frame, stream(base, "sample"), draw)
            bar.update()
            reasons = self._unusable(np.asarray(df.attrs.pop("model_values"), dtype=float))
            if reasons and not allow_unusable:
                raise UnusableReleaseError(
                    "release refused: " + "; ".join(reasons) + ". Nothing was written or booked. Fix the fit (a "
                    "larger eps, a public unit or offset, longer chains), or pass allow_unusable=True "
                    "(--allow-unusable), which the statement and the ledger record."
                )
            overrides += [f"unusable values released: {r}" for r in reasons]
            statement = self._release_statement(size, eps_size, spend, overrides)
            df.attrs = {
                "privacy_statement": statement,
                "mechanism": p.mechanism,
                "guarantee": p.guarantee,
                "relation": p.relation,
                "eps": p.eps,
                "eps_size": eps_size,
                "spend": spend,
                "rows": len(df),
                "size": size.how,
                "draw": draw,
                "overrides": overrides,
                "accounted": True,
            }
            if out is not None:
                write_frame(df, out)
            bar.update()
            try:
                book.append(
                    mechanism=p.mechanism,
                    name=p.name,
                    guarantee=p.guarantee,
                    eps=p.eps,
                    eps_size=eps_size,
                    spend=spend,
                    adp_eps=0.0 if p.guarantee == "DP" else eps_draw,
                    draw=draw,
                    rows=len(df),
                    output=str(out) if out is not None else "<in memory>",
                    synthesizer=ident,
                    overrides=overrides,
                )
            except BaseException:
                if out is not None and out.exists():
                    out.unlink()  # not booked: not released
                raise
            bar.update()
        return df

    def _release_statement(self, size: ReleaseSize, eps_size: float, spend: float, overrides: list) -> str:
        p = self._privacy
        s = p.statement() + f" Released size: {size.phrase()}"
        if size.how == "dp_count":
            s += " (charged in this release)" if eps_size > 0 else " (already charged by an earlier release)"
        s += f". This release added eps = {spend:.4g} of strict DP to the data set's ledger"
        if p.guarantee != "DP":
            s += f" (its {p.guarantee} draw is listed apart, not summed)"
        s += "."
        if overrides:
            s += " Released with override(s): " + "; ".join(overrides) + "."
        return s

    # ------------------------------------------------------------------ report (confidential)
    def report(
        self,
        released: pd.DataFrame,
        out_dir: str | os.PathLike,
        *,
        original: pd.DataFrame | None = None,
        force: bool = False,
        title: str | None = None,
    ) -> Path:
        """Write a CONFIDENTIAL page that sets a release against the confidential data (:mod:`dpsynth.report`).

        ``out_dir/report.html`` and its PNG figures show the privacy statement and the diagnostics,
        the target's marginal, the regression on the covariates and the pMSE, for the data holder only.

        Parameters
        ----------
        released : pandas.DataFrame
            A data set released by this synthesizer (:meth:`sample`, or the file :meth:`release` wrote).
        out_dir : path-like
            The report's folder (created if its parent exists); an existing report is refused unless ``force``.
        original : pandas.DataFrame, optional
            The confidential data; by default the data the synthesizer was fitted on. A loaded
            synthesizer holds no confidential data: pass it here.
        force : bool
            Replace an existing report.
        title : str, optional
            The page's title.

        Returns
        -------
        pathlib.Path
            The HTML file written.
        """
        from .report import write_report

        p = self.privacy  # raises for an unfitted synthesizer, or an unconverged fit unless allow_unconverged
        if original is None:
            if self._x is None:
                raise DataError(
                    "this synthesizer was loaded without its confidential data; pass the confidential "
                    "data explicitly: report(released, out_dir, original=df) (on the command line "
                    "--data FILE)."
                )
            original = self.public.copy()
            original[self.target] = self.encoding.from_model(self._x)
            original = original[self.columns]
        return write_report(
            original,
            released,
            target=self.target,
            covariates=self.covariates,
            statement=p.statement(),
            diagnostics=p.diagnostics(),
            out_dir=out_dir,
            title=title,
            force=force,
            levels=self.encoding.levels,
        )

    # ------------------------------------------------------------------ save / load
    def _content(self) -> dict:
        if self._privacy is None:
            raise DataError("fit the synthesizer before saving it.")
        if callable(self.model):
            spec = {"kind": "function", "function": qualname(self.model)}
            import_function(spec["function"])  # fails now, not at load time, for a lambda or local function
        else:
            spec = {"kind": "family", "family": self.model, "params": jsonable(self.model_params)}
        public = {
            c: (
                self.public[c].astype(str).tolist()
                if c in self.levels
                else self.public[c].to_numpy(dtype=float).tolist()
            )
            for c in self.covariates
        }
        size = None if self._size is None else dataclasses.asdict(self._size)
        return jsonable(
            {
                "confidential": True,
                "worth": self._privacy.worth(),
                "model": spec,
                "settings": {
                    "target": self.target,
                    "covariates": self.covariates,
                    "columns": self.columns,
                    "dtypes": self.dtypes,
                    "mechanism": self.mechanism,
                    "eps": self.eps,
                    "mechanism_params": self.mechanism_params,
                    "unit": self.unit,
                    "offset": self.offset,
                    "sampler": dataclasses.asdict(self.sampler),
                    "censor_warn_share": self.censor_warn_share,
                    "allow_unconverged": self.allow_unconverged,
                    "relation": self.relation,
                    "n_release": self.n_release,
                    "size_eps": self.size_eps,
                    "keep_draws": self.keep_draws,
                    "max_censored_share": self.max_censored_share,
                    "retries": self.retries,
                    "progress": self.progress,
                },
                "dataset": self.dataset,
                "size": size,
                "target": self.encoding.to_dict(),
                "levels": self.levels,
                "scaling": {c: list(v) for c, v in self._design.scaling.items()},
                "transforms": dict(self._design.transforms),
                "public_covariates": public,
                "privacy": self._privacy.to_dict(),
                "draws": None if self.draws is None else {k: v for k, v in self.draws.items()},
                "release": None if self._release_state is None else self._release_state.to_dict(),
            }
        )

    def save(self, path: str | os.PathLike, *, force: bool = False, include_confidential: bool = False) -> Path:
        """Write the fitted synthesizer to a JSON file (no pickle), owner-readable only, with a SHA-256 of its contents.

        The file holds what later releases need: the kept posterior draws (``keep_draws``) or a
        model-free mechanism's release, the model (family name and parameters, or the model
        function's ``module:qualname``), the settings, the covariate levels and public covariates,
        the data set's id (which ledger its releases are booked in) and the privacy report. It is
        marked confidential and written with permissions 0o600: it holds several posterior draws,
        and whoever has it can release each of them (its ``worth``, :meth:`SynthesizerPrivacy.worth`),
        and the report's figures computed from the data (Delta, the censored count, n). It never
        holds the confidential column or the record weights; with ``include_confidential=True``
        they go to ``<stem>.CONFIDENTIAL.json`` beside it.

        Returns
        -------
        pathlib.Path
            The path written.
        """
        from .synthesizer_files import check_output_path, write_confidential, write_saved

        out = check_output_path(path, force=check_bool(force, "force"), suffixes=(".json",))
        written = write_saved(out, self._content())
        if include_confidential:
            write_confidential(written, self.target, self.encoding.from_model(self._x), self._weights)
        return written

    @classmethod
    def load(cls, path: str | os.PathLike) -> Synthesizer:
        """Read a saved synthesizer, check its SHA-256 and re-derive what its settings determine.

        The SHA-256 catches accidental edits and corruption; it is not a signature (whoever can edit
        the file can recompute it). So the privacy report is also re-derived: the guarantee from the
        mechanism's spec, the epsilon from its settings where they determine it (a censored
        likelihood's ``2M``, a histogram's noise), ``Delta <= M`` for a censored one. A mismatch is
        an error. The loaded synthesizer samples and releases without the confidential data; it
        cannot refit.
        """
        from pathlib import Path

        from .synthesizer_files import read_saved

        path = Path(path)
        content = read_saved(path)
        if content.get("kind") == "table":
            raise DataError(f"{path} is a whole-table synthesizer; load it with dpsynth.TableSynthesizer.load.")
        return cls._from_content(content, path)

    @classmethod
    def _from_content(cls, content: dict, path, public: pd.DataFrame | None = None) -> Synthesizer:
        """A synthesizer from saved contents (``public``: its covariate rows, when the contents do not hold them)."""
        st = content["settings"]
        spec = content["model"]
        model = spec["family"] if spec["kind"] == "family" else import_function(spec["function"])
        self = cls.__new__(cls)
        self.encoding = TargetEncoding.from_dict(content["target"])
        self._settings(
            st["target"],
            st["covariates"],
            model,
            st["mechanism"],
            st["eps"],
            spec.get("params"),
            st["unit"],
            st["offset"],
            st["sampler"],
            st["censor_warn_share"],
            st["allow_unconverged"],
        )
        self.relation = check_neighbours(st["relation"])
        self.n_release, self.size_eps = st["n_release"], float(st["size_eps"])
        self.keep_draws, self.max_censored_share = int(st["keep_draws"]), float(st["max_censored_share"])
        self.retries, self.fit_log, self.progress = int(st["retries"]), [], bool(st.get("progress", True))
        self.dataset = str(content["dataset"])
        self._size = None if content["size"] is None else ReleaseSize(**content["size"])
        self.columns, self.dtypes = st["columns"], st["dtypes"]
        self._design = CovariateDesign(
            columns=tuple(self.covariates),
            levels=content["levels"],
            scaling={c: tuple(v) for c, v in content["scaling"].items()},
            transforms=dict(content.get("transforms") or {}),
        )
        self._table_part = False
        if public is None:
            public = pd.DataFrame(
                {c: content["public_covariates"][c] for c in self.covariates}, columns=self.covariates
            )
            for c in self.covariates:
                if c not in self.levels:
                    public[c] = public[c].astype(self.dtypes[c])
        self.public = public[self.covariates].reset_index(drop=True)
        self._x = None
        self._X = self.design(self.public)
        self._run_params = self._resolve_params(st["mechanism_params"])
        self._privacy = SynthesizerPrivacy(**content["privacy"])
        self._rederive(path)
        self.draws = (
            None if content["draws"] is None else {k: np.asarray(v, dtype=float) for k, v in content["draws"].items()}
        )
        rel = content.get("release")
        self._release_state = None if rel is None else self.spec.release_type.from_dict(rel)
        self._weights, self._cm, self._simulator = None, None, None
        self.path = path
        return self

    def _rederive(self, path) -> None:
        """Check a loaded report against what the mechanism's settings determine."""
        from .privacy import CENSOR_TOL

        p, spec = self._privacy, self.spec
        problems = []
        if p.mechanism != spec.key or p.guarantee != spec.guarantee:
            problems.append(
                f"its report says {p.mechanism!r} with guarantee {p.guarantee!r}, but the mechanism "
                f"{spec.key!r} is {spec.guarantee!r}"
            )
        if p.relation != self.relation:
            problems.append(f"its report is stated with {p.relation!r}, its settings with {self.relation!r}")
        one_signed = False if (self.offset is not None or callable(self.model)) else FAMILIES[self.model].one_signed
        if spec.declared_eps is not None:
            want = spec.declared_eps(self._run_params, one_signed, p.extra)
            have = (p.eps_remove, p.eps_replace)
            if not np.allclose(have, want, rtol=1e-9, atol=0.0):
                problems.append(
                    f"its report gives eps = {have[0]:.6g} / {have[1]:.6g} (removed / replaced), but its "
                    f"settings give {want[0]:.6g} / {want[1]:.6g}"
                )
        if spec.takes_eps and np.isfinite(p.bound):
            from .mechanisms.contract import censoring_bound

            M = censoring_bound(self.eps, one_signed and "reference_source" not in p.extra)
            if not np.isclose(p.bound, M):
                problems.append(f"its censoring bound M = {p.bound:.6g} is not the {M:.6g} its eps gives")
            if not p.delta <= p.bound + CENSOR_TOL:
                problems.append(f"its Delta = {p.delta:.6g} exceeds its censoring bound M = {p.bound:.6g}")
        if problems:
            raise DataError(
                f"{path}: refusing to load: " + "; ".join(problems) + ". The file was edited (its "
                "checksum recomputed) or is corrupted; use the file `save` wrote."
            )

    @property
    def checksum(self) -> str:
        """SHA-256 of the synthesizer's saved contents (identifies it in a ledger)."""
        from .synthesizer_files import digest

        return digest(self._content())
