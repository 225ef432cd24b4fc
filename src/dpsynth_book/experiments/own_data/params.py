"""Parameters of the "Your own data" chapter: the CPS 1988 wages, the epsilons, the public bounds."""

from __future__ import annotations

from dataclasses import dataclass

from dpsynth.validation import DataError

from ...public_data import REAL_FILES, UNITS
from ..base_params import StudyParams

__all__ = ["OwnDataParams", "MECHANISM_KEYS", "CELL_COLUMNS", "UNITFREE_MECHANISMS", "NEW_FIELDS"]

#: Registry keys the mechanism comparison can run, besides Unweighted (the reference).
MECHANISM_KEYS = ("weighted", "censor_w", "censor_uw", "ph", "opendp_quantiles")
#: Public categorical columns that may define the cells of the OpenDP quantile baseline.
CELL_COLUMNS = ("ethnicity", "smsa", "region", "parttime")
#: Censored mechanisms the unit-free study may compare.
UNITFREE_MECHANISMS = ("censor_ref", "censor_uw")
#: Fields added for the studies ``own_data-files`` and ``own_data-unitfree``: the two older studies
#: (``own_data``, ``own_data-units``) are passed the parameters without them, exactly as they were shipped.
NEW_FIELDS = ("files", "files_eps", "unitfree_units", "unitfree_eps", "unitfree_mechanisms", "new_replicates")


@dataclass(frozen=True)
class OwnDataParams(StudyParams):
    """The CPS 1988 studies.

    The data are fixed (the real file), so a replicate is a new run of every mechanism on them:
    new MCMC chains, new noise and a new synthetic data set from one posterior draw.

    Attributes
    ----------
    eps : tuple of float
        Target epsilons (one record removed) of the mechanisms that take one.
    mechanisms : tuple of str
        Registry keys compared (:data:`MECHANISM_KEYS`); Unweighted is always fitted.
    unit : str
        Public unit of the wage in the comparison ("dollars" or "thousands").
    lower, upper : float
        Public bounds of a weekly wage in dollars (PH's histogram range, OpenDP's candidates);
        round numbers chosen without looking at the data, not statistics of it.
    ph_bins : str
        PH's bin rule.
    quantile_cells : tuple of str
        Public columns whose level combinations are the cells of the OpenDP quantile baseline
        (empty: one cell).
    n_candidates : int
        Candidate values of each OpenDP quantile (log-spaced between the bounds).
    units_eps : tuple of float
        Epsilons of the units study.
    units_mechanisms : tuple of str
        Censored mechanisms of the units study ("censor_w", "censor_uw").
    beta_sd, sigma_prior_scale : float
        Priors of the lognormal regression: ``beta_j ~ Normal(0, beta_sd)``,
        ``sigma ~ HalfCauchy(sigma_prior_scale)``.
    n : int
        Records used: 0 for all 28,155; a smaller n takes the first n records of a fixed
        permutation (smoke tests only). The files study subsamples each file the same way.
    files : tuple of str
        Real files of the files study (keys of :data:`dpsynth_book.public_data.REAL_FILES`).
    files_eps : tuple of float
        Epsilons (one record removed) of the files study.
    unitfree_units : tuple of str
        Units of the wage in the unit-free study (keys of :data:`dpsynth_book.public_data.UNITS`).
    unitfree_eps : tuple of float
        Epsilons of the unit-free study.
    unitfree_mechanisms : tuple of str
        Censored mechanisms of the unit-free study (:data:`UNITFREE_MECHANISMS`).
    new_replicates : int
        Replicates of the files and unit-free studies (the older studies use ``replicates``).
    """

    replicates: int = 1
    draws: int = 1000
    tune: int = 500
    seed: int = 20261123
    eps: tuple[float, ...] = (1.0, 5.0)
    mechanisms: tuple[str, ...] = MECHANISM_KEYS
    unit: str = "thousands"
    lower: float = 10.0
    upper: float = 25000.0
    ph_bins: str = "sqrt"
    quantile_cells: tuple[str, ...] = ("parttime", "smsa")
    n_candidates: int = 1000
    units_eps: tuple[float, ...] = (5.0, 10.0)
    units_mechanisms: tuple[str, ...] = ("censor_w",)
    beta_sd: float = 10.0
    sigma_prior_scale: float = 5.0
    n: int = 0
    files: tuple[str, ...] = tuple(REAL_FILES)
    files_eps: tuple[float, ...] = (5.0,)
    unitfree_units: tuple[str, ...] = ("dollars", "thousands", "cents")
    unitfree_eps: tuple[float, ...] = (5.0,)
    unitfree_mechanisms: tuple[str, ...] = UNITFREE_MECHANISMS
    new_replicates: int = 1

    def validate(self) -> None:
        """Shared checks, then the chapter's (each error names the field)."""
        super().validate()
        for name in ("eps", "units_eps", "files_eps", "unitfree_eps"):
            vals = getattr(self, name)
            if not vals or any(e <= 0 for e in vals) or len(set(vals)) != len(vals):
                raise DataError(f"`{name}` must hold distinct positive epsilons; got {vals!r}.")
        bad = [m for m in self.mechanisms if m not in MECHANISM_KEYS]
        if bad or not self.mechanisms:
            raise DataError(f"`mechanisms` must be registry keys among {MECHANISM_KEYS}; got {self.mechanisms!r}.")
        bad = [m for m in self.units_mechanisms if m not in ("censor_w", "censor_uw")]
        if bad or not self.units_mechanisms:
            raise DataError(f"`units_mechanisms` must be among ('censor_w', 'censor_uw'); got "
                            f"{self.units_mechanisms!r}.")
        if self.unit not in UNITS:
            raise DataError(f"`unit` must be one of {list(UNITS)}; got {self.unit!r}.")
        if not 0 < self.lower < self.upper:
            raise DataError(f"the public bounds must satisfy 0 < lower < upper; got {self.lower!r}, {self.upper!r}.")
        bad = [c for c in self.quantile_cells if c not in CELL_COLUMNS]
        if bad:
            raise DataError(f"`quantile_cells` must be among {CELL_COLUMNS}; got {self.quantile_cells!r}.")
        if self.n_candidates < 2:
            raise DataError(f"`n_candidates` must be >= 2; got {self.n_candidates!r}.")
        for name in ("beta_sd", "sigma_prior_scale"):
            if getattr(self, name) <= 0:
                raise DataError(f"`{name}` must be > 0; got {getattr(self, name)!r}.")
        bad = [f for f in self.files if f not in REAL_FILES]
        if bad or not self.files or len(set(self.files)) != len(self.files):
            raise DataError(f"`files` must be distinct keys of REAL_FILES {list(REAL_FILES)}; got {self.files!r}.")
        bad = [u for u in self.unitfree_units if u not in UNITS]
        if bad or not self.unitfree_units or len(set(self.unitfree_units)) != len(self.unitfree_units):
            raise DataError(f"`unitfree_units` must be distinct units among {list(UNITS)}; got "
                            f"{self.unitfree_units!r}.")
        bad = [m for m in self.unitfree_mechanisms if m not in UNITFREE_MECHANISMS]
        if bad or not self.unitfree_mechanisms:
            raise DataError(f"`unitfree_mechanisms` must be among {UNITFREE_MECHANISMS}; got "
                            f"{self.unitfree_mechanisms!r}.")
        if self.new_replicates < 1:
            raise DataError(f"`new_replicates` must be >= 1; got {self.new_replicates!r}.")
        if self.n < 0 or 0 < self.n < 50:
            raise DataError(f"`n` must be 0 (all records) or at least 50; got {self.n!r}.")

    def legacy_dict(self) -> dict:
        """:meth:`study_dict` without :data:`NEW_FIELDS`: the parameters of ``own_data`` and ``own_data-units``."""
        d = self.study_dict()
        for k in NEW_FIELDS:
            d.pop(k, None)
        return d

    def files_dict(self) -> dict:
        """The parameters of the files study ``own_data-files``: the sampler, the files, their epsilons, ``n``."""
        d = self.study_dict()
        return {k: d[k] for k in ("draws", "tune", "chains", "mass_matrix", "files", "files_eps", "n")}

    def unitfree_dict(self) -> dict:
        """The parameters of the unit-free study ``own_data-unitfree``."""
        d = self.study_dict()
        return {k: d[k] for k in ("draws", "tune", "chains", "mass_matrix", "beta_sd", "sigma_prior_scale", "n",
                                  "unitfree_units", "unitfree_eps", "unitfree_mechanisms")}

    @classmethod
    def quick(cls) -> OwnDataParams:
        """Minutes: one run of every mechanism at eps 1 and 5 on all 28,155 records, 1000 draws per chain."""
        return cls(scale="quick")

    @classmethod
    def paper(cls) -> OwnDataParams:
        """Five runs at eps in (0.5, 1, 2, 5, 10), 1000 draws per chain; the units study with both censorings;
        three runs of the files and unit-free studies at eps 1 and 5 (the sampler's defaults)."""
        return cls(scale="paper", replicates=5, draws=1000, tune=1000, eps=(0.5, 1.0, 2.0, 5.0, 10.0),
                   units_mechanisms=("censor_w", "censor_uw"), files_eps=(1.0, 5.0), unitfree_eps=(1.0, 5.0),
                   new_replicates=3)

    @classmethod
    def smoke(cls) -> OwnDataParams:
        """Seconds: 400 records, eps 5, 100 draws."""
        return cls(scale="smoke", replicates=1, draws=100, tune=100, eps=(5.0,), units_eps=(10.0,), n=400,
                   n_candidates=50)
