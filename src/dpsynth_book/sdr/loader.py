"""Loader of the user's copy of the Survey of Doctorate Recipients (SDR) public use file.

:func:`load_sdr` reads the 2017 SDR public use file (PUF) (SAS ``.sas7bdat`` through the
optional ``pyreadstat``, ``pip install 'dpsynth[sas]'``, or ``.csv``), applies *explicit* filters
(each reported with its counts), renames the variables to ``salary``, ``gender``, ``age_group``,
``weeks`` and validates them; anything out of range raises an :class:`SDRFileError` that names
the column and the fix. Nothing is dropped silently. :class:`SDRData` holds a sample (from a file
or from :mod:`dpsynth_book.sdr.standin`) with its provenance; :func:`subsample` draws a simple random
sample of it.

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

from dpsynth.seeds import SeedLike, generator
from dpsynth.validation import DataError

from ..optional import require
from .design import AGE_LEVELS, PUBLIC_SALARY_BOUND, WEEKS_RANGE

__all__ = [
    "SDRFileError",
    "SDRColumns",
    "SDRData",
    "RESERVED_SALARY_CODES",
    "VARIABLES",
    "load_sdr",
    "file_digest",
    "subsample",
    "salary_summary",
]

#: Reserved survey codes of the salary column, which are not salaries: 9999998 (logical skip)
#: and 9999999 (not reported / missing). :func:`load_sdr` refuses them by code, whatever
#: ``salary_bound``; filter those records out explicitly with ``filters``.
RESERVED_SALARY_CODES = (9_999_998, 9_999_999)


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


#: The variables :func:`load_sdr` can read.
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
        pyreadstat = require("pyreadstat", extra="sas", purpose=f"reading the SAS data set {path.name}",
                             error=SDRFileError)
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
            raise SDRFileError(
                f"{path.name} is empty; expected a CSV with a header row naming the SDR columns."
            ) from exc
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
    raw = col.astype(str).str.strip() if col.dtype == object else col
    num = pd.to_numeric(raw, errors="coerce")
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
        A ``.sas7bdat`` file while ``pyreadstat`` is not installed (the message says how to install
        it), unreadable or malformed file, missing column, missing or non-numeric value, or a value
        out of range (negative salary, salary above ``salary_bound``, a reserved salary code of
        :data:`RESERVED_SALARY_CODES` whatever ``salary_bound``, weeks outside ``weeks_range``,
        unknown gender or age-group code). The message names the column and the fix.
    """
    p = Path(path)
    if not p.exists():
        raise SDRFileError(
            f"`sdr_path` {str(p)!r} does not exist; pass the path of your copy of the SDR PUF, or '' for the stand-in."
        )
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
        steps.append({"step": f"filter {col} in {list(values)}", "n_before": int(len(frame)),
                      "n_after": int(keep.sum())})
        frame = frame.loc[keep.to_numpy()]
        if len(frame) == 0:
            raise SDRFileError(
                f"no record is left after filter {col} in {list(values)}; check the codes in the codebook."
            )

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
                f"column {c!r} (salary) has {int((s < 0).sum())} negative value(s), first {s.iloc[i]} in data row "
                f"{i + 1}; "
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
