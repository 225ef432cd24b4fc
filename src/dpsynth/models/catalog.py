"""The catalogue of model families: every family module of :mod:`dpsynth.models`, found as mechanisms are.

Each module of the package that holds a family declares it, ``FAMILY = MyFamily`` (a class, or a
tuple of classes), as each mechanism module declares ``MECHANISMS`` (:mod:`dpsynth.mechanisms.catalog`).
A module that declares nothing but defines a concrete :class:`~dpsynth.models.base.ModelFamily`
subclass of its own (a frozen dataclass with its ``name``) registers that class: defining the family
is declaring it. The modules of the base class and the wrappers (:data:`_SKIP`) hold none.

:func:`discover` imports every family module once and fills the catalogue; :data:`dpsynth.models.FAMILIES`
is its result, in the documented order :data:`LISTED` (the shipped families, then any other by name).
Adding a family is adding a module: the :class:`~dpsynth.Synthesizer` (``model="name"``), the
whole table and ``dpsynth fit --model name`` find it here.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

from ..validation import DataError
from .base import ModelFamily

__all__ = ["LISTED", "discover", "families", "family_class", "declared_families"]

#: The order of the shipped families in :data:`dpsynth.models.FAMILIES`, the command line's help and the
#: documentation: the continuous ones (lognormal, its regression and mixture; beta and its regression), the
#: counts (Poisson, negative binomial), the categorical one, the ordinal regression over public bins. A family
#: not listed (a new module) follows them, by name.
LISTED = ("lognormal", "lognormal_regression", "lognormal_mixture", "beta", "beta_regression", "poisson", "negbin",
          "multinomial", "ordinal")

_PACKAGE = __name__.rpartition(".")[0]
#: Modules of the package that hold no family: the catalogue, the base class and the wrappers (a public offset,
#: a user's PyMC function).
_SKIP = {"catalog", "base", "offset", "user_function"}
_FOUND: dict[str, type[ModelFamily]] = {}


def declared_families(module) -> tuple[type[ModelFamily], ...]:
    """The families a module declares: its ``FAMILY`` (a class or a tuple of them), else the concrete
    :class:`ModelFamily` subclasses it defines itself."""
    declared = getattr(module, "FAMILY", None)
    if declared is not None:
        classes = tuple(declared) if isinstance(declared, (tuple, list)) else (declared,)
    else:
        classes = tuple(c for c in vars(module).values()
                        if inspect.isclass(c) and issubclass(c, ModelFamily) and c.__module__ == module.__name__
                        and not inspect.isabstract(c))
    for c in classes:
        if not (inspect.isclass(c) and issubclass(c, ModelFamily)):
            raise TypeError(f"{module.__name__}.FAMILY must be ModelFamily subclasses; got {c!r}.")
    return classes


def discover() -> dict[str, type[ModelFamily]]:
    """Import every family module of the package and return its families by ``name``, in the order :data:`LISTED`.

    Raises
    ------
    ValueError
        When two classes claim the same name.
    """
    package = importlib.import_module(_PACKAGE)
    found: dict[str, type[ModelFamily]] = {}
    for info in pkgutil.iter_modules(package.__path__):
        if info.name in _SKIP or info.name.startswith("_"):
            continue
        for cls in declared_families(importlib.import_module(f"{_PACKAGE}.{info.name}")):
            old = found.get(cls.name)
            if old is not None and old is not cls:
                raise ValueError(f"model family name {cls.name!r} is taken by {old.__module__}.{old.__name__} and "
                                 f"{cls.__module__}.{cls.__name__}.")
            found[cls.name] = cls
    place = {name: i for i, name in enumerate(LISTED)}
    return {name: found[name] for name in sorted(found, key=lambda n: (place.get(n, len(place)), n))}


def families() -> dict[str, type[ModelFamily]]:
    """The catalogue: :func:`discover`'s families, found once per process (:data:`dpsynth.models.FAMILIES`)."""
    if not _FOUND:
        _FOUND.update(discover())
    return _FOUND


def family_class(name: str) -> type[ModelFamily]:
    """The family class of a shipped family name.

    Raises
    ------
    DataError
        For a name that is not shipped; the message lists the shipped names.
    """
    FAMILIES = families()
    if not isinstance(name, str) or name not in FAMILIES:
        raise DataError(f"unknown `model` {name!r}; shipped families: {', '.join(FAMILIES)}, or pass a PyMC "
                        f"model-building function.")
    return FAMILIES[name]
