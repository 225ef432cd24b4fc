"""Input checks shared by every public function.

Each check raises :class:`ValueError` (or :class:`TypeError`) with a message that names the
offending argument and says how to fix it. Nothing is silently dropped, clipped or coerced: a
string such as ``"3"`` or a boolean is never read as a number (``eps="3"``, ``eps=True``,
``weights=["1", "0.5"]`` and data of str, bool or object dtype all raise).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = [
    "DataError",
    "PublicBoundError",
    "as_data",
    "as_weights",
    "check_eps",
    "check_positive",
    "check_probability",
    "check_same_length",
    "check_support",
    "check_magnitude",
    "check_numeric_text",
    "check_not_constant",
    "MAX_MAGNITUDE",
    "NO_CONSTANT_FAMILIES",
]


class DataError(ValueError):
    """Raised when an argument holds values a mechanism cannot use."""


class PublicBoundError(DataError):
    """Raised when a bound that must be public looks computed from the private data."""


def _is_number(value: Any) -> bool:
    """Whether ``value`` is a real number (int, float, numpy number or 0-d numeric array), not a bool."""
    if isinstance(value, (bool, np.bool_)):
        return False
    if isinstance(value, (int, float, np.integer, np.floating)):
        return True
    return isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iuf"


def _numeric_array(x: Any, name: str) -> np.ndarray:
    """``x`` as an array without conversion, refusing str, bool, object and complex dtypes."""
    if isinstance(x, (str, bytes)):
        raise DataError(f"`{name}` must be numeric array-like; got a string {x!r}. Convert it to numbers first.")
    try:
        raw = np.asarray(x)
    except (TypeError, ValueError) as err:
        raise DataError(f"`{name}` must be numeric array-like; got {type(x).__name__} ({err}).") from err
    if raw.dtype.kind not in "iuf" and raw.size > 0:
        kind = {"b": "booleans", "U": "strings", "S": "bytes", "O": "Python objects (mixed or non-numeric)",
                "c": "complex numbers"}.get(raw.dtype.kind, f"dtype {raw.dtype}")
        raise DataError(
            f"`{name}` must be numeric (int or float values); got {kind}. Nothing is coerced: convert the values "
            f"to numbers yourself (e.g. with float()) before passing them."
        )
    return raw


def as_data(x: Any, name: str = "x", *, ndim: int = 1, dtype: Any = float) -> np.ndarray:
    """Return ``x`` as a finite, non-empty numpy array or raise a clear error.

    Parameters
    ----------
    x : array_like
        The values to check.
    name : str
        Argument name used in error messages.
    ndim : int
        Required number of dimensions.
    dtype : numpy dtype
        Dtype of the returned array.

    Returns
    -------
    numpy.ndarray
        A copy of ``x`` as an array of ``dtype``.
    """
    raw = _numeric_array(x, name)
    try:
        arr = np.array(raw, dtype=dtype)
    except (TypeError, ValueError) as err:  # pragma: no cover - numeric dtypes always convert
        raise DataError(f"`{name}` must be numeric array-like; got {type(x).__name__} ({err}).") from err
    if arr.ndim != ndim:
        raise DataError(f"`{name}` must be {ndim}-dimensional; got shape {arr.shape}.")
    if arr.size == 0 or arr.shape[0] == 0:
        raise DataError(f"`{name}` is empty; pass at least one record.")
    bad = ~np.isfinite(arr)
    if bad.any():
        idx = np.flatnonzero(bad.reshape(arr.shape[0], -1).any(axis=1))
        raise DataError(
            f"`{name}` has {idx.size} non-finite value(s) (NaN or infinite), first at position "
            f"{int(idx[0])}; remove or impute those records before synthesis."
        )
    return arr


def check_support(
    x: np.ndarray,
    name: str,
    *,
    lower: float | None = None,
    upper: float | None = None,
    lower_open: bool = False,
    upper_open: bool = False,
    integer: bool = False,
    model: str = "the model",
) -> None:
    """Raise if any value of ``x`` lies outside the support of ``model``.

    Parameters
    ----------
    x : numpy.ndarray
        Values, already checked to be finite.
    name : str
        Argument name for the message.
    lower, upper : float, optional
        Support bounds.
    lower_open, upper_open : bool
        Whether the bound itself is excluded.
    integer : bool
        Whether values must be whole numbers (counts).
    model : str
        Model name for the message.
    """
    if lower is not None:
        bad = x <= lower if lower_open else x < lower
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            word = "negative counts" if integer and lower == 0 else "values below the support"
            rel = ">" if lower_open else ">="
            raise DataError(
                f"`{name}` has {int(bad.sum())} {word} of {model} (first: position {i}, value "
                f"{float(x[i])!r}); {model} needs {name} {rel} {lower}. Transform or remove those records."
            )
    if upper is not None:
        bad = x >= upper if upper_open else x > upper
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            rel = "<" if upper_open else "<="
            raise DataError(
                f"`{name}` has {int(bad.sum())} values above the support of {model} (first: position "
                f"{i}, value {float(x[i])!r}); {model} needs {name} {rel} {upper}. Rescale or remove them."
            )
    if integer:
        bad = x != np.round(x)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise DataError(
                f"`{name}` must hold whole-number counts for {model}; position {i} is {float(x[i])!r}."
            )


def as_weights(w: Any, n: int, name: str = "weights") -> np.ndarray:
    """Return record weights as a float array of length ``n`` with values in [0, 1].

    Parameters
    ----------
    w : array_like or float or None
        Weights; ``None`` means all ones, a scalar is broadcast to every record. Strings,
        booleans and object arrays are refused (never coerced).
    n : int
        Number of records.
    name : str
        Argument name for the message.

    Returns
    -------
    numpy.ndarray
        A float copy of the weights.
    """
    if w is None:
        return np.ones(n)
    arr = _numeric_array(w, name).astype(float)
    if arr.ndim == 0:
        arr = np.full(n, float(arr))
    if arr.ndim > 1:
        raise DataError(
            f"`{name}` must be one-dimensional, one weight per record; got shape {arr.shape}. Pass a vector "
            f"of length {n} (flatten it only if it really holds one weight per record)."
        )
    if arr.shape[0] != n:
        raise DataError(
            f"`{name}` has length {arr.shape[0] if arr.ndim else 1} but the data have {n} records; "
            f"pass one weight per record."
        )
    if not np.isfinite(arr).all():
        raise DataError(f"`{name}` has NaN or infinite entries; weights must lie in [0, 1].")
    if (arr < 0).any() or (arr > 1).any():
        i = int(np.flatnonzero((arr < 0) | (arr > 1))[0])
        raise DataError(
            f"`{name}` must lie in [0, 1]; position {i} is {float(arr[i])!r}. Rescale the weights "
            f"(e.g. divide by their maximum) instead of passing values outside [0, 1]."
        )
    return arr.copy()


def check_eps(eps: Any, name: str = "eps") -> float:
    """Return ``eps`` as a float after checking it is a finite positive privacy budget.

    Only numbers are accepted (int, float, numpy numbers); a string or a bool raises.
    """
    if not _is_number(eps):
        raise DataError(f"`{name}` must be a positive number; got {eps!r} ({type(eps).__name__}). Use e.g. {name}=1.0.")
    val = float(eps)
    if not np.isfinite(val) or val <= 0:
        raise DataError(
            f"`{name}` must be a finite privacy budget > 0; got {eps!r}. Use e.g. {name}=1.0."
        )
    return val


def check_positive(value: Any, name: str, *, allow_zero: bool = False) -> float:
    """Return ``value`` as float after checking it is finite and positive (numbers only, no str or bool)."""
    if not _is_number(value):
        raise DataError(f"`{name}` must be a number; got {value!r} ({type(value).__name__}).")
    val = float(value)
    if not np.isfinite(val) or val < 0 or (val == 0 and not allow_zero):
        need = ">= 0" if allow_zero else "> 0"
        raise DataError(f"`{name}` must be finite and {need}; got {value!r}.")
    return val


def check_probability(value: Any, name: str, *, open_low: bool = True) -> float:
    """Return ``value`` as float after checking it lies in (0, 1] (or [0, 1]); numbers only, no str or bool."""
    if not _is_number(value):
        raise DataError(f"`{name}` must be a probability (a number); got {value!r} ({type(value).__name__}).")
    val = float(value)
    low_bad = val <= 0 if open_low else val < 0
    if not np.isfinite(val) or low_bad or val > 1:
        rng = "(0, 1]" if open_low else "[0, 1]"
        raise DataError(f"`{name}` must lie in {rng}; got {value!r}.")
    return val


def check_same_length(**arrays: Any) -> int:
    """Raise unless all given arrays have the same first dimension; return it."""
    lengths = {k: len(v) for k, v in arrays.items() if v is not None}
    if len(set(lengths.values())) > 1:
        desc = ", ".join(f"`{k}` has {v}" for k, v in lengths.items())
        raise DataError(f"mismatched lengths: {desc}; pass one row per record in each.")
    return next(iter(lengths.values()))


# --- validators of named settings ------------------------------------------------------------------
# Each takes ``(value, name)`` and returns the checked value or raises DataError naming ``name``; the
# mechanisms' parameter tables (:mod:`dpsynth.mechanisms.contract`) pair a default with one of them,
# in the manner of ArviZ's rcParams.


def check_finite(value: Any, name: str) -> float:
    """A finite real number (no str or bool)."""
    if not _is_number(value) or not np.isfinite(float(value)):
        raise DataError(f"`{name}` must be a finite number; got {value!r} ({type(value).__name__}).")
    return float(value)


def check_number(value: Any, name: str) -> float:
    """A real number, infinities allowed (no NaN, str or bool)."""
    if not _is_number(value) or np.isnan(float(value)):
        raise DataError(f"`{name}` must be a number (inf allowed); got {value!r} ({type(value).__name__}).")
    return float(value)


def check_bool(value: Any, name: str) -> bool:
    """True or False (no 0/1, no strings)."""
    if not isinstance(value, (bool, np.bool_)):
        raise DataError(f"`{name}` must be True or False; got {value!r} ({type(value).__name__}).")
    return bool(value)


def check_count(value: Any, name: str, *, minimum: int = 1) -> int:
    """An integer >= ``minimum`` (a whole float such as ``3.0`` is refused: say ``3``)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise DataError(f"`{name}` must be an integer >= {minimum}; got {value!r} ({type(value).__name__}).")
    return int(value)


def positive_count(value: Any, name: str) -> int:
    """An integer >= 1."""
    return check_count(value, name, minimum=1)


def positive_number(value: Any, name: str) -> float:
    """A finite number > 0."""
    return check_positive(value, name)


def unit_interval(value: Any, name: str) -> float:
    """A number in (0, 1]."""
    return check_probability(value, name)


def one_of(*choices: str):
    """A validator accepting exactly one of ``choices`` (strings)."""

    def check(value: Any, name: str) -> str:
        if not isinstance(value, str) or value not in choices:
            raise DataError(f"`{name}` must be one of {', '.join(repr(c) for c in choices)}; got {value!r}.")
        return value

    check.__doc__ = f"One of {choices}."
    return check


def optional(validator):
    """``validator``, or None."""

    def check(value: Any, name: str):
        return None if value is None else validator(value, name)

    check.__doc__ = f"None, or: {validator.__doc__}"
    return check


def check_names(value: Any, name: str) -> tuple[str, ...]:
    """A list of column names (strings); a single string is refused (write ``[name]``)."""
    if isinstance(value, str):
        raise DataError(f"`{name}` must be a list of column names; got the string {value!r} (write [{value!r}]).")
    try:
        items = tuple(value)
    except TypeError:
        raise DataError(f"`{name}` must be a list of column names; got {value!r}.") from None
    bad = [v for v in items if not isinstance(v, str)]
    if bad:
        raise DataError(f"`{name}` must hold column names (strings); got {bad[0]!r}.")
    return items


def check_table_columns(data: Any, target: Any, covariates: Any) -> list[str]:
    """Check a confidential table: a DataFrame holding ``target`` (a column, or a list: a table's targets) and
    ``covariates`` and no other column, each column named once.

    Returns
    -------
    list of str
        The covariate names.
    """
    import pandas as pd

    if not isinstance(data, pd.DataFrame):
        raise DataError(f"`data` must be a pandas DataFrame; got {type(data).__name__}.")
    dup = sorted({str(c) for c in data.columns[data.columns.duplicated()]})
    if dup:
        raise DataError(f"`data` has two or more columns named {dup}: a column name must say which column it is. "
                        f"Rename or drop the duplicates first (e.g. df.loc[:, ~df.columns.duplicated()]).")
    name = "targets" if isinstance(target, list) else "target"
    targets = target if isinstance(target, list) else [target]
    if not all(isinstance(t, str) for t in targets):
        raise DataError(f"`{name}` must be column names (strings); got {target!r}.")
    if isinstance(covariates, str):
        raise DataError(f"`covariates` must be a list of column names; got the string {covariates!r} "
                        f"(write covariates=[{covariates!r}]).")
    covs = [] if covariates is None else list(check_names(covariates, "covariates"))
    for c in [*targets, *covs]:
        if c not in data.columns:
            raise DataError(f"column {c!r} is not in `data`; its columns are {list(data.columns)}.")
    both = [c for c in covs if c in targets]
    if both:
        raise DataError(f"column(s) {both} are in both `{name}` and `covariates`; a column is one or the other.")
    extra = [c for c in data.columns if c not in targets and c not in covs]
    if extra:
        raise DataError(f"`data` has columns that are neither `{name}` nor `covariates`: {extra}; select the "
                        f"columns to synthesise first (data[[{name}..., *covariates]]) or list them as covariates.")
    if len(data) < 2:
        raise DataError(f"`data` has {len(data)} record(s); synthesis needs at least 2 (a synthetic copy of one record "
                        f"is that record). Pass the whole confidential table.")
    return covs


def check_share(value: Any, name: str) -> float:
    """A share in [0, 1]."""
    if not _is_number(value) or not 0 <= float(value) <= 1:
        raise DataError(f"`{name}` must be a share in [0, 1]; got {value!r}.")
    return float(value)


def check_optional_finite(value: Any, name: str, *, what: str = "a public constant") -> float | None:
    """None, or a finite number."""
    if value is None:
        return None
    if not _is_number(value) or not np.isfinite(float(value)):
        raise DataError(f"`{name}` must be a finite number ({what}); got {value!r}.")
    return float(value)


# --- checks of a confidential column, shared by the API and the command line ---------------------------------------

#: The largest magnitude of a number in the data: the largest float32. A data set's id compares numbers as float32
#: (:func:`dpsynth.release.ledger.dataset_id`), which holds nothing larger (it would read as infinity, so two data
#: sets that differ there would share an id), and a model's sums of squares of a larger value overflow.
MAX_MAGNITUDE = float(np.finfo(np.float32).max)


def check_magnitude(s: Any, column: str, role: str = "column") -> None:
    """Refuse a finite number beyond :data:`MAX_MAGNITUDE` in a numeric column, naming the column and the row.

    Used by :class:`dpsynth.Synthesizer`, :class:`dpsynth.TableSynthesizer` and the command line
    alike, so both accept and refuse the same data. Missing and infinite values are left to the
    checks that name them.

    Parameters
    ----------
    s : pandas.Series
        The column (its index labels are the rows named).
    column : str
        Its name, for the message.
    role : str
        What it is, for the message (``"target column"``, ``"covariate"``).
    """
    import pandas as pd

    if not pd.api.types.is_numeric_dtype(s) or pd.api.types.is_bool_dtype(s):
        return
    v = s.to_numpy(dtype=float)
    with np.errstate(invalid="ignore"):
        bad = np.isfinite(v) & (np.abs(v) > MAX_MAGNITUDE)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise DataError(
            f"{role} {column!r} has the value {v[i]:g} at row {s.index[i]!r}, beyond what dpsynth holds (|x| <= "
            f"{MAX_MAGNITUDE:.4g}, the largest float32: a data set's id compares numbers as float32, and a model's "
            f"sums of squares would overflow). Rescale the column (e.g. a public unit: unit=1e6, --unit 1e6) or fix "
            f"the record.")


def check_numeric_text(s: Any, column: str, role: str = "target column") -> None:
    """Refuse a column of text or Python objects that is mostly numbers but holds some text.

    Such a column is a numeric column with a few bad cells (a typo, a note, a placeholder), not a
    categorical one: one line names the column, the first offending row and value, and the fix.
    More than half of its values text: left to the categorical checks (declare its levels).

    Parameters
    ----------
    s : pandas.Series
        The column (its index labels are the rows named).
    column : str
        Its name, for the message.
    role : str
        What it is, for the message.
    """
    import pandas as pd

    if isinstance(s.dtype, pd.CategoricalDtype) or pd.api.types.is_bool_dtype(s) or not (
            pd.api.types.is_object_dtype(s) or pd.api.types.is_string_dtype(s)):
        return
    vals = s.dropna()
    if vals.empty:
        return
    text = vals.map(lambda v: isinstance(v, str))
    number = vals.map(lambda v: isinstance(v, (int, float, np.integer, np.floating))
                      and not isinstance(v, (bool, np.bool_)))
    parsed = pd.to_numeric(vals[text].astype(str).str.strip(), errors="coerce")
    numeric = number.copy()
    numeric[text] = parsed.notna().to_numpy()
    bad = ~numeric
    if not bad.any() or bad.mean() > 0.5:
        return
    i = bad.to_numpy().argmax()
    raise DataError(
        f"{role} {column!r} holds numbers and text: {int(bad.sum())} of {len(vals)} value(s) are not numbers (first "
        f"at row {vals.index[i]!r}: {vals.iloc[i]!r}). Clean or convert the column first (fix or drop those rows, "
        f"e.g. pd.to_numeric(df[{column!r}], errors='coerce') and drop the rows it cannot read); nothing is coerced.")


#: Shipped families that cannot fit a column holding one value: their scale (or rate) would be degenerate.
NO_CONSTANT_FAMILIES = ("lognormal", "lognormal_regression", "lognormal_mixture", "beta", "beta_regression", "negbin",
                        "poisson")


def check_not_constant(x: Any, column: str, model: Any) -> None:
    """Refuse, before any fit, a target column holding one value for a family that cannot fit it.

    Parameters
    ----------
    x : array_like
        The column's values (finite).
    column : str
        Its name, for the message.
    model : str or callable
        The family fitted (a model function is not checked).
    """
    if not isinstance(model, str) or model not in NO_CONSTANT_FAMILIES:
        return
    arr = np.asarray(x, dtype=float)
    if arr.size and bool(np.all(arr == arr[0])):
        raise DataError(
            f"target column {column!r} holds the same value in every record: the {model} model cannot "
            f"fit a constant column (its scale is degenerate and the fit does not converge). Drop the column, or give "
            f"public bounds and a mechanism that takes it: bounds=(lower, upper) with mechanism='noise_aware' or "
            f"'ph' (on the command line --lower L --upper U --mechanism noise_aware).")
