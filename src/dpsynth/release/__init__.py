"""The accounting: what a release costs, where it is booked, and what may be published about it.

This package is the only place that decides what is charged and booked. Every synthetic data set
handed out by :class:`dpsynth.Synthesizer`, :class:`dpsynth.TableSynthesizer` or the command line goes
through it:

* :mod:`~dpsynth.release.budget`: the total epsilon and its shares under one neighbour relation
  (:class:`Budget`, :class:`TableBudget`), fixed by a public rule before the fit, and the one list of
  what a release charges (:meth:`Budget.charges`: :class:`Charge` lines keyed by fit);
* :mod:`~dpsynth.release.size`: the released number of records (:class:`ReleaseSize`, a DP count by
  :func:`dp_count`, or a public size);
* :mod:`~dpsynth.release.protocol`: the one release protocol (:func:`release`): one posterior draw
  per released data set, its charges (taken from the budget) booked before anything is returned or
  written, unusable values refused; a synthesizer takes part through its public interface
  (:class:`Releaser`: ``release_frame``, ``draw_slots``, ``synthesize``, ``ledger_labels``);
* :mod:`~dpsynth.release.ledger`: the ledger of each confidential data set (:class:`Ledger`;
  :class:`BudgetExceeded` when a release would take the spend above a budget);
* :mod:`~dpsynth.release.home`: this user's home and its secret key, which authenticates the ledgers
  and the saved synthesizers;
* :mod:`~dpsynth.release.statement`: the privacy statement that may be published
  (:class:`SynthesizerPrivacy`, :class:`TablePrivacy`) and the diagnostics that may not
  (:data:`CONFIDENTIAL`);
* :mod:`~dpsynth.release.mode`: release mode (every random choice from the system's entropy) and
  research mode (seeded, reproducible, released only when asked and recorded).

The names below are imported from their modules on first use (PEP 562), so that a command that
needs only the ledger or the home does not import pandas.
"""

from __future__ import annotations

#: Public name -> the module of this package that defines it.
_EXPORTS = {
    "Budget": "budget", "TableBudget": "budget", "SIZE_SHARE": "budget", "REFERENCE_SHARE": "budget",
    "MARGINAL_SHARE": "budget", "DEFAULT_SIZE_EPS": "budget", "split_shares": "budget", "Charge": "budget",
    "DrawSlot": "budget",
    "ReleaseSize": "size", "dp_count": "size", "count_scale": "size",
    "release": "protocol", "Releaser": "protocol", "UnusableReleaseError": "protocol", "unusable_values": "protocol",
    "Ledger": "ledger", "BudgetExceeded": "ledger", "LedgerError": "ledger", "RelationMismatch": "ledger",
    "dataset_id": "ledger",
    "NewHomeWarning": "home", "KeyMismatchError": "home", "secret_key": "home", "import_home": "ledger",
    "HomeSealedError": "home",
    "ResearchModeError": "mode", "SeedIgnoredWarning": "mode", "resolve_mode": "mode",
    "SynthesizerPrivacy": "statement", "TablePrivacy": "statement", "CONFIDENTIAL": "statement",
    "GUARANTEE_RANK": "statement",
}

__all__ = list(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'dpsynth.release' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
