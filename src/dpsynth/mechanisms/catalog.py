"""The catalogue of mechanisms: every spec found in :mod:`dpsynth.mechanisms`, by key and by name.

Every module of the package (and of each folder listed in the environment variable
``DPSYNTH_MECHANISM_PATH``, separated by ``os.pathsep``) that defines ``MECHANISMS``, a tuple of
:class:`~dpsynth.mechanisms.contract.MechanismSpec`, is registered when the catalogue is first
read. Adding a mechanism is writing one such module; the registry, the decision table, the
command line and the :class:`~dpsynth.Synthesizer` find it here (the smartnoise-sdk
``Synthesizer.create`` / ``list_synthesizers`` pattern: a name-to-class map, filled from the
mechanisms' own files).
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import re
from collections.abc import Mapping

from ..validation import DataError
from .contract import MechanismResult, MechanismSpec, Param, RunContext

__all__ = ["PATH_ENV", "LISTED", "discover", "register", "unregister", "specs", "get", "keys", "runnable_keys",
           "list_mechanisms", "run", "cli_params", "lookup_name"]

#: Environment variable: extra folders searched for mechanism modules.
PATH_ENV = "DPSYNTH_MECHANISM_PATH"
#: The catalogue's order of the package's mechanisms (:func:`list_mechanisms`, the command line's choices and
#: flags, the registry's names): the plain posterior, the weighted and re-weighted ones (aDP), the censored
#: likelihoods, the model-free DP mechanisms, range restriction. A mechanism not listed (a new module, or one
#: of ``DPSYNTH_MECHANISM_PATH``) follows them, by key. How the book's figures order them is the book's.
LISTED = ("unweighted", "weighted", "lw", "cw", "sw", "lw_final", "cw_final", "weighted_e", "censor_w",
          "censor_w_public", "censor_uw", "censor_ref", "ph", "ph_paper", "noise_aware", "opendp_quantiles",
          "range_averaged", "range_truncated", "range_truncated_whole")

_PACKAGE = __name__.rpartition(".")[0]
#: Modules of the package that hold no mechanism.
_SKIP = {"contract", "catalog"}
_REGISTERED: dict[str, MechanismSpec] = {}
_SEARCHED: set[str] = set()
_RANGE = re.compile(r"^\[[^\[\]]+\]$")


def register(spec: MechanismSpec) -> MechanismSpec:
    """Add ``spec`` to the catalogue (a key or display name already taken by another spec is an error)."""
    if not isinstance(spec, MechanismSpec):
        raise TypeError(f"register() takes a MechanismSpec; got {type(spec).__name__}.")
    old = _REGISTERED.get(spec.key)
    if old is not None and old is not spec:
        raise ValueError(f"mechanism key {spec.key!r} is defined twice ({old.description!r} and "
                         f"{spec.description!r}).")
    clash = [s.key for s in _REGISTERED.values() if s.name == spec.name and s.key != spec.key]
    if clash:
        raise ValueError(f"mechanism {spec.key!r}: display name {spec.name!r} is taken by {clash[0]!r}.")
    _REGISTERED[spec.key] = spec
    return spec


def unregister(key: str) -> None:
    """Remove a mechanism (and forget its module, so that a later :func:`discover` may import it again).

    For tests and interactive sessions that add a mechanism for a while.
    """
    import sys

    spec = _REGISTERED.pop(key, None)
    if spec is None:
        return
    module = getattr(spec.run, "__module__", None)
    if module and module.startswith(_PACKAGE + "."):
        name = module.rpartition(".")[2]
        if not any(getattr(s.run, "__module__", None) == module for s in _REGISTERED.values()):
            _SEARCHED.discard(name)
            sys.modules.pop(module, None)


def _folders() -> list[str]:
    package = importlib.import_module(_PACKAGE)
    extra = [p for p in os.environ.get(PATH_ENV, "").split(os.pathsep) if p]
    for p in extra:  # so that `import dpsynth.mechanisms.<module>` finds a module of an extra folder
        if p not in package.__path__:
            package.__path__.append(p)
    return list(package.__path__)


def discover() -> dict[str, MechanismSpec]:
    """Import every mechanism module not yet imported and register its ``MECHANISMS``; return the catalogue."""
    for info in pkgutil.iter_modules(_folders()):
        name = info.name
        if name in _SKIP or name.startswith("_") or name in _SEARCHED:
            continue
        _SEARCHED.add(name)
        module = importlib.import_module(f"{_PACKAGE}.{name}")
        for spec in getattr(module, "MECHANISMS", ()):
            register(spec)
    return _REGISTERED


def specs() -> list[MechanismSpec]:
    """Every registered spec, in the catalogue's order (:data:`LISTED`, then the others by key)."""
    place = {k: i for i, k in enumerate(LISTED)}
    return sorted(discover().values(), key=lambda s: (place.get(s.key, len(place)), s.key))


def keys() -> list[str]:
    """Every registered key, in order."""
    return [s.key for s in specs()]


def runnable_keys() -> list[str]:
    """Keys of the mechanisms that run through the ``Synthesizer`` and the command line."""
    return [s.key for s in specs() if s.runnable]


def lookup_name(name: str) -> MechanismSpec | None:
    """The spec of a key or a display name (``"Censor_w"``, ``"A[0.4,1.8]"``), or None."""
    cat = discover()
    if name in cat:
        return cat[name]
    for s in cat.values():
        if not s.pattern and s.name == name:
            return s
    for s in sorted((s for s in cat.values() if s.pattern), key=lambda s: -len(s.name)):
        if name.startswith(s.name) and _RANGE.match(name[len(s.name) - 1:]):
            return s
    return None


def get(key: str) -> MechanismSpec:
    """The spec of a registry key (or display name).

    Raises
    ------
    DataError
        For an unknown key; the message lists the registered keys.
    """
    if not isinstance(key, str):
        raise DataError(f"a mechanism must be named by its registry key (a string); got {key!r}.")
    spec = lookup_name(key)
    if spec is None:
        raise DataError(f"unknown mechanism {key!r}; registered keys: {', '.join(keys())}.")
    return spec


def list_mechanisms() -> list[str]:
    """The registered keys, in the catalogue's order (smartnoise-sdk's ``list_synthesizers``)."""
    return keys()


def run(key: str, ctx: RunContext, *, eps: float | None = None, **params) -> MechanismResult:
    """Run mechanism ``key`` on the context's data: the one recipe of each mechanism.

    Parameters
    ----------
    key : str
        Registry key.
    ctx : RunContext
        Data, model, sampler and seeds (shared fits are kept on it).
    eps : float, optional
        Target epsilon, for a mechanism that takes one.
    **params
        The mechanism's parameters (its spec's table; defaults filled in, each validated).
    """
    spec = get(key)
    if not spec.runnable:
        raise DataError(f"the {key} mechanism cannot be run this way: {spec.not_runnable}")
    return spec.run(ctx, spec.resolve(params, eps))


def cli_params() -> dict[str, tuple[Param, list[str]]]:
    """Every command-line parameter: name -> (its Param, the keys that take it).

    A name shared by several mechanisms must have one command-line kind and one unit rule.
    """
    out: dict[str, tuple[Param, list[str]]] = {}
    for s in specs():
        if not s.runnable:
            continue
        for nm, p in s.params.items():
            if p.cli is None:
                continue
            if nm in out:
                first, users = out[nm]
                if (first.cli, first.in_data_unit, first.table) != (p.cli, p.in_data_unit, p.table):
                    raise ValueError(f"parameter {nm!r} of {s.key!r} differs in kind from {users[0]!r}'s "
                                     f"(cli {p.cli!r} vs {first.cli!r}); rename one.")
                users.append(s.key)
            else:
                out[nm] = (p, [s.key])
    return out


def param_users() -> Mapping[str, list[str]]:
    """Parameter name -> keys that take it (API and command line)."""
    out: dict[str, list[str]] = {}
    for s in specs():
        for nm in s.params:
            out.setdefault(nm, []).append(s.key)
    return out
