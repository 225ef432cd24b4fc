"""Cumulative-probability (ordinal) regression over public bins: a unit-free model of any numeric column.

The semiparametric transformation model of Liu, Shepherd, Li and Harrell (2017, "Modeling continuous
response variables using ordinal regression", Statistics in Medicine 36(27)): the values are cut
into ``K`` ordered bins and each record's bin follows a cumulative-link model,

.. math::

   P(y_i \\le \\text{bin } k \\mid X_i) = F(c_k - \\eta_i), \\qquad \\eta_i = X_i \\beta,

with ``F`` the logistic CDF (the proportional-odds model; ``link="probit"`` takes the normal CDF),
cut points ``c_1 < ... < c_{K-1}`` (``c_0 = -inf``, ``c_K = +inf``) that carry the location and the
whole shape of the marginal, and slopes ``beta`` on the covariates without the intercept column.
A record in bin ``k`` contributes

.. math:: \\ell_i = \\log\\big[F(c_k - \\eta_i) - F(c_{k-1} - \\eta_i)\\big] \\le 0,

a log probability: every term has one sign whatever the data and the parameters, and no unit (the
public bins carry the scale). The bins take negatives, zeros, heaps, bounded shares, several modes
and wide counts alike; values outside the public bounds are clamped to them, never refused.

The bins (:class:`OrdinalBins`) are public: integers one by one (counts, heaped integers such as
hours), or intervals on a linear, log or log1p scale between public bounds with a zero-width
**point bin** at each bound (a spending column's exact zeros, values clamped to the bounds), or
fine public bins merged into about equal-mass ones from a probability vector that is itself
public or DP (:meth:`OrdinalBins.coarsened`, post-processing). A synthetic value is a bin drawn
from the record's bin probabilities and a value inside it (uniform on the bin's scale, the integer,
or the point itself).

The cut points' prior shrinks a small (or heavily tempered) file towards a smooth marginal. Write the
bin probabilities at ``eta = 0`` as ``pi`` (``c_k = logit(pi_1 + ... + pi_k)``, the parametrisation of
Betancourt's case study "Ordinal Regression", 2019). ``base`` is a public probability vector over the
bins, the ``pm.Data`` container :data:`BASE` (by default proportional to the bins' widths on their
scale; a fit may set it from a DP marginal, post-processing, as the multinomial family's prior mean),
and ``g_k = logit(base_1 + ... + base_k)`` its own cut points. Two priors (``cut_prior``):

* ``"smooth"`` (the default): ``pi = softmax(log p(loc, scale) + dev)`` where ``p(loc, scale)`` has the
  cut points ``scale * (g - loc)`` (the base moved and narrowed or widened on the logit scale: a smooth,
  unimodal two-parameter family over the bins that contains the base at ``loc = 0``, ``scale = 1``),
  ``loc ~ Normal(0, log K)``, ``log scale ~ Normal(1, 1.5)``, and per-bin deviations
  ``dev ~ Normal(0, deviation_sd)`` that make room for several modes and heaps, projected off the
  directions in which the smooth part moves (so that ``loc``, ``scale`` and the deviations do not
  overlap). The smooth family covers the interior bins; each point bin has its own log odds against
  the interior, ``point ~ Normal(log(base_point / base_interior), 2.5)``: an exact value at a bound (a
  spending column's zeros, clamped values) is a mass of its own, not the smooth marginal's tail;
* ``"dirichlet"``: Betancourt's induced Dirichlet, ``pi ~ Dirichlet(concentration * base)``.

Why the smooth prior is the default (measured with nutpie, n = 500, records weighted 0.15 as Censor_ref
weights them at eps = 1, two chains of 300 draws, three data sets each, K from 10 to 102 bins):

* cut points sampled directly under an ordered transform with the induced-Dirichlet density diverged
  (13 to 78 divergent transitions per fit, R-hat up to 1.43, about 20 gradient evaluations per draw);
* ``pi ~ Dirichlet(K * base)`` (one pseudo record per bin) sampled well (no divergences, 7 to 15
  evaluations per draw) but, with public bounds wider than the data, puts its pseudo records into the
  empty bins: the KS distance of a synthetic data set to the data was 0.23 to 0.27 at K = 102 (normal
  data), 0.29 on a heaped count with a bin per integer, 0.13 to 0.16 on a bimodal column at K = 32, and
  it pulled the slope towards 0 (0.7 against 3.0 at K = 102; 0.4 against 1.2 on the count);
* a weaker ``Dirichlet(base)`` (one pseudo record in all) leaves the log probabilities of empty bins with
  exponential tails of scale ``1 / alpha_k`` that NUTS crosses slowly: 110 to 150 evaluations per
  draw, 3 to 8 divergences, bulk ESS 30 to 50 in 600 draws;
* the smooth prior: no divergences, 7 to 9 evaluations per draw, KS 0.06 to 0.08 (K = 102), 0.04 to
  0.12 (the heaped count), 0.09 (bimodal). ``deviation_sd`` 1.0 and 1.5 gave similar KS distances; 2.5
  mixed worse (ESS 35 to 65, 10 to 14 evaluations per draw).

A fit checks R-hat and ESS of ``pi`` and the slopes (:meth:`OrdinalRegression.checked_names`), what the
synthetic data are drawn from.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..validation import DataError
from .base import Draws, ModelFamily, _check_n_coef, _design

if TYPE_CHECKING:  # pragma: no cover
    import pytensor.tensor as pt

__all__ = [
    "OrdinalBins",
    "OrdinalRegression",
    "default_bins",
    "BASE",
    "SCALES",
    "LINKS",
    "MAX_INTEGER_BINS",
    "DEFAULT_BINS",
    "TOLERANCE_MARGIN",
    "ordinal_loglik",
]

#: The ``pm.Data`` container of the cut points' prior base (the bin probabilities it shrinks towards at ``eta = 0``).
BASE = "ordinal_base"
#: How a value is drawn inside an interior bin: uniform on its integers, or on the linear, log or log1p scale.
SCALES = ("integer", "linear", "log", "log1p")
#: The cut points' priors: a smooth marginal with deviations per bin (the default), or a Dirichlet.
CUT_PRIORS = ("smooth", "dirichlet")
#: Mean and sd of the smooth prior's ``log_scale`` (1: the data as spread over the bins as the base is).
LOG_SCALE_PRIOR = (1.0, 1.5)
#: Prior sd of the smooth prior's point bins' log odds against the interior (centred at the base's).
POINT_PRIOR_SD = 2.5
#: The link functions ``F``.
LINKS = ("logit", "probit")
#: Most integers that get one bin each; a wider range of integers gets integer-aligned wider bins.
MAX_INTEGER_BINS = 200
#: Interior bins of a continuous target's default rule (point bins at the bounds come on top).
DEFAULT_BINS = 30
#: Interior bins of a wide count's integer-aligned default bins.
DEFAULT_WIDE_INTEGER_BINS = 100
#: Censor_ref's public tolerance for this family is ``log K + TOLERANCE_MARGIN``
#: (:meth:`OrdinalRegression.reference_tolerance`).
TOLERANCE_MARGIN = 2.5
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
class OrdinalBins:
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
    def coarsened(self, probs, n_bins: int) -> OrdinalBins:
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
        return OrdinalBins(lower=self.lower, upper=self.upper, edges=tuple(edges), scale=self.scale,
                           point_lower=self.point_lower, point_upper=self.point_upper, base=tuple(base / base.sum()))

    # ------------------------------------------------------------------ JSON
    def to_dict(self) -> dict:
        """Plain-JSON contents."""
        return {"lower": self.lower, "upper": self.upper, "edges": list(self.edges), "scale": self.scale,
                "point_lower": self.point_lower, "point_upper": self.point_upper,
                "base": None if self.base is None else list(self.base)}

    @classmethod
    def from_dict(cls, d: Mapping) -> OrdinalBins:
        """Read :meth:`to_dict`'s output back."""
        if isinstance(d, OrdinalBins):
            return d
        if not isinstance(d, Mapping):
            raise DataError(f"ordinal bins must be an OrdinalBins or its to_dict(); got {d!r}.")
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
                 scale: str | None = None) -> OrdinalBins:
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
            return OrdinalBins(lower=a, upper=b, edges=tuple(np.arange(a, b + 2) - 0.5), scale="integer",
                               point_lower=False, point_upper=False)
        if count < 3:  # pragma: no cover - two integers always fit one bin each
            raise DataError("too few integers for integer-aligned bins.")
        m = min(int(n_bins or DEFAULT_WIDE_INTEGER_BINS), count - 2)
        edges = _integer_edges(a + 1, b - 1, m, scale or "linear")
        return OrdinalBins(lower=a, upper=b, edges=tuple(edges), scale="integer")
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
    return OrdinalBins(lower=lo, upper=hi, edges=tuple(edges), scale=scale)


# --------------------------------------------------------------------------------------------
# the record terms
# --------------------------------------------------------------------------------------------


def _log_sigmoid(x):
    return -np.logaddexp(0.0, -x)


def _log1mexp(x):
    """``log(1 - exp(x))`` for ``x <= 0``, stable at both ends."""
    x = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore"):
        return np.where(x > -math.log(2.0), np.log(-np.expm1(x)), np.log1p(-np.exp(x)))


def ordinal_loglik(cuts: np.ndarray, eta: np.ndarray, k: np.ndarray, link: str = "logit") -> np.ndarray:
    """``log[F(c_k - eta) - F(c_{k-1} - eta)]`` in numpy (broadcast), ``c_0 = -inf``, ``c_K = +inf``.

    Parameters
    ----------
    cuts : numpy.ndarray
        Cut points, ``(..., K - 1)``, increasing.
    eta : numpy.ndarray
        Linear predictors, broadcast against ``cuts[..., 0]``.
    k : numpy.ndarray
        Bins ``0, ..., K - 1``, broadcast likewise.
    link : {"logit", "probit"}
    """
    c = np.asarray(cuts, dtype=float)
    inf = np.full(c.shape[:-1] + (1,), np.inf)
    ext = np.concatenate([-inf, c, inf], axis=-1)
    kk = np.asarray(k, dtype=np.int64)
    shape = np.broadcast_shapes(ext.shape[:-1], np.shape(eta), kk.shape)
    ext = np.broadcast_to(ext, shape + ext.shape[-1:])
    kk = np.broadcast_to(kk, shape)[..., None]
    eta = np.broadcast_to(np.asarray(eta, dtype=float), shape)
    a = np.take_along_axis(ext, kk, -1)[..., 0] - eta
    b = np.take_along_axis(ext, kk + 1, -1)[..., 0] - eta
    with np.errstate(invalid="ignore"):
        if link == "logit":
            return _log_sigmoid(b) + _log_sigmoid(-a) + _log1mexp(a - b)
        from scipy.special import log_ndtr

        lower_tail = _safe_diff(log_ndtr(b), log_ndtr(a))
        upper_tail = _safe_diff(log_ndtr(-a), log_ndtr(-b))
        return np.where(a + b <= 0, lower_tail, upper_tail)


def _safe_diff(log_hi, log_lo):
    """``log(exp(log_hi) - exp(log_lo))`` for ``log_lo <= log_hi``."""
    with np.errstate(invalid="ignore"):
        d = np.where(np.isneginf(log_lo), -np.inf, log_lo - log_hi)
    return log_hi + _log1mexp(d)


def _pt_loglik(c, eta, k, link: str):
    """The record terms in PyTensor (see :func:`ordinal_loglik`)."""
    import pytensor.tensor as pt

    big = pt.as_tensor_variable(np.array([np.inf]))
    ext = pt.concatenate([-big, c, big])
    a = ext[k] - eta
    b = ext[k + 1] - eta
    if link == "logit":
        return -pt.softplus(-b) - pt.softplus(a) + pt.log1mexp(a - b)
    from pymc.distributions.dist_math import normal_lcdf

    def diff(hi, lo):  # log(exp(hi) - exp(lo)), lo <= hi, lo = -inf allowed
        return hi + pt.log1mexp(pt.switch(pt.isinf(lo), -np.inf, lo - hi))

    lower_tail = diff(normal_lcdf(0.0, 1.0, b), normal_lcdf(0.0, 1.0, a))
    upper_tail = diff(normal_lcdf(0.0, 1.0, -a), normal_lcdf(0.0, 1.0, -b))
    return pt.switch(pt.le(a + b, 0.0), lower_tail, upper_tail)


# --------------------------------------------------------------------------------------------
# the family
# --------------------------------------------------------------------------------------------


def _np_logit_cumsum(log_p: np.ndarray) -> np.ndarray:
    """``logit(p_1 + ... + p_k)`` for ``k = 1, ..., K - 1`` from ``log p`` (last axis), both sums taken in log space
    (no bin's share underflows, however small)."""
    lp = np.asarray(log_p, dtype=float)
    head = np.logaddexp.accumulate(lp, axis=-1)[..., :-1]
    tail = np.logaddexp.accumulate(lp[..., ::-1], axis=-1)[..., ::-1][..., 1:]
    return head - tail


def _pt_logit_cumsum(log_p, K: int):
    """:func:`_np_logit_cumsum` in PyTensor, in ``O(K)``: the partial sums of ``exp(log p - max)``, each at least
    ``1e-300`` (a bin below ``e^-690`` of the largest is given that much: the cut points stay those of a
    probability distribution, whose record terms are log probabilities <= 0)."""
    import pytensor.tensor as pt

    e = pt.exp(log_p - pt.max(log_p))
    head = pt.cumsum(e)[:-1]
    tail = pt.cumsum(e[::-1])[::-1][1:]  # the upper sum taken on its own: no 1 - head cancellation
    return pt.log(head + 1e-300) - pt.log(tail + 1e-300)


def _smooth_parts(xp, g, loc, log_scale, dev, K: int, link: str):
    """The smooth prior's log bin probabilities, in numpy (``xp=np``, leading draw axis) or PyTensor (``xp=pt``).

    ``log pi = log_softmax(smooth + P dev)``: ``smooth`` are the log probabilities of the cut points
    ``exp(log_scale) * (g - loc)``, and ``P`` projects ``dev`` off the constant (which the softmax ignores) and off
    the two directions in which ``smooth`` moves with ``loc`` and ``log_scale`` at the current point (their
    analytic tangents ``d log pi_k / d theta``), so that no pattern of deviations mimics a move of the smooth part:
    without the projection two directions of ``(loc, log_scale, dev)`` are set by the prior alone and curve, and
    the sampler diverged there (measured on an unweighted fit of 300 records: 3 to 10 divergences in 1,000 draws,
    bulk ESS of ``loc`` and ``log_scale`` 150 to 360; with it 0 to 2, and 900 to 1,100).
    """
    np_ = xp is np
    if np_:
        from scipy.special import log_expit, log_softmax

        exp = np.exp

        loc = np.asarray(loc, dtype=float).reshape(-1, 1)
        scale = np.exp(np.asarray(log_scale, dtype=float).reshape(-1, 1))
        dev = np.asarray(dev, dtype=float).reshape(-1, K)
        c = scale * (np.asarray(g)[None, :] - loc)
        smooth = ordinal_loglik(c[:, None, :], 0.0, np.arange(K)[None, :], link)
        cat = (lambda parts: np.concatenate(parts, axis=-1))
        pad = (lambda v: np.full(c.shape[:-1] + (1,), v))
        dot = (lambda a, b: np.sum(a * b, axis=-1, keepdims=True))
        lf = log_expit(c) + log_expit(-c) if link == "logit" else -0.5 * c**2 - 0.5 * math.log(2 * math.pi)
    else:
        import pytensor.tensor as pt

        scale = pt.exp(log_scale)
        c = scale * (g - loc)
        smooth = _pt_loglik(c, 0.0, pt.arange(K), link)
        cat = (lambda parts: pt.concatenate(parts, axis=-1))
        pad = (lambda v: pt.as_tensor_variable(np.array([v])))
        dot = (lambda a, b: pt.sum(a * b, axis=-1, keepdims=True))
        lf = -pt.softplus(-c) - pt.softplus(c) if link == "logit" else -0.5 * c**2 - 0.5 * math.log(2 * math.pi)
        log_softmax, exp = pt.special.log_softmax, pt.exp
    lf = cat([pad(-np.inf), lf, pad(-np.inf)])  # log F'(c) at c_0 = -inf, ..., c_K = +inf
    cc = cat([pad(0.0), c, pad(0.0)])  # c F'(c) is 0 at both ends
    with np.errstate(over="ignore", invalid="ignore"):
        r_hi, r_lo = exp(lf[..., 1:] - smooth), exp(lf[..., :-1] - smooth)  # F'(c_k) / pi_k, F'(c_{k-1}) / pi_k
    t_loc = r_lo - r_hi  # d log pi_k / d loc, over the scale (a constant factor)
    t_scale = cc[..., 1:] * r_hi - cc[..., :-1] * r_lo  # d log pi_k / d log_scale
    q0 = np.full(K, 1.0 / math.sqrt(K))
    v1 = t_loc - dot(t_loc, q0) * q0
    q1 = v1 / (dot(v1, v1) + 1e-12) ** 0.5
    v2 = t_scale - dot(t_scale, q0) * q0 - dot(t_scale, q1) * q1
    q2 = v2 / (dot(v2, v2) + 1e-12) ** 0.5
    d = dev - dot(dev, q0) * q0 - dot(dev, q1) * q1 - dot(dev, q2) * q2
    return log_softmax(smooth + d, axis=-1)


def _np_smooth_log_pi(g, loc, log_scale, dev, link: str) -> np.ndarray:
    """:func:`_smooth_parts` in numpy: ``(S, K)`` from draws."""
    g = np.asarray(g, dtype=float)
    return _smooth_parts(np, g, loc, log_scale, dev, g.size + 1, link)


def _pt_smooth_log_pi(g, loc, log_scale, dev, K: int, link: str):
    """:func:`_smooth_parts` in PyTensor."""
    import pytensor.tensor as pt

    return _smooth_parts(pt, g, loc, log_scale, dev, K, link)


def _as_bins(value) -> OrdinalBins:
    if value is None:
        raise DataError("the ordinal model needs public `bins`: an OrdinalBins (e.g. dpsynth.models.ordinal."
                        "default_bins('continuous', lower, upper)) or its to_dict(); through the Synthesizer, give "
                        "public bounds=(lower, upper).")
    return OrdinalBins.from_dict(value)


@dataclass(frozen=True)
class OrdinalRegression(ModelFamily):
    """Cumulative-link (ordinal) regression of a numeric variable's public bin on public covariates.

    The semiparametric transformation model of Liu, Shepherd, Li and Harrell (2017): each record's bin
    ``k`` has probability ``F(c_k - eta_i) - F(c_{k-1} - eta_i)`` with ``eta_i = X_i beta`` on the
    covariates without the intercept column (the cut points carry the location). Every record term is a log
    probability ``<= 0`` (one-signed, unit-free); the saturated reference is 0 (:meth:`reference_loglik`).

    Priors. The slopes: ``beta_j ~ Normal(0, slope_sd / sqrt(p - 1))`` as in
    :class:`~dpsynth.models.LognormalRegression`. The cut points: the bin probabilities at ``eta = 0``
    (``pi``, kept with every draw), under the smooth prior (the default) or Betancourt's induced
    Dirichlet (see the module's notes); their centre is the ``pm.Data`` :data:`BASE` (default
    :meth:`OrdinalBins.default_base`; a fit may pass a public or DP marginal as ``data={BASE: ...}``).

    Parameters
    ----------
    bins : OrdinalBins or dict
        The public bins (a dict is read by :meth:`OrdinalBins.from_dict`).
    n_coef : int
        Columns of the design (intercept included; the intercept is not used).
    slope_sd : float
        Prior spread of the slopes together.
    cut_prior : {"smooth", "dirichlet"}
        The cut points' prior.
    deviation_sd : float
        The smooth prior's sd of each bin's log-probability deviation from the smooth marginal.
    concentration : float, optional
        The Dirichlet's total concentration (pseudo records of the base); default ``K`` (one per bin).
    link : {"logit", "probit"}
        ``F``: logistic (proportional odds, the default) or standard normal.

    Examples
    --------
    >>> import numpy as np
    >>> fam = OrdinalRegression(bins=default_bins("continuous", -10.0, 10.0, n_bins=8))
    >>> fam.n_bins
    10
    >>> draws = fam.public_start()
    >>> x = fam.simulate({k: np.repeat(v, 5, axis=0) for k, v in draws.items()}, np.random.default_rng(1))
    >>> bool(((x >= -10) & (x <= 10)).all())
    True
    """

    bins: OrdinalBins | None = None
    n_coef: int = 1
    slope_sd: float = 1.0
    cut_prior: str = "smooth"
    deviation_sd: float = 1.5
    concentration: float | None = None
    link: str = "logit"
    name: str = "ordinal"
    one_signed = True  # log probabilities are <= 0
    continuous = False  # a pmf over public bins: no unit, no offset
    takes_covariates = True
    design_field = "n_coef"
    placeholder = 0.0  # any finite value is clamped into a bin
    reference_is_max = True  # a record's largest possible term is 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "bins", _as_bins(self.bins))
        if self.cut_prior not in CUT_PRIORS:
            raise DataError(f"`cut_prior` must be one of {CUT_PRIORS}; got {self.cut_prior!r}.")
        if not (isinstance(self.deviation_sd, (int, float)) and 0 < self.deviation_sd < np.inf):
            raise DataError(f"`deviation_sd` must be a finite number > 0; got {self.deviation_sd!r}.")
        if self.link not in LINKS:
            raise DataError(f"`link` must be one of {LINKS}; got {self.link!r}.")
        if isinstance(self.n_coef, bool) or not isinstance(self.n_coef, (int, np.integer)) or self.n_coef < 1:
            raise DataError(f"`n_coef` must be a positive integer; got {self.n_coef!r}.")
        if not (isinstance(self.slope_sd, (int, float)) and self.slope_sd > 0):
            raise DataError(f"`slope_sd` must be a number > 0; got {self.slope_sd!r}.")
        if self.concentration is not None and not (isinstance(self.concentration, (int, float))
                                                   and 0 < self.concentration < np.inf):
            raise DataError(f"`concentration` must be a finite number > 0 (pseudo records); got "
                            f"{self.concentration!r}.")

    # ------------------------------------------------------------------ sizes and priors
    @property
    def n_bins(self) -> int:
        """``K``."""
        return self.bins.n_bins

    @property
    def total_concentration(self) -> float:
        """The Dirichlet's total concentration (``concentration``, default ``K``)."""
        return float(self.n_bins if self.concentration is None else self.concentration)

    def loc_prior_sd(self) -> float:
        """The smooth prior's ``loc`` sd, ``log K``: about the half-range of the base's cut points ``g``."""
        return math.log(self.n_bins)

    def slope_prior_sd(self) -> float:
        """Each slope's prior sd, ``slope_sd / sqrt(p - 1)``."""
        return float(self.slope_sd) / math.sqrt(max(self.n_coef - 1, 1))

    def checked_names(self, param_names: list[str]) -> list[str]:
        """``pi`` (the bin probabilities at ``eta = 0``) and the slopes: what :meth:`simulate` draws from. Of the
        smooth prior's ``dev``, the parts along the directions projected out (the constant and the smooth part's
        two tangents) never reach the likelihood: they are drawn from the prior alone, and ``pi`` does not depend
        on them."""
        return ["pi", *(["beta"] if "beta" in param_names else [])]

    def reference_tolerance(self) -> float:
        """Censor_ref's public tolerance ``log K + 2.5``: a record whose term is near ``-log K`` (an even marginal)
        stays inside its window ``[-M, 0]`` with ``alpha = M / tolerance``."""
        return math.log(self.n_bins) + TOLERANCE_MARGIN

    # ------------------------------------------------------------------ data
    def check_data(self, x, covariates=None):
        arr, cov = super().check_data(x, covariates)
        _check_n_coef(cov, self.n_coef, self.name)
        return arr, cov

    def data_values(self, x: np.ndarray, covariates: np.ndarray | None) -> dict[str, np.ndarray]:
        return {"bin": self.bins.index(x), "X": _design(covariates, x.shape[0]), BASE: self.bins.default_base()}

    def record_logp(self, data: Mapping[str, pt.TensorVariable]) -> pt.TensorVariable:
        import pymc as pm
        import pytensor.tensor as pt

        K = self.n_bins
        base = pt.specify_shape(data[BASE], (K,))  # a static shape for the sampler's start
        if self.cut_prior == "dirichlet":
            pi = pm.Dirichlet("pi", a=self.total_concentration * base, shape=K)
            log_pi = pt.log(pi)
        else:
            inner, points = np.flatnonzero(~self.bins.is_point), np.flatnonzero(self.bins.is_point)
            m = inner.size
            log_inner = pt.log(base[inner]) - pt.log(pt.sum(base[inner]))
            g = _pt_logit_cumsum(log_inner, m)  # the base's own cut points over the interior bins
            loc = pm.Normal("loc", 0.0, self.loc_prior_sd(), shape=())
            log_scale = pm.Normal("log_scale", LOG_SCALE_PRIOR[0], LOG_SCALE_PRIOR[1], shape=())
            dev = pm.Normal("dev", 0.0, self.deviation_sd, shape=m)
            log_pi = _pt_smooth_log_pi(g, loc, log_scale, dev, m, self.link)  # over the interior, sums to 1
            if points.size:  # each point bin's log odds against the interior, centred at the base's
                centre = pt.log(base[points]) - pt.log(pt.sum(base[inner]))
                point = pm.Normal("point", centre, POINT_PRIOR_SD, shape=points.size)
                parts = ([point[:1]] if self.bins.point_lower else []) + [log_pi] + (
                    [point[-1:]] if self.bins.point_upper else [])
                log_pi = pt.special.log_softmax(pt.concatenate(parts))
            pm.Deterministic("pi", pt.exp(log_pi))
        cuts = _pt_logit_cumsum(log_pi, K)
        if self.n_coef > 1:
            beta = pm.Normal("beta", 0.0, self.slope_prior_sd(), shape=self.n_coef - 1)
            eta = pt.dot(data["X"][:, 1:], beta)
        else:
            eta = pt.zeros(data["bin"].shape[0])
        k = pt.cast(data["bin"], "int64")
        return _pt_loglik(cuts, eta, k, self.link)

    # ------------------------------------------------------------------ draws
    def log_probs(self, draws: Draws, base: np.ndarray | None = None) -> np.ndarray:
        """The log bin probabilities at ``eta = 0``, ``(S, K)``: of the draws' ``pi`` (kept with every fit), else of the
        smooth prior's ``loc``, ``log_scale`` and ``dev`` with ``base`` (default the public base), in log space."""
        with np.errstate(divide="ignore"):
            if "pi" in draws:
                return np.log(np.asarray(draws["pi"], dtype=float).reshape(-1, self.n_bins))
            b = self.bins.default_base() if base is None else np.asarray(base, dtype=float)
            inner = ~self.bins.is_point
            g = _np_logit_cumsum(np.log(b[inner] / b[inner].sum()))
        log_pi = _np_smooth_log_pi(g, draws["loc"], draws["log_scale"], draws["dev"], self.link)
        if not self.bins.is_point.any():
            return log_pi
        from scipy.special import log_softmax

        point = np.asarray(draws["point"], dtype=float).reshape(log_pi.shape[0], -1)
        parts = ([point[:, :1]] if self.bins.point_lower else []) + [log_pi] + (
            [point[:, -1:]] if self.bins.point_upper else [])
        return log_softmax(np.concatenate(parts, axis=1), axis=1)

    def probs(self, draws: Draws, base: np.ndarray | None = None) -> np.ndarray:
        """The bin probabilities at ``eta = 0``, ``(S, K)`` (:meth:`log_probs`)."""
        return np.exp(self.log_probs(draws, base))

    def cuts(self, draws: Draws) -> np.ndarray:
        """The cut points ``(S, K - 1)`` of the draws (:meth:`log_probs`)."""
        return _np_logit_cumsum(self.log_probs(draws))

    def _eta(self, draws: Draws, covariates: np.ndarray | None, n: int, paired: bool) -> np.ndarray:
        if self.n_coef == 1:
            return np.zeros(n) if paired else np.zeros((len(next(iter(draws.values()))), n))
        X = _design(covariates, n)[:, 1:]
        beta = np.asarray(draws["beta"], dtype=float).reshape(-1, self.n_coef - 1)
        return np.einsum("ij,ij->i", X, beta) if paired else beta @ X.T

    def bin_probs(self, draws: Draws, covariates: np.ndarray | None = None) -> np.ndarray:
        """Each row's bin probabilities at its draw (row i of the draws for record i), ``(n, K)``."""
        c = self.cuts(draws)
        eta = self._eta(draws, covariates, c.shape[0], paired=True)
        F = self._cdf(c - eta[:, None])
        cum = np.concatenate([np.zeros((c.shape[0], 1)), F, np.ones((c.shape[0], 1))], axis=1)
        return np.maximum(np.diff(cum, axis=1), 0.0)

    def _cdf(self, z):
        from scipy import special

        return special.expit(z) if self.link == "logit" else special.ndtr(z)

    def _quantile(self, u):
        from scipy import special

        return special.logit(u) if self.link == "logit" else special.ndtri(u)

    def simulate(self, draws: Draws, rng: np.random.Generator, covariates: np.ndarray | None = None) -> np.ndarray:
        """One value per row of the draws: a bin from the row's bin probabilities (by inverting ``F``), then a
        value inside it (:meth:`OrdinalBins.values`)."""
        c = self.cuts(draws)
        n = c.shape[0]
        eta = self._eta(draws, covariates, n, paired=True)
        z = self._quantile(rng.random(n))  # y* = eta + z; bin k when c_{k-1} < y* <= c_k
        k = np.sum(c < (eta + z)[:, None], axis=1)
        return self.bins.values(k, rng)

    # ------------------------------------------------------------------ references and starts
    def reference_loglik(self, x: np.ndarray, covariates: np.ndarray | None = None) -> np.ndarray:
        """0 for every record: a log probability's largest possible value (the saturated pmf), so Censor_ref's window
        is ``[-M, 0]``."""
        return np.zeros(np.asarray(x).shape[0])

    def public_start(self) -> dict[str, np.ndarray]:
        """The public base at ``eta = 0`` (``loc = 0``, ``log_scale = 0``, no deviation), slopes 0: every free
        parameter, leading dimension 1."""
        if self.cut_prior == "dirichlet":
            out = {"pi": self.bins.default_base()[None, :]}
        else:
            b, pts = self.bins.default_base(), self.bins.is_point
            out = {"loc": np.zeros(1), "log_scale": np.zeros(1), "dev": np.zeros((1, int((~pts).sum())))}
            if pts.any():
                out["point"] = (np.log(b[pts]) - np.log(b[~pts].sum()))[None, :]
        if self.n_coef > 1:
            out["beta"] = np.zeros((1, self.n_coef - 1))
        return out

    def public_reference(self) -> dict[str, np.ndarray]:
        """The public base at ``eta = 0``, slopes 0: a reference that needs nothing of the data."""
        return self.public_start()
