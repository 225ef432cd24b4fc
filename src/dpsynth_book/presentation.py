"""How the book shows each mechanism: its colour and its place, in one table keyed by the registry key.

The library (:mod:`dpsynth.registry`) knows a mechanism's key, its display name and its guarantee;
how a figure draws it is the book's business, and it is all here: :data:`LOOKS` gives every entry of
the registry (the confidential data ``"data"`` and each mechanism) a colour and a place in every
figure and table. :mod:`dpsynth_book.plots` and the chapters' figures read it through :func:`color`
and :func:`order`. The colours are the colour-blind-safe palette of Okabe and Ito (2008), with two
greys (:data:`dpsynth.figure_style.PALETTE`); a range-restriction pattern (``A[a,b]``, ``B[a,b]``,
``B'[a,b]``) has a family of shades, one per range shown.

A mechanism added to the library without a row here is listed after the others, and has no colour:
:func:`color` says to add its row.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from dpsynth import registry
from dpsynth.figure_style import PALETTE

__all__ = ["Look", "LOOKS", "look", "color", "order", "rank", "LAST"]

#: The place of a registered mechanism that has no row in :data:`LOOKS`: after every other.
LAST = 1000.0
_HEX = re.compile(r"^#[0-9A-Fa-f]{6}$")


@dataclass(frozen=True)
class Look:
    """How the book shows one registry entry.

    Attributes
    ----------
    colour : str or tuple of str
        Hex colour; a pattern (range restriction) has a tuple of shades, one per range shown.
    order : float
        Position in every figure and table (smaller first).
    """

    colour: str | tuple[str, ...]
    order: float

    def __post_init__(self) -> None:
        shades = (self.colour,) if isinstance(self.colour, str) else tuple(self.colour)
        if not shades or not all(isinstance(c, str) and _HEX.match(c) for c in shades):
            raise ValueError(f"`colour` must be a hex colour '#RRGGBB' (or a tuple of them for a pattern); "
                             f"got {self.colour!r}.")


#: Registry key -> how the book shows it. The confidential data first, then the mechanisms in the book's order.
LOOKS: dict[str, Look] = {
    "data": Look(PALETTE["dark grey"], 0),
    "unweighted": Look(PALETTE["grey"], 10),
    "weighted": Look(PALETTE["blue"], 20),
    "lw": Look(PALETTE["blue"], 21),
    "cw": Look(PALETTE["bluish green"], 30),
    "sw": Look(PALETTE["sky blue"], 40),
    "lw_final": Look(PALETTE["reddish purple"], 50),
    "cw_final": Look(PALETTE["yellow"], 51),
    "weighted_e": Look(PALETTE["orange"], 60),
    "censor_w": Look(PALETTE["vermillion"], 70),
    "censor_w_public": Look(PALETTE["reddish purple"], 80),
    "censor_uw": Look(PALETTE["sky blue"], 90),
    "censor_ref": Look(PALETTE["blue"], 95),
    "ph": Look(PALETTE["bluish green"], 100),
    "ph_paper": Look(PALETTE["yellow"], 101),
    "noise_aware": Look(PALETTE["orange"], 105),
    "opendp_quantiles": Look(PALETTE["black"], 110),
    "range_averaged": Look(("#009E73", "#7FCEB9", "#005A42"), 120),
    "range_truncated": Look(("#CC79A7", "#E6BCD3", "#8A4A70"), 121),
    "range_truncated_whole": Look(("#D55E00", "#F0A46B", "#8F3F00"), 122),
}


def look(name: str) -> Look:
    """How the book shows a registered name or key (an alias as its own entry, ``"Weighted"`` as ``weighted``).

    Raises
    ------
    KeyError
        For a name the registry does not know (:func:`dpsynth.registry.spec`), or a registered
        mechanism that has no row in :data:`LOOKS`.
    """
    key = registry.spec(name).key
    if key not in LOOKS:
        raise KeyError(f"mechanism {key!r} has no colour in the book: add its row to dpsynth_book.presentation.LOOKS.")
    return LOOKS[key]


def rank(name: str) -> tuple[float, str]:
    """Sort key of a registered name in the book's order: its place (:data:`LAST` without a row), then its key.

    An alias takes its mechanism's place (``"Weighted"`` sorts as ``"LW"``).
    """
    key = registry.key_of(registry.display_name(name))
    found = LOOKS.get(key)
    return (found.order if found is not None else LAST, key)


def order(shown: Sequence[str]) -> list[str]:
    """Sort names into the book's order (an alias at its mechanism's place; patterns keep their given order)."""
    pos = {n: i for i, n in enumerate(shown)}
    return sorted(shown, key=lambda n: (rank(n), pos[n]))


def color(name: str, shown: Sequence[str] | None = None) -> str:
    """Colour of a synthesizer; a pattern's shade follows its position among ``shown``."""
    s = registry.spec(name)
    colour = look(name).colour
    if not s.pattern:
        return colour
    same = [n for n in (shown or [name]) if registry.spec(n).key == s.key]
    i = same.index(name) if name in same else 0
    return colour[i % len(colour)]
