"""Parameters of the SDR application chapter: data source, both parts' settings and three presets."""

from __future__ import annotations

from dataclasses import dataclass, field

from dpsynth.validation import DataError

from ...sdr import AGE_LEVELS, PUBLIC_SALARY_BOUND, file_digest
from ..base_params import StudyParams

__all__ = ["SDRApplicationParams", "PH_MODES", "CW_KINDS"]

#: Perturbed-histogram noise sources: seeded ("research") or OpenDP's unseeded release path.
PH_MODES = ("research", "release")
#: Ball kinds of the count weights: relative radius ``r |x_i|`` or absolute radius in dollars.
CW_KINDS = ("relative", "absolute")


@dataclass(frozen=True)
class SDRApplicationParams(StudyParams):
    """Parameters of both parts of the SDR application.

    ``replicates``, ``draws``, ``tune`` and ``chains`` apply to both parts; a replicate repeats
    everything random after the data (MCMC, weights, synthetic data, PH noise) on the *same*
    sample.

    Attributes
    ----------
    sdr_path : str
        The user's copy of the 2017 SDR public use file (``.sas7bdat`` or ``.csv``); ``""`` runs
        on the seeded stand-in.
    columns : dict
        PUF column names of ``salary``, ``gender``, ``age_group``, ``weeks`` (defaults of
        :class:`dpsynth_book.sdr.SDRColumns` where not given).
    filters1, filters2 : dict
        Record filters ``{column: [codes]}`` of Part 1 (censoring paper) and Part 2
        (re-weighting paper), applied in order and reported with their counts.
    age_levels : tuple of int
        Age-group codes (lower end of the 5-year groups); the first is the reference.
    salary_bound : float
        Public upper bound U of salary, dollars (never the sample maximum).
    data_seed : int
        Seed of the stand-in, or of the simple random sample drawn from a file.
    n1, n2 : int
        Records of Part 1 (the stand-in size; for a file, 0 keeps every filtered record) and of
        Part 2 (1000 in the re-weighting paper).
    eps : float
        Target epsilon of Part 1 (one record removed).
    ph_mode : str
        ``"research"`` (seeded PH noise) or ``"release"`` (OpenDP, unseeded).
    n_syn : int
        Synthetic data sets per synthesizer in Part 2, each from its own posterior draw.
    cw_radius, cw_kind, cw_match : float, str, bool
        Count-weight ball radius (starting value when matched), its kind, and whether the radius
        is tuned so that CW's Delta matches LW's.
    cw_max_iter : int
        Fits the CW radius search may run (doubling, then bisection) before it gives up; whether it
        reached its band is stored per replicate (``cw_radius_matched``).
    k0, tol : float
        Starting k of the re-weighting search and the relative tolerance of the searches.
    keep_records : int
        Replicates (from 0) that keep their record-level values (synthetic salaries, weights); the
        page shows the first of them in which every fit converged (``tables.shown_replicate``).
    """

    replicates: int = 1
    draws: int = 500
    tune: int = 500
    seed: int = 20170
    sdr_path: str = ""
    columns: dict = field(default_factory=dict)
    filters1: dict = field(default_factory=dict)
    filters2: dict = field(default_factory=dict)
    age_levels: tuple[int, ...] = AGE_LEVELS
    salary_bound: float = PUBLIC_SALARY_BOUND
    data_seed: int = 2017
    n1: int = 1000
    n2: int = 1000
    eps: float = 5.0
    ph_mode: str = "research"
    n_syn: int = 20
    cw_radius: float = 0.1
    cw_kind: str = "relative"
    cw_match: bool = True
    cw_max_iter: int = 20
    k0: float = 0.95
    tol: float = 0.02
    keep_records: int = 3

    def validate(self) -> None:
        super().validate()
        for name in ("columns", "filters1", "filters2"):
            if not isinstance(getattr(self, name), dict):
                raise DataError(f"`{name}` must be a dict; got {getattr(self, name)!r}.")
        unknown = set(self.columns) - {"salary", "gender", "age_group", "weeks"}
        if unknown:
            raise DataError(f"`columns` names unknown variables {sorted(unknown)}; "
                            f"use salary, gender, age_group, weeks.")
        if len(self.age_levels) < 2 or len(set(self.age_levels)) != len(self.age_levels):
            raise DataError(f"`age_levels` must hold at least two distinct codes; got {self.age_levels!r}.")
        if self.salary_bound <= 0:
            raise DataError(f"`salary_bound` must be > 0 dollars; got {self.salary_bound!r}.")
        if self.n1 < 0 or (not self.sdr_path and self.n1 < 2):
            raise DataError(f"`n1` must be >= 2 for the stand-in (>= 0 for a file, 0 = all records); got {self.n1!r}.")
        if self.n2 < 3:
            raise DataError(f"`n2` must be >= 3; got {self.n2!r}.")
        if self.eps <= 0:
            raise DataError(f"`eps` must be > 0; got {self.eps!r}.")
        if self.ph_mode not in PH_MODES:
            raise DataError(f"`ph_mode` must be one of {PH_MODES}; got {self.ph_mode!r}.")
        if self.n_syn < 1:
            raise DataError(f"`n_syn` must be >= 1; got {self.n_syn!r}.")
        if self.cw_radius <= 0:
            raise DataError(f"`cw_radius` must be > 0; got {self.cw_radius!r}.")
        if self.cw_kind not in CW_KINDS:
            raise DataError(f"`cw_kind` must be one of {CW_KINDS}; got {self.cw_kind!r}.")
        if self.cw_max_iter < 1:
            raise DataError(f"`cw_max_iter` must be >= 1; got {self.cw_max_iter!r}.")
        if not 0 < self.k0 <= 1:
            raise DataError(f"`k0` must lie in (0, 1]; got {self.k0!r}.")
        if not 0 < self.tol < 1:
            raise DataError(f"`tol` must lie in (0, 1); got {self.tol!r}.")
        if self.keep_records < 0 or self.data_seed < 0:
            raise DataError(f"`keep_records` and `data_seed` must be >= 0; got {self.keep_records!r}, "
                            f"{self.data_seed!r}.")

    @property
    def standin(self) -> bool:
        """Whether the chapter runs on the stand-in (no ``sdr_path``)."""
        return not self.sdr_path

    def study_dict(self) -> dict:
        """What a replicate receives; with a file, its SHA-256 too, so results are cached per file content."""
        d = super().study_dict()
        if self.sdr_path:
            d["file_sha256"] = file_digest(self.sdr_path)
        return d

    @classmethod
    def quick(cls) -> SDRApplicationParams:
        """Minutes: three replicates (for the spread of the utility ranking), 500 draws and tuning steps per
        chain, 20 synthetic sets."""
        return cls(scale="quick", replicates=3)

    @classmethod
    def paper(cls) -> SDRApplicationParams:
        """Ten replicates per part, 2000 draws and 1000 tuning steps per chain, 100 synthetic sets."""
        return cls(scale="paper", replicates=10, draws=2000, tune=1000, n_syn=100)

    @classmethod
    def smoke(cls) -> SDRApplicationParams:
        """Seconds: 60 records per part, 100 draws, 3 synthetic sets; every code path runs."""
        return cls(scale="smoke", replicates=1, draws=100, tune=100, n1=60, n2=60, n_syn=3, tol=0.05)
