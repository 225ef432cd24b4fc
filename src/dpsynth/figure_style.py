"""The colour-blind-safe palette of Okabe and Ito (2008), with two greys, by name.

Every mechanism's colour (:mod:`dpsynth.mechanisms`) is one of these.
"""

__all__ = ["PALETTE"]

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
