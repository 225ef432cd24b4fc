"""Parameters of the censoring chapter: presets and validation in one place."""

from __future__ import annotations

from dataclasses import dataclass

from dpsynth.validation import DataError

from ..base_params import StudyParams

__all__ = ["CensoringParams", "REFERENCE_FIELDS", "REFERENCE_SHARED"]

#: Fields of the Censor_ref study only (``censoring-reference``); the other studies' parameter dicts leave them out,
#: so adding them did not change the shipped studies' parameters.
REFERENCE_FIELDS = ("ref_replicates", "ref_eps_grid", "ref_alphas", "ref_widens", "ref_eps")
#: The fields the Censor_ref study shares with the main study (its data, model and sampler).
REFERENCE_SHARED = ("n", "draws", "tune", "chains", "mass_matrix", "lambda_min", "lambda_alpha")

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
    ref_replicates : int
        Replicates of the Censor_ref study (``censoring-reference``).
    ref_eps_grid : tuple of float
        Privacy budgets of the Censor_ref study (one record removed, before the reference's cost).
    ref_alphas : tuple of float
        Fixed public weights ``alpha`` of Censor_ref (with its default reference, each record's own)
        compared with the default ``min(1, M / K)``, ``M = eps / 2`` and ``K`` the tolerance.
    ref_widens : tuple of float
        Widening factors of the scale of the DP median ``theta_0`` (Censor_ref with
        ``reference="dp_median"``) compared with the default 2 (at the default ``alpha``).
    ref_eps : float
        Epsilon of the DP median ``theta_0``'s release (median and MAD; Censor_ref's ``reference_eps``).
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
    ref_replicates: int = 8
    ref_eps_grid: tuple[float, ...] = (5.0, 3.0, 1.0)
    ref_alphas: tuple[float, ...] = (1.0, 0.5, 0.25)
    ref_widens: tuple[float, ...] = (1.0, 4.0)
    ref_eps: float = 0.1

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
        if self.ref_replicates < 1:
            raise DataError(f"`ref_replicates` must be >= 1; got {self.ref_replicates!r}.")
        if len(self.ref_eps_grid) == 0 or len(set(self.ref_eps_grid)) != len(self.ref_eps_grid):
            raise DataError(f"`ref_eps_grid` must hold distinct epsilons; got {self.ref_eps_grid!r}.")
        for name in ("ref_eps_grid", "ref_widens"):
            for i, v in enumerate(getattr(self, name)):
                if v <= 0:
                    raise DataError(f"`{name}[{i}]` must be > 0; got {v!r}.")
        for i, a in enumerate(self.ref_alphas):
            if not 0 < a <= 1:
                raise DataError(f"`ref_alphas[{i}]` must be in (0, 1]; got {a!r}.")
        if 2.0 in [float(w) for w in self.ref_widens]:
            raise DataError("`ref_widens` lists the factors compared with the default 2; leave 2 out.")
        if self.ref_eps <= 0:
            raise DataError(f"`ref_eps` must be > 0; got {self.ref_eps!r}.")
        _check_bins("ph_bins", self.ph_bins)
        if self.ph_alt_bins is not None:
            _check_bins("ph_alt_bins", self.ph_alt_bins)

    def study_dict(self) -> dict:
        """What the four original studies' replicates need: every field but the Censor_ref study's.

        The Censor_ref fields (:data:`REFERENCE_FIELDS`) are left out, so the parameters of the
        shipped ``censoring``, ``-figure1``, ``-calibration`` and ``-release`` studies did not change.
        """
        d = super().study_dict()
        for k in REFERENCE_FIELDS:
            d.pop(k)
        return d

    def reference_dict(self) -> dict:
        """What :func:`~dpsynth_book.experiments.censoring.reference.reference_replicate` needs, and nothing else."""
        d = self.to_dict()
        return {k: d[k] for k in (*REFERENCE_SHARED, *REFERENCE_FIELDS) if k != "ref_replicates"}

    @classmethod
    def quick(cls) -> CensoringParams:
        """Minutes: the paper's n and eps grid with 8 replicates and 3 release months (Censor_ref: eps 5, 3, 1)."""
        return cls(scale="quick")

    @classmethod
    def paper(cls) -> CensoringParams:
        """The paper's sizes: 100 replicates of n = 2000; 12 release months; Censor_ref: 20 replicates at eps 1-5."""
        return cls(scale="paper", replicates=100, release_months=12, ref_replicates=20,
                   ref_eps_grid=(5.0, 4.0, 3.0, 2.0, 1.0))

    @classmethod
    def smoke(cls) -> CensoringParams:
        """Seconds: one small replicate at two budgets, one release month (every code path)."""
        return cls(scale="smoke", replicates=1, n=300, eps_grid=(4.0, 3.0), draws=100, tune=100,
                   downscale_eps=4.0, mix_eps=4.0, release_eps=3.0, release_months=1,
                   ref_replicates=1, ref_eps_grid=(3.0,))
