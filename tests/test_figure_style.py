"""The library's figure style: the colour-blind-safe palette and the matplotlib style (``dpsynth.figure_style``)."""

from __future__ import annotations

import subprocess
import sys

import matplotlib

matplotlib.use("Agg")

import matplotlib as mpl  # noqa: E402
from matplotlib.colors import to_hex  # noqa: E402

from dpsynth.figure_style import PALETTE, use_style  # noqa: E402


def test_palette_is_okabe_ito_with_two_greys():
    assert PALETTE == {
        "black": "#000000", "orange": "#E69F00", "sky blue": "#56B4E9", "bluish green": "#009E73",
        "yellow": "#F0E442", "blue": "#0072B2", "vermillion": "#D55E00", "reddish purple": "#CC79A7",
        "grey": "#999999", "dark grey": "#4D4D4D",
    }


def test_use_style_applies_the_package_s_style():
    with mpl.rc_context():
        use_style()
        assert mpl.rcParams["figure.dpi"] == 110 and mpl.rcParams["xtick.labelsize"] == 10
        cycle = [to_hex(c["color"]).upper() for c in mpl.rcParams["axes.prop_cycle"]]
        assert set(cycle) <= set(PALETTE.values())


def test_importing_it_imports_no_matplotlib():
    """The mechanisms' modules and the command line import it and must start fast."""
    code = "import sys, dpsynth.figure_style; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
