"""MCMC settings and convergence diagnostics: what a fit is asked to do and how it is judged.

Kept apart from :mod:`dpsynth.fitting` (which imports PyMC, PyTensor, nutpie and ArviZ) so that
building or loading a :class:`~dpsynth.Synthesizer`, and the command line, start without them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from .validation import DataError, check_probability

__all__ = ["SamplerConfig", "Diagnostics", "ConvergenceWarning", "CORES_ENV", "default_cores"]


class ConvergenceWarning(UserWarning):
    """CONFIDENTIAL: a fit's R-hat or bulk ESS fails its threshold, or the sampler reported divergences (figures of
    the data, for the data holder only)."""


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _is_real(value) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


#: Environment variable: the sampler threads per fit when ``SamplerConfig.cores`` is None. Worker
#: processes of a study set it so that processes x threads does not exceed the cores.
CORES_ENV = "DPSYNTH_SAMPLER_CORES"


def default_cores() -> int:
    """Sampler threads per fit: ``$DPSYNTH_SAMPLER_CORES`` if set, else the number of CPUs."""
    env = os.environ.get(CORES_ENV, "")
    return int(env) if env.isdigit() and int(env) >= 1 else (os.cpu_count() or 1)


#: The mass-matrix adaptations :class:`SamplerConfig` accepts.
MASS_MATRICES = ("diag", "low_rank")
#: The mass matrix of a release (``dpsynth.synthesizer.RELEASE_SAMPLER``) and of the book's studies
#: (``StudyParams.mass_matrix``).
RELEASE_MASS_MATRIX = "low_rank"
#: The mass matrix of study parameters that name none: they were written before studies chose it,
#: and sampled with the diagonal one.
LEGACY_MASS_MATRIX = "diag"


@dataclass(frozen=True)
class SamplerConfig:
    """MCMC settings shared by the fits of a study.

    Attributes
    ----------
    draws, tune, chains : int
        Retained draws and tuning steps per chain, and number of chains (pooled afterwards).
    cores : int, optional
        Chains run in parallel, a positive integer (default: ``min(chains, default_cores())``: the CPUs,
        or ``$DPSYNTH_SAMPLER_CORES`` in a study's worker processes).
    draw_quantile : float
        Draw-dropping rule of the Lipschitz bound (1.0 keeps all draws).
    rhat_max : float
        Largest acceptable R-hat (finite, >= 1).
    ess_min : float, optional
        Smallest acceptable bulk ESS, finite and >= 0 (default ``100 * chains``).
    progress : bool
        Show the sampler's progress bars (nutpie's: in a terminal or a notebook).
    target_accept : float
        The average acceptance probability the step size is adapted to (nutpie's default 0.8); a
        larger value takes smaller steps, which removes divergent transitions in a curved posterior
        (a funnel) at the cost of more gradient evaluations. It changes how the posterior is explored,
        not the posterior.
    mass_matrix : {"diag", "low_rank"}
        The sampler's mass-matrix adaptation: ``"diag"`` (a diagonal mass matrix, nutpie's default,
        the default of this class) or ``"low_rank"`` (nutpie's low-rank modified mass matrix, which
        also learns the strongest correlations between parameters: on a regression with correlated
        coefficients it takes about 7 instead of 16 gradient evaluations per draw, so a fit is about
        twice as fast, and the draws pass the same R-hat, ESS and divergence checks). It changes how
        the posterior is explored, not the posterior. :class:`dpsynth.Synthesizer` and the book's
        studies (``StudyParams.mass_matrix``) use ``"low_rank"`` by default.

    Raises
    ------
    DataError
        If a field is out of range; the message names the field.
    """

    draws: int = 1000
    tune: int = 1000
    chains: int = 2
    cores: int | None = None
    draw_quantile: float = 1.0
    rhat_max: float = 1.01
    ess_min: float | None = None
    progress: bool = False
    target_accept: float = 0.8
    mass_matrix: str = "diag"

    def __post_init__(self) -> None:
        for name in ("draws", "tune", "chains"):
            val = getattr(self, name)
            if not _is_int(val) or val < 1:
                raise DataError(f"`{name}` must be a positive integer; got {val!r}.")
        if self.cores is not None and (not _is_int(self.cores) or self.cores < 1):
            raise DataError(
                f"`cores` must be a positive integer (chains run in parallel) or None for "
                f"min(chains, cpu count); got {self.cores!r}."
            )
        check_probability(self.draw_quantile, "draw_quantile")
        if not _is_real(self.target_accept) or not 0.5 <= float(self.target_accept) < 1:
            raise DataError(
                f"`target_accept` must be a number in [0.5, 1) (the sampler's target acceptance rate; e.g. 0.8, "
                f"or 0.95 when a fit has divergent transitions); got {self.target_accept!r}."
            )
        if self.mass_matrix not in MASS_MATRICES:
            raise DataError(
                f"`mass_matrix` must be one of {', '.join(map(repr, MASS_MATRICES))} (the sampler's mass-matrix "
                f"adaptation); got {self.mass_matrix!r}."
            )
        if not isinstance(self.progress, bool):
            raise DataError(f"`progress` must be True or False; got {self.progress!r}.")
        if not _is_real(self.rhat_max) or not np.isfinite(self.rhat_max) or self.rhat_max < 1:
            raise DataError(
                f"`rhat_max` must be a finite number >= 1 (R-hat is >= 1 at convergence; e.g. 1.01); "
                f"got {self.rhat_max!r}."
            )
        if self.ess_min is not None and (
            not _is_real(self.ess_min) or not np.isfinite(self.ess_min) or self.ess_min < 0
        ):
            raise DataError(
                f"`ess_min` must be a finite number >= 0 (smallest acceptable bulk ESS) or None for "
                f"100 * chains; got {self.ess_min!r}."
            )

    @classmethod
    def from_params(cls, params: Mapping) -> SamplerConfig:
        """Build from a study's parameters: ``draws``, ``tune`` and optionally ``chains`` and ``mass_matrix``.

        Parameters that name no ``mass_matrix`` were written before studies chose it and were
        sampled with the diagonal one, which is what they get.

        Whole-number floats (``300.0``) are read as integers; anything else is checked as given
        (a string or a fractional value raises, naming the parameter).
        """

        def whole(v):
            return int(v) if isinstance(v, (float, np.floating)) and float(v).is_integer() else v

        return cls(draws=whole(params["draws"]), tune=whole(params["tune"]), chains=whole(params.get("chains", 2)),
                   mass_matrix=params.get("mass_matrix", LEGACY_MASS_MATRIX))

    @property
    def ess_threshold(self) -> float:
        """The bulk-ESS threshold in force."""
        return float(self.ess_min) if self.ess_min is not None else 100.0 * self.chains


@dataclass(frozen=True)
class Diagnostics:
    """Convergence diagnostics of one fit.

    Attributes
    ----------
    rhat, ess_bulk : dict
        Worst R-hat (max) and bulk ESS (min) per free parameter.
    failed : tuple of str
        Parameters failing the R-hat or bulk-ESS threshold.
    divergences : int
        Divergent transitions among the retained draws (all chains).
    """

    rhat: dict
    ess_bulk: dict
    failed: tuple = ()
    divergences: int = 0

    @property
    def ok(self) -> bool:
        """Whether the fit converged: every parameter passed R-hat and ESS, and no draw diverged."""
        return not self.failed and self.divergences == 0

    @property
    def rhat_max(self) -> float:
        """Largest R-hat over the parameters (NaN if none was computed)."""
        return max(self.rhat.values()) if self.rhat else float("nan")

    @property
    def ess_min(self) -> float:
        """Smallest bulk ESS over the parameters (NaN if none was computed)."""
        return min(self.ess_bulk.values()) if self.ess_bulk else float("nan")

    def problems(self, cfg: SamplerConfig | None = None) -> str:
        """What failed, in words (empty when the fit converged)."""
        parts = [f"{k} (R-hat {self.rhat[k]:.3f}, bulk ESS {self.ess_bulk[k]:.0f})" for k in self.failed]
        if self.divergences:
            parts.append(f"{self.divergences} divergent transition(s)")
        return ", ".join(parts)


#: Up to this many records a release's default sampler takes 1000 tuning steps and 1000 draws per chain.
FULL_ITERATIONS_UP_TO = 20_000
#: The fewest tuning steps and draws per chain of a release's default sampler (on the largest files).
MIN_ITERATIONS = 300


def release_iterations(n: int) -> int:
    """Tuning steps and draws per chain of a release's default sampler for ``n`` records.

    1000 up to :data:`FULL_ITERATIONS_UP_TO` records, then ``1000 sqrt(20000 / n)``, at least
    :data:`MIN_ITERATIONS`: a posterior of many records is close to normal and concentrated, and its
    chains mix in fewer steps, while every step costs a pass over the records (a million records
    take 300). It changes how the posterior is explored, not the posterior; the convergence checks
    apply as always (they are reported to the data holder, and decide nothing).
    """
    n = max(1, int(n))
    if n <= FULL_ITERATIONS_UP_TO:
        return 1000
    return max(MIN_ITERATIONS, int(round(1000 * np.sqrt(FULL_ITERATIONS_UP_TO / n))))
