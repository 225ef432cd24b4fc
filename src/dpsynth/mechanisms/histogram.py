"""The perturbed histogram (PH, PH-paper): the non-model DP baseline (censoring paper, supplement S1).

Data bounded in a *public* interval ``[lower, upper]`` are binned into ``m`` equal bins chosen
without looking at the data values; each count gets Laplace noise of scale ``Delta_1 / eps``;
negative noisy counts are set to 0 and the counts normalised; synthetic records are a multinomial
draw of bins and a uniform draw within the bin.

Neighbour relations. The histogram's L1 sensitivity ``Delta_1`` depends on what "neighbouring
data sets" means: it is 1 when neighbours differ by *removing or adding* one record (one count
changes by 1) and 2 when they differ by *replacing* one record (one count goes down by 1 and
another up by 1). ``perturbed_histogram(..., neighbours="replace")`` (the default, the papers'
calibration) uses scale ``2 / eps``; ``neighbours="remove"`` uses scale ``1 / eps``. Either way
the result reports both readings of the same noise (:attr:`PHResult.eps_remove` and
:attr:`PHResult.eps_replace`).

Limits. A bin count above :data:`MAX_BINS` (100,000) is refused (``10**9`` bins needed tens of
gigabytes before failing), as is ``eps`` below :data:`MIN_EPS` (``1e-12``), whose noise scale
is astronomically large (and for subnormal ``eps`` overflows to infinity).

Two modes:

* ``"research"`` (default): Laplace noise from a seeded numpy generator, so Monte Carlo studies
  are reproducible. Not for releasing data: floating-point Laplace samplers leak.
* ``"release"``: noise from OpenDP's floating-point-safe Laplace measurement, drawn from the
  system's secure randomness; it cannot be seeded.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..seeds import SeedLike, as_seed_sequence, generator, stream
from ..validation import DataError, as_data, check_eps, check_finite, one_of, optional, positive_count
from .contract import REQUIRED, MechanismResult, MechanismSpec, Param, RunContext

__all__ = ["PHResult", "perturbed_histogram", "bin_count", "laplace_noise", "MAX_BINS", "MIN_EPS", "NEIGHBOURS",
           "HistogramRelease", "MECHANISMS", "PH", "PH_PAPER"]

MODES = ("research", "release")
#: Largest number of histogram bins accepted (a bin count above it is almost surely a mistake).
MAX_BINS = 100_000
#: Smallest privacy budget accepted by :func:`perturbed_histogram` (below it the Laplace noise
#: scale is astronomically large, or infinite for subnormal ``eps``).
MIN_EPS = 1e-12
#: Neighbour relations under which ``eps`` can be calibrated, with the histogram's L1 sensitivity.
NEIGHBOURS = {"replace": 2.0, "remove": 1.0}


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
        Privacy budget requested, under the ``neighbours`` relation.
    mode : str
        ``"research"`` or ``"release"``.
    noise_scale : float
        Scale ``b`` of the Laplace noise added to each count.
    eps_remove : float
        The guarantee under remove/add-one neighbours, ``1 / b`` (L1 sensitivity 1).
    eps_replace : float
        The guarantee under replace-one neighbours, ``2 / b`` (L1 sensitivity 2).
    neighbours : str
        Relation ``eps`` was calibrated under: ``"replace"`` or ``"remove"``.
    guarantee : str
        Always ``"DP"``.
    """

    synthetic: np.ndarray
    edges: np.ndarray
    noisy_counts: np.ndarray
    eps: float
    mode: str
    noise_scale: float
    eps_remove: float
    eps_replace: float
    neighbours: str
    guarantee: str = "DP"


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def bin_count(n: int, rule: str | int = "sqrt") -> int:
    """Number of bins from the record count only.

    Parameters
    ----------
    n : int
        Number of records (a positive integer).
    rule : {"sqrt", "log"} or int
        ``"sqrt"`` (ceil sqrt n), ``"log"`` (ceil ln n) or a number of bins in
        ``[1, MAX_BINS]``.

    Returns
    -------
    int
    """
    if not _is_int(n) or n < 1:
        raise DataError(f"`n` must be a positive integer (the number of records); got {n!r}.")
    if _is_int(rule):
        if rule < 1:
            raise DataError(f"`bins` must be >= 1; got {rule}.")
        m = int(rule)
    elif isinstance(rule, str) and rule == "sqrt":
        m = max(1, math.ceil(math.sqrt(n)))
    elif isinstance(rule, str) and rule == "log":
        m = max(1, math.ceil(math.log(n)))
    else:
        raise DataError(f"`bins` must be 'sqrt', 'log' or a positive int; got {rule!r}.")
    if m > MAX_BINS:
        raise DataError(
            f"`bins` gives {m:,} bins, above the maximum MAX_BINS={MAX_BINS:,}; pass a smaller number of "
            f"bins (or the 'sqrt'/'log' rule)."
        )
    return m


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
    bins: str | int = 30,
    n_synthetic: int | None = None,
    mode: str = "research",
    seed: SeedLike = None,
    neighbours: str = "replace",
    n_public: int | None = None,
) -> PHResult:
    """Perturbed-histogram synthetic data with an ``eps``-DP guarantee.

    Parameters
    ----------
    x : array_like
        Confidential univariate data; values outside ``[lower, upper]`` are clamped to the bounds.
    eps : float
        Privacy budget (``>= MIN_EPS``), under the ``neighbours`` relation.
    upper, lower : float
        Public bounds of the data space, from public knowledge (a published cap, a top-code, the
        variable's definition), never from the data. Values outside are clamped to them (as
        OpenDP's ``make_clamp`` and SmartNoise do): a refusal that depended on whether one record
        lies outside would itself be a release.
    bins : int or {"sqrt", "log"}
        Number of bins (at most :data:`MAX_BINS`; default 30), or a rule applied to the public size
        ``n_public``.
    n_public : int, optional
        A public size for a bin rule (a published count, the study's design size). Never the
        confidential ``n``: with one record removed, ``n`` and ``n - 1`` records can give different
        bin counts (101 and 100 give 11 and 10 with ``"sqrt"``), which the released histogram shows.
    n_synthetic : int, optional
        Synthetic records to draw, a positive integer (default n).
    mode : {"research", "release"}
        Noise source; see module docs.
    seed : int or SeedSequence, optional
        Seed (research mode only). A SeedSequence is not modified: the noise and the sampling use
        streams addressed from it (:func:`dpsynth.seeds.stream`), so the same seed gives the same
        result every time.
    neighbours : {"replace", "remove"}
        Neighbour relation ``eps`` is calibrated under. The histogram's L1 sensitivity is 2 when
        one record is replaced (``"replace"``, the papers' calibration: noise scale ``2 / eps``)
        and 1 when one record is removed or added (``"remove"``: noise scale ``1 / eps``).

    Returns
    -------
    PHResult
    """
    xv = as_data(x, "x")
    e = check_eps(eps)
    if not isinstance(neighbours, str) or neighbours not in NEIGHBOURS:
        raise DataError(
            f"`neighbours` must be 'replace' (one record replaced, L1 sensitivity 2) or 'remove' (one "
            f"record removed or added, sensitivity 1); got {neighbours!r}."
        )
    if e < MIN_EPS:
        raise DataError(
            f"`eps` must be >= MIN_EPS={MIN_EPS:g} for the perturbed histogram; got {eps!r}, whose Laplace "
            f"noise scale {NEIGHBOURS[neighbours]}/eps is astronomically large or infinite. Use a larger eps."
        )
    scale = NEIGHBOURS[neighbours] / e
    if not np.isfinite(scale):  # pragma: no cover - excluded by MIN_EPS
        raise DataError(f"`eps`={eps!r} gives an infinite noise scale; use a larger eps.")
    if n_synthetic is not None and (not _is_int(n_synthetic) or n_synthetic < 1):
        raise DataError(
            f"`n_synthetic` must be a positive integer (number of synthetic records) or None for n; "
            f"got {n_synthetic!r}."
        )
    for bname, bval in (("lower", lower), ("upper", upper)):
        if isinstance(bval, (bool, np.bool_)) or not isinstance(bval, (int, float, np.integer, np.floating)):
            raise DataError(f"`{bname}` must be a number (a public bound); got {bval!r} ({type(bval).__name__}).")
    lo, hi = float(lower), float(upper)
    if not (np.isfinite(lo) and np.isfinite(hi)) or hi <= lo:
        raise DataError(f"public bounds must be finite with upper > lower; got lower={lower!r}, upper={upper!r}.")
    xv = np.clip(xv, lo, hi)  # public bounds clamp every record (OpenDP's make_clamp): a stable transformation
    if mode not in MODES:
        raise DataError(f"`mode` must be one of {MODES}; got {mode!r}.")
    if mode == "release" and seed is not None:
        raise DataError("release mode draws from OpenDP's secure randomness and cannot be seeded; pass seed=None.")
    if isinstance(bins, str) and n_public is None:
        raise DataError(f"the bin rule {bins!r} needs a public size: pass `n_public` (a published count, or the size "
                        f"of a simulated design), or an integer number of `bins`. The confidential n is never used: "
                        f"with one record removed it could change the number of bins.")
    m = bin_count(int(n_public) if isinstance(bins, str) else 1, bins)
    edges = np.linspace(lo, hi, m + 1)
    counts = np.histogram(xv, bins=edges)[0].astype(float)
    if mode == "research":
        base = as_seed_sequence(seed)  # never spawned from: the caller's SeedSequence is not modified
        noise_seed, rng = stream(base, "noise"), generator(stream(base, "sample"))
    else:
        noise_seed, rng = None, generator(None)
    noisy = np.maximum(counts + laplace_noise(m, scale, mode=mode, seed=noise_seed), 0.0)
    total = noisy.sum()
    probs = np.full(m, 1.0 / m) if total <= 0 else noisy / total
    k = xv.size if n_synthetic is None else int(n_synthetic)
    which = rng.choice(m, size=k, p=probs)
    synthetic = rng.uniform(edges[which], edges[which + 1])
    return PHResult(
        synthetic=synthetic, edges=edges, noisy_counts=noisy, eps=e, mode=mode, noise_scale=float(scale),
        eps_remove=float(1.0 / scale), eps_replace=float(2.0 / scale), neighbours=neighbours,
    )


@dataclass(frozen=True, eq=False)
class HistogramRelease:
    """What the perturbed histogram releases: public bin edges and the noisy counts.

    Synthetic values are drawn from it by post-processing (no further privacy cost): a bin with
    probability proportional to its noisy count, then a uniform value within the bin.

    Attributes
    ----------
    edges : numpy.ndarray
        Bin edges (public: from the public bounds and bin count).
    noisy_counts : numpy.ndarray
        Counts after Laplace noise, negatives set to 0.
    mode : str
        ``"release"`` (OpenDP's noise) or ``"research"`` (seeded numpy noise, not for a release).
    """

    edges: np.ndarray
    noisy_counts: np.ndarray
    mode: str

    def sample(self, n: int, rng: np.random.Generator, public: Any = None) -> np.ndarray:
        """``n`` synthetic values."""
        m = self.noisy_counts.size
        total = self.noisy_counts.sum()
        probs = np.full(m, 1.0 / m) if total <= 0 else self.noisy_counts / total
        which = rng.choice(m, size=int(n), p=probs)
        return rng.uniform(self.edges[which], self.edges[which + 1])

    def to_dict(self) -> dict:
        """Plain-JSON contents."""
        return {"edges": self.edges.tolist(), "noisy_counts": self.noisy_counts.tolist(), "mode": self.mode}

    @classmethod
    def from_dict(cls, d: dict) -> HistogramRelease:
        """Read :meth:`to_dict`'s output back."""
        return cls(edges=np.asarray(d["edges"], dtype=float), noisy_counts=np.asarray(d["noisy_counts"], dtype=float),
                   mode=str(d["mode"]))


def _check_bins(value: Any, name: str):
    if isinstance(value, str) and value.isdigit():
        value = int(value)
    if isinstance(value, str):
        return one_of("sqrt", "log")(value, name)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or not 1 <= value <= MAX_BINS:
        raise DataError(f"`{name}` must be a number of bins in [1, {MAX_BINS:,}] or 'sqrt'/'log'; got {value!r}.")
    return int(value)


def _check_within_bounds(x: np.ndarray, params: dict) -> None:
    """The public bounds must be ordered; the data are not read (values outside are clamped when the mechanism runs)."""
    lo, hi = params["lower"], params["upper"]
    if not hi > lo:
        raise DataError(f"the public bounds must satisfy upper > lower; got lower={lo!r}, upper={hi!r}.")


#: The perturbed histogram's parameters.
PH_PARAMS = {
    "lower": Param(REQUIRED, check_finite, "public lower bound of the target, from public knowledge (never from "
                   "the data)", in_data_unit=True, fill="levels_lower"),
    "upper": Param(REQUIRED, check_finite, "public upper bound of the target, from public knowledge (never from "
                   "the data)", in_data_unit=True, fill="levels_upper"),
    "bins": Param(30, _check_bins, "number of bins, or the rule 'sqrt' / 'log' of a public size n_public", cli="str",
                  fill="levels_bins"),
    "n_public": Param(None, optional(positive_count), "a public size for a bin rule (never the confidential n; the "
                      "Synthesizer fills in the released size when it is public)", cli="int", fill="public_size"),
    "mode": Param("release", one_of("release", "research"), "'release': OpenDP's Laplace noise (unseeded, safe "
                  "against floating-point attacks); 'research': seeded numpy noise, reproducible, not for a release",
                  cli="str"),
}


def _run(spec: MechanismSpec, neighbours: str, ctx: RunContext, params: dict) -> MechanismResult:
    eps, mode = params["eps"], params["mode"]
    seed = ctx.seed_for(spec.key, eps, str(params["bins"])) if mode == "research" else None
    r = perturbed_histogram(ctx.x, eps, lower=params["lower"], upper=params["upper"], bins=params["bins"],
                            mode=mode, seed=seed, neighbours=neighbours, n_synthetic=1, n_public=params["n_public"])
    state = HistogramRelease(edges=np.asarray(r.edges), noisy_counts=np.asarray(r.noisy_counts), mode=mode)
    return spec.released(state, eps_remove=r.eps_remove, eps_replace=r.eps_replace, noise_scale=r.noise_scale,
                         ph_mode=mode, bins=int(r.noisy_counts.size))


PH = MechanismSpec(
    key="ph", name="PH", guarantee="DP",
    description="perturbed histogram, noise calibrated to ε with one record removed",
    run=lambda ctx, params: _run(PH, "remove", ctx, params),
    params=PH_PARAMS, takes_eps=True, uses_model=False, release_type=HistogramRelease, covariate_use="none",
    declared_eps=lambda p, one_signed, extra=None: (p["eps"], 2.0 * p["eps"]), fits_per_release="0 (no model)",
    needs="public bounds [lower, upper] of the variable, a bin rule",
    use_when="a bounded univariate variable; a strong baseline when n is large",
    loses="every relation with the covariates (a marginal only) and the shape within a bin",
    check_data=_check_within_bounds,
)
PH_PAPER = MechanismSpec(
    key="ph_paper", name="PH-paper", guarantee="DP",
    description="perturbed histogram with the papers' Laplace(2/ε): ε/2 with one record removed",
    run=lambda ctx, params: _run(PH_PAPER, "replace", ctx, params),
    params=PH_PARAMS, takes_eps=True, uses_model=False, release_type=HistogramRelease, covariate_use="none",
    declared_eps=lambda p, one_signed, extra=None: (p["eps"] / 2.0, p["eps"]), fits_per_release="0", needs="as PH",
    use_when="the papers' calibration, shown for comparison (ε/2 under removal)",
    loses="as PH, with twice PH's noise at the same ε under removal",
    check_data=_check_within_bounds,
)
MECHANISMS = (PH, PH_PAPER)
