"""This user's dpsynth home: the secret keys that authenticate saved synthesizers and ledgers.

A home (:func:`dpsynth.paths.dpsynth_home`) is one folder, created owner-only (0o700), every file
in it written owner-only (0o600):

* ``secret.key``: the home's **primary key** (32 random bytes). New fits, saved files, data set
  ids and new ledgers use it. A key file that group or others may read or write is refused (as
  ssh refuses one), naming the fix ``chmod 600 <path>``.
* ``keys/<key id>.key``: the **keyring**, the keys of homes moved here (:func:`dpsynth.release.ledger.import_home`). The
  home reads and verifies files and ledgers written under any key it holds.
* ``ledgers/``: one ledger per data set and the ledgers' authenticated head file
  (:mod:`dpsynth.release.ledger`).
* ``HIGHWATER.json``: the home's own record, outside the ledgers folder and under the primary key,
  of every ledger's last line and strict-DP total (and of the data set ids known to be the same
  data under different keys). It only ever goes up; a ledger older than it is refused.
* ``SEALED.json``: present once the home was moved into another one; it names that home and when.

The key does three jobs:

* it names the confidential data sets (:func:`dpsynth.release.ledger.dataset_id` is an HMAC of the data under
  the key, so an id reveals nothing about the data);
* it chains the lines of every ledger and authenticates the home's ledger heads and record
  (:mod:`dpsynth.release.ledger`), so a line edited, removed or cut off stops every later release;
* it authenticates every saved synthesizer (:mod:`dpsynth.synthesizer_files`): a file whose draws,
  settings or report were edited, even with its checksum recomputed, is refused on load.

A saved file names the key it was written under by its **key id** (:func:`key_id`, an HMAC of a
fixed label: public, and useless for forging). A file written under a key this home does not hold
is refused with one line naming the fix: release it from the home that holds its key, or move
that home here (:func:`dpsynth.release.ledger.import_home`, ``dpsynth home import OLD_HOME``), the one explicit way to
move a home. A home is never created silently: the first use of a new home creates its key and
warns (:class:`NewHomeWarning`) that ledgers of earlier homes do not count in it.

**Moving a home merges, and the total spent on a data set only goes up.** Importing a home never
moves anything aside and never lowers a total:

* a home with the **same key** (a copy of this home, made earlier): its ledgers are merged into
  this home's, data set by data set. Where one chain extends the other the longer is kept; where
  the two forked (both homes released after the copy was made), every release of both is kept:
  this home's lines, then a ``merge`` line saying where the other home's chain forked, then the
  other home's releases after the fork, chained anew;
* a home with **another key**: its key joins this home's keyring and its ledgers are copied here
  as they are, so its files still load and its ledgers still count and verify.

The moved home is then **sealed** (``SEALED.json``, authenticated under its own key, naming the home
it moved to and when): any fit, release, save or ledger append there is refused in one line naming
that home, so the two homes cannot both go on releasing.

Two homes with different keys that both released from the same data set hold two ledgers of it
under two ids (an id is an HMAC under a key): nothing links them but the data. A fit in the merged
home computes the data set's id under every key it holds and records them as one data set
(``HIGHWATER.json``); from then on every release of that data, from a synthesizer saved in either
home, sums the ledgers of all its ids and checks its budget against that sum. Until such a fit
(or for a data set never fitted again), a synthesizer saved before the move counts the ledger of
its own home's id only: the two homes' releases of it are then counted apart, as they were before
the move, and a ``budget`` holds for each home's releases separately.

Threat model (the README's and the book's introduction): a forgetful or careless user; a copied,
edited, re-hashed, truncated or deleted file; a ledger replaced by an older copy, with its head file
or not (refused: the home's record remembers its last line and total); a home moved twice or used
after it was moved (the seal) are caught. Whoever holds a key is not (they can forge anything
written under it). And **restoring the whole home folder** (keys, record, ledgers and all) to an
older copy rolls every total back undetectably: an older copy of a whole home is a consistent home,
and nothing inside it can tell that it is not the latest. So is deleting the seal of a moved home.
Keep one home per data holder; do not copy it back over itself.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import warnings
from datetime import UTC, datetime
from pathlib import Path

from ..paths import HOME_ENV, dpsynth_home
from ..validation import DataError

__all__ = ["KEY_FILE", "KEYS_DIR", "SEAL_FILE", "HEADS_FILE", "RECORD_FILE", "NewHomeWarning", "KeyMismatchError",
           "HomeSealedError", "secret_key", "keyring", "key_for", "key_id", "key_id_of", "mac", "check_key_id",
           "check_open", "seal_of", "seal", "adopt_keys", "read_key", "has_key", "write_private"]

#: The primary key's file in the home.
KEY_FILE = "secret.key"
#: The folder of the keyring: the keys of homes moved here, ``<key id>.key``.
KEYS_DIR = "keys"
#: The seal of a home that was moved into another one.
SEAL_FILE = "SEALED.json"
#: The home's authenticated head file: every ledger's last line (read and checked by :mod:`dpsynth.release.ledger`).
HEADS_FILE = "HEADS.json"
#: The home's own high-water record of every ledger, outside the ledgers folder (:mod:`dpsynth.release.ledger`).
RECORD_FILE = "HIGHWATER.json"


class NewHomeWarning(UserWarning):
    """A new dpsynth home (a new secret key) was created: its ledgers start empty."""


class KeyMismatchError(DataError):
    """A saved synthesizer was written under a key this home does not hold: it can be released only from that home."""


class HomeSealedError(DataError):
    """This home was moved into another one: nothing is fitted, released, saved or booked here."""


def _key_path(home: Path | None = None) -> Path:
    return (dpsynth_home() if home is None else home) / KEY_FILE


def has_key() -> bool:
    """Whether this home has a secret key yet."""
    return _key_path().exists()


def write_private(path: Path, data: bytes) -> None:
    """Write ``path`` atomically and owner-only (0o600): a temporary file created 0o600, then renamed over it."""
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if tmp.exists():
            tmp.unlink()
        raise


def _read_key(path: Path) -> bytes:
    """A key file's 32 bytes, refused if group or others may read or write it, or if it is not 32 bytes."""
    mode = path.stat().st_mode & 0o777
    if mode & 0o077:
        raise DataError(f"the secret key {path} is open to group or others (mode {mode:04o}): whoever can read it can "
                        f"forge this home's files and ledgers, so it is not used. Run `chmod 600 {path}`.")
    key = path.read_bytes()
    if len(key) != 32:
        raise DataError(f"the secret key {path} is not 32 bytes (it was edited or truncated): nothing written under "
                        f"it can be verified, so nothing is read or booked with it. dpsynth never replaces a key (a "
                        f"new key would start its ledgers empty).")
    return key


def secret_key() -> bytes:
    """This home's primary key, created on first use (owner-only) with a :class:`NewHomeWarning`."""
    path = _key_path()
    if not path.exists():
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:  # another process created it at the same moment
            return _read_key(path)
        with os.fdopen(fd, "wb") as fh:
            fh.write(secrets.token_bytes(32))
        init_heads()
        warnings.warn(
            f"dpsynth created a new home at {path.parent} with a new secret key (id {key_id()}): its ledgers are "
            f"empty, and releases booked in another home do not count here. If you have released from this "
            f"data before, use that home ({HOME_ENV}=...) or move it here: `dpsynth home import OLD_HOME`.",
            NewHomeWarning, stacklevel=3)
    return _read_key(path)


def _hmac(key: bytes, purpose: str, blob: bytes) -> str:
    return hmac.new(key, purpose.encode() + b"\0" + blob, hashlib.sha256).hexdigest()


def mac(purpose: str, blob: bytes, *, key: bytes | None = None) -> str:
    """HMAC-SHA256 (hex) of ``blob`` for one ``purpose`` (domain separation), under ``key`` (default: the primary)."""
    return _hmac(secret_key() if key is None else key, purpose, blob)


def key_id_of(key: bytes) -> str:
    """The public name of ``key`` (16 hex digits)."""
    return _hmac(key, "dpsynth-key-id", b"")[:16]


def key_id() -> str:
    """The public name of this home's primary key (16 hex digits): what a saved file records as its key."""
    return key_id_of(secret_key())


def keyring(home: str | os.PathLike | None = None) -> dict[str, bytes]:
    """Every key a home holds, ``{key id: key}``: its primary key first, then the keys of homes moved into it.

    Parameters
    ----------
    home : path-like, optional
        A home's folder (default this home, whose primary key is created on first use).
    """
    folder = dpsynth_home() if home is None else Path(home)
    primary = secret_key() if home is None else _read_key(folder / KEY_FILE)
    out = {key_id_of(primary): primary}
    keys = folder / KEYS_DIR
    if keys.is_dir():
        for p in sorted(keys.glob("*.key")):
            k = _read_key(p)
            kid = key_id_of(k)
            if p.stem != kid:
                raise DataError(f"the key file {p} holds key {kid}, not {p.stem}: it was renamed or replaced, so it "
                                f"is not used. Name it {kid}.key.")
            out.setdefault(kid, k)
    return out


def key_for(kid: str) -> bytes | None:
    """The key with id ``kid`` if this home holds it (None otherwise, or before this home has a key)."""
    return keyring().get(kid) if has_key() else None


def check_key_id(written: str, what: str) -> bytes:
    """The key ``what`` was written under; refuse, naming the fix, one this home does not hold."""
    if not has_key():
        raise KeyMismatchError(
            f"{what} was written under dpsynth key {written}, and this home ({dpsynth_home()}) has no key yet: "
            f"release it from the home that holds that key ({HOME_ENV}=...), or move that home here with "
            f"`dpsynth home import OLD_HOME`.")
    key = key_for(written)
    if key is None:
        held = ", ".join(keyring())
        raise KeyMismatchError(
            f"{what} was written under dpsynth key {written}, but this home ({dpsynth_home()}) holds key {held}: "
            f"its releases must be booked in the ledgers of the home it was written in. Set {HOME_ENV} to that "
            f"home, or move that home here with `dpsynth home import OLD_HOME` (merges its keys and ledgers).")
    return key


def canon(obj) -> bytes:
    """The canonical JSON bytes of ``obj`` (sorted keys, no spaces): what a MAC is computed over."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=True).encode()


# ----------------------------------------------------------------------------- the seal of a moved home


def seal_of(home: str | os.PathLike | None = None) -> dict | None:
    """The seal of a home that was moved (``{"moved_to", "time", "verified"}``), or None for a home in use."""
    folder = dpsynth_home() if home is None else Path(home)
    path = folder / SEAL_FILE
    if not path.exists():
        return None
    try:
        doc = json.loads(path.read_text())
        body = {"moved_to": str(doc["moved_to"]), "time": str(doc["time"])}
        tag = str(doc["mac"])
    except (ValueError, KeyError, TypeError):
        return {"moved_to": "another home", "time": "an unknown time", "verified": False}
    try:
        ok = hmac.compare_digest(tag, _hmac(_read_key(folder / KEY_FILE), "dpsynth-home-seal", canon(body)))
    except (OSError, DataError):
        ok = False
    return {**body, "verified": ok}


def check_open(action: str, home: str | os.PathLike | None = None) -> None:
    """Refuse ``action`` (a fit, a release, a save, a ledger append) in a sealed home, naming the home it moved to."""
    seal = seal_of(home)
    if seal is None:
        return
    folder = dpsynth_home() if home is None else Path(home)
    edited = "" if seal["verified"] else " (its seal does not verify: it was edited)"
    raise HomeSealedError(
        f"no {action} here: this dpsynth home ({folder}) was moved to {seal['moved_to']} on {seal['time']}{edited} "
        f"and is sealed, so that its ledgers live in one home only. Set {HOME_ENV}={seal['moved_to']}.")


# ------------------------------------------------------------------- moving a home (dpsynth.release.ledger.import_home)


def adopt_keys(src_keys: dict[str, bytes], src_primary: bytes) -> None:
    """Bring a moved home's keys here (into the keyring): its primary key becomes this home's if this home has none."""
    home = dpsynth_home()
    if not has_key():
        write_private(home / KEY_FILE, src_primary)
        init_heads()
    held = keyring()
    new = {kid: k for kid, k in src_keys.items() if kid not in held}
    if new:
        folder = home / KEYS_DIR
        folder.mkdir(mode=0o700, exist_ok=True)
        for kid, k in new.items():
            write_private(folder / f"{kid}.key", k)


def seal(src: Path, key: bytes) -> None:
    """Seal the home ``src`` (moved into this one): ``SEALED.json`` names this home and the time, under its key."""
    body = {"moved_to": str(dpsynth_home().resolve()), "time": datetime.now(UTC).isoformat(timespec="seconds")}
    write_private(src / SEAL_FILE, json.dumps({**body, "mac": _hmac(key, "dpsynth-home-seal", canon(body))}).encode())


def read_key(path: str | os.PathLike) -> bytes:
    """A key file's 32 bytes, refused (naming the fix) if group or others may read or write it, or if it is not 32
    bytes."""
    return _read_key(Path(path))


# ----------------------------------------------------------------------------- the ledgers' heads and the record


def ledger_folder() -> Path:
    """The folder of every ledger of this home (``<dpsynth home>/ledgers``), owner-only."""
    folder = dpsynth_home() / "ledgers"
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    return folder


#: The entry of the head file that marks a home keeping a high-water record (not a data set id: those are alphanumeric).
RECORD_MARK = "+record"


def write_heads(path: Path, heads: dict, *, key: bytes | None = None) -> None:
    """Write the head file ``{dataset: [seq, mac]}`` atomically, owner-only, under a MAC of its own.

    It also holds :data:`RECORD_MARK`, under the same MAC: the home keeps a high-water record
    (:data:`RECORD_FILE`), so a record removed later is noticed. (An earlier dpsynth reads the file
    as before: it looks up data set ids only.)
    """
    body = {**heads, RECORD_MARK: True}
    write_private(path, json.dumps({"heads": body, "mac": mac("dpsynth-ledger-heads", canon(body), key=key)}).encode())


def write_record(path: Path, record: dict, *, key: bytes | None = None) -> None:
    """Write the home's high-water record atomically, owner-only, under a MAC."""
    write_private(path, json.dumps({"record": record, "mac": mac("dpsynth-home-record", canon(record),
                                                                    key=key)}).encode())


def init_heads() -> None:
    """Write the empty head file and record of a new home (with its key): from then on, a missing one was removed."""
    folder = ledger_folder()
    if not (folder / HEADS_FILE).exists():
        write_heads(folder / HEADS_FILE, {})
    record = folder.parent / RECORD_FILE
    if not record.exists():
        write_record(record, {"ledgers": {}, "links": []})
