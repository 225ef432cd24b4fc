"""The 'Choosing a mechanism' chapter: the head-to-head grid, the decision, the odds table and privacy against
utility.

The chapter runs one study of its own, the head-to-head grid (``choosing-grid``, :mod:`.grid`:
every strictly DP candidate in every single-column situation on real files at the book's epsilons),
with :func:`run`; its decision (:mod:`.recommend`) is what ``mechanism="auto"`` follows. It also
reads the other chapters' shipped paper-scale results (:func:`~.tables.shipped_studies`).
:mod:`.tables` holds its tables and computed text, and :mod:`.figures` the privacy-utility figure
and its caption; their public names are re-exported here.
"""

from __future__ import annotations

import os

import xarray as xr

from ... import paths
from ...studies import run_study
from .figures import tradeoff_caption, tradeoff_figure
from .grid import grid_replicate
from .grid_params import GridParams
from .tables import (
    TRADEOFF_COLUMNS,
    TRADEOFF_STUDIES,
    decision_table,
    odds_table,
    posterior_probability_bound,
    shipped_studies,
    tradeoff_markdown,
    tradeoff_table,
)

#: The chapter's parameter class (its head-to-head grid).
Params = GridParams


def run(params: GridParams, *, cache_dir: str | os.PathLike | None = None, workers: int | None = None,
        scheduler: str | None = None, progress: bool = True) -> xr.Dataset:
    """Run (or load) the head-to-head grid (study ``choosing-grid``) through :func:`dpsynth_book.studies.run_study`."""
    if not isinstance(params, GridParams):
        raise TypeError(f"`params` must be a GridParams (Params.quick() etc.); got {type(params).__name__}.")
    return run_study("choosing-grid", grid_replicate, params.study_dict(), replicates=params.replicates,
                     seed=params.seed, cache_dir=cache_dir or paths.cache_dir(), workers=workers, scheduler=scheduler,
                     progress=progress)


__all__ = ["Params", "GridParams", "run", "decision_table", "odds_table", "posterior_probability_bound",
           "TRADEOFF_STUDIES",
           "TRADEOFF_COLUMNS", "shipped_studies", "tradeoff_table", "tradeoff_markdown", "tradeoff_figure",
           "tradeoff_caption"]
