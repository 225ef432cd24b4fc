"""The checkout's folders: the repository root and the study cache (the book runs from a checkout).

This user's dpsynth folder and the atomic file writer are the library's (:mod:`dpsynth.paths`).
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["project_root", "cache_dir"]


def project_root() -> Path:
    """The repository root (the folder holding ``pyproject.toml``), found from this file.

    Falls back to the current directory when the package is installed outside a checkout.
    """
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "pyproject.toml").exists() and (parent / "src" / "dpsynth_book").exists():
            return parent
    return Path.cwd()


def cache_dir() -> Path:
    """Study cache folder: ``$DPSYNTH_CACHE`` or ``<root>/data/cache``."""
    env = os.environ.get("DPSYNTH_CACHE")
    return Path(env) if env else project_root() / "data" / "cache"
