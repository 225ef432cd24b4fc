"""Survey of Doctorate Recipients (SDR) data: a loader for the user's own file, a stand-in and the design.

* :mod:`dpsynth_book.sdr.loader`: :func:`load_sdr` reads the user's copy of the 2017 public use file,
  with explicit filters and checks (:class:`SDRData`, :class:`SDRFileError`);
* :mod:`dpsynth_book.sdr.standin`: seeded stand-in samples calibrated to the papers' published
  summaries (:func:`standin_censoring`, :func:`standin_reweighting`);
* :mod:`dpsynth_book.sdr.design`: the public salary bound, the scaling of salary into (0, 1) and the
  design matrix of the beta regression.

Every public name is re-exported here, so ``from dpsynth_book import sdr; sdr.load_sdr(...)`` works.
"""

from .design import (
    AGE_LEVELS,
    PUBLIC_SALARY_BOUND,
    SALARY_OFFSET,
    WEEKS_RANGE,
    design_matrix,
    design_names,
    scale_salary,
    unscale_salary,
)
from .loader import (
    RESERVED_SALARY_CODES,
    VARIABLES,
    SDRColumns,
    SDRData,
    SDRFileError,
    file_digest,
    load_sdr,
    salary_summary,
    subsample,
)
from .standin import CENSORING_TARGETS, REWEIGHTING_TARGETS, standin_censoring, standin_reweighting

__all__ = [
    "SDRFileError",
    "SDRColumns",
    "SDRData",
    "PUBLIC_SALARY_BOUND",
    "RESERVED_SALARY_CODES",
    "SALARY_OFFSET",
    "AGE_LEVELS",
    "WEEKS_RANGE",
    "VARIABLES",
    "CENSORING_TARGETS",
    "REWEIGHTING_TARGETS",
    "load_sdr",
    "file_digest",
    "standin_censoring",
    "standin_reweighting",
    "scale_salary",
    "unscale_salary",
    "design_matrix",
    "design_names",
    "subsample",
    "salary_summary",
]
