"""Parameters of the choosing page's head-to-head grid: situations, candidates, epsilons, runs."""

from __future__ import annotations

from dataclasses import dataclass

from dpsynth.validation import DataError

from ..base_params import StudyParams

__all__ = ["GridParams", "EPS_GRID", "SITUATION_KEYS", "CANDIDATE_KEYS", "CANDIDATE_NAMES"]

#: The epsilons of the book's decision (one record removed for a file without covariates, one record
#: replaced for a file whose public covariates are carried: each candidate's statement publishes exactly it).
EPS_GRID = (0.5, 1.0, 2.0, 3.0, 5.0, 10.0)
#: The single-column situations (:data:`dpsynth.choice.SITUATIONS`), each on a real file (:data:`.grid.SITUATIONS`).
SITUATION_KEYS = ("bounded marginal", "regression", "count", "category", "small n, marginal", "small n, regression")
#: The strictly DP candidates: registry keys, and the censored regression calibrated to its DP marginal.
CANDIDATE_KEYS = ("censor_ref", "censor_ref_calibrated", "censor_uw", "noise_aware", "ph", "opendp_quantiles")
#: Display names (the registry's, and the calibrated variant's).
CANDIDATE_NAMES = {"censor_ref": "Censor_ref", "censor_ref_calibrated": "Censor_ref + calibration",
                   "censor_uw": "Censor_uw", "noise_aware": "Noise-aware", "ph": "PH", "opendp_quantiles": "OpenDP-Q"}


@dataclass(frozen=True)
class GridParams(StudyParams):
    """The head-to-head grid.

    Attributes
    ----------
    situations : tuple of str
        :data:`SITUATION_KEYS`.
    candidates : tuple of str
        :data:`CANDIDATE_KEYS` (each situation runs those that apply to its column's kind).
    eps : tuple of float
        Total epsilons of one release, as the statement publishes them.
    small_n : int
        Records of the fixed public subsample of the two "small n" situations (below
        :data:`dpsynth.choice.SMALL_N`, the decision's cut-off).
    nmes_n : int
        Rows of the fixed public subsample of NMES 1988 (the count situation).
    """

    replicates: int = 1
    draws: int = 1000
    tune: int = 1000
    seed: int = 20261127
    situations: tuple[str, ...] = SITUATION_KEYS
    candidates: tuple[str, ...] = CANDIDATE_KEYS
    eps: tuple[float, ...] = (1.0,)
    small_n: int = 300
    nmes_n: int = 1000

    def validate(self) -> None:
        """Shared checks, then the grid's (each error names the field)."""
        super().validate()
        if not self.eps or any(e <= 0 for e in self.eps) or len(set(self.eps)) != len(self.eps):
            raise DataError(f"`eps` must hold distinct positive epsilons; got {self.eps!r}.")
        for name, keys in (("situations", SITUATION_KEYS), ("candidates", CANDIDATE_KEYS)):
            vals = getattr(self, name)
            bad = [v for v in vals if v not in keys]
            if bad or not vals or len(set(vals)) != len(vals):
                raise DataError(f"`{name}` must be distinct keys among {keys}; got {vals!r}.")
        if not 50 <= self.small_n < 500:
            raise DataError(f"`small_n` must be between 50 and 499 (below dpsynth.choice.SMALL_N); got "
                            f"{self.small_n!r}.")
        if not 500 <= self.nmes_n <= 4406:
            raise DataError(f"`nmes_n` must be between 500 and 4406; got {self.nmes_n!r}.")

    @classmethod
    def quick(cls) -> GridParams:
        """Minutes: one run of every situation at eps 1 and 5, 300 draws after 300 tuning steps."""
        return cls(scale="quick", draws=300, tune=300, eps=(1.0, 5.0))

    @classmethod
    def paper(cls) -> GridParams:
        """Five runs of every candidate in every situation at every eps of the book's grid, with the release sampler
        (1000 draws after 1000 tuning steps per chain, as a Synthesizer fits by default on these files)."""
        return cls(scale="paper", replicates=5, eps=EPS_GRID)

    @classmethod
    def smoke(cls) -> GridParams:
        """Seconds: the small-n and category situations at eps 3, three candidates, 100 draws."""
        return cls(scale="smoke", draws=100, tune=100, eps=(3.0,), situations=("small n, regression", "category"),
                   candidates=("censor_ref", "noise_aware", "ph"))
