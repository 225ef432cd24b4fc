"""The confidential column as the model sees it, and back: continuous, count or categorical.

:class:`TargetEncoding` is fixed from the column's *type* (never from its values, which would make
the choice of model a figure of the data): a floating-point column is continuous, an integer one
a count, a categorical one (pandas ``Categorical``, strings, booleans) categorical with **public
levels**. The levels of a categorical variable must be declared (a ``Categorical``'s categories,
``target_levels=``, or the two values of a boolean): the set of levels that happen to occur in the
confidential data is itself a figure of the data. A categorical value is coded ``0, ..., K - 1`` in
the order of its levels.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .validation import DataError, check_numeric_text

__all__ = ["TargetEncoding", "KINDS", "DEFAULT_MODELS"]

#: The kinds of confidential column.
KINDS = ("continuous", "count", "categorical")
#: The shipped family used by default for each kind: (without covariates, with covariates).
DEFAULT_MODELS = {
    "continuous": ("lognormal", "lognormal_regression"),
    "count": ("negbin", "negbin"),
    "categorical": ("multinomial", "multinomial"),
}


def _is_categorical_dtype(s: pd.Series) -> bool:
    return isinstance(s.dtype, pd.CategoricalDtype) or pd.api.types.is_bool_dtype(s) or \
        pd.api.types.is_object_dtype(s) or pd.api.types.is_string_dtype(s)


def _looks_numeric(s: pd.Series) -> bool:
    """Whether every value of a text column reads as a number once thousands separators are removed."""
    vals = s.dropna()
    if vals.empty or not all(isinstance(v, str) for v in vals):
        return False
    cleaned = vals.str.strip().str.replace(r"[,'\u00a0 ](?=\d{3}(\D|$))", "", regex=True)
    return bool(pd.to_numeric(cleaned, errors="coerce").notna().all())


@dataclass(frozen=True)
class TargetEncoding:
    """How the confidential column enters the model and how synthetic values come back.

    Attributes
    ----------
    name : str
        The column.
    kind : str
        ``"continuous"``, ``"count"`` or ``"categorical"``.
    dtype : str
        The column's dtype, restored on synthetic values.
    levels : tuple or None
        Public levels of a categorical column (codes ``0, ..., K - 1``).
    unit : float or None
        A public unit of a continuous column: the model sees ``x / unit``.
    """

    name: str
    kind: str
    dtype: str
    levels: tuple | None = None
    unit: float | None = None

    @classmethod
    def from_series(cls, s: pd.Series, *, levels: Sequence | None = None, unit: float | None = None,
                    declare: str | None = None) -> TargetEncoding:
        """The encoding of column ``s``, from its type (and the declared ``levels`` of a categorical one).

        ``declare`` is how the caller's user declares the levels, for the error that asks for them
        (default ``target_levels=[...]``, a single target's argument).
        """
        name = str(s.name)
        declare = declare or "target_levels=[...]"
        if pd.api.types.is_datetime64_any_dtype(s) or pd.api.types.is_timedelta64_dtype(s) or \
                pd.api.types.is_complex_dtype(s):
            raise DataError(f"target column {name!r} has dtype {s.dtype}, which no shipped model synthesizes; convert "
                            f"it to a number (e.g. days since a public date) or pass a PyMC model function.")
        if _is_categorical_dtype(s):
            if isinstance(s.dtype, pd.CategoricalDtype):
                declared = list(s.dtype.categories)
            elif pd.api.types.is_bool_dtype(s):
                declared = [False, True]
            else:
                declared = None
            if levels is not None:
                declared = list(levels)
            if declared is None and _looks_numeric(s):
                example = next(str(v) for v in s if isinstance(v, str))
                raise DataError(
                    f"target column {name!r} must be numeric; it holds numbers written as text (e.g. {example!r}, "
                    f"dtype {s.dtype}): remove thousands separators and convert it with pd.to_numeric (on the command "
                    f"line --thousands ','), or, if it is categorical, declare its levels with {declare}.")
            if declared is None:
                check_numeric_text(s, name)  # mostly numbers with some text: a numeric column to clean
                raise DataError(
                    f"target column {name!r} is categorical (dtype {s.dtype}) but its levels are not declared: the "
                    f"levels that occur in the confidential data are themselves a figure of it. Declare the public "
                    f"levels with {declare} (on the command line --target-levels), or give the column a "
                    f"pandas Categorical dtype with its categories.")
            if len(declared) < 2 or len(set(map(str, declared))) != len(declared):
                raise DataError(f"the levels of target column {name!r} must be at least two distinct values; got "
                                f"{declared!r}.")
            if unit is not None:
                raise DataError(f"`unit` applies to continuous data; target column {name!r} is categorical.")
            return cls(name=name, kind="categorical", dtype=str(s.dtype), levels=tuple(declared))
        if levels is not None:
            raise DataError(f"`target_levels` are for a categorical target; column {name!r} is numeric "
                            f"({s.dtype}).")
        kind = "count" if pd.api.types.is_integer_dtype(s) else "continuous"
        if kind == "count" and unit is not None:
            raise DataError(f"`unit` applies to continuous data; target column {name!r} holds counts ({s.dtype}).")
        return cls(name=name, kind=kind, dtype=str(s.dtype), unit=unit)

    @property
    def n_levels(self) -> int | None:
        """Number of levels of a categorical column (None otherwise)."""
        return None if self.levels is None else len(self.levels)

    def default_model(self, has_covariates: bool) -> str:
        """The shipped family used when none is given."""
        return DEFAULT_MODELS[self.kind][int(bool(has_covariates))]

    def to_model(self, s: pd.Series) -> np.ndarray:
        """The column as the model's values (a unit applied, levels coded)."""
        if self.kind == "categorical":
            known = {str(v): i for i, v in enumerate(self.levels)}
            if s.isna().any():
                raise DataError(f"target column {self.name!r} has missing values; fill or drop them first.")
            vals = s.astype(str)
            unseen = sorted(set(vals) - set(known))
            if unseen:
                raise DataError(f"target column {self.name!r} has value(s) {unseen[:5]} outside its public levels "
                                f"{list(self.levels)}; declare every level with target_levels=[...].")
            return vals.map(known).to_numpy(dtype=float)
        if not pd.api.types.is_numeric_dtype(s) or pd.api.types.is_bool_dtype(s):
            raise DataError(f"target column {s.name!r} must be numeric; it has dtype {s.dtype} (convert it first, e.g. "
                            f"remove thousands separators and use pd.to_numeric).")
        x = s.to_numpy(dtype=float)
        if not np.isfinite(x).all():
            bad = int(np.flatnonzero(~np.isfinite(x))[0])
            raise DataError(f"target column {s.name!r} has missing or infinite values (first at row {bad}).")
        return x / self.unit if self.unit is not None else x

    def from_model(self, values: np.ndarray):
        """Synthetic model values as the column's values (dtype restored where the values allow it)."""
        v = np.asarray(values, dtype=float)
        if self.kind == "categorical":
            codes = np.clip(np.rint(v), 0, len(self.levels) - 1).astype(int)
            out = pd.Series(np.asarray(self.levels, dtype=object)[codes])
            if self.dtype == "category":
                return pd.Categorical(out, categories=list(self.levels))
            return out.astype(self.dtype) if self.dtype in ("bool", "boolean") else out.to_numpy(dtype=object)
        with np.errstate(over="ignore"):
            if self.unit is not None:
                v = v * self.unit
        if np.issubdtype(np.dtype(self.dtype), np.integer) and np.isfinite(v).all():
            return np.rint(v).astype(self.dtype)
        return v

    def to_dict(self) -> dict:
        """Plain-JSON contents."""
        return {"name": self.name, "kind": self.kind, "dtype": self.dtype,
                "levels": None if self.levels is None else [v if isinstance(v, (bool, int, float)) else str(v)
                                                            for v in self.levels],
                "unit": self.unit}

    @classmethod
    def from_dict(cls, d: dict) -> TargetEncoding:
        """Read :meth:`to_dict`'s output back."""
        return cls(name=d["name"], kind=d["kind"], dtype=d["dtype"],
                   levels=None if d["levels"] is None else tuple(d["levels"]), unit=d["unit"])
