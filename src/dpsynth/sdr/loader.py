"""Survey of Doctorate Recipients (SDR) data: a loader for the user's own file and a stand-in.

The 2017 SDR public use file (PUF) cannot be downloaded on the machines that build this book.
This module offers two sources of the same shape:

* :func:`load_sdr` reads the user's own copy of the PUF (SAS ``.sas7bdat`` through
  ``pyreadstat``, or ``.csv``), applies *explicit* filters (each reported with its counts),
  renames the variables to ``salary``, ``gender``, ``age_group``, ``weeks`` and validates them;
  anything out of range raises an :class:`SDRFileError` that names the column and the fix.
  Nothing is dropped silently.
* :func:`standin_censoring` and :func:`standin_reweighting` generate seeded *stand-in* samples
  whose salary distribution is calibrated to the summaries the two papers publish (SPEC §4).
  They are not the real data and every figure or table made from them says so
  (:data:`dpsynth.plots.STAND_IN_NOTE`).

Salary enters the beta regression through :func:`scale_salary`, an affine map of ``[0, U]``
into the open interval ``(0, 1)``, where ``U`` is a *public* bound (:data:`PUBLIC_SALARY_BOUND`),
never the sample maximum.

Column names follow our reading of the 2017 PUF codebook (``SALARY``, ``GENDER``, ``AGEGR``,
``WKSWK``); they are parameters (:class:`SDRColumns`) because we could not check them here.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import optimize

from .seeds import SeedLike, generator
from .validation import DataError, as_data, check_positive

__all__ = [
    "SDRFileError",
    "SDRColumns",
    "SDRData",
    "PUBLIC_SALARY_BOUND",
    "RESERVED_SALARY_CODES",
    "SALARY_OFFSET",
    "AGE_LEVELS",
    "WEEKS_RANGE",
    "CENSORING_TARGETS",
    "REWEIGHTING_TARGETS",
    "load_sdr",
    "file_digest",
    "standin_censoring",
    "standin_reweighting",
    "scale_salary",
    "unscale_salary",
    "design_matrix",
    "design_names",
    "subsample",
    "salary_summary",
]

#: Public upper bound U of salary (dollars): a round figure fixed before seeing any data and
#: above the largest salary in the published summaries ($509,000). Used by the beta-regression
#: scaling and by the perturbed histogram. Replace it by the PUF's top-code if your codebook gives one.
PUBLIC_SALARY_BOUND = 1_000_000.0
#: Reserved survey codes of the salary column, which are not salaries: 9999998 (logical skip)
#: and 9999999 (not reported / missing). :func:`load_sdr` refuses them by code, whatever
#: ``salary_bound``; filter those records out explicitly with ``filters``.
RESERVED_SALARY_CODES = (9_999_998, 9_999_999)
#: Offset h (dollars) of the scaling ``y = (s + h) / (U + 2 h)``, which keeps $0 and $U inside (0, 1).
SALARY_OFFSET = 500.0
#: Default age-group codes (lower end of each 5-year group): 30-34, ..., 70-74, nine groups as
#: in the censoring paper.
AGE_LEVELS = (30, 35, 40, 45, 50, 55, 60, 65, 70)
#: Allowed weeks worked per year.
WEEKS_RANGE = (2, 52)

#: Published summaries of the censoring paper's sample (mathematics and statistics faculty at
#: 4-year institutions), dollars.
CENSORING_TARGETS = {"mean": 91_019.0, "median": 80_000.0, "q15": 51_000.0, "q90": 150_000.0}
#: Published summaries of the re-weighting paper's sample (n = 1000), dollars.
REWEIGHTING_TARGETS = {"mean": 107_609.0, "median": 95_000.0, "sd": 69_718.0, "min": 0.0, "max": 509_000.0}


class SDRFileError(DataError):
    """The SDR file cannot be read or its values are not what the loader expects."""


@dataclass(frozen=True)
class SDRColumns:
    """Names of the PUF columns the loader reads (our reading of the 2017 codebook).

    Attributes
    ----------
    salary : str
        Annual salary in dollars (``SALARY``).
    gender : str
        Gender code (``GENDER``; ``F`` or ``M``).
    age_group : str
        Age in 5-year groups, coded by the group's lower end (``AGEGR``).
    weeks : str
        Weeks worked per year, 2-52 (``WKSWK``).
    """

    salary: str = "SALARY"
    gender: str = "GENDER"
    age_group: str = "AGEGR"
    weeks: str = "WKSWK"

    def as_dict(self) -> dict[str, str]:
        return {"salary": self.salary, "gender": self.gender, "age_group": self.age_group, "weeks": self.weeks}


@dataclass
class SDRData:
    """An SDR sample with standard column names and its provenance.

    Attributes
    ----------
    frame : pandas.DataFrame
        Columns ``salary`` (dollars) and, when read, ``gender`` (``F``/``M``), ``age_group``
        (int code) and ``weeks`` (int).
    source : str
        ``"file"`` or ``"stand-in"``.
    description : str
        Where the data came from (path or generator and seed).
    steps : list of dict
        Filters and checks applied, each with ``step``, ``n_before``, ``n_after``.
    targets : dict
        Published summaries the stand-in is calibrated to (empty for a file).
    """

    frame: pd.DataFrame
    source: str
    description: str
    steps: list = field(default_factory=list)
    targets: dict = field(default_factory=dict)

    @property
    def is_standin(self) -> bool:
        """Whether this is the stand-in sample."""
        return self.source == "stand-in"

    @property
    def n(self) -> int:
        return int(len(self.frame))

    @property
    def salary(self) -> np.ndarray:
        """Salary in dollars (float array)."""
        return self.frame["salary"].to_numpy(dtype=float)

    def steps_table(self) -> pd.DataFrame:
        """The filter/check steps with their record counts."""
        return pd.DataFrame(self.steps, columns=["step", "n_before", "n_after"])

    def summary_table(self) -> pd.DataFrame:
        """Salary summaries of this sample beside the published targets (if any)."""
        own = salary_summary(self.salary)
        keys = list(self.targets) or list(own)
        rows = {k: {"this sample": own.get(k, np.nan), "published": self.targets.get(k, np.nan)} for k in keys}
        out = pd.DataFrame(rows).T
        out.index.name = "salary ($)"
        return out


def salary_summary(s) -> dict[str, float]:
    """Mean, median, 15th and 90th percentiles, sd, min and max of a salary vector."""
    v = np.asarray(s, dtype=float)
    return {
        "mean": float(v.mean()), "median": float(np.median(v)), "q15": float(np.quantile(v, 0.15)),
        "q90": float(np.quantile(v, 0.90)), "sd": float(v.std(ddof=1)) if v.size > 1 else 0.0,
        "min": float(v.min()), "max": float(v.max()),
    }


# ----------------------------------------------------------------------------------------------
# Loader
# ----------------------------------------------------------------------------------------------

VARIABLES = ("salary", "gender", "age_group", "weeks")


def file_digest(path) -> str:
    """SHA-256 (first 16 hex digits) of a file's bytes, for cache keys."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()[:16]


def _read(path: Path, usecols: Sequence[str]) -> pd.DataFrame:
    suffix = path.suffix.lower()
    if suffix == ".sas7bdat":
        try:
            import pyreadstat
        except ImportError as exc:  # pragma: no cover - pyreadstat is a dependency
            raise SDRFileError("reading .sas7bdat files needs `pyreadstat` (pip install pyreadstat).") from exc
        try:
            frame, _ = pyreadstat.read_sas7bdat(str(path))
        except Exception as exc:
            raise SDRFileError(
                f"could not read {path.name} as a SAS data set ({type(exc).__name__}: {exc}); check that the "
                f"file is the SDR public use file in .sas7bdat format, or export it to CSV."
            ) from exc
    elif suffix == ".csv":
        try:
            frame = pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[""])
        except pd.errors.EmptyDataError as exc:
            raise SDRFileError(f"{path.name} is empty; expected a CSV with a header row naming the SDR columns.") from exc
        except (pd.errors.ParserError, UnicodeDecodeError) as exc:
            raise SDRFileError(
                f"{path.name} is not a well-formed CSV ({type(exc).__name__}: {exc}); every row must have the "
                f"same number of comma-separated fields as the header."
            ) from exc
    else:
        raise SDRFileError(
            f"unsupported file type {suffix!r} for {path.name}; pass the SDR public use file as .sas7bdat or .csv."
        )
    if frame.shape[0] == 0:
        raise SDRFileError(f"{path.name} has a header but no records.")
    frame.columns = [str(c).strip() for c in frame.columns]
    return frame


def _numeric(col: pd.Series, name: str, column: str, path: Path) -> pd.Series:
    if col.isna().any():
        i = int(np.flatnonzero(col.isna().to_numpy())[0])
        raise SDRFileError(
            f"column {column!r} ({name}) has {int(col.isna().sum())} missing value(s) (first in data row {i + 1}) "
            f"in {path.name}; remove or filter those records explicitly (e.g. with `filters`) before loading."
        )
    num = pd.to_numeric(col.astype(str).str.strip(), errors="coerce") if col.dtype == object else pd.to_numeric(col, errors="coerce")
    bad = num.isna()
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise SDRFileError(
            f"column {column!r} ({name}) has {int(bad.sum())} non-numeric value(s) in {path.name}, first "
            f"{col.iloc[i]!r} in data row {i + 1}; the file looks malformed or the column is not the SDR {name}."
        )
    return num


def _filter_values(col: pd.Series, values: Sequence) -> pd.Series:
    """Match column values to wanted codes as strings (codes may be read as numbers or text)."""
    def norm(v):
        s = str(v).strip()
        try:
            f = float(s)
            return str(int(f)) if f.is_integer() else s
        except ValueError:
            return s
    wanted = {norm(v) for v in values}
    return col.map(norm).isin(wanted)


def load_sdr(
    path,
    *,
    columns: SDRColumns | Mapping[str, str] | None = None,
    variables: Sequence[str] = VARIABLES,
    filters: Mapping[str, Sequence] | None = None,
    salary_bound: float = PUBLIC_SALARY_BOUND,
    weeks_range: tuple[int, int] = WEEKS_RANGE,
    age_levels: Sequence[int] = AGE_LEVELS,
    gender_codes: Sequence[str] = ("F", "M"),
) -> SDRData:
    """Load the user's copy of the 2017 SDR public use file.

    Parameters
    ----------
    path : str or path-like
        A ``.sas7bdat`` or ``.csv`` file.
    columns : SDRColumns or mapping, optional
        PUF column names of ``salary``, ``gender``, ``age_group`` and ``weeks`` (defaults
        ``SALARY``, ``GENDER``, ``AGEGR``, ``WKSWK``).
    variables : sequence of str
        Which of the four variables to read and check (``("salary",)`` for the re-weighting
        application).
    filters : mapping of column name to codes, optional
        Keep the records whose column value is one of the codes, applied in order; e.g.
        ``{"NDGMED": [<code of mathematics and statistics>], "EMSECDT": [<code of 4-year
        institutions>]}``. Each filter is reported with its counts in ``SDRData.steps``.
    salary_bound : float
        Public upper bound of salary; a salary above it is an error (no clipping).
    weeks_range : (int, int)
        Allowed weeks worked.
    age_levels : sequence of int
        Allowed age-group codes.
    gender_codes : sequence of str
        Allowed gender codes (upper-cased before the check).

    Returns
    -------
    SDRData

    Raises
    ------
    SDRFileError
        Unreadable or malformed file, missing column, missing or non-numeric value, or a value
        out of range (negative salary, salary above ``salary_bound``, a reserved salary code of
        :data:`RESERVED_SALARY_CODES` whatever ``salary_bound``, weeks outside ``weeks_range``,
        unknown gender or age-group code). The message names the column and the fix.
    """
    p = Path(path)
    if not p.exists():
        raise SDRFileError(f"`sdr_path` {str(p)!r} does not exist; pass the path of your copy of the SDR PUF, or '' for the stand-in.")
    if not p.is_file():
        raise SDRFileError(f"`sdr_path` {str(p)!r} is not a file.")
    unknown = set(variables) - set(VARIABLES)
    if unknown or not variables:
        raise SDRFileError(f"`variables` must be a non-empty subset of {VARIABLES}; got {tuple(variables)!r}.")
    if columns is None:
        cols = SDRColumns().as_dict()
    elif isinstance(columns, SDRColumns):
        cols = columns.as_dict()
    else:
        cols = {**SDRColumns().as_dict(), **dict(columns)}
    lo_w, hi_w = weeks_range
    if salary_bound is None or not np.isfinite(salary_bound) or salary_bound <= 0:
        raise SDRFileError(f"`salary_bound` must be a finite public bound > 0; got {salary_bound!r}.")
    filters = dict(filters or {})

    frame = _read(p, None)
    need = [cols[v] for v in variables] + list(filters)
    missing = [c for c in need if c not in frame.columns]
    if missing:
        shown = ", ".join(list(frame.columns)[:12])
        raise SDRFileError(
            f"{p.name} has no column(s) {missing}; the file's columns start with: {shown}. Pass the right "
            f"names with `columns=SDRColumns(...)` (salary/gender/age_group/weeks) or fix `filters`."
        )

    steps = [{"step": f"read {p.name}", "n_before": int(len(frame)), "n_after": int(len(frame))}]
    for col, values in filters.items():
        keep = _filter_values(frame[col], list(values))
        steps.append({"step": f"filter {col} in {list(values)}", "n_before": int(len(frame)), "n_after": int(keep.sum())})
        frame = frame.loc[keep.to_numpy()]
        if len(frame) == 0:
            raise SDRFileError(f"no record is left after filter {col} in {list(values)}; check the codes in the codebook.")

    out = {}
    if "salary" in variables:
        c = cols["salary"]
        s = _numeric(frame[c], "salary", c, p)
        reserved = s.isin([float(v) for v in RESERVED_SALARY_CODES])
        if reserved.any():
            i = int(np.flatnonzero(reserved.to_numpy())[0])
            codes = sorted({int(v) for v in s[reserved]})
            raise SDRFileError(
                f"column {c!r} (salary) has {int(reserved.sum())} reserved survey code(s) {codes} (e.g. 9999998 = "
                f"logical skip), first in data row {i + 1}; these are not salaries (see RESERVED_SALARY_CODES). "
                f"Filter those records out explicitly with `filters` (e.g. keep the employed population) "
                f"before loading; raising `salary_bound` does not admit them."
            )
        if (s < 0).any():
            i = int(np.flatnonzero((s < 0).to_numpy())[0])
            raise SDRFileError(
                f"column {c!r} (salary) has {int((s < 0).sum())} negative value(s), first {s.iloc[i]} in data row {i + 1}; "
                f"salary must be >= 0 dollars. Filter those records out explicitly with `filters`."
            )
        if (s > salary_bound).any():
            raise SDRFileError(
                f"column {c!r} (salary) has {int((s > salary_bound).sum())} value(s) above the public bound "
                f"salary_bound={salary_bound:,.0f} (largest {s.max():,.0f}). Reserve codes such as 9999998 (logical "
                f"skip) must be filtered out with `filters`; otherwise raise `salary_bound` to a value taken from "
                f"public knowledge (e.g. the PUF's top-code), never from the data."
            )
        out["salary"] = s.to_numpy(dtype=float)
    if "gender" in variables:
        c = cols["gender"]
        if frame[c].isna().any():
            raise SDRFileError(f"column {c!r} (gender) has missing values; filter those records out with `filters`.")
        g = frame[c].astype(str).str.strip().str.upper()
        allowed = {str(v).upper() for v in gender_codes}
        bad = ~g.isin(allowed)
        if bad.any():
            raise SDRFileError(
                f"column {c!r} (gender) has unknown code(s) {sorted(set(g[bad]))[:5]}; expected one of "
                f"{sorted(allowed)}. Recode them or pass `gender_codes=`."
            )
        out["gender"] = g.to_numpy()
    if "age_group" in variables:
        c = cols["age_group"]
        a = _numeric(frame[c], "age group", c, p)
        bad = ~a.isin([float(v) for v in age_levels])
        if bad.any():
            raise SDRFileError(
                f"column {c!r} (age group) has code(s) {sorted(set(a[bad].tolist()))[:5]} outside `age_levels`="
                f"{list(age_levels)}; pass the codebook's groups with `age_levels=` or filter the records."
            )
        out["age_group"] = a.to_numpy().astype(int)
    if "weeks" in variables:
        c = cols["weeks"]
        w = _numeric(frame[c], "weeks worked", c, p)
        bad = (w < lo_w) | (w > hi_w) | (w != np.round(w))
        if bad.any():
            i = int(np.flatnonzero(bad.to_numpy())[0])
            raise SDRFileError(
                f"column {c!r} (weeks worked) has {int(bad.sum())} value(s) outside the whole numbers "
                f"{lo_w}-{hi_w}, first {w.iloc[i]} in data row {i + 1}; filter those records (e.g. reserve codes) "
                f"with `filters` or pass `weeks_range=`."
            )
        out["weeks"] = w.to_numpy().astype(int)
    steps.append({"step": "range checks (nothing dropped)", "n_before": int(len(frame)), "n_after": int(len(frame))})
    return SDRData(frame=pd.DataFrame(out), source="file", description=f"SDR public use file {p.name}", steps=steps)


def subsample(data: SDRData, n: int, seed: SeedLike = None) -> SDRData:
    """A simple random sample of ``n`` records without replacement (all records if ``n >= data.n``)."""
    if not isinstance(n, (int, np.integer)) or n < 1:
        raise DataError(f"`n` must be a positive integer; got {n!r}.")
    if n >= data.n:
        return data
    idx = np.sort(generator(seed).choice(data.n, size=int(n), replace=False))
    steps = data.steps + [{"step": f"simple random sample of {n}", "n_before": data.n, "n_after": int(n)}]
    return SDRData(frame=data.frame.iloc[idx].reset_index(drop=True), source=data.source,
                   description=data.description, steps=steps, targets=data.targets)


# ----------------------------------------------------------------------------------------------
# Stand-in samples
# ----------------------------------------------------------------------------------------------

def _split_normal(u: np.ndarray, v: np.ndarray, s_left: float, s_right: float) -> np.ndarray:
    """Split-normal log-scale noise: half-normal left with sd ``s_left``, right with ``s_right``."""
    side = u < s_left / (s_left + s_right)
    return np.where(side, -s_left * np.abs(v), s_right * np.abs(v))


#: Covariate model of the censoring stand-in (log-salary effects). Documented in the chapter.
AGE_PROBS = (0.08, 0.14, 0.15, 0.14, 0.13, 0.12, 0.11, 0.08, 0.05)
AGE_EFFECT = (-0.25, -0.15, -0.05, 0.03, 0.10, 0.15, 0.18, 0.20, 0.15)
FEMALE_SHARE = 0.30
FEMALE_EFFECT = -0.06
WEEKS_52_SHARE = 0.85
WEEKS_EFFECT_PER_WEEK = 0.01


def _censoring_covariates(rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    gender = np.where(rng.random(n) < FEMALE_SHARE, "F", "M")
    age = np.asarray(AGE_LEVELS)[rng.choice(len(AGE_LEVELS), size=n, p=AGE_PROBS)]
    weeks = np.where(rng.random(n) < WEEKS_52_SHARE, 52, rng.integers(36, 52, size=n))
    few = rng.random(n) < 0.01
    weeks = np.where(few, rng.integers(WEEKS_RANGE[0], 36, size=n), weeks)
    return {"gender": gender, "age_group": age.astype(int), "weeks": weeks.astype(int)}


def _covariate_effect(gender, age, weeks) -> np.ndarray:
    a = dict(zip(AGE_LEVELS, AGE_EFFECT))
    return (np.array([a[int(v)] for v in np.asarray(age)]) + FEMALE_EFFECT * (np.asarray(gender) == "F")
            + WEEKS_EFFECT_PER_WEEK * (np.asarray(weeks) - 52))


def _calibrate(make, targets: Mapping[str, float], keys: Sequence[str], starts) -> tuple[np.ndarray, tuple]:
    """Fit the noise sds ``(s_left, s_right)`` so that ``make(sl, sr)`` matches ``targets[keys]``.

    ``make`` sets the location itself so that the sample median equals the published one; the
    sds are fitted by a derivative-free search (quantiles are step functions) on the squared
    log ratios, from a few starting points.
    """
    def loss(p):
        st = salary_summary(make(np.exp(p[0]), np.exp(p[1]))[0])
        return float(sum(np.log(max(st[k], 1.0) / targets[k]) ** 2 for k in keys))

    best = None
    for x0 in starts:
        sol = optimize.minimize(loss, x0=np.log(np.asarray(x0, dtype=float)), method="Nelder-Mead",
                                options={"xatol": 1e-6, "fatol": 1e-12, "maxiter": 1000})
        if best is None or sol.fun < best.fun:
            best = sol
    sl, sr = float(np.exp(best.x[0])), float(np.exp(best.x[1]))
    s, m = make(sl, sr)
    return s, (m, sl, sr)


def standin_censoring(n: int = 1000, seed: SeedLike = 2017) -> SDRData:
    """Stand-in for the censoring paper's sample: salary, gender, age group, weeks worked.

    Covariates: 30% women, nine age groups (30-34 to 70-74, hump-shaped shares), 85% work 52
    weeks, the rest 36-51 (1% fewer than 36). Log salary = ``m`` + age, gender and weeks effects
    + split-normal noise (sds ``s_left``, ``s_right``). The random numbers are drawn once from
    ``seed``; then ``(m, s_left, s_right)`` are fitted (least squares on log ratios) so that this
    very sample's mean, median, 15th and 90th percentiles match the published ones. Salaries are
    rounded to whole dollars and capped below :data:`PUBLIC_SALARY_BOUND`.
    """
    if not isinstance(n, (int, np.integer)) or n < 2:
        raise DataError(f"`n` must be an integer >= 2; got {n!r}.")
    rng = generator(seed)
    cov = _censoring_covariates(rng, int(n))
    eff = _covariate_effect(cov["gender"], cov["age_group"], cov["weeks"])
    u, v = rng.random(int(n)), rng.standard_normal(int(n))

    def make(sl, sr):
        z = eff + _split_normal(u, v, sl, sr)
        m = np.log(CENSORING_TARGETS["median"]) - np.median(z)
        return np.round(np.minimum(np.exp(m + z), PUBLIC_SALARY_BOUND - 1.0)), float(m)

    s, (m, sl, sr) = _calibrate(make, CENSORING_TARGETS, ("mean", "median", "q15", "q90"),
                                [(0.4, 0.5), (0.3, 0.6), (0.5, 0.4)])
    frame = pd.DataFrame({"salary": s, **cov})
    desc = (f"stand-in for the censoring paper's SDR sample (n = {n}, seed {seed}; log salary = "
            f"{m:.3f} + effects + split-normal noise with sds {sl:.3f}/{sr:.3f})")
    return SDRData(frame=frame, source="stand-in", description=desc,
                   steps=[{"step": "generated", "n_before": int(n), "n_after": int(n)}],
                   targets=dict(CENSORING_TARGETS))


def standin_reweighting(n: int = 1000, seed: SeedLike = 2017) -> SDRData:
    """Stand-in for the re-weighting paper's salary sample (n = 1000).

    Log salary is split-normal, capped at the published maximum $509,000 and rounded to whole
    dollars; the published minimum ($0) and maximum ($509,000) are placed as the first two
    records, so the range matches. The random numbers are drawn once from ``seed``; then the
    split normal's ``(m, s_left, s_right)`` are fitted so that this very sample's mean, median and
    sd match the published ones.
    """
    if not isinstance(n, (int, np.integer)) or n < 3:
        raise DataError(f"`n` must be an integer >= 3; got {n!r}.")
    rng = generator(seed)
    t = REWEIGHTING_TARGETS
    u, v = rng.random(int(n)), rng.standard_normal(int(n))

    def make(sl, sr):
        z = _split_normal(u, v, sl, sr)
        z[:2] = (-np.inf, np.inf)  # the published minimum and maximum, placed below
        m = np.log(t["median"]) - np.median(z)
        s = np.round(np.minimum(np.exp(m + z), t["max"]))
        s[0], s[1] = t["min"], t["max"]
        return s, float(m)

    s, (m, sl, sr) = _calibrate(make, t, ("mean", "median", "sd"), [(0.45, 0.6), (0.3, 0.8), (0.6, 0.5)])
    desc = (f"stand-in for the re-weighting paper's SDR salary sample (n = {n}, seed {seed}; log salary "
            f"split-normal around {m:.3f} with sds {sl:.3f}/{sr:.3f}, range fixed at $0-$509,000)")
    return SDRData(frame=pd.DataFrame({"salary": s}), source="stand-in", description=desc,
                   steps=[{"step": "generated", "n_before": int(n), "n_after": int(n)}],
                   targets=dict(t))


# ----------------------------------------------------------------------------------------------
# Transforms for the beta regression
# ----------------------------------------------------------------------------------------------

def scale_salary(s, bound: float = PUBLIC_SALARY_BOUND, offset: float = SALARY_OFFSET) -> np.ndarray:
    """Map salary ``s`` in ``[0, U]`` to ``y = (s + h) / (U + 2h)`` in the open interval (0, 1).

    ``$0`` maps to ``h / (U + 2h) > 0`` and ``$U`` to ``(U + h) / (U + 2h) < 1``: no record is dropped.

    Parameters
    ----------
    s : array_like
        Salaries in dollars, finite and within ``[0, bound]``.
    bound : float
        Public upper bound ``U`` (> 0).
    offset : float
        Offset ``h`` (> 0).

    Returns
    -------
    numpy.ndarray

    Raises
    ------
    DataError
        If a salary is NaN, infinite, negative or above the public bound ``U``.
    """
    bnd = check_positive(bound, "bound")
    off = check_positive(offset, "offset")
    v = as_data(s, "s")  # refuses NaN/inf (naming `s` and the position), strings and empty input
    bad = (v < 0) | (v > bnd)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise DataError(
            f"`s` must lie in [0, {bnd:,.0f}] (the public bound) to be scaled; {int(bad.sum())} salary(ies) "
            f"outside it, first at position {i} ({float(v[i]):,.0f}); min {v.min():,.0f}, max {v.max():,.0f}. "
            f"Remove or filter those records, or pass the public `bound`."
        )
    return (v + off) / (bnd + 2.0 * off)


def unscale_salary(y, bound: float = PUBLIC_SALARY_BOUND, offset: float = SALARY_OFFSET) -> np.ndarray:
    """Inverse of :func:`scale_salary`, clipped to ``[0, U]`` (post-processing, costs no privacy)."""
    v = np.asarray(y, dtype=float) * (bound + 2.0 * offset) - offset
    return np.clip(v, 0.0, bound)


def design_names(age_levels: Sequence[int] = AGE_LEVELS) -> list[str]:
    """Column names of :func:`design_matrix`."""
    return (["intercept", "female"] + [f"age {a}-{a + 4}" for a in list(age_levels)[1:]] + ["weeks (std)"])


def design_matrix(frame: pd.DataFrame, age_levels: Sequence[int] = AGE_LEVELS,
                  weeks_range: tuple[int, int] = WEEKS_RANGE) -> np.ndarray:
    """Design matrix of the beta regression: intercept, female dummy, age dummies, weeks.

    The first age group is the reference (``len(age_levels) - 1`` dummies); weeks worked are
    standardised with the *public* range, ``(weeks - mid) / half_width`` (so 2-52 maps to
    [-1, 1]), not with sample moments.
    """
    for c in ("gender", "age_group", "weeks"):
        if c not in frame:
            raise DataError(f"the design needs column {c!r}; load the SDR with variables including it.")
    levels = list(age_levels)
    age = frame["age_group"].to_numpy()
    if not np.isin(age, levels).all():
        raise DataError(f"age groups {sorted(set(age) - set(levels))} are not in `age_levels`={levels}.")
    lo, hi = weeks_range
    mid, half = (lo + hi) / 2.0, (hi - lo) / 2.0
    cols = [np.ones(len(frame)), (frame["gender"].to_numpy() == "F").astype(float)]
    cols += [(age == a).astype(float) for a in levels[1:]]
    cols += [(frame["weeks"].to_numpy(dtype=float) - mid) / half]
    return np.column_stack(cols)

