"""A synthesizer's fitted state, and the steps of its fit that read the plan and the data only.

:meth:`dpsynth.Synthesizer.fit` runs the planned mechanism (:class:`~dpsynth.synthesizer_plan.SynthesizerPlan`)
and keeps what releases need as a :class:`FittedState`: the kept posterior draws (or a model-free
mechanism's release), the calibration's DP marginal, the privacy report, the released size and the
fit's id. The steps here take what they read as arguments: the rows a subsampled fit sees
(:func:`fitted_rows`), the released size (:func:`released_size`), the calibration's marginal
(:func:`calibration_marginal`), the report checked against the budget (:func:`privacy_report`), the draws
kept (:func:`kept_draws`) and the confidential censoring warning (:func:`warn_censoring`).
"""

from __future__ import annotations

import dataclasses
import secrets
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .release.budget import Budget
from .release.size import ReleaseSize, dp_count
from .release.statement import CONFIDENTIAL, SynthesizerPrivacy
from .seeds import SeedLike, generator, stream
from .synthesizer_files import jsonable

if TYPE_CHECKING:  # pragma: no cover
    from .mcmc_settings import SamplerConfig
    from .mechanisms.contract import MechanismResult, MechanismSpec, RunContext

__all__ = ["FittedState", "TableState", "CensoringWarning", "fitted_rows", "released_size", "calibration_marginal",
           "privacy_report", "kept_draws", "warn_censoring"]


class CensoringWarning(UserWarning):
    """CONFIDENTIAL: a censored fit censored more than the stated share of records (a figure of the data)."""


@dataclass(frozen=True)
class FittedState:
    """What a fit leaves for the releases (and a saved file holds).

    Attributes
    ----------
    fit_id : str
        Names the fit's charges in the ledger (a reference and a size are charged once per fit).
    privacy : dpsynth.release.statement.SynthesizerPrivacy
        The report: its statement is public, its diagnostics confidential.
    size : ReleaseSize or None
        The size of a release over the fitted records (None: a public frame must be given at release).
    draws : dict or None
        The kept posterior draws (None for a model-free mechanism).
    release : object or None
        A model-free mechanism's released state (its ``sample``, ``to_dict``, ``from_dict``).
    calibration : object or None
        The target's released DP marginal the synthetic values are mapped onto (``calibrate``).
    weights : numpy.ndarray or None
        The record weights of the fit. Confidential: never saved with the synthesizer.
    log : list of str
        What the fit did besides fitting once. Confidential.
    """

    fit_id: str
    privacy: SynthesizerPrivacy
    size: ReleaseSize | None = None
    draws: dict | None = None
    release: Any = None
    calibration: Any = None
    weights: np.ndarray | None = field(default=None, repr=False, compare=False)
    log: list = field(default_factory=list)

    @property
    def n_draws(self) -> int:
        """Posterior draws available for releases (1 for a model-free mechanism, released once)."""
        return 1 if self.draws is None else int(next(iter(self.draws.values())).shape[0])

    def clamped_by(self, n: int) -> FittedState:
        """This state with the report's count of values clamped set to ``n`` (a table clamps its columns first)."""
        return dataclasses.replace(self, privacy=dataclasses.replace(self.privacy, clamped=int(n)))

    def to_dict(self, draws: Mapping | None = None) -> dict:
        """Plain JSON (a saved file's fitted state): ``draws`` as given (those a file may hold), or the kept ones."""
        draws = self.draws if draws is None else draws
        return jsonable({
            "fit_id": self.fit_id,
            "size": None if self.size is None else dataclasses.asdict(self.size),
            "privacy": self.privacy.to_dict(),
            "draws": None if draws is None else dict(draws),
            "release": None if self.release is None else self.release.to_dict(),
            "calibration": None if self.calibration is None else self.calibration.to_dict(),
        })

    @classmethod
    def from_dict(cls, d: Mapping, spec: MechanismSpec) -> FittedState:
        """Read :meth:`to_dict` (a model-free release by its mechanism's ``release_type``)."""
        cal = d.get("calibration")
        if cal is not None:
            from .mechanisms.noise_aware import NoiseAwareRelease

            cal = NoiseAwareRelease.from_dict(cal)
        rel = d.get("release")
        return cls(fit_id=str(d["fit_id"]), privacy=SynthesizerPrivacy.from_dict(d["privacy"]),
                   size=None if d["size"] is None else ReleaseSize(**d["size"]),
                   draws=None if d["draws"] is None else {k: np.asarray(v, dtype=float) for k, v in d["draws"].items()},
                   release=None if rel is None else spec.release_type.from_dict(rel), calibration=cal)


@dataclass(frozen=True)
class TableState:
    """What a table's fit leaves besides its fitted conditionals (:attr:`TableSynthesizer.parts`).

    Attributes
    ----------
    fit_id : str
        Names the table's charges paid once per fit (the released size) in the ledger.
    size : ReleaseSize or None
        The size of a release over the fitted records (None: a public frame must be given at release).
    log : list of str
        What the parts' fits did besides fitting once. Confidential.
    """

    fit_id: str
    size: ReleaseSize | None = None
    log: list = field(default_factory=list)

    def to_dict(self) -> dict:
        """Plain JSON."""
        return {"fit_id": self.fit_id, "size": None if self.size is None else dataclasses.asdict(self.size)}

    @classmethod
    def from_dict(cls, d: Mapping) -> TableState:
        """Read :meth:`to_dict`."""
        return cls(fit_id=str(d["fit_id"]), size=None if d["size"] is None else ReleaseSize(**d["size"]))


def new_fit_id() -> str:
    """A fit's id: random, so that two fits of the same data never share a charge."""
    return secrets.token_hex(8)


def fitted_rows(rate: float, n: int, mode: str, seed: SeedLike) -> np.ndarray | None:
    """The rows a subsampled fit sees (None: every row): drawn without replacement, from the seeded streams in
    research mode, from the system's secure randomness in release mode (the subsample is part of the mechanism)."""
    if rate >= 1.0:
        return None
    rng = generator(stream(seed, "synthesizer", "subsample")) if mode == "research" else \
        np.random.default_rng(secrets.randbits(128))
    return np.sort(rng.choice(n, size=int(round(rate * n)), replace=False))


def released_size(x: np.ndarray, *, part_of: str | None, relation: str, has_covariates: bool, n_release: int | None,
                  budget: Budget, mode: str, seed: SeedLike = None) -> ReleaseSize | None:
    """The size of a release over the fitted records (None: a public frame must be given at release)."""
    if part_of is not None:
        return None  # the table sets its size once
    if relation == "replace":
        return ReleaseSize(n=int(x.size), how="replace")
    if has_covariates:
        return None  # the file's own covariate rows would reveal which records it holds
    if n_release is not None:
        return ReleaseSize(n=n_release, how="public")
    return dp_count(x, budget.size, mode=mode, seed=stream(seed, "synthesizer", "size") if mode == "research" else None)


def calibration_marginal(x: np.ndarray, params: dict, *, budget: Budget, relation: str, sampler: SamplerConfig,
                         mode: str, seed: SeedLike, size_hint: int | None, log: list) -> MechanismResult:
    """Release the target's noise-aware marginal at the budget's calibration share (``calibrate``): ``params`` are
    the marginal's parameters in the model's unit."""
    from . import mechanisms

    spec = mechanisms.catalog.get("noise_aware")
    eps = budget.on_sample(budget.marginal) / spec.eps_per_param[0 if relation == "remove" else 1]
    resolved = spec.resolve(params, eps)
    spec.check_data(x, resolved)
    ctx = mechanisms.RunContext(x, public=None, sampler=sampler,
                                seed_fn=lambda *parts: stream(seed, "synthesizer", "calibration", *parts),
                                relation=relation, mode=mode, size_hint=size_hint)
    res = spec.run(ctx, resolved)
    log += [f"calibration marginal: {line}" for line in ctx.log]
    spent = res.privacy.epsilon(relation)
    if not spent <= budget.on_sample(budget.marginal) * (1 + 1e-9):
        raise AssertionError(f"the calibration marginal spent eps = {spent}, more than its share {budget.marginal}")
    return res


def privacy_report(res: MechanismResult, ctx: RunContext, *, mechanism: str, budget: Budget, relation: str,
                   mode: str, keep_draws: int, condition: str, bounds: tuple | None,
                   clamped: int = 0) -> SynthesizerPrivacy:
    """The privacy report of a run: the planned budget, checked against what the mechanism's run accounts."""
    p = res.privacy
    spent = p.epsilon(relation)  # the run's own accounting: its reference and its draw
    b = budget
    allowed = b.on_sample(b.reference) + b.on_sample(b.draw) if b.total is not None else np.inf
    if p.guarantee == "DP" and not spent <= allowed * (1 + 1e-9):  # on the records the fit saw
        raise AssertionError(f"{res.name} spent eps = {spent} with {relation}, more than its share "
                             f"{allowed}; the budget is broken")
    if b.total is None or p.guarantee != "DP":  # an aDP figure is what the run reports, not a target
        ref = float(p.composed[0 if relation == "remove" else 1])
        b = Budget(relation, b.size + spent, size=b.size, reference=ref, draw=spent - ref)
    return SynthesizerPrivacy(
        mechanism=mechanism, name=res.name, guarantee=p.guarantee, relation=relation, budget=b,
        delta=float(p.delta), bound=float(p.bound), n_censored=int(p.n_censored), n=int(ctx.n),
        rhat_max=float(res.rhat_max), ess_min=float(res.ess_min), divergences=res.divergences,
        converged=res.converged,
        released="one posterior draw" if res.fit is not None else f"the release of {res.name}",
        mode=mode, condition=condition,
        censored_typical=0.0 if res.bounds is None else float(res.bounds.censored_draw_share),
        draws_kept=1 if res.fit is None else min(keep_draws, res.fit.n_draws),
        extra=jsonable({k: v for k, v in p.extra.items() if isinstance(v, (int, float, str, bool, np.number))}),
        bounds=bounds,
        clamped=int(clamped),
    )


def kept_draws(fit, keep: int, *, model_function: bool) -> dict:
    """The draws a fit keeps (and a save writes): ``keep`` of them, evenly spaced; of its free parameters only for a
    model function (never a deterministic, nor the sampler's unconstrained copies), a shipped family's deterministics
    too (its simulator reads them; they are the package's functions of the parameters)."""
    cm = fit.compiled
    if cm is None:  # pragma: no cover - every model-based mechanism fits through a compiled model
        if model_function:
            raise AssertionError("a model function's fit without its compiled model: cannot tell its parameters")
        names = list(fit.draws)
    else:
        names = list(cm.param_names)
        if not model_function:
            names += [d.name for d in cm.model.deterministics]
    S = fit.n_draws
    rows = np.unique(np.linspace(0, S - 1, min(keep, S)).round().astype(int))
    return {k: np.asarray(fit.draws[k])[rows] for k in names if k in fit.draws}


def warn_censoring(p: SynthesizerPrivacy, share: float, advice: str | None) -> None:
    """A confidential :class:`CensoringWarning` when a censored fit censored more than ``share`` of the records at a
    typical draw."""
    if np.isfinite(p.bound) and p.censored_typical > share:
        warnings.warn(
            f"{CONFIDENTIAL}: {p.name} censored {p.censored_typical:.0%} of the records at a typical draw (more "
            f"than censor_warn_share={share:g}): the mechanism has mostly discarded the data. "
            f"{advice or 'raise eps'}.",
            CensoringWarning,
            stacklevel=3,
        )
