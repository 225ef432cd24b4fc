"""The mechanism contract: what one mechanism module defines, and what every caller gets back.

A mechanism is one :class:`MechanismSpec` in one module of :mod:`dpsynth.mechanisms` (a close
family, such as the two censored likelihoods, may share a module). The spec holds

* what the registry shows: ``key``, display ``name`` and ``guarantee`` (``"none"``, ``"aDP"`` or
  ``"DP"``); how a figure draws it (colour, place) is the book's, not the mechanism's;
* what it needs besides the model, as a table of parameters with defaults and validators
  (:class:`Param`), in the manner of ArviZ's ``rcParams`` (``"stats.hdi_prob": (0.94,
  _validate_probability)``);
* how many model fits one release costs and when to use it (the choosing page's decision table);
* ``run(ctx, params)``, which takes a :class:`RunContext` (the data, the model, the sampler and the
  seeds) and the checked parameters and returns the one result type, :class:`MechanismResult`.

The registry (:mod:`dpsynth.registry`), the decision table, the command line's ``--mechanism``
choices and flags, and :class:`dpsynth.Synthesizer` are generated from the specs; a spec that
cannot run through the ``Synthesizer`` says why in ``not_runnable``.

Nothing here imports PyMC: the model is compiled by :attr:`RunContext.compiled` on first use, so
listing the mechanisms (``dpsynth fit --help``) stays fast.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from ..privacy import GUARANTEES, PrivacyReport, RecordBounds, censoring_bound
from ..seeds import SeedLike, stream
from ..validation import DataError

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from ..fitting import CompiledModel, Fit
    from ..mcmc_settings import SamplerConfig
    from ..models import ModelFamily

__all__ = [
    "REQUIRED",
    "CLI_KINDS",
    "Param",
    "MechanismSpec",
    "MechanismResult",
    "ReleasedState",
    "RunContext",
    "unique_fits",
    "censoring_bound",
    "censored_eps",
]


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


#: Default of a parameter that must be given.
REQUIRED = _Required()

#: How a parameter is given on the command line: a number, an integer, a word, several numbers,
#: several words, an on/off flag, a file of records laid out like DATA; ``None``: API only.
CLI_KINDS = ("float", "int", "str", "floats", "strs", "flag", "table", None)

_KEY = re.compile(r"^[a-z][a-z0-9_]*$")


@dataclass(frozen=True)
class Param:
    """One entry of a mechanism's parameter table.

    Attributes
    ----------
    default : object
        The default, or :data:`REQUIRED`.
    validate : callable
        ``validate(value, name) -> value``: returns the checked value or raises
        :class:`~dpsynth.validation.DataError` naming ``name`` and the fix.
    help : str
        One line on what it is (shown by ``dpsynth fit --help`` and the decision table).
    cli : str or None
        How the command line takes it (:data:`CLI_KINDS`); ``None`` for the API only.
    in_data_unit : bool
        A value on the confidential variable's scale (a public bound): the
        :class:`~dpsynth.Synthesizer` divides it by its public ``unit``, as it does the data.
    table : bool
        Records laid out like the confidential data (target and covariates), e.g. a historical
        data set: the ``Synthesizer`` turns a DataFrame into the model's ``(x, covariates)``.
    fill : str or None
        ``"public_size"``: left unset, the ``Synthesizer`` fills in the released size when that
        size is public (declared, or ``n`` with one record replaced), never a confidential ``n``.
        ``"levels_lower"``, ``"levels_upper"``, ``"levels_bins"``: for a categorical target, the
        ``Synthesizer`` fills in the range ``[-0.5, K - 0.5]`` of its public level codes and ``K``.
    """

    default: Any
    validate: Callable[[Any, str], Any]
    help: str
    cli: str | None = "float"
    in_data_unit: bool = False
    table: bool = False
    fill: str | None = None

    def __post_init__(self) -> None:
        if self.cli not in CLI_KINDS:
            raise ValueError(f"Param.cli must be one of {CLI_KINDS}; got {self.cli!r}.")

    @property
    def required(self) -> bool:
        """Whether the parameter has no default."""
        return self.default is REQUIRED


class ReleasedState(Protocol):
    """What a model-free mechanism releases (a noisy histogram, DP quantiles): it samples and saves."""

    def sample(self, n: int, rng: np.random.Generator, public: pd.DataFrame | None = None) -> np.ndarray:
        """``n`` synthetic values (post-processing of the release)."""

    def to_dict(self) -> dict:
        """Plain-JSON contents (read back by ``from_dict``)."""


@dataclass
class MechanismResult:
    """What every mechanism returns.

    Attributes
    ----------
    name : str
        Display name, e.g. ``"Censor_w"`` or ``"A[0.4,1.8]"``.
    fit : Fit or None
        The final (pseudo) posterior; ``None`` for a model-free mechanism.
    weights : numpy.ndarray or None
        Record weights of the final likelihood.
    bounds : RecordBounds or None
        By-record Lipschitz bounds the privacy report is computed from.
    privacy : PrivacyReport
        Delta, eps under both neighbour relations, guarantee, censoring count, extras.
    extra : dict
        Mechanism-specific numbers.
    key : str
        Registry key of the mechanism that produced it.
    release : ReleasedState or None
        A model-free mechanism's released state, from which synthetic values are drawn.
    fits : tuple of Fit
        Every MCMC fit this result rests on, in order (the shared unweighted fit included), for
        its convergence diagnostics.
    diagnostics : tuple of Diagnostics
        Convergence diagnostics (:class:`~dpsynth.mcmc_settings.Diagnostics`) of MCMC a mechanism runs
        without a :class:`Fit`: a model-free mechanism's own model of what it released (the
        noise-aware posterior of its noisy counts). They are checked with the fits' (``converged``,
        ``rhat_max``, ``ess_min``, ``divergences``).
    """

    name: str
    fit: Fit | None
    weights: np.ndarray | None
    bounds: RecordBounds | None
    privacy: PrivacyReport
    extra: dict = field(default_factory=dict)
    key: str = ""
    release: ReleasedState | None = None
    fits: tuple = ()
    shown: str = ""
    diagnostics: tuple = ()

    @property
    def guarantee(self) -> str:
        """``"none"``, ``"aDP"`` or ``"DP"``, from the mechanism's spec."""
        return self.privacy.guarantee

    @property
    def label(self) -> str:
        """Name shown with guarantee type, e.g. ``"Censor_uw (DP)"``; an alias shows its mechanism's: ``"LW (aDP)"``."""
        return f"{self.shown or self.name} ({self.guarantee})"

    def _checks(self) -> tuple:
        """The diagnostics of every fit, then the mechanism's own (:attr:`diagnostics`)."""
        return tuple(f.diagnostics for f in self.fits) + tuple(self.diagnostics)

    @property
    def converged(self) -> bool:
        """Whether every fit (and the mechanism's own MCMC) passed its R-hat, ESS and divergence checks (True
        without MCMC)."""
        return all(d.ok for d in self._checks())

    @property
    def rhat_max(self) -> float:
        """Worst R-hat over the fits and the mechanism's own MCMC (NaN without MCMC)."""
        return max((d.rhat_max for d in self._checks()), default=float("nan"))

    @property
    def ess_min(self) -> float:
        """Smallest bulk ESS over the fits and the mechanism's own MCMC (NaN without MCMC)."""
        return min((d.ess_min for d in self._checks()), default=float("nan"))

    @property
    def divergences(self) -> int:
        """Divergent transitions over the fits and the mechanism's own MCMC."""
        return int(sum(d.divergences for d in self._checks()))


@dataclass(frozen=True)
class MechanismSpec:
    """One mechanism: its registry entry, its parameters, its cost and its ``run``.

    Attributes
    ----------
    key : str
        Registry key used by the API and the command line (``"censor_w"``).
    name : str
        Display name in figures and tables (``"Censor_w"``); for a pattern, its prefix
        (``"A["``), completed by the run (``"A[0.4,1.8]"``).
    guarantee : str
        ``"none"``, ``"aDP"`` or ``"DP"``.
    description : str
        One line on what it is.
    run : callable or None
        ``run(ctx, params) -> MechanismResult``.
    params : mapping of str to Param
        What it needs besides the model and ``eps``.
    takes_eps : bool
        Whether it is run at a target epsilon (``eps`` is then required).
    fits_per_release : str
        MCMC fits one release costs, in words (``"1"``, ``"2 (unweighted, weighted)"``).
    needs : str
        What it needs besides the model, in words (the decision table's column).
    use_when : str
        When to use it.
    loses : str
        What a release loses against the unprotected posterior, in words (the advice of the
        choosing page's recommendation).
    uses_model : bool
        False for a model-free mechanism (a perturbed histogram, DP quantiles).
    pattern : bool
        Whether ``name`` is a prefix of parametrised names.
    not_runnable : str or None
        Why the mechanism cannot be run through the ``Synthesizer`` and the command line (None: it can).
    release_type : type or None
        A model-free mechanism's released state (its ``from_dict`` reads a saved synthesizer).
    check_data : callable or None
        ``check_data(x, params)``: checks against the data (in the model's unit) before any
        fitting, raising :class:`~dpsynth.validation.DataError`.
    targets : tuple of str
        The kinds of confidential column it synthesizes (``"continuous"``, ``"count"``,
        ``"categorical"``).
    alias_of : str or None
        Registry key of the mechanism this entry is another name for (one recipe, two papers'
        names): the API and the command line take both keys, the book shows the other entry's name
        (:func:`dpsynth.registry.display_name`). None for a mechanism of its own.
    shown_name : str
        The name its results' ``label`` shows: its own ``name`` by default; an alias gives the name of
        the mechanism it is another name for (``"LW"`` for ``weighted``).
    covariate_use : str
        How public covariates enter: ``"model"`` (through the model, if the family takes them),
        ``"cells"`` (the levels of categorical covariates as cells), ``"none"`` (not at all: the
        synthetic values do not depend on them).
    declared_eps : callable or None
        ``declared_eps(params, one_signed, extra) -> (eps_remove, eps_replace)``: the epsilon of one
        release computed from the settings (a censored likelihood's window, a histogram's noise; ``extra``
        is the report's, for what the run decided), which a loaded synthesizer's report must match;
        ``None`` when it is computed from the data (aDP).
    eps_per_param : tuple of float
        ``(removed, replaced)`` eps of one release per unit of the mechanism's ``eps`` parameter: ``(1, 2)`` for
        every mechanism here that is run at a target eps (a window of width eps; a histogram or quantile
        calibrated under removal), ``(0.5, 1)`` for one calibrated under replacement. The
        :class:`~dpsynth.release.budget.Budget` divides a draw's share by it
        (:meth:`~dpsynth.release.budget.Budget.mechanism_eps`).
    releases_reference : callable or None
        ``releases_reference(given_params, family) -> bool``: whether the run releases a reference from the
        data (charged once per fit out of the total eps, :mod:`dpsynth.release.budget`); None: never.
    censoring_advice : str
        What to change when a fit censors most records: the knob that applies to this mechanism.
    """

    key: str
    name: str
    guarantee: str
    description: str
    run: Callable[[RunContext, dict], MechanismResult] | None = None
    params: Mapping[str, Param] = field(default_factory=dict)
    takes_eps: bool = False
    fits_per_release: str = "1"
    needs: str = "nothing else"
    use_when: str = ""
    loses: str = ""
    uses_model: bool = True
    pattern: bool = False
    not_runnable: str | None = None
    release_type: type | None = None
    check_data: Callable[[np.ndarray, dict], None] | None = None
    declared_eps: Callable[[dict, bool, dict], tuple[float, float]] | None = None
    targets: tuple = ("continuous", "count", "categorical")
    covariate_use: str = "model"
    alias_of: str | None = None
    shown_name: str = ""
    eps_per_param: tuple = (1.0, 2.0)
    releases_reference: Callable[[Mapping, Any], bool] | None = None
    censoring_advice: str = ""

    def __post_init__(self) -> None:
        if not self.shown_name:  # the name pages show: the entry's own, or (an alias) its mechanism's
            object.__setattr__(self, "shown_name", self.name)
        if not isinstance(self.key, str) or not _KEY.match(self.key):
            raise ValueError(f"a mechanism key must be lower-case letters, digits and '_'; got {self.key!r}.")
        if self.guarantee not in GUARANTEES:
            raise ValueError(f"mechanism {self.key!r}: `guarantee` must be one of {GUARANTEES}; got "
                             f"{self.guarantee!r}.")
        if self.covariate_use not in ("model", "cells", "none"):
            raise ValueError(f"mechanism {self.key!r}: `covariate_use` must be 'model', 'cells' or 'none'.")
        if self.alias_of is not None and (not _KEY.match(self.alias_of) or self.alias_of == self.key):
            raise ValueError(f"mechanism {self.key!r}: `alias_of` must be another mechanism's key; got "
                             f"{self.alias_of!r}.")
        if self.run is None and self.not_runnable is None:
            raise ValueError(f"mechanism {self.key!r} has no `run`; set `not_runnable` to say why.")
        for nm, p in self.params.items():
            if not isinstance(p, Param) or not _KEY.match(nm) or nm == "eps":
                raise ValueError(f"mechanism {self.key!r}: parameter {nm!r} must be a Param with a lower-case name "
                                 f"other than 'eps' (eps is given apart).")

    # ------------------------------------------------------------------ display
    def label(self, name: str | None = None) -> str:
        """Display label with the guarantee, e.g. ``"Censor_w (aDP)"``."""
        return f"{name or self.name} ({self.guarantee})"

    @property
    def runnable(self) -> bool:
        """Whether it runs through the ``Synthesizer`` and the command line."""
        return self.not_runnable is None

    # ------------------------------------------------------------------ parameters
    def resolve(self, given: Mapping | None = None, eps: Any = None) -> dict:
        """The checked parameters: ``given`` validated, defaults filled in, and ``eps`` if it takes one.

        Raises
        ------
        DataError
            For an unknown name (listing the known ones), a missing required parameter (with its
            help), an invalid value (from its validator), or ``eps`` given to a mechanism that
            does not take one or missing from one that does.
        """
        from ..validation import check_eps

        given = dict(given or {})
        unknown = sorted(set(given) - set(self.params))
        if unknown:
            known = ", ".join(self.params) or "none"
            raise DataError(f"the {self.key} mechanism has no parameter(s) {', '.join(map(repr, unknown))}; its "
                            f"parameters are: {known}.")
        out = {}
        for nm, p in self.params.items():
            if nm in given and given[nm] is not None:
                out[nm] = p.validate(given[nm], nm)
            elif p.required:
                raise DataError(f"the {self.key} mechanism needs `{nm}`: {p.help}")
            else:
                out[nm] = p.default
        if self.takes_eps:
            if eps is None:
                raise DataError(f"the {self.key} mechanism is run at a target `eps`; pass eps=... (e.g. eps=1.0).")
            out["eps"] = check_eps(eps)
        elif eps is not None:
            raise DataError(f"the {self.key} mechanism does not take `eps` (its epsilon is reported after the fit); "
                            f"remove eps={eps!r}, or choose a mechanism run at a target eps.")
        return out

    # ------------------------------------------------------------------ results
    def result(self, fit: Fit, *, fits=(), bounds: RecordBounds | None = None, name: str | None = None,
               composed: tuple[float, float] = (0.0, 0.0), **extra) -> MechanismResult:
        """Wrap a fit as this mechanism's :class:`MechanismResult`.

        The guarantee is the spec's. A strict ``"DP"`` result needs a censored fit with
        ``Delta <= M`` (asserted here, for every fit).
        """
        from ..privacy import privacy_report

        b = fit.bounds if bounds is None else bounds
        rep = privacy_report(b, fit.bound if fit.censored else None, guarantee=self.guarantee,
                             one_signed=fit.one_signed, **extra)
        if any(composed):
            import dataclasses

            rep = dataclasses.replace(rep, composed=(float(composed[0]), float(composed[1])))
        all_fits = unique_fits(fits, (fit,))
        return MechanismResult(name=name or self.name, fit=fit, weights=fit.weights, bounds=b, privacy=rep,
                               extra=dict(extra), key=self.key, fits=all_fits,
                               shown=self.shown_name if name in (None, self.name) else name)

    def released(self, release: ReleasedState, *, eps_remove: float, eps_replace: float, diagnostics: tuple = (),
                 **extra) -> MechanismResult:
        """A model-free mechanism's :class:`MechanismResult` (epsilon calibrated by its noise).

        ``diagnostics``: the :class:`~dpsynth.mcmc_settings.Diagnostics` of MCMC the mechanism ran on
        what it released (post-processing, no :class:`Fit`), checked as a fit's are.
        """
        from ..privacy import calibrated_report

        rep = calibrated_report(eps_remove, eps_replace, guarantee=self.guarantee, **extra)
        return MechanismResult(name=self.name, fit=None, weights=None, bounds=None, privacy=rep, extra=dict(extra),
                               key=self.key, release=release, shown=self.shown_name, diagnostics=tuple(diagnostics))


#: A failed fit that censored more than this share of its records at a typical draw is not refitted: retries
#: lengthen the chains, which cannot bring records back inside their windows. (A record censored at *some* draw of
#: a wide posterior is not evidence of that: a small file's fit can touch every record's window edge somewhere.)
NO_RETRY_CENSORED = 0.9


def _raised_accept(target_accept: float) -> float:
    """The target acceptance rate of a retry after divergent transitions: 0.8 -> 0.95 -> 0.99."""
    return 0.99 if target_accept >= 0.95 else 0.95


class RunContext:
    """What a mechanism runs on: the data, the model, the sampler, the seeds, and shared fits.

    One context serves every mechanism run on one data set: a fit two mechanisms both need
    (the unweighted fit behind every Lipschitz weight, a weighted fit re-weighting starts from)
    is computed once and kept (:meth:`shared`).

    Parameters
    ----------
    x : numpy.ndarray
        The confidential values, in the model's unit.
    family : ModelFamily, optional
        The model (None for model-free mechanisms only).
    covariates : numpy.ndarray, optional
        The design matrix of public covariates, for a family that takes one.
    public : pandas.DataFrame, optional
        The public covariate columns themselves (cells of DP quantiles).
    sampler : SamplerConfig, optional
        MCMC settings (default :class:`~dpsynth.fitting.SamplerConfig`).
    seed : int or SeedSequence, optional
        Master seed; the fit of step ``s`` uses ``stream(seed, s, ...)``.
    seed_fn : callable, optional
        ``seed_fn(*parts)`` replacing that rule (a study's own streams).
    compiled : CompiledModel, optional
        An already compiled model of ``family``.
    retries : int
        A fit that fails its R-hat, ESS or divergence checks is run again with twice the draws
        and tuning steps, at most this many times (0: never); :attr:`log` says what was done.
        Only the last run of a fit is used: a failed run is never handed back as usable.
    on_fit : callable, optional
        ``on_fit(step)`` after each fit (a progress bar).
    relation : {"remove", "replace"}
        The neighbour relation the run's own DP releases (a reference) are calibrated under.
    mode : {"research", "release"}
        Where the noise of a DP release made before the fit comes from: the seeded streams (research,
        reproducible) or the system's secure randomness through OpenDP (release, not seedable).
    size_hint : float, optional
        A number of records that is public or already released under DP (a declared size, the released
        size's DP count), for settings chosen from n (a histogram's number of bins).
    """

    def __init__(self, x, *, family: ModelFamily | None = None, covariates=None, public: pd.DataFrame | None = None,
                 sampler: SamplerConfig | None = None, seed: SeedLike = None,
                 seed_fn: Callable[..., SeedLike] | None = None, compiled: CompiledModel | None = None,
                 retries: int = 0, on_fit: Callable[[str], None] | None = None, relation: str = "remove",
                 mode: str = "release", size_hint: float | None = None) -> None:
        from ..privacy import check_neighbours

        self.relation = check_neighbours(relation)
        if mode not in ("research", "release"):
            raise DataError(f"`mode` must be 'research' or 'release'; got {mode!r}.")
        self.mode = mode
        #: A number of records a mechanism may read as public (a declared size, or the DP released size), or None.
        self.size_hint = None if size_hint is None else float(size_hint)
        self.x = np.asarray(x, dtype=float)
        self.family = family
        self.covariates = covariates
        self.public = public
        self._sampler = sampler
        self.seed = seed
        self._seed_fn = seed_fn
        self._compiled = compiled
        self._shared: dict = {}
        self.retries = int(retries)
        self._on_fit = on_fit
        #: Every fit run through this context, in order (the last run of a retried fit).
        self.fits: list = []
        #: What the context did besides fitting once: one line per retry.
        self.log: list[str] = []

    @property
    def sampler(self) -> SamplerConfig:
        """The MCMC settings."""
        if self._sampler is None:
            from ..mcmc_settings import SamplerConfig

            self._sampler = SamplerConfig()
        return self._sampler

    @property
    def n(self) -> int:
        """Number of confidential records."""
        return int(self.x.size)

    @property
    def compiled(self) -> CompiledModel:
        """The family's compiled model (compiled on first use, once per process and family)."""
        if self._compiled is None:
            if self.family is None:
                raise DataError("this mechanism needs a model, and none was given.")
            from ..fitting import compiled_model

            self._compiled = compiled_model(self.family, self.x, self.covariates)
        return self._compiled

    def seed_for(self, *parts) -> SeedLike:
        """The seed of one step (``stream(seed, *parts)``, or the context's ``seed_fn``)."""
        return self._seed_fn(*parts) if self._seed_fn is not None else stream(self.seed, *parts)

    def fit(self, *step, x=None, covariates=None, weights=None, bound: float | None = None,
            privacy_weights=None, reference=None, init=None, reference_is_max: bool = False,
            data: Mapping | None = None) -> Fit:
        """Fit the (weighted, censored) pseudo posterior on the context's data, seeded by ``step``.

        ``x`` and ``covariates`` replace the context's data (a historical data set); ``init`` is a
        public starting point of the chains (:meth:`dpsynth.fitting.CompiledModel.fit`).
        """
        import dataclasses
        import warnings

        from ..mcmc_settings import ConvergenceWarning

        own = x is None
        cfg = self.sampler
        for attempt in range(self.retries + 1):
            seed = self.seed_for(*step) if attempt == 0 else self.seed_for(*step, "retry", attempt)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", ConvergenceWarning)
                fit = self.compiled.fit(self.x if own else x, covariates=self.covariates if own else covariates,
                                        weights=weights, bound=bound, privacy_weights=privacy_weights, sampler=cfg,
                                        seed=seed, reference=reference, init=init, reference_is_max=reference_is_max,
                                        data=data)
            last = attempt == self.retries
            censored = fit.censored and fit.bounds.censored_draw_share > NO_RETRY_CENSORED
            if censored and not fit.diagnostics.ok and not last:  # longer chains do not bring records into windows
                self.log.append(f"the {'/'.join(map(str, step))} fit failed its checks and censored "
                                f"{fit.bounds.censored_draw_share:.0%} of its {fit.x.size} records at a typical draw: "
                                f"the windows, not the sampler, are the problem, so it was not refitted")
                last = True
            if fit.diagnostics.ok or last:
                for w in caught:  # the warnings of the run that is kept
                    warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
                break
            longer = dataclasses.replace(cfg, draws=2 * cfg.draws, tune=2 * cfg.tune)
            smaller = ""
            if fit.diagnostics.divergences:  # divergences mean steps too long for the posterior's curvature
                longer = dataclasses.replace(longer, target_accept=_raised_accept(cfg.target_accept))
                smaller = f" and a target acceptance rate of {longer.target_accept:g} (smaller steps)"
            self.log.append(f"the {'/'.join(map(str, step))} fit failed its checks ({fit.diagnostics.problems()}); "
                            f"refitted with {longer.draws} draws and {longer.tune} tuning steps per chain{smaller}")
            cfg = longer
        if attempt and fit.diagnostics.ok:
            self.log.append(f"the {'/'.join(map(str, step))} fit passed its checks after {attempt} retr"
                            f"{'y' if attempt == 1 else 'ies'}")
        self.fits.append(fit)
        if self._on_fit is not None:
            self._on_fit("/".join(map(str, step)))
        return fit

    def shared(self, key: tuple, make: Callable[[], Any]) -> Any:
        """``make()`` the first time ``key`` is asked for; the same object after that."""
        if key not in self._shared:
            self._shared[key] = make()
        return self._shared[key]

    def forget(self, key: tuple) -> None:
        """Drop a shared object (e.g. a large matrix no longer needed)."""
        self._shared.pop(key, None)


def unique_fits(*groups) -> tuple:
    """The fits of ``groups`` in order, each once (by identity: fits hold arrays and are not hashable)."""
    out: list = []
    for group in groups:
        for f in group:
            if not any(f is g for g in out):
                out.append(f)
    return tuple(out)


def censored_eps(params: dict, one_signed: bool, extra: dict | None = None) -> tuple[float, float]:
    """A censored likelihood's epsilon from its settings: the window's width ``eps`` removed, ``2 eps`` replaced."""
    e = float(params["eps"])
    return e, 2.0 * e
