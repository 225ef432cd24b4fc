"""Parameters of the range-restriction chapter: the lognormal data, the public ranges, the sample sizes."""

from __future__ import annotations

from dataclasses import dataclass

from dpsynth.validation import DataError

from ..base_params import StudyParams

__all__ = ["RangeRestrictionParams"]


@dataclass(frozen=True)
class RangeRestrictionParams(StudyParams):
    """The range-restriction study.

    Every replicate draws, at each sample size in ``ns``, a Lognormal(``meanlog``, ``sdlog``)
    sample and fits Unweighted, LW and, for each public relative range ``(a, b)`` in ``ranges``,
    the range-restriction mechanisms A[a,b], B[a,b] and B'[a,b].

    Attributes
    ----------
    meanlog, sdlog : float
        Log-mean and log-sd of the lognormal data (the slides do not give them; our choice).
    n : int
        Sample size of the by-record and utility results; one of ``ns``.
    ns : tuple of int
        Sample sizes of the contraction study.
    ranges : tuple of (a, b)
        Public relative ranges ``[a x_i, b x_i]``, ``0 <= a < b``.
    mu_prior_sd, sigma_prior_scale : float
        ``mu ~ Normal(0, mu_prior_sd)``, ``sigma ~ HalfCauchy(sigma_prior_scale)``.
    lw_c, lw_g : float
        Scale and shift of the Lipschitz weights.
    record_replicates : int
        Replicates whose per-record bounds at ``n`` are kept.
    """

    replicates: int = 3
    draws: int = 500
    tune: int = 500
    seed: int = 20260301
    meanlog: float = 1.0
    sdlog: float = 1.0
    n: int = 400
    ns: tuple[int, ...] = (200, 400, 1600, 6400)
    ranges: tuple[tuple[float, float], ...] = ((0.4, 1.8), (0.6, 1.2))
    mu_prior_sd: float = 10.0
    sigma_prior_scale: float = 5.0
    lw_c: float = 1.0
    lw_g: float = 0.0
    record_replicates: int = 1

    def validate(self) -> None:
        """Shared checks, then the chapter's ranges (each error names the field)."""
        super().validate()
        if self.sdlog <= 0:
            raise DataError(f"`sdlog` must be > 0; got {self.sdlog!r}.")
        if not self.ns or any(v < 5 for v in self.ns) or len(set(self.ns)) != len(self.ns):
            raise DataError(f"`ns` must be distinct sample sizes >= 5; got {self.ns!r}.")
        if self.n not in self.ns:
            raise DataError(f"`n` must be one of `ns` = {tuple(self.ns)}; got {self.n!r}.")
        if not self.ranges:
            raise DataError("`ranges` must hold at least one public range (a, b).")
        for a, b in self.ranges:
            if not 0 <= a < b:
                raise DataError(f"each of `ranges` must satisfy 0 <= a < b; got {(a, b)!r}.")
        if len({(float(a), float(b)) for a, b in self.ranges}) != len(self.ranges):
            raise DataError(f"`ranges` must be distinct; got {self.ranges!r}.")
        for name in ("mu_prior_sd", "sigma_prior_scale", "lw_c"):
            if getattr(self, name) <= 0:
                raise DataError(f"`{name}` must be > 0; got {getattr(self, name)!r}.")
        if self.record_replicates < 0:
            raise DataError(f"`record_replicates` must be >= 0; got {self.record_replicates!r}.")

    @property
    def range_pairs(self) -> list[tuple[float, float]]:
        """``ranges`` as a list of float pairs (JSON round trips give lists)."""
        return [(float(a), float(b)) for a, b in self.ranges]

    @classmethod
    def quick(cls) -> RangeRestrictionParams:
        """Minutes: 3 replicates at each of the slides' four sample sizes, 500 draws per chain."""
        return cls(scale="quick")

    @classmethod
    def paper(cls) -> RangeRestrictionParams:
        """The slides' sizes: 100 replicates at each n in (200, 400, 1600, 6400), 1000 draws per chain."""
        return cls(scale="paper", replicates=100, draws=1000, tune=1000)

    @classmethod
    def smoke(cls) -> RangeRestrictionParams:
        """Seconds: 2 replicates (the second keeps no per-record bounds) at n = 40 and 80."""
        return cls(scale="smoke", replicates=2, draws=150, tune=150, n=40, ns=(40, 80))
