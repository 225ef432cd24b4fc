"""Public bins of a numeric column: the unit of a histogram, of the ordinal model and of a DP marginal.

A numeric column (continuous, or a count) is cut into bins chosen from public facts only: its kind
(from its type) and its public bounds, never its values. The bins are, in order, a zero-width
**point bin** at the lower bound, interior bins between increasing edges, and a point bin at the
upper bound: a value exactly at a bound (a spending column's zeros, a value clamped to the bound)
is a mass of its own, synthesized exactly, not spread over the first bin. Integers get a bin each
(counts, heaped integers such as hours) while there are at most :data:`MAX_INTEGER_BINS` of them;
continuous values are cut evenly on a scale chosen from the bounds (:func:`default_bins`). Values
outside the bounds are clamped to them, never refused (:meth:`PublicBins.index`).

The same bins serve the cumulative-probability model (:mod:`dpsynth.models.ordinal`), whose record
terms are bin probabilities, and the DP marginals of the noise-aware mechanism
(:mod:`dpsynth.mechanisms.noise_aware`), whose counts are per bin; fine bins are merged into about
equal-mass ones from a public or DP probability vector (:meth:`PublicBins.coarsened`,
post-processing).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from .validation import DataError

__all__ = ["PublicBins", "default_bins", "SCALES", "MAX_INTEGER_BINS", "DEFAULT_BINS", "DEFAULT_WIDE_INTEGER_BINS",
           "BASE_FLOOR"]

#: How a value is drawn inside an interior bin: uniform on its integers, or on the linear, log or log1p scale.
SCALES = ("integer", "linear", "log", "log1p")
#: Most integers that get one bin each; a wider range of integers gets integer-aligned wider bins.
MAX_INTEGER_BINS = 200
#: Interior bins of a continuous target's default rule (point bins at the bounds come on top).
DEFAULT_BINS = 30
#: Interior bins of a wide count's integer-aligned default bins.
DEFAULT_WIDE_INTEGER_BINS = 100
#: The smallest share a merged bin's prior base gets, as a fraction of ``1 / K`` (no bin's prior mass is 0).
BASE_FLOOR = 0.1


# --------------------------------------------------------------------------------------------
# public bins
# --------------------------------------------------------------------------------------------


def _floats(values, name: str) -> tuple[float, ...]:
    try:
        arr = np.asarray(values, dtype=float).ravel()
    except (TypeError, ValueError):
        raise DataError(f"`{name}` must be numbers; got {values!r}.") from None
    if not np.isfinite(arr).all():
        raise DataError(f"`{name}` must be finite numbers; got {values!r}.")
    return tuple(float(v) for v in arr)


@dataclass(frozen=True)
class PublicBins:
    """Public bins of a numeric variable: interior bins between edges, and a point bin at each public bound.

    The bins are, in order: a zero-width bin holding exactly ``lower`` (if ``point_lower``), the
    interior bins ``(edges[j], edges[j + 1]]`` (``j = 0, ..., m - 1``), and a zero-width bin holding
    exactly ``upper`` (if ``point_upper``). With ``scale="integer"`` the edges are half-integers and
    an interior bin holds the integers between them. Every field is public (chosen without the data);
    the dataclass is frozen, hashable and read back from JSON (:meth:`to_dict`, :meth:`from_dict`).

    Parameters
    ----------
    lower, upper : float
        The public bounds; values outside are clamped to them (:meth:`index`).
    edges : tuple of float
        ``m + 1`` strictly increasing edges of the interior bins, within ``[lower, upper]`` (half-integers
        within ``[lower - 0.5, upper + 0.5]`` for integer bins).
    scale : {"integer", "linear", "log", "log1p"}
        How a value is drawn inside an interior bin (:meth:`values`): uniform over its integers, uniform,
        log-uniform (``edges[0] > 0``), or uniform on ``log(1 + x)`` (``edges[0] > -1``).
    point_lower, point_upper : bool
        Whether ``lower`` / ``upper`` has a zero-width bin of its own (an exact value, synthesized exactly).
    base : tuple of float, optional
        A public prior base over the ``K`` bins (e.g. a DP marginal's merged probabilities,
        :meth:`coarsened`); default (None) :meth:`default_base`.

    Examples
    --------
    >>> import numpy as np
    >>> b = default_bins("continuous", 0.0, 1000.0, n_bins=4)
    >>> b.n_bins, b.scale
    (6, 'log1p')
    >>> b.index(np.array([-5.0, 0.0, 3.0, 1000.0, 2e6]))
    array([0, 0, 1, 5, 5])
    """

    lower: float
    upper: float
    edges: tuple
    scale: str = "linear"
    point_lower: bool = True
    point_upper: bool = True
    base: tuple | None = None

    def __post_init__(self) -> None:
        lo, hi = _floats([self.lower, self.upper], "lower/upper")
        if not hi > lo:
            raise DataError(f"the public bounds need lower < upper; got lower={self.lower!r}, upper={self.upper!r}.")
        if self.scale not in SCALES:
            raise DataError(f"`scale` must be one of {SCALES}; got {self.scale!r}.")
        e = _floats(self.edges, "edges")
        if len(e) < 2 or any(b <= a for a, b in zip(e, e[1:])):
            raise DataError(f"`edges` must be two or more strictly increasing numbers; got {self.edges!r}.")
        slack = 0.5 if self.scale == "integer" else 0.0
        if e[0] < lo - slack or e[-1] > hi + slack:
            raise DataError(f"the interior edges [{e[0]:g}, {e[-1]:g}] must lie within the bounds [{lo:g}, {hi:g}].")
        if self.scale == "log" and e[0] <= 0:
            raise DataError(f"scale='log' needs edges > 0; got a first edge {e[0]:g} (use scale='log1p' from 0).")
        if self.scale == "log1p" and e[0] <= -1:
            raise DataError(f"scale='log1p' needs edges > -1; got a first edge {e[0]:g}.")
        if self.scale == "integer":
            ints = np.floor(np.asarray(e[1:])) - np.ceil(np.asarray(e[:-1])) + 1
            if (ints < 1).any():
                raise DataError("every integer bin must hold at least one integer between its edges.")
        object.__setattr__(self, "lower", lo)
        object.__setattr__(self, "upper", hi)
        object.__setattr__(self, "edges", e)
        object.__setattr__(self, "point_lower", bool(self.point_lower))
        object.__setattr__(self, "point_upper", bool(self.point_upper))
        if self.base is not None:
            b = _floats(self.base, "base")
            if len(b) != self.n_bins or min(b) <= 0:
                raise DataError(f"`base` must be {self.n_bins} positive numbers (one per bin); got {len(b)}.")
            s = sum(b)
            object.__setattr__(self, "base", tuple(v / s for v in b))

    # ------------------------------------------------------------------ shape
    @property
    def n_interior(self) -> int:
        """Interior bins ``m``."""
        return len(self.edges) - 1

    @property
    def n_bins(self) -> int:
        """All bins ``K`` (the point bins included)."""
        return self.n_interior + int(self.point_lower) + int(self.point_upper)

    @property
    def is_point(self) -> np.ndarray:
        """Whether each of the ``K`` bins is a point bin."""
        return np.r_[[True] * self.point_lower, [False] * self.n_interior, [True] * self.point_upper].astype(bool)

    def widths(self) -> np.ndarray:
        """Each bin's width on its scale (the number of integers of an integer bin); 0 for a point bin."""
        a, b = np.asarray(self.edges[:-1]), np.asarray(self.edges[1:])
        if self.scale == "integer":
            w = np.floor(b) - np.ceil(a) + 1
        elif self.scale == "log":
            w = np.log(b) - np.log(a)
        elif self.scale == "log1p":
            w = np.log1p(b) - np.log1p(a)
        else:
            w = b - a
        return np.r_[[0.0] * self.point_lower, w, [0.0] * self.point_upper]

    def upper_values(self) -> np.ndarray:
        """Each bin's largest value: a point bin's bound, an interior bin's upper edge (its largest integer for an
        integer bin, the upper bound for the last one). A cut at one of them separates whole bins."""
        e = np.asarray(self.edges[1:], dtype=float)
        if self.scale == "integer":
            e = np.floor(e)
        e = np.minimum(e, self.upper)
        return np.r_[[self.lower] * self.point_lower, e, [self.upper] * self.point_upper]

    def default_base(self) -> np.ndarray:
        """The public prior base: :attr:`base` if given, else each interior bin's share of the width on the bins'
        scale (a marginal flat on that scale), each point bin weighted as an average interior bin."""
        if self.base is not None:
            return np.asarray(self.base, dtype=float)
        w = self.widths()
        w[self.is_point] = w[~self.is_point].mean()
        return w / w.sum()

    # ------------------------------------------------------------------ data -> bins -> values
    def clamped(self, x) -> int:
        """How many values lie outside ``[lower, upper]`` (clamped by :meth:`index`): CONFIDENTIAL, a figure of the
        data, for the data holder's diagnostics only."""
        v = np.asarray(x, dtype=float)
        return int(np.sum((v < self.lower) | (v > self.upper)))

    def index(self, x, *, return_clamped: bool = False):
        """Each value's bin ``0, ..., K - 1``, after clamping it to the public bounds (never refused).

        Parameters
        ----------
        x : array_like
            Finite values.
        return_clamped : bool
            Also return how many values were clamped (CONFIDENTIAL: report it to the data holder only).

        Returns
        -------
        numpy.ndarray or (numpy.ndarray, int)
        """
        raw = np.asarray(x, dtype=float)
        v = np.clip(raw, self.lower, self.upper)
        e = np.asarray(self.edges)
        if self.scale == "integer":
            v = np.rint(v)
            j = np.searchsorted(e, v, side="right") - 1
        else:
            j = np.searchsorted(e, v, side="left") - 1
        k = np.clip(j, 0, self.n_interior - 1) + int(self.point_lower)
        if self.point_lower:
            k = np.where(v <= self.lower, 0, k)
        if self.point_upper:
            k = np.where(v >= self.upper, self.n_bins - 1, k)
        k = k.astype(np.int64)
        return (k, self.clamped(raw)) if return_clamped else k

    def values(self, k, rng: np.random.Generator) -> np.ndarray:
        """A value inside each bin ``k``: the bound of a point bin, else uniform on the bin's scale (the integers of
        an integer bin, uniform, log-uniform or uniform on ``log(1 + x)``), never a point bin's bound."""
        k = np.asarray(k, dtype=np.int64)
        if k.size and (k.min() < 0 or k.max() >= self.n_bins):
            raise DataError(f"bin indices must lie in [0, {self.n_bins}); got {k.min()}..{k.max()}.")
        j = np.clip(k - int(self.point_lower), 0, self.n_interior - 1)
        e = np.asarray(self.edges)
        a, b = e[j], e[j + 1]
        if self.scale == "integer":
            lo, hi = np.ceil(a), np.floor(b)
            out = lo + np.floor(rng.random(k.shape) * (hi - lo + 1))
            out = np.minimum(out, hi)
        else:
            u = rng.random(k.shape)
            if self.scale == "log":
                out = np.exp(np.log(a) + u * (np.log(b) - np.log(a)))
            elif self.scale == "log1p":
                out = np.expm1(np.log1p(a) + u * (np.log1p(b) - np.log1p(a)))
            else:
                out = a + u * (b - a)
            out = np.clip(out, a, b)  # a rounding error of exp/expm1 stays inside the bin
        lo_open = np.nextafter(self.lower, np.inf) if self.point_lower else self.lower
        hi_open = np.nextafter(self.upper, -np.inf) if self.point_upper else self.upper
        out = np.clip(out, lo_open, hi_open)  # an interior draw never lands on a point bin's value
        if self.point_lower:
            out = np.where(k == 0, self.lower, out)
        if self.point_upper:
            out = np.where(k == self.n_bins - 1, self.upper, out)
        return out

    # ------------------------------------------------------------------ merging
    def coarsened(self, probs, n_bins: int) -> PublicBins:
        """These bins merged into about ``n_bins`` bins of about equal mass under ``probs`` (post-processing).

        Consecutive interior bins are merged so that each merged bin holds about ``1 / m`` of the interior
        mass (``m = n_bins`` less the point bins); the point bins are kept as they are, the merged edges are a
        subset of these edges (so integer bins stay integer-aligned), and the merged probabilities, floored at
        :data:`BASE_FLOOR` ``/ K``, become the new bins' prior :attr:`base`. ``probs`` must be public or DP (e.g.
        the posterior mean of a noise-aware DP marginal on these bins): the merge reads nothing else.

        Parameters
        ----------
        probs : array_like
            A probability vector over these ``K`` bins.
        n_bins : int
            The number of bins wanted (point bins included); at most ``K``.
        """
        p = np.asarray(probs, dtype=float)
        if p.shape != (self.n_bins,) or not np.isfinite(p).all() or (p < 0).any() or p.sum() <= 0:
            raise DataError(f"`probs` must be {self.n_bins} non-negative numbers (a probability vector over the bins).")
        p = p / p.sum()
        npts = int(self.point_lower) + int(self.point_upper)
        if isinstance(n_bins, bool) or not isinstance(n_bins, (int, np.integer)) or n_bins < npts + 1:
            raise DataError(f"`n_bins` must be an integer >= {npts + 1}; got {n_bins!r}.")
        m = min(int(n_bins) - npts, self.n_interior)
        inner = p[~self.is_point]
        total = inner.sum()
        cum = np.cumsum(inner) / total if total > 0 else np.arange(1, inner.size + 1) / inner.size
        # the fine bin after which each merged bin ends: where the cumulative mass first reaches i / m
        ends = np.searchsorted(cum[:-1], np.arange(1, m) / m - 1e-12, side="left")
        cuts = np.unique(np.r_[ends, inner.size - 1])
        edges = np.r_[self.edges[0], np.asarray(self.edges)[cuts + 1]]
        starts = np.r_[0, cuts[:-1] + 1]
        merged = np.add.reduceat(inner, starts)
        base = np.r_[p[:1] if self.point_lower else [], merged, p[-1:] if self.point_upper else []]
        K = base.size
        base = np.maximum(base, BASE_FLOOR / K)
        return PublicBins(lower=self.lower, upper=self.upper, edges=tuple(edges), scale=self.scale,
                           point_lower=self.point_lower, point_upper=self.point_upper, base=tuple(base / base.sum()))

    # ------------------------------------------------------------------ JSON
    def to_dict(self) -> dict:
        """Plain-JSON contents."""
        return {"lower": self.lower, "upper": self.upper, "edges": list(self.edges), "scale": self.scale,
                "point_lower": self.point_lower, "point_upper": self.point_upper,
                "base": None if self.base is None else list(self.base)}

    @classmethod
    def from_dict(cls, d: Mapping) -> PublicBins:
        """Read :meth:`to_dict`'s output back."""
        if isinstance(d, PublicBins):
            return d
        if not isinstance(d, Mapping):
            raise DataError(f"ordinal bins must be an PublicBins or its to_dict(); got {d!r}.")
        known = {"lower", "upper", "edges", "scale", "point_lower", "point_upper", "base"}
        unknown = sorted(set(d) - known)
        if unknown:
            raise DataError(f"ordinal bins have unknown key(s) {unknown}; known: {sorted(known)}.")
        base = d.get("base")
        return cls(lower=d["lower"], upper=d["upper"], edges=tuple(d["edges"]), scale=str(d.get("scale", "linear")),
                   point_lower=bool(d.get("point_lower", True)), point_upper=bool(d.get("point_upper", True)),
                   base=None if base is None else tuple(base))


def _integer_edges(lo: int, hi: int, m: int, spacing: str) -> np.ndarray:
    """Half-integer edges of about ``m`` integer-aligned bins covering the integers ``lo..hi``."""
    if spacing == "log1p" and lo >= 0:
        raw = np.expm1(np.linspace(np.log1p(lo), np.log1p(hi + 1), m + 1))
    else:
        raw = np.linspace(lo, hi + 1, m + 1)
    cuts = np.unique(np.clip(np.round(raw), lo, hi + 1))
    cuts[0], cuts[-1] = lo, hi + 1
    return np.unique(cuts) - 0.5


def default_bins(kind: str, lower: float, upper: float, n_bins: int | None = None,
                 scale: str | None = None) -> PublicBins:
    """The public default bins of a column of ``kind`` between public bounds (reads no data).

    Rule:

    * ``kind="count"``: the integers ``ceil(lower)..floor(upper)`` one bin each when there are at most
      :data:`MAX_INTEGER_BINS` of them (and ``n_bins`` does not ask for fewer); else a point bin at each bound
      and about ``n_bins`` (default :data:`DEFAULT_WIDE_INTEGER_BINS`) integer-aligned bins between them, evenly
      spaced (or on ``log(1 + x)`` with ``scale="log1p"``), a value drawn uniformly over a bin's integers;
    * ``kind="continuous"``: a point bin at each bound and ``n_bins`` (default :data:`DEFAULT_BINS`) bins between
      them, evenly spaced on the scale: ``"log"`` when ``lower > 0`` and ``upper / lower >= 100``; ``"log1p"``
      when ``lower >= 0`` and ``upper >= 100`` (a non-negative amount over two decades or more, such as
      spending with exact zeros); ``"linear"`` otherwise (negatives, shares, narrow ranges). ``scale`` overrides.

    Parameters
    ----------
    kind : {"continuous", "count"}
        The target's kind (from its type).
    lower, upper : float
        Public bounds, chosen without the data.
    n_bins : int, optional
        Interior bins (point bins come on top).
    scale : str, optional
        One of :data:`SCALES`.
    """
    lo, hi = _floats([lower, upper], "bounds")
    if not hi > lo:
        raise DataError(f"the public bounds need lower < upper; got lower={lower!r}, upper={upper!r}.")
    if n_bins is not None and (isinstance(n_bins, bool) or not isinstance(n_bins, (int, np.integer)) or n_bins < 1):
        raise DataError(f"`n_bins` must be a positive integer; got {n_bins!r}.")
    if scale is not None and scale not in SCALES:
        raise DataError(f"`scale` must be one of {SCALES}; got {scale!r}.")
    if kind == "count" or scale == "integer":
        a, b = math.ceil(lo), math.floor(hi)
        if b <= a:
            raise DataError(f"integer bins need at least two integers in [{lo:g}, {hi:g}]; widen the public bounds.")
        count = b - a + 1
        if count <= MAX_INTEGER_BINS and (n_bins is None or n_bins >= count):
            return PublicBins(lower=a, upper=b, edges=tuple(np.arange(a, b + 2) - 0.5), scale="integer",
                               point_lower=False, point_upper=False)
        if count < 3:  # pragma: no cover - two integers always fit one bin each
            raise DataError("too few integers for integer-aligned bins.")
        m = min(int(n_bins or DEFAULT_WIDE_INTEGER_BINS), count - 2)
        edges = _integer_edges(a + 1, b - 1, m, scale or "linear")
        return PublicBins(lower=a, upper=b, edges=tuple(edges), scale="integer")
    if kind != "continuous":
        raise DataError(f"ordinal bins are for a numeric target (continuous or count); got kind {kind!r}.")
    m = int(n_bins or DEFAULT_BINS)
    if scale is None:
        scale = "log" if lo > 0 and hi / lo >= 100 else "log1p" if lo >= 0 and hi >= 100 else "linear"
    if scale == "log":
        if lo <= 0:
            raise DataError(f"scale='log' needs lower > 0; got {lo:g} (use scale='log1p' from 0).")
        edges = np.geomspace(lo, hi, m + 1)
    elif scale == "log1p":
        if lo <= -1:
            raise DataError(f"scale='log1p' needs lower > -1; got {lo:g}.")
        edges = np.expm1(np.linspace(np.log1p(lo), np.log1p(hi), m + 1))
    else:
        edges = np.linspace(lo, hi, m + 1)
    edges[0], edges[-1] = lo, hi
    if (np.diff(edges) <= 0).any():
        raise DataError(f"{m} bins between {lo!r} and {hi!r} are not distinct in floating point; use fewer bins.")
    return PublicBins(lower=lo, upper=hi, edges=tuple(edges), scale=scale)


