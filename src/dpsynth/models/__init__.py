"""Model families (synthesizers), one per module, each written through :func:`dpsynth.weighted_loglik`.

:data:`FAMILIES` maps each shipped family's name to its class; the :class:`~dpsynth.Synthesizer`
and the command line read it, and each family's traits (:mod:`dpsynth.models.base`) say what it
takes. To add a family, write one module here with a frozen dataclass subclassing
:class:`ModelFamily` and add it to :data:`FAMILIES` (CONTRIBUTING.md, "Adding a model family").
"""

from __future__ import annotations

from .base import Draws, ModelFamily, intercept_design
from .beta import BetaFamily
from .beta_regression import BetaRegression
from .categorical import MultinomialLogit
from .lognormal import LognormalFamily
from .lognormal_mixture import LognormalMixture
from .lognormal_regression import LognormalRegression
from .negbin import NegBinomialRegression
from .offset import OffsetFamily
from .ordinal import OrdinalRegression
from .poisson import PoissonRegression
from .user_function import ModelSimulator, PyMCFunctionFamily

__all__ = [
    "ModelFamily",
    "Draws",
    "BetaFamily",
    "PoissonRegression",
    "NegBinomialRegression",
    "LognormalFamily",
    "LognormalRegression",
    "LognormalMixture",
    "BetaRegression",
    "MultinomialLogit",
    "OrdinalRegression",
    "intercept_design",
    "OffsetFamily",
    "PyMCFunctionFamily",
    "ModelSimulator",
    "FAMILIES",
    "family_class",
]

#: Shipped families by name (each class's ``name``), in the order the documentation lists them.
FAMILIES: dict[str, type[ModelFamily]] = {
    cls.name: cls
    for cls in (LognormalFamily, LognormalRegression, LognormalMixture, BetaFamily, BetaRegression,
                PoissonRegression, NegBinomialRegression, MultinomialLogit, OrdinalRegression)
}


def family_class(name: str) -> type[ModelFamily]:
    """The family class of a shipped family name.

    Raises
    ------
    DataError
        For a name that is not shipped; the message lists the shipped names.
    """
    from ..validation import DataError

    if not isinstance(name, str) or name not in FAMILIES:
        raise DataError(f"unknown `model` {name!r}; shipped families: {', '.join(FAMILIES)}, or pass a PyMC "
                        f"model-building function.")
    return FAMILIES[name]
