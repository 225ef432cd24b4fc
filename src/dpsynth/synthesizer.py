"""One object from a DataFrame to a released synthetic data set: :class:`Synthesizer`.

``Synthesizer(df, target="wage", covariates=["region"], eps=1.0).fit(seed=1).release("out.csv")``
fits one confidential column with a shipped model family (:data:`dpsynth.models.FAMILIES`) or a
plain PyMC model-building function (:mod:`dpsynth.models.user_function`), runs any registered
mechanism on it by key (:mod:`dpsynth.mechanisms`; by default, ``mechanism="auto"``, the one the
book's decision table picks from public facts, :mod:`dpsynth.choice`), reports its privacy
(:class:`~dpsynth.release.statement.SynthesizerPrivacy`) and releases synthetic DataFrames generated from ONE
posterior draw each (or from the released state of a model-free mechanism).

A synthesizer goes in three steps, each a module of its own:

1. its **configuration** (:class:`~dpsynth.synthesizer_config.SynthesizerConfig`): the keyword arguments, each
   checked alone by its validator;
2. its **plan** (:class:`~dpsynth.synthesizer_plan.SynthesizerPlan`), computed from the configuration and the
   public facts of the data before anything is fitted: the mechanism (named, or picked by ``auto``), the
   model, the sampler, the neighbour relation, the covariates' design, the mechanism's parameters and
   the budget (:mod:`dpsynth.release.budget`);
3. its **fitted state** (:class:`~dpsynth.synthesizer_fit.FittedState`), left by :meth:`Synthesizer.fit`:
   the kept draws or a model-free release, the privacy report, the released size, the fit's id.

``eps`` is the total that the statement publishes for the first release, under one neighbour
relation decided before the fit (named, or ``"replace"`` when public covariates are carried, whose
rows make ``n`` public); the released size, a DP reference and the draw are shares carved out of it
by the public rule of :mod:`dpsynth.release.budget`, and each further release from another draw adds the
draw's share.

Every synthetic data set handed out goes through the one release protocol
(:mod:`dpsynth.release.protocol`), which the synthesizer takes part in through its public interface
(:class:`~dpsynth.release.protocol.Releaser`): :meth:`Synthesizer.sample` and :meth:`Synthesizer.release` book
it in the ledger of the confidential data set (:mod:`dpsynth.release.ledger`) before returning or writing
it; only :meth:`Synthesizer.sample_unaccounted`, on a synthesizer fitted in this process, does not,
for research, as its name says. Saving and loading (:mod:`dpsynth.synthesizer_io`, apart from the model)
authenticate the whole file under the home's key (:mod:`dpsynth.release.home`).

Figures computed from the data (Delta, the censored count, n, convergence) are shown to the data
holder only (:meth:`SynthesizerPrivacy.diagnostics`, warnings marked confidential), never written
into a release, and no refusal depends on them.

The Synthesizer knows no mechanism by name: its plan converts the mechanism's parameters (public
bounds into the model's unit, a historical DataFrame into model arrays) and its fit calls the
mechanism's ``run``.
"""

from __future__ import annotations

import dataclasses
import sys
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from . import mechanisms
from .choice import AUTO
from .covariates import CovariateDesign, public_rows
from .models import FAMILIES, ModelFamily, PyMCFunctionFamily
from .models.user_function import guarantee_condition, qualname
from .release.budget import DrawSlot
from .release.mode import RUN_MODES, ResearchModeError, SeedIgnoredWarning, resolve_mode
from .release.protocol import UnusableReleaseError, bar, release, show_progress, unusable_values
from .release.size import ReleaseSize
from .release.statement import CONFIDENTIAL, SynthesizerPrivacy
from .seeds import SeedLike, generator, stream
from .synthesizer_checks import check_magnitudes, ignored_covariates
from .synthesizer_config import RELEASE_SAMPLER, SynthesizerConfig, check_bounds
from .synthesizer_files import ChecksumError, confidential_path
from .synthesizer_fit import CensoringWarning, FittedState
from .synthesizer_io import SynthesizerIO
from .synthesizer_plan import PublicFacts, SynthesizerPlan, model_family, takes_covariates
from .target import TargetEncoding
from .validation import DataError, check_not_constant, check_table_columns

if TYPE_CHECKING:  # pragma: no cover
    import os
    from pathlib import Path

    from .fitting import CompiledModel
    from .mcmc_settings import SamplerConfig

__all__ = [
    "Synthesizer",
    "UnusableReleaseError",
    "CovariatesIgnoredWarning",
    "PyMCFunctionFamily",
    "CensoringWarning",
    "ResearchModeError",
    "SeedIgnoredWarning",
    "ChecksumError",
    "FAMILIES",
    "confidential_path",
    "RELEASE_SAMPLER",
]

#: Where every random choice of a fit and its releases comes from (:mod:`dpsynth.release.mode`): the operating
#: system's entropy (a private release), or seeded streams (research: reproducible, not a private release).
MODES = RUN_MODES


def __getattr__(name: str):
    if name == "MECHANISMS":  # the runnable registry keys, read from the mechanisms' specs
        return tuple(mechanisms.runnable_keys())
    raise AttributeError(f"module 'dpsynth.synthesizer' has no attribute {name!r}")


class CovariatesIgnoredWarning(UserWarning):
    """Covariates were given that the mechanism or the model does not use: their relation with the target is lost."""


def _setting(name: str, doc: str, convert: Callable[[Any], Any] | None = None) -> property:
    """A read-only attribute of the synthesizer that is a field of its configuration."""
    return property(lambda self: getattr(self.config, name) if convert is None else convert(getattr(self.config, name)),
                    doc=doc)


def _planned(name: str, doc: str) -> property:
    """A read-only attribute of the synthesizer that its plan decided."""
    return property(lambda self: getattr(self.plan, name), doc=doc)


def _ordinal_params(model_params: Mapping | None, bounds: dict | None, kind: str) -> dict:
    """The ordinal model's parameters with its public ``bins`` (as plain JSON): given, or cut between ``bounds`` by
    the public rule :func:`dpsynth.bins.default_bins` for the target's kind (a count: integer bins)."""
    from .bins import PublicBins, default_bins

    out = dict(model_params or {})
    if out.get("bins") is None:
        if bounds is None:
            raise DataError("the ordinal model cuts the target into public bins between public bounds: give "
                            "bounds=(lower, upper) (chosen without looking at the data; values outside are clamped "
                            "to them), or model_params={'bins': dpsynth.bins.default_bins(...)}.")
        out["bins"] = default_bins(kind, bounds["lower"], bounds["upper"])
    out["bins"] = PublicBins.from_dict(out["bins"]).to_dict()
    return out


class Synthesizer(SynthesizerIO):
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
        categorical ones as indicator columns of every level but the first.
    model : str or callable, optional
        A shipped family (:data:`dpsynth.models.FAMILIES`) or a PyMC model-building function
        (:mod:`dpsynth.models.user_function`: built with public placeholders for the data and
        checked; its guarantee is stated as conditional on the function reading the confidential
        data only through its argument ``x``, which no check can establish; with
        ``mechanism="auto"`` it gets Censor_ref with ``reference="prior"``). Default: from the
        target's *type* (never its values): ``lognormal`` / ``lognormal_regression`` for a
        continuous target, ``negbin`` for counts, ``multinomial`` for a categorical one.
    mechanism : str
        A registry key (``dpsynth.mechanisms.list_mechanisms()``), or ``"auto"`` (the default): the
        mechanism of the book's decision table (chapter "Choosing a mechanism",
        :func:`dpsynth.choice.column_choice`), looked up from public facts only: the target's kind
        (from its type), whether covariates are carried, ``eps``, the number of records when it is
        public (one record replaced, the default with covariates) and ``bounds``. A pick that needs
        public bounds falls back to the unit-free censored model (``censor_ref``) when none are
        given. The choice and its reason are kept in :attr:`choice` (printed to standard error
        when ``progress`` is true); ``mechanism_params`` and ``calibrate`` are for the mechanism
        chosen (the choice fills in the bounds it needs).
    eps : float, optional
        The **total** eps of the first release under the synthesizer's relation (``neighbours``),
        required exactly when the mechanism is run at a target eps (its spec's ``takes_eps``). The
        released size, a DP reference and the draw are carved out of it (:mod:`dpsynth.release.budget`);
        :attr:`budget` shows the split before the fit, and every further release from another
        draw adds the draw's share. Required with ``mechanism="auto"`` (the table is read at it).
    bounds : (lower, upper), optional
        Public bounds of a numeric target in the data's unit, chosen without looking at the data
        (a pair of numbers, or ``{"lower": L, "upper": U}``). With ``mechanism="auto"`` they let
        the choice pick a mechanism that needs them (a histogram, a calibration); with a named
        mechanism they are its ``lower``/``upper`` parameters (for the mechanisms that take them).
        With ``model="ordinal"`` they also cut the model's public bins
        (:func:`dpsynth.bins.default_bins`, by the target's kind), unless
        ``model_params`` gives ``bins``.
    model_params : dict, optional
        Keyword arguments of the shipped family (priors), e.g. ``{"mu_prior_sd": 5.0}``.
    mechanism_params : dict, optional
        The mechanism's parameters, from its spec's table (``dpsynth.mechanisms.get(key).params``),
        e.g. ``{"lower": 0, "upper": 1e5}`` for ``ph`` (public bounds in the data's unit),
        ``{"reference_eps": 0.2}`` for ``censor_ref`` (a share of ``eps`` other than the rule's).
    unit, offset : float, optional
        A public unit of a continuous target (the model sees ``x / unit``) and a public constant
        subtracted from each record's log-likelihood before the clamp (shipped families). Choose
        them without looking at the data.
    sampler : SamplerConfig or dict, optional
        MCMC settings. Default: :class:`SamplerConfig` with ``mass_matrix="low_rank"`` and
        :func:`~dpsynth.mcmc_settings.release_iterations` tuning steps and draws (1000, fewer from 20,000 records).
    censor_warn_share : float
        A :class:`CensoringWarning` (confidential) is raised when a censored fit censors more than this share of
        the records at a typical draw.
    neighbours : {"remove", "replace"}, optional
        The neighbour relation of every eps. Default: ``"remove"`` without covariates; ``"replace"``
        with covariates, whose rows (and so ``n``) were declared public and are carried into the release.
    n_release : int, optional
        A released size declared public (one record removed); by default the size is a DP count.
    size_eps : float, optional
        The DP count's share of ``eps`` (one record removed, no public size); default 5% of ``eps``.
    keep_draws : int
        Posterior draws kept; each release uses one, and whoever holds the synthesizer could
        release all of them (:meth:`SynthesizerPrivacy.worth`).
    releases : int
        How many synthetic data sets ``eps`` pays for (e.g. 5, for intervals combined over them,
        :mod:`dpsynth.combining`): each posterior draw then gets ``(eps - size - reference) / releases``.
        A model-free mechanism's one release serves any number of data sets at no further cost, so
        it is planned as one. At most ``keep_draws``.
    progress : bool
        Progress bars, shown only when standard error is a terminal.
    target_levels : sequence, optional
        The public levels of a categorical target (required unless it is a pandas ``Categorical``
        or boolean): the levels that occur in the confidential data are themselves a figure of it.
    standardize : bool, optional
        Centre and scale numeric covariates by their mean and standard deviation. Default: when
        their rows are public (one record replaced).
    design : CovariateDesign, optional
        A fixed encoding of the covariates instead of one recorded from ``data``.
    subsample : int or bool, optional
        The records a strictly DP model-based fit sees on a large file: by default (``None``), when
        ``n`` is public (one record replaced) and above :data:`dpsynth.release.budget.SUBSAMPLE_ABOVE`, a random
        subsample of :data:`dpsynth.release.budget.SUBSAMPLE_SIZE` records drawn without replacement, the
        mechanism spending the amplified eps on it (:mod:`dpsynth.release.budget`); an integer: that many
        records; ``False``: every record.
    mode : {None, "release", "research"}
        Where every random choice of the fit and its releases comes from (:mod:`dpsynth.release.mode`):
        ``"release"``, the operating system's entropy whatever ``seed`` says (a private release; DP
        noise from OpenDP's secure sampler); ``"research"``, streams under the seed (reproducible,
        not a private release: releasing needs ``allow_research=True``, recorded). ``None`` (the
        default): research when ``fit`` is given a seed, release otherwise. The statement says which.
    calibrate : dict, optional
        Calibrate the synthetic values of a numeric target to its DP marginal: ``{"lower": L, "upper":
        U}`` (public bounds in the data's unit, never from the data) and optionally ``"bins"``,
        ``"scale"`` (as for ``mechanism="noise_aware"``) and ``"share"`` (of ``eps``, default
        :data:`dpsynth.release.budget.MARGINAL_SHARE`). The fit also releases the target's noise-aware
        histogram on those bins (its share charged once per fit), and each synthetic set's values
        are replaced, rank for rank, by values drawn from that marginal: the model's relations to
        the covariates are kept (by rank), the marginal is the data's up to the DP noise.
        Model-based mechanisms run at a target eps only.
    confidential_covariates : sequence of str, optional
        Covariates whose values are confidential though the synthesizer conditions on them (a whole
        table's earlier columns, set by :class:`dpsynth.TableSynthesizer`): a mechanism computes
        nothing from their rows as if they were public (the noise-aware cells' sizes come from its
        noisy counts; OpenDP-Q refuses them as cells).
    part_of : str, optional
        The data set id of the whole table this synthesizer is a conditional of
        (:class:`dpsynth.TableSynthesizer`): it books into that table's ledger, and its size is the table's.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from dpsynth import Synthesizer
    >>> df = pd.DataFrame({"wage": np.random.default_rng(1).lognormal(6, 0.5, 300)})
    >>> s = Synthesizer(df, "wage", mechanism="ph", eps=1.0, mechanism_params={"lower": 0, "upper": 20000})
    >>> round(s.budget.total, 3), round(s.budget.size, 3), round(s.budget.draw, 3)
    (1.0, 0.05, 0.95)
    >>> s.config.mechanism, s.plan.params["lower"], s.state is None
    ('ph', 0.0, True)

    Attributes
    ----------
    config : SynthesizerConfig
        The settings, each checked (:mod:`dpsynth.synthesizer_config`).
    plan : SynthesizerPlan
        What is fixed before the fit (:mod:`dpsynth.synthesizer_plan`): the mechanism, the model, the
        relation, the design, the mechanism's parameters, the budget.
    state : FittedState or None
        What the fit left (:mod:`dpsynth.synthesizer_fit`); None before it.
    dataset : str
        The data set's id under the home's primary key: the ledger its releases are booked in
        (computed last, once every check of the input has passed).
    linked : list of str
        Its ids under the other keys of the home (those of homes moved here): their ledgers count
        with it (:class:`dpsynth.release.ledger.Ledger`).
    """

    def __init__(
        self,
        data: pd.DataFrame,
        target: str,
        *,
        covariates: Sequence[str] | None = None,
        model: str | Callable | None = None,
        mechanism: str = AUTO,
        eps: float | None = None,
        bounds: Sequence[float] | Mapping | None = None,
        model_params: Mapping | None = None,
        mechanism_params: Mapping | None = None,
        unit: float | None = None,
        offset: float | None = None,
        sampler: SamplerConfig | Mapping | None = None,
        censor_warn_share: float = 0.5,
        neighbours: str | None = None,
        n_release: int | None = None,
        size_eps: float | None = None,
        keep_draws: int = 10,
        releases: int = 1,
        progress: bool = True,
        target_levels: Sequence | None = None,
        standardize: bool | None = None,
        design: CovariateDesign | None = None,
        subsample: int | bool | None = None,
        mode: str | None = None,
        part_of: str | None = None,
        confidential_covariates: Sequence[str] | None = None,
        calibrate: Mapping | None = None,
    ) -> None:
        config = SynthesizerConfig.from_arguments(locals())  # every setting checked alone, by its validator
        covs = check_table_columns(data, target, list(config.covariates))
        encoding = TargetEncoding.from_series(data[target], levels=config.target_levels, unit=config.unit)
        x = encoding.to_model(data[target])  # the target's values checked before the plan
        check_magnitudes(data, [target], covs)
        if config.model == "ordinal" and encoding.kind != "categorical":  # the public bounds cut its bins
            config = dataclasses.replace(config, model_params=_ordinal_params(
                config.model_params, check_bounds(config.bounds, encoding.kind), encoding.kind))
        facts = PublicFacts(encoding, data[covs].reset_index(drop=True).copy(), int(x.size))
        plan = SynthesizerPlan.make(config, facts)
        if plan.choice is not None and config.progress:
            print(plan.choice.reason, file=sys.stderr, flush=True)
        self._assemble(config, plan, encoding=encoding, columns=list(data.columns),
                       dtypes={c: str(data[c].dtype) for c in data.columns}, public=facts.public, x=x)
        if self.spec.uses_model:
            check_not_constant(x, target, plan.model)
        if self.spec.check_data is not None:
            self.spec.check_data(x, plan.params)
        self._warn_ignored_covariates()
        # last: every check of the input is done before the home (its key, its ledgers) is touched
        self.dataset, self.linked = self._dataset_ids(data, [target, *covs])

    def _assemble(self, config: SynthesizerConfig, plan: SynthesizerPlan, *, encoding: TargetEncoding,
                  columns: list[str], dtypes: dict, public: pd.DataFrame, x: np.ndarray | None = None,
                  state: FittedState | None = None, dataset: str = "", linked: Sequence[str] = ()) -> None:
        """The synthesizer's parts: its configuration, plan and fitted state, and the public facts of its data."""
        #: The settings (:class:`~dpsynth.synthesizer_config.SynthesizerConfig`).
        self.config = config
        #: What is fixed before the fit (:class:`~dpsynth.synthesizer_plan.SynthesizerPlan`).
        self.plan = plan
        #: What the fit left (:class:`~dpsynth.synthesizer_fit.FittedState`), None before it.
        self.state = state
        #: The target's encoding (its kind, levels and unit), the data's columns and their dtypes.
        self.encoding, self.columns, self.dtypes = encoding, list(columns), dict(dtypes)
        #: The public covariate rows.
        self.public = public[list(config.covariates)].reset_index(drop=True)
        self._x = x  # the target in the model's unit: confidential, never saved (None when loaded)
        self._X = plan.design.matrix(self.public)
        #: Progress bars (shown on a terminal only); a loaded synthesizer's may be switched off.
        self.progress = config.progress
        #: A number of records public or released under DP that settings may be chosen from (a table sets it).
        self.size_hint: int | None = None
        self._cm: CompiledModel | None = None
        self._simulator = None
        self.path = None
        self.dataset, self.linked = dataset, list(linked)

    @classmethod
    def from_config(cls, config: SynthesizerConfig, plan: SynthesizerPlan, *, encoding: TargetEncoding,
                    columns: list[str], dtypes: dict, public: pd.DataFrame, state: FittedState, dataset: str,
                    linked: Sequence[str] = ()) -> Synthesizer:
        """A fitted synthesizer from its configuration, plan and fitted state, without the confidential data (as
        :meth:`load` reads one): it samples and releases, and cannot refit."""
        self = cls.__new__(cls)
        self._assemble(config, plan, encoding=encoding, columns=columns, dtypes=dtypes, public=public, state=state,
                       dataset=dataset, linked=linked)
        return self

    # ------------------------------------------------------------------ settings, plan and state
    target = _setting("target", "The confidential column.")
    covariates = _setting("covariates", "The public covariates.", list)
    eps = _setting("eps", "The total eps of the first release(s), as given.")
    unit = _setting("unit", "A public unit of a continuous target (the model sees ``x / unit``).")
    offset = _setting("offset", "A public constant subtracted from each record's log-likelihood.")
    model_params = _setting("model_params", "The shipped family's settings (priors).", lambda v: dict(v or {}))
    keep_draws = _setting("keep_draws", "Posterior draws kept.")
    releases = _setting("releases", "How many synthetic data sets ``eps`` pays for.")
    n_release = _setting("n_release", "A released size declared public, or None.")
    size_eps = _setting("size_eps", "The DP count's share of ``eps`` as given, or None (the rule's).")
    subsample = _setting("subsample", "The records a strictly DP fit sees on a large file (None: the rule).")
    part_of = _setting("part_of", "The data set id of the table this synthesizer is a conditional of, or None.")
    confidential_covariates = _setting("confidential_covariates", "Covariates whose values are confidential.", list)
    censor_warn_share = _setting("censor_warn_share", "The censored share above which a fit warns (confidential).")
    choice = _planned("choice", "What ``mechanism='auto'`` chose (:class:`dpsynth.choice.Choice`), or None.")
    mechanism_requested = _planned("mechanism_requested", "``'auto'``, or the registry key named.")
    mechanism = _planned("mechanism", "The registry key run.")
    spec = _planned("spec", "The mechanism's spec.")
    model = _planned("model", "The shipped family's name or the model function.")
    sampler = _planned("sampler", "The MCMC settings.")
    relation = _planned("relation", "The neighbour relation of every eps.")
    calibrate = _planned("calibrate", "The calibration to the target's DP marginal, or None.")
    mechanism_params = _planned("mechanism_params", "The mechanism's parameters as given (the record).")
    budget = _planned("budget", "The total and its shares under the relation, fixed before the fit.")

    @property
    def mode(self) -> str:
        """The run's mode (:mod:`dpsynth.release.mode`): decided by :meth:`fit` when ``mode`` is None."""
        return self.plan.mode

    @property
    def draws(self) -> dict | None:
        """The kept posterior draws (None before the fit, and for a model-free mechanism)."""
        return None if self.state is None else self.state.draws

    @property
    def fit_id(self) -> str:
        """Names this fit's shares in the ledger (``""`` before the fit)."""
        return "" if self.state is None else self.state.fit_id

    @property
    def fit_log(self) -> list[str]:
        """What the fit did besides fitting once. Confidential."""
        return [] if self.state is None else list(self.state.log)

    def _dataset_ids(self, data: pd.DataFrame, columns: list[str]) -> tuple[str, list[str]]:
        """The data set's id under the home's primary key, and its ids under the home's other keys (a part of a
        table books into the table's)."""
        if self.part_of is not None:
            return self.part_of, []
        from .release.ledger import dataset_ids

        ids = list(dataset_ids(data, columns).values())
        return ids[0], ids[1:]

    def _warn_ignored_covariates(self) -> None:
        """Say what is lost when covariates are given that the mechanism or the model does not use."""
        params = self.plan.params
        cells = params.get("cells")
        if cells is None and self.spec.covariate_use == "cells":  # the default: categorical ones and those cut at edges
            edges = params.get("cell_edges") or {}
            cells = [c for c in self.covariates if c in self.levels or c in edges]
        msg = ignored_covariates(self.spec, self.model, self.encoding, self.target, self.covariates, self.levels,
                                 cells, takes_covariates(self.model))
        if msg:
            warnings.warn(msg, CovariatesIgnoredWarning, stacklevel=3)

    def _public_n(self) -> int | None:
        """The number of records when it is public: declared (``n_release``), or n with one record replaced."""
        if self.n_release is not None:
            return self.n_release
        if self.relation == "replace" and self._x is not None:
            return int(self._x.size)
        return None

    def _calibration_params(self) -> dict:
        """The noise-aware marginal's parameters in the model's unit (no cells, posterior-mean synthesis)."""
        c = {k: v for k, v in self.calibrate.items() if k != "share"}
        for k in ("lower", "upper"):
            if c.get(k) is not None and self.unit is not None:
                c[k] = float(c[k]) / self.unit
        return {**c, "cells": [], "kind": self.encoding.kind, "synthesis": "mean", "mode": self.mode}

    @property
    def levels(self) -> dict:
        """Categorical covariate -> its levels recorded at fit time."""
        return self.plan.design.levels

    def design(self, public: pd.DataFrame) -> np.ndarray:
        """Design matrix of public covariates: intercept, numeric columns, indicators of every level but the first."""
        return self.plan.design.matrix(public)

    # ------------------------------------------------------------------ model
    def family(self) -> ModelFamily:
        """The :class:`ModelFamily` fitted (shipped, wrapped with an offset, or the function adapter)."""
        return model_family(self.model, model_params=self.model_params, offset=self.offset, kind=self.encoding.kind,
                            n_levels=self.encoding.n_levels, n_coef=self._X.shape[1], public_n=self._public_n())

    def _model_covariates(self, X: np.ndarray) -> np.ndarray | None:
        return X if takes_covariates(self.model) else None

    def compiled_model(self) -> CompiledModel:
        """The model compiled once (:func:`dpsynth.fitting.compiled_model`): on the data, or on placeholders of a
        public size when loaded without it."""
        if self._cm is None:
            from .fitting import compiled_model
            from .synthesizer_plan import public_size

            fam = self.family()
            x0, X0 = self._x, self._X
            if x0 is None:  # loaded without the data (a model function is built from placeholders in any case)
                n0 = public_size(self._public_n())
                x0 = np.full(n0, fam.placeholder)
                X0 = self._X if self._X.shape[0] == n0 else np.ones((n0, self._X.shape[1]))
            try:
                self._cm = compiled_model(fam, x0, self._model_covariates(X0))
            except DataError as e:  # the family's check of the values, said of the user's column with its knobs
                if callable(self.model):  # the check of a model function: its own message names the fix
                    raise
                raise DataError(f"target column {self.target!r} (model {self.model}): {e} Or choose a model for its "
                                f"values: `model` (a table's `models`, keyed by column; dpsynth.models.FAMILIES "
                                f"lists them): model='ordinal' with public bounds=(lower, upper) takes any value "
                                f"between them (zeros, negatives, heaps).") from None
        return self._cm

    # ------------------------------------------------------------------ fit
    def fit(self, seed: SeedLike = None) -> Synthesizer:
        """Run the mechanism on the data; sets the fitted state (:attr:`state`: report, draws). Returns ``self``.

        With a ``seed`` (and ``mode`` None or ``"research"``) the fit is in **research mode**: reproducible, and
        not a private release (:mod:`dpsynth.release.mode`); without one, or with ``mode="release"``, every random
        choice comes from the system's entropy. Values outside public bounds are clamped to them first.
        Whether the chains passed their convergence checks is reported to the data holder
        (:meth:`SynthesizerPrivacy.diagnostics`, a confidential :class:`~dpsynth.mcmc_settings.ConvergenceWarning`);
        it decides nothing: no fit is retried and no release refused on it (a decision on a figure of the
        data would itself be a release).

        Refused in a sealed home (one moved into another, :func:`dpsynth.release.home.check_open`). In a home
        that holds the keys of homes moved into it, the fit records the data set's ids under all of
        them as one data set (:func:`dpsynth.release.ledger.link_datasets`), so that every release of it
        counts their ledgers together.
        """
        from . import synthesizer_fit as step

        if self._x is None:
            raise DataError(
                "this synthesizer was loaded without its confidential data; it can sample and release, "
                "not fit. Build a new Synthesizer from the data to refit."
            )
        from .release.home import check_open
        from .release.ledger import link_datasets

        check_open("fit")
        if self.linked:  # the data at hand: its ids under every key of the home are one data set from now on
            link_datasets([self.dataset, *self.linked])
        mode, seed = resolve_mode(self.plan.mode_setting, seed)
        self.plan = plan = self.plan.for_mode(mode)
        spec, uses_model, show = plan.spec, plan.spec.uses_model, show_progress(self.progress)
        rows = step.fitted_rows(plan.budget.sample_rate, int(self._x.size), mode, seed)
        x_all, clamped = self._clamped_values()
        x, X, public = (x_all, self._X, self.public) if rows is None else (
            x_all[rows], self._X[rows], self.public.iloc[rows].reset_index(drop=True))
        # before the fit: settings chosen from n may read its DP count
        size = step.released_size(self._x, part_of=self.part_of, relation=self.relation,
                                  has_covariates=bool(self.covariates), n_release=self.n_release, budget=plan.budget,
                                  mode=mode, seed=seed)
        hint = size.n if size is not None else self.size_hint
        sampler = dataclasses.replace(self.sampler, progress=show)
        with bar(show, f"{spec.name}: fits", unit="fit") as progress:
            ctx = mechanisms.RunContext(
                x, family=self.family() if uses_model else None,
                covariates=self._model_covariates(X) if uses_model else None, public=public, sampler=sampler,
                seed_fn=lambda *parts: stream(seed, "synthesizer", *parts),
                compiled=self.compiled_model() if uses_model else None,
                on_fit=lambda s: (progress.set_postfix_str(s), progress.update()), relation=self.relation, mode=mode,
                size_hint=hint,
            )
            res = spec.run(ctx, dict(plan.params))
        calibration = None if self.calibrate is None else step.calibration_marginal(
            x, self._calibration_params(), budget=plan.budget, relation=self.relation, sampler=sampler, mode=mode,
            seed=seed, size_hint=hint, log=ctx.log)
        privacy = step.privacy_report(res, ctx, mechanism=self.mechanism, budget=plan.budget, relation=self.relation,
                                      mode=mode, keep_draws=self.keep_draws, condition=self._condition(),
                                      bounds=self._bounds_in_data_unit(), clamped=clamped)
        if calibration is not None and not calibration.converged:
            privacy = dataclasses.replace(privacy, converged=False)
        model_based = res.fit is not None
        self.state = FittedState(
            fit_id=step.new_fit_id(), privacy=privacy, size=size,
            draws=step.kept_draws(res.fit, self.keep_draws, model_function=callable(self.model)) if model_based
            else None,
            release=None if model_based else res.release,
            calibration=None if calibration is None else calibration.release,
            weights=np.asarray(res.weights, dtype=float) if model_based else None,
            log=[f"{CONFIDENTIAL}: {line}" for line in ctx.log],
        )
        step.warn_censoring(privacy, self.censor_warn_share, spec.censoring_advice)
        return self

    def public_bounds(self) -> tuple[float, float] | None:
        """The target's public bounds in the model's unit (the mechanism's ``lower``/``upper``, or the calibration's),
        or None: every record is clamped to them before the mechanism."""
        pairs = [(self.plan.params.get("lower"), self.plan.params.get("upper"))]
        bins = (self.model_params or {}).get("bins") if self.model == "ordinal" else None
        if bins is not None:  # the ordinal model's public bins span its bounds
            pairs.append((bins["lower"], bins["upper"]))
        if self.calibrate is not None:
            c = self._calibration_params()
            pairs.append((c.get("lower"), c.get("upper")))
        if self.encoding.kind == "categorical":
            return None
        for lo, hi in pairs:
            if lo is not None and hi is not None:
                return float(lo), float(hi)
        return None

    def _clamped_values(self) -> tuple[np.ndarray, int]:
        """The target's values clamped to the public bounds (as OpenDP's ``make_clamp`` and SmartNoise do) and how
        many were moved (confidential: it goes to the diagnostics only)."""
        b = self.public_bounds()
        if b is None:
            return self._x, 0
        out = np.clip(self._x, b[0], b[1])
        return out, int(np.count_nonzero(out != self._x))

    def _bounds_in_data_unit(self) -> tuple | None:
        b = self.public_bounds()
        if b is None:
            return None
        u = self.unit or 1.0
        return (b[0] * u, b[1] * u)

    def _condition(self) -> str:
        """The condition the guarantee holds under: a model function's, which no check can establish (else none)."""
        return guarantee_condition(self.model) if callable(self.model) and self.spec.uses_model else ""

    # ------------------------------------------------------------------ privacy
    @property
    def fitted(self) -> bool:
        """Whether the synthesizer has been fitted (or loaded)."""
        return self.state is not None

    @property
    def privacy(self) -> SynthesizerPrivacy:
        """The privacy report (its :meth:`~SynthesizerPrivacy.statement` is public, its diagnostics confidential).

        It is the same whether or not the chains passed their convergence checks: the guarantee is stated for
        an exact posterior draw, and the diagnostics tell the data holder how far the sampler is to be trusted
        (the book's introduction, "What MCMC costs"); they never decide what is released.
        """
        if self.state is None:
            raise DataError("the synthesizer is not fitted; call .fit() first.")
        return self.state.privacy

    @property
    def n_draws(self) -> int:
        """Posterior draws available for releases (1 for a model-free mechanism, released once)."""
        self.privacy  # noqa: B018 - raises if unfitted
        return self.state.n_draws

    # ------------------------------------------------------------------ synthetic values
    def _synthetic_frame(self, public: pd.DataFrame, seed: SeedLike, draw: int,
                         synthesis: str | None = None) -> pd.DataFrame:
        """One synthetic data set for the rows of ``public`` from ``draw`` (``attrs["model_values"]``: model scale);
        ``synthesis`` overrides how a model-free release that offers several ways makes it (research only)."""
        X = self.design(public)
        n = X.shape[0]
        rng = generator(stream(seed, "records"))
        if self.state.release is not None:
            state = self.state.release
            if synthesis is not None and dataclasses.is_dataclass(state) and hasattr(state, "synthesis"):
                state = dataclasses.replace(state, synthesis=synthesis)
            values = state.sample(n, rng, public[self.covariates].reset_index(drop=True))
        elif callable(self.model):
            if self._simulator is None:
                from .models import ModelSimulator

                cm = self.compiled_model()
                extra = sorted(set(self.draws) - set(cm.param_names))
                if extra:  # a model function's file keeps its free parameters only (never a deterministic)
                    raise DataError(f"the draws of {qualname(self.model)} hold {extra}, which are not its free "
                                    f"parameters {cm.param_names}: refit with this version, which keeps those only.")
                self._simulator = ModelSimulator(cm)
            values = self._simulator({k: v[draw] for k, v in self.draws.items()}, n, X, rng)
        else:
            fam = self.family()
            with np.errstate(over="ignore", under="ignore"):
                values = fam.simulate(
                    {k: np.repeat(v[draw: draw + 1], n, axis=0) for k, v in self.draws.items()},
                    rng,
                    self._model_covariates(X),
                )
        values = np.asarray(values, dtype=float)
        bounds = self.public_bounds()
        if bounds is not None:  # public bounds clamp the synthetic values too (post-processing)
            with np.errstate(invalid="ignore"):
                values = np.where(np.isfinite(values), np.clip(values, bounds[0], bounds[1]), values)
        if self.state.calibration is not None:
            from .mechanisms.noise_aware import calibrated_values

            state = self.state.calibration
            if synthesis is not None or self.releases > 1:  # sets for combining: the marginal's posterior draws too
                state = dataclasses.replace(state, synthesis=synthesis or "draw")
            values = calibrated_values(values, state, generator(stream(seed, "calibration")))
        out = public[self.covariates].reset_index(drop=True).copy()
        out[self.target] = self.encoding.from_model(values)
        out = out[list(self.columns)]
        out.attrs["model_values"] = values
        return out

    def sample_unaccounted(
        self, seed: SeedLike = None, *, data: pd.DataFrame | None = None, draw: int | None = None,
        synthesis: str | None = None,
    ) -> pd.DataFrame:
        """For research only: one synthetic data set that is NOT booked in any ledger. Do not publish it.

        Only a synthesizer fitted in this process on its data offers it (the data holder has the
        data already); a loaded one releases through the ledger only. It has one row per fitted
        record (or per row of ``data``), whatever the neighbour relation. ``synthesis`` (``"draw"`` or
        ``"mean"``) overrides how a noise-aware release makes the set (both from the same release).
        """
        p = self.privacy
        if self._x is None:
            raise DataError("a loaded synthesizer releases through the ledger only: use sample() or release().")
        public = self.public if data is None else self._public_frame(data)
        if data is None and not self.covariates:
            public = pd.DataFrame(index=range(self._x.size))
        base = stream(seed, "sample")
        S = self.n_draws
        if draw is None:
            draw = int(generator(stream(base, "draw")).integers(S))
        elif isinstance(draw, bool) or not isinstance(draw, (int, np.integer)) or not 0 <= draw < S:
            raise DataError(f"`draw` must be an integer in [0, {S}); got {draw!r}.")
        out = self._synthetic_frame(public, base, int(draw), synthesis)
        out.attrs = {"privacy_statement": "NOT A RELEASE: drawn for research, not booked in any ledger. "
                     + p.statement(), "accounted": False}
        return out

    def _public_frame(self, data) -> pd.DataFrame:
        frame = public_rows(data, self.covariates)
        self.design(frame)  # an unseen level fails here, before the ledger is touched
        return frame

    def release_frame(self, data: pd.DataFrame | None) -> tuple[pd.DataFrame, ReleaseSize]:
        """The public rows of a release and how its size is set (the release protocol's interface)."""
        if data is not None:
            frame = self._public_frame(data)
            return frame, ReleaseSize(n=len(frame), how="public")
        if self.part_of is not None:
            raise DataError(
                "a conditional of a whole table releases through its table (t.sample / t.release); on its own it "
                "needs a public frame of its covariates (data=...), since its fitted rows hold the table's earlier "
                "confidential columns."
            )
        size = None if self.state is None else self.state.size
        if size is None:
            raise DataError(
                "with one record removed, releasing the confidential file's own covariate rows would reveal which "
                "records it holds (and how many). Give a public frame of covariates for the synthetic records "
                "(data=... / --covariates-from), or fit with neighbours='replace' (the covariate rows and n are then "
                "public and eps is the one-record-replaced figure)."
            )
        if self.covariates:
            return self.public, size
        return pd.DataFrame(index=range(size.n)), size

    def _unusable(self, values: np.ndarray) -> list[str]:
        """Why a release's values (on the model's scale) are unusable: read from the synthetic values only."""
        support = None
        if isinstance(self.model, str) and self.spec.uses_model:
            fam = self.family()

            def support(v):
                try:
                    fam.check_data(v, None if not takes_covariates(self.model) else np.ones((v.size, self._X.shape[1])))
                except DataError as e:
                    return f"synthetic values outside the {self.model} model's support ({' '.join(str(e).split())})"
                return None

        return unusable_values(values, support_check=support)

    # ------------------------------------------------------------------ releases (booked)
    def sample(self, seed: SeedLike = None, *, data: pd.DataFrame | None = None, budget: float | None = None,
               allow_unusable: bool = False, allow_research: bool = False) -> pd.DataFrame:
        """One released synthetic data set, booked in the data set's ledger, returned in memory.

        As :meth:`release` without writing a file.
        """
        return release(self, None, seed=seed, data=data, budget=budget, force=False, allow_unusable=allow_unusable,
                       allow_research=allow_research)

    def release(self, path_out: str | os.PathLike, *, seed: SeedLike = None, data: pd.DataFrame | None = None,
                budget: float | None = None, force: bool = False, allow_unusable: bool = False,
                allow_research: bool = False) -> pd.DataFrame:
        """Release one synthetic data set: book it in the data set's ledger and write it (CSV or Parquet).

        The one release protocol (:func:`dpsynth.release.protocol.release`): one posterior draw not
        released before while one is left, the charges not paid before (a reference and a size once
        per fit, a draw once), the budget, the usability checks on the synthetic values, the file
        written atomically and booked.

        Parameters
        ----------
        path_out : path-like
            ``.csv`` or ``.parquet``; its folder must exist, and an existing file is refused unless ``force``.
        seed : int or SeedSequence, optional
            Chooses the draw and the records of a research-mode fit released with ``allow_research``; ignored
            (with a :class:`SeedIgnoredWarning`) in release mode, where they come from the system's entropy.
        data : pandas.DataFrame, optional
            A public frame of covariates for the synthetic records (its rows set the size, declared public).
        budget : float, optional
            A strict-DP release that would bring the ledger's total above it is refused
            (:class:`dpsynth.release.ledger.BudgetExceeded`).
        allow_unusable : bool
            Release values that fail the usability checks; the statement and the ledger record it.
        allow_research : bool
            Release from a research-mode (seeded) fit, which is otherwise refused
            (:class:`~dpsynth.release.mode.ResearchModeError`); the statement and the ledger record it.

        Returns
        -------
        pandas.DataFrame
            The released data; ``attrs["privacy_statement"]`` says what it covers.
        """
        return release(self, path_out, seed=seed, data=data, budget=budget, force=force, allow_unusable=allow_unusable,
                       allow_research=allow_research)

    # ------------------------------------------------------------------ the release protocol's interface
    # (dpsynth.release.protocol.Releaser): called by the protocol under the ledger's lock; nothing here books.
    def draw_slots(self) -> dict[str, DrawSlot]:
        """The fit a release draws from: its key in the ledger, its kept draws and its report's budget."""
        p = self.privacy
        return {self.target: DrawSlot(f"{self.fit_id}:{self.target}", self.n_draws, p.budget, p.guarantee,
                                      p.released if p.model_free else None)}

    def synthesize(self, frame: pd.DataFrame, seed: SeedLike, draws: Mapping[str, int]) -> tuple[pd.DataFrame, list]:
        """The synthetic data set for the rows of ``frame`` from the draw picked, and why its values are unusable.

        For the release protocol: what it returns is not booked. Use :meth:`sample` or :meth:`release`."""
        df = self._synthetic_frame(frame, seed, int(draws[self.target]))
        return df, self._unusable(np.asarray(df.attrs.pop("model_values"), dtype=float))

    def ledger_labels(self) -> tuple[str, str]:
        """``(mechanism key, display name)`` of the ledger line."""
        return self.mechanism, self.privacy.name

    # ------------------------------------------------------------------ report (confidential)
    def report(self, released: pd.DataFrame | Sequence[pd.DataFrame], out_dir: str | os.PathLike, *,
               original: pd.DataFrame | None = None, force: bool = False, title: str | None = None) -> Path:
        """Write a CONFIDENTIAL page that sets a release against the confidential data (:mod:`dpsynth.report`).

        ``out_dir/report.html`` and its PNG figures show the privacy statement and the diagnostics,
        the target's marginal, the regression on the covariates and the pMSE, for the data holder only.
        Given a list of released data sets (each from its own draw), the page adds the regression's
        estimates and intervals combined over them (:mod:`dpsynth.combining`). A loaded synthesizer
        holds no confidential data: pass it as ``original``.
        """
        from .report import write_report

        p = self.privacy  # raises for an unfitted synthesizer
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
        sets = list(released) if isinstance(released, (list, tuple)) else [released]
        if not sets:
            raise DataError("`released` must be a released data set or a list of them; got an empty list.")
        return write_report(original, sets[0], target=self.target, covariates=self.covariates,
                            statement=p.statement(), diagnostics=p.diagnostics(), out_dir=out_dir, title=title,
                            force=force, levels=self.encoding.levels, implicates=sets[1:])
