"""OpenDP-Q: DP quantiles from OpenDP's private-quantile mechanism, turned into synthetic values.

The maintained, non-Bayesian baseline of the compendium (registry entry ``"opendp_quantiles"``,
display name ``"OpenDP-Q"``). :func:`dp_quantiles` releases ``k`` quantiles of a bounded variable
with OpenDP's ``make_private_quantile`` (an exponential mechanism: report-noisy-max over a grid of
candidates, scored by how far each candidate's rank is from the target rank); the release's
:meth:`QuantileRelease.sample` turns them into synthetic values by inverse CDF.

Privacy accounting, all of it done by OpenDP:

* The candidates are ``n_candidates`` points between the public bounds ``lower`` and ``upper``,
  log-spaced (``scale="log"``) or evenly spaced (``scale="linear"``); they are chosen without
  looking at the data. The default ``scale="auto"`` reads the public bounds only: log-spaced when
  ``lower > 0``, evenly spaced otherwise (a count, whose public lower bound is 0).
* The ``k`` quantile measurements are composed with OpenDP's composition combinator
  (``opendp.combinators.make_composition``, sequential composition: the privacy losses add up).
  ``eps`` is split equally: each quantile's noise scale is ``t`` times the scale at which its own
  measurement costs 1 under OpenDP's privacy map, so every quantile costs the same, and ``t`` is
  found by ``opendp.mod.binary_search_param`` so that the *composed* measurement's
  ``map(1) <= eps``.
* ``eps`` is stated, as everywhere in the compendium, with one record removed (or added): OpenDP's
  ``SymmetricDistance`` at ``d_in = 1`` on data of unknown size. The release reports
  ``eps_remove = meas.map(1)`` and ``eps_replace = meas.map(2)`` (one record replaced changes the
  multiset by one removal and one addition, symmetric distance 2); for this mechanism OpenDP's map
  is linear in ``d_in``, so ``eps_replace = 2 eps_remove``. Neither figure is typed by hand.
* With public ``cells`` (labels from public covariates), the quantiles are released separately in
  each cell with the full ``eps`` each: every record belongs to one cell, so removing it changes one
  cell's data only (parallel composition, ``eps_remove`` is one cell's ``map(1)``). A record
  replaced by one with the same public covariates stays in its cell (one cell's ``map(2)``); were it
  to move to another cell, two cells would change by one record each, ``map(1) + map(1)``. The
  release reports the larger of the two readings (they coincide for this mechanism).

Randomness. The noise is drawn by OpenDP's samplers from the operating system's secure randomness;
it is *not* seedable, and two calls with the same arguments give different releases. Only the
synthetic values drawn from a release (:meth:`QuantileRelease.sample`, post-processing) are seeded.

Quantile levels. OpenDP stores a level ``alpha`` as a fraction with denominator 10,000 and drops
further digits (0.12345 is scored as 0.1234), so ``probs`` must be multiples of 0.0001; other
values are refused rather than released under a level they were not computed for.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..privacy import neighbours_phrase
from ..seeds import SeedLike, generator
from ..validation import DataError, _is_number, as_data, check_eps, check_finite, check_names, optional
from .contract import REQUIRED, MechanismResult, MechanismSpec, Param, RunContext

__all__ = [
    "QuantileRelease",
    "dp_quantiles",
    "candidate_grid",
    "DEFAULT_PROBS",
    "SCALES",
    "AUTO_SCALE",
    "resolve_scale",
    "MAX_CANDIDATES",
    "MIN_EPS",
    "PROB_DENOMINATOR",
    "QuantilesState",
    "cell_labels",
    "MECHANISM",
    "MECHANISMS",
]

#: Default quantile levels: both tails and every decile.
DEFAULT_PROBS: tuple[float, ...] = (0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99)
#: Spacings of the candidate grid (and of the inverse-CDF interpolation).
SCALES = ("log", "linear")
#: The default spacing: ``"log"`` when the public lower bound is > 0, ``"linear"`` otherwise (:func:`resolve_scale`).
AUTO_SCALE = "auto"
#: Largest candidate grid accepted.
MAX_CANDIDATES = 100_000
#: Smallest privacy budget accepted (below it the noise scale is astronomically large).
MIN_EPS = 1e-9
#: OpenDP scores a quantile level as a fraction over this denominator (extra digits are dropped).
PROB_DENOMINATOR = 10_000


@dataclass(frozen=True, eq=False)
class QuantileRelease:
    """DP quantiles released by :func:`dp_quantiles`, with an inverse-CDF sampler.

    Attributes
    ----------
    probs : numpy.ndarray
        Quantile levels, shape ``(k,)``, increasing in (0, 1).
    values : numpy.ndarray
        Released quantiles, shape ``(k,)``, or ``(n_cells, k)`` with cells (row ``i`` belongs to
        ``cells[i]``). Each row is sorted to be non-decreasing: sorting is post-processing of the
        DP output and costs no privacy.
    cells : numpy.ndarray or None
        Cell labels, one per row of ``values``; ``None`` without cells.
    lower, upper : float
        Public bounds of the variable.
    scale : str
        ``"log"`` or ``"linear"``: spacing of the candidates and of the interpolation.
    n_candidates : int
        Number of candidates each quantile was chosen from.
    eps : float
        Target privacy budget, with one record removed.
    eps_remove : float
        OpenDP's privacy map at symmetric distance 1 (one record removed or added), ``<= eps``.
    eps_replace : float
        OpenDP's privacy map for one record replaced (symmetric distance 2).
    noise_scale : numpy.ndarray
        OpenDP's ``scale`` of each quantile measurement, shape ``(k,)``, in units of rank (records).
    guarantee : str
        ``"DP"``, from the registry entry ``"OpenDP-Q"``.
    """

    probs: np.ndarray
    values: np.ndarray
    cells: np.ndarray | None
    lower: float
    upper: float
    scale: str
    n_candidates: int
    eps: float
    eps_remove: float
    eps_replace: float
    noise_scale: np.ndarray
    guarantee: str

    @property
    def candidates(self) -> np.ndarray:
        """The public candidate grid every quantile was chosen from."""
        return candidate_grid(self.lower, self.upper, self.n_candidates, self.scale)

    def sample(self, n: int | None = None, *, cells: Any = None, seed: SeedLike = None) -> np.ndarray:
        """Synthetic values drawn by inverse CDF from the released quantiles.

        The quantile function is piecewise linear in ``log(value)`` (``scale="log"``) or in the
        value (``scale="linear"``) through ``(0, lower)``, ``(p_j, q_j)`` and ``(1, upper)``. Drawing
        from it is post-processing of the release: no privacy cost, and seeded.

        Parameters
        ----------
        n : int, optional
            Number of values, for a release without cells (required then: the confidential record
            count is not part of the release).
        cells : array_like, optional
            For a release with cells: one cell label per synthetic record (e.g. the public
            covariate column); each label must be one of :attr:`cells`.
        seed : int or SeedSequence, optional
            Seed of the numpy generator (:func:`dpsynth.seeds.generator`).

        Returns
        -------
        numpy.ndarray
            Synthetic values in ``[lower, upper]``, shape ``(n,)`` or ``(len(cells),)``.
        """
        rng = generator(seed)
        if self.cells is None:
            if cells is not None:
                raise DataError(
                    "`cells` was given but this release has no cells (it was made without `cells`); pass `n` "
                    "instead, or release the quantiles with `cells=` to sample by cell."
                )
            if not _is_count(n):
                raise DataError(
                    f"`n` must be a positive integer (the number of synthetic values); got {n!r}. The "
                    f"confidential record count is not released, so it must be given."
                )
            return self._inverse_cdf(rng.uniform(size=int(n)), self.values)
        if cells is None:
            raise DataError(
                f"this release has {len(self.cells)} cells; pass `cells=` with one cell label per synthetic "
                f"record (e.g. the public covariate column), not `n` alone."
            )
        want = _as_labels(cells, "cells")
        if n is not None and (not _is_count(n) or int(n) != want.size):
            raise DataError(
                f"`n`={n!r} does not match the {want.size} labels in `cells`; with cells, one value is drawn per "
                f"label, so leave `n` as None."
            )
        row_of = {label: i for i, label in enumerate(self.cells.tolist())}
        rows = np.empty(want.size, dtype=int)
        unknown = []
        for j, label in enumerate(want.tolist()):
            i = row_of.get(label)
            if i is None:
                unknown.append(label)
            else:
                rows[j] = i
        if unknown:
            shown = ", ".join(repr(u) for u in list(dict.fromkeys(unknown))[:5])
            known = ", ".join(repr(c) for c in self.cells.tolist()[:10])
            more = ", ..." if len(self.cells) > 10 else ""
            raise DataError(
                f"`cells` has {len(unknown)} label(s) with no released quantiles ({shown}); the release's cells "
                f"are {known}{more}. Sample only released cells, or release again with `labels=` listing all cells."
            )
        return self._inverse_cdf(rng.uniform(size=want.size), self.values[rows])

    def _inverse_cdf(self, u: np.ndarray, values: np.ndarray) -> np.ndarray:
        """Piecewise-linear quantile function at ``u``; ``values`` is ``(k,)`` or one row per ``u``."""
        knots_p = np.concatenate(([0.0], self.probs, [1.0]))
        vals = np.atleast_2d(values)
        ends = np.full((vals.shape[0], 1), 1.0)
        knots_q = np.hstack((self.lower * ends, vals, self.upper * ends))
        if self.scale == "log":
            knots_q = np.log(knots_q)
        # the segment of each u, then linear interpolation within it (rows may differ per record)
        seg = np.clip(np.searchsorted(knots_p, u, side="right") - 1, 0, knots_p.size - 2)
        row = np.zeros(u.size, dtype=int) if vals.shape[0] == 1 else np.arange(u.size)
        p0, p1 = knots_p[seg], knots_p[seg + 1]
        q0, q1 = knots_q[row, seg], knots_q[row, seg + 1]
        out = q0 + (u - p0) / (p1 - p0) * (q1 - q0)
        if self.scale == "log":
            out = np.exp(out)
        # exp(log(bound)) can miss the bound by a rounding error: keep values in [lower, upper]
        return np.clip(out, self.lower, self.upper)

    def statement(self) -> str:
        """One sentence stating the guarantee under both neighbour relations."""
        kind = {"DP": "strict DP", "aDP": "asymptotic DP (local bound only)", "none": "not private"}.get(
            self.guarantee, f"guarantee {self.guarantee!r}")
        k = self.probs.size
        where = "" if self.cells is None else (
            f", separately in each of {len(self.cells)} public cells with the full eps each (parallel composition:"
            f" each record is in one cell)")
        return (
            f"{kind}: eps = {self.eps_remove:.3g} with {neighbours_phrase('remove')}, {self.eps_replace:.3g} with "
            f"{neighbours_phrase('replace')} (OpenDP's privacy map); {k} quantile(s) by OpenDP's private-quantile "
            f"mechanism, eps split equally ({self.eps_remove / k:.3g} each), over {self.n_candidates} "
            f"{self.scale}-spaced candidates in [{self.lower:g}, {self.upper:g}]{where}"
        )


def _is_count(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)) and value >= 1


def _as_labels(cells: Any, name: str) -> np.ndarray:
    """Cell labels as a 1-d array, refusing missing values and unorderable mixtures."""
    if isinstance(cells, (str, bytes)):
        raise DataError(f"`{name}` must be an array of cell labels, one per record; got a single string {cells!r}.")
    try:
        arr = np.asarray(cells)
    except (TypeError, ValueError) as err:
        raise DataError(f"`{name}` must be a 1-d array of cell labels; got {type(cells).__name__} ({err}).") from err
    if arr.ndim != 1:
        raise DataError(f"`{name}` must be 1-dimensional, one cell label per record; got shape {arr.shape}.")
    if arr.dtype.kind == "c":
        raise DataError(f"`{name}` must hold cell labels (strings, integers or booleans); got complex numbers.")
    if arr.dtype.kind == "f" and not np.isfinite(arr).all():
        raise DataError(
            f"`{name}` has missing (NaN) or infinite labels, first at position "
            f"{int(np.flatnonzero(~np.isfinite(arr))[0])}; give those records a label of their own (e.g. 'missing')."
        )
    if arr.dtype.kind == "O":
        missing = [i for i, v in enumerate(arr.tolist()) if v is None or (isinstance(v, float) and math.isnan(v))]
        if missing:
            raise DataError(
                f"`{name}` has {len(missing)} missing label(s) (None or NaN), first at position {missing[0]}; give "
                f"those records a label of their own (e.g. 'missing')."
            )
    return arr


def _unique_labels(arr: np.ndarray, name: str) -> np.ndarray:
    try:
        return np.unique(arr)
    except TypeError as err:
        raise DataError(
            f"`{name}` mixes label types that cannot be ordered ({err}); use labels of one type (all strings or "
            f"all integers)."
        ) from err


def _check_bounds(lower: Any, upper: Any, scale: str) -> tuple[float, float]:
    for bname, bval in (("lower", lower), ("upper", upper)):
        if not _is_number(bval):
            raise DataError(f"`{bname}` must be a number (a public bound); got {bval!r} ({type(bval).__name__}).")
    lo, hi = float(lower), float(upper)
    if not (np.isfinite(lo) and np.isfinite(hi)) or hi <= lo:
        raise DataError(
            f"public bounds must be finite with upper > lower; got lower={lower!r}, upper={upper!r}. Take them from "
            f"public knowledge (the variable's definition, a published cap), never from the data."
        )
    if scale == "log" and lo <= 0:
        raise DataError(
            f"`lower` must be > 0 for scale='log' (log-spaced candidates and a log-linear quantile function); got "
            f"lower={lower!r}. Use a positive public lower bound, or scale='linear'."
        )
    return lo, hi


def _check_scale(scale: Any) -> str:
    if not isinstance(scale, str) or scale not in (*SCALES, AUTO_SCALE):
        raise DataError(f"`scale` must be 'log', 'linear' or 'auto' (log when the public lower bound is > 0, "
                        f"linear otherwise); got {scale!r}.")
    return scale


def resolve_scale(scale: Any, lower: Any) -> str:
    """The spacing ``scale`` names: ``"auto"`` is ``"log"`` when the public ``lower`` bound is > 0, else ``"linear"``.

    It reads the public bound only, never the data.
    """
    sc = _check_scale(scale)
    if sc != AUTO_SCALE:
        return sc
    return "log" if _is_number(lower) and float(lower) > 0 else "linear"


def _check_n_candidates(n_candidates: Any) -> int:
    if not _is_count(n_candidates) or not 2 <= int(n_candidates) <= MAX_CANDIDATES:
        raise DataError(
            f"`n_candidates` must be an integer in [2, {MAX_CANDIDATES:,}] (the size of the public candidate "
            f"grid); got {n_candidates!r}."
        )
    return int(n_candidates)


def _check_probs(probs: Any) -> tuple[float, ...]:
    if isinstance(probs, (str, bytes)):
        raise DataError(f"`probs` must be a sequence of quantile levels in (0, 1); got a string {probs!r}.")
    raw = np.asarray(probs)
    if raw.ndim == 0:
        raw = raw.reshape(1)
    if raw.dtype.kind not in "iuf" or raw.ndim != 1 or raw.size == 0:
        raise DataError(
            f"`probs` must be a non-empty 1-d sequence of numbers (quantile levels in (0, 1)); got {probs!r}."
        )
    p = raw.astype(float)
    if not np.isfinite(p).all() or (p <= 0).any() or (p >= 1).any():
        raise DataError(f"`probs` must lie strictly between 0 and 1; got {p.tolist()}. Use e.g. probs=(0.1, 0.5, 0.9).")
    if p.size > 1 and (np.diff(p) <= 0).any():
        raise DataError(
            f"`probs` must be strictly increasing (no repeats); got {p.tolist()}. Sort them and drop duplicates."
        )
    scaled = p * PROB_DENOMINATOR
    off = np.abs(scaled - np.round(scaled)) > 1e-6
    if off.any():
        raise DataError(
            f"`probs` must be multiples of 1/{PROB_DENOMINATOR:,} (at most 4 decimals): OpenDP scores a level as a "
            f"fraction over {PROB_DENOMINATOR:,} and drops further digits; got {p[off].tolist()}. Round them to 4 "
            f"decimals."
        )
    return tuple(float(v) for v in np.round(scaled) / PROB_DENOMINATOR)


def candidate_grid(lower: float, upper: float, n_candidates: int, scale: str = "log") -> np.ndarray:
    """The public candidate grid: ``n_candidates`` points from ``lower`` to ``upper``.

    Log-spaced (``scale="log"``, needs ``lower > 0``) or evenly spaced; both end points are on the
    grid. It depends on the public bounds only, never on the data.

    Returns
    -------
    numpy.ndarray
        Strictly increasing candidates.
    """
    sc = resolve_scale(scale, lower)
    lo, hi = _check_bounds(lower, upper, sc)
    m = _check_n_candidates(n_candidates)
    grid = np.geomspace(lo, hi, m) if sc == "log" else np.linspace(lo, hi, m)
    grid[0], grid[-1] = lo, hi
    if (np.diff(grid) <= 0).any():
        raise DataError(
            f"{m} candidates between {lo!r} and {hi!r} are not all distinct in floating point; use fewer "
            f"`n_candidates` or wider bounds."
        )
    return grid


@functools.lru_cache(maxsize=32)
def _calibrated(
    probs: tuple[float, ...], lower: float, upper: float, n_candidates: int, scale: str, eps: float
) -> tuple[Any, tuple[float, ...]]:
    """The composed OpenDP measurement for ``probs`` at budget ``eps`` and its per-quantile scales.

    Cached: the measurement depends on public parameters only, and calibration is a binary search.
    """
    import opendp.prelude as dp

    dp.enable_features("contrib")
    cands = candidate_grid(lower, upper, n_candidates, scale).tolist()
    domain = dp.vector_domain(dp.atom_domain(T=float, nan=False))  # size unknown: it is not public
    metric = dp.symmetric_distance()

    def quantile(p: float, s: float):
        return dp.m.make_private_quantile(domain, metric, dp.max_divergence(), candidates=cands, alpha=p, scale=s)

    # each quantile's scale at which OpenDP's map gives a loss of 1; scale t * unit_j costs 1 / t
    unit = [float(quantile(p, 1.0).map(1)) for p in probs]

    def chain(t: float):
        return dp.c.make_composition([quantile(p, t * u) for p, u in zip(probs, unit)])

    guess = float(chain(1.0).map(1)) / eps  # the map is inversely proportional to the scale
    try:
        t = dp.binary_search_param(chain, d_in=1, d_out=eps, bounds=(guess / 2.0, guess * 2.0))
    except ValueError:  # pragma: no cover - the map is exactly proportional in OpenDP 0.16
        t = dp.binary_search_param(chain, d_in=1, d_out=eps)
    meas = chain(t)
    if not meas.map(1) <= eps:  # pragma: no cover - binary_search_param returns a passing value
        raise RuntimeError(f"OpenDP calibration failed: map(1) = {meas.map(1)} > eps = {eps}")
    return meas, tuple(t * u for u in unit)


def dp_quantiles(
    x: Any,
    eps: float,
    *,
    lower: float,
    upper: float,
    probs: Sequence[float] = DEFAULT_PROBS,
    n_candidates: int = 1000,
    scale: str = AUTO_SCALE,
    cells: Any = None,
    labels: Any = None,
) -> QuantileRelease:
    """Release DP quantiles of ``x`` with OpenDP's private-quantile mechanism.

    The noise comes from OpenDP's samplers, drawn from the system's secure randomness: it cannot
    be seeded, and repeated calls give different releases (each costing ``eps`` again).

    Parameters
    ----------
    x : array_like
        Confidential values, 1-d, finite; values outside ``[lower, upper]`` are clamped to the bounds.
    eps : float
        Privacy budget with one record removed (``>= MIN_EPS``), split equally over the quantiles.
    lower, upper : float
        Public bounds of the variable (``lower > 0`` for ``scale="log"``), from public knowledge,
        never from the data. Values outside are clamped to them (as OpenDP's ``make_clamp``).
    probs : sequence of float
        Quantile levels, strictly increasing in (0, 1), multiples of 0.0001 (see module docs).
    n_candidates : int
        Size of the public candidate grid each quantile is chosen from.
    scale : {"auto", "log", "linear"}
        Spacing of the candidates and of the sampler's interpolation; ``"auto"`` (default) is ``"log"``
        when ``lower > 0`` and ``"linear"`` otherwise (:func:`resolve_scale`).
    cells : array_like, optional
        Public cell labels, one per record (from public covariates only, e.g. part-time x region).
        The quantiles are then released separately in each cell with the full ``eps`` each
        (parallel composition; see module docs). Without ``labels``, the cells are the distinct
        labels of ``cells``, so every cell has at least one record: the list of cells is a function
        of the public covariates and is itself public under the compendium's convention that
        covariates are public.
    labels : array_like, optional
        The public list of all cells, when even which cells occur should not depend on the data
        (e.g. every education x region combination). Cells without records are released too, from
        the empty data set (a draw over the candidates that carries no information). Needs
        ``cells``; every label in ``cells`` must be listed.

    Returns
    -------
    QuantileRelease
    """
    xv = as_data(x, "x")
    e = check_eps(eps)
    if e < MIN_EPS:
        raise DataError(
            f"`eps` must be >= MIN_EPS={MIN_EPS:g}; got {eps!r}, whose noise scale is astronomically large. Use a "
            f"larger eps."
        )
    sc = resolve_scale(scale, lower)
    lo, hi = _check_bounds(lower, upper, sc)
    m = _check_n_candidates(n_candidates)
    p = _check_probs(probs)
    xv = np.clip(xv, lo, hi)  # public bounds clamp every record (OpenDP's make_clamp)
    if labels is not None and cells is None:
        raise DataError(
            "`labels` lists the public cells and needs `cells` (one label per record); pass both or neither."
        )
    if cells is not None:
        cv = _as_labels(cells, "cells")
        if cv.size != xv.size:
            raise DataError(
                f"`cells` has {cv.size} labels but `x` has {xv.size} records; pass one public cell label per record."
            )
        present = _unique_labels(cv, "cells")
        if labels is None:
            cell_labels = present
        else:
            cell_labels = _as_labels(labels, "labels")
            if _unique_labels(cell_labels, "labels").size != cell_labels.size:
                raise DataError("`labels` has repeated entries; list each public cell once.")
            listed = set(cell_labels.tolist())
            extra = [c for c in present.tolist() if c not in listed]
            if extra:
                raise DataError(
                    f"`cells` has label(s) missing from `labels`: {', '.join(repr(c) for c in extra[:5])}; `labels` "
                    f"must list every public cell."
                )
    meas, scales = _calibrated(p, lo, hi, m, sc, e)
    if cells is None:
        values = np.sort(np.asarray(meas(xv.tolist()), dtype=float))
        cell_out = None
    else:
        rows = [np.sort(np.asarray(meas(xv[cv == c].tolist()), dtype=float)) for c in cell_labels.tolist()]
        values = np.vstack(rows)
        cell_out = cell_labels.copy()
    eps_remove = float(meas.map(1))
    eps_replace = float(meas.map(2))
    if cell_out is not None:  # a replaced record that changes cell: two cells at distance 1 each
        eps_replace = max(eps_replace, float(meas.map(1)) + float(meas.map(1)))
    return QuantileRelease(
        probs=np.asarray(p, dtype=float), values=values, cells=cell_out, lower=lo, upper=hi, scale=sc,
        n_candidates=m, eps=e, eps_remove=eps_remove, eps_replace=eps_replace,
        noise_scale=np.asarray(scales, dtype=float), guarantee=MECHANISM.guarantee,
    )


def cell_labels(public, columns) -> np.ndarray:
    """One public cell label per record: the levels of ``columns`` joined by ``/`` (``"all"`` without columns)."""
    n = 0 if public is None else len(public)
    if not columns:
        return np.full(n, "all", dtype=object)
    missing = [c for c in columns if c not in public.columns]
    if missing:
        raise DataError(f"cell column(s) {missing} are not among the public covariates {list(public.columns)}.")
    return public[list(columns)].astype(str).agg("/".join, axis=1).to_numpy(dtype=object)


@dataclass(frozen=True, eq=False)
class QuantilesState:
    """What OpenDP-Q releases through the :class:`~dpsynth.Synthesizer`: the quantiles and their cells.

    Attributes
    ----------
    release : QuantileRelease
        The DP quantiles (per cell of public covariates, or overall).
    cell_columns : tuple of str
        The public covariates whose levels define the cells (empty: one cell).
    """

    release: QuantileRelease
    cell_columns: tuple

    def sample(self, n: int, rng: np.random.Generator, public=None) -> np.ndarray:
        """``n`` synthetic values by inverse CDF, each in its record's cell (post-processing)."""
        seed = np.random.SeedSequence(int(rng.integers(2**63)))
        if not self.cell_columns:
            return self.release.sample(int(n), seed=seed)
        cells = cell_labels(public, self.cell_columns)
        if cells.size != n:
            raise DataError(f"{n} synthetic values were asked for with {cells.size} rows of public covariates.")
        return self.release.sample(cells=cells, seed=seed)

    def to_dict(self) -> dict:
        """Plain-JSON contents."""
        r = self.release
        return {"probs": r.probs.tolist(), "values": r.values.tolist(),
                "cells": None if r.cells is None else [str(c) for c in r.cells.tolist()], "lower": r.lower,
                "upper": r.upper, "scale": r.scale, "n_candidates": r.n_candidates, "eps": r.eps,
                "eps_remove": r.eps_remove, "eps_replace": r.eps_replace, "noise_scale": r.noise_scale.tolist(),
                "guarantee": r.guarantee, "cell_columns": list(self.cell_columns)}

    @classmethod
    def from_dict(cls, d: dict) -> QuantilesState:
        """Read :meth:`to_dict`'s output back."""
        rel = QuantileRelease(
            probs=np.asarray(d["probs"], dtype=float), values=np.asarray(d["values"], dtype=float),
            cells=None if d["cells"] is None else np.asarray(d["cells"], dtype=object), lower=float(d["lower"]),
            upper=float(d["upper"]), scale=str(d["scale"]), n_candidates=int(d["n_candidates"]), eps=float(d["eps"]),
            eps_remove=float(d["eps_remove"]), eps_replace=float(d["eps_replace"]),
            noise_scale=np.asarray(d["noise_scale"], dtype=float), guarantee=str(d["guarantee"]))
        return cls(release=rel, cell_columns=tuple(d["cell_columns"]))


def _check_within_bounds(x: np.ndarray, params: dict) -> None:
    from .histogram import _check_within_bounds as check

    check(x, params)


def _categorical(public) -> tuple:
    import pandas as pd

    if public is None:
        return ()
    return tuple(c for c in public.columns
                 if not pd.api.types.is_numeric_dtype(public[c]) or pd.api.types.is_bool_dtype(public[c]))


def _declared(params: dict, one_signed: bool, extra: dict | None = None) -> tuple[float, float]:
    """OpenDP's privacy map of the composed quantile measurement, from the public settings alone."""
    meas, _ = _calibrated(_check_probs(params["probs"]), float(params["lower"]), float(params["upper"]),
                          int(params["n_candidates"]), resolve_scale(params["scale"], params["lower"]),
                          float(params["eps"]))
    e1 = float(meas.map(1))
    return e1, max(float(meas.map(2)), 2.0 * e1)  # with cells, a replaced record may move cell


def _run(ctx: RunContext, params: dict) -> MechanismResult:
    columns = params["cells"]
    hidden = set(params.get("confidential_cells") or ())
    if columns is None:  # every categorical PUBLIC covariate
        columns = tuple(c for c in _categorical(ctx.public) if c not in hidden)
    secret = [c for c in (columns or ()) if c in hidden]
    if secret:
        raise DataError(f"OpenDP-Q's cells are the labels that occur in the data; {secret} hold confidential values "
                        f"(a whole table's earlier columns), so their labels would leak. Give cells=[] (or only "
                        f"public covariates), or use mechanism='noise_aware', whose cells are public combinations.")
    cells = cell_labels(ctx.public, columns) if columns else None
    rel = dp_quantiles(ctx.x, params["eps"], lower=params["lower"], upper=params["upper"], probs=params["probs"],
                       n_candidates=params["n_candidates"], scale=params["scale"], cells=cells)
    state = QuantilesState(release=rel, cell_columns=tuple(columns))
    return MECHANISM.released(state, eps_remove=rel.eps_remove, eps_replace=rel.eps_replace,
                         n_cells=1 if rel.cells is None else len(rel.cells))


MECHANISM = MechanismSpec(
    key="opendp_quantiles", name="OpenDP-Q", guarantee="DP",
    description="quantiles released by OpenDP's private-quantile mechanism, turned into synthetic values "
                "(a maintained non-Bayesian baseline)",
    run=_run, takes_eps=True, uses_model=False, release_type=QuantilesState, check_data=_check_within_bounds,
    declared_eps=_declared, targets=("continuous", "count"), covariate_use="cells",
    params={
        "lower": Param(REQUIRED, check_finite, "public lower bound of the target (> 0 for scale 'log'), never from "
                       "the data", in_data_unit=True),
        "upper": Param(REQUIRED, check_finite, "public upper bound of the target, never from the data",
                       in_data_unit=True),
        "probs": Param(DEFAULT_PROBS, lambda v, nm: _check_probs(v), "quantile levels released (eps split equally)",
                       cli="floats"),
        "n_candidates": Param(1000, lambda v, nm: _check_n_candidates(v), "size of the public candidate grid",
                              cli="int"),
        "scale": Param(AUTO_SCALE, lambda v, nm: _check_scale(v), "spacing of the candidates: 'log', 'linear' or "
                       "'auto' (log when the public lower bound is > 0, linear otherwise)", cli="str"),
        "cells": Param(None, optional(check_names), "public covariates whose levels define the cells (quantiles "
                       "per cell, parallel composition; default: every categorical covariate)", cli="strs"),
        "confidential_cells": Param(None, optional(check_names), "covariates whose values are confidential (a "
                                    "whole table's earlier columns, filled in by the Synthesizer): refused as cells, "
                                    "whose labels would be read from the data", cli=None,
                                    fill="confidential_covariates"),
    },
    fits_per_release="0 (no model)",
    needs="public bounds [lower, upper] of the variable (cells from categorical public covariates)",
    use_when="a maintained non-Bayesian DP baseline of the marginal (per cell of public covariates)",
    loses="relations with numeric covariates (only the cells of categorical ones are kept)",
)
MECHANISMS = (MECHANISM,)
