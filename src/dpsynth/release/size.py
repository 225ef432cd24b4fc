"""The size of a released synthetic data set, inside the guarantee.

With one record *removed*, two neighbouring data sets have ``n`` and ``n - 1`` records, so a release
of exactly ``n`` rows tells them apart whatever the draw: the epsilon of the draw does not cover the
file. A release therefore has one of three sizes (:class:`ReleaseSize`):

* ``"dp_count"``: ``n`` plus discrete Laplace noise from OpenDP's count measurement
  (``make_count >> then_laplace``), epsilon ``eps_size`` with one record removed (OpenDP's own privacy
  map), computed once per fit and charged in the ledger the first time a release uses it; later
  releases re-use the same noisy count, which is post-processing and costs nothing more;
* ``"public"``: a size the data holder declares public (``n_release=``), or the number of rows of a
  public frame of covariates given for the synthetic records; it costs nothing, and the statement
  says it was declared public;
* ``"replace"``: under one record *replaced* the neighbours have the same size, so ``n`` is public
  by the relation's definition; the confidential file's own covariate rows, when they are released
  beside the synthetic values, are public in the same way (they were declared public covariates).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..validation import DataError, check_eps

__all__ = ["ReleaseSize", "dp_count", "count_scale", "HOWS", "DEFAULT_SIZE_EPS"]

#: How a released size was set.
HOWS = ("dp_count", "public", "replace")
#: Default epsilon of the DP count (one record removed): its noise has standard deviation about 14 records.
DEFAULT_SIZE_EPS = 0.1


@dataclass(frozen=True)
class ReleaseSize:
    """A released size and what it cost.

    Attributes
    ----------
    n : int
        Rows released.
    how : str
        ``"dp_count"``, ``"public"`` or ``"replace"``.
    eps : float
        Epsilon of the size (0 unless ``"dp_count"``), with one record removed.
    """

    n: int
    how: str
    eps: float = 0.0

    def phrase(self) -> str:
        """How the size was set, in words (for the privacy statement)."""
        if self.how == "dp_count":
            return (f"{self.n} rows, a DP count (OpenDP's discrete Laplace count, eps = {self.eps:.3g} with one "
                    f"record removed, charged once)")
        if self.how == "public":
            return f"{self.n} rows, a size declared public"
        return f"{self.n} rows: the size is public with one record replaced"


def _count_measurement(eps: float):
    import opendp.prelude as dp

    e = check_eps(eps, "size_eps")
    dp.enable_features("contrib")
    count = dp.t.make_count(dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance())
    scale = dp.binary_search_param(lambda s: count >> dp.m.then_laplace(scale=s), d_in=1, d_out=e)
    return count >> dp.m.then_laplace(scale=scale), float(scale)


def count_scale(eps: float) -> float:
    """The discrete Laplace scale ``t`` OpenDP calibrates the count to at ``eps`` (removal): ``1/t <= eps``."""
    return _count_measurement(eps)[1]


def dp_count(x, eps: float, *, mode: str = "release", seed=None) -> ReleaseSize:
    """``len(x)`` with discrete Laplace noise at ``eps`` (one record removed).

    In release mode the count is OpenDP's count measurement, its noise from the system's secure
    randomness (it cannot be seeded). In research mode the same discrete Laplace noise (OpenDP's
    calibrated scale) comes from the seeded stream ``seed``, so that a study or a test repeats
    exactly; such a count is not for publication. The noisy count is kept at 1 or more
    (post-processing).
    """
    e = check_eps(eps, "size_eps")
    xs = np.asarray(x, dtype=float).ravel()
    if not xs.size:
        raise DataError("the data are empty; there is nothing to count.")
    meas, scale = _count_measurement(e)
    spent = float(meas.map(1))
    if not spent <= e * (1 + 1e-9):  # pragma: no cover - binary_search_chain returns a passing scale
        raise RuntimeError(f"OpenDP calibration failed: map(1) = {spent} > eps = {e}")
    if mode == "release":
        n = int(meas([float(v) for v in xs]))
    elif mode == "research":
        from ..seeds import generator

        rng = generator(seed)
        q = np.exp(-1.0 / scale)  # discrete Laplace: the difference of two geometric variables
        n = int(xs.size + rng.geometric(1 - q) - rng.geometric(1 - q))
    else:
        raise DataError(f"`mode` must be 'release' or 'research'; got {mode!r}.")
    return ReleaseSize(n=max(1, n), how="dp_count", eps=spent)
