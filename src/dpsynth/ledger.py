"""The release ledger: one per confidential data set and neighbour relation, a keyed hash chain.

Where a release is booked does not depend on a file name. A saved synthesizer carries the
*data set id* of the confidential data it was fitted on (:func:`dataset_id`: an HMAC of the data
under this user's secret key, so the id reveals nothing about the data to whoever holds the file),
and every synthesizer of the same data set and relation, copies and renamed files included, books
into the same ledger, ``<dpsynth home>/ledgers/<id>-<relation>.jsonl`` (:func:`dpsynth.paths.dpsynth_home`).

Each line is one JSON record: an ``open`` line first, then one ``release`` line per released file
with the mechanism, its guarantee, the epsilon of the draw under the ledger's relation, the epsilon
spent on the released size, the strict-DP epsilon the release added (``spend``), the posterior draw,
the output and the releasing synthesizer. Lines form a hash chain: each carries the HMAC-SHA256 of
the line before (``prev``) and its own (``mac``), keyed by this user's secret key, and a head file
beside the ledger holds the last line's number and MAC. Every read verifies the whole chain: an
edited, removed, reordered or relabelled line, a negative or non-numeric spend, an unknown
guarantee, a missing field or a ledger emptied or cut short stops every later release with a
one-line :class:`LedgerError` naming the line and the fix. (Whoever can read the secret key can
forge a chain; it is written owner-only. A ledger deleted together with its head file cannot be
told from a new one: back the folder up.)

:meth:`Ledger.total` is the sequential-composition spend of the strict-DP parts of every release
under the ledger's relation. aDP draws hold for the confidential data set at hand only; they are
listed apart (:meth:`Ledger.adp_records`) and never summed into the DP total. Appends hold an
exclusive ``fcntl.flock`` on the ledger, so a budget check and its append happen under one lock and
processes releasing at once are serialised.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import hmac
import json
import math
import os
import secrets
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from .paths import dpsynth_home
from .privacy import GUARANTEES, check_neighbours
from .validation import DataError

__all__ = ["Ledger", "BudgetExceeded", "LedgerError", "LEDGER_FIELDS", "dataset_id", "secret_key", "ledger_folder"]

#: Fields of an ``open`` line and of a ``release`` line.
OPEN_FIELDS = ("seq", "kind", "time", "dataset", "relation", "prev", "mac")
LEDGER_FIELDS = ("seq", "kind", "time", "dataset", "relation", "mechanism", "name", "guarantee", "eps", "eps_size",
                 "spend", "adp_eps", "draw", "rows", "output", "synthesizer", "overrides", "prev", "mac")
_NUMERIC = ("eps", "eps_size", "spend", "adp_eps")
_GENESIS = "0" * 64


class BudgetExceeded(DataError):
    """A release would bring the strict-DP spend above the budget; nothing was written."""


class LedgerError(DataError):
    """The ledger does not verify (edited, cut short, or corrupted): no release can be booked."""


def secret_key() -> bytes:
    """This user's secret key (32 random bytes in ``<dpsynth home>/secret.key``, owner-only), created on first use."""
    path = dpsynth_home() / "secret.key"
    if not path.exists():
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(secrets.token_bytes(32))
    return path.read_bytes()


def _mac(key: bytes, record: Mapping) -> str:
    body = {k: v for k, v in record.items() if k != "mac"}
    blob = json.dumps(body, sort_keys=True, separators=(",", ":"), allow_nan=True).encode()
    return hmac.new(key, blob, hashlib.sha256).hexdigest()


def dataset_id(frame, columns, relation: str) -> str:
    """The id of a confidential data set under a neighbour relation: an HMAC of its values under this user's key.

    Parameters
    ----------
    frame : pandas.DataFrame
        The confidential data (target and covariates).
    columns : sequence of str
        The columns that make the data set (in order).
    relation : {"remove", "replace"}
        The neighbour relation its ledger counts under.
    """
    check_neighbours(relation)
    h = hmac.new(secret_key(), b"dpsynth-dataset\0" + relation.encode() + b"\0", hashlib.sha256)
    for c in columns:
        h.update(str(c).encode() + b"\0")
        s = frame[c]
        if s.dtype.kind in "iufb":
            h.update(np.ascontiguousarray(s.to_numpy(dtype=float)).tobytes())
        else:
            h.update("\x1f".join(map(str, s.tolist())).encode())
        h.update(b"\0")
    return h.hexdigest()[:32]


def ledger_folder() -> Path:
    """The folder of every ledger of this user (``<dpsynth home>/ledgers``)."""
    folder = dpsynth_home() / "ledgers"
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    return folder


def _fail(path: Path, line: int, what: str) -> LedgerError:
    return LedgerError(f"ledger {path} line {line}: {what}. The ledger was edited, cut short or corrupted: restore it "
                       f"(and its .head file) from a backup; no release can be booked until its chain verifies.")


def _release_problem(rec: Mapping) -> str | None:
    """What is wrong with a release line's values (None: nothing)."""
    if rec["guarantee"] not in GUARANTEES:
        return f"has unknown guarantee {rec['guarantee']!r} (one of {GUARANTEES})"
    for f in _NUMERIC:
        v = rec[f]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
            return f"has {f} = {v!r}; it must be a finite number >= 0"
    return None


def _verify(text: str, path: Path, head: Path, key: bytes, dataset: str, relation: str) -> list[dict]:
    out: list[dict] = []
    prev = _GENESIS
    lines = text.splitlines()
    for i, line in enumerate(lines, 1):
        if not line.strip():
            raise _fail(path, i, "is empty")
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as e:
            raise _fail(path, i, f"is not a JSON record ({e.msg})") from None
        if not isinstance(rec, dict):
            raise _fail(path, i, "is not a JSON object")
        kind = rec.get("kind")
        fields = OPEN_FIELDS if i == 1 else LEDGER_FIELDS
        if (i == 1) != (kind == "open") or kind not in ("open", "release"):
            raise _fail(path, i, f"has kind {kind!r}; the first line opens the ledger, every other line is a release")
        missing = [f for f in fields if f not in rec]
        if missing:
            raise _fail(path, i, f"lacks field(s) {missing}")
        if rec["seq"] != i - 1:
            raise _fail(path, i, f"has number {rec['seq']!r}, expected {i - 1} (a line was removed or reordered)")
        if rec["prev"] != prev:
            raise _fail(path, i, "does not chain to the line before it (a line was removed, inserted or edited)")
        if not hmac.compare_digest(str(rec["mac"]), _mac(key, rec)):
            raise _fail(path, i, "does not match its MAC (the line was edited)")
        if rec["dataset"] != dataset or rec["relation"] != relation:
            raise _fail(path, i, f"belongs to data set {rec['dataset']!r} / {rec['relation']!r}, not this ledger's")
        problem = _release_problem(rec) if kind == "release" else None
        if problem:
            raise _fail(path, i, problem)
        prev = rec["mac"]
        out.append(rec)
    if head.exists():
        try:
            seq, mac = json.loads(head.read_text())["last"]
        except (ValueError, KeyError, TypeError):
            raise _fail(path, len(lines), f"has an unreadable head file {head.name}") from None
        if not out:
            raise _fail(path, 1, f"is missing: the ledger is empty or deleted, but its head file {head.name} records "
                        f"{seq + 1} line(s)")
        if seq != len(out) - 1 or mac != prev:
            raise _fail(path, len(lines), f"is the last line, but the head file {head.name} records line {seq + 1} "
                        f"(the ledger was emptied, cut short or replaced)")
    elif out:
        raise _fail(path, len(lines), f"has no head file {head.name} beside it (it was removed)")
    return out


def _total(records: list[dict]) -> float:
    return float(sum(r["spend"] for r in records if r["kind"] == "release"))


class _Locked:
    """The ledger while its lock is held (from :meth:`Ledger.locked`)."""

    def __init__(self, ledger: Ledger, fh) -> None:
        self._ledger, self._fh = ledger, fh

    def records(self) -> list[dict]:
        """Every line, verified (:class:`LedgerError` if the chain does not verify)."""
        self._fh.seek(0)
        return self._ledger._check(self._fh.read())

    def total(self) -> float:
        """The strict-DP spend so far."""
        return _total(self.records())

    def check_budget(self, guarantee: str, new_spend: float, budget: float | None) -> None:
        """Raise :class:`BudgetExceeded` if a release adding ``new_spend`` of strict DP would exceed ``budget``."""
        if budget is None:
            return
        if isinstance(budget, bool) or not isinstance(budget, (int, float)) or not budget >= 0 or math.isnan(budget):
            raise DataError(f"`budget` must be a number >= 0 (total strict-DP eps); got {budget!r}.")
        if guarantee != "DP":
            raise BudgetExceeded(
                f"a budget counts strict-DP releases only, and this mechanism's guarantee is {guarantee!r}: its eps "
                f"holds for this data set alone and cannot be charged to a budget. Release without `budget`, or use "
                f"a strictly DP mechanism (e.g. censor_uw, ph).")
        spent = self.total()
        if spent + new_spend > budget + 1e-12:
            raise BudgetExceeded(
                f"release refused: this data set's ledger has spent eps = {spent:.4g} on strict-DP releases; this "
                f"one adds {new_spend:.4g}, total {spent + new_spend:.4g} > budget {budget:.4g}. Nothing was "
                f"written.")

    def append(self, **record) -> dict:
        """Append one release line (chained, MAC'ed) and move the head."""
        recs = self.records()
        led = self._ledger
        key = secret_key()
        now = datetime.now(UTC).isoformat(timespec="microseconds")
        if not recs:  # the first release opens the ledger
            recs = [self._write(key, {"seq": 0, "kind": "open", "time": now, "dataset": led.dataset,
                                      "relation": led.relation, "prev": _GENESIS})]
        rec = {"seq": len(recs), "kind": "release", "time": now, "dataset": led.dataset, "relation": led.relation,
               **record, "prev": recs[-1]["mac"]}
        missing = [f for f in LEDGER_FIELDS if f not in rec and f != "mac"]
        if missing:
            raise DataError(f"ledger record lacks field(s) {missing}.")
        problem = _release_problem(rec)
        if problem:
            raise DataError(f"a release that {problem} cannot be booked.")
        return self._write(key, {f: rec[f] for f in LEDGER_FIELDS if f != "mac"})

    def _write(self, key: bytes, rec: dict) -> dict:
        rec = {**rec, "mac": _mac(key, rec)}
        self._fh.seek(0, os.SEEK_END)
        self._fh.write(json.dumps(rec, allow_nan=True) + "\n")
        self._fh.flush()
        os.fsync(self._fh.fileno())
        head = self._ledger.head_path
        tmp = head.with_suffix(".head.tmp")
        tmp.write_text(json.dumps({"last": [rec["seq"], rec["mac"]]}))
        os.replace(tmp, head)
        return rec


class Ledger:
    """The release ledger of one confidential data set under one neighbour relation.

    Parameters
    ----------
    dataset : str
        The data set id (:func:`dataset_id`, stored in every saved synthesizer of that data).
    relation : {"remove", "replace"}
        The neighbour relation its epsilons are stated under.
    folder : path-like, optional
        Where the ledgers live (default :func:`ledger_folder`).
    """

    def __init__(self, dataset: str, relation: str, *, folder: str | os.PathLike | None = None) -> None:
        if not isinstance(dataset, str) or not dataset.isalnum():
            raise DataError(f"`dataset` must be a data set id (letters and digits); got {dataset!r}.")
        self.dataset, self.relation = dataset, check_neighbours(relation)
        base = Path(folder) if folder is not None else ledger_folder()
        self.path = base / f"{dataset}-{relation}.jsonl"
        self.head_path = base / f"{dataset}-{relation}.head"

    def _check(self, text: str) -> list[dict]:
        return _verify(text, self.path, self.head_path, secret_key(), self.dataset, self.relation)

    @contextlib.contextmanager
    def locked(self) -> Iterator[_Locked]:
        """Hold the exclusive lock: read (verified), check the budget and append as one step."""
        with open(self.path, "a+") as fh:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
            try:
                yield _Locked(self, fh)
            finally:
                fcntl.flock(fh.fileno(), fcntl.LOCK_UN)

    def records(self) -> list[dict]:
        """Every line, oldest first, verified (an absent ledger has none, unless its head says otherwise)."""
        if not self.path.exists():
            return self._check("")
        with open(self.path) as fh:
            fcntl.flock(fh.fileno(), fcntl.LOCK_SH)
            try:
                return self._check(fh.read())
            finally:
                fcntl.flock(fh.fileno(), fcntl.LOCK_UN)

    def releases(self) -> list[dict]:
        """The release lines."""
        return [r for r in self.records() if r["kind"] == "release"]

    def total(self) -> float:
        """Sequential-composition spend of the strict-DP parts of every release, under the ledger's relation."""
        return _total(self.records())

    def dp_records(self) -> list[dict]:
        """The strictly DP releases."""
        return [r for r in self.releases() if r["guarantee"] == "DP"]

    def adp_records(self) -> list[dict]:
        """The aDP releases: their draw's eps is listed apart, never summed into the DP total."""
        return [r for r in self.releases() if r["guarantee"] == "aDP"]

    def summary(self) -> str:
        """A few lines: the DP total, and the aDP and non-private releases listed apart."""
        recs = self.releases()
        dp = self.dp_records()
        phrase = {"remove": "one record removed", "replace": "one record replaced"}[self.relation]
        lines = [f"{len(recs)} release(s) of data set {self.dataset} ({self.path})",
                 f"strict DP: total eps = {self.total():.4g} with {phrase}, sequential composition "
                 f"({len(dp)} strictly DP release(s); released sizes included)"]
        for r in self.adp_records():
            lines.append(f"aDP (not summed; holds for this data set only): {r['name']} eps = {r['adp_eps']:.4g}, "
                         f"draw {r['draw']}, {r['output']}")
        for r in recs:
            if r["guarantee"] == "none":
                lines.append(f"not private: {r['name']}, {r['output']}")
            if r["overrides"]:
                lines.append(f"released with override(s) {', '.join(r['overrides'])}: {r['name']}, {r['output']}")
        return "\n".join(lines)
