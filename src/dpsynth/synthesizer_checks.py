"""Checks of a :class:`~dpsynth.Synthesizer`'s settings against its target, made before any fit.

:func:`check_kinds` refuses a target the mechanism or the model cannot synthesize (naming the model
or mechanism to use instead); :func:`ignored_covariates` says, in words, what is lost when covariates
are given that the mechanism or the model does not use (the Synthesizer raises it as a warning);
:func:`check_magnitudes` refuses a number no model can hold (the command line applies it too).
"""

from __future__ import annotations

from collections.abc import Sequence

from .models import FAMILIES
from .validation import DataError, check_magnitude

__all__ = ["check_kinds", "ignored_covariates", "check_magnitudes"]


def check_magnitudes(data, targets: Sequence[str], covariates: Sequence[str]) -> None:
    """Every numeric target and covariate within :data:`dpsynth.validation.MAX_MAGNITUDE` (the check the command line
    applies too)."""
    for c in targets:
        check_magnitude(data[c], c, "target column")
    for c in covariates:
        check_magnitude(data[c], c, "covariate")


def check_kinds(spec, model, encoding, target: str, has_covariates: bool) -> None:
    """Raise :class:`DataError` when the target's kind does not suit the mechanism ``spec`` or the ``model``."""
    kind = encoding.kind
    if kind not in spec.targets:
        raise DataError(
            f"the {spec.key} mechanism synthesizes {' or '.join(spec.targets)} variables; target {target!r} is "
            f"{kind}. Choose another mechanism (e.g. censor_ref)."
        )
    if isinstance(model, str) and spec.uses_model:
        fam = FAMILIES[model]
        if (kind == "categorical") != bool(fam.categorical):
            want = encoding.default_model(has_covariates)
            raise DataError(
                f"the {model} model does not synthesize a {kind} target ({target!r}); use model={want!r}, or leave "
                f"`model` out to take it."
            )


def ignored_covariates(spec, model, encoding, target: str, covariates: Sequence[str], levels, cells,
                       model_takes_covariates: bool) -> str | None:
    """What is lost when ``covariates`` are given that the mechanism or the model ignores (None: nothing)."""
    if not covariates:
        return None
    lost = (f"the released file carries the covariates, but the synthetic {target!r} does not depend on them: the "
            f"regression of {target!r} on {list(covariates)} is lost")
    if spec.covariate_use == "none":
        return (f"the {spec.key} mechanism synthesizes the marginal of {target!r}: {lost}. To keep it, use a "
                f"model-based mechanism, e.g. mechanism='censor_ref' with a regression model.")
    if spec.covariate_use == "cells":
        numeric = [c for c in covariates if c not in levels]
        cells = [c for c in covariates if c in levels] if cells is None else list(cells)
        unused = [c for c in covariates if c not in cells]
        if not unused:
            return None
        return (f"the {spec.key} mechanism uses covariates only as cells (categorical levels, or numeric ones cut at "
                f"public `cell_edges`; here {cells or 'none'}): "
                f"the synthetic {target!r} does not depend on {unused}" + (f" (numeric: {numeric})" if numeric else "")
                + ". To keep that relation, use a model-based mechanism, e.g. mechanism='censor_ref' with a "
                "regression model.")
    if spec.uses_model and not model_takes_covariates:
        want = encoding.default_model(True)
        return (f"the {model} model takes no covariates: {lost}. To keep it, use model={want!r} (or leave `model` "
                f"out).")
    return None
