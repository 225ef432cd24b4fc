"""The "Releasing a whole table" chapter: the chain-rule table synthesizer against independent columns, MST and AIM.

``run(Params.quick())`` runs (or loads from the cache or the shipped results) the chapter's study
``whole_table`` through :func:`dpsynth_book.studies.run_study`
(:func:`dpsynth_book.experiments.whole_table.replicate.replicate`): on real
public tables, at each eps, one synthetic table from each method, measured against the data.
Tables, verdicts and the figure are in :mod:`.tables`, :mod:`.verdicts` and :mod:`.figures`.
Computing the study needs the peers' environment ``.venv-peers`` (``make peers``); the book
renders from the shipped results without it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import xarray as xr

from ... import paths
from ...studies import run_study
from .params import WholeTableParams
from .replicate import replicate
from .verdicts import verdicts  # the function: ``whole_table.verdicts`` is it, not the module

__all__ = ["Params", "WholeTableParams", "WholeTableResults", "run", "verdicts"]

#: The chapter's parameter class.
Params = WholeTableParams


@dataclass
class WholeTableResults:
    """The chapter's study Dataset.

    Attributes
    ----------
    params : WholeTableParams
    study : xarray.Dataset
        Over ``(replicate, table, eps, method)`` (:func:`dpsynth_book.experiments.whole_table.replicate.replicate`).
    """

    params: WholeTableParams
    study: xr.Dataset


def run(params: WholeTableParams, *, cache_dir: str | os.PathLike | None = None, workers: int | None = None,
        scheduler: str | None = None, progress: bool = True) -> WholeTableResults:
    """Run (or load) the chapter's study.

    Parameters
    ----------
    params : WholeTableParams
    cache_dir : path, optional
        Where results are cached (default :func:`dpsynth_book.paths.cache_dir`).
    workers, scheduler, progress
        Passed to :func:`dpsynth_book.studies.run_study`.
    """
    if not isinstance(params, WholeTableParams):
        raise TypeError(f"`params` must be a WholeTableParams (Params.quick() etc.); got {type(params).__name__}.")
    study = run_study("whole_table", replicate, params.study_dict(), replicates=params.replicates, seed=params.seed,
                      cache_dir=cache_dir or paths.cache_dir(), workers=workers, scheduler=scheduler,
                      progress=progress)
    return WholeTableResults(params=params, study=study)
