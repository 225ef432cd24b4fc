"""The weighted, censored likelihood helper: how any PyMC model becomes a mechanism.

Inside a PyMC model, write the per-record log-likelihood ``logp`` (a vector with one entry per
record) and hand it to :func:`weighted_loglik`. The helper adds

.. math:: \\sum_i \\operatorname{clamp}(\\alpha_i f_\\theta(x_i) - r_i, -M, M)

to the model's log density, where the record weights :math:`\\alpha_i`, the per-record reference
:math:`r_i` and the censoring bound :math:`M` are ``pm.Data`` containers. With :math:`M = \\infty`
and :math:`r = 0` the term is the weighted pseudo likelihood; with :math:`M = \\varepsilon/2` it is
the censored one. A reference :math:`r_i = \\alpha_i f_{\\theta_0}(x_i)`, the record's own term at a
public parameter :math:`\\theta_0`, places each record's window where its term lies, whatever the
unit of the data (the unit-free censored likelihood, :mod:`dpsynth.mechanisms.censored_reference`).
Because weights, references and bound are data, one compiled model serves every mechanism and
every epsilon.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pymc as pm
import pytensor.tensor as pt

__all__ = ["LikelihoodTerm", "weighted_loglik", "likelihood_term", "WEIGHTS", "BOUND", "REFERENCE"]

#: Name of the ``pm.Data`` container holding the record weights.
WEIGHTS = "weights"
#: Name of the ``pm.Data`` container holding the censoring bound M (``inf`` = no censoring).
BOUND = "bound"
#: Name of the ``pm.Data`` container holding the per-record reference subtracted before the clamp.
REFERENCE = "reference"

_ATTR = "_dpsynth_likelihood"


@dataclass(frozen=True)
class LikelihoodTerm:
    """The pieces of a model's weighted likelihood, kept for privacy accounting.

    Attributes
    ----------
    name : str
        Name of the ``pm.Potential`` that adds the likelihood.
    logp : TensorVariable
        Unweighted per-record log-likelihood :math:`f_\\theta(x_i)`, shape ``(n,)``.
    weights, bound, reference : TensorVariable
        The ``pm.Data`` containers for :math:`\\alpha`, :math:`M` and :math:`r`.
    """

    name: str
    logp: pt.TensorVariable
    weights: pt.TensorVariable
    bound: pt.TensorVariable
    reference: pt.TensorVariable = None


def weighted_loglik(
    logp: pt.TensorVariable,
    weights: np.ndarray | None = None,
    bound: float | None = None,
    *,
    name: str = "loglik",
    model: pm.Model | None = None,
) -> pt.TensorVariable:
    """Add a weighted (and optionally censored) likelihood to the current PyMC model.

    Parameters
    ----------
    logp : TensorVariable
        Per-record log-likelihood :math:`f_\\theta(x_i)`, a vector of length n, e.g.
        ``pm.logp(pm.Poisson.dist(mu), x_data)``.
    weights : array_like, optional
        Initial record weights in [0, 1]; ``None`` means all ones. They become the ``pm.Data``
        container ``"weights"`` and can be changed at refit time without recompiling.
    bound : float, optional
        Initial censoring bound M > 0; ``None`` means no censoring (M = inf). Becomes the
        ``pm.Data`` container ``"bound"``.
    name : str
        Name of the potential term.
    model : pm.Model, optional
        Model to add to; defaults to the model on the context stack.

    Returns
    -------
    TensorVariable
        The summed likelihood term that was added.

    Raises
    ------
    ValueError
        If the model already has a likelihood registered through this helper, or the initial
        weights or bound are invalid.
    """
    from .validation import as_weights, check_positive

    model = pm.modelcontext(model)
    if getattr(model, _ATTR, None) is not None:
        raise ValueError(
            "this model already has a weighted likelihood; write all records into one `logp` "
            "vector and call `weighted_loglik` once."
        )
    logp = pt.as_tensor_variable(logp)
    if logp.ndim != 1:
        raise ValueError(f"`logp` must be a vector with one entry per record; got {logp.ndim} dims.")
    n = int(logp.shape[0].eval())
    w0 = as_weights(weights, n)
    m0 = np.inf if bound is None else check_positive(bound, "bound")
    with model:
        w = pm.Data(WEIGHTS, w0)
        m = pm.Data(BOUND, np.asarray(m0, dtype=float))
        r = pm.Data(REFERENCE, np.zeros(n))
        # A record with weight 0 contributes exactly 0, even where its log-likelihood is -inf.
        contrib = pt.switch(pt.eq(w, 0.0), 0.0, w * logp - r)
        total = pt.sum(pt.clip(contrib, -m, m))
        pm.Potential(name, total)
    setattr(model, _ATTR, LikelihoodTerm(name=name, logp=logp, weights=w, bound=m, reference=r))
    return total


def likelihood_term(model: pm.Model) -> LikelihoodTerm:
    """Return the likelihood registered on ``model`` by :func:`weighted_loglik`.

    Raises
    ------
    ValueError
        If the model was not written through :func:`weighted_loglik`.
    """
    term = getattr(model, _ATTR, None)
    if term is None:
        raise ValueError(
            "the model has no weighted likelihood: write its per-record log-likelihood through "
            "`dpsynth.weighted_loglik(logp)` so that the mechanisms can weight and censor it."
        )
    return term
