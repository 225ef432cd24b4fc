"""This user's dpsynth folder, and writing a file all at once.

Neither depends on the working directory or on a checkout of the repository.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path

__all__ = ["atomic_write", "dpsynth_home", "HOME_ENV"]

#: Environment variable: the folder of this user's dpsynth state (its keys, ledgers and their record).
HOME_ENV = "DPSYNTH_HOME"


def dpsynth_home() -> Path:
    """This user's dpsynth folder: ``$DPSYNTH_HOME``, else ``$XDG_DATA_HOME/dpsynth``, else ``~/.local/share/dpsynth``.

    It holds the secret key(s), the release ledgers (one per confidential data set) and the
    home's high-water record of them (:mod:`dpsynth.release.home`). It is created owner-only (0o700) on
    first use, and every file dpsynth writes in it is owner-only (0o600).
    """
    env = os.environ.get(HOME_ENV)
    if env:
        home = Path(env)
    else:
        base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
        home = Path(base) / "dpsynth"
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    return home


def atomic_write(path: str | os.PathLike, write: Callable[[str], None], *, mode: int = 0o644,
                 create_parent: bool = True) -> Path:
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
    create_parent : bool
        Create a missing parent folder (False: a missing folder is an error naming it).
    """
    path = Path(path)
    if create_parent:
        path.parent.mkdir(parents=True, exist_ok=True)
    elif not path.parent.is_dir():
        from .validation import DataError

        raise DataError(f"the folder {str(path.parent)!r} of {path.name!r} does not exist; create it first (nothing "
                        f"is created silently).")
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
