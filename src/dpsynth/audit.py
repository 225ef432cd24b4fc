"""Grid audit of a censored mechanism: the log density ratio on neighbouring data sets.

A censored pseudo posterior is

.. math:: \\xi(\\theta \\mid x) \\propto \\pi(\\theta)
          \\exp\\Big(\\sum_i \\operatorname{clamp}(\\alpha_i f_\\theta(x_i), -M, M)\\Big),

with ``f_theta(x_i) = log p(x_i | theta)``, weights ``alpha_i`` in [0, 1] and ``M = eps / 2``.
Releasing one draw from it is ``eps``-DP exactly when, for every pair of neighbouring data
sets ``x, x'`` and every ``theta``, ``|log xi(theta | x) - log xi(theta | x')| <= eps``.
MCMC never gives the density itself (its normalising constant is unknown), so this module
evaluates it on a grid of ``theta``:

1. the grid is treated as the *whole* parameter space, i.e. the prior truncated to the grid
   (a discrete prior putting mass ``pi(theta_k) * cell volume`` on grid point ``k``). The DP
   bound of a censored likelihood holds for *any* prior, so it must hold for this one, and for
   it the audit is exact: the normalising constant is a finite sum, computed with
   log-sum-exp, not estimated;
2. the record log-likelihoods ``f`` come from the package's own compiled likelihood
   (:meth:`dpsynth.fitting.CompiledModel.record_loglik`), weighted and clamped exactly as the
   PyMC model does it (a record of weight 0 contributes exactly 0);
3. the weights are recomputed on every neighbour by the mechanism's own weight rule
   (``weight_fn``): all ones for Censor_uw, a fixed public rule for Censor_w-pub, and an
   unweighted MCMC fit followed by Lipschitz weights for Censor_w as run in the papers.

The largest absolute log ratio is reported over the whole grid (what DP bounds) and over the
grid points near the mode of either density (within ``e^-15`` of its maximum), which shows
whether a violation happens where the posterior actually puts its mass.

Theory (see :mod:`dpsynth.privacy`): with data-independent weights the log ratio is at most
``2M`` with one record removed, at most ``4M`` with one record replaced when terms take both
signs (continuous densities such as the Beta model) and ``2M`` when every term is ``<= 0``.
With weights computed from the same data (the papers' Censor_w) one record changes every
weight and no such bound holds.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from scipy.special import logsumexp

from .validation import DataError

__all__ = [
    "LoglikModel",
    "grid_log_posterior",
    "beta_grid",
    "neighbour",
    "max_log_ratio",
    "neighbour_set",
    "audit_mechanism",
    "unit_weights",
    "data_lipschitz_weights",
    "size_log_ratio",
    "histogram_log_ratio",
    "audit_release",
    "MODE_WINDOW",
]

#: Grid points whose log density is within this many nats of the maximum count as "near the mode".
MODE_WINDOW = 15.0


class LoglikModel(Protocol):
    """Anything with the record log-likelihood of :class:`dpsynth.fitting.CompiledModel`."""

    def record_loglik(self, draws: Mapping[str, np.ndarray], x, covariates=None) -> np.ndarray:
        """``f_{theta_s}(x_i)``, shape ``(S, n)``."""


def _n_grid(grid_draws: Mapping[str, np.ndarray]) -> int:
    sizes = {np.asarray(v).shape[0] for v in grid_draws.values()}
    if len(sizes) != 1:
        raise DataError(f"every entry of `grid_draws` must have the same length; got lengths {sorted(sizes)}.")
    return sizes.pop()


def grid_log_posterior(
    cm: LoglikModel,
    x,
    grid_draws: Mapping[str, np.ndarray],
    log_prior: np.ndarray,
    weights=None,
    bound: float | None = None,
    *,
    cell_log_volume: float | np.ndarray = 0.0,
    covariates=None,
    chunk: int = 4096,
    shift=None,
) -> np.ndarray:
    """Normalised log pseudo-posterior density on a grid of parameter values.

    ``log xi_k = log_prior_k + sum_i clamp(w_i f_k(x_i), -M, M) - log sum_j exp(...)_j vol_j``,
    so that ``sum_k exp(log xi_k) vol_k = 1``: the grid is the whole parameter space (the prior
    truncated to it).

    Parameters
    ----------
    cm : LoglikModel
        Compiled model (or any object with ``record_loglik(draws, x, covariates)``).
    x : array_like
        Data set, length n.
    grid_draws : mapping of str to numpy.ndarray
        Grid points, one 1-D array of length K per parameter (``cm.param_names``).
    log_prior : numpy.ndarray
        Log prior density at the grid points, in the coordinates the cell volumes refer to.
    weights : array_like, optional
        Record weights in [0, 1] (default all ones). A weight-0 record contributes exactly 0,
        even where its log-likelihood is ``-inf``.
    bound : float, optional
        Censoring bound M (``None`` or ``inf``: no censoring).
    cell_log_volume : float or numpy.ndarray
        Log volume of each grid cell (scalar for a regular grid).
    covariates : array_like, optional
        Design matrix, passed to ``record_loglik``.
    chunk : int
        Grid points per ``record_loglik`` call (bounds the memory of the K x n matrix).
    shift : array_like, optional
        A per-record reference subtracted from each weighted term before the clamp (the unit-free
        censored likelihood: ``w_i f(x_i) - r_i``), length n.

    Returns
    -------
    numpy.ndarray
        ``log xi(theta_k | x)``, shape ``(K,)``.
    """
    K = _n_grid(grid_draws)
    lp = np.asarray(log_prior, dtype=float)
    if lp.shape != (K,):
        raise DataError(f"`log_prior` must have shape ({K},); got {lp.shape}.")
    xv = np.asarray(x, dtype=float)
    n = xv.shape[0]
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=float)
    if w.shape != (n,) or np.isnan(w).any() or (w < 0).any() or (w > 1).any():
        raise DataError(f"`weights` must be {n} values in [0, 1].")
    M = np.inf if bound is None else float(bound)
    if not M > 0:
        raise DataError(f"`bound` must be > 0; got {bound!r}.")
    if not isinstance(chunk, (int, np.integer)) or chunk < 1:
        raise DataError(f"`chunk` must be a positive integer; got {chunk!r}.")
    zero = w == 0.0
    r = np.zeros(n) if shift is None else np.asarray(shift, dtype=float)
    if r.shape != (n,) or not np.isfinite(r).all():
        raise DataError(f"`shift` must be {n} finite numbers.")
    total = np.empty(K)
    for start in range(0, K, chunk):
        sl = slice(start, min(K, start + chunk))
        part = {k: np.asarray(v, dtype=float)[sl] for k, v in grid_draws.items()}
        F = np.asarray(cm.record_loglik(part, xv, covariates), dtype=float)
        with np.errstate(invalid="ignore", over="ignore"):
            g = np.where(zero[None, :], 0.0, w[None, :] * F - r[None, :])
        if np.isnan(g).any():
            raise DataError("the record log-likelihood is NaN at some grid point; restrict the grid.")
        total[sl] = np.clip(g, -M, M).sum(axis=1)
    unnorm = lp + total
    vol = np.broadcast_to(np.asarray(cell_log_volume, dtype=float), (K,))
    return unnorm - logsumexp(unnorm + vol)


def beta_grid(
    family,
    n_phi: int = 120,
    n_lam: int = 120,
    *,
    lam_max: float = 1e3,
    phi_range: tuple[float, float] = (0.0, 1.0),
) -> tuple[dict[str, np.ndarray], np.ndarray, float]:
    """A regular grid for :class:`dpsynth.models.BetaFamily` in ``(phi, log lam)``.

    ``phi`` takes the ``n_phi`` cell midpoints of ``phi_range`` (default the whole of (0, 1));
    ``u = log lam`` takes the ``n_lam`` cell midpoints of ``[log lambda_min, log lam_max]``
    (by default lam from 0.1, the Pareto prior's lower end, to 1e3: the posterior of a few
    hundred Beta records and the bulk of the prior, whose tail beyond 1e3 has mass
    ``(0.1 / 1e3)^1.5 = 1e-6``).

    The log prior is the density in the grid's coordinates ``(phi, u)``:
    ``log Beta(phi | 1, 1) + log Pareto(lam | m, alpha) + u`` (the last term is the Jacobian
    ``d lam / d u = lam``), and every cell has the same volume ``d phi * d u``. The Jacobian
    and the volume would cancel from the audited ratio anyway (both data sets use the same grid);
    they are kept so that the grid is a proper discretisation of the prior truncated to it.

    Parameters
    ----------
    family : BetaFamily
        The family (its ``lambda_min`` and ``lambda_alpha`` give the Pareto prior).
    n_phi, n_lam : int
        Grid points along ``phi`` and ``log lam``.
    lam_max : float
        Upper end of the ``lam`` range.
    phi_range : tuple of float
        Range of ``phi`` inside [0, 1].

    Returns
    -------
    grid_draws : dict
        ``{"phi", "lam", "a", "b"}``, 1-D arrays of length ``n_phi * n_lam``.
    log_prior : numpy.ndarray
        Log prior density in ``(phi, log lam)`` at each grid point.
    cell_log_volume : float
        ``log(d phi * d log lam)``.
    """
    for nm, v in (("n_phi", n_phi), ("n_lam", n_lam)):
        if not isinstance(v, (int, np.integer)) or v < 2:
            raise DataError(f"`{nm}` must be an integer >= 2; got {v!r}.")
    lo, hi = map(float, phi_range)
    if not 0.0 <= lo < hi <= 1.0:
        raise DataError(f"`phi_range` must satisfy 0 <= lo < hi <= 1; got {phi_range!r}.")
    m, alpha = float(family.lambda_min), float(family.lambda_alpha)
    if not lam_max > m:
        raise DataError(f"`lam_max` must exceed lambda_min = {m}; got {lam_max!r}.")
    dphi = (hi - lo) / n_phi
    phi = lo + dphi * (np.arange(n_phi) + 0.5)
    u0, u1 = np.log(m), np.log(float(lam_max))
    du = (u1 - u0) / n_lam
    u = u0 + du * (np.arange(n_lam) + 0.5)
    P, U = np.meshgrid(phi, u, indexing="ij")
    P, U = P.ravel(), U.ravel()
    lam = np.exp(U)
    # Beta(1, 1) density is 1; Pareto(lam | m, alpha) = alpha m^alpha / lam^(alpha + 1); Jacobian lam
    log_prior = np.log(alpha) + alpha * np.log(m) - (alpha + 1.0) * U + U
    draws = {"phi": P, "lam": lam, "a": lam * P, "b": lam * (1.0 - P)}
    return draws, log_prior, float(np.log(dphi) + np.log(du))


def neighbour(
    x,
    relation: str,
    rng: np.random.Generator | None = None,
    *,
    index: int | None = None,
    value: float | None = None,
    draw: Callable[[np.random.Generator], float] | None = None,
) -> np.ndarray:
    """A neighbouring data set of ``x``: one record removed, or one record replaced.

    Parameters
    ----------
    x : array_like
        Data set.
    relation : {"remove", "replace"}
        Neighbour relation.
    rng : numpy.random.Generator, optional
        Random stream for the record chosen and the fresh value.
    index : int, optional
        Record to remove or replace (default: one at random). For a worst case, pass e.g.
        ``int(np.argmin(x))``.
    value : float, optional
        New value of the replaced record (default: ``draw(rng)``).
    draw : callable, optional
        Draws a fresh value from ``rng`` (default: Uniform(0, 1), for data in (0, 1)).

    Returns
    -------
    numpy.ndarray
        The neighbouring data set (a new array; ``x`` is not changed).
    """
    xv = np.array(x, dtype=float, copy=True)
    n = xv.shape[0]
    if relation not in ("remove", "replace"):
        raise DataError(f"`relation` must be 'remove' or 'replace'; got {relation!r}.")
    rng = np.random.default_rng() if rng is None else rng
    i = int(rng.integers(n)) if index is None else int(index)
    if not -n <= i < n:
        raise DataError(f"`index` {index!r} is out of range for {n} records.")
    if relation == "remove":
        if n < 2:
            raise DataError("cannot remove a record from a data set of one record.")
        return np.delete(xv, i, axis=0)
    if value is None:
        value = draw(rng) if draw is not None else float(rng.uniform(np.nextafter(0.0, 1.0), 1.0))
    xv[i] = value
    return xv


def neighbour_set(
    x,
    relation: str,
    k: int,
    rng: np.random.Generator,
    *,
    extremes: bool = True,
    high: float = 0.999,
    low: float = 1e-6,
    draw: Callable[[np.random.Generator], float] | None = None,
) -> list[tuple[str, np.ndarray]]:
    """``k`` random neighbours of ``x`` plus (optionally) the extreme ones, with labels.

    The extreme neighbours move the smallest and the largest record, which for the papers'
    Censor_w moves the min/max normalisation of the Lipschitz weights: under removal, the
    smallest and the largest record removed; under replacement, the smallest record replaced
    by ``high`` and the largest by ``low`` (values for data in (0, 1)).

    Returns
    -------
    list of (str, numpy.ndarray)
        ``(label, x')`` pairs, ready for :func:`audit_mechanism`.
    """
    xv = np.asarray(x, dtype=float)
    out = [(f"{relation} random #{j}", neighbour(xv, relation, rng, draw=draw)) for j in range(int(k))]
    if extremes:
        lo, hi = int(np.argmin(xv)), int(np.argmax(xv))
        if relation == "remove":
            out += [
                ("remove smallest", neighbour(xv, "remove", index=lo)),
                ("remove largest", neighbour(xv, "remove", index=hi)),
            ]
        else:
            out += [
                (f"replace smallest by {high:g}", neighbour(xv, "replace", index=lo, value=high)),
                (f"replace largest by {low:g}", neighbour(xv, "replace", index=hi, value=low)),
            ]
    return out


def max_log_ratio(lp_x: np.ndarray, lp_xp: np.ndarray, *, mode_window: float = MODE_WINDOW) -> dict[str, float]:
    """Largest ``|log xi(theta | x) - log xi(theta | x')|`` over the grid.

    Parameters
    ----------
    lp_x, lp_xp : numpy.ndarray
        Normalised log densities on the same grid (from :func:`grid_log_posterior`).
    mode_window : float
        A grid point is "near the mode" if either log density there is within ``mode_window``
        of its own maximum (default 15, i.e. density ratio ``e^-15``).

    Returns
    -------
    dict
        ``"all"``: the maximum over the whole grid (what DP bounds); ``"mode"``: the maximum
        over the points near the mode of either density; ``"argmax"``: the grid index of
        ``"all"``.
    """
    a = np.asarray(lp_x, dtype=float)
    b = np.asarray(lp_xp, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise DataError(f"the two log densities must be 1-D on the same grid; got {a.shape} and {b.shape}.")
    d = np.abs(a - b)
    near = (a >= a.max() - mode_window) | (b >= b.max() - mode_window)
    return {"all": float(d.max()), "mode": float(d[near].max()), "argmax": int(np.argmax(d))}


def audit_mechanism(
    cm: LoglikModel,
    x,
    neighbours_list: Sequence,
    weight_fn: Callable[[np.ndarray], np.ndarray],
    bound: float | None,
    grid: tuple[Mapping[str, np.ndarray], np.ndarray, float],
    *,
    mode_window: float = MODE_WINDOW,
    shift_fn: Callable[[np.ndarray], np.ndarray] | None = None,
) -> dict:
    """Audit a censored mechanism on a grid: worst log density ratio over neighbour pairs.

    Parameters
    ----------
    cm : LoglikModel
        Compiled model whose likelihood is audited.
    x : array_like
        The data set.
    neighbours_list : sequence
        Neighbouring data sets of ``x``: arrays, or ``(label, array)`` pairs.
    weight_fn : callable
        ``weight_fn(data) -> weights``: the weights the mechanism would use on ``data``,
        recomputed for ``x`` and for every neighbour (ones for Censor_uw; a fixed public rule
        for Censor_w-pub; an unweighted fit of ``data`` then Lipschitz weights for Censor_w as
        in the papers).
    bound : float or None
        Censoring bound M.
    grid : tuple
        ``(grid_draws, log_prior, cell_log_volume)``, e.g. from :func:`beta_grid`.
    mode_window : float
        See :func:`max_log_ratio`.
    shift_fn : callable, optional
        ``shift_fn(data) -> r``: the per-record reference of the unit-free censored likelihood
        (``alpha f_{theta_0}(x_i)``), recomputed for every data set like the weights.

    Returns
    -------
    dict
        ``"max_all"``, ``"max_mode"``: worst ratios over all pairs (whole grid, near the mode);
        ``"pairs"``: one dict per neighbour with ``"label"``, ``"all"``, ``"mode"``,
        ``"argmax"``; ``"bound"``; ``"weights"``: the weights used on ``x``.
    """
    grid_draws, log_prior, vol = grid
    xv = np.asarray(x, dtype=float)
    w = np.asarray(weight_fn(xv), dtype=float)

    def shift(data):
        return None if shift_fn is None else np.asarray(shift_fn(data), dtype=float)

    lp_x = grid_log_posterior(cm, xv, grid_draws, log_prior, w, bound, cell_log_volume=vol, shift=shift(xv))
    pairs = []
    for j, item in enumerate(neighbours_list):
        label, xp = item if isinstance(item, tuple) else (f"neighbour {j}", item)
        xp = np.asarray(xp, dtype=float)
        wp = np.asarray(weight_fn(xp), dtype=float)
        lp_xp = grid_log_posterior(cm, xp, grid_draws, log_prior, wp, bound, cell_log_volume=vol, shift=shift(xp))
        r = max_log_ratio(lp_x, lp_xp, mode_window=mode_window)
        pairs.append({"label": label, **r})
    if not pairs:
        raise DataError("`neighbours_list` is empty.")
    return {
        "max_all": max(p["all"] for p in pairs),
        "max_mode": max(p["mode"] for p in pairs),
        "pairs": pairs,
        "bound": float("inf") if bound is None else float(bound),
        "weights": w,
    }


def unit_weights(x) -> np.ndarray:
    """Censor_uw's weight rule: every record has weight 1."""
    return np.ones(np.asarray(x).shape[0])


def data_lipschitz_weights(cm, *, sampler=None, seed=None, c: float = 1.0, g: float = 0.0) -> Callable:
    """Censor_w's weight rule as run in the papers: LW weights from an unweighted fit of the data.

    The returned ``weight_fn(x)`` fits the unweighted posterior of ``x`` by MCMC (``cm.fit``),
    takes ``f_i = max_s |f_{theta_s}(x_i)|`` and returns
    :func:`dpsynth.weights.lipschitz_weights` of it. It is applied to every neighbour afresh,
    as the mechanism would be. Results are cached by the data's bytes, so auditing several
    epsilons does not refit the same data set; every fit uses the same ``seed``.

    Parameters
    ----------
    cm : CompiledModel
        The compiled synthesizer.
    sampler : SamplerConfig, optional
        MCMC settings of the unweighted fit.
    seed : int, optional
        Sampler seed (the same for every data set).
    c, g : float
        Scale and shift of the weights.
    """
    from .weights import lipschitz_weights

    cache: dict[bytes, np.ndarray] = {}

    def weight_fn(x) -> np.ndarray:
        xv = np.ascontiguousarray(x, dtype=float)
        key = xv.tobytes()
        if key not in cache:
            fit = cm.fit(xv, sampler=sampler, seed=seed, keep_idata=False)
            cache[key] = lipschitz_weights(fit.bounds.abs_loglik, c=c, g=g)
        return cache[key].copy()

    return weight_fn


# --- the whole release: the posterior draw, the released size, a histogram's counts ----------------


def size_log_ratio(eps_size: float | None, n: int, *, window: float = 60.0) -> float:
    """Worst absolute log ratio of the released size's probabilities, data sets of ``n`` and ``n - 1`` records.

    ``eps_size=None`` is a release of exactly ``n`` rows: the two neighbours give sizes ``n`` and
    ``n - 1`` with probability one, so the ratio is infinite. Otherwise the size is OpenDP's count
    with discrete Laplace noise of the scale ``t`` it calibrates to ``eps_size``
    (:func:`dpsynth.release.size.count_scale`), ``P(n + z) ∝ exp(-|z| / t)``, kept at 1 or more;
    the ratio is computed exactly over every output within ``window * t`` of ``n`` (the
    normalising constants of the two are equal, the lumped outputs ``<= 1`` are summed).
    """
    from .release.size import count_scale

    if eps_size is None:
        return float("inf")
    t = count_scale(eps_size)
    k = np.arange(max(2, int(n - window * t)), int(n + window * t) + 1)

    def logpmf(center: int) -> np.ndarray:
        return -np.abs(k - center) / t

    def log_low(center: int) -> float:  # P(size <= 1): every z with center + z <= 1, up to the common constant
        m = center - 1  # z <= -m
        return -m / t - np.log1p(-np.exp(-1.0 / t))

    d = np.abs(logpmf(n) - logpmf(n - 1))
    return float(max(d.max(), abs(log_low(n) - log_low(n - 1))))


def histogram_log_ratio(x, x_neighbour, edges, scale: float) -> float:
    """Worst absolute log ratio of a perturbed histogram's noisy counts for two data sets.

    Each count gets Laplace noise of ``scale``: the log density ratio at any output is
    ``sum_j (|y_j - c'_j| - |y_j - c_j|) / scale``, at most ``||c - c'||_1 / scale``, attained. The
    bin ``edges`` are the same for both data sets (public), as the mechanism requires.
    """
    e = np.asarray(edges, dtype=float)
    c = np.histogram(np.asarray(x, dtype=float), bins=e)[0]
    cp = np.histogram(np.asarray(x_neighbour, dtype=float), bins=e)[0]
    return float(np.abs(c - cp).sum() / scale)


def audit_release(draw_ratio: float, eps_size: float | None, n: int) -> dict:
    """The whole release under one record removed: the draw's worst ratio plus the size's.

    A release is the draw (or the histogram) and the file's size, two outputs of the same data:
    their log ratios add. Returns ``{"draw", "size", "total"}``.
    """
    size = size_log_ratio(eps_size, n)
    return {"draw": float(draw_ratio), "size": size, "total": float(draw_ratio) + size}


# ------------------------------------------------------------------------------------------- whole tables


@dataclass(frozen=True)
class TablePart:
    """One conditional of a whole-table release, for :func:`audit_table`.

    Attributes
    ----------
    cm : LoglikModel
        Its compiled model.
    grid : tuple
        ``(grid_draws, log_prior, cell_log_volume)`` of its parameters.
    bound : float or None
        Its censoring bound M.
    data_fn : callable
        ``data_fn(rows) -> (x, covariates)``: its target column and design from the table's rows
        (the design built from each record and public constants alone, as the package builds it,
        or otherwise, to show what breaks).
    shift_fn : callable, optional
        ``shift_fn(x, covariates) -> r``: the per-record reference of the unit-free censored likelihood.
    """

    cm: LoglikModel
    grid: tuple
    bound: float | None
    data_fn: Callable
    shift_fn: Callable | None = None

    def log_posterior(self, rows: np.ndarray) -> np.ndarray:
        """The part's normalised log pseudo posterior on its grid, for the table ``rows``."""
        x, X = self.data_fn(rows)
        draws, log_prior, vol = self.grid
        shift = None if self.shift_fn is None else np.asarray(self.shift_fn(x, X), dtype=float)
        return grid_log_posterior(
            self.cm, x, draws, log_prior, None, self.bound, cell_log_volume=vol, covariates=X, shift=shift
        )


def audit_table(parts: Sequence[TablePart], rows, neighbours_list: Sequence) -> dict:
    """Audit a whole-table release: the log density ratio of its joint draw on neighbouring tables.

    One release draws each part's parameters from its own pseudo posterior, independently given
    the data, so the joint density is the product of the parts' and its log ratio at a point
    ``(theta_1, ..., theta_J)`` of the product grid is the sum of the parts' log ratios. Its
    largest absolute value over the product grid is therefore ``max(sum_j max_k r_jk,
    -sum_j min_k r_jk)``, computed exactly from each part's grid.

    Parameters
    ----------
    parts : sequence of TablePart
        The conditionals, in the table's order.
    rows : array_like
        The table, one row per record (every column any part reads).
    neighbours_list : sequence
        Neighbouring tables: arrays of rows, or ``(label, rows)`` pairs.

    Returns
    -------
    dict
        ``"max_all"``: the worst joint log ratio over the neighbours; ``"pairs"``: per neighbour its
        ``"label"``, ``"all"`` and each part's own worst ratio ``"parts"``.
    """
    R = np.asarray(rows, dtype=float)
    base = [p.log_posterior(R) for p in parts]
    pairs = []
    for j, item in enumerate(neighbours_list):
        label, Rp = item if isinstance(item, tuple) else (f"neighbour {j}", item)
        Rp = np.asarray(Rp, dtype=float)
        diffs = [b - p.log_posterior(Rp) for b, p in zip(base, parts, strict=True)]
        hi = float(sum(d.max() for d in diffs))
        lo = float(sum(d.min() for d in diffs))
        pairs.append({"label": label, "all": max(hi, -lo), "parts": [float(np.abs(d).max()) for d in diffs]})
    if not pairs:
        raise DataError("`neighbours_list` is empty.")
    return {"max_all": max(p["all"] for p in pairs), "pairs": pairs}
