"""Parameters of the censoring chapter: presets and validation in one place."""

from __future__ import annotations

from dataclasses import dataclass

from ...validation import DataError
from ..base_params import StudyParams

__all__ = ["CensoringParams"]

_BIN_RULES = ("sqrt", "log")


def _check_bins(name: str, value) -> None:
    if isinstance(value, int):
        if value < 1:
            raise DataError(f"`{name}` must be 'sqrt', 'log' or a positive integer; got {value!r}.")
    elif value not in _BIN_RULES:
        raise DataError(f"`{name}` must be 'sqrt', 'log' or a positive integer; got {value!r}.")


@dataclass(frozen=True)
class CensoringParams(StudyParams):
    """Parameters of the censoring study (the censoring paper's Sections 3–4 and supplement S3–S5).

    Attributes
    ----------
    n : int
        Records per confidential data set (drawn from Beta(0.5, 3)).
    eps_grid : tuple of float
        Privacy budgets of the main study (one record removed).
    downscale : float
        Downscaling factor ``c`` in (0, 1] of the LW weights (Section 4.4).
    downscale_eps : float
        Epsilon of the downscaling comparison.
    fig1_eps : float
        Epsilon of the one-data-set illustration of the censored posterior.
    release_eps : float
        Epsilon of the release workflow (Section 4.5).
    release_months : int
        Later data sets released in the release workflow.
    ph_bins, ph_alt_bins : str or int
        Bin rules of the perturbed histogram (``"sqrt"``, ``"log"`` or a count); the second
        (``None`` to skip) is reported beside the first.
    public : bool
        Also fit Censor_w-pub (LW rule fixed on a historical data set per replicate).
    mix_eps : float
        Epsilon (one of ``eps_grid``) at which record-wise-mixed releases are compared.
    lambda_min, lambda_alpha : float
        Pareto prior of the Beta model's concentration.
    """

    replicates: int = 8
    n: int = 2000
    eps_grid: tuple[float, ...] = (5.0, 4.0, 3.0)
    downscale: float = 0.8
    downscale_eps: float = 4.0
    fig1_eps: float = 1.0
    release_eps: float = 3.0
    release_months: int = 3
    ph_bins: str | int = "sqrt"
    ph_alt_bins: str | int | None = "log"
    public: bool = True
    mix_eps: float = 4.0
    lambda_min: float = 0.1
    lambda_alpha: float = 1.5

    def validate(self) -> None:
        """Check the shared fields, then this study's ranges (each error names its field)."""
        super().validate()
        if self.n < 20:
            raise DataError(f"`n` must be at least 20; got {self.n!r}.")
        if len(self.eps_grid) == 0:
            raise DataError("`eps_grid` must hold at least one epsilon.")
        if len(set(self.eps_grid)) != len(self.eps_grid):
            raise DataError(f"`eps_grid` has repeated values: {self.eps_grid!r}.")
        for name in ("downscale_eps", "fig1_eps", "release_eps", "mix_eps", "lambda_min", "lambda_alpha"):
            if getattr(self, name) <= 0:
                raise DataError(f"`{name}` must be > 0; got {getattr(self, name)!r}.")
        for i, e in enumerate(self.eps_grid):
            if e <= 0:
                raise DataError(f"`eps_grid[{i}]` must be > 0; got {e!r}.")
        if not 0 < self.downscale <= 1:
            raise DataError(f"`downscale` must be in (0, 1]; got {self.downscale!r}.")
        if self.release_months < 1:
            raise DataError(f"`release_months` must be >= 1; got {self.release_months!r}.")
        if float(self.mix_eps) not in [float(e) for e in self.eps_grid]:
            raise DataError(f"`mix_eps` must be one of `eps_grid` {self.eps_grid!r}; got {self.mix_eps!r}.")
        _check_bins("ph_bins", self.ph_bins)
        if self.ph_alt_bins is not None:
            _check_bins("ph_alt_bins", self.ph_alt_bins)

    @classmethod
    def quick(cls) -> CensoringParams:
        """Minutes: the paper's n and eps grid with 8 replicates and 3 release months."""
        return cls(scale="quick")

    @classmethod
    def paper(cls) -> CensoringParams:
        """The paper's sizes: 100 replicates of n = 2000; 12 release months."""
        return cls(scale="paper", replicates=100, release_months=12)

    @classmethod
    def smoke(cls) -> CensoringParams:
        """Seconds: one small replicate at two budgets, one release month (every code path)."""
        return cls(scale="smoke", replicates=1, n=300, eps_grid=(4.0, 3.0), draws=100, tune=100,
                   downscale_eps=4.0, mix_eps=4.0, release_eps=3.0, release_months=1)
