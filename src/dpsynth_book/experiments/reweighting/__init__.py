"""The re-weighting chapter (re-weighting paper, Sections 2-4 and the appendix), as package code.

Modules: :mod:`.params` (presets and validation), :mod:`.replicate` (the two studies' replicate
functions), :mod:`.tables`, :mod:`.verdicts` (verdicts and the numbers the prose quotes) and
:mod:`.figures`. :func:`run` runs or loads both studies; :func:`verdicts` checks the claims of
the chapter's "What this shows".

Both results have one dimension for the synthesizer, ``synthesizer``: "Data" (the confidential
data, not a fit: ``is_fit`` is false and the per-fit variables are NaN, False, 0 or "" there) and
the synthesizers, in the book's order (:data:`SYNTHESIZER_COORD`, :data:`CONTRACTION_COORD`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import xarray as xr

from ... import paths
from ...studies import run_study
from .params import CW_BALLS, DATA_MODELS, ReweightingParams
from .replicate import (
    CONTRACTION_COORD,
    SYNTHESIZER_COORD,
    SYNTHESIZERS,
    contraction_replicate,
    family_for,
    simulate_data,
    synthesizers_replicate,
)
from .verdicts import verdicts  # the function: ``reweighting.verdicts`` is it, not the module

__all__ = [
    "Params",
    "ReweightingParams",
    "ReweightingResults",
    "run",
    "verdicts",
    "DATA_MODELS",
    "CW_BALLS",
    "SYNTHESIZERS",
    "SYNTHESIZER_COORD",
    "CONTRACTION_COORD",
    "family_for",
    "simulate_data",
    "synthesizers_replicate",
    "contraction_replicate",
]

#: The chapter's parameter class.
Params = ReweightingParams


@dataclass(frozen=True)
class ReweightingResults:
    """Both studies of the chapter.

    Attributes
    ----------
    params : ReweightingParams
    synthesizers : xarray.Dataset
        Sections 3-4: one data set per generating model (``data_model`` dimension); ``synthesizer``
        holds "Data" and the six synthesizers (:data:`SYNTHESIZER_COORD`).
    contraction : xarray.Dataset
        The appendix study, with a ``replicate`` dimension; ``synthesizer`` holds "Data",
        "Unweighted" and "LW" (:data:`CONTRACTION_COORD`).
    """

    params: ReweightingParams
    synthesizers: xr.Dataset
    contraction: xr.Dataset

    @property
    def elapsed_seconds(self) -> dict[str, float]:
        """Wall time of each study's computation (kept when loaded from the cache)."""
        return {
            "synthesizers": float(self.synthesizers.attrs.get("elapsed_seconds", float("nan"))),
            "contraction": float(self.contraction.attrs.get("elapsed_seconds", float("nan"))),
        }


def run(
    params: ReweightingParams, *, cache_dir=None, workers: int = 1, scheduler: str | None = None, progress: bool = True
) -> ReweightingResults:
    """Run (or load from the cache) the synthesizers study and the contraction study.

    The synthesizers study is one replicate (one data set per generating model, as in the paper);
    the contraction study has ``params.replicates`` replicates.
    """
    cache = os.fspath(cache_dir) if cache_dir else os.fspath(paths.cache_dir())
    common = dict(seed=params.seed, cache_dir=cache, workers=workers, scheduler=scheduler, progress=progress)
    study = params.study_dict()
    main = run_study("reweighting-synthesizers", synthesizers_replicate, study, replicates=1, **common)
    contr = run_study("reweighting-contraction", contraction_replicate, study, replicates=params.replicates, **common)
    return ReweightingResults(params=params, synthesizers=main.isel(replicate=0), contraction=contr)
