"""A temporary dpsynth home for a benchmark's releases, so that no ledger of the user's own home is touched."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator


@contextlib.contextmanager
def temporary_home() -> Iterator[str]:
    """Point ``DPSYNTH_HOME`` at a new temporary folder for the block, then restore it and remove the folder."""
    before = os.environ.get("DPSYNTH_HOME")
    with tempfile.TemporaryDirectory() as home:
        os.environ["DPSYNTH_HOME"] = home
        try:
            yield home
        finally:
            if before is None:
                os.environ.pop("DPSYNTH_HOME", None)
            else:
                os.environ["DPSYNTH_HOME"] = before
