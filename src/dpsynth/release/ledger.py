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
charges of an aDP part are recorded (its draw is then not charged again) but never summed. Lines
form a hash chain: each carries the HMAC-SHA256
of the line before (``prev``) and its own (``mac``), keyed by this home's key. One head file per
home, ``ledgers/HEADS.json``, holds every ledger's last line number and MAC under a MAC of its own,
so a ledger cut short (its head rewritten to match, or not), emptied, or deleted stops every later
release with a one-line :class:`LedgerError` naming the line and the fix, and so does a head file
edited or removed. (Whoever holds the key can forge a chain, and restoring an old copy of the whole
home rolls it back: the threat model of :mod:`dpsynth.release.home`.)

:meth:`Ledger.total` is the sequential-composition spend of the strict-DP releases. aDP draws
hold for the confidential data set at hand only; they are listed apart (:meth:`Ledger.adp_records`)
and never summed into the DP total. Appends hold an exclusive ``fcntl.flock`` on the home's head
file, so a budget check and its append happen under one lock and processes releasing at once are
serialised.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import math
import os
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from ..privacy import GUARANTEES, check_neighbours, neighbours_phrase
from ..validation import DataError
from .home import HEADS_FILE, key_id, ledger_folder, mac, write_heads
from .home import canon as _canon

__all__ = ["Ledger", "BudgetExceeded", "LedgerError", "LEDGER_FIELDS", "dataset_id", "ledger_folder",
           "HEADS_FILE", "RelationMismatch"]

#: Fields of an ``open`` line and of a ``release`` line.
OPEN_FIELDS = ("seq", "kind", "time", "dataset", "relation", "key_id", "prev", "mac")
LEDGER_FIELDS = ("seq", "kind", "time", "dataset", "mechanism", "name", "guarantee", "eps", "charges", "spend",
                 "adp_eps", "draw", "rows", "output", "synthesizer", "overrides", "prev", "mac")
_NUMERIC = ("eps", "spend", "adp_eps")
_GENESIS = "0" * 64

class BudgetExceeded(DataError):
    """A release would bring the strict-DP spend above the budget; nothing was written."""


class LedgerError(DataError):
    """The ledger does not verify (edited, cut short, or corrupted): no release can be booked."""


class RelationMismatch(DataError):
    """A release under another neighbour relation than the one its data set's ledger counts under."""




def _line_mac(record: Mapping) -> str:
    return mac("dpsynth-ledger-line", _canon({k: v for k, v in record.items() if k != "mac"}))


def _column_values(s) -> np.ndarray:
    """A column's values in a canonical encoding: numbers as float32, anything else as text."""
    if s.dtype.kind in "iufb":
        return s.to_numpy(dtype=float).astype(np.float32).astype(np.float64)
    return s.to_numpy(dtype=object).astype(str).astype(object)


def dataset_id(frame, columns) -> str:
    """The id of a confidential data set: an HMAC of its records under this home's key.

    The id is the same for the same records in any row order, any column order or names, and any
    lossless encoding of the values (numbers compared as float32; categories as their labels).

    Parameters
    ----------
    frame : pandas.DataFrame
        The confidential data (targets and covariates).
    columns : sequence of str
        The columns that make the data set.
    """
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
    blob = np.array([len(cols), len(rows)], dtype=np.uint64).tobytes() + rows.tobytes()
    return mac("dpsynth-dataset", blob)[:32]


def _fail(path: Path, line: int, what: str) -> LedgerError:
    return LedgerError(f"ledger {path} line {line}: {what}. The ledger was edited, cut short or corrupted: restore it "
                       f"(and {HEADS_FILE}) from a backup; no release can be booked until its chain verifies.")


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


# ------------------------------------------------------------------------------------------- heads


class _Heads:
    """The home's authenticated head file: ``{dataset: [seq, mac]}`` under a MAC of its own."""

    def __init__(self, folder: Path, *, required: bool = False) -> None:
        self.path = folder / HEADS_FILE
        #: The home's own head file is written with its key (:func:`init_heads`): missing, it was removed.
        self.required = required

    def read(self) -> dict:
        if not self.path.exists():
            if self.required or any(self.path.parent.glob("*.jsonl")):
                raise LedgerError(f"the ledgers' head file {self.path} is missing: it was removed (with the ledgers, "
                                  f"or not). Restore the home's ledgers folder from a backup; no release can be "
                                  f"booked until it verifies.")
            return {}
        try:
            doc = json.loads(self.path.read_text())
            heads, tag = doc["heads"], doc["mac"]
        except (ValueError, KeyError, TypeError):
            raise LedgerError(f"the ledgers' head file {self.path} is unreadable: restore it from a backup.") from None
        if not isinstance(heads, dict) or tag != mac("dpsynth-ledger-heads", _canon(heads)):
            raise LedgerError(f"the ledgers' head file {self.path} does not match its MAC (it was edited or "
                              f"rewritten): restore it and the ledgers from a backup.")
        return heads

    def write(self, heads: dict) -> None:
        write_heads(self.path, heads)



def _verify(text: str, path: Path, head, dataset: str) -> list[dict]:
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
        if not isinstance(rec["mac"], str) or rec["mac"] != _line_mac(rec):
            raise _fail(path, i, "does not match its MAC (the line was edited)")
        if rec["dataset"] != dataset:
            raise _fail(path, i, f"belongs to data set {rec['dataset']!r}, not this ledger's")
        problem = _release_problem(rec) if kind == "release" else None
        if problem:
            raise _fail(path, i, problem)
        prev = rec["mac"]
        out.append(rec)
    if head is None:
        if out:
            raise _fail(path, len(lines), f"is the last line, but {HEADS_FILE} records no line of this ledger (the "
                        f"head file was replaced)")
        return out
    seq, last = head
    if not out:
        raise _fail(path, 1, f"is missing: the ledger is empty or deleted, but {HEADS_FILE} records {seq + 1} line(s)")
    if seq != len(out) - 1 or last != prev:
        raise _fail(path, len(lines), f"is the last line, but {HEADS_FILE} records line {seq + 1} (the ledger was "
                    f"emptied, cut short or replaced)")
    return out


def _total(records: list[dict]) -> float:
    return float(sum(r["spend"] for r in records if r["kind"] == "release" and r["guarantee"] == "DP"))


class _Locked:
    """The ledger while the home's head lock is held (from :meth:`Ledger.locked`)."""

    def __init__(self, ledger: Ledger) -> None:
        self._ledger = ledger

    def records(self) -> list[dict]:
        """Every line, verified (:class:`LedgerError` if the chain does not verify)."""
        return self._ledger.records()

    def relation(self) -> str | None:
        """The relation the ledger counts under (None before its first release)."""
        recs = self.records()
        return recs[0]["relation"] if recs else None

    def charged(self) -> dict[str, float]:
        """Every share booked so far, strict-DP or not: ``{charge key: eps}``."""
        out: dict[str, float] = {}
        for r in self.records():
            if r["kind"] == "release":
                out.update({c[0]: float(c[2]) for c in r["charges"]})
        return out

    def total(self) -> float:
        """The strict-DP spend so far."""
        return _total(self.records())

    def check_relation(self, relation: str) -> None:
        """Refuse a release under another relation than the ledger's."""
        have = self.relation()
        if have is not None and have != relation:
            raise RelationMismatch(
                f"this data set's ledger counts under {neighbours_phrase(have)}, and this synthesizer states its eps "
                f"with {neighbours_phrase(relation)}: one data set has one budget under one relation. Fit with "
                f"neighbours={have!r} (on the command line --neighbours {have}). Nothing was written.")

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
        """Append one release line (chained, MAC'ed) and move the head."""
        led = self._ledger
        recs = self.records()
        self.check_relation(relation)
        now = datetime.now(UTC).isoformat(timespec="microseconds")
        if not recs:  # the first release opens the ledger
            recs = [self._write({"seq": 0, "kind": "open", "time": now, "dataset": led.dataset,
                                 "relation": check_neighbours(relation), "key_id": key_id(), "prev": _GENESIS})]
        rec = {"seq": len(recs), "kind": "release", "time": now, "dataset": led.dataset, **record,
               "prev": recs[-1]["mac"]}
        missing = [f for f in LEDGER_FIELDS if f not in rec and f != "mac"]
        if missing:
            raise DataError(f"ledger record lacks field(s) {missing}.")
        rec = {f: rec[f] for f in LEDGER_FIELDS if f != "mac"}
        problem = _release_problem({**rec, "charges": [list(c) for c in rec["charges"]]})
        if problem:
            raise DataError(f"a release that {problem} cannot be booked.")
        return self._write(json.loads(json.dumps(rec)))

    def _write(self, rec: dict) -> dict:
        led = self._ledger
        rec = {**rec, "mac": _line_mac(rec)}
        heads = led._heads.read()
        with open(led.path, "a") as fh:
            fh.write(json.dumps(rec, allow_nan=True) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        heads[led.dataset] = [rec["seq"], rec["mac"]]
        led._heads.write(heads)
        return rec


class Ledger:
    """The release ledger of one confidential data set.

    Parameters
    ----------
    dataset : str
        The data set id (:func:`dataset_id`, stored in every saved synthesizer of that data).
    folder : path-like, optional
        Where the ledgers live (default :func:`ledger_folder`).
    """

    def __init__(self, dataset: str, *, folder: str | os.PathLike | None = None) -> None:
        if not isinstance(dataset, str) or not dataset.isalnum():
            raise DataError(f"`dataset` must be a data set id (letters and digits); got {dataset!r}.")
        self.dataset = dataset
        base = Path(folder) if folder is not None else ledger_folder()
        base.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.path = base / f"{dataset}.jsonl"
        self._heads = _Heads(base, required=folder is None)
        self._lock_path = base / "HEADS.lock"

    @contextlib.contextmanager
    def locked(self) -> Iterator[_Locked]:
        """Hold the home's exclusive ledger lock: read (verified), check the budget and append as one step."""
        with open(self._lock_path, "a") as fh:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
            try:
                yield _Locked(self)
            finally:
                fcntl.flock(fh.fileno(), fcntl.LOCK_UN)

    def records(self) -> list[dict]:
        """Every line, oldest first, verified against the chain and the home's head file."""
        head = self._heads.read().get(self.dataset)
        text = self.path.read_text() if self.path.exists() else ""
        return _verify(text, self.path, head, self.dataset)

    @property
    def relation(self) -> str | None:
        """The neighbour relation the ledger counts under (None before its first release)."""
        recs = self.records()
        return recs[0]["relation"] if recs else None

    def releases(self) -> list[dict]:
        """The release lines."""
        return [r for r in self.records() if r["kind"] == "release"]

    def total(self) -> float:
        """Sequential-composition spend of every strict-DP release."""
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
        rel = self.relation
        phrase = neighbours_phrase(rel) if rel else "its relation (none yet)"
        lines = [f"{len(recs)} release(s) of data set {self.dataset} ({self.path})",
                 f"strict DP: total eps = {self.total():.4g} with {phrase}, sequential composition "
                 f"({len(dp)} strictly DP release(s); references and released sizes included)"]
        for r in self.adp_records():
            lines.append(f"aDP (not summed; holds for this data set only): {r['name']} eps = {r['adp_eps']:.4g}, "
                         f"draw {r['draw']}, {r['output']}")
        for r in recs:
            if r["guarantee"] == "none":
                lines.append(f"not private: {r['name']}, {r['output']}")
            if r["overrides"]:
                lines.append(f"released with override(s) {', '.join(r['overrides'])}: {r['name']}, {r['output']}")
        return "\n".join(lines)
