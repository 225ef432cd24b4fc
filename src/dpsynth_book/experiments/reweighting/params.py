"""Parameters of the re-weighting chapter: presets and validation in one place."""

from __future__ import annotations

from dataclasses import dataclass

from dpsynth.validation import DataError

from ..base_params import StudyParams

__all__ = ["DATA_MODELS", "CW_BALLS", "ReweightingParams"]

#: Generating models of the simulation (Poisson(100) and the skewed negative binomial mixture).
DATA_MODELS = ("poisson", "nb_mixture")
#: Kinds of CW ball: relative (radius times the record's value, as in the authors' code) or absolute.
CW_BALLS = ("relative", "absolute")


@dataclass(frozen=True)
class ReweightingParams(StudyParams):
    """Parameters of the re-weighting chapter's two studies.

    The synthesizers study fits Unweighted, LW, CW, SW, LW_final and CW_final to one data set per
    generating model with ``draws`` / ``tune`` / ``chains``; the contraction study (the paper's
    appendix) fits Unweighted and LW to ``replicates`` fresh data sets per generating model and per
    sample size with ``contraction_draws`` / ``contraction_tune``.

    Attributes
    ----------
    n : int
        Records per confidential data set of the synthesizers study (also a size of the
        contraction study).
    synthetic_sets : int
        Synthetic data sets per synthesizer (each from one posterior draw) summarised by the
        utility figures; releasing them all would cost ``synthetic_sets`` times eps.
    cw_start_radius : float
        Radius of CW's ball, the starting value of the search when ``cw_match_lw`` is true.
    cw_ball : str
        ``"relative"`` (``|x_j - x_i| <= r |x_i|``) or ``"absolute"`` (``|x_j - x_i| <= r``).
    cw_match_lw : bool
        Search the radius so that CW's Delta lands in ``[(1 - cw_tolerance) Delta_LW, Delta_LW]``.
    cw_tolerance : float
        Relative band of that search.
    k_start : float
        Starting k of the re-weighting search (in (0, 1]).
    reweight_tolerance : float
        Re-weighting band: the final Delta lies in ``[(1 - tol) Delta, Delta]`` of the start's.
    contraction_draws, contraction_tune : int
        Draws and tuning steps per chain in the contraction study.
    contraction_sizes : tuple of int
        Sample sizes of the contraction study (``n`` is added).
    data_models : tuple of str
        Generating models, a subset of :data:`DATA_MODELS`.
    """

    replicates: int = 4
    draws: int = 500
    tune: int = 500
    chains: int = 2
    seed: int = 20241222
    n: int = 1000
    synthetic_sets: int = 40
    cw_start_radius: float = 0.1
    cw_ball: str = "relative"
    cw_match_lw: bool = True
    cw_tolerance: float = 0.05
    k_start: float = 0.95
    reweight_tolerance: float = 0.02
    contraction_draws: int = 300
    contraction_tune: int = 300
    contraction_sizes: tuple[int, ...] = (250, 1000, 4000)
    data_models: tuple[str, ...] = DATA_MODELS

    def validate(self) -> None:
        """Check the shared fields, then this chapter's ranges (naming the field)."""
        super().validate()
        if self.n < 10:
            raise DataError(f"`n` must be >= 10 records; got {self.n!r}.")
        if self.synthetic_sets < 2:
            raise DataError(
                f"`synthetic_sets` must be >= 2 (intervals need several sets); got {self.synthetic_sets!r}."
            )
        if self.cw_start_radius <= 0:
            raise DataError(f"`cw_start_radius` must be > 0; got {self.cw_start_radius!r}.")
        if self.cw_ball not in CW_BALLS:
            raise DataError(f"`cw_ball` must be one of {CW_BALLS}; got {self.cw_ball!r}.")
        if not 0 < self.cw_tolerance < 1:
            raise DataError(f"`cw_tolerance` must lie in (0, 1); got {self.cw_tolerance!r}.")
        if not 0 < self.k_start <= 1:
            raise DataError(f"`k_start` must lie in (0, 1]; got {self.k_start!r}.")
        if not 0 < self.reweight_tolerance < 1:
            raise DataError(f"`reweight_tolerance` must lie in (0, 1); got {self.reweight_tolerance!r}.")
        for name in ("contraction_draws", "contraction_tune"):
            if getattr(self, name) < 1:
                raise DataError(f"`{name}` must be >= 1; got {getattr(self, name)!r}.")
        if not self.contraction_sizes or min(self.contraction_sizes) < 10:
            raise DataError(f"`contraction_sizes` must hold sizes >= 10; got {self.contraction_sizes!r}.")
        if (
            not self.data_models
            or any(d not in DATA_MODELS for d in self.data_models)
            or len(set(self.data_models)) != len(self.data_models)
        ):
            raise DataError(f"`data_models` must be distinct entries of {DATA_MODELS}; got {self.data_models!r}.")

    @property
    def sizes(self) -> tuple[int, ...]:
        """Sample sizes of the contraction study: ``contraction_sizes`` and ``n``, sorted."""
        return tuple(sorted({int(v) for v in self.contraction_sizes} | {int(self.n)}))

    @classmethod
    def quick(cls) -> ReweightingParams:
        """About a minute alone on two cores: n = 1000, 4 databases per size in the appendix study."""
        return cls(scale="quick")

    @classmethod
    def paper(cls) -> ReweightingParams:
        """The paper's sizes: 100 databases, 100 synthetic sets, 2 x 2000 draws (about 45 minutes)."""
        return cls(
            scale="paper",
            replicates=100,
            synthetic_sets=100,
            draws=2000,
            tune=1000,
            contraction_draws=1000,
            contraction_tune=1000,
        )

    @classmethod
    def smoke(cls) -> ReweightingParams:
        """Seconds of MCMC: tiny data sets and few draws, every code path."""
        return cls(
            scale="smoke",
            replicates=2,
            draws=100,
            tune=100,
            n=120,
            synthetic_sets=4,
            reweight_tolerance=0.05,
            contraction_draws=100,
            contraction_tune=100,
            contraction_sizes=(60,),
        )
