"""A plain PyMC model-building function as a model family, and its simulator.

A user model is a function ``fn(x, X)`` called inside a ``pm.Model`` context, with ``x`` the
confidential column and ``X`` the design matrix (intercept first, then the encoded covariates) as
``pm.Data``. It defines its priors, writes the per-record log-likelihood through
:func:`dpsynth.weighted_loglik` and returns the observation distribution (an unregistered
``pm.<Dist>.dist(...)`` of one entry per record, e.g. ``pm.LogNormal.dist(mu, sigma,
shape=x.shape)``). Synthetic records are drawn from that distribution at one posterior draw
(:class:`ModelSimulator`): no simulator is written by hand.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..validation import DataError
from .base import ModelFamily

if TYPE_CHECKING:  # pragma: no cover
    from ..fitting import CompiledModel

__all__ = ["PyMCFunctionFamily", "ModelSimulator", "qualname", "import_function"]


def qualname(fn) -> str:
    """``module:qualname`` of a function."""
    return f"{getattr(fn, '__module__', '?')}:{getattr(fn, '__qualname__', repr(fn))}"


def import_function(spec: str) -> Callable:
    """The module-level function named ``module:qualname``."""
    mod, _, qual = spec.partition(":")
    if not mod or not qual or "<" in qual:
        raise DataError(f"cannot import the model function {spec!r}: it must be a module-level function "
                        f"(module:qualname), not a lambda or a nested function.")
    obj = importlib.import_module(mod)
    for part in qual.split("."):
        obj = getattr(obj, part)
    return obj


@dataclass(frozen=True)
class PyMCFunctionFamily(ModelFamily):
    """Adapter: a plain PyMC model-building function as a :class:`ModelFamily`.

    Parameters
    ----------
    fn : callable
        ``fn(x, X) -> distribution``; see the module docstring.
    n_coef : int
        Columns of the design matrix ``X`` (intercept included).
    """

    fn: Callable = None
    n_coef: int = 1
    name: str = "pymc_function"
    takes_covariates = True
    design_field = "n_coef"

    def data_values(self, x: np.ndarray, covariates: np.ndarray | None) -> dict[str, np.ndarray]:
        X = np.ones((x.shape[0], 1)) if covariates is None else covariates
        return {"x": x, "X": X}

    def record_logp(self, data):  # pragma: no cover - build() is overridden
        raise NotImplementedError

    def build(self, x: np.ndarray, covariates: np.ndarray | None = None):
        import pymc as pm

        from ..likelihood import _ATTR, likelihood_term

        values = self.data_values(x, covariates)
        with pm.Model() as model:
            xd, Xd = pm.Data("x", values["x"]), pm.Data("X", values["X"])
            dist = self.fn(xd, Xd)
            term = getattr(model, _ATTR, None)
            if term is None:
                raise DataError(
                    f"the model function {qualname(self.fn)} did not call `dpsynth.weighted_loglik`; write its "
                    f"per-record log-likelihood through it, e.g. `dpsynth.weighted_loglik(pm.logp(dist, x))`."
                )
        if dist is None or not hasattr(dist, "owner") or dist.owner is None:
            raise DataError(
                f"the model function {qualname(self.fn)} must return the observation distribution "
                f"(e.g. `pm.LogNormal.dist(mu, sigma, shape=x.shape)`), from which synthetic records are drawn; "
                f"got {dist!r}."
            )
        model._dpsynth_dist = dist  # noqa: SLF001
        likelihood_term(model)
        return model

    def simulate(self, draws, rng, covariates=None):  # pragma: no cover - the Synthesizer uses ModelSimulator
        raise NotImplementedError("use the Synthesizer, which draws from the model's own distribution")


class ModelSimulator:
    """Draws from a model's observation distribution at given parameter values, compiled once."""

    def __init__(self, cm: CompiledModel) -> None:
        import pytensor
        import pytensor.tensor as pt
        from pymc.pytensorf import compile as pm_compile
        from pytensor.graph.replace import graph_replace

        model = cm.model
        dist = model._dpsynth_dist  # noqa: SLF001
        rvs = model.free_RVs
        self.names = [rv.name for rv in rvs]
        ins = [pt.tensor(name=rv.name, shape=rv.type.shape, dtype=rv.dtype) for rv in rvs]
        out = graph_replace(dist, dict(zip(rvs, ins)), strict=False)
        self.fn = pm_compile(ins, out, random_seed=0)
        rng_type = pytensor.tensor.random.type.RandomGeneratorType
        self.rngs = [v for v in self.fn.get_shared() if isinstance(v.type, rng_type)]
        self.cm = cm

    def __call__(self, draw: Mapping[str, np.ndarray], n: int, X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        import pymc as pm
        from pymc.pytensorf import reseed_rngs

        pm.set_data({"x": np.ones(n), "X": X}, model=self.cm.model)
        reseed_rngs(self.rngs, int(rng.integers(2**63)))
        out = np.asarray(self.fn(*[np.asarray(draw[k]) for k in self.names]), dtype=float)
        if out.shape != (n,):
            raise DataError(f"the model's distribution gave shape {out.shape}, expected ({n},): give it one entry "
                            f"per record (e.g. shape=x.shape).")
        return out
