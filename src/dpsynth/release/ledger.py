"""The release ledger: one per confidential data set, a keyed hash chain with an authenticated head.

Where a release is booked does not depend on a file name. A saved synthesizer carries the *data
set id* of the confidential data it was fitted on (:func:`dataset_id`: an HMAC of the data under
this home's secret key, :mod:`dpsynth.release.home`, so the id reveals nothing about the data), and every
synthesizer of the same data set, copies, renamed files and the parts of a whole table included,
books into the same ledger, ``<dpsynth home>/ledgers/<id>.jsonl``.

What counts as the same data set: the same records over the same columns, whatever the order of
the rows or of the columns, the columns' names, and the encoding of the values (integers or
floats, float32 or float64, CSV or Parquet, strings or categories). Numbers are compared as
float32 values, so a round trip through float32 or a change in the last bits of a float64 keeps
the id; a record added, removed or changed beyond that gives another data set.

A ledger counts under **one** neighbour relation, fixed by its first release (its ``open`` line):
a release under the other relation is refused, so one data set never has two budgets.

Each line is one JSON record: an ``open`` line first, then one ``release`` line per released file
with the mechanism, its guarantee, what it charged (``charges``: one entry per share of the budget
that this release spent for the first time: a released size, a reference, a posterior draw, each
with its eps), the strict-DP eps the release added (``spend``, their sum), the posterior draw(s),
the output and the releasing synthesizer. ``spend`` is the sum of the strict-DP charges; the
charges of an aDP part are recorded (its draw is then not charged again) but never summed. A
``merge`` line says that the ledger of another copy of the home, which had forked from this one,
was merged here (:func:`dpsynth.release.home.import_home`): the other copy's releases after the fork follow
it, chained anew, and count like every other release. Lines form a hash chain: each carries the
HMAC-SHA256 of the line before (``prev``) and its own (``mac``), keyed by the key the ledger was
opened under (its ``open`` line names it; the home must hold it).

Three records guard a ledger. The chain itself; the home's head file, ``ledgers/HEADS.json``, with
every ledger's last line number and MAC under a MAC of its own, so a ledger cut short (its head
rewritten to match, or not), emptied or deleted, or a head file edited or removed, stops every later
release of it; and the home's **high-water record**, ``HIGHWATER.json`` in the home's root, outside
the ledgers folder, with every ledger's last line number and strict-DP total under a MAC, updated
under the same lock as every append. A ledger (with its head file or not) older than that record,
restored from an earlier copy or cut, is refused with a one-line :class:`LedgerError` that says so:
the total spent on a data set only goes up. Whoever holds the key can forge a chain, and restoring
an old copy of the **whole** home (keys, record and all) rolls it back undetectably: the threat model
of :mod:`dpsynth.release.home`.

:meth:`Ledger.total` is the sequential-composition spend of the strict-DP releases, summed over the
ledgers of every id the data set has in this home (its ids under the keys of homes moved here, when
a fit linked them: :func:`link_datasets`). aDP draws hold for the confidential data set at hand
only; they are listed apart (:meth:`Ledger.adp_records`) and never summed into the DP total.
Appends hold an exclusive ``fcntl.flock`` on the home's lock file, so a budget check and its append
happen under one lock and processes releasing at once are serialised.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import math
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from ..paths import HOME_ENV
from ..privacy import GUARANTEES, check_neighbours, neighbours_phrase
from ..validation import DataError
from .home import (
    HEADS_FILE,
    RECORD_FILE,
    RECORD_MARK,
    check_open,
    has_key,
    key_id,
    keyring,
    ledger_folder,
    mac,
    secret_key,
    write_heads,
    write_private,
    write_record,
)
from .home import canon as _canon

__all__ = ["Ledger", "BudgetExceeded", "LedgerError", "LEDGER_FIELDS", "dataset_id", "dataset_ids", "ledger_folder",
           "HEADS_FILE", "RECORD_FILE", "RelationMismatch", "link_datasets", "home_lock", "import_home"]

#: Fields of an ``open`` line, of a ``release`` line and of a ``merge`` line.
OPEN_FIELDS = ("seq", "kind", "time", "dataset", "relation", "key_id", "prev", "mac")
LEDGER_FIELDS = ("seq", "kind", "time", "dataset", "mechanism", "name", "guarantee", "eps", "charges", "spend",
                 "adp_eps", "draw", "rows", "output", "synthesizer", "overrides", "prev", "mac")
MERGE_FIELDS = ("seq", "kind", "time", "dataset", "source", "fork_at", "lines", "prev", "mac")
_NUMERIC = ("eps", "spend", "adp_eps")
_GENESIS = "0" * 64
_LOCK_FILE = "HEADS.lock"


class BudgetExceeded(DataError):
    """A release would bring the strict-DP spend above the budget; nothing was written."""


class LedgerError(DataError):
    """The ledger does not verify (edited, cut short, older than the home's record, or corrupted): no release can be
    booked."""


class RelationMismatch(DataError):
    """A release under another neighbour relation than the one its data set's ledger counts under."""


def _line_mac(record: Mapping, key: bytes) -> str:
    return mac("dpsynth-ledger-line", _canon({k: v for k, v in record.items() if k != "mac"}), key=key)


def _check_id(dataset, name: str = "dataset") -> str:
    if not isinstance(dataset, str) or not dataset.isalnum():
        raise DataError(f"`{name}` must be a data set id (letters and digits); got {dataset!r}.")
    return dataset


# ------------------------------------------------------------------------------------------- data set ids


def _column_values(s) -> np.ndarray:
    """A column's values in a canonical encoding: numbers as float32, anything else as text."""
    if s.dtype.kind in "iufb":
        return s.to_numpy(dtype=float).astype(np.float32).astype(np.float64)
    return s.to_numpy(dtype=object).astype(str).astype(object)


def _dataset_blob(frame, columns) -> bytes:
    import pandas as pd

    cols = list(columns)
    if len(set(cols)) != len(cols):
        raise DataError(f"the data set's columns are listed twice: {cols}.")
    values = [_column_values(frame[c]) for c in cols]
    # a column's place is set by its content (its sorted values), not by its name or position
    keys = [int(pd.util.hash_array(np.sort(v.astype(str) if v.dtype == object else v)).sum(dtype=np.uint64))
            for v in values]
    order = sorted(range(len(cols)), key=lambda j: keys[j])
    canon = pd.DataFrame({f"c{i}": values[j] for i, j in enumerate(order)})
    rows = np.sort(pd.util.hash_pandas_object(canon, index=False).to_numpy(dtype=np.uint64))
    return np.array([len(cols), len(rows)], dtype=np.uint64).tobytes() + rows.tobytes()


def dataset_id(frame, columns) -> str:
    """The id of a confidential data set: an HMAC of its records under this home's primary key.

    The id is the same for the same records in any row order, any column order or names, and any
    lossless encoding of the values (numbers compared as float32; categories as their labels).

    Parameters
    ----------
    frame : pandas.DataFrame
        The confidential data (targets and covariates).
    columns : sequence of str
        The columns that make the data set.
    """
    return mac("dpsynth-dataset", _dataset_blob(frame, columns))[:32]


def dataset_ids(frame, columns) -> dict[str, str]:
    """The data set's id under every key this home holds, ``{key id: data set id}``, the primary key's first.

    As :func:`dataset_id`; a home that holds the keys of homes moved here (:func:`dpsynth.release.home.import_home`)
    names the same data under each of them, and a fit records them as one data set (:func:`link_datasets`).
    """
    blob = _dataset_blob(frame, columns)
    return {kid: mac("dpsynth-dataset", blob, key=k)[:32] for kid, k in keyring().items()}


# ------------------------------------------------------------------------------------------- checks of a line


def _fail(path: Path, line: int, what: str) -> LedgerError:
    return LedgerError(f"ledger {path} line {line}: {what}. The ledger was edited, cut short or corrupted, so what was "
                       f"spent on this data set cannot be counted: no release of it is booked until its chain "
                       f"verifies (dpsynth does not repair a ledger: a repaired one could count less than was spent).")


def _older(path: Path, n: int, total: float, high: Sequence, record: Path | None) -> LedgerError:
    where = "this home's own record" + (f" ({record})" if record is not None else "")
    return LedgerError(
        f"ledger {path} holds {n} line(s) (strict-DP total eps = {total:.4g}), but {where} says it reached line "
        f"{int(high[0]) + 1} (total eps = {float(high[1]):.4g}): the ledger was replaced by an older copy (with its "
        f"head file, or not), or cut. What it lost was spent all the same, so no release of this data set is booked "
        f"until the ledger that reaches line {int(high[0]) + 1} is in place; an older copy is never accepted.")


def _release_problem(rec: Mapping) -> str | None:
    """What is wrong with a release line's values (None: nothing)."""
    if rec["guarantee"] not in GUARANTEES:
        return f"has unknown guarantee {rec['guarantee']!r} (one of {GUARANTEES})"
    for f in _NUMERIC:
        v = rec[f]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
            return f"has {f} = {v!r}; it must be a finite number >= 0"
    charges = rec["charges"]
    if not isinstance(charges, list) or not all(
            isinstance(c, list) and len(c) == 4 and isinstance(c[0], str) and isinstance(c[2], (int, float))
            and not isinstance(c[2], bool) and math.isfinite(c[2]) and c[2] >= 0 and c[3] in GUARANTEES
            for c in charges):
        return "has malformed charges (each must be [key, what, eps >= 0, guarantee])"
    dp = sum(c[2] for c in charges if c[3] == "DP")
    if not math.isclose(rec["spend"], dp, rel_tol=1e-9, abs_tol=1e-12):
        return f"has spend {rec['spend']!r}, which is not the sum of its strict-DP charges ({dp!r})"
    return None


# ------------------------------------------------------------------------------------------- heads and record


class _Heads:
    """A home's authenticated head file: ``{dataset: [seq, mac]}`` under a MAC of its own (``key``: the home's)."""

    def __init__(self, folder: Path, *, required: bool = False, key: bytes | None = None) -> None:
        self.path = folder / HEADS_FILE
        #: The home's own head file is written with its key (:func:`init_heads`): missing once the key exists, it
        #: was removed.
        self.required = required
        self.key = key

    def read(self) -> dict:
        return self.read_doc()[0]

    def read_doc(self) -> tuple[dict, bool]:
        """The heads, and whether the home keeps a high-water record (the mark is under the head file's MAC)."""
        if not self.path.exists():
            if (self.required and has_key()) or any(self.path.parent.glob("*.jsonl")):
                raise LedgerError(f"the ledgers' head file {self.path} is missing: it was removed (with the ledgers, "
                                  f"or not). It is what vouches for the ledgers, so no release is booked from this "
                                  f"home, and dpsynth does not write a new one (it would vouch for ledgers it never "
                                  f"saw).")
            return {}, False
        try:
            doc = json.loads(self.path.read_text())
            heads, tag = doc["heads"], doc["mac"]
        except (ValueError, KeyError, TypeError, AttributeError):
            raise LedgerError(f"the ledgers' head file {self.path} is unreadable (it was edited or corrupted): no "
                              f"release is booked from this home until it verifies.") from None
        if not isinstance(heads, dict) or tag != mac("dpsynth-ledger-heads", _canon(heads), key=self.key):
            raise LedgerError(f"the ledgers' head file {self.path} does not match its MAC (it was edited or "
                              f"rewritten): no release is booked from this home until it verifies.")
        flagged = heads.pop(RECORD_MARK, None) is True
        return heads, flagged

    def write(self, heads: dict) -> None:
        write_heads(self.path, heads, key=self.key)


def _empty_record() -> dict:
    return {"ledgers": {}, "links": []}


class _Record:
    """A home's high-water record, ``{"ledgers": {dataset: [seq, total]}, "links": [[id, ...], ...]}``, under a MAC.

    It lives in the home's root, outside the ledgers folder: a ledgers folder put back from an
    earlier copy does not bring an earlier record with it.
    """

    def __init__(self, path: Path, *, key: bytes | None = None) -> None:
        self.path = path
        self.key = key

    def read(self, *, required: bool) -> dict | None:
        """The record (None if there is none and none is required: a home from before the record, or a new folder)."""
        if not self.path.exists():
            if required:
                raise LedgerError(f"this home's record {self.path} is missing: it was removed. It is what tells an "
                                  f"older ledger from the current one, so no release is booked from this home, and "
                                  f"dpsynth does not write a new one (it would accept any older ledger).")
            return None
        try:
            doc = json.loads(self.path.read_text())
            record, tag = doc["record"], doc["mac"]
            ok = isinstance(record["ledgers"], dict) and isinstance(record["links"], list)
        except (ValueError, KeyError, TypeError):
            ok = False
        if not ok or tag != mac("dpsynth-home-record", _canon(record), key=self.key):
            raise LedgerError(f"this home's record {self.path} does not match its MAC (it was edited or replaced): no "
                              f"release is booked from this home until it verifies.")
        return record

    def write(self, record: dict) -> None:
        write_record(self.path, record, key=self.key)


def _record_path(folder: Path) -> Path:
    """Where the high-water record of a ledgers folder lives: beside it, in the home's root."""
    return folder.parent / RECORD_FILE


def _verify(text: str, path: Path, head, dataset: str, keys: Mapping[str, bytes], high=None,
            record: Path | None = None) -> list[dict]:
    """A ledger's lines, verified: its chain under its key, its head, and the home's high-water record ``high``."""
    out: list[dict] = []
    prev = _GENESIS
    key = None
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
        if (i == 1) != (kind == "open") or kind not in ("open", "release", "merge"):
            raise _fail(path, i, f"has kind {kind!r}; the first line opens the ledger, every other line is a release "
                        f"or a merge")
        fields = OPEN_FIELDS if kind == "open" else MERGE_FIELDS if kind == "merge" else LEDGER_FIELDS
        missing = [f for f in fields if f not in rec]
        if missing:
            raise _fail(path, i, f"lacks field(s) {missing}")
        if i == 1:
            key = keys.get(rec["key_id"]) if isinstance(rec["key_id"], str) else None
            if key is None:
                raise LedgerError(f"ledger {path} was opened under dpsynth key {rec['key_id']!r}, which this home does "
                                  f"not hold: move the home that holds it here (`dpsynth home import OLD_HOME`), or "
                                  f"release from that home ({HOME_ENV}=...).")
        if rec["seq"] != i - 1:
            raise _fail(path, i, f"has number {rec['seq']!r}, expected {i - 1} (a line was removed or reordered)")
        if rec["prev"] != prev:
            raise _fail(path, i, "does not chain to the line before it (a line was removed, inserted or edited)")
        if not isinstance(rec["mac"], str) or rec["mac"] != _line_mac(rec, key):
            raise _fail(path, i, "does not match its MAC (the line was edited)")
        if rec["dataset"] != dataset:
            raise _fail(path, i, f"belongs to data set {rec['dataset']!r}, not this ledger's")
        problem = _release_problem(rec) if kind == "release" else None
        if problem:
            raise _fail(path, i, problem)
        prev = rec["mac"]
        out.append(rec)
    if head is None and out:
        raise _fail(path, len(lines), f"is the last line, but {HEADS_FILE} records no line of this ledger (the "
                    f"head file was replaced)")
    if head is not None:
        seq, last = head
        if not out:
            raise _fail(path, 1, f"is missing: the ledger is empty or deleted, but {HEADS_FILE} records {seq + 1} "
                        f"line(s)")
        if seq != len(out) - 1 or last != prev:
            if high is not None and seq < high[0] <= len(out) - 1:
                raise LedgerError(
                    f"the head file {path.parent / HEADS_FILE} records line {seq + 1} of ledger {path}, but this "
                    f"home's own record says the ledger reached line {int(high[0]) + 1}: the head file was replaced "
                    f"by an older copy. No release is booked from this home until the head file dpsynth wrote last "
                    f"is in place; an older copy is never accepted.")
            raise _fail(path, len(lines), f"is the last line, but {HEADS_FILE} records line {seq + 1} (the ledger "
                        f"was emptied, cut short or replaced)")
    if high is not None:
        total = _total(out)
        if len(out) - 1 < high[0] or total < float(high[1]) * (1 - 1e-9) - 1e-12:
            raise _older(path, len(out), total, high, record)
    return out


def _total(records: list[dict]) -> float:
    return float(sum(r["spend"] for r in records if r["kind"] == "release" and r["guarantee"] == "DP"))


def _merge_links(groups: Iterable[Iterable[str]], more: Iterable[Iterable[str]] = ()) -> list[list[str]]:
    """Groups of ids, those sharing an id joined: one group per data set."""
    out: list[set] = []
    for g in [*groups, *more]:
        g = set(g)
        joined = [h for h in out if h & g]
        for h in joined:
            g |= h
            out.remove(h)
        out.append(g)
    return sorted(sorted(g) for g in out if len(g) > 1)


def _group(ids: Sequence[str], links: Iterable[Iterable[str]]) -> list[str]:
    """``ids`` and every id linked to one of them, ``ids[0]`` first."""
    groups = _merge_links(links, [ids])
    linked = next((g for g in groups if ids[0] in g), [ids[0]])
    return [ids[0], *[d for d in linked if d != ids[0]]]


@contextlib.contextmanager
def home_lock(folder: Path, *, create: bool = True) -> Iterator[None]:
    """Hold a home's exclusive ledger lock (``<folder>/HEADS.lock``, owner-only); without the folder and ``create``
    false, nothing to lock."""
    folder = Path(folder)
    if not folder.is_dir():
        if not create:
            yield
            return
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(folder / _LOCK_FILE, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _bootstrap(folder: Path, heads: dict) -> dict:
    """The high-water record of a home from before it kept one: from its ledgers as they verify now."""
    record = _empty_record()
    for d in heads:
        path = folder / f"{d}.jsonl"
        try:
            recs = _verify(path.read_text() if path.exists() else "", path, heads[d], d, keyring())
        except LedgerError:
            continue  # it stops its own releases; the record starts at its next append
        if recs:
            record["ledgers"][d] = [recs[-1]["seq"], _total(recs)]
    return record


def _read_record(folder: Path, heads_doc: tuple[dict, bool], rec: _Record) -> dict:
    heads, flagged = heads_doc
    record = rec.read(required=flagged)
    return record if record is not None else _bootstrap(folder, heads)


def link_datasets(ids: Sequence[str]) -> None:
    """Record in this home that ``ids`` name one data set (its ids under the keys this home holds).

    A fit calls it, the data at hand (:func:`dataset_ids`); from then on every release of any of
    these ids sums the ledgers of all of them. Links are only ever added.
    """
    ids = sorted({_check_id(d, "ids") for d in ids})
    if len(ids) < 2:
        return
    folder = ledger_folder()
    with home_lock(folder):
        check_open("fit")
        heads_obj, rec = _Heads(folder, required=True), _Record(_record_path(folder))
        doc = heads_obj.read_doc()
        record = _read_record(folder, doc, rec)
        links = _merge_links(record["links"], [ids])
        if links != record["links"] or not doc[1]:
            rec.write({**record, "links": links})
            if not doc[1]:
                heads_obj.write(doc[0])  # marks the record as kept from now on


# ------------------------------------------------------------------------------------------- the ledger


class _Locked:
    """The ledger while the home's lock is held (from :meth:`Ledger.locked`)."""

    def __init__(self, ledger: Ledger) -> None:
        self._ledger = ledger

    def records(self) -> list[dict]:
        """Every line of this id's ledger, verified (:class:`LedgerError` if the chain does not verify)."""
        return self._ledger.records()

    def relation(self) -> str | None:
        """The relation the data set's ledgers count under (None before its first release)."""
        return self._ledger.relation

    def charged(self) -> dict[str, float]:
        """Every share booked so far in the data set's ledgers, strict-DP or not: ``{charge key: eps}``."""
        out: dict[str, float] = {}
        for recs in self._ledger.ledgers().values():
            for r in recs:
                if r["kind"] == "release":
                    out.update({c[0]: float(c[2]) for c in r["charges"]})
        return out

    def total(self) -> float:
        """The strict-DP spend so far, summed over the data set's ledgers."""
        return self._ledger.total()

    def check_relation(self, relation: str) -> None:
        """Refuse a release under another relation than the data set's ledgers'."""
        for recs in self._ledger.ledgers().values():
            have = recs[0]["relation"] if recs else None
            if have is not None and have != relation:
                raise RelationMismatch(
                    f"this data set's ledger counts under {neighbours_phrase(have)}, and this synthesizer states its "
                    f"eps with {neighbours_phrase(relation)}: one data set has one budget under one relation. Fit "
                    f"with neighbours={have!r} (on the command line --neighbours {have}). Nothing was written.")

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
                f"a strictly DP mechanism (e.g. censor_ref, the default).")
        spent = self.total()
        if spent + new_spend > budget * (1 + 1e-9) + 1e-12:
            raise BudgetExceeded(
                f"release refused: this data set's ledger has spent eps = {spent:.4g} on strict-DP releases; this "
                f"one adds {new_spend:.4g}, total {spent + new_spend:.4g} > budget {budget:.4g}. Nothing was "
                f"written.")

    def append(self, *, relation: str, **record) -> dict:
        """Append one release line (chained, MAC'ed) and move the head and the home's record."""
        led = self._ledger
        recs = self.records()
        self.check_relation(relation)
        now = datetime.now(UTC).isoformat(timespec="microseconds")
        if not recs:  # the first release opens the ledger
            check_open("ledger append")
            recs = [self._write({"seq": 0, "kind": "open", "time": now, "dataset": led.dataset,
                                 "relation": check_neighbours(relation), "key_id": key_id(), "prev": _GENESIS}, [])]
        rec = {"seq": len(recs), "kind": "release", "time": now, "dataset": led.dataset, **record,
               "prev": recs[-1]["mac"]}
        missing = [f for f in LEDGER_FIELDS if f not in rec and f != "mac"]
        if missing:
            raise DataError(f"ledger record lacks field(s) {missing}.")
        rec = {f: rec[f] for f in LEDGER_FIELDS if f != "mac"}
        problem = _release_problem({**rec, "charges": [list(c) for c in rec["charges"]]})
        if problem:
            raise DataError(f"a release that {problem} cannot be booked.")
        return self._write(json.loads(json.dumps(rec)), recs)

    def _write(self, rec: dict, recs: list[dict]) -> dict:
        led = self._ledger
        check_open("ledger append")
        key = keyring()[recs[0]["key_id"]] if recs else secret_key()
        rec = {**rec, "mac": _line_mac(rec, key)}
        doc = led._heads.read_doc()
        record = _read_record(led.folder, doc, led._record)
        fd = os.open(led.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        with os.fdopen(fd, "a") as fh:
            os.fchmod(fh.fileno(), 0o600)
            fh.write(json.dumps(rec, allow_nan=True) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        heads = doc[0]
        heads[led.dataset] = [rec["seq"], rec["mac"]]
        led._heads.write(heads)
        record["ledgers"][led.dataset] = [rec["seq"], _total([*recs, rec])]
        led._record.write(record)
        return rec


class Ledger:
    """The release ledger of one confidential data set.

    Parameters
    ----------
    dataset : str
        The data set id (:func:`dataset_id`, stored in every saved synthesizer of that data).
    folder : path-like, optional
        Where the ledgers live (default :func:`ledger_folder`); the high-water record lives beside it
        (``<folder>/../HIGHWATER.json``: the home's root).
    linked : sequence of str, optional
        The same data set's ids under the other keys of this home (a synthesizer records them at
        fit time): their ledgers count in :meth:`total`, as do those a fit linked in the home's record.
    """

    def __init__(self, dataset: str, *, folder: str | os.PathLike | None = None,
                 linked: Sequence[str] = ()) -> None:
        self.dataset = _check_id(dataset)
        base = Path(folder) if folder is not None else ledger_folder()
        base.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.folder = base
        self.path = base / f"{dataset}.jsonl"
        self._heads = _Heads(base, required=folder is None)
        self._record = _Record(_record_path(base))
        self.linked = tuple(d for d in (_check_id(x, "linked") for x in linked) if d != dataset)

    @contextlib.contextmanager
    def locked(self) -> Iterator[_Locked]:
        """Hold the home's exclusive ledger lock: read (verified), check the budget and append as one step."""
        with home_lock(self.folder):
            yield _Locked(self)

    def _state(self) -> tuple[dict, dict]:
        heads, flagged = self._heads.read_doc()
        record = self._record.read(required=flagged)
        return heads, record if record is not None else _empty_record()

    def _read(self, dataset: str, heads: dict, record: dict) -> list[dict]:
        path = self.folder / f"{dataset}.jsonl"
        text = path.read_text() if path.exists() else ""
        return _verify(text, path, heads.get(dataset), dataset, keyring() if text else {},
                       record["ledgers"].get(dataset), self._record.path)

    def records(self) -> list[dict]:
        """Every line of this id's ledger, oldest first, verified against its chain, its head and the home's record."""
        heads, record = self._state()
        return self._read(self.dataset, heads, record)

    def group(self) -> list[str]:
        """This data set's ids whose ledgers count together: this one first, then those linked to it."""
        return _group([self.dataset, *self.linked], self._state()[1]["links"])

    def ledgers(self) -> dict[str, list[dict]]:
        """Every ledger of this data set (:meth:`group`), verified: ``{id: lines}``."""
        heads, record = self._state()
        return {d: self._read(d, heads, record) for d in _group([self.dataset, *self.linked], record["links"])}

    @property
    def relation(self) -> str | None:
        """The neighbour relation the data set's ledgers count under (None before its first release)."""
        return next((recs[0]["relation"] for recs in self.ledgers().values() if recs), None)

    def releases(self) -> list[dict]:
        """The release lines of the data set's ledgers, in the order they were booked."""
        out = [r for recs in self.ledgers().values() for r in recs if r["kind"] == "release"]
        return sorted(out, key=lambda r: r["time"])

    def total(self) -> float:
        """Sequential-composition spend of every strict-DP release, over the data set's ledgers."""
        return float(sum(_total(recs) for recs in self.ledgers().values()))

    def dp_records(self) -> list[dict]:
        """The strictly DP releases."""
        return [r for r in self.releases() if r["guarantee"] == "DP"]

    def adp_records(self) -> list[dict]:
        """The aDP releases: their draw's eps is listed apart, never summed into the DP total."""
        return [r for r in self.releases() if r["guarantee"] == "aDP"]

    def summary(self) -> str:
        """A few lines: the DP total, and the aDP and non-private releases listed apart."""
        books = self.ledgers()
        recs = sorted((r for lines in books.values() for r in lines if r["kind"] == "release"), key=lambda r: r["time"])
        dp = [r for r in recs if r["guarantee"] == "DP"]
        rel = next((lines[0]["relation"] for lines in books.values() if lines), None)
        phrase = neighbours_phrase(rel) if rel else "its relation (none yet)"
        total = sum(_total(lines) for lines in books.values())
        lines = [f"{len(recs)} release(s) of data set {self.dataset} ({self.path})",
                 f"strict DP: total eps = {total:.4g} with {phrase}, sequential composition "
                 f"({len(dp)} strictly DP release(s); references and released sizes included)"]
        others = [d for d in books if d != self.dataset]
        if others:
            lines.append(f"counted with the ledgers of the same data under the other keys of this home: "
                         f"{', '.join(others)}")
        for d, book in books.items():
            for r in book:
                if r["kind"] == "merge":
                    lines.append(f"merged fork: ledger {d} line {r['seq'] + 1}: {r['lines']} line(s) of {r['source']} "
                                 f"after their common line {r['fork_at']}, every release of both kept")
        for r in recs:
            if r["guarantee"] == "aDP":
                lines.append(f"aDP (not summed; holds for this data set only): {r['name']} eps = {r['adp_eps']:.4g}, "
                             f"draw {r['draw']}, {r['output']}")
        for r in recs:
            if r["guarantee"] == "none":
                lines.append(f"not private: {r['name']}, {r['output']}")
            if r["overrides"]:
                lines.append(f"released with override(s) {', '.join(r['overrides'])}: {r['name']}, {r['output']}")
        return "\n".join(lines)


# ------------------------------------------------------------------------------------------- moving a home


def read_home(src: Path, keys: Mapping[str, bytes], primary: bytes) -> tuple[dict[str, list[dict]], list]:
    """Every ledger of the home ``src``, verified under its keys, its head file and its record (its lock held).

    Returns
    -------
    (dict, list)
        ``{data set id: lines}`` and the home's links.
    """
    folder = Path(src) / "ledgers"
    heads, flagged = _Heads(folder, key=primary).read_doc()
    rec = _Record(_record_path(folder), key=primary)
    record = rec.read(required=flagged) or _empty_record()
    ids = set(heads) | set(record["ledgers"])
    if folder.is_dir():
        ids |= {p.stem for p in folder.glob("*.jsonl")}
    out = {}
    for d in sorted(ids):
        _check_id(d, f"a ledger of {src}")
        path = folder / f"{d}.jsonl"
        text = path.read_text() if path.exists() else ""
        lines = _verify(text, path, heads.get(d), d, keys, record["ledgers"].get(d), rec.path)
        if lines:
            out[d] = lines
    return out, record["links"]


def _common(a: list[dict], b: list[dict]) -> int:
    k = 0
    while k < min(len(a), len(b)) and a[k]["mac"] == b[k]["mac"]:
        k += 1
    return k


def merge_into_home(ledgers: Mapping[str, list[dict]], links: list, source: str) -> list[str]:
    """Merge another home's verified ledgers into this home's (this home's lock held, the other home's keys here).

    For each data set: a ledger new here is copied; where one chain extends the other the longer
    is kept; where they forked, this home's lines are kept, then a ``merge`` line, then the other
    home's lines after the fork, chained anew: no release disappears from the total. Every ledger
    here is verified and every merge planned before anything is written.

    Returns
    -------
    list of str
        One line per data set: what was done.
    """
    folder = ledger_folder()
    heads_obj, rec = _Heads(folder, required=True), _Record(_record_path(folder))
    doc = heads_obj.read_doc()
    heads, record = doc[0], _read_record(folder, doc, rec)
    keys = keyring()
    now = datetime.now(UTC).isoformat(timespec="microseconds")
    writes: dict[str, list[dict]] = {}
    report = []
    for d, theirs in ledgers.items():
        path = folder / f"{d}.jsonl"
        ours = _verify(path.read_text() if path.exists() else "", path, heads.get(d), d, keys,
                       record["ledgers"].get(d), rec.path)
        k = _common(ours, theirs)
        if not ours:
            writes[d] = list(theirs)
            report.append(f"data set {d}: copied ({len(theirs) - 1} line(s), total eps = {_total(theirs):.4g})")
        elif k == len(theirs):
            report.append(f"data set {d}: kept (this home's ledger holds every line of it; total eps = "
                          f"{_total(ours):.4g})")
        elif k == len(ours):
            writes[d] = list(theirs)
            report.append(f"data set {d}: extended by {len(theirs) - k} line(s) (total eps {_total(ours):.4g} -> "
                          f"{_total(theirs):.4g})")
        else:
            if ours[0]["relation"] != theirs[0]["relation"]:
                raise DataError(
                    f"data set {d} counts under {neighbours_phrase(ours[0]['relation'])} here and under "
                    f"{neighbours_phrase(theirs[0]['relation'])} in {source}: one data set has one budget under one "
                    f"relation, so the two ledgers cannot be merged. Nothing was written and {source} is not sealed; "
                    f"release that data set from one home only.")
            key = keys[ours[0]["key_id"]]
            new = list(ours)
            tail = theirs[max(k, 1):]
            merge = {"seq": len(new), "kind": "merge", "time": now, "dataset": d, "source": source, "fork_at": k,
                     "lines": len(tail), "prev": new[-1]["mac"]}
            new.append({**merge, "mac": _line_mac(merge, key)})
            for r in tail:
                line = {**{f: v for f, v in r.items() if f != "mac"}, "seq": len(new), "prev": new[-1]["mac"]}
                new.append({**line, "mac": _line_mac(line, key)})
            writes[d] = new
            report.append(f"data set {d}: the two ledgers forked after line {k}; every release of both kept, "
                          f"{len(tail)} line(s) of {source} added after a merge line (total eps {_total(ours):.4g} "
                          f"here, {_total(theirs):.4g} there -> {_total(new):.4g})")
    check_open("import")
    for d, lines in writes.items():
        write_private(folder / f"{d}.jsonl", "".join(json.dumps(r, allow_nan=True) + "\n" for r in lines).encode())
        heads[d] = [lines[-1]["seq"], lines[-1]["mac"]]
        record["ledgers"][d] = [lines[-1]["seq"], _total(lines)]
    record["links"] = _merge_links(record["links"], links)
    heads_obj.write(heads)
    rec.write(record)
    return report


def import_home(source: str | os.PathLike) -> list[str]:
    """Move another home into this one: merge its keys and ledgers here, then seal it (``dpsynth home import``).

    Nothing is moved aside and no total goes down. A home with this home's key (a copy made
    earlier) has its ledgers merged data set by data set: where one chain extends the other the
    longer is kept; where they forked, both homes' releases are kept, the other home's after a
    ``merge`` line (:func:`merge_into_home`). A home with another key joins the keyring (its files
    load and its ledgers count here) and its ledgers are copied as they are. Every ledger of the
    moved home is verified first (under its own keys, head file and record): if one does not
    verify, nothing is written. Then the moved home is sealed (:func:`dpsynth.release.home.check_open`
    refuses any fit, release, save or append there), all under both homes' ledger locks.

    Parameters
    ----------
    source : path-like
        The folder of the home to move here (the one holding its ``secret.key``).

    Returns
    -------
    list of str
        One line per data set merged: copied, kept, extended, or forked and merged.
    """
    from ..paths import dpsynth_home
    from .home import KEY_FILE, adopt_keys, read_key, seal, seal_of

    src = Path(source).expanduser()
    home = dpsynth_home()
    if not (src / KEY_FILE).is_file():
        raise DataError(f"{src} is not a dpsynth home: it has no {KEY_FILE}. Give the folder that holds it.")
    if src.resolve() == home.resolve():
        raise DataError(f"{src} is this home already; give the folder of the home to move here.")
    check_open("import")
    sealed = seal_of(src)
    if sealed is not None:
        raise DataError(f"{src} was moved to {sealed['moved_to']} on {sealed['time']} already (it is sealed): "
                        f"importing it again would make its ledgers live in two homes. Import {sealed['moved_to']} "
                        f"instead.")
    src_keys = keyring(src)
    src_primary = read_key(src / KEY_FILE)
    with home_lock(src / "ledgers", create=False):
        ledgers, links = read_home(src, src_keys, src_primary)  # every ledger verified before anything is written
        with home_lock(home / "ledgers"):
            adopt_keys(src_keys, src_primary)
            lines = merge_into_home(ledgers, links, str(src.resolve()))
        seal(src, src_primary)
    return lines
