"""The range-restriction chapter: parameters, replicate, tables, verdicts and figures.

``run(Params.quick())`` runs (or loads from the cache) the chapter's Monte Carlo study through
:func:`dpsynth_book.studies.run_study`; :func:`verdicts` checks the slides' claims on the results.
The mechanisms themselves are in :mod:`dpsynth.mechanisms.range_restriction`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import xarray as xr

from ... import paths
from ...studies import run_study
from .params import RangeRestrictionParams
from .replicate import replicate, synthesizer_names
from .verdicts import verdicts  # the function: ``range_restriction.verdicts`` is it, not the module

__all__ = ["Params", "RangeRestrictionParams", "RangeRestrictionResults", "run", "verdicts", "synthesizer_names"]

#: The chapter's parameter class.
Params = RangeRestrictionParams


@dataclass
class RangeRestrictionResults:
    """Every study Dataset of the chapter.

    Attributes
    ----------
    params : RangeRestrictionParams
    study : xarray.Dataset
        The Monte Carlo study over ``(replicate, n_obs, synthesizer)`` (see
        :func:`~dpsynth_book.experiments.range_restriction.replicate.replicate`).
    """

    params: RangeRestrictionParams
    study: xr.Dataset

    @property
    def names(self) -> list[str]:
        """The synthesizers, registry display names in the book's order."""
        return [str(m) for m in self.study["synthesizer"].values]


def run(params: RangeRestrictionParams, *, cache_dir: str | os.PathLike | None = None, workers: int | None = 1,
        scheduler: str | None = None, progress: bool = True) -> RangeRestrictionResults:
    """Run (or load from the cache) the chapter's study.

    Parameters
    ----------
    params : RangeRestrictionParams
    cache_dir : path, optional
        Where results are cached (default :func:`dpsynth_book.paths.cache_dir`).
    workers, scheduler, progress
        Passed to :func:`dpsynth_book.studies.run_study`.
    """
    if not isinstance(params, RangeRestrictionParams):
        raise TypeError(f"`params` must be a RangeRestrictionParams (Params.quick() etc.); "
                        f"got {type(params).__name__}.")
    study = run_study("range_restriction", replicate, params.study_dict(), replicates=params.replicates,
                      seed=params.seed, cache_dir=cache_dir or paths.cache_dir(), workers=workers,
                      scheduler=scheduler, progress=progress)
    return RangeRestrictionResults(params=params, study=study)
