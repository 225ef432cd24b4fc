"""Project paths that do not depend on the working directory."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path

__all__ = ["project_root", "cache_dir", "atomic_write"]


def project_root() -> Path:
    """The repository root (the folder holding ``pyproject.toml``), found from this file.

    Falls back to the current directory when the package is installed outside a checkout.
    """
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "pyproject.toml").exists() and (parent / "src" / "dpsynth").exists():
            return parent
    return Path.cwd()


def cache_dir() -> Path:
    """Study cache folder: ``$DPSYNTH_CACHE`` or ``<root>/data/cache``."""
    env = os.environ.get("DPSYNTH_CACHE")
    return Path(env) if env else project_root() / "data" / "cache"


def atomic_write(path: str | os.PathLike, write: Callable[[str], None], *, mode: int = 0o644) -> Path:
    """Write a file all at once or not at all.

    ``write(tmp)`` writes the content to a temporary file beside ``path``, which then replaces
    ``path`` in one step; if anything fails the temporary file is removed and ``path`` is left as it
    was, so no reader ever sees a half-written file. The parent folder is created if needed.

    Parameters
    ----------
    path : path-like
        The file to write.
    write : callable
        Writes the content to the path it is given.
    mode : int
        Permissions of the written file (0o644, ordinary shared output; 0o600 for confidential data).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        write(tmp)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path
