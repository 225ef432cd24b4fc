"""The release ledger: one JSON line per released synthetic data set.

Each record holds the time (UTC, ISO 8601), the mechanism (registry key and display name), its
guarantee, epsilon with one record removed and with one record replaced, the posterior draw used,
the output file, the releasing synthesizer's SHA-256 and the epsilon the release added to the
spend (0 when the same draw of the same synthesizer was released before: a second data set from a
draw already released is post-processing of it).

:meth:`Ledger.total` is the sequential-composition spend of the strict-DP releases (one record
removed). aDP releases hold for the confidential data set at hand only; they are listed apart
(:meth:`Ledger.adp_records`) and never summed into the DP total; neither are non-private ones.
Appends hold an exclusive ``fcntl.flock`` on the file, so processes appending at once do not
interleave lines, and a budget check and its append happen under one lock.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import math
import os
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from .validation import DataError

__all__ = ["Ledger", "BudgetExceeded", "LEDGER_FIELDS"]

#: Fields of every ledger record.
LEDGER_FIELDS = ("time", "mechanism", "name", "guarantee", "eps", "eps_replace", "relation", "draw", "output",
                 "synthesizer", "new_spend")


class BudgetExceeded(DataError):
    """A release would bring the strict-DP spend above the budget; nothing was written."""


class _Locked:
    """The ledger while its lock is held (from :meth:`Ledger.locked`)."""

    def __init__(self, ledger: Ledger, fh) -> None:
        self._ledger, self._fh = ledger, fh

    def records(self) -> list[dict]:
        self._fh.seek(0)
        return _parse(self._fh.read(), self._ledger.path)

    def total(self) -> float:
        return _total(self.records())

    def check_budget(self, guarantee: str, new_spend: float, budget: float | None) -> None:
        """Raise :class:`BudgetExceeded` if a DP release adding ``new_spend`` would exceed ``budget``."""
        if budget is None:
            return
        if isinstance(budget, bool) or not isinstance(budget, (int, float)) or not budget >= 0 or math.isnan(budget):
            raise DataError(f"`budget` must be a number >= 0 (total eps with one record removed); got {budget!r}.")
        if guarantee != "DP":
            raise BudgetExceeded(
                f"a budget counts strict-DP releases only, and this mechanism's guarantee is {guarantee!r}: its eps "
                f"holds for this data set alone and cannot be charged to a budget. Release without `budget`, or use "
                f"a strictly DP mechanism (censor_uw, ph).")
        spent = self.total()
        if spent + new_spend > budget + 1e-12:
            raise BudgetExceeded(
                f"release refused: the ledger {self._ledger.path} has spent eps = {spent:.4g} on strict-DP releases; "
                f"this one adds {new_spend:.4g}, total {spent + new_spend:.4g} > budget {budget:.4g}. Nothing was "
                f"written.")

    def append(self, **record) -> dict:
        rec = {"time": datetime.now(UTC).isoformat(timespec="microseconds"), "relation": "remove", **record}
        missing = [f for f in LEDGER_FIELDS if f not in rec]
        if missing:
            raise DataError(f"ledger record lacks field(s) {missing}.")
        line = json.dumps({f: rec[f] for f in LEDGER_FIELDS}) + "\n"
        self._fh.seek(0, os.SEEK_END)
        self._fh.write(line)
        self._fh.flush()
        os.fsync(self._fh.fileno())
        return rec


def _parse(text: str, path: Path) -> list[dict]:
    out = []
    for i, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError as e:
            raise DataError(f"ledger {path} line {i} is not a JSON record ({e}); the ledger is corrupted.") from None
    return out


def _total(records: list[dict]) -> float:
    return float(sum(r["new_spend"] for r in records if r["guarantee"] == "DP"))


class Ledger:
    """A release ledger file (JSON lines).

    Parameters
    ----------
    path : str or os.PathLike
        The ledger file; created on the first append.
    """

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path)

    @contextlib.contextmanager
    def locked(self) -> Iterator[_Locked]:
        """Hold the exclusive lock: read, check the budget and append as one step."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a+") as fh:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
            try:
                yield _Locked(self, fh)
            finally:
                fcntl.flock(fh.fileno(), fcntl.LOCK_UN)

    def append(self, **record) -> dict:
        """Append one record (every field of :data:`LEDGER_FIELDS` but ``time`` and ``relation``)."""
        with self.locked() as book:
            return book.append(**record)

    def records(self) -> list[dict]:
        """Every record, oldest first (an absent ledger has none)."""
        if not self.path.exists():
            return []
        with open(self.path) as fh:
            fcntl.flock(fh.fileno(), fcntl.LOCK_SH)
            try:
                return _parse(fh.read(), self.path)
            finally:
                fcntl.flock(fh.fileno(), fcntl.LOCK_UN)

    def total(self) -> float:
        """Sequential-composition spend of the strict-DP releases, eps with one record removed."""
        return _total(self.records())

    def total_replace(self) -> float:
        """The same spend with one record replaced."""
        return float(sum(r["eps_replace"] for r in self.records() if r["guarantee"] == "DP" and r["new_spend"] > 0))

    def dp_records(self) -> list[dict]:
        """The strict-DP releases (summed by :meth:`total`)."""
        return [r for r in self.records() if r["guarantee"] == "DP"]

    def adp_records(self) -> list[dict]:
        """The aDP releases: listed apart, never summed into the DP total."""
        return [r for r in self.records() if r["guarantee"] == "aDP"]

    def summary(self) -> str:
        """A few lines: DP total, and the aDP and non-private releases listed apart."""
        recs = self.records()
        dp, adp = self.dp_records(), self.adp_records()
        lines = [f"{len(recs)} release(s) in {self.path}",
                 f"strict DP: {len(dp)} release(s), total eps = {self.total():.4g} with one record removed "
                 f"({self.total_replace():.4g} replaced), sequential composition"]
        for r in adp:
            lines.append(f"aDP (not summed; holds for this data set only): {r['name']} eps = {r['eps']:.4g}, draw "
                         f"{r['draw']}, {r['output']}")
        for r in recs:
            if r["guarantee"] == "none":
                lines.append(f"not private: {r['name']}, {r['output']}")
        return "\n".join(lines)
