"""Readings of range restriction (B) and the pieces of (A) that the range-restriction chapter checks.

The slides on range restriction (seed ``001``) give the range-truncated sensitivity of (B) as
``|alpha_i f_theta(x_i) - log P_theta(R_i)|``: the weight multiplies the record's log-likelihood
but not the log range probability. That is the reading of SPEC §3.9 and of
:func:`dpsynth.mechanisms.range_truncated`. This module adds the alternative reading in which the
weight multiplies the range-truncated log-likelihood as a whole,

.. math:: \\Delta^{B'} = \\max_{s,i} \\left|\\alpha_i \\bigl(f_{\\theta_s}(x_i) - \\log P_{\\theta_s}(R_i)\\bigr)\\right|,

i.e. the record's contribution is the weighted truncated likelihood
``(p(x_i | theta) / P_theta(R_i))^alpha_i``. The fit is the same weighted pseudo posterior as in
(B) (weights from the unweighted fit's truncated sensitivities ``max_s |f - log P|``); only the
accounting differs, so :func:`whole_term_truncated` re-accounts an existing (B) result instead of
refitting.

It also gives a decomposition of the (B) bound that explains which record and which term attain
it. (The knowledge probabilities ``lambda_i`` of (A) are
:func:`dpsynth.mechanisms.knowledge_lambda`, also importable from here.)
"""

from __future__ import annotations

import numpy as np

from . import registry
from .fitting import Fit
from .mechanisms import MechanismResult, knowledge_lambda, range_log_prob  # noqa: F401 (re-export)
from .privacy import RecordBounds, privacy_report, record_bounds
from .validation import DataError, as_weights

__all__ = [
    "truncated_bounds",
    "whole_term_truncated",
    "truncation_decomposition",
]


def _matrices(fit: Fit, a: float, b: float, matrices) -> tuple[np.ndarray, np.ndarray]:
    """``(F, log P)`` of a fit: the given pair, or computed now."""
    return matrices if matrices is not None else (fit.loglik(), range_log_prob(fit, a, b))


def truncated_bounds(
    fit: Fit, weights, a: float, b: float, *, draw_quantile: float = 1.0, matrices=None
) -> RecordBounds:
    """By-record bounds of the whole-term reading (B'): ``max_s |alpha_i (f - log P)|``.

    Parameters
    ----------
    fit : Fit
        A fit whose draws are used (the weighted fit of (B), or an unweighted fit with
        ``weights=1`` for the unweighted truncated sensitivity).
    weights : array_like or float
        Record weights ``alpha`` in [0, 1].
    a, b : float
        Range multipliers.
    draw_quantile : float
        Draw-dropping rule (1.0 keeps every draw).
    matrices : tuple, optional
        ``(fit.loglik(), range_log_prob(fit, a, b))`` if the caller already has them.

    Returns
    -------
    RecordBounds
        ``delta_i`` of the reading; ``abs_loglik`` holds ``max_s |f - log P|`` (unweighted).
    """
    w = as_weights(weights, fit.x.size)
    F, L = _matrices(fit, a, b, matrices)
    G = F - L
    if np.isnan(G).any():
        raise DataError("the truncated log-likelihood has NaN entries (an empty range?).")
    out = record_bounds(G, w, draw_quantile=draw_quantile)
    del G
    return out


def whole_term_truncated(result_b: MechanismResult, *, name: str | None = None) -> MechanismResult:
    """Re-account a (B) result under the whole-term reading (B').

    Parameters
    ----------
    result_b : MechanismResult
        The output of :func:`dpsynth.mechanisms.range_truncated` (its ``extra`` holds ``a``, ``b``).
    name : str, optional
        Default ``"B'[a,b]"``.

    Returns
    -------
    MechanismResult
        Same fit and weights as ``result_b``; bounds ``max_s |alpha_i (f - log P)|``; ``extra``
        also holds the :func:`truncation_decomposition` of the (B) bound, from the same matrices.
    """
    try:
        a, b = float(result_b.extra["a"]), float(result_b.extra["b"])
    except KeyError as exc:
        raise DataError("`result_b` must come from `mechanisms.range_truncated` (needs extra a, b).") from exc
    matrices = _matrices(result_b.fit, a, b, None)  # computed once for both reductions below
    bounds = truncated_bounds(result_b.fit, result_b.weights, a, b, draw_quantile=result_b.bounds.draw_quantile,
                              matrices=matrices)
    decomposition = truncation_decomposition(result_b.fit, result_b.weights, a, b, matrices=matrices)
    del matrices
    nm = name or f"B'[{a:g},{b:g}]"
    rep = privacy_report(bounds, None, guarantee=registry.guarantee(nm), a=a, b=b, reading="whole-term")
    return MechanismResult(
        name=nm, fit=result_b.fit, weights=result_b.weights, bounds=bounds,
        privacy=rep, extra={"a": a, "b": b, "reading": "whole-term", "decomposition": decomposition},
    )


def truncation_decomposition(fit: Fit, weights, a: float, b: float, *, matrices=None) -> dict:
    """Which record and which term attain the (B) bound ``max |alpha f - log P|``.

    Returns
    -------
    dict
        ``record``: index of the record attaining the bound; ``weight``: its ``alpha``;
        ``weighted_loglik``: ``alpha f`` at the attaining draw; ``log_prob``: ``log P`` there;
        ``max_neg_log_prob``: ``max_{s,i} -log P_{theta_s}(R_i)`` (a lower bound on the (B) Delta
        for any record with weight 0); ``n_zero_weight``: records with ``alpha = 0``.
        ``matrices`` as in :func:`truncated_bounds`.
    """
    w = as_weights(weights, fit.x.size)
    F, L = _matrices(fit, a, b, matrices)
    G = np.where(w[None, :] == 0.0, 0.0, w[None, :] * F)
    absg = np.abs(G - L)
    s, i = np.unravel_index(int(np.argmax(absg)), absg.shape)
    out = {
        "record": int(i),
        "weight": float(w[i]),
        "weighted_loglik": float(G[s, i]),
        "log_prob": float(L[s, i]),
        "max_neg_log_prob": float(np.max(-L)),
        "n_zero_weight": int((w == 0).sum()),
    }
    del F, L, G, absg
    return out
