"""The "Your own data" chapter: the CPS 1988 wages, our mechanisms beside OpenDP, units, and two more files.

``run(Params.quick())`` runs (or loads from the cache or the shipped results) the chapter's four
studies through :func:`dpsynth_book.studies.run_study`: the mechanism comparison (``own_data``) and
the units study (``own_data-units``), see :mod:`.replicate`; the three real files fitted with
default settings (``own_data-files``) and the unit-free window (``own_data-unitfree``), see
:mod:`.files`. Tables, verdicts and figures are in :mod:`.tables`, :mod:`.verdicts` and :mod:`.figures`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import xarray as xr

from ... import paths
from ...studies import run_study
from .files import files_replicate, unitfree_replicate
from .params import OwnDataParams
from .replicate import replicate, units_replicate
from .verdicts import verdicts  # the function: ``own_data.verdicts`` is it, not the module

__all__ = ["Params", "OwnDataParams", "OwnDataResults", "run", "verdicts"]

#: The chapter's parameter class.
Params = OwnDataParams


@dataclass
class OwnDataResults:
    """The chapter's study Datasets.

    Attributes
    ----------
    params : OwnDataParams
    study : xarray.Dataset
        The mechanism comparison over ``(replicate, fit)`` (:func:`.replicate.replicate`).
    units : xarray.Dataset
        The units study over ``(replicate, setting, mechanism, eps)`` (:func:`.replicate.units_replicate`).
    files : xarray.Dataset
        The three real files with default settings over ``(replicate, file, eps)`` (:func:`.files.files_replicate`).
    unitfree : xarray.Dataset
        Censor_ref and Censor_uw over ``(replicate, unit, mechanism, eps)`` (:func:`.files.unitfree_replicate`).
    """

    params: OwnDataParams
    study: xr.Dataset
    units: xr.Dataset
    files: xr.Dataset | None = None
    unitfree: xr.Dataset | None = None


def run(params: OwnDataParams, *, cache_dir: str | os.PathLike | None = None, workers: int | None = None,
        scheduler: str | None = None, progress: bool = True) -> OwnDataResults:
    """Run (or load) the chapter's four studies.

    The two older studies are passed :meth:`OwnDataParams.legacy_dict` (the parameters they were
    shipped with); the files and unit-free studies :meth:`~OwnDataParams.files_dict` and
    :meth:`~OwnDataParams.unitfree_dict` with ``new_replicates`` replicates.

    Parameters
    ----------
    params : OwnDataParams
    cache_dir : path, optional
        Where results are cached (default :func:`dpsynth_book.paths.cache_dir`).
    workers, scheduler, progress
        Passed to :func:`dpsynth_book.studies.run_study` (workers: one process per core by default).
    """
    if not isinstance(params, OwnDataParams):
        raise TypeError(f"`params` must be an OwnDataParams (Params.quick() etc.); got {type(params).__name__}.")
    kw = dict(replicates=params.replicates, seed=params.seed, cache_dir=cache_dir or paths.cache_dir(),
              workers=workers, scheduler=scheduler, progress=progress)
    study = run_study("own_data", replicate, params.legacy_dict(), **kw)
    units = run_study("own_data-units", units_replicate, params.legacy_dict(), **kw)
    kw["replicates"] = params.new_replicates
    files = run_study("own_data-files", files_replicate, params.files_dict(), **kw)
    unitfree = run_study("own_data-unitfree", unitfree_replicate, params.unitfree_dict(), **kw)
    return OwnDataResults(params=params, study=study, units=units, files=files, unitfree=unitfree)
