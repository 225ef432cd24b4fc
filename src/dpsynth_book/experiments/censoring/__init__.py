"""The censoring chapter: parameters, replicates, tables, verdicts and figures.

``run(Params.quick())`` runs (or loads from the cache) every study of the chapter through
:func:`dpsynth_book.studies.run_study`: the Monte Carlo study, the one-data-set illustration of the
censored posterior, the release workflow's calibration on a historical data set, the later
releases and the Censor_ref study (``censoring-reference``, :mod:`.reference`). :func:`verdicts`
checks the chapter's claims on the results.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import xarray as xr

from dpsynth.seeds import int_seed, stream

from ... import paths
from ...studies import run_study
from . import reference as _ref
from . import replicate as _rep  # the submodule; ``censoring.replicate`` stays the module
from .params import CensoringParams
from .verdicts import verdicts  # the function: ``censoring.verdicts`` is it, not the module

__all__ = ["Params", "CensoringParams", "CensoringResults", "run", "verdicts"]

#: The chapter's parameter class.
Params = CensoringParams


@dataclass
class CensoringResults:
    """Every study Dataset of the chapter.

    Attributes
    ----------
    params : CensoringParams
    study : xarray.Dataset
        The Monte Carlo study: a ``fit`` dimension (coordinates ``synthesizer`` and ``eps``;
        eps NaN for the eps-independent Data, Unweighted and LW) by ``replicate``.
    downscale : xarray.Dataset
        The downscaling comparison over ``(replicate, synthesizer, scaling)``.
    figure1 : xarray.Dataset
        Posterior and censored posterior of ``phi`` on one data set (one replicate).
    calibration : xarray.Dataset
        The historical fit, calibrated ``c`` and public LW rule (one replicate).
    release : xarray.Dataset
        The later releases over ``(replicate, synthesizer, scaling)``; ``replicate`` is the month.
    reference : xarray.Dataset or None
        The Censor_ref study over ``(replicate, eps, variant)``
        (:func:`~dpsynth_book.experiments.censoring.reference.reference_replicate`).
    """

    params: CensoringParams
    study: xr.Dataset
    downscale: xr.Dataset
    figure1: xr.Dataset
    calibration: xr.Dataset
    release: xr.Dataset
    reference: xr.Dataset | None = None

    def studies(self) -> dict[str, xr.Dataset]:
        """Study name -> the Dataset it gave (the main study unsplit is ``study`` and ``downscale``)."""
        out = {"censoring": self.study, "censoring-figure1": self.figure1, "censoring-calibration": self.calibration,
               "censoring-release": self.release}
        if self.reference is not None:
            out["censoring-reference"] = self.reference
        return out


def run(params: CensoringParams, *, cache_dir: str | os.PathLike | None = None, workers: int | None = 1,
        scheduler: str | None = None, progress: bool = True) -> CensoringResults:
    """Run (or load from the cache) every study of the chapter.

    Parameters
    ----------
    params : CensoringParams
    cache_dir : path, optional
        Where results are cached (default :func:`dpsynth_book.paths.cache_dir`).
    workers, scheduler, progress
        Passed to :func:`dpsynth_book.studies.run_study`.
    """
    if not isinstance(params, CensoringParams):
        raise TypeError(f"`params` must be a CensoringParams (Params.quick() etc.); got {type(params).__name__}.")
    cache = cache_dir or paths.cache_dir()
    common = dict(cache_dir=cache, workers=workers, scheduler=scheduler, progress=progress)
    d = params.study_dict()
    main = run_study("censoring", _rep.replicate, d, replicates=params.replicates, seed=params.seed, **common)
    study, down = _rep.split_study(main)
    fig1 = run_study("censoring-figure1", _rep.figure1_replicate, d, replicates=1,
                     seed=int_seed(stream(params.seed, "figure1")), **common)
    cal = run_study("censoring-calibration", _rep.calibration_replicate, d, replicates=1,
                    seed=int_seed(stream(params.seed, "calibration")), **common)
    rel = run_study("censoring-release", _rep.release_replicate, _rep.release_params(cal, params),
                    replicates=params.release_months, seed=int_seed(stream(params.seed, "release", "months")), **common)
    # its own parameter dict (reference_dict), so the four studies above kept theirs
    ref = run_study("censoring-reference", _ref.reference_replicate, params.reference_dict(),
                    replicates=params.ref_replicates, seed=int_seed(stream(params.seed, "reference")), **common)
    return CensoringResults(params=params, study=study, downscale=down, figure1=fig1, calibration=cal, release=rel,
                            reference=ref)
