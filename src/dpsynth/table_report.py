"""A page for the data holder that sets a whole-table release against the confidential table.

:func:`write_table_report` writes ``out_dir/report.html`` and its figures (PNG files beside it, no
script, no external asset), in the form of the one-column report (:mod:`dpsynth.report`). The page
is CONFIDENTIAL: every figure on it is computed from the confidential data. It shows

1. the privacy statement of the release (the total, the split across the conditionals, the
   neighbour relation) and the synthesizer's confidential diagnostics;
2. each column's marginal (Figure 1: ECDFs of the numeric columns, level shares of the
   categorical ones; Table 1: the largest ECDF gap or the total variation distance);
3. the pairwise relations (Figure 2: the unit-free association of every pair of columns, original
   against synthetic; Table 2: the associations side by side and the total variation distance of
   each pair's contingency table), :mod:`dpsynth.table_metrics`;
4. the regression of each numeric confidential column on the public covariates and the other
   confidential columns, coefficients side by side with 95% intervals and their overlap;
5. the propensity-score mean-squared error of the whole table (:func:`dpsynth.metrics.pmse`).

:meth:`dpsynth.TableSynthesizer.report` and ``dpsynth report`` call it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from .metrics import pmse
from .report import (
    ORIGINAL_COLOUR,
    SYNTHETIC_COLOUR,
    _decimals,
    _e,
    _figure_html,
    _fixed,
    _head_parts,
    _num,
    _page,
    _pmse_parts,
    _privacy_parts,
    _save,
    _table,
    _write_page,
    check_out_dir,
)
from .table_metrics import (
    KINDS,
    analysis_values,
    association_matrix,
    marginal_table,
    pairwise_table,
    regression_table,
    table_features,
)
from .validation import DataError

__all__ = ["write_table_report", "TABLE_FILES"]

#: The files a table report writes into its folder.
TABLE_FILES = ("report.html", "figure-1-marginals.png", "figure-2-associations.png")


def _check(original, released, kinds: Mapping[str, str], targets: Sequence[str]) -> None:
    for name, f in (("original", original), ("released", released)):
        if not isinstance(f, pd.DataFrame):
            raise DataError(f"`{name}` must be a pandas DataFrame; got {type(f).__name__}.")
        if len(f) == 0:
            raise DataError(f"`{name}` has no rows.")
    if list(map(str, original.columns)) != list(map(str, released.columns)):
        raise DataError(f"`released` has columns {list(released.columns)} but `original` has "
                        f"{list(original.columns)}; pass a release of the synthesizer fitted on `original`, with "
                        "the synthesizer's columns in its order.")
    for c, k in kinds.items():
        if k not in KINDS:
            raise DataError(f"`kinds[{c!r}]` is {k!r}; use one of {', '.join(KINDS)}.")
        if c not in original.columns:
            raise DataError(f"`kinds` names {c!r}, which is not a column of the tables ({list(original.columns)}).")
    missing = [t for t in targets if t not in kinds]
    if missing:
        raise DataError(f"`targets` {missing} have no kind in `kinds`.")


def _marginal_figure(original, released, kinds: Mapping[str, str], out: Path):
    from matplotlib.figure import Figure

    cols = list(kinds)
    ncol = 2 if len(cols) > 1 else 1
    nrow = int(np.ceil(len(cols) / ncol))
    fig = Figure(figsize=(6.4, 0.4 + 2.5 * nrow), layout="constrained")
    axes = np.atleast_1d(fig.subplots(nrow, ncol, squeeze=False).ravel())
    for ax, c in zip(axes, cols):
        if kinds[c] == "categorical":
            levels = list(dict.fromkeys(list(original[c].astype(str)) + list(released[c].astype(str))))
            p = original[c].astype(str).value_counts(normalize=True).reindex(levels, fill_value=0).to_numpy()
            q = released[c].astype(str).value_counts(normalize=True).reindex(levels, fill_value=0).to_numpy()
            pos = np.arange(len(levels))[::-1]
            ax.barh(pos + 0.2, p, height=0.38, color=ORIGINAL_COLOUR)
            ax.barh(pos - 0.2, q, height=0.38, color=SYNTHETIC_COLOUR, hatch="//", edgecolor="white")
            ax.set_yticks(pos, levels)
            ax.set_xlabel(f"share of records ({c})")
            ax.grid(True, axis="x")
            ax.grid(False, axis="y")
        else:
            for frame, colour, ls in ((original, ORIGINAL_COLOUR, "-"), (released, SYNTHETIC_COLOUR, "--")):
                v = pd.to_numeric(frame[c], errors="coerce").to_numpy(dtype=float)
                v = np.sort(v[np.isfinite(v)])
                ax.step(v, np.arange(1, v.size + 1) / max(v.size, 1), where="post", color=colour, ls=ls, lw=1.6)
            o = pd.to_numeric(original[c], errors="coerce").to_numpy(dtype=float)
            lo, hi = np.quantile(o, [0.001, 0.995])
            if hi > lo:
                pad = 0.05 * (hi - lo)
                ax.set_xlim(lo - pad, hi + pad)
            ax.set_xlabel(c + (" (99.5% of the original)" if hi > lo else ""))
            ax.set_ylabel("share ≤ value")
            ax.set_ylim(0, 1.02)
    for ax in axes[len(cols):]:
        ax.set_visible(False)
    from matplotlib.lines import Line2D

    fig.legend(handles=[Line2D([], [], color=ORIGINAL_COLOUR, lw=2, label="original"),
                        Line2D([], [], color=SYNTHETIC_COLOUR, lw=2, ls="--", label="synthetic")],
               loc="outside upper center", ncols=2)
    return _save(fig, out, TABLE_FILES[1])


def _association_figure(mo: pd.DataFrame, ms: pd.DataFrame, out: Path):
    from matplotlib.figure import Figure

    k = len(mo)
    fig = Figure(figsize=(6.4, 1.2 + 0.45 * k + 1.0), layout="constrained")
    axes = fig.subplots(1, 2)
    cmap = "RdBu_r"
    for ax, m, title in ((axes[0], mo, "original"), (axes[1], ms, "synthetic")):
        im = ax.imshow(m.to_numpy(dtype=float), vmin=-1, vmax=1, cmap=cmap)
        ax.set_title(title)
        ax.set_xticks(range(k), m.columns, rotation=60, ha="right")
        ax.set_yticks(range(k), m.index if ax is axes[0] else [""] * k)
        ax.grid(False)
        if k <= 8:
            for i in range(k):
                for j in range(k):
                    v = m.iloc[i, j]
                    if i != j and np.isfinite(v):
                        ax.text(j, i, f"{v:.2f}".replace("-", "−"), ha="center", va="center", fontsize=8,
                                color="white" if abs(v) > 0.6 else "black")
    fig.colorbar(im, ax=list(axes), shrink=0.8, label="association")
    return _save(fig, out, TABLE_FILES[2])


def _scale_label(s: pd.Series, kind: str, name: str) -> str:
    if kind == "count":
        return f"log(1 + {name})"
    with np.errstate(divide="ignore", invalid="ignore"):
        logged = np.allclose(analysis_values(s, kind), np.log(s.to_numpy(dtype=float)), equal_nan=True)
    return f"log {name}" if logged else name


def write_table_report(original: pd.DataFrame, released: pd.DataFrame, *, targets: Sequence[str],
                       kinds: Mapping[str, str], statement: str, diagnostics: str, out_dir: str | os.PathLike,
                       title: str | None = None, force: bool = False) -> Path:
    """Write ``out_dir/report.html`` and its PNG figures: a whole-table release set against the confidential table.

    Parameters
    ----------
    original : pandas.DataFrame
        The confidential table (the confidential columns and the public covariates).
    released : pandas.DataFrame
        A table released from it (the same columns in the same order).
    targets : sequence of str
        The confidential columns, in the order they were synthesised (the others are public covariates).
    kinds : mapping
        ``{column: "continuous" | "count" | "categorical"}`` for every column compared (targets and covariates).
    statement, diagnostics : str
        The public privacy statement and the confidential diagnostics (:class:`dpsynth.table_synthesizer.TablePrivacy`).
    out_dir : path-like
        The report's folder: created (owner-only) if missing when its parent exists; one that holds
        a report already is refused unless ``force``. The files are owner-readable only (0o600).
    title : str, optional
        The page's title (default ``"Release report: <targets>"``).
    force : bool
        Replace an existing report in ``out_dir``.

    Returns
    -------
    pathlib.Path
        The HTML file written.
    """
    import matplotlib as mpl

    from .figure_style import use_style

    out = check_out_dir(out_dir, force=force)
    targets = list(targets)
    _check(original, released, kinds, targets)
    for name, v in (("statement", statement), ("diagnostics", diagnostics)):
        if not isinstance(v, str) or not v.strip():
            raise DataError(f"`{name}` must be the synthesizer's {name} (a non-empty string); got {v!r}.")
    title = title or f"Release report: {', '.join(targets)}"
    orig, rel = original.reset_index(drop=True), released.reset_index(drop=True)
    covs = [c for c in kinds if c not in targets]

    marg = marginal_table(orig, rel, kinds)
    mo, ms = association_matrix(orig, kinds), association_matrix(rel, kinds)
    pairs = pairwise_table(orig, rel, kinds)
    regressions = {}
    for t in targets:
        if kinds[t] == "categorical":
            continue
        preds = [c for c in kinds if c != t]
        try:
            regressions[t] = regression_table(orig, rel, t, preds, kinds)
        except DataError as err:
            regressions[t] = str(err)
    try:
        pm = pmse(table_features(orig, kinds), table_features(rel, kinds, like=orig))
    except DataError:
        pm = None

    with mpl.rc_context():
        use_style()
        out.mkdir(mode=0o700, exist_ok=True)
        fig1 = _marginal_figure(orig, rel, kinds, out)
        fig2 = _association_figure(mo, ms, out)

    parts = _head_parts(title, ", ".join(targets), covs, len(orig), len(rel))
    parts += _privacy_parts(statement, diagnostics)

    parts.append("<h2>2. Each column's distribution</h2>")
    parts.append(_figure_html(
        fig1, 1, "Marginal distributions, original and synthetic",
        "Each column of the table: the empirical distribution function of a numeric column (original solid grey, "
        "synthetic dashed vermillion; the axis spans the original's 0.1–99.5% range) or the share of each level "
        "of a categorical one (original grey, synthetic hatched vermillion)."))
    rows = [[f"<code>{_e(c)}</code>" + (" (confidential)" if c in targets else " (public)"), _e(r.kind),
             _e(r.measure), _num(r.distance)] for c, r in marg.iterrows()]
    parts.append(_table("<b>Table 1.</b> The distance between each column's original and synthetic distribution: "
                        "the largest gap between the ECDFs of a numeric column, the total variation distance of the "
                        "level shares of a categorical one (0 for identical distributions, at most 1).",
                        ["column", "kind", "measure", "distance"], rows, [False, False, False, True]))

    parts.append("<h2>3. The relations between columns</h2>")
    parts.append("<p>Each pair of columns has one number that does not depend on the unit: Spearman's rank "
                 "correlation for two numeric columns (−1 to 1), the correlation ratio of the numeric column's ranks "
                 "on the categories (eta, 0 to 1) for a numeric and a categorical one, Cramér's V (0 to 1) for two "
                 "categorical ones. The contingency distance is the total variation distance of the pair's joint "
                 "distribution, numeric columns cut at the original's quintiles.</p>")
    parts.append(_figure_html(
        fig2, 2, "Associations between columns, original and synthetic",
        "The association of every pair of columns in the original table (left) and the synthetic one (right), "
        "on one colour scale; a synthesizer that keeps the relations gives two similar panels."))
    rows = [[f"<code>{_e(r.a)}</code> – <code>{_e(r.b)}</code>", _e(r.measure), _num(r.original), _num(r.synthetic),
             _num(r.difference), _num(r.contingency_tvd)] for r in pairs.itertuples()]
    parts.append(_table("<b>Table 2.</b> The association of every pair of columns, original and synthetic, and the "
                        "total variation distance of the pair's contingency table.",
                        ["pair", "measure", "original", "synthetic", "synthetic − original", "contingency distance"],
                        rows, [False, False, True, True, True, True]))

    parts.append("<h2>4. Regressions of the confidential columns</h2>")
    parts.append("<p>Ordinary least squares of each numeric confidential column on every other column (public "
                 "covariates and the other confidential columns), on its analysis scale (log of a positive "
                 "continuous column, log(1 + y) of a count; numeric predictors on theirs; an indicator of every level "
                 "of a categorical predictor but the first). Intervals are 95% t intervals; the overlap of the two "
                 "intervals is 1 when they coincide and 0 when they are disjoint (Karr et al. 2006).</p>")
    number = 3
    if not regressions:
        parts.append("<p>No numeric confidential column: the categorical ones are compared in Section 3.</p>")
    for t, reg in regressions.items():
        if isinstance(reg, str):
            parts.append(f"<p><b>{_e(t)}: not shown.</b> {_e(reg)}</p>")
            continue
        rows = []
        for term, r in reg.iterrows():
            d = _decimals((r.original_upper - r.original_lower) / 3.92, (r.synthetic_upper - r.synthetic_lower) / 3.92)
            rows.append([f"<code>{_e(term)}</code>", _fixed(r.original, d),
                         f"[{_fixed(r.original_lower, d)}, {_fixed(r.original_upper, d)}]", _fixed(r.synthetic, d),
                         f"[{_fixed(r.synthetic_lower, d)}, {_fixed(r.synthetic_upper, d)}]",
                         f"{r.overlap:.2f}" if np.isfinite(r.overlap) else "–"])
        group = ('<tr class="group"><th></th><th colspan="2" class="span">original</th>'
                 '<th colspan="2" class="span">synthetic</th><th></th></tr>')
        scale = _scale_label(orig[t], kinds[t], t)
        dropped = reg.attrs.get("dropped", {})
        note = (f" {dropped.get('synthetic', 0):,} synthetic record(s) off that scale are left out."
                if dropped.get("synthetic") else "")
        parts.append(_table(f"<b>Table {number}.</b> Coefficients of the regression of <code>{_e(scale)}</code> on "
                            f"the other columns, original and synthetic.{note}",
                            ["term", "estimate", "95% interval", "estimate", "95% interval", "interval overlap"], rows,
                            [False, True, True, True, True, True], group))
        number += 1

    pm_parts = _pmse_parts(pm, "every column")
    pm_parts[0] = "<h2>5. Can the synthetic records be told apart? (pMSE)</h2>"
    pm_parts = [p.replace("<b>Table 3.</b>", f"<b>Table {number}.</b>") for p in pm_parts]
    parts += pm_parts
    return _write_page(out, _page(title, parts))
