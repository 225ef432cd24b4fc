"""The one registry of synthesizers: name, guarantee, order and colour.

Every figure, table, result data set and privacy report takes a synthesizer's display name,
guarantee type and colour from :data:`SYNTHESIZERS`, in its order. An unknown name is an error,
never a default.

Guarantee types (see :mod:`dpsynth.privacy` for the neighbour relations):

* ``"none"``: not private (Unweighted, the plain posterior);
* ``"aDP"``: asymptotic DP. The mechanism reports a *local* Lipschitz bound ``Delta`` of the
  data set at hand, and ``eps_x = 2 Delta`` holds for that data set only; the bound contracts
  onto a global one as n grows. Every mechanism whose record weights are computed from the
  confidential data is here, censored or not: one record changes every weight, so the clamp
  no longer bounds the change of the sum (Censor_w as run in the papers);
* ``"DP"``: strict DP for every data set: a censored likelihood whose weights do not depend on
  the confidential data (Censor_uw, Censor_w with public weights), and the perturbed histogram.

Range-restriction variants are named by their range, ``A[a,b]``, ``B[a,b]`` and ``B'[a,b]``;
they are registered as three patterns.

The colours are the colour-blind-safe palette of Okabe and Ito (2008), with two greys.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from .validation import DataError

__all__ = ["SynthesizerSpec", "SYNTHESIZERS", "spec", "key_of", "guarantee", "label", "color", "order", "names"]

#: Okabe-Ito colour-blind-safe palette (name -> hex), plus greys for the references.
PALETTE = {
    "black": "#000000",
    "orange": "#E69F00",
    "sky blue": "#56B4E9",
    "bluish green": "#009E73",
    "yellow": "#F0E442",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "reddish purple": "#CC79A7",
    "grey": "#999999",
    "dark grey": "#4D4D4D",
}


@dataclass(frozen=True)
class SynthesizerSpec:
    """One registered synthesizer.

    Attributes
    ----------
    key : str
        Registry key used by the API (``"censor_w"``).
    name : str
        Display name in figures and tables (``"Censor_w"``); for a pattern, its prefix (``"A["``).
    guarantee : str or None
        ``"none"``, ``"aDP"`` or ``"DP"``; ``None`` for the confidential data.
    colour : str or tuple of str
        Hex colour; a pattern has a family of shades, one per range in order of appearance.
    takes_eps : bool
        Whether the mechanism is run at a target epsilon.
    description : str
        One line on what it is.
    pattern : bool
        Whether ``name`` is a prefix matching parametrised names such as ``A[0.4,1.8]``.
    """

    key: str
    name: str
    guarantee: str | None
    colour: str | tuple[str, ...]
    takes_eps: bool
    description: str
    pattern: bool = False

    def label(self, name: str | None = None) -> str:
        """Display label with the guarantee, e.g. ``"Censor_w (aDP)"``; the data are just ``"Data"``."""
        shown = name or self.name
        return shown if self.guarantee is None else f"{shown} ({self.guarantee})"


_P = PALETTE
#: The registered synthesizers, in the order every figure and table uses.
SYNTHESIZERS: tuple[SynthesizerSpec, ...] = (
    SynthesizerSpec("data", "Data", None, _P["dark grey"], False, "the confidential data (reference)"),
    SynthesizerSpec("unweighted", "Unweighted", "none", _P["grey"], False,
                    "the plain posterior, all weights 1: not private"),
    SynthesizerSpec("weighted", "Weighted", "aDP", _P["blue"], False,
                    "Lipschitz weights from the unweighted fit (the censoring paper's name for LW)"),
    SynthesizerSpec("lw", "LW", "aDP", _P["blue"], False, "Lipschitz-weighted (re-weighting paper, Algorithm 1)"),
    SynthesizerSpec("cw", "CW", "aDP", _P["bluish green"], False, "count-weighted (Algorithm 2)"),
    SynthesizerSpec("sw", "SW", "aDP", _P["sky blue"], False, "one scalar weight matched to LW's bound"),
    SynthesizerSpec("lw_final", "LW_final", "aDP", _P["reddish purple"], False, "LW re-weighted (Algorithm 3)"),
    SynthesizerSpec("cw_final", "CW_final", "aDP", _P["yellow"], False, "CW re-weighted (Algorithm 3)"),
    SynthesizerSpec("weighted_e", "Weighted-e", "aDP", _P["orange"], True,
                    "Weighted, with records whose bound exceeds eps/2 set to weight 0"),
    SynthesizerSpec("censor_w", "Censor_w", "aDP", _P["vermillion"], True,
                    "Lipschitz weights from the same data, censored at eps/2 (as in the papers)"),
    SynthesizerSpec("censor_w_public", "Censor_w-pub", "DP", _P["reddish purple"], True,
                    "Lipschitz weights from a public (historical) fit, censored at eps/2"),
    SynthesizerSpec("censor_uw", "Censor_uw", "DP", _P["sky blue"], True, "unweighted, censored at eps/2"),
    SynthesizerSpec("ph", "PH", "DP", _P["bluish green"], True,
                    "perturbed histogram, noise calibrated to eps with one record removed"),
    SynthesizerSpec("ph_paper", "PH-paper", "DP", _P["yellow"], True,
                    "perturbed histogram with the papers' Laplace(2/eps): eps/2 with one record removed"),
    SynthesizerSpec("opendp_quantiles", "OpenDP-Q", "DP", _P["black"], True,
                    "quantiles released by OpenDP's private-quantile mechanism, turned into synthetic values "
                    "(a maintained non-Bayesian baseline)"),
    SynthesizerSpec("range_averaged", "A[", "aDP", ("#009E73", "#7FCEB9", "#005A42"), False,
                    "range restriction (A), knowledge weights", pattern=True),
    SynthesizerSpec("range_truncated", "B[", "aDP", ("#CC79A7", "#E6BCD3", "#8A4A70"), False,
                    "range restriction (B), range-truncated likelihood", pattern=True),
    SynthesizerSpec("range_truncated_whole", "B'[", "aDP", ("#D55E00", "#F0A46B", "#8F3F00"), False,
                    "range restriction (B'), whole-term reading of (B)", pattern=True),
)

_BY_NAME = {s.name: s for s in SYNTHESIZERS if not s.pattern}
_BY_KEY = {s.key: s for s in SYNTHESIZERS}
_PATTERNS = sorted((s for s in SYNTHESIZERS if s.pattern), key=lambda s: -len(s.name))
_RANGE = re.compile(r"^\[[^\[\]]+\]$")


def spec(name: str) -> SynthesizerSpec:
    """The registry entry of a display name (``"Censor_w"``, ``"A[0.4,1.8]"``) or a key (``"censor_w"``).

    Raises
    ------
    KeyError
        For a name that is not registered; the message lists the registered names.
    """
    if not isinstance(name, str):
        raise DataError(f"a synthesizer name must be a string; got {name!r}.")
    if name in _BY_NAME:
        return _BY_NAME[name]
    if name in _BY_KEY:
        return _BY_KEY[name]
    for s in _PATTERNS:
        if name.startswith(s.name) and _RANGE.match(name[len(s.name) - 1:]):
            return s
    known = ", ".join([s.name + ("a,b]" if s.pattern else "") for s in SYNTHESIZERS])
    raise KeyError(f"unknown synthesizer {name!r}; registered names: {known} (keys: {', '.join(_BY_KEY)}).")


def key_of(name: str) -> str:
    """Registry key of a display name."""
    return spec(name).key


def guarantee(name: str) -> str | None:
    """Guarantee type of a synthesizer (``None`` for the confidential data)."""
    return spec(name).guarantee


def label(name: str) -> str:
    """Display label with guarantee, e.g. ``"Censor_uw (DP)"``, ``"Unweighted (none)"``."""
    s = spec(name)
    return s.label(name if s.pattern or name in _BY_NAME else s.name)


def names() -> list[str]:
    """Display names of the non-pattern entries, in the registry's order."""
    return [s.name for s in SYNTHESIZERS if not s.pattern]


def order(shown: Sequence[str]) -> list[str]:
    """Sort names into the registry's order (patterns keep their given order among themselves)."""
    idx = {s.key: i for i, s in enumerate(SYNTHESIZERS)}
    pos = {n: i for i, n in enumerate(shown)}
    return sorted(shown, key=lambda n: (idx[spec(n).key], pos[n]))


def color(name: str, shown: Sequence[str] | None = None) -> str:
    """Colour of a synthesizer; a pattern's shade follows its position among ``shown``."""
    s = spec(name)
    if not s.pattern:
        return s.colour
    same = [n for n in (shown or [name]) if spec(n).key == s.key]
    i = same.index(name) if name in same else 0
    return s.colour[i % len(s.colour)]
