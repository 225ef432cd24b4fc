"""Mechanisms: the fits that turn a Bayesian synthesizer into a private one. One module each.

Every mechanism is one :class:`~dpsynth.mechanisms.contract.MechanismSpec` in one module of this
package (``MECHANISMS = (...)``): its registry entry, its parameters with defaults and validators, its
cost and when to use it, and its ``run``. The catalogue (:mod:`dpsynth.mechanisms.catalog`)
collects them; the registry, the decision table, the command line and the
:class:`~dpsynth.Synthesizer` are generated from it, and the chapters' studies call the same
:func:`run` by key:

>>> from dpsynth import mechanisms
>>> mechanisms.list_mechanisms()[:3]
['unweighted', 'weighted', 'lw']
>>> mechanisms.get("censor_uw").guarantee
'DP'

========================  ==============================================================
module                    mechanisms
========================  ==============================================================
``unweighted``            Unweighted (not private; the reference)
``lipschitz``             Weighted, LW (Lipschitz weights)
``count``                 CW (count weights)
``scalar``                SW (one scalar weight)
``reweighted``            LW_final, CW_final (re-weighting)
``weighted_e``            Weighted-e (LW with risky records zeroed)
``censored``              Censor_w, Censor_uw (censored likelihoods)
``censored_public``       Censor_w-pub (public weight rule, censored)
``histogram``             PH, PH-paper (perturbed histogram)
``quantiles``             OpenDP-Q (OpenDP's private quantiles)
``range_restriction``     A[a,b], B[a,b], B'[a,b] (range restriction)
========================  ==============================================================

The building blocks each module uses (``censored(cm, x, eps, weights=...)``,
``lipschitz_weighted(cm, base)``, ...) are importable from here too, for the tutorial's
step-by-step construction; a release goes through :func:`run` (or the ``Synthesizer``).
"""

from __future__ import annotations

from .catalog import (
    PATH_ENV,
    cli_params,
    discover,
    get,
    keys,
    list_mechanisms,
    lookup_name,
    register,
    run,
    runnable_keys,
    specs,
)
from .censored import censored
from .censored_public import (
    DownscaleCalibration,
    PublicLipschitzWeights,
    calibrate_downscale,
    censored_public,
    public_lipschitz_weights,
)
from .contract import REQUIRED, MechanismResult, MechanismSpec, Param, RunContext
from .count import count_weighted, match_cw_radius
from .lipschitz import lipschitz_weighted
from .reweighted import reweighted
from .scalar import scalar_weighted
from .unweighted import unweighted
from .weighted_e import weighted_e

__all__ = [
    "MechanismSpec",
    "MechanismResult",
    "Param",
    "REQUIRED",
    "RunContext",
    "PATH_ENV",
    "discover",
    "register",
    "specs",
    "get",
    "keys",
    "runnable_keys",
    "list_mechanisms",
    "lookup_name",
    "run",
    "cli_params",
    "mechanism_result",
    "unweighted",
    "lipschitz_weighted",
    "count_weighted",
    "match_cw_radius",
    "scalar_weighted",
    "weighted_e",
    "censored",
    "PublicLipschitzWeights",
    "public_lipschitz_weights",
    "censored_public",
    "reweighted",
    "DownscaleCalibration",
    "calibrate_downscale",
]


def mechanism_result(name: str, fit, bounds=None, **extra) -> MechanismResult:
    """Wrap a fit as the :class:`MechanismResult` of the mechanism named ``name`` (display name or key).

    The guarantee comes from that mechanism's spec; a strict ``"DP"`` one needs a censored fit
    with ``Delta <= M`` (else an ``AssertionError``). An unknown name raises ``KeyError``.
    """
    spec = lookup_name(name)
    if spec is None:
        raise KeyError(f"unknown synthesizer {name!r}; registered keys: {', '.join(keys())}.")
    return spec.result(fit, bounds=bounds, name=name if name != spec.key else spec.name, **extra)
