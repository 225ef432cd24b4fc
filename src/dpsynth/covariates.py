"""Public covariates as a design matrix: an intercept, numeric columns, indicators of categorical levels.

:class:`CovariateDesign` records, at fit time, which covariates are categorical and their levels,
and, when the covariate rows are public, the mean and standard deviation of each numeric one: the
design centres and scales them, so that the coefficients are of order one and nearly uncorrelated
and the sampler converges whatever the covariates' units (raw ages of 18 to 80 beside indicators
slow it down, or stop it). The constants are computed from public rows only, so they cost no
privacy; they are part of the saved synthesizer. It then builds the same design for any public
frame (the fitted records, or other public covariates of synthetic records), and refuses a level it
has not seen.

A whole-table release (:class:`dpsynth.TableSynthesizer`) also uses confidential columns as
predictors of the later ones. Their encoding must not be a figure of the data: a categorical one
takes its public levels, a numeric one a public transform (``log``, ``logit``, ``log1p``) and
constants that were released under DP (the earlier column's reference, already charged) or none.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .validation import DataError

__all__ = ["CovariateDesign", "is_categorical", "public_rows", "TRANSFORMS"]

#: Public transforms of a numeric column, applied before its centring and scaling.
TRANSFORMS = {
    "identity": lambda v: v,
    "log": np.log,
    "log1p": np.log1p,
    "logit": lambda v: np.log(v) - np.log1p(-v),
}


def public_rows(data, covariates: Sequence[str]) -> pd.DataFrame:
    """The public covariates of the synthetic records a release will have, one row each, checked.

    Parameters
    ----------
    data : pandas.DataFrame
        The public rows (other columns are ignored).
    covariates : sequence of str
        The covariates the synthesizer was fitted with (none: an empty frame with ``len(data)`` rows).

    Raises
    ------
    DataError
        If ``data`` is not a DataFrame, lacks a covariate or has no rows.
    """
    if not isinstance(data, pd.DataFrame):
        raise DataError(f"`data` must be a DataFrame of the public covariates; got {type(data).__name__}.")
    missing = [c for c in covariates if c not in data.columns]
    if missing:
        raise DataError(f"`data` lacks the covariate column(s) {missing}; its columns are {list(data.columns)}.")
    if len(data) == 0:
        raise DataError("`data` has no rows: a release has one synthetic record per row of public covariates.")
    return data[list(covariates)].reset_index(drop=True) if covariates else pd.DataFrame(index=range(len(data)))


def is_categorical(s: pd.Series) -> bool:
    """Whether a column is categorical (strings, categories, booleans) rather than numeric."""
    return not pd.api.types.is_numeric_dtype(s) or pd.api.types.is_bool_dtype(s)


def _levels(s: pd.Series) -> list[str]:
    if s.isna().any():
        raise DataError(f"covariate {s.name!r} has missing values; fill or drop them first.")
    return sorted({str(v) for v in pd.unique(s.to_numpy())})


@dataclass(frozen=True)
class CovariateDesign:
    """The encoding of public covariates into a design matrix.

    Attributes
    ----------
    columns : tuple of str
        The covariates, in order.
    levels : dict
        Categorical covariate -> its levels (sorted strings); the first is the reference.
    scaling : dict
        Numeric covariate -> ``(centre, scale)``: the design holds ``(v - centre) / scale``.
    transforms : dict
        Numeric covariate -> the name of a public transform (:data:`TRANSFORMS`) applied first.
    """

    columns: tuple
    levels: dict = field(default_factory=dict)
    scaling: dict = field(default_factory=dict)
    transforms: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        bad = {c: f for c, f in self.transforms.items() if f not in TRANSFORMS}
        if bad:
            raise DataError(f"unknown covariate transform(s) {bad}; choose among {list(TRANSFORMS)}.")

    @classmethod
    def from_frame(cls, public: pd.DataFrame, columns: Sequence[str], *, standardize: bool = False) -> CovariateDesign:
        """Record the categorical covariates of ``public`` and their levels (and, if asked, the numeric ones' scaling).

        ``standardize=True`` centres each numeric covariate at its mean and scales it by its
        standard deviation (1 where it is constant): only for public rows.
        """
        levels = {c: _levels(public[c]) for c in columns if is_categorical(public[c])}
        scaling = {}
        if standardize:
            for c in columns:
                if c not in levels:
                    v = public[c].to_numpy(dtype=float)
                    sd = float(np.std(v))
                    scaling[c] = (float(np.mean(v)), sd if np.isfinite(sd) and sd > 0 else 1.0)
        return cls(columns=tuple(columns), levels=levels, scaling=scaling)

    @property
    def n_columns(self) -> int:
        """Columns of the design matrix (intercept included)."""
        return 1 + sum(len(self.levels[c]) - 1 if c in self.levels else 1 for c in self.columns)

    def matrix(self, public: pd.DataFrame) -> np.ndarray:
        """Design matrix: intercept, numeric columns, indicators of every level but the first.

        Raises
        ------
        DataError
            For a missing column, a missing value or a level not seen at fit time.
        """
        cols = [np.ones(len(public))]
        for c in self.columns:
            if c not in public.columns:
                raise DataError(f"covariate column {c!r} is missing; its columns are {list(public.columns)}.")
            s = public[c]
            if c in self.levels:
                # each distinct value once (a million rows hold a handful of levels), then the codes
                codes, uniq = pd.factorize(s, use_na_sentinel=False)
                uniq = [str(u) for u in uniq]
                unseen = sorted(set(uniq) - set(self.levels[c]))
                if s.isna().any() or unseen:
                    raise DataError(
                        f"covariate {c!r} has level(s) {unseen or ['<missing>']} not seen at fit time "
                        f"(known levels: {self.levels[c]}); the model has no coefficient for them."
                    )
                cols += [(codes == uniq.index(lev)).astype(float) if lev in uniq else np.zeros(len(public))
                         for lev in self.levels[c][1:]]
            else:
                if not pd.api.types.is_numeric_dtype(s):
                    raise DataError(f"covariate {c!r} was numeric at fit time but has dtype {s.dtype} now.")
                v = s.to_numpy(dtype=float)
                if not np.isfinite(v).all():
                    raise DataError(f"covariate {c!r} has missing or infinite values.")
                if c in self.transforms:
                    with np.errstate(divide="ignore", invalid="ignore"):
                        v = TRANSFORMS[self.transforms[c]](v)
                    if not np.isfinite(v).all():
                        raise DataError(
                            f"covariate {c!r} has values outside the domain of its {self.transforms[c]} transform."
                        )
                if c in self.scaling:
                    centre, scale = self.scaling[c]
                    v = (v - centre) / scale
                cols.append(v)
        return np.column_stack(cols)
