"""The files a :class:`~dpsynth.Synthesizer` writes: the saved synthesizer and released data sets.

* A saved synthesizer is one JSON document (no pickle): ``{"format", "version", "key_id", "mac",
  "content"}``, where ``mac`` is the HMAC-SHA256 of the canonical JSON of ``content`` under the
  key of the home it was written in (:mod:`dpsynth.release.home`), and ``key_id`` names that key.
  :func:`read_saved` checks it under that key if this home holds it (its own, or one of a home moved
  here), and refuses a file written under a key it does not hold (:class:`~dpsynth.release.home.KeyMismatchError`,
  naming the fix) and a file whose contents do not match their MAC (:class:`ChecksumError`): an
  edit of anything in it, draws, settings or report, even with a checksum recomputed, is refused.
* A release writes one synthetic data set atomically (CSV or Parquet by extension), the data
  only (:func:`write_frame`), to a path that :func:`check_output_path` accepted.

Nothing here imports the ``Synthesizer``: it hands this module its contents and its sampler.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np
import pandas as pd

from .paths import atomic_write
from .validation import DataError

__all__ = ["FORMAT", "FORMAT_VERSION", "ChecksumError", "canonical", "digest", "jsonable", "write_saved",
           "read_saved", "confidential_path", "write_confidential", "write_frame", "check_output_path"]

FORMAT = "dpsynth.synthesizer"
#: The saved file's layout: 5 holds the configuration, the plan and the fitted state apart
#: (:mod:`dpsynth.synthesizer_io`); a file of an earlier version is refused (fit the synthesizer again).
FORMAT_VERSION = 5


class ChecksumError(DataError):
    """A saved synthesizer's contents do not match their MAC (edited, re-hashed or corrupted)."""


def canonical(obj) -> bytes:
    """The canonical JSON of ``obj`` (sorted keys, no spaces): what the digest covers."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=True).encode()


def digest(content: dict) -> str:
    """SHA-256 (hex) of ``content``'s canonical JSON."""
    return hashlib.sha256(canonical(content)).hexdigest()


def jsonable(v):
    """``v`` with numpy scalars and arrays turned into plain JSON values."""
    if isinstance(v, dict):
        return {str(k): jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    if isinstance(v, np.ndarray):
        return jsonable(v.tolist())
    if isinstance(v, (np.bool_, bool)):
        return bool(v)
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, (np.floating, float)):
        return float(v)
    return v


def _atomic_write_text(path: Path, text: str, *, mode: int = 0o644) -> None:
    atomic_write(path, lambda tmp: Path(tmp).write_text(text), mode=mode, create_parent=False)


def _mac(content: dict, key: bytes | None = None) -> str:
    from .release.home import mac

    return mac("dpsynth-saved-synthesizer", canonical(content), key=key)


def write_saved(path: str | os.PathLike, content: dict) -> Path:
    """Write ``content`` as a saved synthesizer (with its MAC under this home's primary key), atomically, owner-only
    (0o600); refused in a sealed home (:func:`dpsynth.release.home.check_open`)."""
    from .release.home import check_open, key_id

    check_open("save")
    path = Path(path)
    doc = {"format": FORMAT, "version": FORMAT_VERSION, "key_id": key_id(), "mac": _mac(content), "content": content}
    _atomic_write_text(path, json.dumps(doc, allow_nan=True), mode=0o600)
    return path


def read_saved(path: str | os.PathLike) -> dict:
    """The authenticated ``content`` of a saved synthesizer.

    Raises
    ------
    DataError
        If the file is not a saved synthesizer of this format version.
    KeyMismatchError
        If it was written under a key this home does not hold: the message names the fix.
    ChecksumError
        If its contents do not match their MAC: it was edited (whatever checksum was recomputed) or
        is corrupted.
    """
    from .release.home import check_key_id

    path = Path(path)
    try:
        doc = json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise DataError(f"{path} is not a saved synthesizer (not JSON: {e}).") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        got = doc.get("format") if isinstance(doc, dict) else type(doc).__name__
        raise DataError(f"{path} is not a saved synthesizer (format {got!r}, expected {FORMAT!r}).")
    if doc.get("version") != FORMAT_VERSION:
        raise DataError(f"{path} has format version {doc.get('version')!r}; this dpsynth reads {FORMAT_VERSION}: "
                        f"fit the synthesizer again with this version.")
    key = check_key_id(str(doc.get("key_id")), str(path))
    content = doc.get("content")
    import hmac

    if not isinstance(content, dict) or not hmac.compare_digest(str(doc.get("mac")), _mac(content, key)):
        raise ChecksumError(f"{path}: its contents do not match their MAC under this home's key (the file was edited "
                            f"or is corrupted); refusing to load it. Use the file `save` wrote.")
    return content


def confidential_path(path: str | os.PathLike) -> Path:
    """Where ``save(..., include_confidential=True)`` writes the confidential data."""
    path = Path(path)
    return path.with_name(path.stem + ".CONFIDENTIAL.json")


def write_confidential(path: str | os.PathLike, target: str, values, weights) -> Path:
    """The confidential column and the record weights, beside a saved synthesizer, owner-readable only."""
    conf = {"format": FORMAT + ".confidential", "confidential": True,
            "warning": "CONFIDENTIAL: the confidential column and the record weights; do not release.",
            "target": target, "values": jsonable(values), "weights": None if weights is None else jsonable(weights)}
    out = confidential_path(path)
    _atomic_write_text(out, json.dumps(conf, allow_nan=True), mode=0o600)
    return out


def check_output_path(path: str | os.PathLike, *, force: bool, suffixes=(".csv", ".parquet")) -> Path:
    """An output path a user named: the right extension, an existing folder, no existing file unless ``force``.

    Nothing is created silently: a missing folder is an error naming it.
    """
    path = Path(path)
    if path.suffix.lower() not in suffixes:
        raise DataError(f"the output {path.name!r} must end in {' or '.join(suffixes)}.")
    if not path.parent.is_dir():
        raise DataError(f"the folder {str(path.parent)!r} of {path.name!r} does not exist; create it first (nothing "
                        f"is created silently).")
    if path.exists() and not force:
        raise DataError(f"{str(path)!r} exists already; choose a new file, or pass force=True (on the command line "
                        f"--force) to replace it.")
    return path


def write_frame(df: pd.DataFrame, path: Path) -> None:
    """Write a released data set atomically, CSV or Parquet by the file's extension: the data only.

    Its ``attrs`` are not written (Parquet would store them), so nothing but the synthetic records
    leaves in the file.
    """
    plain = df.copy()
    plain.attrs = {}
    csv = path.suffix.lower() == ".csv"
    atomic_write(path, lambda tmp: plain.to_csv(tmp, index=False) if csv else plain.to_parquet(tmp, index=False),
                 create_parent=False)
