"""A plain PyMC model-building function as a model family, and its simulator.

A user model is a function ``fn(x, X)`` called inside a ``pm.Model`` context, with ``x`` the
confidential column and ``X`` the design matrix (intercept first, then the encoded covariates) as
``pm.Data``. It defines its priors and returns the observation distribution: an unregistered
univariate ``pm.<Dist>.dist(...)`` with one entry per record, e.g. ``pm.LogNormal.dist(mu, sigma,
shape=x.shape)``. The package adds the likelihood itself, ``weighted_loglik(pm.logp(dist, x))``,
which every mechanism weights and clamps (a function that calls :func:`dpsynth.weighted_loglik`
with exactly that term is accepted too). Synthetic records are drawn from that distribution at one
posterior draw (:class:`ModelSimulator`): no simulator is written by hand.

A guarantee is stated only for what the package can check (:func:`verify_model`): the clamped
likelihood must be the **only** term of the model that depends on the confidential column. A model
that observes ``x`` (``pm.Normal("obs", ..., observed=x)``), adds a ``pm.Potential`` or a prior that
depends on it, keeps a ``pm.Deterministic`` of it (posterior draws are saved and released), or whose
distribution's parameters depend on it (then one record's term depends on the others) is refused
with the variable named: each would carry the data past the clamp.
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

__all__ = ["PyMCFunctionFamily", "ModelSimulator", "qualname", "import_function", "verify_model"]


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

        from ..likelihood import _ATTR, likelihood_term, weighted_loglik

        values = self.data_values(x, covariates)
        with pm.Model() as model:
            xd, Xd = pm.Data("x", values["x"]), pm.Data("X", values["X"])
            dist = self.fn(xd, Xd)
            if dist is None or not hasattr(dist, "owner") or dist.owner is None:
                raise DataError(
                    f"the model function {qualname(self.fn)} must return the observation distribution "
                    f"(e.g. `pm.LogNormal.dist(mu, sigma, shape=x.shape)`), from which the likelihood is built and "
                    f"synthetic records are drawn; got {dist!r}."
                )
            own = getattr(model, _ATTR, None)
            if own is None:
                weighted_loglik(pm.logp(dist, xd))
        model._dpsynth_dist = dist  # noqa: SLF001
        verify_model(model, dist, xd, qualname(self.fn), user_term=own)
        likelihood_term(model)
        return model

    def simulate(self, draws, rng, covariates=None):  # pragma: no cover - the Synthesizer uses ModelSimulator
        raise NotImplementedError("use the Synthesizer, which draws from the model's own distribution")


def _depends_on(var, data) -> bool:
    try:
        from pytensor.graph.traversal import ancestors
    except ImportError:  # pragma: no cover - pytensor before 2.31
        from pytensor.graph.basic import ancestors

    return any(a is data for a in ancestors([var]))


def verify_model(model, dist, x, name: str, *, user_term=None) -> None:
    """Check that the clamped likelihood is the only term of ``model`` that depends on the data ``x``.

    Parameters
    ----------
    model : pymc.Model
        The model built by a user's function, with the package's likelihood added.
    dist : TensorVariable
        The observation distribution the function returned.
    x : SharedVariable
        The ``pm.Data`` container of the confidential column.
    name : str
        The function's name, for the messages.
    user_term : LikelihoodTerm, optional
        The likelihood the function registered itself through :func:`dpsynth.weighted_loglik`: its
        term must be ``pm.logp(dist, x)`` exactly.

    Raises
    ------
    DataError
        Naming the variable that carries the data past the clamp, and the fix.
    """
    import pymc as pm
    from pytensor.graph.basic import equal_computations

    from ..likelihood import likelihood_term

    fix = ("; the only place the confidential column may enter is the likelihood the package builds from the "
           "returned distribution (return `pm.<Dist>.dist(...)` and leave the rest out)")
    if model.observed_RVs:
        names = [v.name for v in model.observed_RVs]
        raise DataError(f"the model function {name} adds observed variable(s) {names}: an unclamped likelihood, "
                        f"outside the censoring{fix}.")
    term = likelihood_term(model)
    for pot in model.potentials:
        if pot.name != term.name and _depends_on(pot, x):
            raise DataError(f"the model function {name} adds a potential {pot.name!r} that depends on the "
                            f"confidential column: an unclamped term{fix}.")
    for rv in model.free_RVs:
        if _depends_on(rv, x):
            raise DataError(f"the model function {name}'s parameter {rv.name!r} has a prior that depends on the "
                            f"confidential column{fix}.")
    for det in model.deterministics:
        if _depends_on(det, x):
            raise DataError(f"the model function {name} keeps a deterministic {det.name!r} computed from the "
                            f"confidential column: posterior draws are saved and released{fix}.")
    op = getattr(dist.owner, "op", None)
    params = op.dist_params(dist.owner) if hasattr(op, "dist_params") else dist.owner.inputs
    if any(_depends_on(v, x) for v in params):  # its size may follow x's (shape=x.shape): n, not the values
        raise DataError(f"the model function {name} returns a distribution whose parameters depend on the "
                        f"confidential column, so one record's term would depend on the others{fix}.")
    if getattr(op, "ndim_supp", None) != 0:
        raise DataError(f"the model function {name} must return a univariate distribution with one entry per "
                        f"record (e.g. `pm.LogNormal.dist(mu, sigma, shape=x.shape)`); got {op}.")
    if user_term is not None and not equal_computations([user_term.logp], [pm.logp(dist, x)]):
        raise DataError(f"the model function {name} passes `dpsynth.weighted_loglik` a term other than "
                        f"`pm.logp(dist, x)` of the distribution it returns: leave the call out, and the package "
                        f"adds exactly that term.")


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
