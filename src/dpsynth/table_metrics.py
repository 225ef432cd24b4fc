"""How well a synthetic table keeps the original's marginals and the relations between its columns.

The measures of a whole-table release (:class:`dpsynth.table_synthesizer.TableSynthesizer`, and the
peers it is compared with), each a pure function of two data frames and the columns' kinds
(``"continuous"``, ``"count"`` or ``"categorical"``):

* :func:`marginal_table`: per column, the largest ECDF distance (numeric columns) or the total
  variation distance of the level shares (categorical ones);
* :func:`association`, :func:`association_matrix`: one number per pair of columns that does not
  depend on the unit — Spearman's rank correlation for two numeric columns, the correlation ratio
  of the ranks (eta) for a numeric and a categorical one, Cramér's V for two categorical ones;
* :func:`pairwise_table`: those associations in both tables side by side, and the total variation
  distance of each pair's contingency table (numeric columns cut at the original's quintiles);
* :func:`regression_table`: a regression of one numeric column on others (on its analysis scale:
  ``log`` of a positive continuous column, ``log(1 + y)`` of a count), coefficients from both
  tables with 95% intervals and their overlap (Karr et al. 2006);
* :func:`table_features`: the numeric features of a table for :func:`dpsynth.metrics.pmse`
  (numbers on their analysis scale, categories as indicators of every level but the first).

They read the confidential data: a data holder's report or a study, never a release.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from .metrics import ecdf_distances, interval_overlap, ols
from .validation import DataError

__all__ = [
    "KINDS",
    "marginal_table",
    "association",
    "association_matrix",
    "pairwise_table",
    "contingency_tvd",
    "regression_table",
    "regression_fit",
    "regression_coverage",
    "table_features",
    "analysis_values",
]

#: The kinds of column a table may hold.
KINDS = ("continuous", "count", "categorical")
#: Numeric columns are cut at these quantiles of the original for the contingency tables.
CONTINGENCY_QUANTILES = (0.2, 0.4, 0.6, 0.8)


def _check_kinds(frames: Sequence[pd.DataFrame], kinds: Mapping[str, str]) -> None:
    if not kinds:
        raise DataError("`kinds` is empty: pass {column: 'continuous' | 'count' | 'categorical'} for the columns "
                        "to compare.")
    for c, k in kinds.items():
        if k not in KINDS:
            raise DataError(f"`kinds[{c!r}]` is {k!r}; use one of {', '.join(KINDS)}.")
        for name, f in zip(("original", "synthetic"), frames):
            if c not in f.columns:
                raise DataError(f"the {name} table has no column {c!r}; its columns are "
                                f"{', '.join(map(str, f.columns))}.")


def _numeric(s: pd.Series) -> np.ndarray:
    v = pd.to_numeric(s, errors="coerce").to_numpy(dtype=float)
    return v


def analysis_values(s: pd.Series, kind: str, *, like: pd.Series | None = None) -> np.ndarray:
    """A numeric column on its analysis scale: ``log(1 + y)`` for a count, ``log y`` for a continuous
    column whose original (``like``, default ``s``) is positive, else ``y``. Values off that scale are NaN."""
    v = _numeric(s)
    ref = _numeric(like if like is not None else s)
    with np.errstate(divide="ignore", invalid="ignore"):
        if kind == "count":
            return np.where(v >= 0, np.log1p(np.maximum(v, 0)), np.nan)
        if np.nanmin(ref) > 0:
            return np.where(v > 0, np.log(np.where(v > 0, v, 1.0)), np.nan)
    return v


def _shares(s: pd.Series, levels: Sequence[str]) -> np.ndarray:
    counts = s.astype(str).value_counts()
    v = np.array([counts.get(str(lev), 0) for lev in levels], dtype=float)
    return v / max(v.sum(), 1.0)


def _levels(*series: pd.Series) -> list[str]:
    seen: dict[str, None] = {}
    for s in series:
        for v in s.astype(str):
            seen.setdefault(v, None)
    return list(seen)


def marginal_table(original: pd.DataFrame, synthetic: pd.DataFrame, kinds: Mapping[str, str]) -> pd.DataFrame:
    """Per column: the largest ECDF distance (numeric) or the total variation distance of the shares (categorical).

    Returns
    -------
    pandas.DataFrame
        Indexed by column, with ``kind``, ``measure`` (``"max ECDF"`` or ``"TVD"``) and ``distance``
        (0 for identical marginals, at most 1).
    """
    _check_kinds((original, synthetic), kinds)
    rows = []
    for c, k in kinds.items():
        if k == "categorical":
            levels = _levels(original[c], synthetic[c])
            d = 0.5 * float(np.abs(_shares(original[c], levels) - _shares(synthetic[c], levels)).sum())
            rows.append((c, k, "TVD", d))
        else:
            a, b = _numeric(original[c]), _numeric(synthetic[c])
            a, b = a[np.isfinite(a)], b[np.isfinite(b)]
            d = ecdf_distances(a, b).max_ecdf if a.size and b.size else float("nan")
            rows.append((c, k, "max ECDF", d))
    return pd.DataFrame(rows, columns=["column", "kind", "measure", "distance"]).set_index("column")


def _ranks(v: np.ndarray) -> np.ndarray:
    return pd.Series(v).rank(method="average").to_numpy()


def _eta(values: np.ndarray, groups: np.ndarray) -> float:
    ok = np.isfinite(values)
    v, g = values[ok], groups[ok]
    if v.size < 2 or np.var(v) == 0:
        return float("nan")
    r = _ranks(v)
    total = np.sum((r - r.mean()) ** 2)
    between = sum(np.sum(g == lev) * (r[g == lev].mean() - r.mean()) ** 2 for lev in np.unique(g))
    return float(np.sqrt(between / total))


def _cramers_v(a: np.ndarray, b: np.ndarray) -> float:
    tab = pd.crosstab(a, b).to_numpy(dtype=float)
    if min(tab.shape) < 2:
        return float("nan")
    n = tab.sum()
    expected = tab.sum(1, keepdims=True) * tab.sum(0, keepdims=True) / n
    chi2 = float(np.sum((tab - expected) ** 2 / expected))
    return float(np.sqrt(chi2 / (n * (min(tab.shape) - 1))))


def association(x: pd.Series, y: pd.Series, kind_x: str, kind_y: str) -> tuple[str, float]:
    """The association of two columns, unit-free: ``(measure, value)``.

    Spearman's rank correlation (in [-1, 1]) for two numeric columns, the correlation ratio of the
    numeric column's ranks on the categories (eta, in [0, 1]) for a numeric and a categorical one,
    and Cramér's V (in [0, 1]) for two categorical ones. Records with a non-numeric value in a
    numeric column are left out. NaN when a column is constant.
    """
    cat_x, cat_y = kind_x == "categorical", kind_y == "categorical"
    if cat_x and cat_y:
        return "Cramér's V", _cramers_v(x.astype(str).to_numpy(), y.astype(str).to_numpy())
    if cat_x or cat_y:
        num, cat = (y, x) if cat_x else (x, y)
        return "eta", _eta(_numeric(num), cat.astype(str).to_numpy())
    a, b = _numeric(x), _numeric(y)
    ok = np.isfinite(a) & np.isfinite(b)
    if ok.sum() < 3 or np.ptp(a[ok]) == 0 or np.ptp(b[ok]) == 0:
        return "Spearman", float("nan")
    return "Spearman", float(np.corrcoef(_ranks(a[ok]), _ranks(b[ok]))[0, 1])


def association_matrix(frame: pd.DataFrame, kinds: Mapping[str, str]) -> pd.DataFrame:
    """The :func:`association` of every pair of the columns of ``kinds`` (1 on the diagonal)."""
    _check_kinds((frame, frame), kinds)
    cols = list(kinds)
    m = pd.DataFrame(np.eye(len(cols)), index=cols, columns=cols)
    for i, a in enumerate(cols):
        for b in cols[i + 1:]:
            m.loc[a, b] = m.loc[b, a] = association(frame[a], frame[b], kinds[a], kinds[b])[1]
    return m


def _cells(s: pd.Series, kind: str, edges: np.ndarray | None) -> np.ndarray:
    if kind == "categorical":
        return s.astype(str).to_numpy()
    v = _numeric(s)
    out = np.searchsorted(edges, v, side="right").astype(object)
    out[~np.isfinite(v)] = "missing"
    return out.astype(str)


def _edges(s: pd.Series) -> np.ndarray:
    v = _numeric(s)
    return np.unique(np.quantile(v[np.isfinite(v)], CONTINGENCY_QUANTILES))


def contingency_tvd(original: pd.DataFrame, synthetic: pd.DataFrame, a: str, b: str, kinds: Mapping[str, str]) -> float:
    """Total variation distance of the joint distribution of columns ``a`` and ``b`` in the two tables.

    Categorical columns by level; numeric ones cut at the original's quintiles (the same cells for both
    tables). 0 for identical contingency tables, at most 1.
    """
    cells = []
    for frame in (original, synthetic):
        ca = _cells(frame[a], kinds[a], None if kinds[a] == "categorical" else _edges(original[a]))
        cb = _cells(frame[b], kinds[b], None if kinds[b] == "categorical" else _edges(original[b]))
        cells.append(pd.Series(ca).str.cat(pd.Series(cb), sep="\x1f").value_counts(normalize=True))
    joint = pd.concat(cells, axis=1).fillna(0.0)
    return float(0.5 * np.abs(joint.iloc[:, 0] - joint.iloc[:, 1]).sum())


def pairwise_table(original: pd.DataFrame, synthetic: pd.DataFrame, kinds: Mapping[str, str]) -> pd.DataFrame:
    """Every pair of columns: its association in both tables and the TVD of its contingency table.

    Returns
    -------
    pandas.DataFrame
        One row per pair (``a``, ``b`` in the order of ``kinds``) with ``measure``, ``original``,
        ``synthetic``, ``difference`` (synthetic − original) and ``contingency_tvd``.
    """
    _check_kinds((original, synthetic), kinds)
    cols = list(kinds)
    rows = []
    for i, a in enumerate(cols):
        for b in cols[i + 1:]:
            measure, vo = association(original[a], original[b], kinds[a], kinds[b])
            _, vs = association(synthetic[a], synthetic[b], kinds[a], kinds[b])
            rows.append((a, b, measure, vo, vs, vs - vo, contingency_tvd(original, synthetic, a, b, kinds)))
    return pd.DataFrame(rows, columns=["a", "b", "measure", "original", "synthetic", "difference", "contingency_tvd"])


def _design(frame: pd.DataFrame, predictors: Sequence[str], kinds: Mapping[str, str], levels: Mapping[str, list],
            like: pd.DataFrame) -> tuple[np.ndarray, list[str]]:
    cols, names = [np.ones(len(frame))], ["intercept"]
    for p in predictors:
        if kinds[p] == "categorical":
            s = frame[p].astype(str).to_numpy()
            for lev in levels[p][1:]:
                cols.append((s == lev).astype(float))
                names.append(f"{p}={lev}")
        else:
            cols.append(analysis_values(frame[p], kinds[p], like=like[p]))
            names.append(p)
    return np.column_stack(cols), names


def regression_table(original: pd.DataFrame, synthetic: pd.DataFrame, outcome: str, predictors: Sequence[str],
                     kinds: Mapping[str, str], *, level: float = 0.95) -> pd.DataFrame:
    """OLS of a numeric ``outcome`` on ``predictors`` in both tables, side by side.

    The outcome and numeric predictors on their analysis scale (:func:`analysis_values`, decided by
    the original), categorical predictors as indicators of every level of the original but the
    first. Records with a value off that scale are left out (the count is in ``attrs["dropped"]``).

    Returns
    -------
    pandas.DataFrame
        Indexed by term, with ``original``, ``original_lower``, ``original_upper``, ``synthetic``,
        ``synthetic_lower``, ``synthetic_upper`` and ``overlap`` (the intervals' overlap, 1 identical,
        0 disjoint; NaN where an interval is degenerate).
    """
    every = {outcome: kinds.get(outcome), **{p: kinds.get(p) for p in predictors}}
    missing = [c for c, k in every.items() if k is None]
    if missing:
        raise DataError(f"`kinds` has no entry for {', '.join(missing)}; give the kind of every column of the "
                        "regression.")
    _check_kinds((original, synthetic), every)
    if kinds[outcome] == "categorical":
        raise DataError(f"`outcome` {outcome!r} is categorical; a regression needs a numeric outcome "
                        "(compare a categorical column through pairwise_table).")
    levels = {p: _levels(original[p]) for p in predictors if kinds[p] == "categorical"}
    fits, dropped = [], {}
    for name, frame in (("original", original), ("synthetic", synthetic)):
        y = analysis_values(frame[outcome], kinds[outcome], like=original[outcome])
        X, terms = _design(frame, predictors, kinds, levels, original)
        ok = np.isfinite(y) & np.all(np.isfinite(X), axis=1)
        dropped[name] = int((~ok).sum())
        fits.append(ols(y[ok], X[ok], level=level))
    o, s = fits
    with np.errstate(invalid="ignore", divide="ignore"):
        good = (o.upper > o.lower) & (s.upper > s.lower)
        overlap = np.full(o.coef.size, np.nan)
        overlap[good] = interval_overlap(o.lower[good], o.upper[good], s.lower[good], s.upper[good])
    out = pd.DataFrame({"original": o.coef, "original_lower": o.lower, "original_upper": o.upper,
                        "synthetic": s.coef, "synthetic_lower": s.lower, "synthetic_upper": s.upper,
                        "overlap": overlap}, index=pd.Index(terms, name="term"))
    out.attrs["dropped"] = dropped
    return out


def table_features(frame: pd.DataFrame, kinds: Mapping[str, str], *, like: pd.DataFrame | None = None) -> np.ndarray:
    """Numeric features of a table for :func:`dpsynth.metrics.pmse`: numbers on their analysis scale
    (decided by ``like``, default ``frame``), categories as indicators of every level of ``like`` but the first.
    Off-scale values are set to the original's median (so that a record is not dropped from one table only)."""
    like = frame if like is None else like
    _check_kinds((frame, like), kinds)
    cols = []
    for c, k in kinds.items():
        if k == "categorical":
            s = frame[c].astype(str).to_numpy()
            cols += [(s == lev).astype(float) for lev in _levels(like[c])[1:]]
        else:
            v = analysis_values(frame[c], k, like=like[c])
            ref = analysis_values(like[c], k, like=like[c])
            cols.append(np.where(np.isfinite(v), v, np.nanmedian(ref)))
    return np.column_stack(cols)


def regression_fit(frame: pd.DataFrame, outcome: str, predictors: Sequence[str], kinds: Mapping[str, str], *,
                   like: pd.DataFrame, level: float = 0.95) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """The analyst's OLS on one table: coefficients, their squared standard errors and the terms.

    The design is :func:`regression_table`'s, decided by ``like`` (the confidential table): the
    outcome and numeric predictors on their analysis scale, indicators of ``like``'s levels but the
    first. Records with a value off that scale are left out.

    Raises
    ------
    DataError
        If the design is rank deficient (e.g. a level that never occurs in ``frame``).
    """
    levels = {p: _levels(like[p]) for p in predictors if kinds[p] == "categorical"}
    y = analysis_values(frame[outcome], kinds[outcome], like=like[outcome])
    X, terms = _design(frame, predictors, kinds, levels, like)
    ok = np.isfinite(y) & np.all(np.isfinite(X), axis=1)
    if np.linalg.matrix_rank(X[ok]) < X.shape[1]:
        raise DataError("the regression's design is rank deficient on this table (a level or value that never occurs)")
    fit = ols(y[ok], X[ok], level=level)
    return fit.coef, fit.se ** 2, terms


def regression_coverage(original: pd.DataFrame, synthetic_sets: Sequence[pd.DataFrame], outcome: str,
                        predictors: Sequence[str], kinds: Mapping[str, str], *, rule: str = "partial",
                        level: float = 0.95) -> pd.DataFrame:
    """Do the intervals an analyst gets from synthetic data cover the confidential estimate?

    With one synthetic table its OLS interval is used as if the data were real; with ``m >= 2`` the
    ``m`` estimates are combined (:func:`dpsynth.combining.combine`). ``T = u_bar + b_m / m`` (``rule="partial"``,
    the default) is the variance of the mean of ``m`` sets each drawn, ``n`` records at a time, from its own
    posterior draw, whether or not every column was synthesized (Raab, Nowok and Dibben 2016); ``"full"``
    is Raghunathan, Reiter and Rubin's rule for sets drawn from a synthetic population, much wider at small
    ``m`` (its degrees of freedom fall towards 0).

    Parameters
    ----------
    original : pandas.DataFrame
        The confidential table (its estimate is the target of the interval).
    synthetic_sets : sequence of pandas.DataFrame
        One or more synthetic tables, each from its own posterior draw.
    outcome, predictors, kinds, level
        As for :func:`regression_table`.
    rule : {"partial", "full"}
        The combining rule for ``m >= 2``.

    Returns
    -------
    pandas.DataFrame
        Per term (intercept left out): ``original``, ``estimate``, ``lower``, ``upper``, ``covered``
        (the confidential estimate lies in the interval) and ``width_ratio`` (the interval's width over
        the confidential data's own interval's). A set whose design is rank deficient raises
        :class:`~dpsynth.validation.DataError`.
    """
    from scipy import stats

    from .combining import combine

    sets = list(synthetic_sets)
    if not sets:
        raise DataError("`synthetic_sets` is empty; give one or more synthetic tables.")
    q0, u0, terms = regression_fit(original, outcome, predictors, kinds, like=original, level=level)
    fits = [regression_fit(s, outcome, predictors, kinds, like=original, level=level) for s in sets]
    est = np.array([f[0] for f in fits])
    var = np.array([f[1] for f in fits])
    if len(sets) == 1:
        n_syn = len(sets[0])
        half = stats.t.ppf(0.5 + level / 2, max(n_syn - len(terms), 1)) * np.sqrt(var[0])
        lower, upper, centre = est[0] - half, est[0] + half, est[0]
    else:
        c = combine(est, var, rule=rule, level=level, names=terms,
                    n_ratio=float(np.mean([len(s) for s in sets])) / len(original))
        lower, upper, centre = c["lower"].to_numpy(), c["upper"].to_numpy(), c["estimate"].to_numpy()
    own_half = stats.t.ppf(0.5 + level / 2, max(len(original) - len(terms), 1)) * np.sqrt(u0)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = (upper - lower) / (2 * own_half)
    out = pd.DataFrame({"original": q0, "estimate": centre, "lower": lower, "upper": upper,
                        "covered": (lower <= q0) & (q0 <= upper), "width_ratio": ratio},
                       index=pd.Index(terms, name="term"))
    return out.drop(index="intercept")
