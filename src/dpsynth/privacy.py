"""Privacy accounting: by-record and overall Lipschitz bounds, epsilon and censoring counts.

All functions reduce an ``S x n`` matrix of record log-likelihoods (one row per posterior draw,
one column per record) to per-record vectors right away; the matrix itself is never stored.

Neighbouring data sets
----------------------
Every epsilon names the neighbour relation it refers to:

* ``"remove"``: the data sets differ by one record removed (or added); the leave-one-out
  sensitivity of the re-weighting paper [HSW22, Section 1].
* ``"replace"``: the data sets have the same size and differ in one record (the censoring paper's
  Definition 1).

The window, not its place. Suppose every record's term of the log pseudo likelihood lies in a
window ``[a_i, a_i + W]`` of width ``W`` whose place ``a_i`` depends only on that record and public
quantities. With one record ``j`` removed, the log ratio of the two pseudo-posterior densities is
``g_j(theta) - log E'[exp(g_j)]``, and both terms lie in the window, so it is at most ``W``: ``eps = W``.
With one record replaced, ``h = g_j - g'_j`` lies in a window of width ``2W`` and the log ratio
``h(theta) - log E'[exp(h)]`` is at most ``2W``: ``eps = 2W``. Terms bounded by ``Delta`` in absolute
value have ``W = 2 Delta`` (``eps = 2 Delta`` removed, ``4 Delta`` replaced); terms of one sign
(probability mass functions, whose log probabilities are <= 0, with weights in [0, 1]) lie in
``[-Delta, 0]``: ``W = Delta``, so ``eps = Delta`` removed and ``2 Delta`` replaced. A public
constant, a public transform's Jacobian or the record's own term at a public parameter may be
subtracted before the clamp (it moves the window, not its width); such a reference makes the
terms two-signed again, unless it is each record's largest term (a saturated reference).

Two functions here are the only places these rules are written: :func:`is_one_signed` decides
whether the terms have one sign, and :func:`censoring_bound` gives the clamp ``M`` whose window has
width ``eps`` (:func:`window_width` is its inverse). Every mechanism, the fit's report and the check
of a loaded synthesizer call them (``tests/test_privacy.py`` checks that no other module defines
them again).

The book states every epsilon under removal and reports the replacement figure beside it.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np

from .validation import DataError, as_weights, check_positive, check_probability

__all__ = [
    "RecordBounds",
    "chunked_record_bounds",
    "PrivacyReport",
    "record_bounds",
    "privacy_report",
    "calibrated_report",
    "guarantee_type",
    "check_guarantee",
    "log_interval_prob",
    "NEIGHBOURS",
    "GUARANTEES",
    "CENSOR_TOL",
    "check_neighbours",
    "eps_from_delta",
    "window_width",
    "censoring_bound",
    "is_one_signed",
    "neighbours_phrase",
]

#: Neighbour relations: one record removed (or added), or one record replaced.
NEIGHBOURS = ("remove", "replace")
#: Guarantee types: not private, asymptotic DP (local bound only), strict DP.
GUARANTEES = ("none", "aDP", "DP")

#: Numerical slack allowed when checking ``Delta <= M`` for censored fits (the one place it is set).
CENSOR_TOL = 1e-9


def check_neighbours(neighbours: str) -> str:
    """Return ``neighbours`` after checking it is ``"remove"`` or ``"replace"``."""
    if not isinstance(neighbours, str) or neighbours not in NEIGHBOURS:
        raise DataError(
            f"`neighbours` must be 'remove' (one record removed) or 'replace' (one record replaced); "
            f"got {neighbours!r}."
        )
    return neighbours


def neighbours_phrase(neighbours: str) -> str:
    """Plain words for a neighbour relation, e.g. ``"one record removed"``."""
    return {"remove": "one record removed", "replace": "one record replaced"}[check_neighbours(neighbours)]


def is_one_signed(family, *, reference=None, reference_is_max: bool = False, offset: float | None = None) -> bool:
    """Whether every record term of a (censored) likelihood has one sign whatever the data: the one rule.

    The terms are ``<= 0`` when the family's log-likelihoods are (a probability mass function: its
    trait ``one_signed``), nothing is subtracted that may change their sign: no public ``offset``,
    and no ``reference``, unless the reference is each record's largest term (``reference_is_max``,
    a saturated reference: the differences stay ``<= 0``).

    Parameters
    ----------
    family : ModelFamily or None
        The model family (its trait ``one_signed``); None for a model-free fit.
    reference : object, optional
        What is subtracted from each record's term before the clamp (an array, or a saved report's
        description of it); None for nothing.
    reference_is_max : bool
        Whether ``reference`` is each record's largest term.
    offset : float, optional
        A public constant subtracted from each record's log-likelihood.

    Returns
    -------
    bool

    Examples
    --------
    >>> from dpsynth.models import PoissonRegression
    >>> is_one_signed(PoissonRegression()), is_one_signed(PoissonRegression(), reference=[0.0])
    (True, False)
    >>> is_one_signed(PoissonRegression(), reference=[0.0], reference_is_max=True)
    True
    """
    if family is None or not bool(getattr(family, "one_signed", False)) or offset is not None:
        return False
    return reference is None or bool(reference_is_max)


def censoring_bound(eps: float, one_signed: bool = False) -> float:
    """The clamp ``M`` whose window has width ``eps``: the one place it is computed.

    ``eps / 2`` for terms clamped to ``[-M, M]``; ``eps`` for one-signed terms (:func:`is_one_signed`),
    clamped to ``[-M, 0]``. Either way one release is ``eps``-DP with one record removed and ``2 eps``
    with one replaced (the module docstring: "the window, not its place").

    Examples
    --------
    >>> censoring_bound(2.0), censoring_bound(2.0, one_signed=True)
    (1.0, 2.0)
    """
    return float(eps) if one_signed else float(eps) / 2.0


def window_width(delta: float, one_signed: bool = False) -> float:
    """Width ``W`` of the window of terms bounded by ``delta``: the inverse of :func:`censoring_bound` (``2 delta``,
    or ``delta`` when they have one sign)."""
    return float(delta) / censoring_bound(1.0, one_signed)


def eps_from_delta(delta: float, neighbours: str = "remove", *, one_signed: bool = False) -> float:
    """Epsilon of a pseudo posterior whose record terms all lie in ``[-delta, delta]`` (or ``[-delta, 0]``).

    Parameters
    ----------
    delta : float
        Lipschitz bound (for a censored likelihood, the bound ``M``).
    neighbours : {"remove", "replace"}
        Neighbour relation (see the module docstring).
    one_signed : bool
        Whether every record term has one sign whatever the data (discrete models: log
        probabilities are <= 0): the window is ``[-delta, 0]``, of width ``delta``.

    Returns
    -------
    float
        The window's width ``W`` under removal and ``2W`` under replacement: ``2 delta`` and
        ``4 delta``, or ``delta`` and ``2 delta`` if one-signed.
    """
    check_neighbours(neighbours)
    d = float(delta)
    if np.isnan(d) or d < 0:
        raise DataError(f"`delta` must be >= 0; got {delta!r}.")
    if not isinstance(one_signed, (bool, np.bool_)):
        raise DataError(f"`one_signed` must be True or False; got {one_signed!r}.")
    w = window_width(d, bool(one_signed))
    return w if neighbours == "remove" else 2.0 * w


@dataclass(frozen=True)
class RecordBounds:
    """Per-record reductions of one fit's record log-likelihood matrix.

    Attributes
    ----------
    delta_i : numpy.ndarray
        By-record Lipschitz bound: max over retained draws of the absolute contribution as it
        enters the likelihood (weighted, shifted by a range term if any, clamped if censored).
    abs_loglik : numpy.ndarray
        ``max_s |f_theta_s(x_i)|`` over retained draws, unweighted and unclamped (``inf`` where the
        log-likelihood is not finite); the input of Lipschitz weights.
    n_censored : int
        Records whose uncensored contribution exceeds M in absolute value at one or more
        retained draws (0 when there is no censoring).
    n_draws : int
        Draws retained after the ``draw_quantile`` rule.
    draw_quantile : float
        The quantile rule applied.
    censored_draw_share : float
        The share of records outside their window at a typical draw (the mean over retained draws): a
        fit that "censored every record at some draw" can keep nearly every record at the draws it
        releases when its posterior is wide; this says how much of the data a draw actually saw.
    """

    delta_i: np.ndarray
    abs_loglik: np.ndarray
    n_censored: int
    n_draws: int
    draw_quantile: float = 1.0
    censored_draw_share: float = 0.0

    @property
    def delta(self) -> float:
        """Overall (local) Lipschitz bound ``max_i delta_i``."""
        return float(np.max(self.delta_i))


def check_guarantee(guarantee: str | None) -> str | None:
    """Return ``guarantee`` after checking it is one of :data:`GUARANTEES` (or ``None``)."""
    if guarantee is not None and guarantee not in GUARANTEES:
        raise DataError(f"`guarantee` must be one of {GUARANTEES} (or None); got {guarantee!r}.")
    return guarantee


def guarantee_type(censored: bool, public_weights: bool) -> str:
    """Guarantee of a weighted pseudo posterior: strict ``"DP"`` only if censored *and* its
    weights do not depend on the confidential data (fixed, public or from other data);
    ``"aDP"`` otherwise.
    """
    return "DP" if censored and public_weights else "aDP"


@dataclass(frozen=True)
class PrivacyReport:
    """The privacy numbers a mechanism reports, for one posterior draw.

    Attributes
    ----------
    delta : float
        Local Lipschitz bound: the largest absolute record term at the retained draws.
    guarantee : str or None
        ``"none"``, ``"aDP"`` (local bound only) or ``"DP"`` (strict, for every data set), as the
        synthesizer registry (:mod:`dpsynth.registry`) states it; ``None`` for a bare fit, whose
        guarantee depends on where its weights came from.
    n_censored : int
        Censoring count (0 for uncensored mechanisms).
    bound : float
        Censoring bound M (``inf`` when not censored).
    one_signed : bool
        Whether every record term has one sign whatever the data (discrete models).
    extra : dict
        Mechanism-specific numbers (e.g. records truncated by Weighted-e, the k of re-weighting).
    calibrated : tuple of float, optional
        ``(eps with one record removed, eps with one record replaced)`` of a mechanism whose
        epsilon is set by its noise (a perturbed histogram, DP quantiles) rather than by a
        Lipschitz bound; ``delta`` is then NaN.
    composed : tuple of float
        ``(removed, replaced)`` epsilon of a DP release the mechanism made before the fit and
        composes with it (the unit-free censored likelihood's reference), added to every figure.
    """

    delta: float
    guarantee: str | None
    n_censored: int = 0
    bound: float = float("inf")
    one_signed: bool = False
    extra: dict = field(default_factory=dict)
    calibrated: tuple[float, float] | None = None
    composed: tuple[float, float] = (0.0, 0.0)

    def epsilon(self, neighbours: str = "remove") -> float:
        """Epsilon of one released draw under ``neighbours`` (``"remove"`` or ``"replace"``).

        A censored likelihood caps every term at ``M`` for *every* data set, so its figure is
        computed from ``M`` (``2M`` under removal), not from this data set's ``Delta <= M``. An
        uncensored fit has only its local bound: the figure is computed from ``Delta`` and
        holds for this data set alone (``eps_x`` of the papers). A noise-calibrated mechanism
        reports its calibration.
        """
        i = 0 if check_neighbours(neighbours) == "remove" else 1
        if self.calibrated is not None:
            return float(self.calibrated[i])
        window = eps_from_delta(self.bound if self.censored else self.delta, neighbours, one_signed=self.one_signed)
        return float(self.composed[i]) + window

    @property
    def eps(self) -> float:
        """Epsilon of one released draw with one record removed: the window's width (``2M``, ``2 Delta``, or half)."""
        return self.epsilon("remove")

    @property
    def eps_replace(self) -> float:
        """Epsilon of one released draw with one record replaced (twice :attr:`eps` unless one-signed)."""
        return self.epsilon("replace")

    @property
    def eps_local(self) -> float:
        """Local ``eps_x`` of this data set (removal) from its ``Delta``, censored or not (NaN without a Delta)."""
        if np.isnan(self.delta):
            return float("nan")
        return eps_from_delta(self.delta, "remove", one_signed=self.one_signed)

    @property
    def censored(self) -> bool:
        """Whether the likelihood was censored."""
        return bool(np.isfinite(self.bound))

    def statement(self, draws: int = 1) -> str:
        """One sentence stating the guarantee with both neighbour relations.

        Parameters
        ----------
        draws : int
            Distinct posterior draws released (sequential composition multiplies epsilon).
        """
        m = int(draws)
        if m < 1:
            raise DataError(f"`draws` must be an integer >= 1; got {draws!r}.")
        kind = {"none": "not private", "aDP": "asymptotic DP (local bound only)", "DP": "strict DP",
                None: "guarantee not stated"}[self.guarantee]
        per = "" if m == 1 else f" ({m} draws x {self.eps:.3g})"
        out = (f"{kind}: eps = {m * self.eps:.3g} with one record removed{per}, "
               f"{m * self.eps_replace:.3g} with one record replaced")
        if self.calibrated is None:
            out += f"; Delta = {self.delta:.3g}" + (f", censoring bound M = {self.bound:.3g}" if self.censored else "")
        return out


def privacy_report(
    bounds: RecordBounds, bound: float | None = None, *, guarantee: str | None = None, one_signed: bool = False,
    **extra,
) -> PrivacyReport:
    """Summarise :class:`RecordBounds` as a :class:`PrivacyReport`.

    Parameters
    ----------
    bounds : RecordBounds
        By-record bounds of the fit.
    bound : float, optional
        Censoring bound M (``None`` or ``inf``: not censored).
    guarantee : {"none", "aDP", "DP"}, optional
        The mechanism's guarantee from the registry; ``None`` for a bare fit.
    one_signed : bool
        Whether every record term has one sign (see :func:`eps_from_delta`).
    **extra
        Mechanism-specific numbers.

    Raises
    ------
    AssertionError
        If a censored fit reports ``Delta > M`` (a bug, not a data problem), or a ``"DP"``
        guarantee is claimed for an uncensored fit.
    """
    censored = bound is not None and np.isfinite(bound)
    delta = bounds.delta
    check_guarantee(guarantee)
    if censored and not delta <= bound + CENSOR_TOL:
        raise AssertionError(f"censored fit has Delta={delta} > M={bound}; the censoring is broken")
    if guarantee == "DP" and not censored:
        raise AssertionError("a strict DP guarantee needs a censored likelihood (a finite bound M)")
    return PrivacyReport(
        delta=delta,
        guarantee=guarantee,
        n_censored=bounds.n_censored,
        bound=float(bound) if censored else float("inf"),
        one_signed=bool(one_signed),
        extra=dict(extra),
    )


def calibrated_report(eps_remove: float, eps_replace: float, *, guarantee: str | None, **extra) -> PrivacyReport:
    """The :class:`PrivacyReport` of a mechanism whose epsilon is set by its noise (no Lipschitz bound).

    Parameters
    ----------
    eps_remove, eps_replace : float
        Epsilon of the release with one record removed and with one record replaced.
    guarantee : {"none", "aDP", "DP"}
        From the mechanism's spec.
    **extra
        Mechanism-specific numbers (the noise scale).
    """
    check_guarantee(guarantee)
    e1, e2 = float(eps_remove), float(eps_replace)
    if not (np.isfinite(e1) and np.isfinite(e2) and 0 < e1 <= e2):
        raise DataError(f"calibrated epsilons must be finite with 0 < eps_remove <= eps_replace; got {e1!r}, {e2!r}.")
    return PrivacyReport(delta=float("nan"), guarantee=guarantee, extra=dict(extra), calibrated=(e1, e2))


def _abs_contributions(F, w, L, r) -> np.ndarray:
    """``|alpha_i f - log P(R_i) - r_i|`` (weight-0 records contribute ``|-log P|`` before the shift, 0 after it)."""
    zero = w == 0.0
    with np.errstate(invalid="ignore", over="ignore"):
        g = F * w
        if zero.any():
            g[:, zero] = 0.0
        if L is not None:
            g -= L
        if r is not None:
            g -= r
            if zero.any():
                g[:, zero] = 0.0
    return np.abs(g, out=g)


def _reduce_every_draw(F, w, L, r, M):
    """By-record max of the clamped contributions, of ``|f|``, and at how many draws M was exceeded.

    One pass over the matrix in a compiled loop (:func:`_reduce_kernel`); the same numbers as the
    whole-matrix formula of :func:`_abs_contributions`, to the last bit (the same operations in the
    same order on each entry).
    """
    S, n = F.shape
    kernel = _reduce_kernel()
    empty = np.zeros((0, 0))
    delta_i, abs_f, exceeds = kernel(
        np.ascontiguousarray(F), np.ascontiguousarray(w, dtype=float),
        empty if L is None else np.ascontiguousarray(L), L is not None,
        np.zeros(0) if r is None else np.ascontiguousarray(r, dtype=float), r is not None,
        np.inf if M is None else float(M), M is not None)
    return delta_i, abs_f, exceeds


@functools.cache
def _reduce_kernel():
    """The compiled one-pass reduction of :func:`_reduce_every_draw` (compiled on first use, cached on disk)."""
    import numba

    @numba.njit(cache=True, nogil=True)
    def kernel(F, w, L, has_L, r, has_r, M, has_M):  # pragma: no cover - compiled
        S, n = F.shape
        delta_i = np.zeros(n)
        abs_f = np.zeros(n)
        exceeds = np.zeros(n, dtype=np.int64)
        for s in range(S):
            for i in range(n):
                f = F[s, i]
                zero = w[i] == 0.0
                g = 0.0 if zero else f * w[i]
                if has_L:
                    g = g - L[s, i]
                if has_r:
                    g = g - r[i]
                    if zero:
                        g = 0.0
                g = abs(g)
                if has_M:
                    if g > M:
                        exceeds[i] += 1
                        g = M
                if g > delta_i[i]:
                    delta_i[i] = g
                a = abs(f)
                if a > abs_f[i]:
                    abs_f[i] = a
        return delta_i, abs_f, exceeds

    return kernel


def record_bounds(
    loglik: np.ndarray,
    weights: np.ndarray | float | None = None,
    bound: float | None = None,
    *,
    draw_quantile: float = 1.0,
    log_range_prob: np.ndarray | None = None,
    shift: np.ndarray | None = None,
) -> RecordBounds:
    """Reduce an ``S x n`` record log-likelihood matrix to by-record Lipschitz bounds.

    The contribution of record i at draw s is ``g = alpha_i f_s(x_i) - log P_s(R_i)``
    (the range term only when ``log_range_prob`` is given), clamped to ``[-M, M]`` when a
    censoring bound M is given. ``delta_i = max_s |g|``. A record with weight 0 contributes 0.

    Parameters
    ----------
    loglik : numpy.ndarray
        Record log-likelihoods ``f_{theta_s}(x_i)``, shape ``(S, n)``.
    weights : array_like or float, optional
        Record weights in [0, 1] (default all ones).
    bound : float, optional
        Censoring bound M; ``None`` means no censoring.
    draw_quantile : float
        Keep only the draws whose maximum absolute contribution over records is at or below
        this quantile of those maxima (1.0 keeps every draw).
    log_range_prob : numpy.ndarray, optional
        ``log P_{theta_s}(R_i)``, shape ``(S, n)``, for the range-truncated likelihood.
    shift : numpy.ndarray, optional
        A per-record reference ``r_i`` subtracted from each weighted term before the clamp
        (``alpha_i f - r_i``), shape ``(n,)``.

    Returns
    -------
    RecordBounds
    """
    F = np.asarray(loglik, dtype=float)
    if F.ndim != 2 or F.shape[0] == 0 or F.shape[1] == 0:
        raise DataError(f"`loglik` must be a non-empty (draws x records) matrix; got shape {F.shape}.")
    n = F.shape[1]
    w = as_weights(weights, n)
    q = check_probability(draw_quantile, "draw_quantile")
    M = None if bound is None or not np.isfinite(bound) else check_positive(bound, "bound")
    if np.isnan(F).any():
        raise DataError("`loglik` has NaN entries; check the model's log-likelihood.")

    L = None
    if log_range_prob is not None:
        L = np.asarray(log_range_prob, dtype=float)
        if L.shape != F.shape:
            raise DataError(f"`log_range_prob` has shape {L.shape}, `loglik` has {F.shape}.")
        if np.isnan(L).any():
            raise DataError("`log_range_prob` has NaN entries; check the family's logcdf/logsf.")
    r = None
    if shift is not None:
        r = np.asarray(shift, dtype=float)
        if r.shape != (n,) or not np.isfinite(r).all():
            raise DataError(f"`shift` must be {n} finite numbers, one per record; got shape {r.shape}.")

    if q == 1.0:
        # every draw is kept: reduce the matrix in one compiled pass (no S x n temporaries), which gives
        # the same numbers
        delta_i, abs_f, exceeds = _reduce_every_draw(F, w, L, r, M)
        n_censored = int((exceeds > 0).sum()) if M is not None else 0
        n_kept = F.shape[0]
        typical = float(exceeds.sum()) / (n_kept * n) if M is not None else 0.0
    else:
        absg = _abs_contributions(F, w, L, r)
        if M is not None:
            exceeds = absg > M
            np.minimum(absg, M, out=absg)
        per_draw = absg.max(axis=1)
        keep = per_draw <= np.quantile(per_draw, q)
        absg_kept = absg[keep]
        delta_i = absg_kept.max(axis=0)
        abs_f = np.abs(F[keep]).max(axis=0)
        n_censored = int(exceeds[keep].any(axis=0).sum()) if M is not None else 0
        n_kept = int(absg_kept.shape[0])
        typical = float(exceeds[keep].mean()) if M is not None else 0.0
    return RecordBounds(
        delta_i=delta_i,
        abs_loglik=abs_f,
        n_censored=n_censored,
        n_draws=n_kept,
        draw_quantile=q,
        censored_draw_share=typical,
    )


def chunked_record_bounds(loglik_of, n: int, n_draws: int, weights=None, bound: float | None = None, *,
                          shift: np.ndarray | None = None, max_cells: int = 4_000_000) -> RecordBounds:
    """:func:`record_bounds` over every draw without the ``S x n`` matrix: records a block at a time.

    ``loglik_of(a, b)`` returns the ``S x (b - a)`` log-likelihoods of records ``a`` to ``b``; blocks hold at
    most ``max_cells`` entries (32 MB), so a million records with 2,000 draws never hold 16 GB. The numbers
    are those of :func:`record_bounds` on the whole matrix (each record is reduced over the draws alone).
    """
    w = as_weights(weights, n)
    r = None if shift is None else np.asarray(shift, dtype=float)
    step = max(1, int(max_cells) // max(1, int(n_draws)))
    parts = []
    for a in range(0, n, step):
        b = min(n, a + step)
        parts.append(record_bounds(loglik_of(a, b), w[a:b], bound, shift=None if r is None else r[a:b]))
    return RecordBounds(
        delta_i=np.concatenate([p.delta_i for p in parts]),
        abs_loglik=np.concatenate([p.abs_loglik for p in parts]),
        n_censored=int(sum(p.n_censored for p in parts)),
        n_draws=int(n_draws),
        censored_draw_share=float(sum(p.censored_draw_share * p.delta_i.size for p in parts) / n),
    )


def log_interval_prob(
    logcdf_lo: np.ndarray, logcdf_hi: np.ndarray, logsf_lo: np.ndarray, logsf_hi: np.ndarray
) -> np.ndarray:
    """``log(F(hi) - F(lo))`` computed without underflow, also deep in either tail.

    In the lower tail the difference of CDFs is used, in the upper tail the difference of
    survival functions: ``log(F(hi) - F(lo)) = log F(hi) + log1p(-exp(log F(lo) - log F(hi)))``
    and likewise with ``S(lo) - S(hi)``. The form whose leading term is smaller in magnitude
    is chosen element-wise: survival functions when the lower end lies above the median.

    Parameters
    ----------
    logcdf_lo, logcdf_hi, logsf_lo, logsf_hi : numpy.ndarray
        Log CDF and log survival function at the lower and upper ends of the range.

    Returns
    -------
    numpy.ndarray
        Log probability of the range (``-inf`` only if it is exactly empty).
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        via_cdf = np.where(np.isneginf(logcdf_hi), -np.inf, logcdf_hi + np.log1p(-np.exp(logcdf_lo - logcdf_hi)))
        via_sf = np.where(np.isneginf(logsf_lo), -np.inf, logsf_lo + np.log1p(-np.exp(logsf_hi - logsf_lo)))
    use_sf = logsf_lo < logcdf_lo  # lower end above the median: upper-tail form is accurate
    return np.where(use_sf, via_sf, via_cdf)
