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

The bins (:class:`dpsynth.bins.PublicBins`) are public: integers one by one (counts, heaped integers such as
hours), or intervals on a linear, log or log1p scale between public bounds with a zero-width
**point bin** at each bound (a spending column's exact zeros, values clamped to the bounds), or
fine public bins merged into about equal-mass ones from a probability vector that is itself
public or DP (:meth:`dpsynth.bins.PublicBins.coarsened`, post-processing). A synthetic value is a bin drawn
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

from ..bins import PublicBins
from ..validation import DataError
from .base import Draws, ModelFamily, _check_n_coef, _design

if TYPE_CHECKING:  # pragma: no cover
    import pytensor.tensor as pt

__all__ = [
    "FAMILY",
    "OrdinalRegression",
    "BASE",
    "LINKS",
    "TOLERANCE_MARGIN",
    "ordinal_loglik",
]

#: The ``pm.Data`` container of the cut points' prior base (the bin probabilities it shrinks towards at ``eta = 0``).
BASE = "ordinal_base"
#: The cut points' priors: a smooth marginal with deviations per bin (the default), or a Dirichlet.
CUT_PRIORS = ("smooth", "dirichlet")
#: Mean and sd of the smooth prior's ``log_scale`` (1: the data as spread over the bins as the base is).
LOG_SCALE_PRIOR = (1.0, 1.5)
#: Prior sd of the smooth prior's point bins' log odds against the interior (centred at the base's).
POINT_PRIOR_SD = 2.5
#: The link functions ``F``.
LINKS = ("logit", "probit")
#: Censor_ref's public tolerance for this family is ``log K + TOLERANCE_MARGIN``
#: (:meth:`OrdinalRegression.reference_tolerance`).
TOLERANCE_MARGIN = 2.5


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


def _as_bins(value) -> PublicBins:
    if value is None:
        raise DataError("the ordinal model needs public `bins`: a PublicBins (e.g. dpsynth.bins."
                        "default_bins('continuous', lower, upper)) or its to_dict(); through the Synthesizer, give "
                        "public bounds=(lower, upper).")
    return PublicBins.from_dict(value)


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
    :meth:`PublicBins.default_base`; a fit may pass a public or DP marginal as ``data={BASE: ...}``).

    Parameters
    ----------
    bins : PublicBins or dict
        The public bins (a dict is read by :meth:`PublicBins.from_dict`).
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
    >>> from dpsynth.bins import default_bins
    >>> fam = OrdinalRegression(bins=default_bins("continuous", -10.0, 10.0, n_bins=8))
    >>> fam.n_bins
    10
    >>> draws = fam.public_start()
    >>> x = fam.simulate({k: np.repeat(v, 5, axis=0) for k, v in draws.items()}, np.random.default_rng(1))
    >>> bool(((x >= -10) & (x <= 10)).all())
    True
    """

    bins: PublicBins | None = None
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
        value inside it (:meth:`PublicBins.values`)."""
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


FAMILY = OrdinalRegression
