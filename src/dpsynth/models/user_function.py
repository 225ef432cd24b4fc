"""A plain PyMC model-building function as a model family, and its simulator.

A user model is a function ``fn(x, X)`` called inside a ``pm.Model`` context, with ``x`` the
confidential column and ``X`` the design matrix (intercept first, then the encoded covariates) as
``pm.Data``. It defines its priors and returns the observation distribution: an unregistered
univariate ``pm.<Dist>.dist(...)`` with one entry per record, e.g. ``pm.LogNormal.dist(mu, sigma,
shape=x.shape)``. The package adds the likelihood itself, ``weighted_loglik(pm.logp(dist, x))``,
which every mechanism weights and clamps (a function that calls :func:`dpsynth.weighted_loglik`
with exactly that term is accepted too). Synthetic records are drawn from that distribution at one
posterior draw (:class:`ModelSimulator`): no simulator is written by hand.

**The function never sees the data.** It is called with ``x`` and ``X`` holding public
placeholders (:data:`PLACEHOLDERS`: a constant inside the support of any model of the target's
kind; ones in the intercept column of ``X``, zeros elsewhere) of a public number of records
(``n`` when it is public, a declared size, else :data:`PLACEHOLDER_SIZE`; see ``build_size``), so
that ``x.get_value()``, or any constant of the graph computed from it, holds
nothing of the data, not even their number. The data enter only at fit time, as new values of
those containers (nutpie's ``with_data``); the distribution's size must follow ``x``'s
(``shape=x.shape``).

**The check** (:func:`verify_model`) then walks every graph of the model (the joint log density,
the priors and their initial values, the potentials, the deterministics, the returned
distribution, the inner graphs of composite operations) and refuses, naming the variable and the
fix:

* an observed variable, or a potential, a prior, an initial value or a deterministic that depends
  on ``x`` (or a potential, a prior or an initial value that reads the values of ``X``): each
  would carry the data past the clamp (deterministics are never saved either: a saved synthesizer
  keeps the draws of the free parameters only);
* a distribution whose parameters depend on ``x`` (one record's term would depend on the others),
  whose parameters hold random variables other than the priors (the term would be random), whose
  size is fixed when the model is built, or that is not univariate;
* a likelihood registered by hand that is not exactly the helper's clamp of ``pm.logp(dist, x)``;
* a shared variable other than the package's containers (``x``, ``X``, ``weights``, ``bound``,
  ``reference``) and random-number states: a ``pytensor.shared`` or ``pm.Data`` copy could hold
  the data outside the check;
* a constant with as many entries as there are records (or an axis of that length): a copy of a
  column;
* a ``pm.CustomDist`` / ``pm.DensityDist``, an ``as_op`` operation or any operation defined outside
  PyTensor and PyMC: its code is arbitrary and cannot be read.

**What cannot be checked.** A function that reads the confidential data some other way, through a
closure over the DataFrame, a global variable or a file, builds graphs indistinguishable from
honest ones: ``mu = pm.Normal("mu", df.wage.max(), 1)`` is one constant, like
``pm.Normal("mu", 5.0, 1)``. No inspection of the model can tell them apart, so the guarantee of
a user model is **conditional**: the mechanism is strictly DP *if the function reads the
confidential data only through its argument* ``x``. The public statement and the saved file say
so (:attr:`dpsynth.release.statement.SynthesizerPrivacy.condition`, :func:`guarantee_condition`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..validation import DataError
from .base import ModelFamily

if TYPE_CHECKING:  # pragma: no cover
    from ..fitting import CompiledModel

__all__ = ["PyMCFunctionFamily", "ModelSimulator", "qualname", "import_function", "verify_model", "PLACEHOLDERS",
           "PLACEHOLDER_SIZE", "guarantee_condition", "placeholder_design", "prior_point"]

#: The value ``x`` holds while the function builds its model, by the target's kind: inside the support of
#: every model of that kind (0.5 lies in (0, 1), (0, inf) and the real line; 1 is a count of any count model;
#: 0 is the first level code).
PLACEHOLDERS = {"continuous": 0.5, "count": 1.0, "categorical": 0.0}
#: The containers the package makes: the only shared variables a user model's graphs may hold (with RNG states).
CONTAINERS = ("x", "X", "weights", "bound", "reference")
#: The number of records of the placeholders when no public size is known (one record removed and no declared size).
PLACEHOLDER_SIZE = 100


def qualname(fn) -> str:
    """``module:qualname`` of a function."""
    return f"{getattr(fn, '__module__', '?')}:{getattr(fn, '__qualname__', repr(fn))}"


def guarantee_condition(fn) -> str:
    """The condition a user model's guarantee holds under, as the statement says it (no check can establish it)."""
    return (f"if the model function {qualname(fn)} reads the confidential data only through its argument x; a "
            f"closure or a global reading them cannot be detected")


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


def placeholder_design(n: int, p: int) -> np.ndarray:
    """The design ``X`` a model is built with: ones in the intercept column, zeros elsewhere (nothing of the data)."""
    X = np.zeros((int(n), int(p)))
    X[:, 0] = 1.0
    return X


@dataclass(frozen=True)
class PyMCFunctionFamily(ModelFamily):
    """Adapter: a plain PyMC model-building function as a :class:`ModelFamily`.

    Parameters
    ----------
    fn : callable
        ``fn(x, X) -> distribution``; see the module docstring.
    n_coef : int
        Columns of the design matrix ``X`` (intercept included).
    placeholder : float
        The value ``x`` holds while ``fn`` builds the model (:data:`PLACEHOLDERS`, by the target's kind).
    build_size : int, optional
        The number of records of the placeholders: a public size (the Synthesizer gives ``n`` when it is
        public, a declared size, else :data:`PLACEHOLDER_SIZE`).
        Default: the length of the data the model is built for (public data only).
    """

    fn: Callable = None
    n_coef: int = 1
    placeholder: float = PLACEHOLDERS["continuous"]
    build_size: int | None = None
    name: str = "pymc_function"
    takes_covariates = True
    design_field = "n_coef"

    def data_values(self, x: np.ndarray, covariates: np.ndarray | None) -> dict[str, np.ndarray]:
        X = np.ones((x.shape[0], 1)) if covariates is None else covariates
        return {"x": x, "X": X}

    def build_values(self, x: np.ndarray, covariates: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """The values ``x`` and ``X`` hold while the function builds its model: public placeholders
        (:data:`PLACEHOLDERS`, :func:`placeholder_design`) of ``build_size`` records, nothing of the data."""
        n = int(np.shape(x)[0]) if self.build_size is None else int(self.build_size)
        p = 1 if covariates is None else int(np.shape(covariates)[1])
        return np.full(n, float(self.placeholder)), placeholder_design(n, p)

    def record_logp(self, data):  # pragma: no cover - build() is overridden
        raise NotImplementedError

    def build(self, x: np.ndarray, covariates: np.ndarray | None = None):
        """Build the model with placeholders shaped as ``x`` and ``covariates`` (never their values); check it.

        Raises
        ------
        DataError
            From :func:`verify_model`, naming what the function did and the fix.
        """
        import pymc as pm

        from ..likelihood import _ATTR, likelihood_term, weighted_loglik

        n = int(np.shape(x)[0])  # the data's own number of records: for the data-sized constants only
        name = qualname(self.fn)
        x0, X0 = self.build_values(x, covariates)
        with pm.Model() as model:
            xd, Xd = pm.Data("x", x0), pm.Data("X", X0)
            dist = self.fn(xd, Xd)
            if dist is None or not hasattr(dist, "owner") or dist.owner is None:
                raise DataError(
                    f"the model function {name} must return the observation distribution "
                    f"(e.g. `pm.LogNormal.dist(mu, sigma, shape=x.shape)`), from which the likelihood is built and "
                    f"synthetic records are drawn; got {dist!r}."
                )
            own = getattr(model, _ATTR, None)
            if own is None:
                _refuse_custom_code([("the returned distribution", dist)], name)  # before pm.logp runs its logp
                weighted_loglik(_logp_of(dist, xd, model))
        model._dpsynth_dist = dist  # noqa: SLF001
        verify_model(model, dist, xd, name, user_term=own, design=Xd, n=n)
        if None not in tuple(dist.type.shape):  # a size fixed at build time would not follow the data's
            raise DataError(f"the model function {name} returns a distribution of fixed shape {dist.type.shape}: give "
                            f"it one entry per record with shape=x.shape, so that its size follows the data's at each "
                            f"fit (x holds {x0.size} placeholder value(s) while the model is built).")
        likelihood_term(model)
        return model

    def simulate(self, draws, rng, covariates=None):  # pragma: no cover - the Synthesizer uses ModelSimulator
        raise NotImplementedError("use the Synthesizer, which draws from the model's own distribution")


def _logp_of(dist, x, model):
    """``pm.logp(dist, x)`` in terms of the model's parameters.

    PyMC derives the log density of a symbolic distribution (a censored one, a mixture) from a clone
    of its graph whose parameters are clones too ("lifted"), which the sampler never sets; taken with
    the parameters swapped for plain inputs and swapped back, the term reads the parameters themselves.
    """
    import pymc as pm
    from pytensor.graph.replace import graph_replace

    rvs = model.free_RVs
    inputs = [rv.type(name=rv.name) for rv in rvs]
    logp = pm.logp(graph_replace(dist, dict(zip(rvs, inputs)), strict=False), x)
    return graph_replace(logp, dict(zip(inputs, rvs)), strict=False)


# ------------------------------------------------------------------------------------- graph walks


def _ancestors(var, data, *, through_shape: bool = True) -> bool:
    """Whether ``data`` is an ancestor of ``var`` (``through_shape=False``: its shape alone does not count)."""
    from pytensor.tensor.shape import Shape, Shape_i

    stack, seen = [var], set()
    while stack:
        v = stack.pop()
        if v is data:
            return True
        if id(v) in seen or v.owner is None:
            continue
        seen.add(id(v))
        if not through_shape and isinstance(v.owner.op, (Shape, Shape_i)):
            continue
        stack.extend(v.owner.inputs)
    return False


def _depends_on(var, data) -> bool:
    return _ancestors(var, data)


def _params_depend_on(dist, data) -> bool:
    """Whether the parameters of ``dist`` depend on ``data``: its size (and the size of a distribution it wraps, a
    censored one's base) may follow ``data``'s shape, nothing else may."""
    stack, seen = [dist], set()
    while stack:
        v = stack.pop()
        if v is data:
            return True
        if id(v) in seen or v.owner is None:
            continue
        seen.add(id(v))
        op = v.owner.op
        stack.extend(op.dist_params(v.owner) if hasattr(op, "dist_params") else v.owner.inputs)
    return False


def _reads_values(var, data) -> bool:
    """Whether ``var`` depends on the values of ``data`` (not only on its shape)."""
    return _ancestors(var, data, through_shape=False)


def _variables(outputs: Iterable) -> list:
    """Every variable of the graphs of ``outputs``, the inner graphs of composite operations (Scan, OpFromGraph,
    PyMC's symbolic distributions) included."""
    stack, seen, out = [v for v in outputs if v is not None], set(), []
    while stack:
        v = stack.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        out.append(v)
        node = getattr(v, "owner", None)
        if node is None:
            continue
        stack.extend(node.inputs)
        inner = getattr(node.op, "fgraph", None)
        if inner is not None and hasattr(inner, "outputs"):
            stack.extend(inner.outputs)
    return out


def _ops(op) -> list:
    """An operation and the operations it wraps (an Elemwise's scalar op, a Blockwise's core op)."""
    out = [op]
    for attr in ("scalar_op", "core_op"):
        inner = getattr(op, attr, None)
        if inner is not None:
            out.extend(_ops(inner))
    return out


def _foreign(op) -> str | None:
    """Why ``op`` runs code that cannot be read (None: PyTensor's or PyMC's own)."""
    from pymc.distributions.custom import CustomDistRV, CustomSymbolicDistRV
    from pytensor.compile.ops import FromFunctionOp

    for o in _ops(op):
        if isinstance(o, (CustomDistRV, CustomSymbolicDistRV)):
            return "a `pm.CustomDist` / `pm.DensityDist`, whose log density is arbitrary code"
        if isinstance(o, FromFunctionOp):
            return f"an `as_op` operation ({o}), whose code is arbitrary"
        module = type(o).__module__ or ""
        if not (module.startswith("pytensor.") or module.startswith("pymc.")):
            return f"an operation defined outside PyTensor and PyMC ({type(o).__qualname__} of {module})"
    return None


def _refuse_custom_code(roots: Iterable[tuple[str, object]], name: str) -> None:
    """Refuse code that cannot be read anywhere in the graphs of ``roots`` (``(where, variable)`` pairs)."""
    for where, root in roots:
        for v in _variables([root]):
            node = getattr(v, "owner", None)
            why = None if node is None else _foreign(node.op)
            if why is not None:
                raise DataError(f"the model function {name} uses {why} in {where}: the package cannot check what it "
                                f"reads; write the model with PyMC's own distributions and PyTensor's operations "
                                f"(its code could read the data past the clamp).")


def _stray_random_variables(var, params) -> list[str]:
    """Random variables in the graph of ``var`` other than the model's parameters ``params`` (whose own graphs,
    their priors, are not searched)."""
    from pymc.distributions.distribution import SymbolicRandomVariable
    from pytensor.tensor.random.op import RandomVariable

    keep = {id(p) for p in params}
    stack, seen, out = [var], set(), []
    while stack:
        v = stack.pop()
        if id(v) in seen or id(v) in keep or v.owner is None:
            continue
        seen.add(id(v))
        if isinstance(v.owner.op, (RandomVariable, SymbolicRandomVariable)):
            out.append(v.name or str(v.owner.op))
            continue
        stack.extend(v.owner.inputs)
    return sorted(set(out))


def _named(model) -> list[tuple[str, object]]:
    """The model's potentials, priors and deterministics, each with the words that name it."""
    return [*((f"the potential {p.name!r}", p) for p in model.potentials),
            *((f"the prior of {rv.name!r}", rv) for rv in model.free_RVs),
            *((f"the deterministic {d.name!r}", d) for d in model.deterministics)]


def _rng(v) -> bool:
    from pytensor.tensor.random.type import RandomGeneratorType

    return isinstance(v.type, RandomGeneratorType)


def _data_sized(value, n: int) -> bool:
    """Whether a constant could hold a column of ``n`` records: ``n`` entries or more, or an axis of length ``n``."""
    arr = np.asarray(value)
    return arr.ndim >= 1 and arr.size >= 2 and (arr.size >= n or n in arr.shape)


def _clamped(term):
    """The helper's clamp of ``term.logp`` over its containers, as :func:`dpsynth.weighted_loglik` builds it."""
    import pytensor.tensor as pt

    w, m, r = term.weights, term.bound, term.reference
    return pt.sum(pt.clip(pt.switch(pt.eq(w, 0.0), 0.0, w * term.logp - r), -m, m))


def verify_model(model, dist, x, name: str, *, user_term=None, design=None, n: int | None = None) -> None:
    """Check that the clamped likelihood is the only way the data ``x`` enter ``model`` (see the module docstring).

    Parameters
    ----------
    model : pymc.Model
        The model built by a user's function (with placeholders for ``x`` and ``X``), with the package's
        likelihood added.
    dist : TensorVariable
        The observation distribution the function returned.
    x : SharedVariable
        The ``pm.Data`` container of the confidential column.
    name : str
        The function's name, for the messages.
    user_term : LikelihoodTerm, optional
        The likelihood the function registered itself through :func:`dpsynth.weighted_loglik`: it must be
        the helper's clamp of ``pm.logp(dist, x)`` exactly.
    design : SharedVariable, optional
        The ``pm.Data`` container of the design ``X`` (default: the model's ``"X"``).
    n : int, optional
        The data's number of records, for the data-sized constants (those as long as ``x``'s placeholder are
        refused too; default: its length).

    Raises
    ------
    DataError
        In one line, naming the variable that could carry the data past the clamp, and the fix.
    """
    import pymc as pm
    from pytensor.compile.sharedvalue import SharedVariable
    from pytensor.graph.basic import Constant, equal_computations

    from ..likelihood import BOUND, REFERENCE, WEIGHTS, likelihood_term

    design = design if design is not None else model.named_vars.get("X")
    n_build = int(np.shape(x.get_value())[0])
    n = n_build if n is None else int(n)
    fix = ("; the only place the confidential column may enter is the likelihood the package builds from the "
           "returned distribution (return `pm.<Dist>.dist(...)` and leave the rest out)")
    if model.observed_RVs:
        names = [v.name for v in model.observed_RVs]
        raise DataError(f"the model function {name} adds observed variable(s) {names}: an unclamped likelihood, "
                        f"outside the censoring{fix}.")
    # code that cannot be read, anywhere: in a prior, a potential, a deterministic, the returned distribution
    _refuse_custom_code([("the returned distribution", dist), *_named(model)], name)
    term = likelihood_term(model)
    containers = {k: model.named_vars.get(k) for k in (WEIGHTS, BOUND, REFERENCE)}
    if user_term is not None:  # registered by the function: it must be the helper's, on pm.logp(dist, x)
        if not equal_computations([user_term.logp], [pm.logp(dist, x)]):
            raise DataError(f"the model function {name} passes `dpsynth.weighted_loglik` a term other than "
                            f"`pm.logp(dist, x)` of the distribution it returns: leave the call out, and the package "
                            f"adds exactly that term.")
        pots = [p for p in model.potentials if p.name == user_term.name]
        if (len(pots) != 1 or (user_term.weights, user_term.bound, user_term.reference) != tuple(containers.values())
                or not equal_computations([pots[0]], [_clamped(user_term)])):
            raise DataError(f"the model function {name} registers a likelihood {user_term.name!r} that is not the one "
                            f"`dpsynth.weighted_loglik` builds: leave the likelihood out, and the package adds it.")
    for pot in model.potentials:
        if pot.name == term.name:
            continue
        if _depends_on(pot, x) or (design is not None and _reads_values(pot, design)):
            raise DataError(f"the model function {name} adds a potential {pot.name!r} that depends on the "
                            f"{'confidential column' if _depends_on(pot, x) else 'values of the design X'}: an "
                            f"unclamped term{fix}.")
    for rv in model.free_RVs:
        if _depends_on(rv, x):
            raise DataError(f"the model function {name}'s parameter {rv.name!r} has a prior that depends on the "
                            f"confidential column{fix}.")
        if design is not None and _reads_values(rv, design):
            raise DataError(f"the model function {name}'s parameter {rv.name!r} has a prior that reads the values of "
                            f"the design X (its rows enter the likelihood only){fix}.")
    inits = []
    for rv, init in model.rvs_to_initial_values.items():
        if init is None or isinstance(init, str):
            continue
        if hasattr(init, "owner"):
            if _depends_on(init, x) or (design is not None and _reads_values(init, design)):
                raise DataError(f"the model function {name} gives parameter {rv.name!r} an initial value computed "
                                f"from the data; give a public number (or none){fix}.")
            inits.append(init)
        elif _data_sized(init, n) or _data_sized(init, n_build):
            raise DataError(f"the model function {name} gives parameter {rv.name!r} an initial value with as many "
                            f"entries as there are records; give a public value of the parameter's own shape.")
    for det in model.deterministics:
        if _depends_on(det, x):
            raise DataError(f"the model function {name} keeps a deterministic {det.name!r} computed from the "
                            f"confidential column: posterior draws are saved and released{fix}.")
    stray = _stray_random_variables(term.logp, model.free_RVs)
    if stray:
        raise DataError(f"the model function {name}'s likelihood holds random variable(s) {stray} that are not the "
                        f"model's parameters (a `pm.<Dist>.dist` inside the distribution's parameters, or PyMC's "
                        f"clones of them): the term would be random; build the parameters from the priors only.")
    op = getattr(dist.owner, "op", None)
    if _params_depend_on(dist, x):  # its size may follow x's (shape=x.shape): n, not the values
        raise DataError(f"the model function {name} returns a distribution whose parameters depend on the "
                        f"confidential column, so one record's term would depend on the others{fix}.")
    if getattr(op, "ndim_supp", None) != 0:
        raise DataError(f"the model function {name} must return a univariate distribution with one entry per "
                        f"record (e.g. `pm.LogNormal.dist(mu, sigma, shape=x.shape)`); got {op}.")
    # nothing that could hold a copy of the data: shared variables other than the package's, data-sized constants
    allowed = {id(v) for v in (x, design, *containers.values()) if v is not None}
    graphs = [*_named(model), *((f"an initial value ({v.name or 'unnamed'})", v) for v in inits),
              ("the returned distribution", dist), ("the model's log density", model.logp())]
    for where, root in graphs:
        for v in _variables([root]):
            if isinstance(v, SharedVariable) and id(v) not in allowed and not _rng(v):
                label = v.name or "unnamed"
                raise DataError(f"the model function {name} uses a shared variable ({label!r}, a `pytensor.shared` or "
                                f"`pm.Data` of its own) in {where}: it could hold the data outside the check; use "
                                f"plain public numbers, and read the data only through `x` and `X`.")
            if isinstance(v, Constant) and (_data_sized(v.data, n) or _data_sized(v.data, n_build)):
                raise DataError(f"the model function {name} holds a constant of shape {np.shape(v.data)} in {where}: "
                                f"as many entries as there are records (a copy of a column?); read the data only "
                                f"through `x` and `X`, whose values are placeholders until the fit.")


def prior_point(model) -> dict[str, np.ndarray]:
    """The model's own prior point: every free parameter at PyMC's initial point (each prior's support point, or the
    function's own public initial value), on the parameter's scale, without jitter.

    A function of the model function's constants alone (its priors), not of the data: public by construction
    whenever the statement's condition holds (:func:`guarantee_condition`). ``reference="prior"`` of Censor_ref
    places every record's window at its term there.
    """
    from pymc.initial_point import make_initial_point_fn

    fn = make_initial_point_fn(model=model, return_transformed=False, jitter_rvs=set())
    point = fn(0)
    return {rv.name: np.asarray(point[rv.name], dtype=float) for rv in model.free_RVs}


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

        # the distribution's parameters do not depend on x (verify_model): its value only sets the size
        x0 = np.full(n, float(getattr(self.cm.family, "placeholder", 1.0)))
        pm.set_data({"x": x0, "X": X}, model=self.cm.model)
        reseed_rngs(self.rngs, int(rng.integers(2**63)))
        out = np.asarray(self.fn(*[np.asarray(draw[k]) for k in self.names]), dtype=float)
        if out.shape != (n,):
            raise DataError(f"the model's distribution gave shape {out.shape}, expected ({n},): give it one entry "
                            f"per record (e.g. shape=x.shape).")
        return out
