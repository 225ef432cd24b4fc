"""One object from a DataFrame to a released synthetic data set: :class:`Synthesizer`.

``Synthesizer(df, target="wage", covariates=["region"], eps=1.0).fit(seed=1).release("out.csv")``
fits one confidential column with a shipped model family (:data:`dpsynth.models.FAMILIES`) or a
plain PyMC model-building function (:mod:`dpsynth.models.user_function`), runs any registered
mechanism on it by key (:mod:`dpsynth.mechanisms`; by default, ``mechanism="auto"``, the one the
book's decision table picks from public facts, :mod:`dpsynth.choice`), reports its privacy
(:class:`~dpsynth.release.statement.SynthesizerPrivacy`) and releases synthetic DataFrames generated from ONE
posterior draw each (or from the released state of a model-free mechanism).

``eps`` is the total that the statement publishes for the first release, under one neighbour
relation decided before the fit (named, or ``"replace"`` when public covariates are carried, whose
rows make ``n`` public); the released size, a DP reference and the draw are shares carved out of it
by the public rule of :mod:`dpsynth.release.budget`, and each further release from another draw adds the
draw's share.

Every synthetic data set handed out goes through the one release protocol
(:mod:`dpsynth.release.protocol`): :meth:`Synthesizer.sample` and :meth:`Synthesizer.release` book
it in the ledger of the confidential data set (:mod:`dpsynth.release.ledger`) before returning or writing
it; only :meth:`Synthesizer.sample_unaccounted`, on a synthesizer fitted in this process, does not,
for research, as its name says. Saving and loading (:mod:`dpsynth.synthesizer_io`) authenticate the
whole file under the home's key (:mod:`dpsynth.release.home`).

Figures computed from the data (Delta, the censored count, n, convergence) are shown to the data
holder only (:meth:`SynthesizerPrivacy.diagnostics`, warnings marked confidential), never written
into a release, and no refusal depends on them.

The Synthesizer knows no mechanism by name: it converts the data and the mechanism's parameters
(public bounds into the model's unit, a historical DataFrame into model arrays) and calls the
mechanism's ``run``.
"""

from __future__ import annotations

import dataclasses
import secrets
import sys
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from . import mechanisms
from .choice import AUTO, Choice, column_choice, is_auto, model_function_choice
from .covariates import CovariateDesign, public_rows
from .mcmc_settings import RELEASE_MASS_MATRIX
from .models import FAMILIES, ModelFamily, OffsetFamily, PyMCFunctionFamily, family_class
from .models.user_function import PLACEHOLDERS, guarantee_condition, qualname
from .privacy import check_neighbours
from .release.budget import Budget, DrawSlot, subsample_rate
from .release.mode import RUN_MODES, ResearchModeError, SeedIgnoredWarning, check_mode, resolve_mode
from .release.protocol import UnusableReleaseError, bar, release, show_progress, unusable_values
from .release.size import ReleaseSize, dp_count
from .release.statement import CONFIDENTIAL, SynthesizerPrivacy
from .seeds import SeedLike, generator, stream
from .synthesizer_checks import check_kinds, ignored_covariates
from .synthesizer_files import ChecksumError, confidential_path, jsonable
from .synthesizer_io import SynthesizerIO
from .target import TargetEncoding
from .validation import (
    DataError,
    _is_number,
    check_bool,
    check_eps,
    check_magnitude,
    check_not_constant,
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
    "ResearchModeError",
    "SeedIgnoredWarning",
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
#: Where every random choice of a fit and its releases comes from (:mod:`dpsynth.release.mode`): the operating
#: system's entropy (a private release), or seeded streams (research: reproducible, not a private release).
MODES = RUN_MODES


def __getattr__(name: str):
    if name == "MECHANISMS":  # the runnable registry keys, read from the mechanisms' specs
        return tuple(mechanisms.runnable_keys())
    raise AttributeError(f"module 'dpsynth.synthesizer' has no attribute {name!r}")


class CensoringWarning(UserWarning):
    """CONFIDENTIAL: a censored fit censored more than the stated share of records (a figure of the data)."""


class CovariatesIgnoredWarning(UserWarning):
    """Covariates were given that the mechanism or the model does not use: their relation with the target is lost."""


def check_bounds(bounds, kind: str) -> dict | None:
    """Public bounds of a numeric target, ``(lower, upper)`` or ``{"lower": L, "upper": U}``, as
    ``{"lower": L, "upper": U}`` (None: none given); a :class:`DataError` naming ``bounds`` otherwise."""
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


def check_magnitudes(data: pd.DataFrame, targets: Sequence[str], covariates: Sequence[str]) -> None:
    """Every numeric target and covariate within :data:`dpsynth.validation.MAX_MAGNITUDE` (the check the command line
    applies too)."""
    for c in targets:
        check_magnitude(data[c], c, "target column")
    for c in covariates:
        check_magnitude(data[c], c, "covariate")


def auto_choice(kind: str, eps, *, n: int, has_covariates: bool, relation: str, bounds=None,
                model_function: str | None = None) -> Choice:
    """What ``mechanism="auto"`` picks (:func:`dpsynth.choice.column_choice`), from public facts only.

    ``n`` (the number of records) is read only when it is public: with one record replaced
    (``relation="replace"``, the default when covariates are carried); with one record removed the
    table is read as if ``n`` were unknown. ``bounds`` as checked by :func:`check_bounds`. With a
    user's model function (``model_function``, its ``module:qualname``), Censor_ref at the model's
    prior point (:func:`dpsynth.choice.model_function_choice`).
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


def _bounds_params(spec, given: Mapping | None, bounds: dict) -> dict:
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

    Attributes
    ----------
    choice : Choice or None
        What ``mechanism="auto"`` chose (:class:`dpsynth.choice.Choice`: the mechanism, the bounds
        it was given, the calibration and ``reason``), or None when a mechanism was named.
    mechanism_requested : str
        ``"auto"``, or the registry key named.
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
        self._x = self.encoding.to_model(data[target])  # the target's values checked before any setting
        check_magnitudes(data, [target], covs)
        bounds = check_bounds(bounds, self.encoding.kind)
        # what mechanism="auto" chose, with the reason (None: a mechanism was named); "auto" or the key named
        self.choice: Choice | None = None
        self.mechanism_requested = mechanism
        if is_auto(mechanism):
            bounds = _given_bounds(bounds, mechanism_params, self.encoding.kind)
            relation = check_neighbours(neighbours if neighbours is not None else ("replace" if covs else "remove"))
            self.choice = auto_choice(self.encoding.kind, eps, n=len(data), has_covariates=bool(covs),
                                      relation=relation, bounds=bounds,
                                      model_function=qualname(model) if callable(model) else None)
            mechanism = self.choice.mechanism
            mechanism_params = _choice_params(self.choice, mechanism_params, bounds)
            if calibrate is None and self.choice.calibrate is not None:
                calibrate = dict(self.choice.calibrate)
            if check_bool(progress, "progress"):
                print(self.choice.reason, file=sys.stderr, flush=True)
        if model is None:
            model = self.encoding.default_model(bool(covs))
        if sampler is None:  # the release sampler, with fewer iterations on a large file
            from .mcmc_settings import release_iterations

            sampler = {"draws": release_iterations(len(data)), "tune": release_iterations(len(data))}
        self._mode_setting = check_mode(mode)
        #: The run's mode (:mod:`dpsynth.release.mode`): decided by :meth:`fit` when ``mode`` is None.
        self.mode = self._mode_setting or "release"
        self._settings(target, covs, model, mechanism, eps, model_params, unit, offset, sampler, censor_warn_share)
        if self.choice is None:
            self.mechanism_requested = self.spec.key
            if bounds is not None:
                mechanism_params = _bounds_params(self.spec, mechanism_params, bounds)
        else:
            self._check_chosen_params(mechanism_params)
        self.relation = check_neighbours(neighbours if neighbours is not None else ("replace" if covs else "remove"))
        self._check_kinds()
        if self.spec.uses_model:
            check_not_constant(self._x, target, self.model)
        self.n_release = None if n_release is None else positive_count(n_release, "n_release")
        if self.n_release is not None and self.relation == "replace":
            raise DataError(
                "`n_release` declares a public size under one record removed; with one record replaced the "
                "size is n. Give a public frame of covariates at release (data=) for another size."
            )
        self.size_eps = size_eps
        self.keep_draws = positive_count(keep_draws, "keep_draws")
        self.releases = positive_count(releases, "releases")
        if self.releases > self.keep_draws:
            raise DataError(f"`releases` ({self.releases}) exceeds `keep_draws` ({self.keep_draws}): each release "
                            f"needs its own posterior draw; keep at least as many draws.")
        self.progress = check_bool(progress, "progress")
        if subsample is not None and not isinstance(subsample, bool) and not (
                isinstance(subsample, (int, np.integer)) and subsample >= 1):
            raise DataError(f"`subsample` must be None (the rule), True, False or a number of records; got "
                            f"{subsample!r}.")
        self.subsample = subsample
        self.part_of = part_of
        conf = list(confidential_covariates or [])
        if any(c not in covs for c in conf):
            raise DataError(f"`confidential_covariates` {conf} must be among the covariates {covs}.")
        #: Covariates whose values are confidential (a table's earlier columns): nothing is computed from their
        #: rows as if they were public.
        self.confidential_covariates = conf
        self.calibrate = None if calibrate is None else dict(calibrate)
        self._calibration = None
        #: A number of records public or released under DP that settings may be chosen from (a table sets it).
        self.size_hint: int | None = None
        self._size: ReleaseSize | None = None
        self.columns = list(data.columns)
        self.dtypes = {c: str(data[c].dtype) for c in self.columns}
        self.public = data[covs].reset_index(drop=True).copy()
        self._design = self._covariate_design(design, standardize)
        self._X = self._design.matrix(self.public)
        self._run_params = self._resolve_params(mechanism_params)
        self._warn_ignored_covariates()
        self.draws: dict | None = None
        self._release_state = None
        self._privacy: SynthesizerPrivacy | None = None
        self._weights: np.ndarray | None = None
        self._cm: CompiledModel | None = None
        self._simulator = None
        self.fit_id = ""
        self.fit_log: list[str] = []
        # last: every check of the input is done before the home (its key, its ledgers) is touched
        self.dataset, self.linked = self._dataset_ids(data, [target, *covs])

    # ------------------------------------------------------------------ settings and data
    def _dataset_ids(self, data: pd.DataFrame, columns: list[str]) -> tuple[str, list[str]]:
        """The data set's id under the home's primary key, and its ids under the home's other keys (a part of a
        table books into the table's)."""
        if self.part_of is not None:
            return self.part_of, []
        from .release.ledger import dataset_ids

        ids = list(dataset_ids(data, columns).values())
        return ids[0], ids[1:]

    def _check_chosen_params(self, given: Mapping | None) -> None:
        """With ``auto``, ``mechanism_params`` must be parameters of the mechanism chosen (said with the choice)."""
        unknown = sorted(set(given or {}) - set(self.spec.params))
        if unknown:
            raise DataError(f"mechanism='auto' chose {self.spec.key} ({self.choice.reason}), which has no "
                            f"parameter(s) {', '.join(map(repr, unknown))}; its parameters are: "
                            f"{', '.join(self.spec.params) or 'none'}. Name the mechanism these parameters are for "
                            f"(mechanism=...), or leave them out.")

    def _settings(self, target, covs, model, mechanism, eps, model_params, unit, offset, sampler,
                  censor_warn_share) -> None:
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

    def _covariate_design(self, design, standardize) -> CovariateDesign:
        covs = self.covariates
        if design is not None:
            if not isinstance(design, CovariateDesign) or tuple(design.columns) != tuple(covs):
                raise DataError(f"`design` must be a CovariateDesign of the covariates {covs}; got {design!r}.")
            if standardize is not None:
                raise DataError("give `design` (a fixed encoding of the covariates) or `standardize`, not both.")
            return design
        if standardize is None:
            standardize = self.relation == "replace"
        elif check_bool(standardize, "standardize") and self.relation == "remove":
            raise DataError(
                "`standardize=True` with one record removed would centre the covariates at figures of "
                "the data; centre them at public constants yourself, or use neighbours='replace' "
                "(their rows are then public)."
            )
        return CovariateDesign.from_frame(self.public, covs, standardize=standardize)

    def _check_kinds(self) -> None:
        """The target's kind must suit the model and the mechanism."""
        check_kinds(self.spec, self.model, self.encoding, self.target, bool(self.covariates))

    def _warn_ignored_covariates(self) -> None:
        """Say what is lost when covariates are given that the mechanism or the model does not use."""
        cells = self._run_params.get("cells")
        if cells is None and self.spec.covariate_use == "cells":  # the default: categorical ones and those cut at edges
            edges = self._run_params.get("cell_edges") or {}
            cells = [c for c in self.covariates if c in self.levels or c in edges]
        msg = ignored_covariates(self.spec, self.model, self.encoding, self.target, self.covariates, self.levels,
                                 cells, self._takes_covariates())
        if msg:
            warnings.warn(msg, CovariatesIgnoredWarning, stacklevel=3)

    def _dp_size(self) -> bool:
        """Whether a release over the fitted records needs a DP count of its size (one record removed, no public
        size)."""
        return self.part_of is None and self.relation == "remove" and not self.covariates and self.n_release is None

    def _resolve_params(self, given: Mapping | None) -> dict:
        """The budget's plan and the mechanism's checked parameters in the model's unit."""
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
            "target_kind": self.encoding.kind,
            "confidential_covariates": list(self.confidential_covariates) or None,
            "synthesis": "mean" if self.releases == 1 else "draw",
        }
        for k, p in self.spec.params.items():  # public values for parameters that may take them
            if p.fill is not None and converted.get(k) is None and fills.get(p.fill) is not None:
                converted[k] = fills[p.fill]
        if "mode" in self.spec.params:
            if given.get("mode") is not None:  # the mechanism's `mode` is the synthesizer's (dpsynth.release.mode)
                wanted = check_mode(given["mode"], "mechanism_params['mode']")
                if self._mode_setting not in (None, wanted):
                    raise DataError(f"`mechanism_params` mode={wanted!r} disagrees with the synthesizer's "
                                    f"mode={self._mode_setting!r}; give `mode` once.")
                self._mode_setting, self.mode = wanted, wanted
            converted["mode"] = self.mode  # a mechanism's own noise follows the synthesizer's mode (set again at fit)
        dp_ref = bool(self.spec.releases_reference is not None and self.spec.uses_model
                      and self.spec.releases_reference(converted, self.family()))
        strict = self.spec.takes_eps and self.spec.guarantee == "DP" and self.spec.uses_model
        q = subsample_rate(self._public_n() if self.relation == "replace" else None,
                           self.subsample) if strict else 1.0
        #: The total and its shares, under the relation, fixed before the fit (:mod:`dpsynth.release.budget`).
        self.budget = Budget.plan(self.eps if self.spec.takes_eps else None, self.relation, dp_size=self._dp_size(),
                                  dp_reference=dp_ref, size_eps=self.size_eps,
                                  reference_eps=converted.get("reference_eps") if dp_ref else None, sample_rate=q,
                                  releases=self.releases, dp_marginal=self.calibrate is not None,
                                  marginal_eps=self._check_calibrate(), model_free=not self.spec.uses_model)
        if self.spec.takes_eps and self.eps is None:
            self.spec.resolve(converted, None)  # raises, naming `eps`
        if not self.spec.takes_eps and self.eps is not None:
            self.spec.resolve(converted, self.eps)  # raises: the mechanism takes no eps
        if dp_ref:
            converted["reference_eps"] = self.budget.on_sample(self.budget.reference)
        params = self.spec.resolve(converted, self.budget.mechanism_eps(self.spec.eps_per_param))
        if self.spec.check_data is not None and self._x is not None:
            self.spec.check_data(self._x, params)
        return params

    def _check_calibrate(self) -> float | None:
        """Check ``calibrate`` (before any fit); return its explicit eps share, if any."""
        if self.calibrate is None:
            return None
        known = {"lower", "upper", "bins", "scale", "share"}
        unknown = sorted(set(self.calibrate) - known)
        if unknown:
            raise DataError(f"`calibrate` has unknown key(s) {unknown}; its keys are {sorted(known)} (e.g. "
                            f"calibrate={{'lower': 1.0, 'upper': 500.0}}).")
        if not (self.spec.uses_model and self.spec.takes_eps):
            raise DataError(f"`calibrate` maps a model's synthetic values onto a DP marginal; the {self.spec.key} "
                            f"mechanism is {'model-free' if not self.spec.uses_model else 'not run at a target eps'}. "
                            f"Use it with a model-based mechanism such as censor_ref, or leave it out.")
        if self.encoding.kind == "categorical":
            raise DataError("`calibrate` is for a numeric target; a categorical target's levels come from its model "
                            "(or use mechanism='noise_aware' for its DP level shares).")
        if "upper" not in self.calibrate:
            raise DataError("`calibrate` needs public bounds: {'lower': L, 'upper': U} in the data's unit, chosen "
                            "without looking at the data.")
        share = self.calibrate.get("share")
        if share is None:
            return None
        if not _is_number(share) or not 0 < float(share) < 1:
            raise DataError(f"`calibrate['share']` must be a number in (0, 1) (its share of eps); got {share!r}.")
        return float(share) * self.eps

    def _calibration_params(self) -> dict:
        """The noise-aware marginal's parameters in the model's unit (no cells, posterior-mean synthesis)."""
        c = {k: v for k, v in self.calibrate.items() if k != "share"}
        for k in ("lower", "upper"):
            if c.get(k) is not None and self.unit is not None:
                c[k] = float(c[k]) / self.unit
        return {**c, "cells": [], "kind": self.encoding.kind, "synthesis": "mean", "mode": self.mode}

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
        """Design matrix of public covariates: intercept, numeric columns, indicators of every level but the first."""
        return self._design.matrix(public)

    # ------------------------------------------------------------------ model
    def family(self) -> ModelFamily:
        """The :class:`ModelFamily` fitted (shipped, wrapped with an offset, or the function adapter)."""
        p = self._X.shape[1]
        if callable(self.model):  # built with placeholders of the target's kind and a public size, never the data
            return PyMCFunctionFamily(fn=self.model, n_coef=p, placeholder=PLACEHOLDERS[self.encoding.kind],
                                      build_size=self._public_size())
        kw = dict(self.model_params)
        if FAMILIES[self.model].categorical:
            kw["n_levels"] = self.encoding.n_levels
        fam = FAMILIES[self.model](**kw)
        if fam.takes_covariates:
            fam = fam.with_design(p)
        return fam if self.offset is None else OffsetFamily(base=fam, offset=self.offset)

    def _public_size(self) -> int:
        """The number of records a model function is built for: ``n`` when it is public (one record replaced), a
        declared size, else :data:`~dpsynth.models.user_function.PLACEHOLDER_SIZE`: never a confidential ``n``, and
        not a DP count either (a new one at each fit would build the model again)."""
        from .models.user_function import PLACEHOLDER_SIZE

        public = self._public_n()
        return max(int(public), 1) if public is not None else PLACEHOLDER_SIZE

    def _takes_covariates(self) -> bool:
        return callable(self.model) or FAMILIES[self.model].takes_covariates

    def _model_covariates(self, X: np.ndarray) -> np.ndarray | None:
        return X if self._takes_covariates() else None

    def _compiled(self) -> CompiledModel:
        if self._cm is None:
            from .fitting import compiled_model

            fam = self.family()
            x0, X0 = self._x, self._X
            if x0 is None:  # loaded without the data (a model function is built from placeholders in any case)
                n0 = self._public_size()
                x0 = np.full(n0, fam.placeholder)
                X0 = self._X if self._X.shape[0] == n0 else np.ones((n0, self._X.shape[1]))
            try:
                self._cm = compiled_model(fam, x0, self._model_covariates(X0))
            except DataError as e:  # the family's check of the values, said of the user's column with its knobs
                if callable(self.model):  # the check of a model function: its own message names the fix
                    raise
                label = self.model
                raise DataError(f"target column {self.target!r} (model {label}): {e} Or choose a model for its "
                                f"values: `model` (a table's `models`, keyed by column; dpsynth.models.FAMILIES "
                                f"lists them).") from None
        return self._cm

    # ------------------------------------------------------------------ fit
    def fit(self, seed: SeedLike = None) -> Synthesizer:
        """Run the mechanism on the data; sets :attr:`privacy` and the posterior draws. Returns ``self``.

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
        self.mode, seed = resolve_mode(self._mode_setting, seed)
        if "mode" in self.spec.params:
            self._run_params["mode"] = self.mode
        uses_model = self.spec.uses_model
        show = show_progress(self.progress)
        rows = self._fitted_rows(seed)
        x_all, clamped = self._clamped_values()
        x, X, public = (x_all, self._X, self.public) if rows is None else (
            x_all[rows], self._X[rows], self.public.iloc[rows].reset_index(drop=True))
        self._size = self._released_size(seed)  # before the fit: settings chosen from n may read its DP count
        hint = self._size.n if self._size is not None else self.size_hint
        with bar(show, f"{self.spec.name}: fits", unit="fit") as progress:
            ctx = mechanisms.RunContext(
                x,
                family=self.family() if uses_model else None,
                covariates=self._model_covariates(X) if uses_model else None,
                public=public,
                sampler=dataclasses.replace(self.sampler, progress=show),
                seed_fn=lambda *parts: stream(seed, "synthesizer", *parts),
                compiled=self._compiled() if uses_model else None,
                on_fit=lambda step: (progress.set_postfix_str(step), progress.update()),
                relation=self.relation,
                mode=self.mode,
                size_hint=hint,
            )
            res = self.spec.run(ctx, dict(self._run_params))
        calibration = self._calibrate_fit(x, seed, show, ctx.log) if self.calibrate is not None else None
        #: What the fit did besides fitting once. Confidential.
        self.fit_log = [f"{CONFIDENTIAL}: {line}" for line in ctx.log]
        self._privacy = self._report(res, ctx, clamped)
        self._calibration = None if calibration is None else calibration.release
        if calibration is not None and not calibration.converged:
            self._privacy = dataclasses.replace(self._privacy, converged=False)
        #: Names this fit's shares in the ledger (a reference and a size are charged once per fit).
        self.fit_id = secrets.token_hex(8)
        if res.fit is not None:
            S = res.fit.n_draws
            keep = np.unique(np.linspace(0, S - 1, min(self.keep_draws, S)).round().astype(int))
            self.draws = {k: np.asarray(res.fit.draws[k])[keep] for k in self._kept_names(res.fit)}
            self._weights = np.asarray(res.weights, dtype=float)
            self._release_state = None
        else:
            self.draws, self._weights, self._release_state = None, None, res.release
        self._warn_censoring()
        return self

    def _kept_names(self, fit) -> list[str]:
        """The draws a fit keeps (and a save writes): its free parameters only for a model function (never a
        deterministic, nor the sampler's unconstrained copies); a shipped family's deterministics too (its
        simulator reads them; they are the package's functions of the parameters)."""
        cm = fit.compiled
        if cm is None:  # pragma: no cover - every model-based mechanism fits through a compiled model
            if callable(self.model):
                raise AssertionError("a model function's fit without its compiled model: cannot tell its parameters")
            return list(fit.draws)
        names = list(cm.param_names)
        if not callable(self.model):
            names += [d.name for d in cm.model.deterministics]
        return [k for k in names if k in fit.draws]

    def _calibrate_fit(self, x: np.ndarray, seed: SeedLike, show: bool, log: list):
        """Release the target's noise-aware marginal at the budget's calibration share (``calibrate``)."""
        spec = mechanisms.catalog.get("noise_aware")
        b = self.budget
        eps = b.on_sample(b.marginal) / spec.eps_per_param[0 if self.relation == "remove" else 1]
        params = spec.resolve(self._calibration_params(), eps)
        spec.check_data(x, params)
        hint = self._size.n if self._size is not None else self.size_hint
        ctx = mechanisms.RunContext(x, public=None, sampler=dataclasses.replace(self.sampler, progress=show),
                                    seed_fn=lambda *parts: stream(seed, "synthesizer", "calibration", *parts),
                                    relation=self.relation, mode=self.mode, size_hint=hint)
        res = spec.run(ctx, params)
        log += [f"calibration marginal: {line}" for line in ctx.log]
        spent = res.privacy.epsilon(self.relation)
        if not spent <= b.on_sample(b.marginal) * (1 + 1e-9):
            raise AssertionError(f"the calibration marginal spent eps = {spent}, more than its share {b.marginal}")
        return res

    def public_bounds(self) -> tuple[float, float] | None:
        """The target's public bounds in the model's unit (the mechanism's ``lower``/``upper``, or the calibration's),
        or None: every record is clamped to them before the mechanism."""
        pairs = [(self._run_params.get("lower"), self._run_params.get("upper"))]
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

    def _fitted_rows(self, seed: SeedLike) -> np.ndarray | None:
        """The rows a subsampled fit sees (None: every row): drawn without replacement, from the seeded streams in
        research mode, from the system's secure randomness in release mode (the subsample is part of the mechanism)."""
        q = self.budget.sample_rate
        if q >= 1.0:
            return None
        n = int(self._x.size)
        rng = generator(stream(seed, "synthesizer", "subsample")) if self.mode == "research" else \
            np.random.default_rng(secrets.randbits(128))
        return np.sort(rng.choice(n, size=int(round(q * n)), replace=False))

    def _report(self, res, ctx, clamped: int = 0) -> SynthesizerPrivacy:
        """The privacy report of a run: the planned budget, checked against what the mechanism's run accounts."""
        p = res.privacy
        spent = p.epsilon(self.relation)  # the run's own accounting: its reference and its draw
        b = self.budget
        allowed = b.on_sample(b.reference) + b.on_sample(b.draw) if b.total is not None else np.inf
        if p.guarantee == "DP" and not spent <= allowed * (1 + 1e-9):  # on the records the fit saw
            raise AssertionError(f"{res.name} spent eps = {spent} with {self.relation}, more than its share "
                                 f"{allowed}; the budget is broken")
        if b.total is None or p.guarantee != "DP":  # an aDP figure is what the run reports, not a target
            ref = float(p.composed[0 if self.relation == "remove" else 1])
            b = Budget(self.relation, b.size + spent, size=b.size, reference=ref, draw=spent - ref)
        return SynthesizerPrivacy(
            mechanism=self.mechanism, name=res.name, guarantee=p.guarantee, relation=self.relation, budget=b,
            delta=float(p.delta), bound=float(p.bound), n_censored=int(p.n_censored), n=int(ctx.n),
            rhat_max=float(res.rhat_max), ess_min=float(res.ess_min), divergences=res.divergences,
            converged=res.converged,
            released="one posterior draw" if res.fit is not None else f"the release of {res.name}",
            mode=self.mode, condition=self._condition(),
            censored_typical=0.0 if res.bounds is None else float(res.bounds.censored_draw_share),
            draws_kept=1 if res.fit is None else min(self.keep_draws, res.fit.n_draws),
            extra=jsonable({k: v for k, v in p.extra.items() if isinstance(v, (int, float, str, bool, np.number))}),
            bounds=self._bounds_in_data_unit(),
            clamped=int(clamped),
        )

    def _bounds_in_data_unit(self) -> tuple | None:
        b = self.public_bounds()
        if b is None:
            return None
        u = self.unit or 1.0
        return (b[0] * u, b[1] * u)

    def _condition(self) -> str:
        """The condition the guarantee holds under: a model function's, which no check can establish (else none)."""
        return guarantee_condition(self.model) if callable(self.model) and self.spec.uses_model else ""

    def _released_size(self, seed: SeedLike = None) -> ReleaseSize | None:
        """The size of a release over the fitted records (None: a public frame must be given at release)."""
        if self.part_of is not None:
            return None  # the table sets its size once
        if self.relation == "replace":
            return ReleaseSize(n=int(self._x.size), how="replace")
        if self.covariates:
            return None  # the file's own covariate rows would reveal which records it holds
        if self.n_release is not None:
            return ReleaseSize(n=self.n_release, how="public")
        return dp_count(self._x, self.budget.size, mode=self.mode,
                        seed=stream(seed, "synthesizer", "size") if self.mode == "research" else None)

    def _warn_censoring(self) -> None:
        p = self._privacy
        if np.isfinite(p.bound) and p.censored_typical > self.censor_warn_share:
            advice = self.spec.censoring_advice or "raise eps"
            warnings.warn(
                f"{CONFIDENTIAL}: {p.name} censored {p.censored_typical:.0%} of the records at a typical draw (more "
                f"than censor_warn_share={self.censor_warn_share:g}): the mechanism has mostly discarded the data. "
                f"{advice}.",
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
        """The privacy report (its :meth:`~SynthesizerPrivacy.statement` is public, its diagnostics confidential).

        It is the same whether or not the chains passed their convergence checks: the guarantee is stated for
        an exact posterior draw, and the diagnostics tell the data holder how far the sampler is to be trusted
        (the book's introduction, "What MCMC costs"); they never decide what is released.
        """
        if self._privacy is None:
            raise DataError("the synthesizer is not fitted; call .fit() first.")
        return self._privacy

    @property
    def n_draws(self) -> int:
        """Posterior draws available for releases (1 for a model-free mechanism, released once)."""
        self.privacy  # noqa: B018 - raises if unfitted
        return 1 if self.draws is None else int(next(iter(self.draws.values())).shape[0])

    # ------------------------------------------------------------------ synthetic values
    def _synthetic_frame(self, public: pd.DataFrame, seed: SeedLike, draw: int,
                         synthesis: str | None = None) -> pd.DataFrame:
        """One synthetic data set for the rows of ``public`` from ``draw`` (``attrs["model_values"]``: model scale);
        ``synthesis`` overrides how a model-free release that offers several ways makes it (research only)."""
        X = self.design(public)
        n = X.shape[0]
        rng = generator(stream(seed, "records"))
        if self._release_state is not None:
            state = self._release_state
            if synthesis is not None and dataclasses.is_dataclass(state) and hasattr(state, "synthesis"):
                state = dataclasses.replace(state, synthesis=synthesis)
            values = state.sample(n, rng, public[self.covariates].reset_index(drop=True))
        elif callable(self.model):
            if self._simulator is None:
                from .models import ModelSimulator

                cm = self._compiled()
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
        if self._calibration is not None:
            from .mechanisms.noise_aware import calibrated_values

            state = self._calibration
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
        """Why a release's values (on the model's scale) are unusable: read from the synthetic values only."""
        support = None
        if isinstance(self.model, str) and self.spec.uses_model:
            fam = self.family()

            def support(v):
                try:
                    fam.check_data(v, None if not self._takes_covariates() else np.ones((v.size, self._X.shape[1])))
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
