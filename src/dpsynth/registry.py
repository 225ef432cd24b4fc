"""The one registry of synthesizers: key, name and guarantee, read from the mechanisms' specs.

Every figure, table, result data set and privacy report takes a synthesizer's display name and
guarantee type from here. The entries are the mechanisms' own specs (:mod:`dpsynth.mechanisms`: one
module each, in the catalogue's order), plus the confidential data as the reference ``"Data"``. An
unknown name is an error, never a default. How a figure draws an entry (its colour, its place) is not
the library's: the book keeps it in a table of its own, keyed by the entries' keys.

Guarantee types (see :mod:`dpsynth.privacy` for the neighbour relations):

* ``"none"``: not private (Unweighted, the plain posterior);
* ``"aDP"``: asymptotic DP. The mechanism reports a *local* Lipschitz bound ``Delta`` of the
  data set at hand, and ``eps_x = 2 Delta`` holds for that data set only. Every mechanism whose
  record weights are computed from the confidential data is here, censored or not: one record
  changes every weight, so the clamp no longer bounds the change of the sum (Censor_w as run in
  the papers);
* ``"DP"``: strict DP for every data set: a censored likelihood whose weights do not depend on
  the confidential data (Censor_uw, Censor_w with public weights), the perturbed histogram and
  OpenDP's private quantiles.

One recipe published under two names is one mechanism: an entry whose spec has ``alias_of``
(the censoring paper's "Weighted", the re-weighting paper's "LW") keeps its key for the API and
the command line, but every page shows the other entry's name. :func:`display_name` is the one
lookup from a name to the name shown, and :func:`with_display_names` applies it to the name
coordinates of a result data set when it is loaded (shipped files keep their stored names).

Range-restriction variants are named by their range, ``A[a,b]``, ``B[a,b]`` and ``B'[a,b]``;
they are registered as three patterns.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .mechanisms import catalog
from .mechanisms.contract import MechanismSpec
from .validation import DataError

__all__ = ["ReferenceEntry", "DATA", "entries", "spec", "key_of", "guarantee", "label", "names", "display_name",
           "aliases", "NAME_COORDS", "with_display_names", "with_guarantee", "listed"]

#: Coordinates of a result data set whose values are synthesizer names (:func:`with_display_names`).
NAME_COORDS = ("synthesizer", "ds_synthesizer", "mechanism")


@dataclass(frozen=True)
class ReferenceEntry:
    """A registry entry that is not a mechanism: the confidential data every comparison starts from."""

    key: str
    name: str
    description: str
    guarantee: None = None
    takes_eps: bool = False
    pattern: bool = False

    def label(self, name: str | None = None) -> str:
        """The data are just ``"Data"``."""
        return name or self.name


#: The confidential data (reference).
DATA = ReferenceEntry("data", "Data", "the confidential data (reference)")


def entries() -> tuple:
    """Every registry entry: the data, then the mechanisms' specs in the catalogue's order."""
    return (DATA, *catalog.specs())


def __getattr__(name: str):
    if name == "SYNTHESIZERS":  # the entries, read from the specs at each access
        return entries()
    raise AttributeError(f"module 'dpsynth.registry' has no attribute {name!r}")


def spec(name: str) -> MechanismSpec | ReferenceEntry:
    """The registry entry of a display name (``"Censor_w"``, ``"A[0.4,1.8]"``) or a key (``"censor_w"``).

    Raises
    ------
    KeyError
        For a name that is not registered; the message lists the registered names.
    """
    if not isinstance(name, str):
        raise DataError(f"a synthesizer name must be a string; got {name!r}.")
    if name in (DATA.name, DATA.key):
        return DATA
    found = catalog.lookup_name(name)
    if found is None:
        known = ", ".join([s.name + ("a,b]" if s.pattern else "") for s in entries()])
        raise KeyError(f"unknown synthesizer {name!r}; registered names: {known} (keys: "
                       f"{', '.join(s.key for s in entries())}).")
    return found


def key_of(name: str) -> str:
    """Registry key of a display name."""
    return spec(name).key


def guarantee(name: str) -> str | None:
    """Guarantee type of a synthesizer (``None`` for the confidential data)."""
    return spec(name).guarantee


def display_name(name: str) -> str:
    """The name every page shows for a registry name or key: one name per mechanism.

    ``"Weighted"`` and ``"weighted"`` (the censoring paper's name, an alias) give ``"LW"``; a key
    gives its display name (``"censor_w"`` -> ``"Censor_w"``); a pattern's name is kept
    (``"A[0.4,1.8]"``); ``"Data"`` stays ``"Data"``.

    Raises
    ------
    KeyError
        For a name that is not registered (as :func:`spec`).
    """
    s = spec(name)
    if getattr(s, "alias_of", None) is not None:
        s = spec(s.alias_of)
    if s.pattern:
        return name
    return s.name


def aliases() -> dict[str, str]:
    """``{alias display name: display name shown}`` for every entry that is another name of a mechanism."""
    return {s.name: display_name(s.name) for s in entries() if getattr(s, "alias_of", None) is not None}


def with_display_names(ds):
    """``ds`` with the aliases in its name coordinates (:data:`NAME_COORDS`) replaced by :func:`display_name`.

    Values that are not aliases (other names, labels such as ``"Censor_ref, alpha = 0.5"``) are
    kept. Applied where a result data set is loaded or computed, so that tables, figures and
    verdicts read one name per mechanism while the files keep their stored names.

    Parameters
    ----------
    ds : xarray.Dataset
        A study's results.

    Raises
    ------
    DataError
        If the mapping would give one coordinate the same name twice where names index a
        dimension (a data set holding a mechanism under both names).
    """
    alias = aliases()
    changes = {}
    for c in NAME_COORDS:
        if c not in ds.coords:
            continue
        values = [str(v) for v in ds[c].values.ravel()]
        if not any(v in alias for v in values):
            continue
        shown = [alias.get(v, v) for v in values]
        if ds[c].dims == (c,) and len(set(shown)) < len(shown):
            raise DataError(f"coordinate {c!r} holds one mechanism under two names ({values}); keep one.")
        kind = object if ds[c].dtype == object else None
        changes[c] = (ds[c].dims, np.array(shown, dtype=kind).reshape(ds[c].shape))
    return ds.assign_coords(changes) if changes else ds


def with_guarantee(guarantee: str) -> list[str]:
    """Display names of the entries (:func:`names`) whose guarantee is ``guarantee`` (``"none"``, ``"aDP"`` or
    ``"DP"``), in the registry's order."""
    if guarantee not in ("none", "aDP", "DP"):
        raise DataError(f"`guarantee` must be 'none', 'aDP' or 'DP'; got {guarantee!r}.")
    return [n for n in names() if spec(n).guarantee == guarantee]


def listed(guarantee: str) -> str:
    """:func:`with_guarantee` as prose: ``"A, B and C"``."""
    got = with_guarantee(guarantee)
    return got[0] if len(got) == 1 else ", ".join(got[:-1]) + " and " + got[-1]


def label(name: str) -> str:
    """Display label with guarantee, e.g. ``"Censor_uw (DP)"``, ``"Unweighted (none)"``, ``"LW (aDP)"`` for Weighted."""
    return spec(name).label(display_name(name))


def names() -> list[str]:
    """Display names of the non-pattern entries that are not aliases, in the registry's order."""
    return [s.name for s in entries() if not s.pattern and getattr(s, "alias_of", None) is None]
