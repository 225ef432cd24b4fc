"""``mechanism="auto"``: which mechanism a synthesizer uses when the user does not say.

The choice reads public facts only (the column's kind, its public bounds, the public or DP number
of records, the eps) and returns the mechanism with the reason, which the synthesizers print.

* **A column of a whole table** (:func:`table_column_choice`), from the whole-table chapter's
  comparison: a categorical column, and a count with few integers within public bounds, get the
  noise-aware model of their DP counts in cells of the earlier columns
  (:mod:`dpsynth.mechanisms.noise_aware`: the closest marginals, valid intervals over several
  sets); a continuous column, or a count over a wide range, gets the unit-free censored regression
  on every earlier column (``censor_ref``: the relations), its values calibrated to its DP marginal
  when public bounds are given (``calibrate``).
* **One column** (:func:`column_choice`): the book's decision table (Table "What to use" of
  the chapter "Choosing a mechanism"), computed from the head-to-head study and shipped with the
  package as ``decisions.json``; a test holds the two equal.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from .validation import DataError

__all__ = ["AUTO", "is_auto", "NARROW_COUNT", "SMALL_N", "Choice", "table_column_choice", "column_choice",
           "model_function_choice",
           "decision_table",
           "situation_of", "SITUATIONS", "needs_ordinal"]

#: The value of ``mechanism`` (``mechanisms``) that asks for the choice.
AUTO = "auto"


def is_auto(mechanism) -> bool:
    """Whether ``mechanism`` asks for the choice (:data:`AUTO`) rather than naming a mechanism."""
    return isinstance(mechanism, str) and mechanism.strip().lower() == AUTO

#: A count with at most this many integers within its public bounds is synthesized from its DP counts.
NARROW_COUNT = 20
#: The situations of the decision table, in its order.
SITUATIONS = ("bounded marginal", "regression", "count", "category", "small n, marginal", "small n, regression")
#: Below this many records a column is in the "small n" situation.
SMALL_N = 500


@dataclass(frozen=True)
class Choice:
    """A mechanism picked by ``auto``, with the settings it needs and the reason, in words.

    Attributes
    ----------
    mechanism : str
        Registry key.
    params : dict
        Mechanism parameters filled from public facts (bounds).
    calibrate : dict or None
        The ``calibrate`` setting (public bounds) of a model-based column, or None.
    reason : str
        Why, for the user.
    model : str or None
        The model family the choice needs (None: the column's default family, from its type).
    """

    mechanism: str
    params: dict
    calibrate: dict | None
    reason: str
    model: str | None = None


def _bounds(bounds) -> dict | None:
    if bounds is None:
        return None
    if isinstance(bounds, Mapping):
        b = {k: bounds[k] for k in ("lower", "upper") if k in bounds}
    else:
        try:
            lo, hi = bounds
        except (TypeError, ValueError):
            raise DataError(f"public bounds must be (lower, upper) or {{'lower': L, 'upper': U}}; got {bounds!r}.")\
                from None
        b = {"lower": lo, "upper": hi}
    if "upper" not in b or b.get("lower") is None:
        raise DataError(f"public bounds need both 'lower' and 'upper'; got {bounds!r}.")
    lo, hi = float(b["lower"]), float(b["upper"])
    if not hi > lo:
        raise DataError(f"public bounds need lower < upper; got lower={lo!r}, upper={hi!r}.")
    return {"lower": lo, "upper": hi}


def table_column_choice(kind: str, bounds=None) -> Choice:
    """The mechanism of one column of a whole table (the chapter's rule, module docstring).

    Parameters
    ----------
    kind : {"continuous", "count", "categorical"}
        The column's kind (from its type).
    bounds : (lower, upper) or dict, optional
        Public bounds of a numeric column, chosen without looking at the data.
    """
    b = _bounds(bounds)
    if kind == "categorical":
        return Choice("noise_aware", {}, None, "categorical: its DP level counts in cells of the earlier columns, "
                      "with a posterior that knows their noise")
    if kind == "count" and b is not None and int(b["upper"]) - int(b["lower"]) + 1 <= NARROW_COUNT:
        return Choice("noise_aware", dict(b), None, f"a count with at most {NARROW_COUNT} values within its public "
                      f"bounds: its DP counts per value, in cells of the earlier columns")
    if kind not in ("continuous", "count"):
        raise DataError(f"unknown column kind {kind!r}; kinds are continuous, count, categorical.")
    what = "continuous" if kind == "continuous" else f"a count over more than {NARROW_COUNT} values"
    if b is not None and needs_ordinal(kind, b):
        takes = "zero or negative values" if kind == "continuous" else "negative values"
        family = "lognormal" if kind == "continuous" else "negative binomial"
        return Choice("censor_ref", {}, dict(b), f"{what} with public bounds [{b['lower']:g}, {b['upper']:g}] that "
                      f"take {takes}, which the default {family} family cannot: the unit-free censored ordinal "
                      "regression over public bins on every earlier column (it takes any value between the bounds: "
                      "zeros, negatives, heaps), its values mapped by rank onto the column's DP marginal on the public "
                      "bounds", model="ordinal")
    if b is None:
        return Choice("censor_ref", {}, None, f"{what}: the unit-free censored regression on every earlier column "
                      "(no public bounds were given, so its marginal is the model's, and on a small file one posterior "
                      "draw can put it far off: give bounds={column: (lower, upper)}, chosen without looking at the "
                      "data, to map it onto a DP marginal)")
    return Choice("censor_ref", {}, dict(b), f"{what}: the unit-free censored regression on every earlier column, "
                  "its values mapped by rank onto the column's DP marginal on the public bounds")


def needs_ordinal(kind: str, bounds) -> bool:
    """Whether public bounds take values the column's default family cannot (a public rule: the bounds, never the
    data): a continuous column whose lower bound is 0 or below (the lognormal needs values above 0), a count whose
    lower bound is below 0 (the negative binomial needs counts of 0 or more). Such a column's table default is the
    ordinal regression over public bins (:mod:`dpsynth.models.ordinal`)."""
    b = _bounds(bounds)
    if b is None or kind == "categorical":
        return False
    return b["lower"] <= 0.0 if kind == "continuous" else b["lower"] < 0.0


def model_function_choice(base: Choice, function: str) -> Choice:
    """What ``auto`` picks for a user's model function: Censor_ref with ``reference="prior"``.

    The decision table's pick (``base``) compares shipped families and model-free releases; the user asked
    for their model, which a model-free pick would drop, and which has neither the saturated reference of
    a shipped family (the default ``"record"``) nor a reference scale (``"dp_median"``). The unit-free
    censored likelihood with each record's window at its term at the model's own prior point needs no
    flag and nothing of the data (:mod:`dpsynth.mechanisms.censored_reference`). A calibration the table's
    cell asked for (with public bounds) is kept.
    """
    calibrate = base.calibrate  # set by a pick of the censored model alone (calibrated to the DP marginal)
    reason = (f"{base.reason}; a model function was given ({function}), so the unit-free censored likelihood "
              f"(Censor_ref) with reference='prior' instead: each record's window at its term at the model's own "
              f"prior point, public and free (the record-wise reference needs a shipped family's saturated term, a "
              f"DP median its reference scale; --reference / reference= names another)")
    return Choice("censor_ref", {"reference": "prior"}, calibrate, reason)


# --------------------------------------------------------------------------------------------
# one column: the decision table
# --------------------------------------------------------------------------------------------


def situation_of(kind: str, n: float | None, *, has_covariates: bool) -> str:
    """The decision table's situation of a column, from public facts: its kind, whether it has covariates, and
    its public or DP number of records (a continuous column of fewer than :data:`SMALL_N` records is in a
    "small n" situation, alone or with covariates; a count or a category keeps its own row at any ``n``)."""
    if kind == "categorical":
        return "category"
    if kind == "count":
        return "count"
    if n is not None and n < SMALL_N:
        return "small n, regression" if has_covariates else "small n, marginal"
    return "regression" if has_covariates else "bounded marginal"


@lru_cache(maxsize=1)
def decision_table() -> dict:
    """The shipped decision table: ``{situation: {eps: {"mechanism", "reason", ...}}}`` (``decisions.json``)."""
    text = resources.files("dpsynth").joinpath("decisions.json").read_text(encoding="utf-8")
    raw = json.loads(text)
    return {s: {float(e): v for e, v in row.items()} for s, row in raw["table"].items()}


def column_choice(kind: str, eps: float, n: float | None, *, has_covariates: bool, bounds=None) -> Choice:
    """The mechanism of one column from the book's decision table, and the reason.

    The cell is the table's at the situation (:func:`situation_of`) and the nearest tabulated eps at or
    below ``eps`` (the smallest tabulated eps when ``eps`` is below it). A pick that needs public bounds
    (a histogram, quantiles, a noise-aware model of a numeric column, a calibration) gets them from
    ``bounds``; without them the choice falls back to the unit-free censored model (``censor_ref``), and
    the reason says so. A cell where no candidate was usable falls back the same way.

    Parameters
    ----------
    kind : {"continuous", "count", "categorical"}
        The column's kind.
    eps : float
        The total eps of the release.
    n : float or None
        A public number of records (or None: not public).
    has_covariates : bool
        Whether public covariates are carried.
    bounds : (lower, upper) or dict, optional
        Public bounds of a numeric column, chosen without looking at the data.
    """
    table = decision_table()
    sit = situation_of(kind, n, has_covariates=has_covariates)
    row = table[sit]
    grid = sorted(row)
    at = max([e for e in grid if e <= float(eps)], default=grid[0])
    cell = row[at]
    b = _bounds(bounds) if kind != "categorical" else None
    head = f"auto: {sit}, eps = {float(eps):g}: the book's decision table at eps = {at:g} picks {cell['name']}"
    if cell["mechanism"] is None:
        return Choice("censor_ref", {}, None, f"{head} ({cell['reason']}); the unit-free censored model "
                      f"(Censor_ref) instead")
    if cell["needs_bounds"] and b is None:
        return Choice("censor_ref", {}, None, f"{head} ({cell['reason']}), which needs public bounds of the column; "
                      f"none were given, so the unit-free censored model (Censor_ref) instead (public bounds: "
                      f"bounds=(lower, upper) in Python, --lower and --upper on the command line)")
    reason = f"{head} ({cell['reason']})"
    if cell.get("calibrate"):
        return Choice("censor_ref", {}, dict(b), reason)
    params = dict(b) if (cell["needs_bounds"] and b is not None) else {}
    return Choice(str(cell["mechanism"]), params, None, reason)
