"""Noise-aware: a Bayesian synthesizer of one column whose likelihood is the noise model of its DP counts.

Registry entry ``"noise_aware"``, display name ``"Noise-aware"``. In the manner of NAPSU-MQ (Räisä,
Jälkö, Kaski and Honkela 2023, "Noise-aware statistical inference with differentially private
synthetic data", AISTATS), which releases noisy marginal queries and fits a Bayesian model whose
likelihood is the distribution of the *noisy* queries given the parameters, and of Bernstein and
Sheldon (2018, "Differentially private Bayesian inference for exponential families", NeurIPS), who
model the noisy sufficient statistics with their sampling and noise distributions together.

Method
------
1. **Public bins of the target** (:class:`dpsynth.bins.PublicBins`, :func:`binning`). A continuous
   target has a zero-width point bin at each public bound (a spending column's exact zeros, a value
   clamped to a bound: a mass of its own, synthesized exactly) and ``bins`` bins between them, spaced
   on the scale the bounds choose (log when ``lower > 0`` and ``upper / lower >= 100``, ``log(1 + x)``
   when ``lower >= 0`` and ``upper >= 100``, linear otherwise; ``scale`` overrides); a count has one
   bin per integer from ``lower`` (default 0) to ``upper`` while there are at most :data:`MAX_BINS`
   of them (a heap keeps its value); a categorical target has one bin per public level (``levels``,
   filled in by the :class:`~dpsynth.Synthesizer`). Values outside the bounds are clamped to them
   (as OpenDP and SmartNoise do).
2. **Public cells.** Each record's cell is the combination of the levels of its categorical public
   covariates (by default every categorical covariate; ``cells`` names them) and of intervals of
   numeric ones cut at public edges (``cell_edges``). Every combination of levels is a cell, whether
   or not records fall in it, so the table's shape depends on public levels only: the levels of a
   pandas ``Categorical`` covariate are its declared categories; those of another column are the
   values it holds, public when its rows are (one record replaced); with one record removed, declare
   them (a ``Categorical``) so that which levels occur is not read from the records. At most
   ``max_cells`` cells.
3. **DP measurements**, the only access to the confidential values: (a) the 1-way histogram of the
   bins and (b) the cell x bin table, each count with Laplace noise. ``marginal_share`` of the
   mechanism's ``eps`` goes to (a), the rest to (b) (default 0.5 with cells; without cells only (a)
   is measured, with the whole ``eps``). Research mode draws the noise from seeded numpy streams,
   release mode from OpenDP's secure Laplace sampler (:func:`dpsynth.mechanisms.histogram.laplace_noise`).
4. **The noise-aware posterior** (PyMC, sampled with nutpie). Bin probabilities on the log-linear
   (softmax) scale, as NAPSU-MQ parametrises its exponential family: the marginal's
   ``eta_k ~ Normal(0, 3)``, ``p0 = softmax(eta)``; each cell's ``gamma_ck ~ Normal(0, cell_scale)``,
   ``p_c = softmax(eta + gamma_c)`` (a cell x bin interaction shrunk towards the shared marginal).
   ``cell_scale`` is public and fixed: a learned scale (the concentration ``kappa`` of
   ``p_c ~ Dirichlet(kappa p0)``, or the sd of ``gamma``) made a funnel that the sampler crossed
   badly, and a Dirichlet's concentrations far below 1 in the empty bins mixed worse still; a
   ``Dirichlet(1)`` marginal adds one pseudo-record to every bin, which costs most where the public
   bounds are much wider than the data (many empty bins). Measured on the sampler's R-hat and ESS
   and on the synthetic marginal's distance to the data.
   The likelihood of the noisy counts is NAPSU-MQ's central-limit approximation: a noisy table count
   is Normal with mean ``n_c p_ck`` and variance ``n_c p_ck (1 - p_ck) + 2 b_2^2`` (multinomial
   sampling variance plus the Laplace noise's), a noisy 1-way count Normal with mean
   ``sum_c n_c p_ck`` and variance ``sum_c n_c p_ck (1 - p_ck) + 2 b_1^2``. The cell sizes ``n_c``
   are public with one record replaced (the covariates' rows are); with one record removed they are
   the noisy table's row sums, at least 1 (post-processing). R-hat, bulk ESS and divergences of the
   released probabilities are checked, and a failed sampler is run again with twice the draws (at most
   :data:`POSTERIOR_RETRIES` times: post-processing of the DP counts, so the retries read nothing more).
5. **The release** (:class:`NoiseAwareRelease`): the public bins and cells and ``release_draws``
   posterior draws of every ``p_c``. A synthetic data set is made in one of two ways
   (``synthesis``), both post-processing of the same release:

   * ``"draw"``: it takes *one* posterior draw at random and a bin for each record from its cell's
     probabilities: the spread between synthetic data sets is the posterior's, as multiple
     imputation needs (``m`` sets give valid combined intervals, :mod:`dpsynth.combining`);
   * ``"mean"``: the posterior mean of each cell's probabilities, the cell's records spread over the
     bins by randomized rounding of their expected counts: the closest single file (a draw adds
     spread of the order of the sampling error, a second time), but sets made this way do not vary
     as the posterior does, so they are not for combining rules.

   The default is ``"mean"`` for one file and ``"draw"`` when the synthesizer plans several
   (``releases > 1``). Then a value within the bin (uniform on the bin's scale, the integer or level
   itself, the bound of a point bin).

Privacy argument
----------------
The mechanism's ``eps`` is stated, as everywhere in the compendium, with one record removed. Removing
one record changes one count of the 1-way histogram by 1 and one count of the table by 1 (L1
sensitivity 1 each); with noise of scale ``b_1 = 1 / eps_1`` and ``b_2 = 1 / eps_2``
(``eps_1 = marginal_share eps``, ``eps_2 = eps - eps_1``) the two Laplace measurements are
``eps_1``- and ``eps_2``-DP and compose sequentially to ``eps_1 + eps_2 = eps``. Replacing one record
moves one unit between two counts of each (L1 sensitivity 2; also when the record changes cell):
``2 eps``. The bins, cells and their number depend on public settings and levels only. Everything
after the noisy counts (the cell sizes under removal, the posterior, its draws, every synthetic
data set drawn from the release) is post-processing: one fit is one release of ``eps``, and any
number of synthetic data sets from it cost nothing more.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..bins import MAX_INTEGER_BINS, PublicBins, default_bins
from ..seeds import SeedLike, int_seed
from ..validation import DataError, _is_number, check_finite, check_names, one_of, optional, positive_count
from .contract import REQUIRED, MechanismResult, MechanismSpec, Param, RunContext, _raised_accept
from .histogram import laplace_noise

__all__ = [
    "KEY",
    "SCALES",
    "MAX_BINS",
    "MAX_CELLS",
    "MARGINAL_PRIOR_SD",
    "CellColumn",
    "NoisyCounts",
    "NoiseAwareModel",
    "NoiseAwareRelease",
    "SYNTHESES",
    "rounded_bins",
    "auto_bins",
    "calibrated_values",
    "binning",
    "cell_columns",
    "cell_index",
    "true_counts",
    "noise_scales",
    "measure",
    "noise_aware_model",
    "MECHANISM",
    "MECHANISMS",
]

#: Registry key.
KEY = "noise_aware"
#: How a synthetic data set is made from the release: one posterior draw, or the posterior mean.
SYNTHESES = ("draw", "mean")
#: Binnings of the target: log-spaced, spaced on log(1 + x), evenly spaced, one bin per integer.
SCALES = ("log", "log1p", "linear", "integer")
#: Largest number of bins of the target (the model has one probability per cell and bin).
MAX_BINS = MAX_INTEGER_BINS
#: Bins of a continuous target when no number of records is known to choose them from.
DEFAULT_BINS = 30
#: The range of the automatic number of bins (:func:`auto_bins`).
MIN_AUTO_BINS, MAX_AUTO_BINS = 8, 100
#: Largest ``max_cells`` accepted.
MAX_CELLS = 1024
#: Prior standard deviation of the marginal's log-linear parameters ``eta_k``.
MARGINAL_PRIOR_SD = 3.0
#: Smallest eps of one measurement (below it the noise scale is astronomically large).
MIN_EPS = 1e-9
#: Largest number of posterior draws a release keeps.
MAX_RELEASE_DRAWS = 10_000


# --------------------------------------------------------------------------------------------
# parameters
# --------------------------------------------------------------------------------------------


def _is_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _int_in(value: Any, name: str, low: int, high: int, what: str) -> int:
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if not _is_int(value) or not low <= int(value) <= high:
        raise DataError(f"`{name}` must be an integer in [{low}, {high:,}] ({what}); got {value!r}.")
    return int(value)


def _check_bins(value: Any, name: str) -> int:
    return _int_in(value, name, 2, MAX_BINS, "the number of public bins of the target")


def _check_max_cells(value: Any, name: str) -> int:
    return _int_in(value, name, 1, MAX_CELLS, "the largest number of cells accepted")


def _check_release_draws(value: Any, name: str) -> int:
    return _int_in(value, name, 1, MAX_RELEASE_DRAWS, "posterior draws kept in the release")


def _check_share(value: Any, name: str) -> float:
    if not _is_number(value) or not 0.0 <= float(value) <= 1.0:
        raise DataError(f"`{name}` must be a number in [0, 1] (the share of eps spent on the 1-way histogram; the "
                        f"rest measures the cell x bin table); got {value!r}.")
    return float(value)


def _check_cell_scale(value: Any, name: str) -> float:
    if not _is_number(value) or not (math.isfinite(float(value)) and float(value) > 0):
        raise DataError(f"`{name}` must be a finite number > 0 (the prior sd of a cell's log-probabilities around "
                        f"the marginal's, e.g. 1.0); got {value!r}.")
    return float(value)


def _check_cell_edges(value: Any, name: str) -> dict:
    if not isinstance(value, Mapping):
        raise DataError(f"`{name}` must be a dict: numeric covariate -> its public cut points (sorted numbers), e.g. "
                        f"{{'age': [30, 50]}}; got {value!r}.")
    out = {}
    for col, edges in value.items():
        if not isinstance(col, str):
            raise DataError(f"`{name}` must be keyed by column names (strings); got {col!r}.")
        try:
            e = np.asarray(edges, dtype=float)
        except (TypeError, ValueError):
            raise DataError(f"`{name}[{col!r}]` must be a list of numbers (public cut points); got "
                            f"{edges!r}.") from None
        if e.ndim != 1 or e.size == 0 or not np.isfinite(e).all() or (np.diff(e) <= 0).any():
            raise DataError(f"`{name}[{col!r}]` must be one or more finite, strictly increasing public cut points; "
                            f"got {edges!r}.")
        out[col] = tuple(float(v) for v in e)
    return out


#: The mechanism's parameters.
PARAMS = {
    "lower": Param(None, optional(check_finite), "public lower bound of the target, never from the data (required "
                   "for a continuous target; default 0 with scale 'integer')", in_data_unit=True, fill="levels_lower"),
    "upper": Param(REQUIRED, check_finite, "public upper bound of the target, never from the data", in_data_unit=True,
                   fill="levels_upper"),
    "bins": Param(None, optional(_check_bins), "number of public bins of a continuous target (log-spaced with scale "
                  "'log'); default: from the public or DP number of records n and the 1-way measurement's eps_1, "
                  f"(n eps_1 / 2)^(2/3) within [{MIN_AUTO_BINS}, {MAX_AUTO_BINS}] (where the noise's and the bins' "
                  f"errors of the ECDF balance), {DEFAULT_BINS} without n", cli="str"),
    "scale": Param(None, optional(one_of(*SCALES)), "binning: by default from the public bounds ('log' when lower > 0 "
                   "and upper / lower >= 100, 'log1p' when lower >= 0 and upper >= 100, else 'linear'); 'log', "
                   "'log1p', 'linear', or "
                   "'integer' (one bin per integer: a count)", cli="str"),
    "kind": Param(None, optional(one_of("continuous", "count", "categorical")), "the target's kind (filled in by the "
                  "Synthesizer): a count's bins default to one per integer (scale 'integer') when at most "
                  f"{MAX_BINS} integers lie within its bounds, else to evenly spaced ones", cli=None,
                  fill="target_kind"),
    "levels": Param(None, optional(positive_count), "number of public levels of a categorical target (one bin each; "
                    "filled in by the Synthesizer)", cli=None, fill="levels_bins"),
    "cells": Param(None, optional(check_names), "public covariates whose levels define the cells (default: every "
                   "categorical covariate, and those cut by cell_edges)", cli="strs"),
    "cell_edges": Param(None, optional(_check_cell_edges), "numeric covariate -> public cut points making it a cell "
                        "column", cli=None),
    "max_cells": Param(32, _check_max_cells, "largest number of cells accepted", cli="int"),
    "confidential_cells": Param(None, optional(check_names), "covariates whose values are confidential (a whole "
                                "table's earlier columns, filled in by the Synthesizer): cells made of them take "
                                "their sizes from the noisy counts, never from the rows", cli=None,
                                fill="confidential_covariates"),
    "marginal_share": Param(None, optional(_check_share), "share of eps on the 1-way histogram, the rest on the cell x "
                            "bin table (default 0.5 with cells, 1 without)", cli="float"),
    "cell_scale": Param(1.0, _check_cell_scale, "prior sd of a cell's log-probabilities around the marginal's",
                        cli="float"),
    "release_draws": Param(200, _check_release_draws, "posterior draws kept in the release (each synthetic data set "
                           "uses one)", cli="int"),
    "synthesis": Param(None, optional(one_of(*SYNTHESES)), "how a synthetic data set is made from the release: "
                       "'draw' (one posterior draw per set: m sets give valid combined intervals) or 'mean' (the "
                       "posterior mean, counts rounded per cell: the closest single file); default 'mean' for one "
                       "file, 'draw' when several are planned (releases > 1)", cli="str", fill="synthesis"),
    "mode": Param("release", one_of("release", "research"), "'release': OpenDP's Laplace noise (unseeded); "
                  "'research': seeded numpy noise, reproducible, not for a release", cli="str"),
}


# --------------------------------------------------------------------------------------------
# public bins of the target
# --------------------------------------------------------------------------------------------


def auto_bins(n: float, eps_1: float) -> int:
    """Bins of a continuous target for ``n`` records (public or DP) and a 1-way measurement at ``eps_1``.

    The ECDF error of a Laplace-noised histogram of ``k`` bins grows as ``sqrt(k) / (n eps_1)`` (the
    noise accumulates along the bins), the error of spreading values uniformly within bins falls as
    ``1 / (2k)``; they balance at ``k = (n eps_1 / 2)^(2/3)``, kept within
    [:data:`MIN_AUTO_BINS`, :data:`MAX_AUTO_BINS`].
    """
    k = (max(float(n), 1.0) * float(eps_1) / 2.0) ** (2.0 / 3.0)
    return int(min(MAX_AUTO_BINS, max(MIN_AUTO_BINS, round(k))))


def binning(params: Mapping) -> PublicBins:
    """The public bins from the parameters alone (never from the data): :class:`dpsynth.bins.PublicBins`.

    A categorical target has one bin per public level code ``0, ..., K - 1``. A count (``kind="count"``, or
    ``scale="integer"``) has one bin per integer between its bounds (``lower`` defaults to 0) while there are
    at most :data:`MAX_BINS` of them, else integer-aligned bins with a point bin at each bound. A continuous
    target has a zero-width point bin at each public bound (a value exactly at a bound, such as a spending
    column's zeros or a clamped value, is a mass of its own) and ``bins`` bins between them on the scale the
    bounds choose (:func:`dpsynth.bins.default_bins`: log when ``lower > 0`` and ``upper / lower >= 100``,
    ``log(1 + x)`` when ``lower >= 0`` and ``upper >= 100``, linear otherwise), or on ``scale``.

    Raises
    ------
    DataError
        For a missing or inconsistent bound, a log scale with ``lower <= 0``, or too many bins; the
        message names the parameter.
    """
    levels, scale = params.get("levels"), params.get("scale")
    if levels is not None:  # a categorical target: one bin per public level code 0..K-1
        if scale not in (None, "integer"):
            raise DataError(f"a categorical target has one bin per public level; leave `scale` unset (got "
                            f"{scale!r}).")
        k = _int_in(levels, "levels", 2, MAX_BINS, "the number of public levels of a categorical target")
        return PublicBins(lower=0.0, upper=float(k - 1), edges=tuple(np.arange(k + 1) - 0.5), scale="integer",
                          point_lower=False, point_upper=False)
    upper, lower = params.get("upper"), params.get("lower")
    if upper is None:
        raise DataError(f"the {KEY} mechanism needs `upper`: {PARAMS['upper'].help}.")
    hi = float(upper)
    if scale == "integer" or (scale is None and params.get("kind") == "count"):
        lo = 0.0 if lower is None else float(lower)
        if math.floor(hi) <= math.ceil(lo):
            raise DataError(f"integer bins need at least two integers in [`lower`, `upper`] = [{lo:g}, {hi:g}]; "
                            f"widen the public bounds.")
        wide = math.floor(hi) - math.ceil(lo) + 1 > MAX_BINS  # one bin per integer while they are few (heaps kept)
        return default_bins("count", lo, hi, n_bins=int(params["bins"]) if wide and params.get("bins") else None)
    if lower is None:
        raise DataError(f"the {KEY} mechanism needs `lower` for a continuous target: a public lower bound, from "
                        f"public knowledge (never from the data); e.g. mechanism_params={{'lower': 1.0, 'upper': "
                        f"{hi:g}}}.")
    lo = float(lower)
    if not hi > lo:
        raise DataError(f"the public bounds must satisfy `upper` > `lower`; got lower={lo!r}, upper={hi!r}.")
    if scale == "log" and lo <= 0:
        raise DataError(f"scale='log' needs `lower` > 0 (log-spaced bins); got lower={lo!r}. Use a positive public "
                        f"lower bound, or scale='log1p' or 'linear'.")
    k = _check_bins(params.get("bins") or DEFAULT_BINS, "bins")
    return default_bins("continuous", lo, hi, n_bins=k, scale=scale)


def _check_data(x: np.ndarray, params: dict) -> None:
    """The bins from the public settings, and non-integers in integer bins refused (a count's form); values outside the
    public bounds are not refused: :func:`_run` clamps them."""
    b = binning(params)
    x = np.asarray(x, dtype=float)
    if params.get("levels") is not None:
        return  # level codes 0..K-1, checked by the target's encoding
    if b.scale == "integer":
        frac = x != np.rint(x)
        if frac.any():
            raise DataError(f"scale='integer' bins a count, but {int(frac.sum())} value(s) of the target are not "
                            f"integers (first at row {int(np.flatnonzero(frac)[0])}); use scale='log' or 'linear'.")


# --------------------------------------------------------------------------------------------
# public cells
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CellColumn:
    """One public covariate that defines cells: by its levels, or by intervals between public cut points.

    Attributes
    ----------
    name : str
        The covariate.
    levels : tuple of str or None
        Its public levels (compared as strings), for a categorical covariate.
    edges : tuple of float or None
        Public cut points of a numeric covariate: intervals ``(-inf, e_1), [e_1, e_2), ..., [e_m, inf)``.
    """

    name: str
    levels: tuple | None = None
    edges: tuple | None = None

    @property
    def size(self) -> int:
        """Number of cells along this column."""
        return len(self.levels) if self.levels is not None else len(self.edges) + 1

    def codes(self, column) -> np.ndarray:
        """Each row's position along this column (-1 for a level the cells were not made with)."""
        if self.levels is not None:
            pos = {v: i for i, v in enumerate(self.levels)}
            return np.array([pos.get(str(v), -1) for v in column.tolist()], dtype=int)
        v = np.asarray(column, dtype=float)
        if not np.isfinite(v).all():
            raise DataError(f"covariate {self.name!r} has missing or infinite values; cells need a value in every row.")
        return np.searchsorted(np.asarray(self.edges), v, side="right").astype(int)

    def to_dict(self) -> dict:
        """Plain-JSON contents."""
        return {"name": self.name, "levels": None if self.levels is None else list(self.levels),
                "edges": None if self.edges is None else list(self.edges)}

    @classmethod
    def from_dict(cls, d: Mapping) -> CellColumn:
        """Read :meth:`to_dict`'s output back."""
        return cls(name=str(d["name"]), levels=None if d["levels"] is None else tuple(str(v) for v in d["levels"]),
                   edges=None if d["edges"] is None else tuple(float(v) for v in d["edges"]))


def _is_categorical(column) -> bool:
    import pandas as pd

    return not pd.api.types.is_numeric_dtype(column) or pd.api.types.is_bool_dtype(column)


def _levels(column) -> tuple:
    """A categorical covariate's levels: its declared categories, else the sorted distinct values (as strings)."""
    import pandas as pd

    if isinstance(column.dtype, pd.CategoricalDtype):
        return tuple(str(c) for c in column.cat.categories)
    return tuple(sorted({str(v) for v in column.tolist()}))


def cell_columns(public, cells: Sequence[str] | None = None, cell_edges: Mapping | None = None,
                 max_cells: int = 32) -> tuple[CellColumn, ...]:
    """The public columns that define the cells.

    Parameters
    ----------
    public : pandas.DataFrame or None
        The public covariates.
    cells : sequence of str, optional
        The cell columns; default every categorical covariate and every column of ``cell_edges``.
    cell_edges : mapping, optional
        Numeric covariate -> public cut points.
    max_cells : int
        The largest number of cells (the product of the columns' sizes) accepted.
    """
    edges = dict(cell_edges or {})
    columns = [] if public is None else list(public.columns)
    unknown = [c for c in [*(cells or ()), *edges] if c not in columns]
    if unknown:
        raise DataError(f"cell column(s) {unknown} (`cells` / `cell_edges`) are not among the public covariates "
                        f"{columns}.")
    if cells is None:
        names = [c for c in columns if _is_categorical(public[c]) or c in edges]
    else:
        names = list(dict.fromkeys(cells))
        left = [c for c in edges if c not in names]
        if left:
            raise DataError(f"`cell_edges` cuts {left}, which `cells` does not list; add them to `cells` or leave "
                            f"`cells` unset.")
    out = []
    for c in names:
        if c in edges:
            out.append(CellColumn(name=c, edges=edges[c]))
        elif _is_categorical(public[c]):
            out.append(CellColumn(name=c, levels=_levels(public[c])))
        else:
            raise DataError(f"cell column {c!r} is numeric: give its public cut points in `cell_edges` (e.g. "
                            f"cell_edges={{{c!r}: [30, 50]}}), or drop it from `cells`.")
    n = math.prod(col.size for col in out)
    if n > max_cells:
        sizes = " x ".join(f"{col.size} ({col.name})" for col in out)
        raise DataError(f"the cells {sizes} make {n:,} cells, more than `max_cells` = {max_cells}; use fewer `cells` "
                        f"or coarser `cell_edges`, or raise `max_cells` (each cell adds a probability per bin to "
                        f"the model, and the table's noise is spread over more counts).")
    return tuple(out)


def cell_index(columns: Sequence[CellColumn], public) -> np.ndarray:
    """Each row's cell, ``0 .. C - 1`` in row-major order of ``columns`` (-1: a level not among the cells')."""
    n = 0 if public is None else len(public)
    if not columns:
        return np.zeros(n, dtype=int)
    missing = [c.name for c in columns if public is None or c.name not in public.columns]
    if missing:
        raise DataError(f"the release's cells need the public covariate(s) {missing}; give a frame that holds them.")
    codes = np.stack([c.codes(public[c.name]) for c in columns])
    bad = (codes < 0).any(axis=0)
    flat = np.ravel_multi_index(np.where(codes < 0, 0, codes), tuple(c.size for c in columns))
    return np.where(bad, -1, flat).astype(int)


# --------------------------------------------------------------------------------------------
# the DP measurements
# --------------------------------------------------------------------------------------------


def true_counts(bins: np.ndarray, cells: np.ndarray, n_bins: int, n_cells: int) -> tuple[np.ndarray, np.ndarray]:
    """The confidential counts: the 1-way histogram ``(K,)`` and the cell x bin table ``(C, K)``."""
    table = np.zeros((n_cells, n_bins))
    np.add.at(table, (np.asarray(cells, dtype=int), np.asarray(bins, dtype=int)), 1.0)
    return table.sum(axis=0), table


def noise_scales(eps: float, share: float, n_cells: int) -> tuple[float | None, float | None]:
    """Laplace scales ``(b_1, b_2)`` of the 1-way histogram and the table (None: not measured).

    Calibrated with one record removed (L1 sensitivity 1 each): ``b_1 = 1 / (share eps)``,
    ``b_2 = 1 / ((1 - share) eps)``; without cells only the 1-way histogram, ``b_1 = 1 / eps``.
    """
    e = float(eps)
    parts = (e, 0.0) if n_cells == 1 else (share * e, (1.0 - share) * e)
    out = []
    for part in parts:
        if part == 0.0:
            out.append(None)
        elif part < MIN_EPS:
            raise DataError(f"a measurement's eps {part:.3g} is below {MIN_EPS:g} (its noise would be astronomically "
                            f"large); raise eps or move `marginal_share` away from 0 and 1.")
        else:
            out.append(1.0 / part)
    return out[0], out[1]


@dataclass(frozen=True)
class NoisyCounts:
    """What the mechanism measures: the noisy counts and their Laplace scales.

    Attributes
    ----------
    marginal : numpy.ndarray or None
        Noisy 1-way histogram ``(K,)``.
    table : numpy.ndarray or None
        Noisy cell x bin table ``(C, K)``.
    scale_marginal, scale_table : float or None
        Their Laplace scales.
    """

    marginal: np.ndarray | None
    table: np.ndarray | None
    scale_marginal: float | None
    scale_table: float | None

    @property
    def eps_remove(self) -> float:
        """The composed eps with one record removed: ``1 / b_1 + 1 / b_2`` (L1 sensitivity 1 each)."""
        return float(sum(1.0 / b for b in (self.scale_marginal, self.scale_table) if b is not None))

    @property
    def eps_replace(self) -> float:
        """The composed eps with one record replaced: ``2 / b_1 + 2 / b_2`` (L1 sensitivity 2 each)."""
        return 2.0 * self.eps_remove


def measure(bins: np.ndarray, cells: np.ndarray, n_bins: int, n_cells: int, eps: float, share: float, *,
            mode: str = "research", seeds: tuple[SeedLike, SeedLike] = (None, None)) -> NoisyCounts:
    """The DP measurements: Laplace noise on every count of the 1-way histogram and of the cell x bin table.

    Parameters
    ----------
    bins, cells : numpy.ndarray
        Each record's bin and cell.
    n_bins, n_cells : int
        ``K`` and ``C`` (public).
    eps : float
        The budget with one record removed, split by ``share`` (:func:`noise_scales`).
    share : float
        Share of ``eps`` on the 1-way histogram.
    mode : {"research", "release"}
        Seeded numpy noise, or OpenDP's secure noise (unseeded).
    seeds : tuple
        Seeds of the two measurements' noise (research mode only).
    """
    b1, b2 = noise_scales(eps, share, n_cells)
    marg, table = true_counts(bins, cells, n_bins, n_cells)
    s1, s2 = seeds if mode == "research" else (None, None)
    y1 = None if b1 is None else marg + laplace_noise(n_bins, b1, mode=mode, seed=s1)
    y2 = None if b2 is None else table + laplace_noise(n_cells * n_bins, b2, mode=mode, seed=s2).reshape(table.shape)
    return NoisyCounts(marginal=y1, table=y2, scale_marginal=b1, scale_table=b2)


# --------------------------------------------------------------------------------------------
# the noise-aware model
# --------------------------------------------------------------------------------------------


class NoiseAwareModel:
    """The noise-aware posterior of ``C`` cells' probabilities over ``K`` bins, compiled once with nutpie.

    Every refit passes new noisy counts, cell sizes, noise variances and prior scale through
    ``pm.Data`` (nutpie's ``with_data``): no compilation after the first.
    """

    def __init__(self, n_cells: int, n_bins: int) -> None:
        import nutpie

        self.n_cells, self.n_bins = int(n_cells), int(n_bins)
        self.model = self._build()
        self._nutpie = nutpie.compile_pymc_model(self.model)
        #: The quantities the release is made of, whose convergence is checked.
        self.checked = ["p0"] + (["p"] if self.n_cells > 1 else [])

    def _build(self):
        import pymc as pm
        import pytensor.tensor as pt

        C, K = self.n_cells, self.n_bins
        with pm.Model() as model:
            y1 = pm.Data("marginal", np.zeros(K))
            v1 = pm.Data("marginal_noise_var", 1.0)
            w1 = pm.Data("use_marginal", 1.0)
            sizes = pm.Data("cell_sizes", np.ones(C))
            eta = pm.Normal("eta", 0.0, MARGINAL_PRIOR_SD, shape=K)
            p0 = pm.Deterministic("p0", pt.special.softmax(eta))
            if C == 1:
                p = p0[None, :]
            else:
                sd = pm.Data("cell_scale", 1.0)
                gamma = pm.Normal("gamma", 0.0, sd, shape=(C, K))
                p = pm.Deterministic("p", pt.special.softmax(eta[None, :] + gamma, axis=1))
            mean = sizes[:, None] * p
            var = mean * (1.0 - p)  # multinomial sampling variance of each count
            lp = w1 * pm.logp(pm.Normal.dist(mean.sum(axis=0), pt.sqrt(var.sum(axis=0) + v1)), y1).sum()
            if C > 1:
                y2 = pm.Data("table", np.zeros((C, K)))
                v2 = pm.Data("table_noise_var", 1.0)
                w2 = pm.Data("use_table", 1.0)
                lp = lp + w2 * pm.logp(pm.Normal.dist(mean, pt.sqrt(var + v2)), y2).sum()
            pm.Potential("noisy_counts", lp)
        return model

    def data(self, counts: NoisyCounts, cell_sizes: np.ndarray, cell_scale: float) -> dict:
        """The ``pm.Data`` values of one fit (an unmeasured part gets weight 0 and a placeholder)."""
        K, C = self.n_bins, self.n_cells
        out = {
            "marginal": np.zeros(K) if counts.marginal is None else np.asarray(counts.marginal, dtype=float),
            "marginal_noise_var": np.asarray(1.0 if counts.scale_marginal is None
                                             else 2.0 * counts.scale_marginal ** 2),
            "use_marginal": np.asarray(0.0 if counts.marginal is None else 1.0),
            "cell_sizes": np.asarray(cell_sizes, dtype=float).reshape(C),
        }
        if C > 1:
            out.update({
                "table": np.zeros((C, K)) if counts.table is None else np.asarray(counts.table, dtype=float),
                "table_noise_var": np.asarray(1.0 if counts.scale_table is None else 2.0 * counts.scale_table ** 2),
                "use_table": np.asarray(0.0 if counts.table is None else 1.0),
                "cell_scale": np.asarray(float(cell_scale)),
            })
        return out

    def sample(self, data: Mapping, sampler, seed: SeedLike):
        """Sample the posterior: pooled draws ``{name: (S, ...)}`` and the :class:`Diagnostics` of :attr:`checked`."""
        import nutpie
        from threadpoolctl import threadpool_limits

        from ..fitting import _ArrowTrace, _diagnostics, _raw_posterior
        from ..mcmc_settings import default_cores

        cfg = sampler
        compiled = self._nutpie.with_data(**dict(data))
        cores = cfg.cores or min(cfg.chains, default_cores())
        with threadpool_limits(limits=1, user_api="blas"):  # one BLAS thread per chain, as the model fits
            run = nutpie.sample(
                compiled, draws=cfg.draws, tune=cfg.tune, chains=cfg.chains, cores=cores, seed=int_seed(seed),
                progress_bar=bool(cfg.progress), target_accept=float(cfg.target_accept),
                low_rank_modified_mass_matrix=cfg.mass_matrix == "low_rank", return_raw_trace=True, blocking=False,
            )
            try:
                raw = run.wait()
            except BaseException:
                run.cancel()
                raise
        posterior, diverging = _raw_posterior(_ArrowTrace(*raw.get_arrow_trace()))
        diag = _diagnostics(posterior, diverging, self.checked, cfg)
        draws = {k: v.reshape(-1, *v.shape[2:]) for k, v in posterior.items() if k in ("p0", "p")}
        if "p" not in draws:
            draws["p"] = draws["p0"][:, None, :]
        return draws, diag


_MODELS: dict[tuple[int, int], NoiseAwareModel] = {}


def noise_aware_model(n_cells: int, n_bins: int) -> NoiseAwareModel:
    """This process's compiled model for ``C`` cells and ``K`` bins (compiled on first use)."""
    key = (int(n_cells), int(n_bins))
    if key not in _MODELS:
        _MODELS[key] = NoiseAwareModel(*key)
    return _MODELS[key]


# --------------------------------------------------------------------------------------------
# the release
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class NoiseAwareRelease:
    """What the noise-aware mechanism releases: public bins and cells, and posterior draws of every cell's
    bin probabilities.

    Attributes
    ----------
    binning : PublicBins
        The public bins of the target.
    cells : tuple of CellColumn
        The public columns defining the cells (empty: one cell).
    probs : numpy.ndarray
        Posterior draws of each cell's bin probabilities, ``(S, C, K)``.
    marginal : numpy.ndarray
        Posterior draws of the shared marginal ``p0 = softmax(eta)``, ``(S, K)``: the centre of a cell
        the release was not made with.
    cell_scale : float
        The prior sd of a cell's log-probabilities around ``eta`` (a new cell is drawn with it).
    cell_sizes : numpy.ndarray
        The ``n_c`` the model used: public (one record replaced) or the noisy table's row sums.
    scale_marginal, scale_table : float or None
        Laplace scales of the two measurements (None: not measured).
    mode : str
        ``"release"`` (OpenDP's noise) or ``"research"`` (seeded numpy noise, not for a release).
    synthesis : str
        ``"draw"`` (each synthetic set from one posterior draw) or ``"mean"`` (from the posterior mean,
        counts rounded per cell).
    """

    binning: PublicBins
    cells: tuple
    probs: np.ndarray
    marginal: np.ndarray
    cell_scale: float
    cell_sizes: np.ndarray
    scale_marginal: float | None
    scale_table: float | None
    mode: str
    synthesis: str = "draw"

    @property
    def n_draws(self) -> int:
        """Posterior draws held."""
        return int(self.probs.shape[0])

    @property
    def eps_remove(self) -> float:
        """The composed measurement's eps with one record removed."""
        return NoisyCounts(None, None, self.scale_marginal, self.scale_table).eps_remove

    @property
    def eps_replace(self) -> float:
        """The composed measurement's eps with one record replaced."""
        return 2.0 * self.eps_remove

    def population(self, weights: np.ndarray | None = None) -> np.ndarray:
        """Posterior draws of the population's bin probabilities, ``(S, K)``: the cells' mixed by ``weights``
        (default :attr:`cell_sizes`)."""
        w = np.asarray(self.cell_sizes if weights is None else weights, dtype=float)
        w = w / w.sum()
        return np.einsum("sck,c->sk", self.probs, w)

    def sample(self, n: int, rng: np.random.Generator, public=None) -> np.ndarray:
        """``n`` synthetic values (post-processing of the release), by :attr:`synthesis`: from ONE posterior draw
        picked at random, or from the posterior mean with each cell's counts rounded at random.

        Each row of ``public`` (the public covariates of the synthetic records) is mapped to its cell;
        a row whose level the cells were not made with gets a new cell's probabilities, drawn from the
        model's prior around the marginal of the same posterior draw (of a random draw, with ``"mean"``).
        """
        n = int(n)
        s = int(rng.integers(self.n_draws))
        mean = self.synthesis == "mean"
        probs = self.probs.mean(axis=0) if mean else self.probs[s]
        if self.cells:
            if public is None or len(public) != n:
                got = "none" if public is None else f"{len(public)} rows"
                raise DataError(f"{n} synthetic values were asked for with public covariates ({got}); the release "
                                f"draws each record in its cell of {[c.name for c in self.cells]}.")
            idx = cell_index(self.cells, public)
        else:
            idx = np.zeros(n, dtype=int)
        K = self.binning.n_bins
        k = np.empty(n, dtype=int)
        new = idx < 0
        for c in np.unique(idx[~new]):
            rows = np.flatnonzero(idx == c)
            p = _normalised(probs[c])
            k[rows] = rounded_bins(rows.size, p, rng) if mean else rng.choice(K, size=rows.size, p=p)
        if new.any():  # levels unseen at fit: a cell drawn from the prior around this draw's marginal
            keys = public.loc[new, [c.name for c in self.cells]].astype(str).agg("/".join, axis=1).to_numpy()
            for key in np.unique(keys):
                rows = np.flatnonzero(new)[keys == key]
                logits = np.log(np.maximum(self.marginal[s], 1e-300)) + self.cell_scale * rng.standard_normal(K)
                p = np.exp(logits - logits.max())
                k[rows] = rng.choice(K, size=rows.size, p=_normalised(p))
        return self.binning.values(k, rng)

    def to_dict(self) -> dict:
        """Plain-JSON contents."""
        return {"binning": self.binning.to_dict(), "cells": [c.to_dict() for c in self.cells],
                "probs": self.probs.tolist(), "marginal": self.marginal.tolist(), "cell_scale": self.cell_scale,
                "cell_sizes": self.cell_sizes.tolist(), "scale_marginal": self.scale_marginal,
                "scale_table": self.scale_table, "mode": self.mode, "synthesis": self.synthesis}

    @classmethod
    def from_dict(cls, d: Mapping) -> NoiseAwareRelease:
        """Read :meth:`to_dict`'s output back."""
        opt = (lambda v: None if v is None else float(v))
        return cls(binning=PublicBins.from_dict(d["binning"]), cells=tuple(CellColumn.from_dict(c) for c in d["cells"]),
                   probs=np.asarray(d["probs"], dtype=float), marginal=np.asarray(d["marginal"], dtype=float),
                   cell_scale=float(d["cell_scale"]), cell_sizes=np.asarray(d["cell_sizes"], dtype=float),
                   scale_marginal=opt(d["scale_marginal"]), scale_table=opt(d["scale_table"]), mode=str(d["mode"]),
                   synthesis=str(d.get("synthesis", "draw")))


def calibrated_values(values, release: NoiseAwareRelease, rng: np.random.Generator) -> np.ndarray:
    """``values`` replaced, rank for rank, by as many values drawn from ``release`` (a marginal without cells).

    The order of ``values`` is kept (ties broken at random), so a model's relations survive as rank relations,
    and the marginal becomes the released one. Non-finite values rank above every finite one. Post-processing of
    the model's draw and of the release.
    """
    v = np.asarray(values, dtype=float)
    target = np.sort(release.sample(v.size, rng))
    order = np.lexsort((rng.random(v.size), np.where(np.isnan(v), np.inf, v)))
    out = np.empty(v.size)
    out[order] = target
    return out


def rounded_bins(n: int, p: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``n`` bins whose counts are the expected ``n p`` rounded at random (each count is the floor or the ceiling
    of ``n p_k``, with the ceiling's probability its fractional part, and the counts sum to ``n``), in random order.
    """
    expected = n * np.asarray(p, dtype=float)
    base = np.floor(expected).astype(int)
    rest = int(n - base.sum())
    if rest > 0:
        frac = expected - base
        base += np.bincount(rng.choice(frac.size, size=rest, replace=False, p=frac / frac.sum()),
                            minlength=frac.size)
    out = np.repeat(np.arange(base.size), base)
    rng.shuffle(out)
    return out


def _normalised(p: np.ndarray) -> np.ndarray:
    p = np.maximum(np.asarray(p, dtype=float), 0.0)
    return p / p.sum()


# --------------------------------------------------------------------------------------------
# the run
# --------------------------------------------------------------------------------------------


def _share(params: Mapping, n_cells: int) -> float:
    share = params.get("marginal_share")
    if n_cells == 1:
        if share is not None and share != 1.0:
            raise DataError(f"`marginal_share` = {share!r} splits eps between the 1-way histogram and the cell x bin "
                            f"table, but there are no cells: the whole eps measures the 1-way histogram. Leave "
                            f"`marginal_share` unset (or 1), or give categorical covariates / `cells`.")
        return 1.0
    if share is None:
        return 0.5
    if share == 1.0:
        raise DataError("`marginal_share` = 1 leaves the cell x bin table unmeasured, so the cells would carry no "
                        "information; use a share < 1 (default 0.5), or cells=[] for the marginal alone.")
    return float(share)


def _cell_sizes(ctx: RunContext, cells: np.ndarray, counts: NoisyCounts, n_cells: int,
                public_cells: bool = True) -> np.ndarray:
    """``n_c``: public with one record replaced when every cell column is public (the covariates' rows are), else
    the noisy counts' (at least 1)."""
    if ctx.relation == "replace" and public_cells:
        return np.bincount(cells, minlength=n_cells).astype(float)
    noisy = counts.table.sum(axis=1) if counts.table is not None else np.array([counts.marginal.sum()])
    return np.maximum(noisy, 1.0)


#: Refits of the noise-aware posterior that fails its checks (twice the draws each time). Its input is the DP
#: release and public sizes only, so retrying is post-processing: it reads nothing of the data beyond the release.
POSTERIOR_RETRIES = 2


def _posterior(ctx: RunContext, model: NoiseAwareModel, data: dict):
    """Sample, refitting with twice the draws and tuning steps (at most :data:`POSTERIOR_RETRIES` times) while the
    checks fail (post-processing of the DP counts)."""
    from ..mcmc_settings import ConvergenceWarning

    cfg = ctx.sampler
    for attempt in range(POSTERIOR_RETRIES + 1):
        seed = ctx.seed_for(KEY, "mcmc") if attempt == 0 else ctx.seed_for(KEY, "mcmc", "retry", attempt)
        draws, diag = model.sample(data, cfg, seed)
        if diag.ok or attempt == POSTERIOR_RETRIES:
            break
        longer = dataclasses.replace(cfg, draws=2 * cfg.draws, tune=2 * cfg.tune)
        smaller = ""
        if diag.divergences:
            longer = dataclasses.replace(longer, target_accept=_raised_accept(cfg.target_accept))
            smaller = f" and a target acceptance rate of {longer.target_accept:g} (smaller steps)"
        ctx.log.append(f"the {KEY} posterior failed its checks ({diag.problems()}); refitted with {longer.draws} draws "
                       f"and {longer.tune} tuning steps per chain{smaller}")
        cfg = longer
    if attempt and diag.ok:
        ctx.log.append(f"the {KEY} posterior passed its checks after {attempt} retr{'y' if attempt == 1 else 'ies'}")
    if not diag.ok:
        warnings.warn(f"the {KEY} posterior of the DP counts did not converge: {diag.problems()}; thresholds R-hat <= "
                      f"{cfg.rhat_max}, ESS >= {cfg.ess_threshold:.0f}, no divergences. Increase `draws`/`tune`.",
                      ConvergenceWarning, stacklevel=3)
    return draws, diag


def _run(ctx: RunContext, params: dict) -> MechanismResult:
    if params.get("bins") is None and params.get("levels") is None:
        C0 = math.prod(c.size for c in cell_columns(ctx.public, params.get("cells"), params.get("cell_edges"),
                                                    params["max_cells"]))
        n = ctx.size_hint if ctx.size_hint is not None else (ctx.n if ctx.relation == "replace" else None)
        params = {**params, "bins": DEFAULT_BINS if n is None else auto_bins(n, _share(params, C0) * params["eps"])}
    bins_of = binning(params)
    _check_data(ctx.x, params)
    columns = cell_columns(ctx.public, params.get("cells"), params.get("cell_edges"), params["max_cells"])
    C, K = math.prod(c.size for c in columns), bins_of.n_bins
    share = _share(params, C)
    cells = cell_index(columns, ctx.public) if columns else np.zeros(ctx.n, dtype=int)
    if cells.size != ctx.n or (cells < 0).any():  # pragma: no cover - the levels are read from these rows
        raise DataError("every record needs a cell of the public covariates.")
    mode = params["mode"]
    seeds = (ctx.seed_for(KEY, "noise", "marginal"), ctx.seed_for(KEY, "noise", "table")) if mode == "research" \
        else (None, None)
    x = ctx.x if params.get("levels") is not None else np.clip(ctx.x, bins_of.lower, bins_of.upper)  # the clamp
    counts = measure(bins_of.index(x), cells, K, C, params["eps"], share, mode=mode, seeds=seeds)
    secret = set(params.get("confidential_cells") or ())
    sizes = _cell_sizes(ctx, cells, counts, C, public_cells=not any(c.name in secret for c in columns))
    model = noise_aware_model(C, K)
    draws, diag = _posterior(ctx, model, model.data(counts, sizes, params["cell_scale"]))
    S = draws["p"].shape[0]
    keep = np.unique(np.linspace(0, S - 1, min(params["release_draws"], S)).round().astype(int))
    state = NoiseAwareRelease(binning=bins_of, cells=columns, probs=draws["p"][keep], marginal=draws["p0"][keep],
                              cell_scale=float(params["cell_scale"]), cell_sizes=sizes,
                              scale_marginal=counts.scale_marginal, scale_table=counts.scale_table, mode=mode,
                              synthesis=params.get("synthesis") or "draw")
    return MECHANISM.released(
        state, eps_remove=counts.eps_remove, eps_replace=counts.eps_replace, diagnostics=(diag,), n_cells=C, bins=K,
        marginal_share=share, noise_scale_marginal=counts.scale_marginal or 0.0,
        noise_scale_table=counts.scale_table or 0.0, noise_mode=mode, release_draws=int(keep.size),
    )


def _declared(params: dict, one_signed: bool, extra: dict | None = None) -> tuple[float, float]:
    """The composed measurement's eps from the settings: ``eps`` removed, ``2 eps`` replaced (see the module docs)."""
    e = float(params["eps"])
    return e, 2.0 * e


MECHANISM = MechanismSpec(
    key=KEY, name="Noise-aware", guarantee="DP",
    description="noise-aware Bayesian synthesizer: Laplace-noised 1-way and cell x bin counts on public bins, and "
                "a posterior of the cells' bin probabilities whose likelihood models the noise (NAPSU-MQ style)",
    run=_run, params=PARAMS, takes_eps=True, uses_model=False, release_type=NoiseAwareRelease,
    check_data=_check_data, declared_eps=_declared, covariate_use="cells", eps_per_param=(1.0, 2.0),
    fits_per_release="0 model fits (one noise-aware posterior of the noisy counts)",
    needs="public bounds [lower, upper] and bins of the variable (cells from categorical public covariates)",
    use_when="a DP marginal per cell of public covariates with its uncertainty carried into the synthetic data: each "
             "file is one posterior draw, so m files give multiple-imputation spread, and any number of files "
             "costs no further eps",
    loses="relations with numeric covariates not cut into cells, and the shape within a bin",
)
MECHANISMS = (MECHANISM,)
