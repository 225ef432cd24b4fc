"""dpsynth: differentially private Bayesian data synthesis.

``Synthesizer``, ``TableSynthesizer`` and ``weighted_loglik`` are imported on first use (PEP 562), so that commands
which do not fit a model (``dpsynth ledger``, error messages) start without importing PyMC.
"""

import os as _os

# PyTensor warns about BLAS at import when installed from PyPI; the numba backend used here
# does not need it.
_os.environ.setdefault("PYTENSOR_FLAGS", "blas__ldflags=")

from ._version import __version__  # noqa: E402

__all__ = ["weighted_loglik", "Synthesizer", "TableSynthesizer", "__version__"]


def __getattr__(name: str):
    if name == "Synthesizer":
        from .synthesizer import Synthesizer

        return Synthesizer
    if name == "TableSynthesizer":
        from .table_synthesizer import TableSynthesizer

        return TableSynthesizer
    if name == "weighted_loglik":
        from .likelihood import weighted_loglik

        return weighted_loglik
    raise AttributeError(f"module 'dpsynth' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), "Synthesizer", "TableSynthesizer", "weighted_loglik"])
