"""Optional dependencies, imported where they are needed with a clear message when missing.

Two features need packages that a plain ``pip install dpsynth`` does not install; each comes
with an extra of the package:

* running a study's replicates on a Dask cluster (``run_study(..., scheduler=...)``) needs dask
  and distributed: ``pip install 'dpsynth[dask]'``;
* reading SAS data sets (``.sas7bdat``, e.g. the SDR public use file) needs pyreadstat:
  ``pip install 'dpsynth[sas]'``.

``make`` installs both (``requirements.lock`` holds every extra). Code that uses one of them
calls :func:`require` at the point of use instead of importing the package at module level::

    distributed = require("distributed", extra="dask", purpose="running a study on a Dask cluster")
"""

from __future__ import annotations

import importlib
from types import ModuleType

from dpsynth.validation import DataError

__all__ = ["EXTRAS", "MissingDependencyError", "require"]

#: The extra of dpsynth that installs each optional top-level package.
EXTRAS: dict[str, str] = {"dask": "dask", "distributed": "dask", "pyreadstat": "sas"}


class MissingDependencyError(DataError, ImportError):
    """Raised when a feature needs an optional package that is missing or does not import.

    It is a :class:`~dpsynth.validation.DataError` (so the command line reports it in one line)
    and an :class:`ImportError` (so ``except ImportError`` still catches it).
    """


def require(name: str, *, extra: str | None = None, purpose: str,
            error: type[DataError] = MissingDependencyError) -> ModuleType:
    """Import an optional package, or raise an error that says how to install it.

    Parameters
    ----------
    name : str
        Module to import, e.g. ``"distributed"`` or ``"pyreadstat"``.
    extra : str, optional
        The extra of dpsynth that installs it (``pip install 'dpsynth[<extra>]'``). Default: the
        one :data:`EXTRAS` lists for the top-level package of ``name``.
    purpose : str
        What the caller is doing, as the start of the message, e.g. ``"running a study on a Dask
        cluster"``.
    error : type of DataError
        The class to raise; a module with its own documented error (e.g.
        :class:`dpsynth_book.sdr.SDRFileError`) passes it here. Default :class:`MissingDependencyError`.

    Returns
    -------
    module
        The imported module.

    Raises
    ------
    MissingDependencyError
        (or ``error``) if the package is not installed, or is installed but fails to import; the
        message names the package, the purpose and the install command, and the original
        :class:`ImportError` is chained as its cause.
    """
    top = name.partition(".")[0]
    extra = extra if extra is not None else EXTRAS.get(top)
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        missing = isinstance(exc, ModuleNotFoundError) and exc.name is not None and (
            exc.name == name or name.startswith(exc.name + ".") or exc.name == top)
        how = f"pip install 'dpsynth[{extra}]' (or: pip install {top})" if extra else f"pip install {top}"
        what = purpose[:1].upper() + purpose[1:]
        if missing:
            msg = (f"{what} needs the optional package `{top}`, which is not installed. Install it with: {how}; "
                   f"in the compendium, `make venv` installs it.")
        else:
            msg = (f"{what} needs the optional package `{top}`, which is installed but fails to import "
                   f"({type(exc).__name__}: {exc}). Reinstall it with: {how}.")
        raise error(msg) from exc
