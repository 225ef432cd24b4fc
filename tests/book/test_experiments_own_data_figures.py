"""Figures of the "Your own data" chapter: a Figure returned, what it draws, registry labels, legible text."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.colors as mcolors  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from own_data_fake import EPS, TERMS, TRUE_COEF, fake_results, fake_units  # noqa: E402

from dpsynth import registry  # noqa: E402
from dpsynth_book import (
    book,  # noqa: E402
    presentation,
)
from dpsynth_book.experiments.own_data import OwnDataResults  # noqa: E402
from dpsynth_book.experiments.own_data import figures as F  # noqa: E402
from dpsynth_book.experiments.own_data.replicate import UNIT_SETTINGS  # noqa: E402

MECHS = ["Censor_w", "Censor_uw", "PH", "OpenDP-Q"]


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def _same_colour(a, b) -> bool:
    return mcolors.to_hex(a) == mcolors.to_hex(b)


def _fit_mean(study, name, eps, var):
    sel = (study["synthesizer"].values == name) & (study["eps"].values == eps)
    return float(study[var].isel(fit=int(np.flatnonzero(sel)[0])).mean("replicate"))


def test_utility_figure():
    res = fake_results()
    fig = F.utility_figure(res)
    assert isinstance(fig, matplotlib.figure.Figure)
    assert len(fig.axes) == 2
    left, right = fig.axes
    assert left.get_ylabel() == "max-ECDF distance" and right.get_ylabel() == "synthetic median ($)"
    assert left.get_xscale() == right.get_xscale() == "log"
    # two horizontal lines (Unweighted, LW), a mean line and points per mechanism; Data on the right
    assert len(left.get_lines()) == 2 + 2 * len(MECHS) and len(right.get_lines()) == 2 + 2 * len(MECHS) + 1
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    weighted = [lab for lab in labels if lab.startswith(registry.label("LW"))]
    assert labels == [registry.label("Unweighted"), *weighted, *[registry.label(m) for m in MECHS], "Data"]
    assert weighted == [f"{registry.label('LW')}, ε≈7"]  # median of eps_remove 6, 7, 8
    lines = {line.get_label(): line for line in right.get_lines()}
    for m in MECHS:
        line = lines[registry.label(m)]
        np.testing.assert_allclose(line.get_xdata(), EPS)
        np.testing.assert_allclose(line.get_ydata(), [_fit_mean(res.study, m, e, "q50") for e in EPS])
        assert _same_colour(line.get_color(), presentation.color(m))
        # strict DP: filled marker; aDP: open
        face = presentation.color(m) if registry.guarantee(m) == "DP" else "white"
        assert _same_colour(line.get_markerfacecolor(), face)
    np.testing.assert_allclose(lines["Data"].get_ydata(), 522.0)
    assert _same_colour(lines[registry.label("Censor_w")].get_markerfacecolor(), "white")
    assert book.smallest_text_px(fig) >= book.MIN_TEXT_PX


def test_coefficient_figure():
    res = fake_results()
    fig = F.coefficient_figure(res, 5.0)
    assert isinstance(fig, matplotlib.figure.Figure) and len(fig.axes) == 1
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == TERMS[1:]  # no intercept
    shown = ["Data", "Unweighted", "LW", *MECHS]
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert labels == ["Data", *[registry.label(n) for n in shown[1:]]]
    lines = {line.get_label(): line for line in ax.get_lines()}
    assert len(ax.get_lines()) == len(shown) + 1  # and the zero line
    np.testing.assert_allclose(lines["Data"].get_xdata(), TRUE_COEF[1:])
    np.testing.assert_allclose(lines[registry.label("Censor_uw")].get_xdata(), TRUE_COEF[1:] + 0.02, atol=1e-12)
    # each synthesizer is offset on its own row band: the points of one term stay within the band
    ys = np.array([lines[lab].get_ydata() for lab in labels])
    assert np.ptp(ys, axis=0).max() < 1.0 and (np.diff(ys[:, 0]) > 0).all()
    assert book.smallest_text_px(fig) >= book.MIN_TEXT_PX


def test_coefficient_figure_at_another_eps_shows_those_fits():
    res = fake_results()
    ax = F.coefficient_figure(res, 1.0).axes[0]
    lines = {line.get_label(): line for line in ax.get_lines()}
    i = int(np.flatnonzero((res.study["synthesizer"].values == "OpenDP-Q") & (res.study["eps"].values == 1.0))[0])
    want = res.study["coef"].isel(fit=i).mean("replicate").values[1:]
    np.testing.assert_allclose(lines[registry.label("OpenDP-Q")].get_xdata(), want)


@pytest.mark.parametrize("mechanisms", [("Censor_w",), ("Censor_w", "Censor_uw")])
def test_units_figure(mechanisms):
    res = fake_results()
    units = fake_units(mechanisms=mechanisms)
    res = OwnDataResults(params=res.params, study=res.study, units=units)
    fig = F.units_figure(res)
    assert isinstance(fig, matplotlib.figure.Figure)
    assert len(fig.axes) == len(mechanisms)
    # the Dataset holds the mechanisms in alphabetical order (as units_replicate makes it); panels follow the registry
    assert sorted(mechanisms) == list(units["mechanism"].values)
    assert [ax.get_title() for ax in fig.axes] == [registry.label(m) for m in presentation.order(list(mechanisms))]
    eps = [float(e) for e in units["eps"].values]
    share = (units["n_censored"] / units.attrs["n"]).mean("replicate")
    for ax, m in zip(fig.axes, mechanisms):
        assert len(ax.patches) == len(UNIT_SETTINGS) * len(eps)
        assert [t.get_text() for t in ax.get_xticklabels()] == [f"ε = {e:g}" for e in eps]
        heights = np.array([p.get_height() for p in ax.patches]).reshape(len(UNIT_SETTINGS), len(eps))
        for k, s in enumerate(UNIT_SETTINGS):
            np.testing.assert_allclose(heights[k], share.sel(mechanism=m, setting=s).values)
        assert all(_same_colour(p.get_facecolor()[:3], presentation.color(m)) for p in ax.patches)
    assert [t.get_text() for t in fig.legends[0].get_texts()] == list(UNIT_SETTINGS)
    # the share in dollars is the tall bar
    assert heights[0].min() > 0.9 and heights[1].max() < 0.05
    assert book.smallest_text_px(fig) >= book.MIN_TEXT_PX


def test_files_figure_draws_each_file_s_report_from_the_numbers():
    from own_data_fake import FILE_TERMS, fake_files

    ds = fake_files()
    fig = F.files_figure(ds)
    axes = fig.axes
    assert len(axes) == 6
    titles = [ax.get_title() for ax in axes[:3]]
    assert titles[0].startswith("CPS 1988") and titles[2].startswith("Fishing")
    # top: the original's quantile curve (black) and one synthetic curve per eps, on a log axis for the wage
    lines = axes[0].get_lines()
    assert len(lines) == 3 and axes[0].get_yscale() == "log" and axes[1].get_yscale() == "linear"
    np.testing.assert_allclose(lines[0].get_ydata(), ds["curve_original"].isel(replicate=0).sel(file="cps1988"))
    # the categorical file: a bar per level for the original and each eps
    assert len(axes[2].patches) == 4 * 3
    # bottom: every coefficient but the intercepts, in the original's standard errors (shift 1 / eps)
    assert [t.get_text() for t in axes[4].get_yticklabels()] == FILE_TERMS["nmes1988"][1:]
    z = [ln.get_xdata() for ln in axes[3].get_lines() if ln.get_marker() == "o"]
    np.testing.assert_allclose(z[0], 1.0) and np.testing.assert_allclose(z[1], 0.2)
    assert book.smallest_text_px(fig) >= book.MIN_TEXT_PX


def test_unitfree_figure():
    from own_data_fake import fake_unitfree

    fig = F.unitfree_figure(fake_unitfree())
    axes = fig.axes
    assert [ax.get_title() for ax in axes[:2]] == [registry.label("Censor_uw"), registry.label("Censor_ref")]
    # top left: Censor_uw's share censored, bars per unit and eps
    heights = sorted(round(p.get_height(), 4) for p in axes[0].patches)
    assert heights == sorted([round(c / 28155, 4) for c in (28000.0, 300.0, 28100.0)] * 2)
    assert book.smallest_text_px(fig) >= book.MIN_TEXT_PX
