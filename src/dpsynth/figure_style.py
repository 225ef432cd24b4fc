"""The package's figure style: the colour-blind-safe palette and the matplotlib style, in one place.

:data:`PALETTE` is the palette of Okabe and Ito (2008), with two greys, by name; ``dpsynth.mplstyle``
(sizes, fonts, the colour cycle) is applied by :func:`use_style`. The release reports
(:mod:`dpsynth.report`, :mod:`dpsynth.table_report`) draw their figures in it, and so do the book's
chapters, so there is one style.

Nothing here imports matplotlib at import time: the mechanisms' modules and the command line import
this module and must start fast.
"""

from __future__ import annotations

__all__ = ["PALETTE", "use_style"]

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


def use_style() -> None:
    """Apply the package's matplotlib style (``dpsynth.mplstyle``)."""
    from importlib import resources

    import matplotlib.pyplot as plt

    with resources.as_file(resources.files("dpsynth") / "dpsynth.mplstyle") as path:
        plt.style.use(str(path))
