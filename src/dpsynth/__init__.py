"""dpsynth: differentially private Bayesian data synthesis."""
import os as _os

# PyTensor warns about BLAS at import when installed from PyPI; the numba backend used here
# does not need it.
_os.environ.setdefault("PYTENSOR_FLAGS", "blas__ldflags=")

from .likelihood import weighted_loglik  # noqa: E402
from .synthesizer import Synthesizer  # noqa: E402

__version__ = "0.1.0"
__all__ = ["weighted_loglik", "Synthesizer", "__version__"]
