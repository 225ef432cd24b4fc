"""The perturbed histogram (PH) synthesizer, the non-model DP baseline.

Data bounded in a *public* interval ``[lower, upper]`` are binned into ``m`` equal bins chosen
without looking at the data values; each count gets Laplace noise of scale ``2 / eps`` (the
histogram's replace-one sensitivity is 2); negative noisy counts are set to 0 and the counts
normalised; synthetic records are a multinomial draw of bins and a uniform draw within the bin.

Two modes:

* ``"research"`` (default): Laplace noise from a seeded numpy generator, so Monte Carlo studies
  are reproducible. Not for releasing data: floating-point Laplace samplers leak.
* ``"release"``: noise from OpenDP's floating-point-safe Laplace measurement, drawn from the
  system's secure randomness; it cannot be seeded.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .seeds import SeedLike, generator
from .validation import DataError, PublicBoundError, as_data, check_eps

__all__ = ["PHResult", "perturbed_histogram", "bin_count", "laplace_noise"]

MODES = ("research", "release")


@dataclass(frozen=True)
class PHResult:
    """Output of :func:`perturbed_histogram`.

    Attributes
    ----------
    synthetic : numpy.ndarray
        Synthetic records.
    edges : numpy.ndarray
        Bin edges.
    noisy_counts : numpy.ndarray
        Counts after noise and setting negatives to 0.
    eps : float
        Privacy budget.
    mode : str
        ``"research"`` or ``"release"``.
    guarantee : str
        Always ``"DP"``.
    """

    synthetic: np.ndarray
    edges: np.ndarray
    noisy_counts: np.ndarray
    eps: float
    mode: str
    guarantee: str = "DP"


def bin_count(n: int, rule: str | int = "sqrt") -> int:
    """Number of bins from the record count only: ``"sqrt"`` (ceil sqrt n), ``"log"`` (ceil ln n) or an int."""
    if isinstance(rule, (int, np.integer)):
        if rule < 1:
            raise DataError(f"`bins` must be >= 1; got {rule}.")
        return int(rule)
    if rule == "sqrt":
        return max(1, math.ceil(math.sqrt(n)))
    if rule == "log":
        return max(1, math.ceil(math.log(n)))
    raise DataError(f"`bins` must be 'sqrt', 'log' or a positive int; got {rule!r}.")


def laplace_noise(size: int, scale: float, *, mode: str = "research", seed: SeedLike = None) -> np.ndarray:
    """Laplace(0, scale) noise: seeded numpy (research) or OpenDP (release)."""
    if mode == "research":
        return generator(seed).laplace(0.0, scale, size=size)
    if mode == "release":
        if seed is not None:
            raise DataError("release mode draws from OpenDP's secure randomness and cannot be seeded; pass seed=None.")
        import opendp.prelude as dp

        dp.enable_features("contrib")
        space = dp.vector_domain(dp.atom_domain(T=float, nan=False), size), dp.l1_distance(T=float)
        meas = dp.m.make_laplace(*space, scale=scale)
        return np.asarray(meas([0.0] * size), dtype=float)
    raise DataError(f"`mode` must be one of {MODES}; got {mode!r}.")


def perturbed_histogram(
    x,
    eps: float,
    *,
    upper: float,
    lower: float = 0.0,
    bins: str | int = "sqrt",
    n_synthetic: int | None = None,
    mode: str = "research",
    seed: SeedLike = None,
) -> PHResult:
    """Perturbed-histogram synthetic data with an ``eps``-DP guarantee.

    Parameters
    ----------
    x : array_like
        Confidential univariate data, all within ``[lower, upper]``.
    eps : float
        Privacy budget (> 0).
    upper, lower : float
        Public bounds of the data space. They must come from public knowledge, never from the
        data: a bound equal to the data's maximum (or minimum) is refused.
    bins : {"sqrt", "log"} or int
        Bin rule (uses only n) or number of bins.
    n_synthetic : int, optional
        Synthetic records to draw (default n).
    mode : {"research", "release"}
        Noise source; see module docs.
    seed : int or SeedSequence, optional
        Seed (research mode only).

    Returns
    -------
    PHResult
    """
    xv = as_data(x, "x")
    e = check_eps(eps)
    lo, hi = float(lower), float(upper)
    if not (np.isfinite(lo) and np.isfinite(hi)) or hi <= lo:
        raise DataError(f"public bounds must be finite with upper > lower; got lower={lower!r}, upper={upper!r}.")
    if hi == xv.max() or lo == xv.min() and lo != 0.0:
        raise PublicBoundError(
            "`upper`/`lower` equal the data's own maximum/minimum, which leaks it: take the bound "
            "from public knowledge (e.g. a published cap or the variable's definition), not from x."
        )
    out = (xv < lo) | (xv > hi)
    if out.any():
        raise DataError(
            f"{int(out.sum())} value(s) of `x` lie outside the public bounds [{lo}, {hi}] (first at "
            f"position {int(np.flatnonzero(out)[0])}); widen the public bound or remove those records."
        )
    if mode not in MODES:
        raise DataError(f"`mode` must be one of {MODES}; got {mode!r}.")
    if mode == "release" and seed is not None:
        raise DataError("release mode draws from OpenDP's secure randomness and cannot be seeded; pass seed=None.")
    m = bin_count(xv.size, bins)
    edges = np.linspace(lo, hi, m + 1)
    counts = np.histogram(xv, bins=edges)[0].astype(float)
    rng = generator(seed if mode == "research" else None)
    noise_seed = rng.bit_generator.seed_seq.spawn(1)[0] if mode == "research" else None
    noisy = np.maximum(counts + laplace_noise(m, 2.0 / e, mode=mode, seed=noise_seed), 0.0)
    total = noisy.sum()
    probs = np.full(m, 1.0 / m) if total <= 0 else noisy / total
    k = xv.size if n_synthetic is None else int(n_synthetic)
    which = rng.choice(m, size=k, p=probs)
    synthetic = rng.uniform(edges[which], edges[which + 1])
    return PHResult(synthetic=synthetic, edges=edges, noisy_counts=noisy, eps=e, mode=mode)
