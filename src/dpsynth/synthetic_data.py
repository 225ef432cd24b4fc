"""Synthetic data from the (pseudo) posterior predictive distribution: one draw per data set.

The guarantee ``eps = 2 Delta`` of a pseudo posterior covers the release of *one* posterior draw
``theta_s``, and of everything computed from it: the re-weighting paper [HSW22, Section 2]
releases a draw of the parameters together with the synthetic data generated from it. So one
released synthetic data set is generated from one draw, every record from the same draw
(:func:`synthesize`).

Mixing draws across records (each record from its own random draw, as the papers' code did)
releases information about every distinct draw it used: under sequential composition it costs
``k * eps`` for ``k`` distinct draws. :func:`release` offers it only as an explicit option
(``mix_draws=True``) and reports the composed epsilon; releasing ``m`` data sets from ``m``
distinct draws costs ``m * eps`` (:func:`composed_eps`, :func:`release_sets`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .fitting import Fit
from .seeds import SeedLike, generator
from .validation import DataError, as_data

__all__ = ["synthesize", "composed_eps", "SyntheticRelease", "release", "release_sets"]


def _draw_index(fit: Fit, draw) -> int:
    S = fit.n_draws
    if isinstance(draw, bool) or not isinstance(draw, (int, np.integer)) or not 0 <= draw < S:
        raise DataError(f"`draw` must be an integer index in [0, {S}) of the fit's pooled draws; got {draw!r}.")
    return int(draw)


def _simulate(fit: Fit, idx: np.ndarray, rng: np.random.Generator, covariates) -> np.ndarray:
    draws = {k: v[idx] for k, v in fit.draws.items()}
    if covariates is None:
        cov = fit.covariates
    else:
        cov = as_data(covariates, "covariates", ndim=2)
        if cov.shape[0] != idx.size:
            raise DataError(f"`covariates` has {cov.shape[0]} rows but {idx.size} synthetic records were asked for.")
    return np.asarray(fit.family.simulate(draws, rng, cov), dtype=float)


def synthesize(fit: Fit, seed: SeedLike = None, *, draw: int | None = None, covariates=None) -> np.ndarray:
    """Draw one synthetic data set from ONE posterior draw of the fit.

    Parameters
    ----------
    fit : Fit
        A fitted mechanism.
    seed : int or SeedSequence
        Random stream (it chooses the draw, unless ``draw`` is given, and the records).
    draw : int, optional
        Index of the pooled posterior draw to use (default: one chosen at random).
    covariates : array_like, optional
        Public covariates of the synthetic records (default: the fit's); the synthetic data set
        has one record per row.

    Returns
    -------
    numpy.ndarray
        The synthetic records, all generated from the same draw.
    """
    rng = generator(seed)
    s = int(rng.integers(fit.n_draws)) if draw is None else _draw_index(fit, draw)
    n = fit.x.size if covariates is None else np.shape(covariates)[0]
    return _simulate(fit, np.full(n, s), rng, covariates)


def composed_eps(eps: float, m: int) -> float:
    """Total privacy loss of releasing ``m`` distinct posterior draws, each ``eps``-private.

    Sequential composition: ``m * eps``. It holds for either neighbour relation, with the
    one-draw ``eps`` of that relation.

    Raises
    ------
    DataError
        Unless ``eps`` is a finite number > 0 and ``m`` an integer >= 1.
    """
    if isinstance(eps, bool) or not isinstance(eps, (int, float, np.integer, np.floating)):
        raise DataError(f"`eps` must be a finite number > 0; got {eps!r}.")
    if not np.isfinite(eps) or eps <= 0:
        raise DataError(f"`eps` must be a finite number > 0; got {eps!r}.")
    if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or m < 1:
        raise DataError(f"`m` must be an integer >= 1 (the number of distinct draws released); got {m!r}.")
    return float(eps) * int(m)


@dataclass(frozen=True)
class SyntheticRelease:
    """A released synthetic data set with its privacy statement.

    Attributes
    ----------
    values : numpy.ndarray
        The synthetic records.
    draw_index : numpy.ndarray
        Index of the pooled posterior draw each record was generated from.
    mixed : bool
        Whether records were generated from different draws (``mix_draws=True``).
    eps_one_draw, eps_one_draw_replace : float
        The mechanism's epsilon for one released draw, one record removed / replaced.
    guarantee : str
        The mechanism's guarantee type (``"none"``, ``"aDP"``, ``"DP"``).
    name : str
        The mechanism's display name.
    """

    values: np.ndarray
    draw_index: np.ndarray
    mixed: bool
    eps_one_draw: float
    eps_one_draw_replace: float
    guarantee: str
    name: str

    @property
    def n_draws_used(self) -> int:
        """Number of distinct posterior draws the data set was generated from."""
        return int(np.unique(self.draw_index).size)

    @property
    def eps(self) -> float:
        """Epsilon of this release with one record removed: ``n_draws_used * eps_one_draw``."""
        return composed_eps(self.eps_one_draw, self.n_draws_used)

    @property
    def eps_replace(self) -> float:
        """Epsilon of this release with one record replaced."""
        return composed_eps(self.eps_one_draw_replace, self.n_draws_used)

    def statement(self) -> str:
        """The privacy statement of this release, naming both neighbour relations."""
        k = self.n_draws_used
        how = "one posterior draw" if k == 1 else f"{k} distinct posterior draws (record-wise mixing)"
        return (f"{self.name} ({self.guarantee}), generated from {how}: eps = {self.eps:.3g} with one record "
                f"removed, {self.eps_replace:.3g} with one record replaced"
                + ("" if k == 1 else f" (sequential composition: {k} x {self.eps_one_draw:.3g})") + ".")


def release(result, seed: SeedLike = None, *, mix_draws: bool = False, covariates=None) -> SyntheticRelease:
    """Release one synthetic data set from a mechanism's result, with its privacy statement.

    Parameters
    ----------
    result : MechanismResult
        A mechanism's output (:mod:`dpsynth.mechanisms`).
    seed : int or SeedSequence
        Random stream.
    mix_draws : bool
        Default False: every record from one posterior draw, at the mechanism's one-draw eps.
        True: each record from its own random draw; the reported eps is then composed over the
        distinct draws actually used (up to n times the one-draw eps).
    covariates : array_like, optional
        Public covariates of the synthetic records (default: the fit's).

    Returns
    -------
    SyntheticRelease
    """
    if not isinstance(mix_draws, (bool, np.bool_)):
        raise DataError(f"`mix_draws` must be True or False; got {mix_draws!r}.")
    fit = result.fit
    rng = generator(seed)
    n = fit.x.size if covariates is None else np.shape(covariates)[0]
    idx = rng.integers(fit.n_draws, size=n) if mix_draws else np.full(n, int(rng.integers(fit.n_draws)))
    values = _simulate(fit, idx, rng, covariates)
    p = result.privacy
    return SyntheticRelease(values=values, draw_index=idx, mixed=bool(mix_draws), eps_one_draw=p.eps,
                            eps_one_draw_replace=p.eps_replace, guarantee=p.guarantee, name=result.name)


def release_sets(result, m: int, seed: SeedLike = None, *, covariates=None) -> list[SyntheticRelease]:
    """Release ``m`` synthetic data sets from ``m`` distinct posterior draws (``m * eps`` in all).

    Raises
    ------
    DataError
        If ``m`` is not an integer in ``[1, S]`` (S pooled draws).
    """
    fit = result.fit
    if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or not 1 <= m <= fit.n_draws:
        raise DataError(f"`m` must be an integer in [1, {fit.n_draws}] (distinct draws to release); got {m!r}.")
    rng = generator(seed)
    chosen = rng.choice(fit.n_draws, size=int(m), replace=False)
    n = fit.x.size if covariates is None else np.shape(covariates)[0]
    p = result.privacy
    out = []
    for s in chosen:
        idx = np.full(n, int(s))
        out.append(SyntheticRelease(values=_simulate(fit, idx, rng, covariates), draw_index=idx, mixed=False,
                                    eps_one_draw=p.eps, eps_one_draw_replace=p.eps_replace, guarantee=p.guarantee,
                                    name=result.name))
    return out
