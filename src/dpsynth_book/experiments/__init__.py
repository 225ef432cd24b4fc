"""Replicate functions of the book's Monte Carlo studies, one module per chapter."""

from collections.abc import Iterable, Mapping

__all__ = ["require"]


def require(params: Mapping, keys: Iterable[str]) -> None:
    """Raise ``KeyError`` naming every key of ``keys`` missing from a study's ``params``."""
    missing = [k for k in keys if k not in params]
    if missing:
        raise KeyError(f"missing study parameters: {missing}; add them to the notebook's params dict.")
