"""Model families (synthesizers), one per module, each written through :func:`dpsynth.weighted_loglik`.

:data:`FAMILIES` maps each shipped family's name to its class; the :class:`~dpsynth.Synthesizer`
and the command line read it, and each family's traits (:mod:`dpsynth.models.base`) say what it
takes. It is found, not written: every module of this package that declares a family
(``FAMILY = MyFamily``) is registered by :func:`dpsynth.models.catalog.discover`, as mechanisms are
(:mod:`dpsynth.mechanisms.catalog`), in the order :data:`dpsynth.models.catalog.LISTED` (then any
other family by name). To add a family, write one module here with a frozen dataclass subclassing
:class:`ModelFamily` that declares it (CONTRIBUTING.md, "Adding a model family"); nothing else is edited.
"""

from __future__ import annotations

from .base import Draws, ModelFamily, intercept_design
from .beta import BetaFamily
from .beta_regression import BetaRegression
from .catalog import families, family_class
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

#: Shipped families by name (each class's ``name``), found in this package's modules
#: (:func:`dpsynth.models.catalog.discover`), in the order the documentation lists them.
FAMILIES: dict[str, type[ModelFamily]] = families()
