"""This user's dpsynth home: the secret key that authenticates saved synthesizers and ledgers.

The home (:func:`dpsynth.paths.dpsynth_home`) holds one secret key, ``secret.key`` (32 random bytes,
owner-only), and the release ledgers. The key does three jobs:

* it names the confidential data sets (:func:`dpsynth.release.ledger.dataset_id` is an HMAC of the data under
  the key, so an id reveals nothing about the data);
* it chains the lines of every ledger and authenticates the home's ledger heads
  (:mod:`dpsynth.release.ledger`), so a line edited, removed or cut off stops every later release;
* it authenticates every saved synthesizer (:mod:`dpsynth.synthesizer_files`): a file whose draws,
  settings or report were edited, even with its checksum recomputed, is refused on load.

A saved file names the key it was written under by its **key id** (:func:`key_id`, an HMAC of a
fixed label: public, and useless for forging). A file written under another key is refused with
one line naming the fix: release it from the home that holds its key, or move that home here
(:func:`import_home`, ``dpsynth home import OLD_HOME``), which is the one explicit way to move a
home. A home is never created silently: the first use of a new home creates its key and warns
(:class:`NewHomeWarning`) that ledgers of earlier homes do not count in it.

What this protects against, and what it cannot, is the threat model of the README and the book's
introduction: a forgetful or careless user, a copied, edited, re-hashed or truncated file are
caught; whoever holds the key (or restores an old copy of the whole home) is not.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import shutil
import warnings
from pathlib import Path

from ..paths import HOME_ENV, dpsynth_home
from ..validation import DataError

__all__ = ["KEY_FILE", "NewHomeWarning", "KeyMismatchError", "secret_key", "key_id", "mac", "check_key_id",
           "import_home", "has_key"]

#: The key's file in the home.
KEY_FILE = "secret.key"


class NewHomeWarning(UserWarning):
    """A new dpsynth home (a new secret key) was created: its ledgers start empty."""


class KeyMismatchError(DataError):
    """A saved synthesizer was written under another home's key: it can be released only from that home."""


def _key_path() -> Path:
    return dpsynth_home() / KEY_FILE


def has_key() -> bool:
    """Whether this home has a secret key yet."""
    return _key_path().exists()


def secret_key() -> bytes:
    """This home's secret key, created on first use (owner-only) with a :class:`NewHomeWarning`."""
    path = _key_path()
    if not path.exists():
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:  # another process created it at the same moment
            return path.read_bytes()
        with os.fdopen(fd, "wb") as fh:
            fh.write(secrets.token_bytes(32))
        init_heads()
        warnings.warn(
            f"dpsynth created a new home at {path.parent} with a new secret key (id {key_id()}): its ledgers are "
            f"empty, and releases booked in another home do not count here. If you have released from this "
            f"data before, use that home ({HOME_ENV}=...) or move it here: `dpsynth home import OLD_HOME`.",
            NewHomeWarning, stacklevel=3)
    key = path.read_bytes()
    if len(key) != 32:
        raise DataError(f"the secret key {path} is not 32 bytes (it was edited or truncated); restore it from a "
                        f"backup.")
    return key


def mac(purpose: str, blob: bytes) -> str:
    """HMAC-SHA256 (hex) of ``blob`` under this home's key, for one ``purpose`` (domain separation)."""
    return hmac.new(secret_key(), purpose.encode() + b"\0" + blob, hashlib.sha256).hexdigest()


def key_id() -> str:
    """The public name of this home's key (16 hex digits): what a saved file records as the key it was written under."""
    return mac("dpsynth-key-id", b"")[:16]


def check_key_id(written: str, what: str) -> None:
    """Refuse, naming the fix, an artefact written under another key than this home's."""
    if not has_key():
        raise KeyMismatchError(
            f"{what} was written under dpsynth key {written}, and this home ({dpsynth_home()}) has no key yet: "
            f"release it from the home that holds that key ({HOME_ENV}=...), or move that home here with "
            f"`dpsynth home import OLD_HOME`.")
    here = key_id()
    if written != here:
        raise KeyMismatchError(
            f"{what} was written under dpsynth key {written}, but this home ({dpsynth_home()}) holds key {here}: "
            f"its releases must be booked in the ledgers of the home it was written in. Set {HOME_ENV} to that "
            f"home, or move that home here with `dpsynth home import OLD_HOME` (copies its key and ledgers).")


def import_home(source: str | os.PathLike, *, force: bool = False) -> Path:
    """Move another home's key and ledgers into this home (the explicit way to move a home).

    Refused when this home already has ledgers (they would be orphaned) unless ``force``, which keeps
    this home's key and ledgers in ``replaced-<key id>/`` beside them.

    Returns
    -------
    pathlib.Path
        This home.
    """
    src = Path(source).expanduser()
    home = dpsynth_home()
    if src.resolve() == home.resolve():
        raise DataError(f"{src} is this home already.")
    if not (src / KEY_FILE).is_file():
        raise DataError(f"{src} is not a dpsynth home: it has no {KEY_FILE}. Give the folder that holds it.")
    ledgers = home / "ledgers"
    mine = list(ledgers.glob("*.jsonl")) if ledgers.is_dir() else []
    if mine and not force:
        raise DataError(
            f"this home ({home}) has ledgers already; importing {src} would orphan them. Pass force=True "
            f"(--force) to keep them aside in {home}/replaced-<key id>/.")
    if has_key():
        aside = home / f"replaced-{key_id()}"
        aside.mkdir(mode=0o700, exist_ok=True)
        shutil.move(str(home / KEY_FILE), aside / KEY_FILE)
        if ledgers.is_dir():
            shutil.move(str(ledgers), aside / "ledgers")
    if (src / "ledgers").is_dir():
        shutil.copytree(src / "ledgers", ledgers)
    shutil.copy2(src / KEY_FILE, home / KEY_FILE)
    os.chmod(home / KEY_FILE, 0o600)
    init_heads()  # a home that never released has no head file yet
    return home


# ----------------------------------------------------------------------------- the ledgers' heads

#: The home's authenticated head file: every ledger's last line (read and checked by :mod:`dpsynth.release.ledger`).
HEADS_FILE = "HEADS.json"


def ledger_folder() -> Path:
    """The folder of every ledger of this home (``<dpsynth home>/ledgers``)."""
    folder = dpsynth_home() / "ledgers"
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    return folder


def canon(obj) -> bytes:
    """The canonical JSON bytes of ``obj`` (sorted keys, no spaces): what a MAC is computed over."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=True).encode()


def write_heads(path: Path, heads: dict) -> None:
    """Write the head file ``{dataset: [seq, mac]}`` atomically, under a MAC of its own (owner-only)."""
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"heads": heads, "mac": mac("dpsynth-ledger-heads", canon(heads))}))
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)


def init_heads() -> None:
    """Write the empty head file of a new home (with its key): from then on, a missing head file was removed."""
    path = ledger_folder() / HEADS_FILE
    if not path.exists():
        write_heads(path, {})
