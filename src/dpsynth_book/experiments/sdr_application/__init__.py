"""The SDR application chapter: both papers' Section 5 on the Survey of Doctorate Recipients.

* :mod:`.params`: :class:`SDRApplicationParams` (alias ``Params``) with ``smoke``, ``quick`` and
  ``paper`` presets;
* :mod:`.replicate`: the replicates of Part 1 (censoring paper, beta regression) and Part 2
  (re-weighting paper, negative binomial);
* :mod:`.tables`: the tables and the convergence table; :mod:`.verdicts`: :func:`verdicts` and the
  numbers the prose quotes;
* :mod:`.figures`: the chapter's figures.

:func:`run` runs (or loads from the cache) both studies and loads the data they used.

Both results have one dimension for the synthesizer, ``synthesizer``, starting with "Data":
:data:`PART1_ROWS` for Part 1 and :data:`PART2_ROWS` ("Data" and the six fits in the book's order)
for Part 2, where "Data" is not a fit (``is_fit`` is false and the per-fit variables are NaN, 0 or
False there).
"""

from __future__ import annotations

from dataclasses import dataclass

import xarray as xr

from ...paths import cache_dir as default_cache_dir
from ...sdr import SDRData
from ...studies import run_study
from .params import SDRApplicationParams
from .replicate import (
    PART1_HISTOGRAMS,
    PART1_ROWS,
    PART1_SYNTHESIZERS,
    PART2_ROWS,
    PART2_SYNTHESIZERS,
    censoring_replicate,
    data_part1,
    data_part2,
    reweighting_replicate,
)
from .verdicts import verdicts  # the function: ``sdr_application.verdicts`` is it, not the module

__all__ = [
    "Params",
    "SDRApplicationParams",
    "SDRResults",
    "run",
    "verdicts",
    "data_part1",
    "data_part2",
    "censoring_replicate",
    "reweighting_replicate",
    "PART1_SYNTHESIZERS",
    "PART1_ROWS",
    "PART1_HISTOGRAMS",
    "PART2_SYNTHESIZERS",
    "PART2_ROWS",
]

Params = SDRApplicationParams


@dataclass
class SDRResults:
    """Everything the chapter shows.

    Attributes
    ----------
    params : SDRApplicationParams
    part1, part2 : xarray.Dataset
        The studies of Part 1 (:func:`censoring_replicate`) and Part 2
        (:func:`reweighting_replicate`), with a ``replicate`` dimension; ``synthesizer`` holds
        :data:`PART1_ROWS` and :data:`PART2_ROWS` ("Data" first in both).
    data1, data2 : dpsynth_book.sdr.SDRData
        The confidential samples of both parts (file or stand-in), with their provenance.
    """

    params: SDRApplicationParams
    part1: xr.Dataset
    part2: xr.Dataset
    data1: SDRData
    data2: SDRData

    @property
    def standin(self) -> bool:
        """Whether the results come from the stand-in sample."""
        return self.data1.is_standin


def run(params: SDRApplicationParams, *, cache_dir=None, workers: int = 1, scheduler: str | None = None,
        progress: bool = True) -> SDRResults:
    """Run (or load from the cache) both parts of the SDR application.

    Parameters
    ----------
    params : SDRApplicationParams
    cache_dir : path, optional
        Cache folder (default :func:`dpsynth_book.paths.cache_dir`).
    workers : int
        Local processes for the replicates.
    scheduler : str, optional
        Address of a Dask scheduler.
    progress : bool
        Show progress bars.
    """
    study = params.study_dict()
    common = dict(replicates=params.replicates, seed=params.seed, cache_dir=cache_dir or default_cache_dir(),
                  workers=workers, scheduler=scheduler, progress=progress)
    part1 = run_study("sdr_censoring", censoring_replicate, study, **common)
    part2 = run_study("sdr_reweighting", reweighting_replicate, study, **common)
    return SDRResults(params=params, part1=part1, part2=part2, data1=data_part1(study), data2=data_part2(study))
