"""Salary and covariates of the SDR beta regression: the public bound, scaling and design matrix.

Salary enters the beta regression through :func:`scale_salary`, an affine map of ``[0, U]``
into the open interval ``(0, 1)``, where ``U`` is a *public* bound (:data:`PUBLIC_SALARY_BOUND`),
never the sample maximum. :func:`design_matrix` builds the covariates of the censoring paper's
application: intercept, female dummy, age-group dummies and weeks worked, standardised with the
public range :data:`WEEKS_RANGE`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from dpsynth.validation import DataError, as_data, check_positive

__all__ = [
    "PUBLIC_SALARY_BOUND",
    "SALARY_OFFSET",
    "AGE_LEVELS",
    "WEEKS_RANGE",
    "scale_salary",
    "unscale_salary",
    "design_matrix",
    "design_names",
]

#: Public upper bound U of salary (dollars): a round figure fixed before seeing any data and
#: above the largest salary in the published summaries ($509,000). Used by the beta-regression
#: scaling and by the perturbed histogram. Replace it by the PUF's top-code if your codebook gives one.
PUBLIC_SALARY_BOUND = 1_000_000.0
#: Offset h (dollars) of the scaling ``y = (s + h) / (U + 2 h)``, which keeps $0 and $U inside (0, 1).
SALARY_OFFSET = 500.0
#: Default age-group codes (lower end of each 5-year group): 30-34, ..., 70-74, nine groups as
#: in the censoring paper.
AGE_LEVELS = (30, 35, 40, 45, 50, 55, 60, 65, 70)
#: Allowed weeks worked per year.
WEEKS_RANGE = (2, 52)



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

